"""How deep a predicate tree may be, measured and reshaped without recursion.

Everything that walks a tree is recursive: sqlglot's parser (about 20 Python frames per
parenthesis level) and generator, the translator, Spark's parser, and the remote engines,
which cap expression depth (SQLite and DuckDB at 1,000 levels). So depth is measured
iteratively before anything recursive runs, and a too-deep tree is refused or left to Spark
with a reason, never allowed to end in a ``RecursionError`` or a remote error.

A long chain of one connector (``a OR b OR ...`` as query generators write it, or a Flight
filter's ``and`` with many arguments) is deep only by accident of grouping: AND and OR are
associative in three-valued logic, so :func:`chain` groups it balanced, as Spark's own
parser does. Operands keep their left-to-right order, so short-circuit evaluation reaches
the same operands (and the same errors) as the left-deep form.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

#: chains up to this long keep the left-deep shape they were written in (EXPLAIN shows it)
LONG_CHAIN = 32
#: deepest predicate (in sqlglot nodes) pushed to a source; deeper ones are left to Spark
MAX_PUSH_DEPTH = 128


def depth(tree: exp.Expression, flat: tuple[type[exp.Expression], ...] = ()) -> int:
    """The number of nodes on the longest root-to-leaf path of ``tree``; nodes of a ``flat``
    type do not count (sqlglot and the planner walk chains of UNIONs without recursion)."""
    deepest = 0
    pending = [(tree, 1)]
    while pending:
        node, level = pending.pop()
        deepest = max(deepest, level)
        below = level if isinstance(node, flat) else level + 1
        pending.extend((child, below) for child in node.iter_expressions())
    return deepest


def chain(
    connector: type[exp.And] | type[exp.Or],
    parts: list[exp.Expression],
    wrap: Callable[[exp.Expression], exp.Expression],
) -> exp.Expression:
    """``parts`` joined by ``connector`` (``wrap`` parenthesises an operand): left-deep when
    short, balanced when longer than :data:`LONG_CHAIN`, so depth grows with log2(len)."""
    if len(parts) <= LONG_CHAIN:
        tree = parts[0]
        for part in parts[1:]:
            tree = connector(this=wrap(tree), expression=wrap(part))
        return tree
    level: list[exp.Expression] = list(parts)
    while len(level) > 1:
        level = [
            connector(this=wrap(level[i]), expression=wrap(level[i + 1])) if i + 1 < len(level) else level[i]
            for i in range(0, len(level), 2)
        ]
    return level[0]


def rebalance(tree: exp.Expression, wrap: Callable[[exp.Expression], exp.Expression]) -> exp.Expression:
    """``tree`` with every chain of one connector longer than :data:`LONG_CHAIN` regrouped
    balanced (in place; the possibly new root is returned)."""
    pending = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, (exp.And, exp.Or)) and type(node.parent) is not type(node):
            parts = _operands(node)
            if len(parts) > LONG_CHAIN:
                for part in parts:
                    part.pop()
                grouped = chain(type(node), parts, wrap)
                if node is tree:
                    tree = grouped
                else:
                    node.replace(grouped)
                pending.extend(parts)
                continue
        pending.extend(node.iter_expressions())
    return tree


def _operands(node: exp.And | exp.Or) -> list[exp.Expression]:
    """The operands of the chain of ``type(node)`` rooted at ``node``, left to right."""
    parts: list[exp.Expression] = []
    pending: list[exp.Expression] = [node]
    while pending:
        current = pending.pop()
        if type(current) is type(node):
            pending += [current.expression, current.this]
        else:
            parts.append(current)
    return parts
