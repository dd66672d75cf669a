"""Pushed predicates as Iceberg expressions, for pruning only.

A lake scan's pushed conjuncts are DuckDB SQL (the lake dialect renders them; DuckDB
evaluates them exactly over the rows that survive pruning). Pruning needs them as
PyIceberg expressions, and those follow Iceberg's semantics, not Spark's:

* NaN: in Spark ``NaN > 5`` is true (NaN sorts above everything) and ``NaN = NaN`` is
  true; in Iceberg every comparison with NaN is false. So a float comparison that NaN
  satisfies in Spark gains ``OR is_nan(x)``.
* NULL: Iceberg's ``NotEqualTo``/``NotIn``/``NotStartsWith`` are true on NULL, Spark's
  are not (DESIGN.md section 2). Only the supersets are used here, so that errs safe.
* Literals: an Iceberg literal is converted to the column's type when bound (a decimal
  1.5 against an int column would be truncated to 1, and ``x < 1`` loses ``x = 1``), so a
  comparison is translated only when the literal already has the column's exact type.

Every translation is a **superset**: each row Spark keeps satisfies the Iceberg
expression. What cannot be translated becomes ``AlwaysTrue`` (prunes nothing). A
translation is also marked ``exact`` when its true-set equals Spark's (no floats, no
negations): only exact ones may prove that a whole file matches (strict evaluation).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any, cast

import sqlglot
from pyiceberg import expressions as ice
from pyiceberg.schema import Schema
from pyiceberg.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
    StringType,
    TimestampType,
    TimestamptzType,
)
from sqlglot import exp

from sluice.pushdown.like import LikePattern
from sluice.pushdown.visitor import PredicateVisitor


@dataclass(frozen=True)
class IcebergFilter:
    """One conjunct for pruning: a superset expression, and whether it is also exact."""

    expression: ice.BooleanExpression
    exact: bool

    @classmethod
    def everything(cls) -> IcebergFilter:
        return cls(ice.AlwaysTrue(), False)


_FLIP: dict[type[exp.Expression], type[exp.Expression]] = {
    exp.GT: exp.LT,
    exp.GTE: exp.LTE,
    exp.LT: exp.GT,
    exp.LTE: exp.GTE,
    exp.EQ: exp.EQ,
    exp.NEQ: exp.NEQ,
}


def _predicate(cls: type[ice.BooleanExpression]) -> Callable[..., ice.BooleanExpression]:
    """A pyiceberg predicate's constructor, ``(term, literal)`` or ``(term, literals)``: its
    type annotations describe the pydantic fields instead."""
    return cls


_ICEBERG_OP: dict[type[exp.Expression], Callable[..., ice.BooleanExpression]] = {
    exp.EQ: _predicate(ice.EqualTo),
    exp.GT: _predicate(ice.GreaterThan),
    exp.GTE: _predicate(ice.GreaterThanOrEqual),
    exp.LT: _predicate(ice.LessThan),
    exp.LTE: _predicate(ice.LessThanOrEqual),
}
#: Python value types a literal must have for each Iceberg column type (see module doc)
_ACCEPTS: dict[type[IcebergType], tuple[type, ...]] = {
    IntegerType: (int,),
    LongType: (int,),
    DoubleType: (float,),
    FloatType: (float,),
    StringType: (str,),
    DateType: (dt.date,),
    TimestamptzType: (dt.datetime,),
    TimestampType: (dt.datetime,),
    BooleanType: (bool,),
    DecimalType: (Decimal,),
}

_INT_RANGE = {IntegerType: (-(2**31), 2**31 - 1), LongType: (-(2**63), 2**63 - 1)}


def conjunct_filter(sql: str, schema: Schema) -> IcebergFilter:
    """The pruning form of one pushed conjunct (DuckDB SQL text, as the lake dialect renders it)."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
        return _Converter(schema).visit(cast(exp.Expression, tree))  # parse_one is typed with the nodes' Expr base
    except sqlglot.errors.ParseError:
        return IcebergFilter.everything()
    except RecursionError:  # nested deeper than sqlglot re-reads: prune nothing (DuckDB still applies it)
        return IcebergFilter.everything()


def combined(filters: list[IcebergFilter]) -> IcebergFilter:
    """The AND of conjuncts: exact only when each of them is."""
    expression: ice.BooleanExpression = ice.AlwaysTrue()
    for item in filters:
        expression = ice.And(expression, item.expression)
    return IcebergFilter(expression, all(f.exact for f in filters))


#: an integer range this narrow is also pruned as the set of its values (see :func:`with_value_sets`)
MAX_RANGE_AS_SET = 64
_LOWER = {ice.GreaterThanOrEqual: 0, ice.GreaterThan: 1, ice.EqualTo: 0}
_UPPER = {ice.LessThanOrEqual: 0, ice.LessThan: -1, ice.EqualTo: 0}


