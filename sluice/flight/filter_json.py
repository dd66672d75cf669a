"""Sluice's JSON filter format, version 1 (docs/flight.md, docs/flight-filter.schema.json).

A filter is a list of conjuncts; the server answers a level for each. An expression is
``{"column": name}``, ``{"literal": value, "type": spark type}`` or ``{"op": name, "args":
[...]}`` (``like`` also takes ``"escape"``). The vocabulary is every node the pushdown core
classifies, and constants carry their Spark type, so encoding a Spark predicate and
decoding it on the server gives the core the same question: the format is lossless for
what the core can answer. What it cannot spell is never sent (the client keeps it).
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
from sluice.types import TableSchema

VERSION = 1

_BINARY: dict[str, type[exp.Expression]] = {
    "=": exp.EQ, "<>": exp.NEQ, "<": exp.LT, "<=": exp.LTE, ">": exp.GT, ">=": exp.GTE,
    "<=>": exp.NullSafeEQ, "is_distinct_from": exp.NullSafeNEQ,
    "+": exp.Add, "-": exp.Sub, "*": exp.Mul, "/": exp.Div, "%": exp.Mod,
    "&": exp.BitwiseAnd, "|": exp.BitwiseOr, "^": exp.BitwiseXor,
    "starts_with": exp.StartsWith, "ends_with": exp.EndsWith, "contains": exp.Contains, "ilike": exp.ILike,
}
_UNARY: dict[str, type[exp.Expression]] = {"length": exp.Length, "abs": exp.Abs, "upper": exp.Upper, "lower": exp.Lower}
_CONNECTORS: dict[str, type[exp.And] | type[exp.Or]] = {"and": exp.And, "or": exp.Or}
OPS = tuple(sorted([*_BINARY, *_UNARY, *_CONNECTORS, "not", "is_null", "in", "like", "substring", "coalesce", "opaque"]))
#: the function name an ``opaque`` part decodes to: no dialect translates it, so it is never pushed
OPAQUE_FUNCTION = "SLUICE_OPAQUE"
_NAMES = {cls: name for name, cls in {**_BINARY, **_UNARY, **_CONNECTORS}.items()}


# ---------------------------------------------------------------- encoding (client)
def encode(node: exp.Expression, session_zone: str) -> dict[str, Any]:
    """The JSON of a Spark SQL predicate, or :class:`Unsupported` if the format cannot spell it."""
    node = unfold_between(unfold_negate(node))
    if isinstance(node, exp.Paren):
        return encode(node.this, session_zone)
    constant = constants.evaluate(node, session_zone)
    if constant is not None:
        return literals.to_json(constant)
    if isinstance(node, exp.Column):
        return {"column": node.name}
    name = _NAMES.get(type(node))
    if name in _UNARY:
        return _op(name, [node.this], session_zone)
    if name is not None:
        return _op(name, [node.this, node.expression], session_zone)
    if isinstance(node, exp.Not):
        return _op("not", [node.this], session_zone)
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        return _op("is_null", [node.this], session_zone)
    if isinstance(node, exp.In) and not (node.args.get("query") or node.args.get("unnest") or node.args.get("field")):
        return _op("in", [node.this, *node.expressions], session_zone)
    if isinstance(node, exp.Escape) and isinstance(node.this, exp.Like):
        return {**_op("like", [node.this.this, node.this.expression], session_zone), "escape": encode(node.expression, session_zone)}
    if isinstance(node, exp.Like):
        return _op("like", [node.this, node.expression], session_zone)
    if isinstance(node, exp.Substring):
        bounds = [node.args[key] for key in ("start", "length") if node.args.get(key) is not None]
        return _op("substring", [node.this, *bounds], session_zone)
    if isinstance(node, exp.Coalesce):
        return _op("coalesce", [node.this, *node.expressions], session_zone)
    raise Unsupported(f"the Sluice Flight filter format has no spelling of {node.sql('spark')}; Spark evaluates it")


def encode_conjunct(node: exp.Expression, session_zone: str) -> dict[str, Any]:
    """A conjunct's JSON; a part the format cannot spell is sent ``opaque`` when the conjunct
    has spellable parts the core may still push (``AND`` keeps what it can, as INEXACT), and
    :class:`Unsupported` is raised when nothing of it could be pushed."""
    tree = _encode_or_opaque(node, session_zone)
    if tree.get("op") == "opaque":
        raise Unsupported(tree["reason"])
    return tree


def _encode_or_opaque(node: exp.Expression, session_zone: str) -> dict[str, Any]:
    node = unfold_between(unfold_negate(node))
    if isinstance(node, exp.Paren):
        return _encode_or_opaque(node.this, session_zone)
    if isinstance(node, (exp.And, exp.Or, exp.Not)):
        parts = [_encode_or_opaque(part, session_zone) for part in ([node.this] if isinstance(node, exp.Not) else [node.this, node.expression])]
        if isinstance(node, exp.And) and any(part.get("op") != "opaque" for part in parts):
            return {"op": "and", "args": parts}
        if all(part.get("op") != "opaque" for part in parts):
            return {"op": _NAMES.get(type(node), "not"), "args": parts}
        return {"op": "opaque", "args": [], "sql": node.sql("spark"),
                "reason": next(part["reason"] for part in parts if part.get("op") == "opaque")}
    try:
        return encode(node, session_zone)
    except Unsupported as reason:
        return {"op": "opaque", "args": [], "sql": node.sql("spark"), "reason": str(reason)}


def _op(name: str, args: list[exp.Expression], session_zone: str) -> dict[str, Any]:
    return {"op": name, "args": [encode(arg, session_zone) for arg in args]}


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
        raise RequestError("the sluice filter needs \"conjuncts\": a list of expressions, each one conjunct")
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
        raise RequestError(f"an expression is {{\"column\": ...}}, {{\"literal\": ..., \"type\": ...}} or {{\"op\": ..., \"args\": [...]}}, not {_shown(node)}")
    name = node["op"]
    if name not in OPS:
        raise RequestError(f"unknown op {_shown(name)} (version {VERSION} knows: {', '.join(OPS)})")
    if name == "opaque":
        _keys(node, {"op", "args", "sql", "reason"})
        return exp.Anonymous(this=OPAQUE_FUNCTION, expressions=[exp.Literal.string(str(node.get("sql", "")))])
    _keys(node, {"op", "args", "escape"} if name == "like" else {"op", "args"})
    args = node.get("args")
    if not isinstance(args, list):
        raise RequestError(f"op {name!r} needs \"args\": a list of expressions")
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


def _coalesce(name: str, args: list[exp.Expression], node: dict, table: TableSchema, depth: int) -> exp.Expression:
    _arity(name, args, 1, None)
    return exp.Coalesce(this=args[0], expressions=args[1:])


_BUILDERS: dict[str, Callable[..., exp.Expression]] = {
    **{name: _binary for name in _BINARY}, **{name: _unary for name in _UNARY}, **{name: _connector for name in _CONNECTORS}, "not": _not, "is_null": _is_null, "in": _in, "like": _like,
    "substring": _substring, "coalesce": _coalesce,
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
