"""Partition projections that survive literals at the ends of a type's range.

PyIceberg projects a predicate onto a partition transform by stepping the literal (``dt <
DATE '0001-01-01'`` becomes ``dt <= DATE '0000-12-31'`` before its month is taken), and a
step past the calendar's ends raises ``OverflowError`` (``date value out of range``). Spark
answers such a query (no row is before year 1), so a scan must not fail on it. Each top-level
conjunct is projected on its own: one that cannot be projected prunes nothing (inclusive:
``AlwaysTrue``) and proves nothing (strict: ``AlwaysFalse``), while its neighbours still prune.
Found by the conformance matrix (``years(dt)`` and ``months(dt)`` at 0001-01-01 and 9999-12-31).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce

from pyiceberg.expressions import AlwaysFalse, AlwaysTrue, And, BooleanExpression
from pyiceberg.expressions.visitors import inclusive_projection, strict_projection
from pyiceberg.partitioning import PartitionSpec
from pyiceberg.schema import Schema

Projection = Callable[[BooleanExpression], BooleanExpression]


def conjuncts(expression: BooleanExpression) -> list[BooleanExpression]:
    """The top-level AND-ed parts of ``expression`` (itself when it is no AND)."""
    if isinstance(expression, And):
        return conjuncts(expression.left) + conjuncts(expression.right)
    return [expression]


def _per_conjunct(project: Projection, unprojectable: BooleanExpression) -> Projection:
    def run(expression: BooleanExpression) -> BooleanExpression:
        parts = []
        for part in conjuncts(expression):
            try:
                parts.append(project(part))
            except OverflowError:  # a literal at the end of its type's range (see the module's docstring)
                parts.append(unprojectable)
        return reduce(And, parts)

    return run


def inclusive(schema: Schema, spec: PartitionSpec) -> Projection:
    """PyIceberg's inclusive projection (partitions that may hold a match), per conjunct."""
    return _per_conjunct(inclusive_projection(schema, spec), AlwaysTrue())


def strict(schema: Schema, spec: PartitionSpec) -> Projection:
    """PyIceberg's strict projection (partitions whose every row matches), per conjunct."""
    return _per_conjunct(strict_projection(schema, spec), AlwaysFalse())