def with_value_sets(expression: ice.BooleanExpression, schema: Schema) -> ice.BooleanExpression:
    """``expression`` AND, for each integer column it bounds to at most
    :data:`MAX_RANGE_AS_SET` values, ``column IN (those values)``.

    For partition pruning only. A range projects through no bucket transform (Iceberg's
    inclusive projection of ``payload_id BETWEEN 7 AND 8`` onto ``bucket(4, payload_id)``
    is *true*), but the equal set does: ``IN (7, 8)`` keeps at most two buckets. The set is
    implied by the bounds (an integer in ``[lo, hi]`` is one of them; NULL satisfies
    neither), so the result is true exactly where ``expression`` is.
    """
    integer_columns = {f.name for f in schema.fields if isinstance(f.field_type, (IntegerType, LongType))}
    lower: dict[str, int] = {}
    upper: dict[str, int] = {}
    pending = [expression]
    while pending:  # the top-level AND only: bounds under an OR bound nothing
        node = pending.pop()
        if isinstance(node, ice.And):
            pending += [node.left, node.right]
            continue
        name = getattr(getattr(node, "term", None), "name", None)
        value = getattr(getattr(node, "literal", None), "value", None)
        if name not in integer_columns or not isinstance(value, int) or isinstance(value, bool):
            continue
        if type(node) in _LOWER:
            lower[name] = max(lower.get(name, value + _LOWER[type(node)]), value + _LOWER[type(node)])
        if type(node) in _UPPER:
            upper[name] = min(upper.get(name, value + _UPPER[type(node)]), value + _UPPER[type(node)])
    for name in sorted(lower.keys() & upper.keys()):
        if 1 < upper[name] - lower[name] + 1 <= MAX_RANGE_AS_SET:
            expression = ice.And(expression, _predicate(ice.In)(name, list(range(lower[name], upper[name] + 1))))
    return expression


