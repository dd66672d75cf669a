"""Helpers the rules share: where predicates live in a query tree, and conjuncts."""

from __future__ import annotations

from typing import Callable, Iterator

from sqlglot import exp

_NONDETERMINISTIC = (exp.Rand, exp.Randn) + tuple(
    t for t in (getattr(exp, n, None) for n in ("Uuid", "CurrentTimestamp", "CurrentDate")) if t is not None
)


def predicate_slots(tree: exp.Expression) -> Iterator[exp.Expression]:
    """Every node that holds a filter condition: WHERE, HAVING and JOIN ... ON."""
    for node in tree.find_all(exp.Where, exp.Having):
        yield node
    for join in tree.find_all(exp.Join):
        if join.args.get("on") is not None:
            yield join


def condition_of(slot: exp.Expression) -> exp.Expression:
    return slot.args["on"] if isinstance(slot, exp.Join) else slot.this


def set_condition(slot: exp.Expression, condition: exp.Expression | None) -> None:
    """Replace a slot's condition; an emptied WHERE disappears, an emptied ON becomes TRUE."""
    if isinstance(slot, exp.Join):
        slot.set("on", condition if condition is not None else exp.true())
    elif condition is None:
        slot.pop()
    else:
        slot.set("this", condition)


def rewrite_predicates(tree: exp.Expression, rewrite: Callable[[exp.Expression], exp.Expression]) -> exp.Expression:
    """Copy ``tree`` and apply ``rewrite`` inside predicate slots only, to a fixed point.

    Projections are never touched, so the names Spark gives result columns cannot change.
    """
    tree = tree.copy()
    for slot in list(predicate_slots(tree)):
        condition = condition_of(slot)
        for _ in range(100):  # transform() is top-down: repeat until nothing changes
            rewritten = condition.transform(rewrite)
            if rewritten == condition:
                break
            condition = rewritten
        set_condition(slot, condition)
    return tree


def conjuncts(condition: exp.Expression) -> list[exp.Expression]:
    """Top-level AND-ed parts, looking through parentheses (left to right; iterative, so a
    generated query with thousands of ANDs splits without deep recursion)."""
    parts, pending = [], [condition]
    while pending:
        node = pending.pop()
        if isinstance(node, exp.Paren) and isinstance(node.this, exp.And):
            pending.append(node.this)
        elif isinstance(node, exp.And):
            pending += [node.expression, node.this]
        else:
            parts.append(node)
    return parts


def and_all(parts: list[exp.Expression]) -> exp.Expression | None:
    """The conjunction of ``parts``; a bare NULL part (typed boolean only inside its AND)
    becomes ``CAST(NULL AS BOOLEAN)``, since Spark rejects ``WHERE NULL``."""
    if not parts:
        return None
    parts = [exp.cast(part, "BOOLEAN") if isinstance(part, exp.Null) else part for part in parts]
    result = parts[0]
    for part in parts[1:]:
        result = exp.And(this=result, expression=part)
    return result


def is_pushable_shape(node: exp.Expression) -> bool:
    """No subquery, aggregate, window or nondeterministic call: safe to move below a join."""
    forbidden = (exp.Subquery, exp.Select, exp.Exists, exp.AggFunc, exp.Window, *_NONDETERMINISTIC)
    return not any(True for _ in node.find_all(*forbidden))


def referenced_tables(node: exp.Expression) -> set[str]:
    return {column.table for column in node.find_all(exp.Column)}


def null_supplied(select: exp.Select) -> set[str]:
    """Aliases of the FROM/JOIN items whose rows an outer join may replace with NULLs."""
    from_ = select.args.get("from_")
    if from_ is None:
        return set()
    seen = [from_.this.alias_or_name]
    supplied: set[str] = set()
    for join in select.args.get("joins") or []:
        side, alias = (join.side or "").upper(), join.this.alias_or_name
        if side == "LEFT":
            supplied.add(alias)
        elif side == "RIGHT":
            supplied.update(seen)
        elif side == "FULL":
            supplied.update(seen)
            supplied.add(alias)
        seen.append(alias)
    return supplied


def from_items(select: exp.Select) -> dict[str, exp.Expression]:
    """The select's FROM and JOIN items by alias."""
    items = {}
    from_ = select.args.get("from_")
    if from_ is not None:
        items[from_.this.alias_or_name] = from_.this
    for join in select.args.get("joins") or []:
        items[join.this.alias_or_name] = join.this
    return items
