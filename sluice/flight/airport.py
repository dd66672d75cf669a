"""The DuckDB Airport extension's JSON filters as Spark SQL predicates.

Airport serialises DuckDB's bound filter expressions: ``{"filters": [...],
"column_binding_names_by_index": [...]}``, each filter one conjunct, columns as
``binding.column_index`` into the name list, constants with DuckDB logical types
(DATE as days, TIMESTAMP as microseconds, DECIMAL as its unscaled integer, HUGEINT as
``{"upper", "lower"}``). ``query_location`` is ignored (JavaScript serialisers round the
"none" value 2**64-1 to 18446744073709552000).

The server classifies each filter under Spark's semantics, which is the pushdown
contract; DuckDB agrees with Spark where it matters here (NaN = NaN, binary string order,
three-valued logic). An expression class, function or type not mapped below makes its
filter UNSUPPORTED with the reason, never an error and never a dropped row. A document
that is not Airport's shape (a column index out of range, a constant that is not of its
type, a name the table does not have) is a :class:`RequestError`.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from decimal import Decimal
from typing import Any

from sqlglot import exp

from sluice.flight import literals
from sluice.flight.filter_json import column_name
from sluice.flight.protocol import MAX_CONJUNCTS, MAX_DEPTH, Conjunct, RequestError
from sluice.pushdown import nesting
from sluice.pushdown.constants import Constant
from sluice.pushdown.terms import Unsupported, paren
from sluice.types import SparkType, TableSchema

_EPOCH = dt.datetime(1970, 1, 1)
_COMPARISONS: dict[str, type[exp.Expression]] = {
    "COMPARE_EQUAL": exp.EQ,
    "COMPARE_NOTEQUAL": exp.NEQ,
    "COMPARE_LESSTHAN": exp.LT,
    "COMPARE_GREATERTHAN": exp.GT,
    "COMPARE_LESSTHANOREQUALTO": exp.LTE,
    "COMPARE_GREATERTHANOREQUALTO": exp.GTE,
    "COMPARE_NOT_DISTINCT_FROM": exp.NullSafeEQ,
    "COMPARE_DISTINCT_FROM": exp.NullSafeNEQ,
}
#: DuckDB function -> Spark node, for functions whose meaning is Spark's on the values they see
_FUNCTIONS: dict[str, type[exp.Expression]] = {
    "prefix": exp.StartsWith,
    "starts_with": exp.StartsWith,
    "suffix": exp.EndsWith,
    "ends_with": exp.EndsWith,
    "contains": exp.Contains,
    "~~": exp.Like,
    "like_escape": exp.Like,
    "~~*": exp.ILike,
    "ilike_escape": exp.ILike,
    "length": exp.Length,
    "abs": exp.Abs,
    "+": exp.Add,
    "-": exp.Sub,
    "*": exp.Mul,
    "%": exp.Mod,
}
_NEGATED_FUNCTIONS = {"!~~": "~~", "!~~*": "~~*", "not_like_escape": "like_escape", "not_ilike_escape": "ilike_escape"}
FUNCTION_NAMES = frozenset([*_FUNCTIONS, *_NEGATED_FUNCTIONS, "list_value"])
#: DuckDB type -> Spark type for constants (unsigned types widened to the signed type that holds them)
_TYPES = {
    "BOOLEAN": "boolean",
    "TINYINT": "tinyint",
    "SMALLINT": "smallint",
    "INTEGER": "int",
    "BIGINT": "bigint",
    "UTINYINT": "smallint",
    "USMALLINT": "int",
    "UINTEGER": "bigint",
    "UBIGINT": "decimal(20,0)",
    "HUGEINT": "decimal(38,0)",
    "UHUGEINT": "decimal(38,0)",
    "FLOAT": "float",
    "DOUBLE": "double",
    "VARCHAR": "string",
    "DATE": "date",
    "TIMESTAMP": "timestamp_ntz",
    "TIMESTAMP_S": "timestamp_ntz",
    "TIMESTAMP_MS": "timestamp_ntz",
    "TIMESTAMP_NS": "timestamp_ntz",
    "TIMESTAMP WITH TIME ZONE": "timestamp",
    "TIMESTAMP_TZ": "timestamp",
}
_TIMESTAMP_UNITS = {
    "TIMESTAMP_S": 1_000_000,
    "TIMESTAMP_MS": 1_000,
    "TIMESTAMP": 1,
    "TIMESTAMP_TZ": 1,
    "TIMESTAMP WITH TIME ZONE": 1,
}


def decode_filter(document: dict[str, Any], table: TableSchema) -> list[Conjunct]:
    """An Airport filter document (already parsed) as one conjunct per filter."""
    filters = document.get("filters")
    names = document.get("column_binding_names_by_index")
    if not isinstance(filters, list) or not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise RequestError('an airport filter is {"filters": [...], "column_binding_names_by_index": [names]}')
    if len(filters) > MAX_CONJUNCTS:
        raise RequestError(f"the filter has {len(filters)} conjuncts; the server accepts at most {MAX_CONJUNCTS}")
    reader = _Reader(table, names)
    conjuncts = []
    for index, item in enumerate(filters):
        try:
            conjuncts.append(Conjunct(reader.expression(item, 0)))
        except Unsupported as reason:
            conjuncts.append(Conjunct(None, label=f"airport filter {index} ({_class_of(item)})", reason=str(reason)))
        except RequestError as error:
            raise RequestError(f"airport filter {index}: {error}") from None
    return conjuncts


def _name(node: dict, key: str) -> str | None:
    """A node's ``type`` or ``name``: text (or absent), never another JSON value."""
    value = node.get(key)
    if value is not None and not isinstance(value, str):
        raise RequestError(f"{node['expression_class']}'s {key!r} must be a string, not {type(value).__name__}")
    return value


