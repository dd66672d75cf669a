"""Sluice's JSON filter format, version 1 (docs/flight.md, docs/flight-filter.schema.json).

A filter is a list of conjuncts; the server answers a level for each. An expression is
``{"column": name}``, ``{"literal": value, "type": spark type}`` or ``{"op": name, "args":
[...]}`` (``like`` also takes ``"escape"``, ``cast`` its target ``"type"``). The vocabulary is
every node the pushdown core classifies, and constants carry their Spark type, so encoding a
Spark predicate and decoding it on the server gives the core the same question: the format
is lossless for what the core can answer. What it cannot spell is never sent (the client
keeps it).

``cast`` carries only the casts the core pushes: the widening casts Spark makes explicit
(integral to a wider integral, integral or decimal to a decimal that holds every value,
a number to double), checked against the argument's type on both sides
(:func:`cast_problem`): a client never sends another, a server refuses it. A server that
does not list ``cast`` in its capabilities' ops is never sent one (docs/flight.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sqlglot import exp

from sluice.flight import literals
from sluice.flight.protocol import MAX_CONJUNCTS, MAX_DEPTH, Conjunct, RequestError
from sluice.pushdown import constants, nesting
from sluice.pushdown.negation import unfold_between, unfold_negate
from sluice.pushdown.terms import Unsupported, paren
from sluice.pushdown.visitor import PredicateVisitor
from sluice.types import Kind, SparkType, TableSchema

VERSION = 1

_BINARY: dict[str, type[exp.Expression]] = {
    "=": exp.EQ,
    "<>": exp.NEQ,
    "<": exp.LT,
    "<=": exp.LTE,
    ">": exp.GT,
    ">=": exp.GTE,
    "<=>": exp.NullSafeEQ,
    "is_distinct_from": exp.NullSafeNEQ,
    "+": exp.Add,
    "-": exp.Sub,
    "*": exp.Mul,
    "/": exp.Div,
    "%": exp.Mod,
    "&": exp.BitwiseAnd,
    "|": exp.BitwiseOr,
    "^": exp.BitwiseXor,
    "starts_with": exp.StartsWith,
    "ends_with": exp.EndsWith,
    "contains": exp.Contains,
    "ilike": exp.ILike,
}
_UNARY: dict[str, type[exp.Expression]] = {"length": exp.Length, "abs": exp.Abs, "upper": exp.Upper, "lower": exp.Lower}
_CONNECTORS: dict[str, type[exp.And] | type[exp.Or]] = {"and": exp.And, "or": exp.Or}
OPS = tuple(
    sorted([*_BINARY, *_UNARY, *_CONNECTORS, "not", "is_null", "in", "like", "substring", "coalesce", "opaque", "cast"])
)
#: an op a client sends only to a server whose capabilities list it (servers before it refuse it)
CAST = "cast"
#: integer arithmetic whose result has its operands' type (Spark casts both operands to one type first)
_INTEGER_ARITHMETIC = ("+", "-", "*", "%", "&", "|", "^")
#: the function name an ``opaque`` part decodes to: no dialect translates it, so it is never pushed
OPAQUE_FUNCTION = "SLUICE_OPAQUE"
_NAMES = {cls: name for name, cls in {**_BINARY, **_UNARY, **_CONNECTORS}.items()}


# ---------------------------------------------------------------- encoding (client)
def encode(node: exp.Expression, session_zone: str, casts: TableSchema | None = None) -> dict[str, Any]:
    """The JSON of a Spark SQL predicate, or :class:`Unsupported` if the format cannot spell it.

    ``casts``: the table whose column types type a cast's argument, for a server that takes
    ``cast``; None (a server that does not) leaves every cast of a value to Spark."""
    node = unfold_between(unfold_negate(node))
    if isinstance(node, exp.Paren):
        return encode(node.this, session_zone, casts)
    constant = constants.evaluate(node, session_zone)
    if constant is not None:
        return literals.to_json(constant)
    if isinstance(node, exp.Column):
        return {"column": node.name}
    name = _NAMES.get(type(node))
    if name in _UNARY:
        return _op(name, [node.this], session_zone, casts)
    if name is not None:
        return _op(name, [node.this, node.expression], session_zone, casts)
    if isinstance(node, exp.Not):
        return _op("not", [node.this], session_zone, casts)
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        return _op("is_null", [node.this], session_zone, casts)
    if isinstance(node, exp.In) and not (node.args.get("query") or node.args.get("unnest") or node.args.get("field")):
        return _op("in", [node.this, *node.expressions], session_zone, casts)
    if isinstance(node, exp.Escape) and isinstance(node.this, exp.Like):
        return {
            **_op("like", [node.this.this, node.this.expression], session_zone, casts),
            "escape": encode(node.expression, session_zone, casts),
        }
    if isinstance(node, exp.Like):
        return _op("like", [node.this, node.expression], session_zone, casts)
    if isinstance(node, exp.Substring):
        bounds = [node.args[key] for key in ("start", "length") if node.args.get(key) is not None]
        return _op("substring", [node.this, *bounds], session_zone, casts)
    if isinstance(node, exp.Coalesce):
        return _op("coalesce", [node.this, *node.expressions], session_zone, casts)
    if isinstance(node, exp.Cast) and not isinstance(node, exp.TryCast):
        return _encode_cast(node, session_zone, casts)
    raise Unsupported(f"the Sluice Flight filter format has no spelling of {node.sql('spark')}; Spark evaluates it")


def encode_conjunct(node: exp.Expression, session_zone: str, casts: TableSchema | None = None) -> dict[str, Any]:
    """A conjunct's JSON; a part the format cannot spell is sent ``opaque`` when the conjunct
    has spellable parts the core may still push (``AND`` keeps what it can, as INEXACT), and
    :class:`Unsupported` is raised when nothing of it could be pushed. ``casts``: see :func:`encode`."""
    tree = _OpaqueEncoder(session_zone, casts).visit(node)
    if tree.get("op") == "opaque":
        raise Unsupported(tree["reason"])
    return tree


class _OpaqueEncoder(PredicateVisitor[dict[str, Any]]):
    """A conjunct's JSON where a part the format cannot spell is ``opaque``: an AND keeps a
    spelled part beside an opaque one; an OR or NOT with an opaque part is opaque whole."""

    def __init__(self, session_zone: str, casts: TableSchema | None) -> None:
        self.zone = session_zone
        self.casts = casts

    def rewrite(self, node: exp.Expression) -> exp.Expression:
        return unfold_between(unfold_negate(node))

    def visit_and(self, node: exp.And) -> dict[str, Any]:
        parts = [self.visit(node.this), self.visit(node.expression)]
        if any(part.get("op") != "opaque" for part in parts):
            return {"op": "and", "args": parts}
        return _opaque(node, parts)

    def visit_or(self, node: exp.Or) -> dict[str, Any]:
        return self._whole(node, [self.visit(node.this), self.visit(node.expression)])

    def visit_not(self, node: exp.Not) -> dict[str, Any]:
        return self._whole(node, [self.visit(node.this)])

    def visit_leaf(self, node: exp.Expression) -> dict[str, Any]:
        try:
            return encode(node, self.zone, self.casts)
        except Unsupported as reason:
            return {"op": "opaque", "args": [], "sql": node.sql("spark"), "reason": str(reason)}

    @staticmethod
    def _whole(node: exp.Or | exp.Not, parts: list[dict[str, Any]]) -> dict[str, Any]:
        if all(part.get("op") != "opaque" for part in parts):
            return {"op": _NAMES.get(type(node), "not"), "args": parts}
        return _opaque(node, parts)


def _opaque(node: exp.Expression, parts: list[dict[str, Any]]) -> dict[str, Any]:
    """A connective sent opaque, with the reason of its first opaque part."""
    return {
        "op": "opaque",
        "args": [],
        "sql": node.sql("spark"),
        "reason": next(part["reason"] for part in parts if part.get("op") == "opaque"),
    }


def _op(name: str, args: list[exp.Expression], session_zone: str, casts: TableSchema | None) -> dict[str, Any]:
    return {"op": name, "args": [encode(arg, session_zone, casts) for arg in args]}


def _encode_cast(node: exp.Cast, session_zone: str, casts: TableSchema | None) -> dict[str, Any]:
    """A cast of a value, when the server takes casts and the cast is one it accepts."""
    shown = node.sql("spark")
    if casts is None:
        raise Unsupported(
            f"{shown}: the Flight server takes no casts (its capabilities list no {CAST!r} op); Spark evaluates it"
        )
    target = constants.spark_type_of(node.to)
    if target is None:
        raise Unsupported(f"{shown}: a cast to {node.to.sql('spark')} is evaluated by Spark")
    argument = encode(node.this, session_zone, casts)
    try:
        problem = cast_problem(argument, target, casts)
    except RequestError as error:  # e.g. a column the table does not have: the server would refuse it too
        problem = str(error)
    if problem is not None:
        raise Unsupported(f"{shown}: {problem}; Spark evaluates it")
    return {"op": CAST, "args": [argument], "type": target.name}


# ---------------------------------------------------------------- casts (both sides)
def cast_problem(argument: Any, target: SparkType, table: TableSchema) -> str | None:
    """Why ``{"op": "cast", "args": [argument], "type": target}`` is not a cast the format
    carries, or None when it is: a widening cast the core pushes (the rules of
    :meth:`sluice.pushdown.translator.Translator.widen`), of an argument whose Spark type the
    JSON tells (a column, a literal, a cast, integer arithmetic over one type, ``abs``, ``length``)."""
    source = type_of(argument, table)
    if source is None:
        return (
            f"the type of the cast's argument {_shown(argument)} is not one the format can tell (a column, a literal, "
            "a cast, integer arithmetic, abs or length)"
        )
    return (
        None
        if widens(source, target)
        else (
            f"CAST({source} AS {target}) is not a widening cast (integral to a wider integral, integral or decimal to a "
            "decimal that holds every value, a number to double): it may fail or change values in Spark"
        )
    )


def widens(source: SparkType, target: SparkType) -> bool:
    """Whether Spark's ``CAST(source AS target)`` never fails and never changes a value, as the
    core pushes it (:meth:`sluice.pushdown.translator.Translator.widen`)."""
    if source == target:
        return True
    if source.kind is Kind.INTEGRAL and target.kind is Kind.INTEGRAL:
        return target.bits >= source.bits
    if source.kind is Kind.INTEGRAL and target.kind is Kind.DECIMAL:
        precision, scale = target.precision_scale
        return precision - scale >= len(str(1 << (source.bits - 1)))
    if source.kind is Kind.DECIMAL and target.kind is Kind.DECIMAL:
        (p1, s1), (p2, s2) = source.precision_scale, target.precision_scale
        return s2 >= s1 and p2 - s2 >= p1 - s1
    return target.name == "double" and source.kind in (Kind.INTEGRAL, Kind.DECIMAL, Kind.FLOAT)


def _named_type(name: object) -> SparkType | None:
    """The Spark type a node's ``type`` names, or None when it names none."""
    if not isinstance(name, str):
        return None
    try:
        return SparkType(name)
    except (TypeError, ValueError):
        return None


