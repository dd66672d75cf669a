"""Substrait extended expressions (as ``pyarrow.substrait.serialize_expressions`` writes them)
as Spark SQL predicates: one conjunct per referred expression.

The message is read with :mod:`sluice.flight.protobuf` (no protobuf dependency); field
references resolve through the message's own base schema to column names of the served
table. Functions are mapped by their name in Substrait's standard extensions. The server
decides under Spark's semantics; where a Substrait producer may mean something else, the
expression is left UNSUPPORTED rather than risk dropping a row the producer would keep:
float comparisons (Substrait leaves NaN to the consumer; Arrow follows IEEE 754, Spark
makes NaN equal to itself and largest), case-insensitive string matching, division.
Anything not mapped is UNSUPPORTED with the reason; malformed bytes are a request error.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlglot import exp

from sluice.flight import literals
from sluice.flight.filter_json import column_name
from sluice.flight.protobuf import Message, WireError
from sluice.flight.protocol import MAX_CONJUNCTS, MAX_DEPTH, Conjunct, RequestError
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
#: Substrait Type kinds (field numbers) -> Spark type names
_TYPES = {
    1: "boolean",
    2: "tinyint",
    3: "smallint",
    5: "int",
    7: "bigint",
    10: "float",
    11: "double",
    12: "string",
    22: "string",
    16: "date",
    14: "timestamp_ntz",
    33: "timestamp_ntz",
    29: "timestamp",
    34: "timestamp",
}


def decode_filter(payload: bytes, table: TableSchema) -> list[Conjunct]:
    """A serialised ``ExtendedExpression`` as one conjunct per referred expression."""
    try:
        message = Message(payload)
        reader = _Reader(table, message)
        references = message.messages(3)
    except WireError as error:
        raise RequestError(f"the substrait filter is not a valid ExtendedExpression message: {error}") from None
    if len(references) > MAX_CONJUNCTS:
        raise RequestError(f"the filter has {len(references)} conjuncts; the server accepts at most {MAX_CONJUNCTS}")
    conjuncts = []
    for index, reference in enumerate(references):
        try:
            label = f"substrait expression {index} ({', '.join(reference.texts(3)) or 'unnamed'})"
        except WireError as error:
            raise RequestError(f"substrait expression {index} is malformed: {error}") from None
        try:
            expression = reference.message(1)
            if expression is None:
                raise Unsupported("a measure (aggregate) is not a filter")
            conjuncts.append(Conjunct(reader.expression(expression, 0)))
        except Unsupported as reason:
            conjuncts.append(Conjunct(None, label=label, reason=str(reason)))
        except WireError as error:
            raise RequestError(f"{label} is malformed: {error}") from None
        except RequestError as error:
            raise RequestError(f"{label}: {error}") from None
    return conjuncts


class _Reader:
    """Reads the expressions of one message: its function anchors and base schema."""

    def __init__(self, table: TableSchema, message: Message) -> None:
        self.table = table
        self.functions = {}
        for declaration in message.messages(2):
            function = declaration.message(3)
            if function is not None:
                self.functions[function.integer(2)] = function.text(3).split(":", 1)[0]
        schema = message.message(4)
        self.names = _top_level_names(schema) if schema is not None else []

    def expression(self, node: Message, depth: int) -> exp.Expression:
        if depth > MAX_DEPTH:
            raise RequestError(f"the expression is nested deeper than {MAX_DEPTH} levels")
        if node.has(1):
            return literals.constant_node(_literal(_child(node, 1)))
        if node.has(2):
            return self._field(_child(node, 2))
        if node.has(3):
            return self._function(_child(node, 3), depth + 1)
        if node.has(8):
            found = node.message(8)
            assert found is not None
            value = found.message(1)
            if value is None:
                raise RequestError("a SingularOrList has no value")
            items = [self.expression(option, depth + 1) for option in found.messages(2)]
            if not items:
                raise Unsupported("an empty IN list")
            left = self.expression(value, depth + 1)
            self._refuse_floats(left, *items)
            return exp.In(this=paren(left), expressions=items)
        if node.has(11):
            raise Unsupported("Substrait casts are not mirrored in Spark SQL")
        kinds = {
            4: "enum",
            5: "window function",
            6: "if-then",
            7: "switch",
            9: "multi-or-list",
            12: "subquery",
            13: "nested",
        }
        kind = next((name for number, name in kinds.items() if node.has(number)), "unknown")
        raise Unsupported(f"Substrait {kind} expressions are not mapped to Spark SQL")

    def _field(self, reference: Message) -> exp.Expression:
        direct = reference.message(1)
        field = direct.message(2) if direct is not None else None
        if field is None or not reference.has(4):
            raise Unsupported("only direct references to top-level columns are mapped")
        if field.has(2):
            raise Unsupported("references into nested fields are not mapped")
        index = field.signed(1, 32)
        if not 0 <= index < len(self.names):
            raise RequestError(f"field reference {index} is outside the base schema ({len(self.names)} columns)")
        return exp.column(column_name(self.table, self.names[index]), quoted=True)

    def _function(self, call: Message, depth: int) -> exp.Expression:
        anchor = call.integer(1)
        if anchor not in self.functions:
            raise RequestError(f"function reference {anchor} has no extension declaration")
        name = self.functions[anchor]
        args = []
        for argument in call.messages(4):
            value = argument.message(3)
            if value is None:
                raise Unsupported(f"{name}() with an enum or type argument is not mapped")
            args.append(self.expression(value, depth))
        options = {option.text(1): option.texts(2) for option in call.messages(5)}
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


def _child(message: Message, number: int) -> Message:
    """The embedded message in field ``number``, which the caller found with ``has``."""
    child = message.message(number)
    assert child is not None
    return child


# ---------------------------------------------------------------- literals and types
def _literal(literal: Message) -> Constant:
    if literal.has(29):  # a typed NULL
        return Constant(None, _spark_type(_child(literal, 29)))
    if literal.has(1):
        return Constant(bool(literal.integer(1)), SparkType("boolean"))
    for number, spark, bits in ((2, "tinyint", 32), (3, "smallint", 32), (5, "int", 32), (7, "bigint", 64)):
        if literal.has(number):
            return literals.from_json(literal.signed(number, bits), spark)
    if literal.has(10):
        return literals.from_json(_float_json(literal.single(10)), "float")
    if literal.has(11):
        return literals.from_json(_float_json(literal.double(11)), "double")
    if literal.has(12):
        return Constant(literal.text(12), SparkType("string"))
    if literal.has(22):
        return Constant(_child(literal, 22).text(1), SparkType("string"))
    if literal.has(16):
        return _stamp(lambda: dt.date(1970, 1, 1) + dt.timedelta(days=literal.signed(16, 32)), "date")
    if literal.has(14):
        return _stamp(lambda: _EPOCH + dt.timedelta(microseconds=literal.signed(14, 64)), "timestamp_ntz")
    if literal.has(27):
        return _stamp(
            lambda: (_EPOCH + dt.timedelta(microseconds=literal.signed(27, 64))).replace(tzinfo=dt.timezone.utc),
            "timestamp",
        )
    for number, spark in ((34, "timestamp_ntz"), (35, "timestamp")):
        if literal.has(number):
            return _precision_timestamp(_child(literal, number), spark)
    if literal.has(24):
        return _decimal(_child(literal, 24))
    raise Unsupported("a Substrait literal of a type Sluice does not push")


def _float_json(value: float) -> float | str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def _stamp(build, spark: str) -> Constant:
    try:
        return Constant(build(), SparkType(spark))
    except OverflowError:
        raise RequestError(f"a {spark} literal is out of range") from None


def _precision_timestamp(stamp: Message, spark: str) -> Constant:
    precision, value = stamp.integer(1), stamp.signed(2, 64)
    if precision not in (0, 3, 6, 9):
        raise RequestError(f"timestamp precision {precision} is not 0, 3, 6 or 9")
    if precision == 9 and value % 1000:
        raise Unsupported("a nanosecond timestamp literal has no exact Spark value (microseconds)")
    micros = value * 10 ** (6 - precision) if precision <= 6 else value // 1000
    constant = _stamp(lambda: _EPOCH + dt.timedelta(microseconds=micros), spark)
    if spark == "timestamp":
        return Constant(constant.value.replace(tzinfo=dt.timezone.utc), constant.type)
    return constant


def _decimal(decimal: Message) -> Constant:
    raw = decimal.raw(1)
    if len(raw) != 16:
        raise RequestError(f"a decimal literal holds {len(raw)} bytes, not 16")
    precision, scale = decimal.integer(2), decimal.integer(3)
    if not 0 <= scale <= precision <= 38 or precision == 0:
        raise RequestError(f"decimal({precision},{scale}) is not a valid decimal type")
    unscaled = int.from_bytes(raw, "little", signed=True)
    return literals.from_json(format(Decimal(unscaled).scaleb(-scale), "f"), f"decimal({precision},{scale})")


def _spark_type(kind: Message) -> SparkType:
    if kind.has(24):
        decimal = kind.message(24)
        assert decimal is not None
        spark = SparkType(f"decimal({decimal.integer(2)},{decimal.integer(1)})")
        literals.check_decimal(spark)
        return spark
    for number, name in _TYPES.items():
        if kind.has(number):
            return SparkType(name)
    raise Unsupported("a Substrait type Sluice does not push")


def _top_level_names(schema: Message) -> list[str]:
    """The top-level column names of a NamedStruct (its names list is depth-first over nested fields)."""
    names = schema.texts(1)
    struct = schema.message(2)
    types = struct.messages(1) if struct is not None else []
    top, position = [], 0
    for kind in types:
        if position >= len(names):
            raise RequestError("the base schema has fewer names than fields")
        top.append(names[position])
        position += 1 + _nested_names(kind)
    return top


def _nested_names(kind: Message) -> int:
    """How many names the depth-first list holds inside one field of this type."""
    if kind.has(25):  # struct
        struct = kind.message(25)
        assert struct is not None
        return sum(1 + _nested_names(child) for child in struct.messages(1))
    if kind.has(27):  # list
        array = kind.message(27)
        assert array is not None
        element = array.message(1)
        return _nested_names(element) if element is not None else 0
    if kind.has(28):  # map
        entry = kind.message(28)
        assert entry is not None
        return sum(_nested_names(part) for part in (entry.message(1), entry.message(2)) if part is not None)
    return 0
