"""One base for every walk over a Spark predicate tree (sqlglot): the AND/OR/NOT plumbing
written once, each analysis a small class on it.

Modelled on PyIceberg's ``BooleanExpressionVisitor``: :meth:`PredicateVisitor.visit`
unwraps parentheses (after the subclass's :meth:`~PredicateVisitor.rewrite`, e.g. pushing a
negation down) and dispatches each connective in :data:`CONNECTIVES` to its abstract
method, everything else to :meth:`~PredicateVisitor.visit_leaf`. Because the methods are
abstract, a walker that misses a connective cannot be instantiated; and
``tests/unit/test_visitor.py`` fails when sqlglot has a connective this table does not name,
so adding one is a change here that every walker is then forced to answer.

A subclass visits the children itself (``self.visit(node.this)``): some analyses look at a
child before deciding whether to visit it, or catch a child's failure to keep its sibling.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Generic, TypeVar

from sqlglot import exp

T = TypeVar("T")

#: the connectives of a predicate tree and the method each is dispatched to
CONNECTIVES: dict[type[exp.Expression], str] = {exp.And: "visit_and", exp.Or: "visit_or", exp.Not: "visit_not"}
#: sqlglot connectives that are leaves to every walker (no source or format has them; a
#: walker's leaf case leaves them to Spark)
LEAF_CONNECTIVES: tuple[type[exp.Expression], ...] = (exp.Xor,)


class PredicateVisitor(ABC, Generic[T]):
    """A walk over a predicate tree giving a ``T`` per node."""

    def visit(self, node: exp.Expression) -> T:
        """The answer for ``node``: its connective's method, or :meth:`visit_leaf`."""
        node = self.rewrite(node)
        if isinstance(node, exp.Paren):
            return self.visit(node.this)
        for kind, method in CONNECTIVES.items():
            if isinstance(node, kind):
                return getattr(self, method)(node)
        return self.visit_leaf(node)

    def rewrite(self, node: exp.Expression) -> exp.Expression:
        """``node`` in the form this analysis reads (by default, as it is)."""
        return node

    @abstractmethod
    def visit_and(self, node: exp.And) -> T: ...

    @abstractmethod
    def visit_or(self, node: exp.Or) -> T: ...

    @abstractmethod
    def visit_not(self, node: exp.Not) -> T: ...

    @abstractmethod
    def visit_leaf(self, node: exp.Expression) -> T:
        """Any node that is not a connective (a comparison, a column, a function...)."""
