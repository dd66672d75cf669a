"""Place each single-scan conjunct on its scan as a pushdown candidate.

A WHERE conjunct goes to the scan whose columns it reads, if that scan is not on the
NULL-supplying side of an outer join (``WHERE b.x IS NULL`` after ``LEFT JOIN b`` must
see the NULL-extended rows). A JOIN ... ON conjunct goes to the join's own table when
the join is inner, semi/anti, or that table is the NULL-supplying side of a LEFT JOIN
(pre-filtering it changes nothing the join emits). The conjunct stays in the tree,
tagged, until classification decides whether Spark must still evaluate it.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from sluice.planner.predicates import conjuncts, from_items, is_pushable_shape, null_supplied, referenced_tables
from sluice.planner.state import CANDIDATE, PlanState


def _scan_targets(state: PlanState, select: exp.Select) -> dict[str, str]:
    """Alias -> scan id for the scans directly in this select's FROM/JOIN."""
    scans = state.by_alias()
    return {alias: scans[alias].scan_id for alias, item in from_items(select).items()
            if isinstance(item, exp.Table) and alias in scans and item.name == scans[alias].scan_id}


def _eligible_on(join: exp.Join) -> bool:
    side, kind = (join.side or "").upper(), (join.kind or "").upper()
    if kind in ("SEMI", "ANTI"):
        return True
    return side in ("", "LEFT") and kind in ("", "INNER", "CROSS", "OUTER")


def apply(state: PlanState) -> PlanState:
    tree = state.tree.copy()
    placed: dict[str, list[exp.Expression]] = {s.scan_id: [] for s in state.scans}

    def place(conjunct: exp.Expression, scan_id: str) -> None:
        conjunct.meta[CANDIDATE] = (scan_id, len(placed[scan_id]))
        placed[scan_id].append(conjunct.copy())

    for select in tree.find_all(exp.Select):
        targets = _scan_targets(state, select)
        if not targets:
            continue
        supplied = null_supplied(select)
        where = select.args.get("where")
        for conjunct in conjuncts(where.this) if where is not None else []:
            tables = referenced_tables(conjunct)
            if len(tables) == 1 and (alias := next(iter(tables))) in targets and alias not in supplied and is_pushable_shape(conjunct):
                place(conjunct, targets[alias])
        for join in select.args.get("joins") or []:
            alias, on = join.this.alias_or_name, join.args.get("on")
            if on is None or alias not in targets or not _eligible_on(join):
                continue
            for conjunct in conjuncts(on):
                if referenced_tables(conjunct) == {alias} and is_pushable_shape(conjunct):
                    place(conjunct, targets[alias])
    scans = tuple(replace(s, candidates=tuple(placed[s.scan_id])) for s in state.scans)
    return replace(state, tree=tree, scans=scans)
