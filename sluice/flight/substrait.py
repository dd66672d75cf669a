"""Substrait extended expressions (as ``pyarrow.substrait.serialize_expressions`` writes them)
as Spark SQL predicates: one conjunct per referred expression.

The message is read with the published ``substrait`` package's generated protobuf classes
(:mod:`sluice.flight.substrait_wire` adds the checks a server needs); field references
resolve through the message's own base schema to column names of the served table. Functions are mapped by their name in Substrait's standard extensions. The server
decides under Spark's semantics; where a Substrait producer may mean something else, the
expression is left UNSUPPORTED rather than risk dropping a row the producer would keep:
float comparisons (Substrait leaves NaN to the consumer; Arrow follows IEEE 754, Spark
makes NaN equal to itself and largest), case-insensitive string matching, division.
Anything not mapped is UNSUPPORTED with the reason; malformed bytes are a request error.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal

from sqlglot import exp
from substrait import algebra_pb2, extended_expression_pb2, type_pb2

from sluice.flight import literals
from sluice.flight.filter_json import column_name
from sluice.flight.protocol import MAX_CONJUNCTS, MAX_DEPTH, Conjunct, RequestError
from sluice.flight.substrait_wire import WireError, deprecated_field, has_deprecated_field, parse
from sluice.pushdown import nesting
from sluice.pushdown.constants import Constant
from sluice.pushdown.terms import Unsupported, paren
from sluice.types import Kind, SparkType, TableSchema

_EPOCH = dt.datetime(1970, 1, 1)
_COMPARISONS: dict[str, type[exp.Expression]] = {
    "equal": exp.EQ,
    "not_equal": exp.NEQ,
    "lt": exp.LT,
    "lte": exp.LTE,
    "gt": exp.GT,
    "gte": exp.GTE,
    "is_not_distinct_from": exp.NullSafeEQ,
    "is_distinct_from": exp.NullSafeNEQ,
}
_MATCHES: dict[str, type[exp.Expression]] = {
    "starts_with": exp.StartsWith,
    "ends_with": exp.EndsWith,
    "contains": exp.Contains,
}
_ARITHMETIC: dict[str, type[exp.Expression]] = {"add": exp.Add, "subtract": exp.Sub, "multiply": exp.Mul}
FUNCTION_NAMES = frozenset(
    [*_COMPARISONS, *_MATCHES, *_ARITHMETIC, "and", "or", "not", "is_null", "is_not_null", "char_length", "coalesce"]
)
#: Substrait Type kinds (the ``kind`` oneof's field names) -> Spark type names
_TYPES = {
    "bool": "boolean",
    "i8": "tinyint",
    "i16": "smallint",
    "i32": "int",
    "i64": "bigint",
    "fp32": "float",
    "fp64": "double",
    "string": "string",
    "varchar": "string",
    "date": "date",
    "precision_timestamp": "timestamp_ntz",
    "precision_timestamp_tz": "timestamp",
}
#: Type kinds Substrait has deprecated and the generated classes no longer declare (pyarrow
#: still writes them): field number -> Spark type name
_DEPRECATED_TYPES = {14: "timestamp_ntz", 29: "timestamp"}
#: Expression kinds not mapped, by the ``rex_type`` oneof's field name, as a reason shows them
_UNMAPPED = {
    "window_function": "window function",
    "if_then": "if-then",
    "switch_expression": "switch",
    "multi_or_list": "multi-or-list",
    "subquery": "subquery",
    "nested": "nested",
}


def decode_filter(payload: bytes, table: TableSchema) -> list[Conjunct]:
    """A serialised ``ExtendedExpression`` as one conjunct per referred expression."""
    try:
        message = parse(payload)
    except WireError as error:
        raise RequestError(
            f"the substrait filter is not a valid ExtendedExpression message (malformed: {error})"
        ) from None
    reader = _Reader(table, message)
    references = message.referred_expr
    if len(references) > MAX_CONJUNCTS:
        raise RequestError(f"the filter has {len(references)} conjuncts; the server accepts at most {MAX_CONJUNCTS}")
    conjuncts = []
    for index, reference in enumerate(references):
        label = f"substrait expression {index} ({', '.join(reference.output_names) or 'unnamed'})"
        try:
            if not reference.HasField("expression"):
                raise Unsupported("a measure (aggregate) is not a filter")
            conjuncts.append(Conjunct(reader.expression(reference.expression, 0)))
        except Unsupported as reason:
            conjuncts.append(Conjunct(None, label=label, reason=str(reason)))
        except RequestError as error:
            raise RequestError(f"{label}: {error}") from None
    return conjuncts


class _Reader:
    """Reads the expressions of one message: its function anchors and base schema."""

    def __init__(self, table: TableSchema, message: extended_expression_pb2.ExtendedExpression) -> None:
        self.table = table
        self.functions = {
            declaration.extension_function.function_anchor: declaration.extension_function.name.split(":", 1)[0]
            for declaration in message.extensions
            if declaration.HasField("extension_function")
        }
        self.names = _top_level_names(message.base_schema) if message.HasField("base_schema") else []

    def expression(self, node: algebra_pb2.Expression, depth: int) -> exp.Expression:
        if depth > MAX_DEPTH:
            raise RequestError(f"the expression is nested deeper than {MAX_DEPTH} levels")
        kind = node.WhichOneof("rex_type")
        if kind == "literal":
            return literals.constant_node(_literal(node.literal))
        if kind == "selection":
            return self._field(node.selection)
        if kind == "scalar_function":
            return self._function(node.scalar_function, depth + 1)
        if kind == "singular_or_list":
            found = node.singular_or_list
            if not found.HasField("value"):
                raise RequestError("a SingularOrList has no value")
            items = [self.expression(option, depth + 1) for option in found.options]
            if not items:
                raise Unsupported("an empty IN list")
            left = self.expression(found.value, depth + 1)
            self._refuse_floats(left, *items)
            return exp.In(this=paren(left), expressions=items)
        if kind == "cast":
            raise Unsupported("Substrait casts are not mirrored in Spark SQL")
        shown = "enum" if kind is None and has_deprecated_field(node, 4) else _UNMAPPED.get(kind or "", "unknown")
        raise Unsupported(f"Substrait {shown} expressions are not mapped to Spark SQL")

    def _field(self, reference: algebra_pb2.Expression.FieldReference) -> exp.Expression:
        direct = reference.direct_reference if reference.HasField("direct_reference") else None
        field = direct.struct_field if direct is not None and direct.HasField("struct_field") else None
        if field is None or not reference.HasField("root_reference"):
            raise Unsupported("only direct references to top-level columns are mapped")
        if field.HasField("child"):
            raise Unsupported("references into nested fields are not mapped")
        index = field.field
        if not 0 <= index < len(self.names):
            raise RequestError(f"field reference {index} is outside the base schema ({len(self.names)} columns)")
        return exp.column(column_name(self.table, self.names[index]), quoted=True)

    def _function(self, call: algebra_pb2.Expression.ScalarFunction, depth: int) -> exp.Expression:
        anchor = call.function_reference
        if anchor not in self.functions:
            raise RequestError(f"function reference {anchor} has no extension declaration")
        name = self.functions[anchor]
        args = []
        for argument in call.arguments:
            if not argument.HasField("value"):
                raise Unsupported(f"{name}() with an enum or type argument is not mapped")
            args.append(self.expression(argument.value, depth))
        options = {option.name: list(option.preference) for option in call.options}
        return self._build(name, args, options)

    def _build(self, name: str, args: list[exp.Expression], options: dict[str, list[str]]) -> exp.Expression:
        if name in ("and", "or"):
            if len(args) < 2:
                raise RequestError(f"{name}() takes at least two arguments")
            return nesting.chain(exp.And if name == "and" else exp.Or, args, paren)
        if name in ("not", "is_null", "is_not_null"):
            _arity(name, args, 1)
            if name == "not":
                return exp.Not(this=paren(args[0]))
            test = exp.Is(this=paren(args[0]), expression=exp.Null())
            return test if name == "is_null" else exp.Not(this=test)
        if name in _COMPARISONS:
            _arity(name, args, 2)
            self._refuse_floats(*args)
            return _COMPARISONS[name](this=paren(args[0]), expression=paren(args[1]))
        if name in _MATCHES:
            _arity(name, args, 2)
            sensitivity = options.get("case_sensitivity", ["CASE_SENSITIVE"])
            if sensitivity[:1] != ["CASE_SENSITIVE"]:
                raise Unsupported(f"{name}() with case_sensitivity {sensitivity}: Spark matches case-sensitively")
            return _MATCHES[name](this=paren(args[0]), expression=paren(args[1]))
        if name in _ARITHMETIC:
            _arity(name, args, 2)
            return _ARITHMETIC[name](this=paren(args[0]), expression=paren(args[1]))
        if name == "char_length":
            _arity(name, args, 1)
            return exp.Length(this=args[0])
        if name == "coalesce" and args:
            return exp.Coalesce(this=args[0], expressions=args[1:])
        if name == "divide":
            raise Unsupported("Substrait divide() is integer division on integers; Spark's / is not")
        raise Unsupported(f"Substrait function {name}() is not mapped to Spark SQL")

    def _refuse_floats(self, *operands: exp.Expression) -> None:
        for operand in operands:
            column = self.table.column(operand.name) if isinstance(operand, exp.Column) else None
            cast = operand if isinstance(operand, exp.Cast) else None
            floating = (column is not None and column.type.kind is Kind.FLOAT) or (
                cast is not None and cast.to.this in (exp.DataType.Type.FLOAT, exp.DataType.Type.DOUBLE)
            )
            if floating:
                raise Unsupported(
                    "float comparison: Substrait leaves NaN to the consumer (Arrow follows IEEE 754), "
                    "Spark makes NaN equal to itself and larger than any number"
                )


def _arity(name: str, args: list[exp.Expression], count: int) -> None:
    if len(args) != count:
        raise RequestError(f"{name}() takes {count} argument(s), not {len(args)}")


# ---------------------------------------------------------------- literals and types
def _literal(literal: algebra_pb2.Expression.Literal) -> Constant:
    kind = literal.WhichOneof("literal_type")
    if kind == "null":  # a typed NULL
        return Constant(None, _spark_type(literal.null))
    if kind == "boolean":
        return Constant(literal.boolean, SparkType("boolean"))
    integral = {"i8": "tinyint", "i16": "smallint", "i32": "int", "i64": "bigint"}
    if kind in integral:
        return literals.from_json(getattr(literal, kind), integral[kind])
    if kind == "fp32":
        return literals.from_json(_float_json(literal.fp32), "float")
    if kind == "fp64":
        return literals.from_json(_float_json(literal.fp64), "double")
    if kind == "string":
        return Constant(literal.string, SparkType("string"))
    if kind == "var_char":
        return Constant(literal.var_char.value, SparkType("string"))
    if kind == "date":
        return _stamp(lambda: dt.date(1970, 1, 1) + dt.timedelta(days=literal.date), "date")
    if kind in ("precision_timestamp", "precision_timestamp_tz"):
        stamp = getattr(literal, kind)
        return _precision_timestamp(
            stamp.precision, stamp.value, "timestamp" if kind.endswith("_tz") else "timestamp_ntz"
        )
    if kind == "decimal":
        return _decimal(literal.decimal)
    if kind is None:  # Substrait's deprecated microsecond timestamps, which pyarrow still writes
        naive, aware = deprecated_field(literal, 14), deprecated_field(literal, 27)
        if naive is not None:
            return _stamp(lambda: _EPOCH + dt.timedelta(microseconds=_int64(naive)), "timestamp_ntz")
        if aware is not None:
            return _stamp(
                lambda: (_EPOCH + dt.timedelta(microseconds=_int64(aware))).replace(tzinfo=dt.timezone.utc),
                "timestamp",
            )
    raise Unsupported("a Substrait literal of a type Sluice does not push")


def _int64(value: int) -> int:
    """An int64 read from an unknown field's raw varint (two's complement)."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def _float_json(value: float) -> float | str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def _stamp(build: Callable[[], dt.date], spark: str) -> Constant:
    try:
        return Constant(build(), SparkType(spark))
    except OverflowError:
        raise RequestError(f"a {spark} literal is out of range") from None