def _class_of(node: Any) -> str:
    return str(node.get("expression_class", "?")) if isinstance(node, dict) else "?"


class _Reader:
    """Reads one document's expressions against ``table`` and its column bindings."""

    def __init__(self, table: TableSchema, names: list[str]) -> None:
        self.table = table
        self.names = names

    def expression(self, node: Any, depth: int) -> exp.Expression:
        if depth > MAX_DEPTH:
            raise RequestError(f"the expression is nested deeper than {MAX_DEPTH} levels")
        if not isinstance(node, dict) or not isinstance(node.get("expression_class"), str):
            raise RequestError('every expression is an object with an "expression_class"')
        kind = node["expression_class"]
        reader = getattr(self, "_" + kind.lower(), None)
        if reader is None:
            raise Unsupported(f"Airport expression class {kind} is not mapped to Spark SQL")
        return reader(node, depth + 1)

    def _children(self, node: dict, depth: int, key: str = "children") -> list[exp.Expression]:
        children = node.get(key)
        if not isinstance(children, list) or not children:
            raise RequestError(f"{node['expression_class']} {node.get('type', '')} needs a non-empty {key!r} list")
        return [self.expression(child, depth) for child in children]

    def _operand(self, node: dict, key: str, depth: int) -> exp.Expression:
        if key not in node:
            raise RequestError(f"{node['expression_class']} needs {key!r}")
        return self.expression(node[key], depth)

    # ------------------------------------------------------------ expression classes
    def _bound_column_ref(self, node: dict, depth: int) -> exp.Expression:
        binding = node.get("binding")
        index = binding.get("column_index") if isinstance(binding, dict) else None
        if type(index) is not int or not 0 <= index < len(self.names):
            raise RequestError(
                f"column binding {index!r} is not an index into column_binding_names_by_index ({len(self.names)} names)"
            )
        return exp.column(column_name(self.table, self.names[index]), quoted=True)

    def _bound_constant(self, node: dict, depth: int) -> exp.Expression:
        return literals.constant_node(constant(node.get("value")))

    def _bound_comparison(self, node: dict, depth: int) -> exp.Expression:
        kind = _name(node, "type")
        left, right = self._operand(node, "left", depth), self._operand(node, "right", depth)
        if kind == "COMPARE_IN" and isinstance(right, exp.Array):  # x IN list_value(...)
            return exp.In(this=paren(left), expressions=right.expressions)
        if kind not in _COMPARISONS:
            raise Unsupported(f"Airport comparison {kind} is not mapped to Spark SQL")
        return _COMPARISONS[kind](this=paren(left), expression=paren(right))

    def _bound_conjunction(self, node: dict, depth: int) -> exp.Expression:
        connectors: dict[str | None, type[exp.And] | type[exp.Or]] = {
            "CONJUNCTION_AND": exp.And,
            "CONJUNCTION_OR": exp.Or,
        }
        connector = connectors.get(_name(node, "type"))
        if connector is None:
            raise RequestError(
                f"BOUND_CONJUNCTION type {node.get('type')!r} is neither CONJUNCTION_AND nor CONJUNCTION_OR"
            )
        return nesting.chain(connector, self._children(node, depth), paren)

    def _bound_operator(self, node: dict, depth: int) -> exp.Expression:
        kind = _name(node, "type")
        children = self._children(node, depth)
        if kind in ("OPERATOR_IS_NULL", "OPERATOR_IS_NOT_NULL", "OPERATOR_NOT") and len(children) != 1:
            raise RequestError(f"{kind} takes one child, not {len(children)}")
        if kind == "OPERATOR_IS_NULL":
            return exp.Is(this=paren(children[0]), expression=exp.Null())
        if kind == "OPERATOR_IS_NOT_NULL":
            return exp.Not(this=exp.Is(this=paren(children[0]), expression=exp.Null()))
        if kind == "OPERATOR_NOT":
            return exp.Not(this=paren(children[0]))
        if kind in ("COMPARE_IN", "COMPARE_NOT_IN"):
            if len(children) < 2:
                raise RequestError(f"{kind} needs the value and at least one item")
            found = exp.In(this=paren(children[0]), expressions=children[1:])
            return found if kind == "COMPARE_IN" else exp.Not(this=exp.Paren(this=found))
        if kind == "OPERATOR_COALESCE":
            return exp.Coalesce(this=children[0], expressions=children[1:])
        raise Unsupported(f"Airport operator {kind} is not mapped to Spark SQL")

    def _bound_between(self, node: dict, depth: int) -> exp.Expression:
        value = paren(self._operand(node, "input", depth))
        lower = (exp.GTE if node.get("lower_inclusive", True) else exp.GT)(
            this=value, expression=paren(self._operand(node, "lower", depth))
        )
        upper = (exp.LTE if node.get("upper_inclusive", True) else exp.LT)(
            this=value.copy(), expression=paren(self._operand(node, "upper", depth))
        )
        return exp.And(this=lower, expression=upper)

    def _bound_cast(self, node: dict, depth: int) -> exp.Expression:
        child = node.get("child")
        if isinstance(child, dict) and child.get("expression_class") == "BOUND_CONSTANT":
            target = _spark_type(node.get("return_type"))
            value = constant(child.get("value"))
            if value.value is None:
                return literals.constant_node(Constant(None, target))
            if value.type == target:
                return literals.constant_node(value)
        raise Unsupported("DuckDB casts are not mirrored in Spark SQL")

    def _bound_function(self, node: dict, depth: int) -> exp.Expression:
        name = _name(node, "name")
        if name in _NEGATED_FUNCTIONS:
            return exp.Not(this=exp.Paren(this=self._function(_NEGATED_FUNCTIONS[name], node, depth)))
        return self._function(name, node, depth)

    def _function(self, name: Any, node: dict, depth: int) -> exp.Expression:
        if name == "list_value":  # the item list of COMPARE_IN
            return exp.Array(expressions=self._children(node, depth))
        if name not in _FUNCTIONS:
            raise Unsupported(f"DuckDB function {name!r} is not mapped to Spark SQL")
        args = self._children(node, depth)
        built = _FUNCTIONS[name]
        if built in (exp.Length, exp.Abs):
            if len(args) != 1:
                raise RequestError(f"DuckDB function {name} takes one argument, not {len(args)}")
            return built(this=args[0])
        if name in ("like_escape", "ilike_escape"):
            if len(args) != 3:
                raise RequestError(f"DuckDB function {name} takes three arguments, not {len(args)}")
            return exp.Escape(this=built(this=paren(args[0]), expression=args[1]), expression=args[2])
        if len(args) != 2:
            raise RequestError(f"DuckDB function {name} takes two arguments, not {len(args)}")
        if name in ("~~", "~~*"):
            return built(this=paren(args[0]), expression=_spark_pattern(args[1]))
        return built(this=paren(args[0]), expression=paren(args[1]))


