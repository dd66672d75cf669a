"""Whether a faithful join is also a fast one at its source: the rule that keeps it with Spark if not.

A pushed join is always correct (joins.py decides that); it is not always faster. Measured at
1M rows (bench ``joins``): MariaDB ran the pushed join of ``bench_orders`` (1M rows, 1%
``status = 'refunded'``) with ``bench_customers`` (100k) in 12.3 s, Spark joining two scans in
5.0 s. ``EXPLAIN`` showed why: with no statistics for ``status`` (no index starts with it, no
histogram) MariaDB assumes the filter keeps every row, drives the join from the customers and
probes the orders' ``customer_id`` index 100,000 times (random reads of ~1M rows) instead of
scanning the orders once and probing the customers' primary key 10,000 times (0.25 s once a
histogram exists). The SQL Sluice writes is not the cause: MariaDB merges the subqueries of the
joined query into one join over the base tables (``EXPLAIN`` shows ``SIMPLE`` rows with their
indexes), the same plan as the hand-written join.

The rule, :func:`slower_at_source`, asks only sources whose planner needs it (``statistics``
returns None elsewhere: PostgreSQL keeps per-column statistics for every column it analyses,
SQLite and DuckDB plan these joins well, see docs/pushdown.md) and refuses when, by the source's
own statistics (the tables' row estimates as attached), both tables together are large enough for a plan to matter and

* a pushed filter tests a column the source has no statistics for (its planner cannot see the
  filter's selectivity and may drive the join from the wrong table), or
* no key the source could probe has an index (MariaDB then joins by block nested loop: every
  row of one table compared with every row of the other).
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from sluice.scan.join import JoinRead
from sluice.scan.statistics import TableStatistics
from sluice.types import TableSchema

#: below this many row pairs (left rows x right rows) any plan finishes in milliseconds: pushed
SMALL_JOIN_PAIRS = 10_000_000


def slower_at_source(source: Any, join: JoinRead, keys: dict[str, tuple[str, ...]]) -> str | None:
    """Why ``source`` would run ``join`` slower than Spark joining two scans; None: push it.

    ``keys``: each side's (``left`` / ``right``) join key columns, in the table's names."""
    if _pairs(join) <= SMALL_JOIN_PAIRS:  # the tables' row estimates, as attached: no question to the source
        return None
    statistics = {side: source.statistics(join.table(side)) for side in ("left", "right")}
    if statistics["left"] is None or statistics["right"] is None:
        return None
    return decide(join, statistics["left"], statistics["right"], keys)


def decide(
    join: JoinRead, left: TableStatistics, right: TableStatistics, keys: dict[str, tuple[str, ...]]
) -> str | None:
    """The rule over the statistics (no server): the reason the join stays with Spark, or None."""
    stats = {"left": left, "right": right}
    if _pairs(join) <= SMALL_JOIN_PAIRS:
        return None
    size = (
        f"{_name(join.left)} ~{join.left.row_estimate:,} rows x {_name(join.right)} ~{join.right.row_estimate:,} rows"
    )
    for side in ("left", "right"):
        where = join.left_where if side == "left" else join.right_where
        tested = sorted({c.name for p in where for c in p.sql_tree().find_all(exp.Column)})
        unknown = [c for c in tested if not stats[side].estimated(c)]
        if unknown:
            table = join.table(side)
            columns = ", ".join(unknown)
            remedy = stats[side].remedy.format(table=_name(table), columns=columns)
            return (
                f"the source has no statistics for {_name(table)}.{unknown[0]} (no index starts with it, no "
                f"histogram): its planner cannot see how selective the pushed filter is and may drive the join "
                f"from the other table ({size}); Spark joins"
                + (f". {remedy} lets it estimate the filter" if remedy else "")
            )
    # the side the source may probe: either for INNER; the preserved side's partner for an outer join
    probed = ("left", "right") if join.kind == "INNER" else ("left",) if join.kind == "RIGHT" else ("right",)
    if not any(k.lower() in stats[side].indexed for side in probed for k in keys[side]):
        shown = " or ".join(f"{_name(join.table(side))}({', '.join(keys[side])})" for side in probed)
        return (
            f"no index on the join key {shown}: the source would compare every row of one table with every row "
            f"of the other ({size}); Spark joins"
        )
    return None


def _pairs(join: JoinRead) -> int:
    """Left rows x right rows by the source's estimates (0 without one: nothing to weigh)."""
    return (join.left.row_estimate or 0) * (join.right.row_estimate or 0)


def _name(table: TableSchema) -> str:
    return table.name