def _precision_timestamp(precision: int, value: int, spark: str) -> Constant:
    if precision not in (0, 3, 6, 9):
        raise RequestError(f"timestamp precision {precision} is not 0, 3, 6 or 9")
    if precision == 9 and value % 1000:
        raise Unsupported("a nanosecond timestamp literal has no exact Spark value (microseconds)")
    micros = value * 10 ** (6 - precision) if precision <= 6 else value // 1000
    constant = _stamp(lambda: _EPOCH + dt.timedelta(microseconds=micros), spark)
    if spark == "timestamp":
        return Constant(constant.value.replace(tzinfo=dt.timezone.utc), constant.type)
    return constant


def _decimal(decimal: algebra_pb2.Expression.Literal.Decimal) -> Constant:
    raw = decimal.value
    if len(raw) != 16:
        raise RequestError(f"a decimal literal holds {len(raw)} bytes, not 16")
    precision, scale = decimal.precision, decimal.scale
    if not 0 <= scale <= precision <= 38 or precision == 0:
        raise RequestError(f"decimal({precision},{scale}) is not a valid decimal type")
    unscaled = int.from_bytes(raw, "little", signed=True)
    return literals.from_json(format(Decimal(unscaled).scaleb(-scale), "f"), f"decimal({precision},{scale})")


