"""Move a filter on a derived table's columns inside the derived table.

``SELECT * FROM (SELECT a + 1 AS b, c FROM t) s WHERE s.b > 2`` becomes
``SELECT * FROM (SELECT a + 1 AS b, c FROM t WHERE a + 1 > 2) s``, where the next rule
can place it on the scan of ``t``. Safe only when the derived table is a plain
projection-and-filter (no aggregate, window, DISTINCT, LIMIT, set operation), the
substituted expressions are deterministic, and the derived table is not on the
NULL-supplying side of an outer join.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from sluice.planner.predicates import and_all, conjuncts, from_items, is_pushable_shape, null_supplied, referenced_tables
from sluice.planner.state import PlanState


def _plain(select: exp.Expression) -> bool:
    if not isinstance(select, exp.Select):
        return False
    blocked = ("group", "having", "distinct", "limit", "offset", "qualify", "order", "windows")
    return not any(select.args.get(key) for key in blocked) and all(is_pushable_shape(e) for e in select.expressions)


def _substitute(conjunct: exp.Expression, alias: str, inner: exp.Select) -> exp.Expression | None:
    outputs = {e.alias_or_name.lower(): (e.this if isinstance(e, exp.Alias) else e) for e in inner.expressions}
    missing = False

    def swap(node: exp.Expression) -> exp.Expression:
        nonlocal missing
        if isinstance(node, exp.Column) and node.table == alias:
            found = outputs.get(node.name.lower())
            if found is None:
                missing = True
                return node
            return exp.Paren(this=found.copy()) if not isinstance(found, exp.Column) else found.copy()
        return node

    result = conjunct.copy().transform(swap)
    return None if missing else result


def apply(state: PlanState) -> PlanState:
    tree = state.tree.copy()
    for select in list(tree.find_all(exp.Select)):
        where = select.args.get("where")
        if where is None:
            continue
        items, supplied = from_items(select), null_supplied(select)
        kept = []
        for conjunct in conjuncts(where.this):
            tables = referenced_tables(conjunct)
            target = items.get(next(iter(tables))) if len(tables) == 1 else None
            alias = next(iter(tables)) if tables else None
            if (
                isinstance(target, exp.Subquery)
                and alias not in supplied
                and _plain(target.this)
                and is_pushable_shape(conjunct)
            ):
                moved = _substitute(conjunct, alias, target.this)  # type: ignore[arg-type]
                if moved is not None:
                    target.this.where(moved, copy=False)
                    continue
            kept.append(conjunct)
        condition = and_all(kept)
        if condition is None:
            where.pop()
        else:
            where.set("this", condition)
    return replace(state, tree=tree)
