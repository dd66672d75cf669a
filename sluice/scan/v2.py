"""Spark's V2 expressions, as the catalog layer sends them (JSON), as Spark SQL trees.

What Spark offers a scan has been analysed and optimised by Spark: implicit casts are
explicit (``CAST(int_col AS DECIMAL(11,1)) = 1.5``), constants are folded and typed. So
nothing is inferred here: a literal becomes a constant of exactly Spark's type (carried on
the node, see :data:`sluice.pushdown.constants.TYPED`), a cast a cast, an operator its
tree. The one classifier (:mod:`sluice.pushdown.translator`) then decides what a source
evaluates. An operator it has no tree for is :class:`Unsupported`: left to Spark, with why.
"""

from __future__ import annotations

import base64
import datetime as dt
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlglot import exp

from sluice.pushdown import nesting
from sluice.pushdown.constants import TYPED, Constant, float32
from sluice.pushdown.terms import Unsupported, paren
from sluice.types import Kind, SparkType

Node = dict[str, Any]

_COMPARISONS: dict[str, type[exp.Expression]] = {
    "=": exp.EQ,
    "<>": exp.NEQ,
    "<=>": exp.NullSafeEQ,
    "<": exp.LT,
    "<=": exp.LTE,
    ">": exp.GT,
    ">=": exp.GTE,
}
_BINARY: dict[str, type[exp.Expression]] = {
    "+": exp.Add,
    "*": exp.Mul,
    "/": exp.Div,
    "%": exp.Mod,
    "&": exp.BitwiseAnd,
    "|": exp.BitwiseOr,
    "^": exp.BitwiseXor,
}
_STRING_MATCH: dict[str, type[exp.Expression]] = {
    "STARTS_WITH": exp.StartsWith,
    "ENDS_WITH": exp.EndsWith,
    "CONTAINS": exp.Contains,
}
#: Spark's catalogString -> the type's name in Spark SQL (what Sluice's types call it)
_TYPE_NAMES = {"byte": "tinyint", "short": "smallint", "integer": "int", "long": "bigint"}
_DECIMAL = re.compile(r"decimal\((\d+),(\d+)\)")
_EPOCH_DAY = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1)


def spark_type(catalog_string: str) -> SparkType:
    """Sluice's type for Spark's ``catalogString`` of a type, or :class:`Unsupported`."""
    if not isinstance(catalog_string, str):  # only a malformed request: the JVM writes every type as its catalogString
        raise Unsupported(f"a type must be Spark's type name, not {type(catalog_string).__name__}")
    name = _TYPE_NAMES.get(catalog_string, catalog_string)
    if re.fullmatch(r"(var)?char\(\d+\)", name):
        name = "string"  # Spark compares char/varchar values as strings once read
    try:
        kind = SparkType(name)
    except ValueError:
        raise Unsupported(f"values of Spark type {catalog_string} are compared by Spark") from None
    if kind.kind is Kind.DECIMAL:
        precision, scale = kind.precision_scale
        if not 1 <= precision <= 38 or scale > precision:
            raise Unsupported(
                f"{catalog_string} is not a Spark decimal type (precision 1 to 38, scale at most the precision)"
            )
    return kind


def literal(text: str | None, catalog_string: str) -> exp.Expression:
    """A constant of exactly Spark's type, from Spark's internal value as text."""
    if catalog_string == "void":
        return exp.Null()
    kind = spark_type(catalog_string)
    constant = Constant(None if text is None else _value(text, kind), kind)
    node = _shown(constant)
    node.meta[TYPED] = constant
    return node


def _value(text: str, kind: SparkType) -> object:
    name = kind.name
    try:
        if name in ("tinyint", "smallint", "int", "bigint"):
            return int(text)
        if name == "double":
            return float(text)
        if name == "float":
            return float32(float(text))
        if name.startswith("decimal"):
            return _decimal(text, kind)
        if name == "boolean":
            return text == "true"
        if name == "string":
            return text
        if name == "binary":
            return base64.b64decode(text)
        if name == "date":
            return _EPOCH_DAY + dt.timedelta(days=int(text))
        if name == "timestamp":
            return (_EPOCH + dt.timedelta(microseconds=int(text))).replace(tzinfo=dt.timezone.utc)
        if name == "timestamp_ntz":
            return _EPOCH + dt.timedelta(microseconds=int(text))
    except (ValueError, OverflowError, InvalidOperation):
        raise Unsupported(f"{name} constant {text!r} is outside what Sluice represents (Python's date range)") from None
    raise Unsupported(f"constants of type {name} are compared by Spark")


def _decimal(text: str, kind: SparkType) -> Decimal:
    """A decimal constant that fits its type exactly, as every value of a Spark decimal does."""
    value = Decimal(text)
    precision, scale = kind.precision_scale
    too_long = value != 0 and value.adjusted() >= precision - scale  # digits before the point; no arithmetic on value
    if not value.is_finite() or too_long or -int(value.as_tuple().exponent) > scale:
        raise Unsupported(f"decimal constant {text!r} does not fit {kind}")
    return value


def _shown(constant: Constant) -> exp.Expression:
    """How the constant reads in EXPLAIN (its value is taken from the node's meta, not this)."""
    value, kind = constant.value, constant.type
    if value is None:
        return exp.Cast(this=exp.Null(), to=exp.DataType.build(kind.name, dialect="spark"))
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, int) and kind.name in ("int", "bigint"):
        return exp.Literal.number(value)
    if isinstance(value, dt.datetime):
        text = value.isoformat(sep=" ").replace("+00:00", "Z")
    elif isinstance(value, bytes):
        text = value.hex()
    else:
        text = str(value)
    return exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build(kind.name, dialect="spark"))


