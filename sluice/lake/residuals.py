"""Residuals of a scan filter per data file, safe for NULL partition values.

A file's partition record holds NULL for a field when its rows have NULL in the source
column (every transform Sluice meets maps NULL, and only NULL, to NULL: identity,
year/month/day/hour, bucket, truncate). PyIceberg 0.12's residual visitor compares such a
value with ``<``/``<=``/``>``/``>=`` and fails with ``TypeError: '>' not supported between
'NoneType' and 'int'``. Partition pruning itself never reaches that code for a conjunction
(the NULL file is pruned first); an OR over two partition columns keeps the file through
its other branch, and the residual of the first branch then crashed the query.

Iceberg's (and Spark's) comparisons are never true on NULL, so a NULL partition value
makes a range comparison's projection false: strictly, not every row matches (the rows
are NULL); inclusively, no row matches. Equality, IN and the NULL tests already behave so
in PyIceberg (``None == v`` is false, ``None in {...}`` is false).
"""

from __future__ import annotations

from pyiceberg.expressions import AlwaysFalse, AlwaysTrue, BooleanExpression, BoundPredicate, BoundTerm
from pyiceberg.expressions.literals import Literal
from pyiceberg.expressions.visitors import ResidualEvaluator, residual_evaluator_of
from pyiceberg.partitioning import PartitionSpec
from pyiceberg.schema import Schema


def _truth(holds: bool) -> BooleanExpression:
    return AlwaysTrue() if holds else AlwaysFalse()


class _NullSafeResidualEvaluator(ResidualEvaluator):
    """PyIceberg's residual evaluator with range comparisons false on a NULL partition value,
    and a predicate it cannot project (a literal at its type's end: :mod:`sluice.lake.projection`)
    kept whole as the residual."""

    def visit_bound_predicate(self, predicate: BoundPredicate) -> BooleanExpression:
        try:
            return super().visit_bound_predicate(predicate)
        except OverflowError:
            return predicate

    def visit_less_than(self, term: BoundTerm, literal: Literal) -> BooleanExpression:
        value = term.eval(self.struct)
        return _truth(value is not None and value < literal.value)

    def visit_less_than_or_equal(self, term: BoundTerm, literal: Literal) -> BooleanExpression:
        value = term.eval(self.struct)
        return _truth(value is not None and value <= literal.value)

    def visit_greater_than(self, term: BoundTerm, literal: Literal) -> BooleanExpression:
        value = term.eval(self.struct)
        return _truth(value is not None and value > literal.value)

    def visit_greater_than_or_equal(self, term: BoundTerm, literal: Literal) -> BooleanExpression:
        value = term.eval(self.struct)
        return _truth(value is not None and value >= literal.value)


def residual_evaluator(spec: PartitionSpec, expression: BooleanExpression, schema: Schema) -> ResidualEvaluator:
    """The residual of ``expression`` for a file's partition record (case-sensitive names)."""
    if spec.is_unpartitioned():
        return residual_evaluator_of(spec, expression, True, schema)
    return _NullSafeResidualEvaluator(spec=spec, expr=expression, schema=schema, case_sensitive=True)
