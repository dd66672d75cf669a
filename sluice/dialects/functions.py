"""Shared translations of Spark functions, each faithful only under stated conditions.

A handler either returns an exact :class:`Value` or raises :class:`Unsupported` with the
reason. Dialects reuse :data:`COMMON` and override entries where they differ.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlglot import exp

from sluice.pushdown import constants
from sluice.pushdown.levels import Level
from sluice.pushdown.terms import TextRules, Unsupported, Value, paren
from sluice.types import INT, Kind

if TYPE_CHECKING:
    from sluice.pushdown.translator import Translator


def _string_arg(translator: Translator, node: exp.Expression, function: str) -> Value:
    value = translator.value(node)
    if value.type.kind is not Kind.STRING:
        raise Unsupported(f"{function}() over {value.type}: Spark casts it to string first")
    if value.text is not None and not value.text.functions_ok:
        raise Unsupported(f"{function}(): {value.text.why}")
    return value


def length(translator: Translator, node: exp.Expression) -> Value:
    value = _string_arg(translator, node.this, "length")
    return Value(exp.Length(this=value.sql), INT)


def absolute(translator: Translator, node: exp.Expression) -> Value:
    value = translator.value(node.this)
    if not value.type.is_numeric:
        raise Unsupported(f"abs() over {value.type}")
    return Value(exp.Abs(this=value.sql), value.type)


def substring(translator: Translator, node: exp.Expression) -> Value:
    value = _string_arg(translator, node.this, "substr")
    bounds: list[int | None] = []
    for key in ("start", "length"):
        arg = node.args.get(key)
        if arg is None:
            bounds.append(None)
            continue
        constant = constants.evaluate(arg, translator.zone)
        if constant is None or constant.type.kind is not Kind.INTEGRAL or constant.value is None:
            raise Unsupported("substr() with a non-constant position or length")
        bounds.append(int(typing.cast(int, constant.value)))  # an INTEGRAL constant holds an int
    start, size = bounds
    if start is None or start < 1 or (size is not None and size < 0):
        raise Unsupported("substr() with a position below 1 or a negative length: Spark counts these differently")
    args = {"this": paren(value.sql), "start": exp.Literal.number(start)}
    if size is not None:
        args["length"] = exp.Literal.number(size)
    return Value(exp.Substring(**args), value.type, translator.dialect.derived_text(value.text))


#: arguments of a pushed variadic function: SQLite refuses more than 127 (SQLITE_MAX_FUNCTION_ARG)
MAX_ARGUMENTS = 100


def coalesce(translator: Translator, node: exp.Expression) -> Value:
    nodes = [node.this, *node.expressions]
    if len(nodes) > MAX_ARGUMENTS:
        raise Unsupported(
            f"coalesce() with {len(nodes)} arguments: pushed with at most {MAX_ARGUMENTS} (SQLite takes 127)"
        )
    # each argument is translated once: nested coalesce() would otherwise cost 2**depth
    folded = [constants.evaluate(n, translator.zone) for n in nodes]
    values = [translator.value(n) if constant is None else None for n, constant in zip(nodes, folded, strict=True)]
    typed = [v for v in values if v is not None]
    if not typed:
        raise Unsupported("coalesce() of constants only")
    result_type = typed[0].type
    parts = []
    for constant, value in zip(folded, values, strict=True):
        if constant is not None:
            parts.append(translator.dialect.literal(constants.coerce(constant, result_type, translator.zone), typed[0]))
            continue
        assert value is not None
        if value.type != result_type:
            raise Unsupported(f"coalesce() over {value.type} and {result_type}: Spark's common type is not mirrored")
        parts.append(value.sql)
    texts = [v for v in typed if v.text is not None]
    if len({v.column.collation if v.column else None for v in texts}) > 1:
        # differently collated parts have no common collation (PostgreSQL refuses to compare
        # the result): compare bytes, where the dialect can say so
        try:
            parts = [
                part if isinstance(part, (exp.Literal, exp.Null)) else translator.dialect.binary_collation(part)
                for part in parts
            ]
        except Unsupported:
            pass
    rules = [v.text for v in typed if v.text is not None]
    text = None
    if rules:
        text = TextRules(
            equality=Level.INEXACT if any(r.equality is Level.INEXACT for r in rules) else Level.EXACT,
            ordering=None
            if any(r.ordering is None for r in rules)
            else ("collate_c" if any(r.ordering == "collate_c" for r in rules) else "native"),
            why="; ".join(dict.fromkeys(r.why for r in rules)),
            functions_ok=all(r.functions_ok for r in rules),
            binary_equality=any(r.binary_equality for r in rules),
        )
    return Value(exp.Coalesce(this=parts[0], expressions=parts[1:]), result_type, text)


def upper(translator: Translator, node: exp.Expression) -> Value:
    return translator.dialect.upper_lower(_string_arg(translator, node.this, "upper"), "upper")


def lower(translator: Translator, node: exp.Expression) -> Value:
    return translator.dialect.upper_lower(_string_arg(translator, node.this, "lower"), "lower")


def arithmetic(translator: Translator, node: exp.Expression) -> Value:
    left, right = translator.value(node.this), translator.value(node.expression)
    return translator.dialect.arithmetic(type(node), left, right)


def cast(translator: Translator, node: exp.Expression) -> Value:
    """A cast of a value (a cast of a constant is a constant). Spark makes its implicit
    casts explicit before it offers a filter to a scan, so these are mostly Spark's own."""
    assert isinstance(node, exp.Cast)
    target = constants.spark_type_of(node.to)
    if target is None:
        raise Unsupported(f"cast to {node.to.sql('spark')} is evaluated by Spark")
    return translator.widen(translator.value(node.this), target)


COMMON: dict[type[exp.Expression], Callable[[Translator, exp.Expression], Value]] = {
    exp.Cast: cast,
    exp.Length: length,
    exp.Abs: absolute,
    exp.Substring: substring,
    exp.Coalesce: coalesce,
    exp.Upper: upper,
    exp.Lower: lower,
    **{
        op: arithmetic
        for op in (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.BitwiseXor, exp.BitwiseAnd, exp.BitwiseOr)
    },
}