def to_tree(node: Node) -> exp.Expression:
    """The Spark SQL tree of one V2 expression, or raise :class:`Unsupported`."""
    _check_shape(node)
    if "ref" in node:
        parts = node["ref"]
        if len(parts) != 1:
            raise Unsupported(f"nested field {'.'.join(parts)} is filtered by Spark")
        return exp.column(parts[0], quoted=True)
    if "lit" in node:
        return literal(node["lit"], node["type"])
    op = node["op"]
    args = node.get("args", [])
    build = _OPERATORS.get(op)
    if build is None:
        shown = node.get("name") or node.get("text") or op
        raise Unsupported(f"{shown} is evaluated by Spark (Sluice pushes no translation of it)")
    children = [to_tree(arg) for arg in args]
    if not _ARITY.get(op, (1, 1 << 30))[0] <= len(children) <= _ARITY.get(op, (1, 1 << 30))[1]:
        raise Unsupported(f"{op} with {len(children)} operand(s) is not a shape Spark sends: left to Spark")
    return build(node, children)


def _check_shape(node: object) -> None:
    """Only the shapes ``io.sluice.spark.Expressions`` writes are read; anything else is
    refused here with a reason, not met later as a KeyError or TypeError."""
    if not isinstance(node, dict):
        raise Unsupported(f"malformed V2 expression: {type(node).__name__} where an object belongs")
    if "ref" in node:
        ok = isinstance(node["ref"], list) and node["ref"] and all(isinstance(p, str) for p in node["ref"])
    elif "lit" in node:
        ok = (node["lit"] is None or isinstance(node["lit"], str)) and isinstance(node.get("type"), str)
    else:
        ok = isinstance(node.get("op"), str) and isinstance(node.get("args", []), list)
    if not ok:
        raise Unsupported("malformed V2 expression (not a shape the catalog layer sends)")


def _comparison(kind: type[exp.Expression]) -> Callable[[Node, list[exp.Expression]], exp.Expression]:
    return lambda node, args: kind(this=args[0], expression=args[1])


def _minus(node: Node, args: list[exp.Expression]) -> exp.Expression:
    return exp.Sub(this=args[0], expression=args[1]) if len(args) == 2 else exp.Neg(this=args[0])


def _cast(node: Node, args: list[exp.Expression]) -> exp.Expression:
    target = spark_type(node["to"])
    return exp.Cast(this=args[0], to=exp.DataType.build(target.name, dialect="spark"))


def _in(node: Node, args: list[exp.Expression]) -> exp.Expression:
    return exp.In(this=args[0], expressions=args[1:])


def _substring(node: Node, args: list[exp.Expression]) -> exp.Expression:
    parts = {"this": args[0], "start": args[1]}
    if len(args) > 2:
        parts["length"] = args[2]
    return exp.Substring(**parts)


#: operands each operator takes (min, max); absent: at least one
_ARITY: dict[str, tuple[int, int]] = {
    **{op: (2, 2) for op in (*_COMPARISONS, *_BINARY, *_STRING_MATCH)},
    "-": (1, 2),
    "NOT": (1, 1),
    "IS_NULL": (1, 1),
    "IS_NOT_NULL": (1, 1),
    "CAST": (1, 1),
    "ABS": (1, 1),
    "UPPER": (1, 1),
    "LOWER": (1, 1),
    "CHAR_LENGTH": (1, 1),
    "SUBSTRING": (2, 3),
    "IN": (1, 1 << 30),
}

_OPERATORS: dict[str, Callable[[Node, list[exp.Expression]], exp.Expression]] = {
    **{op: _comparison(kind) for op, kind in _COMPARISONS.items()},
    **{op: _comparison(kind) for op, kind in _BINARY.items()},
    **{op: _comparison(kind) for op, kind in _STRING_MATCH.items()},
    "-": _minus,
    # chains arrive flat (io.sluice.spark.Expressions): rebuilt balanced, operands in order
    "AND": lambda node, args: nesting.chain(exp.And, args, paren),
    "OR": lambda node, args: nesting.chain(exp.Or, args, paren),
    "NOT": lambda node, args: exp.Not(this=args[0]),
    "IS_NULL": lambda node, args: exp.Is(this=args[0], expression=exp.Null()),
    "IS_NOT_NULL": lambda node, args: exp.Not(this=exp.Is(this=args[0], expression=exp.Null())),
    "IN": _in,
    "CAST": _cast,
    "ABS": lambda node, args: exp.Abs(this=args[0]),
    "COALESCE": lambda node, args: exp.Coalesce(this=args[0], expressions=args[1:]),
    "UPPER": lambda node, args: exp.Upper(this=args[0]),
    "LOWER": lambda node, args: exp.Lower(this=args[0]),
    "CHAR_LENGTH": lambda node, args: exp.Length(this=args[0]),
    "SUBSTRING": _substring,
}


def shown(offered: object) -> str:
    """A conjunct that has no Spark SQL tree here, shown as Spark's operator tree (whatever its shape)."""
    if not isinstance(offered, dict):
        return repr(offered)[:100]
    if "ref" in offered:
        parts = offered["ref"]
        return ".".join(map(str, parts)) if isinstance(parts, list) else repr(parts)[:100]
    if "lit" in offered:
        return repr(offered["lit"])[:100]
    args = offered.get("args", [])
    inner = ", ".join(shown(arg) for arg in args) if isinstance(args, list) else repr(args)[:100]
    return f"{offered.get('name') or offered.get('op')}({inner})"