def _spark_pattern(pattern: exp.Expression) -> exp.Expression:
    """DuckDB's LIKE has no escape character unless one is given; Spark's is the backslash."""
    if not (isinstance(pattern, exp.Literal) and pattern.is_string):
        raise Unsupported("LIKE with a pattern that is not a string constant")
    return exp.Literal.string(pattern.this.replace("\\", "\\\\"))


# ---------------------------------------------------------------- constants
def constant(value: Any) -> Constant:
    """A DuckDB serialised Value (``{"type": ..., "is_null": ..., "value": ...}``) as a typed constant."""
    if not isinstance(value, dict) or not isinstance(value.get("type"), dict):
        raise RequestError('a constant\'s value is {"type": {"id": ...}, "is_null": ..., "value": ...}')
    logical = value["type"]
    spark = _spark_type(logical)
    if value.get("is_null"):
        return Constant(None, spark)
    raw = value.get("value")
    type_id = logical.get("id")
    mismatch = RequestError(f"constant {str(raw)[:60]!r} is not a valid DuckDB {type_id}")
    kind = spark.kind.value
    if type_id in ("HUGEINT", "UHUGEINT") or type_id == "DECIMAL":
        return Constant(_decimal(raw, logical, mismatch), spark)
    if type_id == "DATE":
        if type(raw) is not int:
            raise mismatch
        return _checked(lambda: dt.date(1970, 1, 1) + dt.timedelta(days=raw), spark, mismatch)
    if type_id in _TIMESTAMP_UNITS or type_id == "TIMESTAMP_NS":
        if type(raw) is not int:
            raise mismatch
        micros = raw // 1000 if type_id == "TIMESTAMP_NS" else raw * _TIMESTAMP_UNITS[type_id]
        if type_id == "TIMESTAMP_NS" and raw % 1000:
            raise Unsupported("a nanosecond timestamp constant has no exact Spark value (microseconds)")
        wall = _checked(lambda: _EPOCH + dt.timedelta(microseconds=micros), spark, mismatch).value
        return Constant(wall.replace(tzinfo=dt.timezone.utc) if kind == "timestamp" else wall, spark)
    if type_id == "VARCHAR" and isinstance(raw, dict):
        if set(raw) != {"base64"}:
            raise mismatch
        try:
            raw = base64.b64decode(raw["base64"], validate=True).decode("utf-8")
        except (binascii.Error, ValueError, TypeError):
            raise Unsupported("a VARCHAR constant that is not UTF-8 has no Spark string value") from None
    if type_id in ("FLOAT", "DOUBLE") and isinstance(raw, str):
        raw = {
            "nan": "NaN",
            "inf": "Infinity",
            "infinity": "Infinity",
            "-inf": "-Infinity",
            "-infinity": "-Infinity",
        }.get(raw.lower(), raw)
    return literals.from_json(raw, spark.name)