def type_of(node: Any, table: TableSchema) -> SparkType | None:
    """The Spark type of a JSON expression, where the format alone tells it (else None): a
    column, a literal, a cast, integer arithmetic over one type, ``abs`` of one, ``length``."""
    if not isinstance(node, dict):
        return None
    if "column" in node:
        return table.column(column_name(table, node["column"])).type if isinstance(node["column"], str) else None
    if "literal" in node:
        return _named_type(node.get("type"))
    raw = node.get("args")
    args: list[Any] = raw if isinstance(raw, list) else []
    name = node.get("op")
    if name == CAST:
        return _named_type(node.get("type"))
    if name == "length" and len(args) == 1:
        return SparkType("int")
    operands = [type_of(arg, table) for arg in args]
    if not operands or any(t is None or t.kind is not Kind.INTEGRAL for t in operands) or len(set(operands)) != 1:
        return None
    if (name in _INTEGER_ARITHMETIC and len(args) == 2) or (name == "abs" and len(args) == 1):
        return operands[0]
    return None


# ---------------------------------------------------------------- decoding (server)
def decode_filter(body: dict[str, Any], table: TableSchema) -> list[Conjunct]:
    """``{"version": 1, "conjuncts": [...]}`` as conjuncts over ``table``."""
    unknown = sorted(set(body) - {"version", "conjuncts"})
    if unknown:
        raise RequestError(f"the sluice filter has unknown key(s) {', '.join(unknown)}; known: conjuncts, version")
    version = body.get("version", VERSION)
    if type(version) is not int or not 1 <= version <= VERSION:
        raise RequestError(f"sluice filter version {version!r} is not one this server reads (1..{VERSION})")
    items = body.get("conjuncts")
    if not isinstance(items, list):
        raise RequestError('the sluice filter needs "conjuncts": a list of expressions, each one conjunct')
    if len(items) > MAX_CONJUNCTS:
        raise RequestError(f"the filter has {len(items)} conjuncts; the server accepts at most {MAX_CONJUNCTS}")
    conjuncts = []
    for index, item in enumerate(items):
        try:
            conjuncts.append(Conjunct(decode(item, table)))
        except Unsupported as reason:  # e.g. a binary constant: valid, but not something the core pushes
            conjuncts.append(Conjunct(None, label=f"conjunct {index}", reason=str(reason)))
        except RequestError as error:
            raise RequestError(f"conjunct {index}: {error}") from None
    return conjuncts


