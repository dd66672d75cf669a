"""Aggregate and join shapes over a round's table, each compared pushdown on vs off.

The predicate cases test filters; these test the aggregates and joins Spark offers a scan
(docs/pushdown.md, Aggregates and Joins). Each round draws a few queries over its edge-value
table (NULL, NaN, -0.0, case and trailing-space variants, extreme integers, decimals):

* ``GROUP BY`` a column or an expression of ``id`` (or no key: a global aggregate) with
  ``count(*)``, ``count(c)``, ``count(DISTINCT c)``, ``sum``, ``min``, ``max``, ``avg``, sometimes
  over no rows (``WHERE id < 0``: ``id`` is 0..n-1, and Spark cannot fold it away, so the empty
  input reaches the source);
* a join of the table with itself (two scans of one source: Spark offers the join) on two
  columns of one kind, ``=`` or ``<=>``, INNER / LEFT / RIGHT, sometimes with a filter.

Both paths' column types and rows (as multisets) are compared. Floating-point results are compared after
rounding to 9 significant digits with -0.0 as 0.0: Spark leaves the order of additions (a float
``sum``/``avg``) and which of two equal values ``min``/``max`` return (-0.0 and 0.0 compare
equal) to its partitioning, so those digits are not pushdown's to keep.
"""

from __future__ import annotations

import collections
import math
import random
from dataclasses import dataclass
from typing import Any

from fuzz.tables import Table

_NUMERIC = ("smallint", "int", "bigint", "double", "real", "decimal")
_ORDERED = (*_NUMERIC, "string", "date", "timestamp", "timestamp_ntz")


@dataclass(frozen=True)
class Shape:
    """One query over the table; ``{t}`` stands for its reference (``pg.sluice_fuzz.t1``)."""

    kind: str  # "aggregate" or "join"
    template: str

    def sql(self, reference: str) -> str:
        return self.template.format(t=reference)


def generate(rng: random.Random, table: Table, aggregates: int, joins: int) -> list[Shape]:
    """``aggregates`` aggregate queries and ``joins`` self-joins over ``table``."""
    found = [_aggregate(rng, table) for _ in range(aggregates)]
    found += [shape for shape in (_join(rng, table) for _ in range(joins)) if shape is not None]
    return found


def _aggregate(rng: random.Random, table: Table) -> Shape:
    keys = rng.choice([[], [rng.choice(table.columns).name], ["id % 3"], [rng.choice(table.columns).name, "id % 2"]])
    calls = ["count(*)"]
    for column in rng.sample(list(table.columns), min(len(table.columns), rng.randint(1, 3))):
        options = ["count({c})", "count(DISTINCT {c})"]
        if column.kind in _ORDERED:
            options += ["min({c})", "max({c})"]
        if column.kind in _NUMERIC:
            options += ["sum({c})", "avg({c})"]
        calls.append(rng.choice(options).format(c=column.name))
    where = rng.choice(["", "", " WHERE id < 0", " WHERE id % 2 = 0"])
    select = ", ".join([*keys, *(f"{call} AS a{i}" for i, call in enumerate(calls))])
    group = f" GROUP BY {', '.join(keys)}" if keys else ""
    return Shape("aggregate", f"SELECT {select} FROM {{t}}{where}{group}")


def _join(rng: random.Random, table: Table) -> Shape | None:
    by_kind: dict[str, list[str]] = collections.defaultdict(list)
    for column in table.columns:
        by_kind[column.kind].append(column.name)
    kind = rng.choice(sorted(by_kind))
    left, right = rng.choice(by_kind[kind]), rng.choice(by_kind[kind])
    join = rng.choice(["JOIN", "LEFT JOIN", "RIGHT JOIN"])
    op = rng.choice(["=", "=", "<=>"])
    where = rng.choice(["", " WHERE a.id < 20"])
    return Shape(
        "join", f"SELECT a.id, b.id AS bid, a.{left} FROM {{t}} a {join} {{t}} b ON a.{left} {op} b.{right}{where}"
    )


def normal(rows: list[Any]) -> collections.Counter:
    """The rows as a multiset, floats rounded (see the module doc)."""
    return collections.Counter(tuple(_value(v) for v in row) for row in rows)


def _value(value: Any) -> Any:
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return repr(value)
        return 0.0 if value == 0 else float(f"{value:.9g}")
    return value