def _checked(build: Any, spark: SparkType, mismatch: RequestError) -> Constant:
    try:
        return Constant(build(), spark)
    except (OverflowError, ValueError):
        raise mismatch from None


def _decimal(raw: Any, logical: dict, mismatch: RequestError) -> Decimal:
    """DuckDB writes a DECIMAL (and HUGEINT) as its unscaled integer; HUGEINT as {upper, lower}."""
    if isinstance(raw, dict) and set(raw) == {"upper", "lower"} and all(type(v) is int for v in raw.values()):
        unscaled = (raw["upper"] << 64) + raw["lower"]
    elif type(raw) is int:
        unscaled = raw
    elif isinstance(raw, str):
        try:
            return Decimal(raw)
        except ArithmeticError:
            raise mismatch from None
    else:
        raise mismatch
    scale = _type_info(logical).get("scale", 0) if logical.get("id") == "DECIMAL" else 0
    return Decimal(unscaled).scaleb(-scale)


def _type_info(logical: dict) -> dict:
    info = logical.get("type_info") or {}
    if not isinstance(info, dict):
        raise RequestError(f"a DuckDB type's type_info is an object or null, not {type(info).__name__}")
    return info


def _spark_type(logical: Any) -> SparkType:
    if not isinstance(logical, dict) or not isinstance(logical.get("id"), str):
        raise RequestError('a DuckDB type is {"id": ..., "type_info": ...}')
    type_id = logical["id"]
    if type_id == "DECIMAL":
        info = _type_info(logical)
        width, scale = info.get("width"), info.get("scale")
        if type(width) is not int or type(scale) is not int or not 0 <= scale <= width <= 38:
            raise RequestError(f"DECIMAL type_info {info!r} needs width and scale (0 <= scale <= width <= 38)")
        return SparkType(f"decimal({width},{scale})")
    if type_id == "SQLNULL":
        return SparkType("null")
    if type_id not in _TYPES:
        raise Unsupported(f"DuckDB type {type_id} has no Spark counterpart Sluice pushes")
    return SparkType(_TYPES[type_id])
