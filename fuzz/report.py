"""A mismatch as a reproduction a person can act on, and as a JSON regression case.

The text names everything needed to see the bug without the fuzzer: the table's DDL in
every source, its rows, the query, what each side returned, and for the source where it
failed the plan: each conjunct's level, reason and remote SQL, and the remote query.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from fuzz import tables
from fuzz.loaders.base import Loader
from fuzz.predicates import render, to_json
from fuzz.runner import Mismatch, Outcome


def _rows(table: tables.Table, outcome: Outcome) -> str:
    if outcome.error is not None:
        return f"    error: {outcome.error}"
    assert outcome.ids is not None  # an outcome without an error has its rows
    ids = sorted(outcome.ids.elements())
    by_id = {row[0]: row for row in table.rows}
    lines = [f"    {len(ids)} row(s): ids {ids}"]
    lines += [f"      {by_id[i]!r}" for i in ids[:20]]
    return "\n".join(lines)


def _plan(fed: Any, query: str) -> str:
    try:
        plan = fed.plan(query)
    except Exception as error:  # noqa: BLE001 - show why instead
        return f"  (planning failed: {error})"
    lines = []
    for scan in plan.scans:
        lines.append(f"  scan {scan.scan_id} on {scan.source} ({scan.table}): {scan.remote_query}")
        lines += [
            f"    {v.level.value:<11} {v.sql}\n{'':16}remote: {v.remote_sql}\n{'':16}reason: {v.reason}"
            for v in scan.verdicts
        ]
    lines.append(f"  Spark's plan:\n{plan.spark_plan}")
    return "\n".join(lines)


def text(mismatch: Mismatch, loaders: dict[str, Loader], fed: Any, plan_query: str | None) -> str:
    """The reproduction. ``plan_query`` is planned if given (the table must be loaded)."""
    table, loader = mismatch.table, loaders[mismatch.source]
    query = f"SELECT id FROM {loader.reference(table.name)} WHERE {render(mismatch.predicate)}"
    parts = [
        f"MISMATCH on {mismatch.source}: {mismatch.kind}  ({mismatch.origin})",
        f"query:\n  {query}",
        "table DDL per source:",
        *(f"  [{name}] {other.ddl(table)}" for name, other in loaders.items()),
        f"rows ({len(table.rows)}; columns id, {', '.join(c.name for c in table.columns)}):",
        *(f"    {row!r}" for row in table.rows),
        "pushdown on  (fed.sql(q)):",
        _rows(table, mismatch.pushed),
        "pushdown off (fed.sql(q, pushdown=False)):",
        _rows(table, mismatch.reference),
    ]
    if plan_query is not None:
        parts += [f"plan on {mismatch.source}:", _plan(fed, plan_query)]
    return "\n".join(parts)


def case(mismatch: Mismatch, zone: str) -> dict[str, Any]:
    """A regression case for fuzz/regressions.json."""
    return {
        "name": f"{mismatch.source}-{mismatch.kind.replace(' ', '-')}-{dt.date.today():%Y%m%d}",
        "found": f"{dt.date.today():%Y-%m-%d} on {mismatch.source}: {mismatch.kind} ({mismatch.origin})",
        "sources": [mismatch.source],
        "session_zone": zone,
        "predicate": render(mismatch.predicate),
        "tree": to_json(mismatch.predicate),
        "table": tables.to_json(mismatch.table),
    }
