"""Bind a Spark SQL query to attached sources and qualify every column.

Each table reference ``source.schema.table`` (or ``source.table``) becomes a scan: a
placeholder table named by the scan id, which Spark will resolve to a temp view. Two
trees come out: the *reference* tree (only table names replaced; what Spark runs when
pushdown is off, and what decides result column names) and the *qualified* tree the
optimizer works on, where every column names its table by a query-unique alias.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema
from sqlglot.tokens import Token, TokenType

from sluice.errors import BindError, QuerySyntaxError
from sluice.planner.predicates import condition_of, predicate_slots
from sluice.planner.state import ScanState
from sluice.pushdown import nesting
from sluice.pushdown.translator import paren
from sluice.types import TableSchema

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
Resolver = Callable[[str, str | None, str], TableSchema]
_SPARK = Dialect.get_or_raise("spark")
#: Deepest nesting of parentheses, brackets, CASE and prefix operators (NOT, -, ~) the
#: binder parses. sqlglot's parser spends about 20 Python frames per level and Python's
#: default recursion limit is 1,000 frames, shared with the caller's own stack; raising the
#: limit is process-wide and also lets C code (json, repr) overflow the C stack of other
#: threads, so a deeper query is refused, before parsing, with a QuerySyntaxError.
MAX_NESTING = 32
#: deepest parsed tree (sqlglot nodes; a chain of UNIONs counts once, it is walked without
#: recursion): the planner's rules, sqlglot's generator and the translator spend up to about
#: 6 frames per level (``1 + 1 + ...``: one level per operator)
MAX_TREE_DEPTH = 128
_OPEN = {TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE, TokenType.CASE}
_CLOSE = {TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE, TokenType.END}
_PREFIX = {TokenType.NOT, TokenType.TILDE, TokenType.PIPE_SLASH, TokenType.DPIPE_SLASH}
_SIGNS = {TokenType.DASH, TokenType.PLUS}  # prefix unless they follow an operand
_OPERAND_END = {TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE, TokenType.END, TokenType.NUMBER,
                TokenType.STRING, TokenType.VAR, TokenType.IDENTIFIER, TokenType.NULL, TokenType.TRUE, TokenType.FALSE}


@dataclass(frozen=True)
class BoundQuery:
    reference: exp.Expression
    qualified: exp.Expression
    scans: tuple[ScanState, ...]


def parse(sql: str) -> exp.Expression:
    _check_unicode(sql)
    try:
        tokens = _SPARK.tokenize(sql)
        levels = _nesting(tokens)
        if levels > MAX_NESTING:
            raise QuerySyntaxError(f"the query is nested too deeply: {levels} levels of parentheses, CASE or NOT "
                                   f"(Sluice parses at most {MAX_NESTING})")
        statements = [s for s in _SPARK.parser().parse(tokens, sql) if s is not None]
    except SqlglotError as error:
        message = _ANSI.sub("", str(error))  # sqlglot underlines the culprit with terminal codes
        raise QuerySyntaxError(f"cannot parse the query: {message}") from None
    except RecursionError:  # the nesting check above should make this unreachable
        raise QuerySyntaxError(f"the query is nested too deeply to parse (at most {MAX_NESTING} levels)") from None
    except Exception as error:  # noqa: BLE001 - sqlglot fails on some malformed text (IndexError in MAP(, decimal errors)
        raise QuerySyntaxError(f"cannot parse the query: {type(error).__name__} in sqlglot: {error}") from None
    if len(statements) != 1:
        raise QuerySyntaxError(f"expected one SQL query, found {len(statements)} statements")
    if not isinstance(statements[0], exp.Query):
        raise QuerySyntaxError(f"only queries are supported (SELECT ...), not {statements[0].key.upper()}")
    tree = statements[0]
    for slot in list(predicate_slots(tree)):  # not projections: Spark names an unaliased column by its text
        slot.set("on" if isinstance(slot, exp.Join) else "this", nesting.rebalance(condition_of(slot), paren))
    deepest = nesting.depth(tree, flat=(exp.SetOperation,))
    if deepest > MAX_TREE_DEPTH:
        raise QuerySyntaxError(f"the query is nested too deeply: its expression tree is {deepest} levels deep "
                               f"(at most {MAX_TREE_DEPTH}; long chains of +, - or || nest one level per operator)")
    for kind in tree.find_all(exp.DataType):  # sqlglot parses type parameters it cannot write back (FLOAT('NaN'))
        try:
            kind.sql(dialect="spark")
        except Exception:  # noqa: BLE001 - any failure means Spark would never receive this query
            raise QuerySyntaxError(f"cannot parse the query: type {kind.this.value} with parameters "
                                   f"{[p.name for p in kind.expressions if isinstance(p, exp.Expression)]}") from None
    return tree.transform(_signed_typed_literal)


def _check_unicode(sql: str) -> None:
    """Spark receives the query as UTF-8 text, which cannot hold a lone surrogate (the escape
    ``'\\uD800'`` is fine: like Spark, sqlglot reads it as ``'?'``)."""
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError as error:
        raise QuerySyntaxError(f"the query text is not valid Unicode: a lone surrogate U+{ord(sql[error.start]):04X} "
                               f"at character {error.start}") from None


def _nesting(tokens: list[Token]) -> int:
    """How deeply the parser will recurse, counted on tokens (iteratively): every open
    bracket or CASE, and every prefix operator, nests one level."""
    level = deepest = run = 0
    opened: list[int] = []  # the prefix run each open bracket added, to undo at its close
    previous = None
    for token in tokens:
        kind = token.token_type
        if kind in _PREFIX or (kind in _SIGNS and previous not in _OPERAND_END):
            run += 1
        else:
            if kind in _OPEN:
                opened.append(run + 1)
                level += run + 1
            elif kind in _CLOSE and opened:
                level -= opened.pop()
            run = 0
        deepest = max(deepest, level + run)
        previous = kind
    return deepest


def _signed_typed_literal(node: exp.Expression) -> exp.Expression:
    """``-9223372036854775808L`` is one literal in Spark's grammar; sqlglot reads it as
    ``-(9223372036854775808L)``, which overflows when Spark runs the regenerated SQL."""
    inner = node.this if isinstance(node, exp.Neg) else None
    if isinstance(inner, (exp.Cast, exp.TryCast)) and isinstance(inner.this, exp.Literal) and not inner.this.is_string \
            and inner.to.this in exp.DataType.INTEGER_TYPES:
        return exp.Cast(this=exp.Literal.number("-" + inner.this.name), to=inner.to.copy())
    return node


def bind(sql: str, resolve: Resolver, sources: list[str], prefix: str) -> BoundQuery:
    """Resolve every table of ``sql``; ``resolve(source, schema, table)`` describes one."""
    reference = parse(sql)
    ctes = {cte.alias_or_name.lower() for cte in reference.find_all(exp.CTE)}
    scans: list[ScanState] = []
    for table in list(reference.find_all(exp.Table)):
        if not isinstance(table.this, exp.Identifier):
            continue  # table-valued function: Spark's business
        if not table.args.get("db") and table.name.lower() in ctes:
            continue
        source, schema = (table.catalog, table.db) if table.catalog else (table.db, None)
        if not source:
            raise BindError(f"table {table.name!r}: name it source.table or source.schema.table (attached sources: {', '.join(sources) or 'none'})")
        if source.lower() not in sources:
            raise BindError(f"unknown source {source!r} in {table.sql(dialect='spark')} (attached sources: {', '.join(sources) or 'none'})")
        schema_ = resolve(source.lower(), schema or None, table.name)
        scan_id = f"{prefix}_s{len(scans)}"
        alias = table.alias or table.name
        table.replace(exp.Table(this=exp.to_identifier(scan_id), alias=exp.TableAlias(this=exp.to_identifier(alias))))
        scans.append(ScanState(scan_id=scan_id, alias=alias, source=source.lower(), table=schema_))
    qualified, scans = _qualify(reference.copy(), scans)
    return BoundQuery(reference, qualified, tuple(scans))


def _qualify(tree: exp.Expression, scans: list[ScanState]) -> tuple[exp.Expression, list[ScanState]]:
    # sqlglot reads schema keys as SQL: a column named ``semi;colon`` or ``dash--x`` must reach it quoted
    mapping = {s.scan_id: {"`" + c.name.replace("`", "``") + "`": c.type.name for c in s.table.columns} for s in scans}
    schema = MappingSchema(mapping, dialect="spark")
    try:
        if any(isinstance(column.this, exp.Star) for column in tree.find_all(exp.Column)):
            # sqlglot's alias canonicalization loses the alias of ``t.*`` ("Unknown table: t"):
            # expand qualified stars first, scope by scope, under the query's own aliases
            tree = qualify(tree, dialect="spark", schema=schema, quote_identifiers=False, identify=False,
                           canonicalize_table_aliases=False)
        tree = qualify(tree, dialect="spark", schema=schema, quote_identifiers=False, identify=False,
                       canonicalize_table_aliases=True)
    except OptimizeError as error:
        columns = "; ".join(dict.fromkeys(f"{s.table.qualified_name}: {', '.join(c.name for c in s.table.columns)}" for s in scans))
        raise BindError(f"{error} (columns: {columns})") from None
    except RecursionError:  # parse() bounds the depth; this keeps any miss a clear error
        raise QuerySyntaxError("the query is nested too deeply to resolve its columns") from None
    # Canonical aliases (_0, _1, ...) are unique; give scans readable unique ones.
    renames: dict[str, str] = {}
    by_id = {s.scan_id: s for s in scans}
    bound = []
    for table in tree.find_all(exp.Table):
        scan = by_id.get(table.name)
        if scan is not None:
            alias = f"{scan.alias}__{scan.scan_id.rsplit('_', 1)[-1]}".lower()
            renames[table.alias_or_name] = alias
            table.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
            bound.append(ScanState(scan.scan_id, alias, scan.source, scan.table))
    for column in tree.find_all(exp.Column):
        if column.table in renames:
            column.set("table", exp.to_identifier(renames[column.table]))
    return tree, sorted(bound, key=lambda s: int(s.scan_id.rsplit("_s", 1)[-1]))
