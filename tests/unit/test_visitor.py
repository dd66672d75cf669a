"""The visitor base of predicate walks (sluice/pushdown/visitor.py): every connective sqlglot
has is either dispatched or deliberately a leaf, and every walker answers every one.
(That the walkers moved onto it answer as before: test_walkers_recorded.py.)
"""

from __future__ import annotations

import importlib
from typing import Any, cast

import pytest
import sqlglot
from sqlglot import exp

from sluice.pushdown import visitor
from sluice.pushdown.visitor import CONNECTIVES, LEAF_CONNECTIVES, PredicateVisitor

pytestmark = pytest.mark.unit

#: the modules whose walkers stand on the base
WALKER_MODULES = ("sluice.pushdown.translator", "sluice.flight.filter_json", "sluice.lake.expressions")


def _subclasses(cls: type[Any]) -> list[type[Any]]:
    return [sub for direct in cls.__subclasses__() for sub in (direct, *_subclasses(direct))]


def test_every_sqlglot_connective_is_dispatched_or_deliberately_a_leaf() -> None:
    """A connective sqlglot adds (or one we start reading) fails here until the base names it."""
    found = {cls for cls in [*_subclasses(exp.Connector), exp.Not] if cls.__module__.startswith("sqlglot")}
    assert found == set(CONNECTIVES) | set(LEAF_CONNECTIVES)


def test_every_connective_is_an_abstract_method_of_the_base() -> None:
    assert {name for name in CONNECTIVES.values()} | {"visit_leaf"} == PredicateVisitor.__abstractmethods__


def test_every_walker_answers_every_connective() -> None:
    for module in WALKER_MODULES:
        importlib.import_module(module)
    walkers = [cls for cls in _subclasses(PredicateVisitor) if cls.__module__.startswith("sluice.")]
    assert {cls.__name__ for cls in walkers} >= {"Translator", "_OpaqueEncoder", "_Converter"}
    for cls in walkers:
        assert not getattr(cls, "__abstractmethods__", None), f"{cls.__qualname__} misses {cls.__abstractmethods__}"


def test_a_walker_that_misses_a_connective_cannot_be_made() -> None:
    class Partial(PredicateVisitor[int]):
        def visit_and(self, node: exp.And) -> int:
            return 1

        def visit_or(self, node: exp.Or) -> int:
            return 2

        def visit_leaf(self, node: exp.Expression) -> int:
            return 0

    with pytest.raises(TypeError, match="visit_not"):
        Partial()  # type: ignore[abstract]  # the point: a walker missing a visit method cannot be built


def test_parentheses_and_the_rewrite_come_before_dispatch() -> None:
    class Shapes(PredicateVisitor[str]):
        def rewrite(self, node: exp.Expression) -> exp.Expression:
            return exp.Or(this=node.this, expression=node.expression) if isinstance(node, exp.Xor) else node

        def visit_and(self, node: exp.And) -> str:
            return f"and({self.visit(node.this)}, {self.visit(node.expression)})"

        def visit_or(self, node: exp.Or) -> str:
            return f"or({self.visit(node.this)}, {self.visit(node.expression)})"

        def visit_not(self, node: exp.Not) -> str:
            return f"not({self.visit(node.this)})"

        def visit_leaf(self, node: exp.Expression) -> str:
            return node.sql("spark")

    tree = cast(exp.Expression, sqlglot.parse_one("((a XOR b)) AND NOT (c = 1)", read="mysql"))
    assert Shapes().visit(tree) == "and(or(a, b), not(c = 1))"
    assert visitor.LEAF_CONNECTIVES == (exp.Xor,)
