"""The keys ``EXPLAIN FORMATTED`` prints for a Sluice scan, one a line.

Spark's own JDBC scan prints ``PushedFilters: [...]``, ``PushedAggregates: [...]`` and the
like; people and tools grep a plan for them. A Sluice scan prints the same keys (Spark
leaves out an empty one), then ``RemoteQuery`` (what the source runs) and ``Sluice`` (the
one-line description the short EXPLAIN shows: every verdict with its reason). What is
listed is what the source evaluates; an INEXACT filter is both pushed and kept by Spark.
"""

from __future__ import annotations

from collections.abc import Iterable

from sluice.pushdown.levels import Verdict
from sluice.scan.aggregation import Decision


def _listed(items: Iterable[str]) -> str:
    return f"[{', '.join(items)}]"


def scan_metadata(
    description: str,
    remote: str,
    verdicts: list[Verdict],
    grouped: Decision | None = None,
    limit: int | None = None,
    order: str | None = None,
) -> dict[str, str]:
    """The keys of one table's scan: pushed filters, the aggregation when it was pushed, the limit
    or top-N (``order`` is the source's ``ORDER BY ...``)."""
    metadata = {
        "PushedFilters": _listed(v.sql for v in verdicts if v.level.pushed),
        "RemoteQuery": remote,
        "Sluice": description,
    }
    if grouped is not None and grouped.aggregation is not None:
        keys = len(grouped.aggregation.group_by)
        metadata["PushedGroupBy"] = _listed(v.sql for v in grouped.verdicts[:keys])
        metadata["PushedAggregates"] = _listed(v.sql for v in grouped.verdicts[keys:])
    if limit is not None:
        metadata["PushedTopN" if order else "PushedLimit"] = f"{order} LIMIT {limit}" if order else str(limit)
    return metadata


def join_metadata(
    description: str,
    remote: str,
    title: str,
    keys: list[Verdict],
    grouped: Decision | None = None,
    limit: int | None = None,
    order: str | None = None,
) -> dict[str, str]:
    """The keys of a pushed join's scan: the join and its keys, what was pushed above it (the
    aggregation, the limit or top-N, as :func:`scan_metadata` lists them), and the query the source runs."""
    above = scan_metadata(description, remote, [], grouped, limit, order)
    del above["PushedFilters"]
    return {"PushedJoin": f"{title} ON {' AND '.join(v.sql for v in keys)}" if keys else title, **above}