def _spark_type(kind: type_pb2.Type) -> SparkType:
    name = kind.WhichOneof("kind")
    if name == "decimal":
        spark = SparkType(f"decimal({kind.decimal.precision},{kind.decimal.scale})")
        literals.check_decimal(spark)
        return spark
    if name in _TYPES:
        return SparkType(_TYPES[name])
    if name is None:
        for number, spark_name in _DEPRECATED_TYPES.items():
            if deprecated_field(kind, number) is not None:
                return SparkType(spark_name)
    raise Unsupported("a Substrait type Sluice does not push")


def _top_level_names(schema: type_pb2.NamedStruct) -> list[str]:
    """The top-level column names of a NamedStruct (its names list is depth-first over nested fields)."""
    names = list(schema.names)
    top, position = [], 0
    for kind in schema.struct.types:
        if position >= len(names):
            raise RequestError("the base schema has fewer names than fields")
        top.append(names[position])
        position += 1 + _nested_names(kind)
    return top


def _nested_names(kind: type_pb2.Type) -> int:
    """How many names the depth-first list holds inside one field of this type."""
    name = kind.WhichOneof("kind")
    if name == "struct":
        return sum(1 + _nested_names(child) for child in kind.struct.types)
    if name == "list":
        return _nested_names(kind.list.type) if kind.list.HasField("type") else 0
    if name == "map":
        entry = kind.map
        key = _nested_names(entry.key) if entry.HasField("key") else 0
        return key + (_nested_names(entry.value) if entry.HasField("value") else 0)
    return 0