def decode(node: Any, table: TableSchema, depth: int = 0) -> exp.Expression:
    """A JSON expression as a Spark SQL tree; anything malformed is a :class:`RequestError`."""
    if depth > MAX_DEPTH:
        raise RequestError(f"the expression is nested deeper than {MAX_DEPTH} levels")
    if not isinstance(node, dict):
        raise RequestError(f"an expression must be a JSON object, not {_shown(node)}")
    if "column" in node:
        _keys(node, {"column"})
        if not isinstance(node["column"], str):
            raise RequestError(f"a column reference names a column: {_shown(node)}")
        return exp.column(column_name(table, node["column"]), quoted=True)
    if "literal" in node:
        _keys(node, {"literal", "type"})
        return literals.constant_node(literals.from_json(node["literal"], node.get("type")))
    if "op" not in node:
        raise RequestError(
            f'an expression is {{"column": ...}}, {{"literal": ..., "type": ...}} or {{"op": ..., "args": [...]}}, not {_shown(node)}'
        )
    name = node["op"]
    if name not in OPS:
        raise RequestError(f"unknown op {_shown(name)} (version {VERSION} knows: {', '.join(OPS)})")
    if name == "opaque":
        _keys(node, {"op", "args", "sql", "reason"})
        if node.get("args") != [] or not all(isinstance(node.get(key, ""), str) for key in ("sql", "reason")):
            raise RequestError(
                f'an opaque part is {{"op": "opaque", "args": [], "sql": text, "reason": text}}, not {_shown(node)}'
            )
        return exp.Anonymous(this=OPAQUE_FUNCTION, expressions=[exp.Literal.string(str(node.get("sql", "")))])
    _keys(
        node, {"op", "args", "escape"} if name == "like" else {"op", "args", "type"} if name == CAST else {"op", "args"}
    )
    args = node.get("args")
    if not isinstance(args, list):
        raise RequestError(f'op {name!r} needs "args": a list of expressions')
    children = [decode(arg, table, depth + 1) for arg in args]
    return _BUILDERS[name](name, children, node, table, depth)


