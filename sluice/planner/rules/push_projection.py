"""Each scan reads only the columns the rest of the query uses.

Scan aliases are unique across the query (the binder canonicalizes them), so a column's
qualifier names its scan. A scan whose columns nobody reads (``count(*)``) still reads
its first column, so Spark gets the right number of rows.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from sluice.planner.state import PlanState


def apply(state: PlanState) -> PlanState:
    used: dict[str, dict[str, None]] = {s.alias: {} for s in state.scans}
    for column in state.tree.find_all(exp.Column):
        if column.table in used:
            used[column.table][column.name.lower()] = None
    scans = []
    for scan in state.scans:
        names = [c.name for c in scan.table.columns if c.name.lower() in used[scan.alias]]
        scans.append(replace(scan, columns=tuple(names or [scan.table.columns[0].name])))
    return replace(state, scans=tuple(scans))