class _Converter(PredicateVisitor[IcebergFilter]):
    def __init__(self, schema: Schema) -> None:
        self.fields = {field.name.lower(): field for field in schema.fields}

    def visit_and(self, node: exp.And) -> IcebergFilter:
        left, right = self.visit(node.this), self.visit(node.expression)
        return IcebergFilter(ice.And(left.expression, right.expression), left.exact and right.exact)

    def visit_or(self, node: exp.Or) -> IcebergFilter:
        left, right = self.visit(node.this), self.visit(node.expression)
        return IcebergFilter(ice.Or(left.expression, right.expression), left.exact and right.exact)

    def visit_not(self, node: exp.Not) -> IcebergFilter:
        return self._negation(node.this)

    def visit_leaf(self, node: exp.Expression) -> IcebergFilter:
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
            name = self._column(node.this)
            return IcebergFilter(_predicate(ice.IsNull)(name), True) if name else IcebergFilter.everything()
        if type(node) in _FLIP:
            return self._comparison(node)
        if isinstance(node, exp.In) and not node.args.get("query"):
            return self._in(node)
        if isinstance(node, exp.Escape) and isinstance(node.this, exp.Like):
            return self._like(node.this, node.expression)
        return IcebergFilter.everything()

    # ------------------------------------------------------------- shapes
    def _negation(self, inner: exp.Expression) -> IcebergFilter:
        while isinstance(inner, exp.Paren):
            inner = inner.this
        if isinstance(inner, exp.Is) and isinstance(inner.expression, exp.Null):
            name = self._column(inner.this)
            return IcebergFilter(_predicate(ice.NotNull)(name), True) if name else IcebergFilter.everything()
        return IcebergFilter.everything()  # the planner pushes NOT down before classifying

    def _comparison(self, node: exp.Expression) -> IcebergFilter:
        op, left, right = type(node), node.this, node.expression
        if self._column(left) is None:
            op, left, right = _FLIP[op], right, left
        name = self._column(left)
        if name is None or op is exp.NEQ:
            return IcebergFilter.everything()  # <> prunes nothing worth its NULL and NaN care
        value = self._value(right, name)
        if value is _UNKNOWN or value is None:
            return IcebergFilter.everything()
        if isinstance(value, float):
            return _float_comparison(op, name, value)
        return IcebergFilter(_ICEBERG_OP[op](name, value), True)

    def _in(self, node: exp.In) -> IcebergFilter:
        name = self._column(node.this)
        if name is None:
            return IcebergFilter.everything()
        values = [self._value(item, name) for item in node.expressions]
        if any(v is _UNKNOWN for v in values):
            return IcebergFilter.everything()
        present = [v for v in values if v is not None]  # x IN (NULL, ...) is never true through the NULL
        nan = any(isinstance(v, float) and math.isnan(v) for v in present)
        plain = [v for v in present if not (isinstance(v, float) and math.isnan(v))]
        expression: ice.BooleanExpression = _predicate(ice.In)(name, plain) if plain else ice.AlwaysFalse()
        if nan:
            expression = ice.Or(expression, _predicate(ice.IsNaN)(name))
        exact = not any(isinstance(v, float) for v in present)
        return IcebergFilter(expression, exact)

    def _like(self, like: exp.Like, escape: exp.Expression) -> IcebergFilter:
        name = self._column(like.this)
        if name is None or not isinstance(like.expression, exp.Literal) or not isinstance(escape, exp.Literal):
            return IcebergFilter.everything()
        pattern = LikePattern.parse(like.expression.this, escape.this)
        if pattern is None:
            return IcebergFilter.everything()
        prefix = pattern.literal_prefix()
        if not prefix:
            return IcebergFilter.everything()
        return IcebergFilter(_predicate(ice.StartsWith)(name, prefix), pattern.is_prefix_match())

    # ------------------------------------------------------------- operands
    def _column(self, node: exp.Expression) -> str | None:
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.Column) and not node.table:
            field = self.fields.get(node.name.lower())
            return field.name if field is not None else None
        return None

    def _value(self, node: exp.Expression, column: str) -> Any:
        """The literal's Python value if it has the column's exact type; else ``_UNKNOWN``."""
        value: Any = _literal(node)  # checked against the column's type below
        if value is _UNKNOWN or value is None:
            return value
        field_type = self.fields[column.lower()].field_type
        accepted = _ACCEPTS.get(type(field_type))
        if (
            accepted is None
            or not any(isinstance(value, t) for t in accepted)
            or (isinstance(value, bool) and not isinstance(field_type, BooleanType))
        ):
            return _UNKNOWN
        if (
            isinstance(field_type, (IntegerType, LongType))
            and not _INT_RANGE[type(field_type)][0] <= value <= _INT_RANGE[type(field_type)][1]
        ):
            return _UNKNOWN  # binding would make it AboveMax/BelowMin: an AlwaysTrue that is true on NULL too
        if isinstance(field_type, DateType) and isinstance(value, dt.datetime):
            return _UNKNOWN
        if isinstance(field_type, (TimestamptzType, TimestampType)):
            if (value.tzinfo is not None) != isinstance(field_type, TimestamptzType):
                return _UNKNOWN
        if isinstance(field_type, DecimalType):
            with localcontext() as context:  # the default context's 28 digits cannot hold decimal(38,s)
                context.prec = 80  # twice Spark's 38 digits: any decimal literal and scale fit
                try:
                    scaled = value.quantize(Decimal(1).scaleb(-field_type.scale))
                except InvalidOperation:  # not representable at that scale at all
                    return _UNKNOWN
            return scaled if scaled == value else _UNKNOWN
        return value


def _float_comparison(op: type[exp.Expression], name: str, value: float) -> IcebergFilter:
    """Spark's float order: NaN equals NaN and sorts above +Infinity."""
    if math.isnan(value):
        if op in (exp.EQ, exp.GTE):
            return IcebergFilter(_predicate(ice.IsNaN)(name), False)  # x >= NaN holds only for NaN
        return IcebergFilter.everything()
    comparison = _ICEBERG_OP[op](name, value)
    if op in (exp.GT, exp.GTE):
        comparison = ice.Or(comparison, _predicate(ice.IsNaN)(name))
    return IcebergFilter(comparison, False)


class _Unknown:
    """Marker: an operand that is not a literal this module can read."""


_UNKNOWN = _Unknown()
_CASTS: dict[str, Callable[[str], Any]] = {
    "DOUBLE": float,
    "FLOAT": float,
    "DATE": dt.date.fromisoformat,
    "TIMESTAMPTZ": dt.datetime.fromisoformat,
    "TIMESTAMP": dt.datetime.fromisoformat,
}


def _literal(node: exp.Expression) -> Any:
    """A constant as the lake dialect spells it (see sluice/dialects/duckdb.py), read back."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Neg):
        inner = _literal(node.this)
        return -inner if isinstance(inner, int) and not isinstance(inner, bool) else _UNKNOWN
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        return int(node.this) if node.this.lstrip("-").isdigit() else _UNKNOWN
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string:
        text, target = node.this.this, node.to.this.name
        if target == "DECIMAL":
            try:
                return Decimal(text)
            except InvalidOperation:
                return _UNKNOWN
        reader = _CASTS.get(target)
        if reader is None:
            return _UNKNOWN
        try:
            return reader(text)
        except ValueError:
            return _UNKNOWN
    return _UNKNOWN