def _unary(name: str, args: list[exp.Expression], node: dict, table: TableSchema, depth: int) -> exp.Expression:
    _arity(name, args, 1, 1)
    return _UNARY[name](this=args[0])


def _binary(name: str, args: list[exp.Expression], node: dict, table: TableSchema, depth: int) -> exp.Expression:
    _arity(name, args, 2, 2)
    return _BINARY[name](this=paren(args[0]), expression=paren(args[1]))


def _connector(name: str, args: list[exp.Expression], node: dict, table: TableSchema, depth: int) -> exp.Expression:
    _arity(name, args, 2, None)
    return nesting.chain(_CONNECTORS[name], args, paren)


def _not(name: str, args: list[exp.Expression], node: dict, table: TableSchema, depth: int) -> exp.Expression:
    _arity(name, args, 1, 1)
    return exp.Not(this=paren(args[0]))


def _is_null(name: str, args: list[exp.Expression], node: dict, table: TableSchema, depth: int) -> exp.Expression:
    _arity(name, args, 1, 1)
    return exp.Is(this=paren(args[0]), expression=exp.Null())


def _in(name: str, args: list[exp.Expression], node: dict, table: TableSchema, depth: int) -> exp.Expression:
    _arity(name, args, 2, None)
    return exp.In(this=paren(args[0]), expressions=args[1:])


def _like(name: str, args: list[exp.Expression], node: dict, table: TableSchema, depth: int) -> exp.Expression:
    _arity(name, args, 2, 2)
    like = exp.Like(this=paren(args[0]), expression=args[1])
    if node.get("escape") is None:
        return like
    return exp.Escape(this=like, expression=decode(node["escape"], table, depth + 1))


def _substring(name: str, args: list[exp.Expression], node: dict, table: TableSchema, depth: int) -> exp.Expression:
    _arity(name, args, 2, 3)
    parts = {"this": args[0], "start": args[1]}
    if len(args) == 3:
        parts["length"] = args[2]
    return exp.Substring(**parts)


def _cast(name: str, args: list[exp.Expression], node: dict, table: TableSchema, depth: int) -> exp.Expression:
    _arity(name, args, 1, 1)
    type_name = node.get("type")
    try:
        target = SparkType(type_name) if isinstance(type_name, str) else None
    except ValueError:
        target = None
    if target is None or not target.is_numeric:
        raise RequestError(
            f"op 'cast' needs \"type\": the Spark type it casts to, one of tinyint, smallint, int, bigint, "
            f"float, double, decimal(p,s); not {_shown(type_name)}"
        )
    literals.check_decimal(target)
    problem = cast_problem(node["args"][0], target, table)
    if problem is not None:
        raise RequestError(f"cast {_shown(node)}: {problem}")
    return exp.Cast(this=args[0], to=exp.DataType.build(target.name, dialect="spark"))


def _coalesce(name: str, args: list[exp.Expression], node: dict, table: TableSchema, depth: int) -> exp.Expression:
    _arity(name, args, 1, None)
    return exp.Coalesce(this=args[0], expressions=args[1:])


_BUILDERS: dict[str, Callable[..., exp.Expression]] = {
    **{name: _binary for name in _BINARY},
    **{name: _unary for name in _UNARY},
    **{name: _connector for name in _CONNECTORS},
    "not": _not,
    "is_null": _is_null,
    "in": _in,
    "like": _like,
    "substring": _substring,
    "coalesce": _coalesce,
    CAST: _cast,
}


def _arity(name: str, args: list[exp.Expression], low: int, high: int | None) -> None:
    if len(args) < low or (high is not None and len(args) > high):
        wanted = f"{low}" if low == high else f"{low} to {high}" if high is not None else f"at least {low}"
        raise RequestError(f"op {name!r} takes {wanted} argument(s), not {len(args)}")


def _keys(node: dict, allowed: set[str]) -> None:
    unknown = sorted(set(node) - allowed)
    if unknown:
        raise RequestError(f"unknown key(s) {', '.join(unknown)} in {_shown(node)}")


def column_name(table: TableSchema, name: str) -> str:
    """The column's real name in ``table`` (Spark resolves names case-insensitively), or a
    :class:`RequestError` listing the columns."""
    match = next((c.name for c in table.columns if c.name.lower() == name.lower()), None)
    if match is None:
        known = ", ".join(c.name for c in table.columns)
        raise RequestError(f"unknown column {name!r} in table {table.qualified_name} (columns: {known})")
    return match


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."
