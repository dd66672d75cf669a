"""The conformance matrix's cases, generated from the claims the dialects declare (tools/matrix.py).

Why generated: a pushdown claim without a differential test is where audits keep finding wrong
rows. Every row of the pushdown matrix (:data:`tools.matrix.SHAPES`, :data:`~tools.matrix.
AGGREGATE_SHAPES`, :data:`~tools.matrix.JOIN_SHAPES`), every function a dialect translates
(``Dialect.functions``) and every top-N order over every column family (:data:`~tools.matrix.
COLUMNS`) becomes cases over the edge tables of ``tests/edge_data.py``, run by
``tests/integration/test_conformance_matrix.py`` with pushdown on and against Spark reading the
same rows whole; ``tests/unit/test_conformance_matrix.py`` fails when a claim has no case.

A matrix column stands for a type family; each edge column of that family is a variant (the
matrix's ``s`` is the edge table's ``t``, ``tc`` and ``ch``: three collations or paddings per
source). Comparisons with a constant are also swept over every operator and over the edge
literals of ``tests/corpus.py`` (the slow tier: :func:`predicate_cases` with ``sweep=True``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace

import sqlglot
from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.tokens import TokenType

from tests import corpus
from tools import matrix

#: matrix column (a type family) -> the edge table's columns of that family
VARIANTS: dict[str, tuple[str, ...]] = {
    "i": ("i",),
    "b": ("b",),
    "f": ("f", "r"),
    "d": ("d",),
    "s": ("t", "tc", "ch"),
    "dt": ("dt",),
    "ts": ("ts",),
    "tn": ("tn",),
    "flag": ("flag",),
}

#: the bigint a SUM reads: ``b`` holds both bigint extremes, and whether Spark's own running sum
#: overflows depends on the order it meets them (test_aggregates.py sums the same columns)
_SUMMED = {"b": ("id",)}
#: rows a top-N case keeps: past the edge table's NULLs (one row in nine) into its values
TOP_N = 12
#: (descending, nulls first) of each top-N case: both directions, both NULL placements
ORDERS = tuple(itertools.product((False, True), (True, False)))
_FLOATS = {"f", "r"}


@dataclass(frozen=True)
class Case:
    """One differential case: ``claim`` names what it tests, ``sql`` is its branch over ``{t}``
    (the table; ``{q}`` its tag), selecting the tag first, then text columns."""

    claim: tuple[str, str]
    sql: str
    #: the Spark predicate or shape over the edge columns, for messages
    text: str
    #: the matrix row over the edge columns (a Shape, AggregateShape or JoinShape): what
    #: tools/matrix.py classifies for the source's real table; None for top-N
    shape: matrix.Shape | matrix.AggregateShape | matrix.JoinShape | None = None

    def branch(self, tag: int, table: str) -> str:
        return self.sql.format(q=tag, t=table)


def substitute(text: str, renames: dict[str, str]) -> str:
    """``text`` (Spark SQL) with its columns renamed, spelled as written: only the identifier
    tokens change (sqlglot would respell ``double('NaN')`` as a CAST it reads back as TRY_CAST)."""
    tokens = Spark.Tokenizer().tokenize(text)
    out, end = [], 0
    for index, token in enumerate(tokens):
        call = index + 1 < len(tokens) and tokens[index + 1].token_type is TokenType.L_PAREN
        if token.token_type is TokenType.VAR and token.text in renames and not call:
            out += [text[end : token.start], renames[token.text]]
            end = token.end + 1
    return "".join(out) + text[end:]


def variants(columns: Iterable[str], instead: Mapping[str, tuple[str, ...]] | None = None) -> Iterator[dict[str, str]]:
    """Every assignment of edge columns to the matrix ``columns`` (one variant per family member;
    ``instead`` replaces a family's members)."""
    names = sorted(set(columns))
    members = {**VARIANTS, **(instead or {})}
    for chosen in itertools.product(*(members[name] for name in names)):
        yield dict(zip(names, chosen, strict=True))


def _predicate(shape: matrix.Shape, predicate: str) -> Case:
    return Case(
        ("filter", shape.label),
        f"SELECT {{q}} AS q, CAST(id AS STRING) AS v FROM {{t}} WHERE {predicate}",
        predicate,
        matrix.Shape(shape.group, shape.label, predicate),
    )


def _comparison(shape: matrix.Shape) -> tuple[str, str] | None:
    """(column, operator) of a ``column <op> constant`` shape, else None."""
    tree = sqlglot.parse_one(shape.predicate, read="spark")
    if isinstance(tree, exp.Binary) and isinstance(tree.this, exp.Column) and not tree.expression.find(exp.Column):
        return tree.this.name, shape.predicate.split()[1]
    return None


#: the operators a comparison shape's sweep covers: equalities from ``=``, orderings from ``<``
_SWEPT = {"=": ("=", "<>", "<=>"), "<": ("<", "<=", ">", ">="), "<>": ()}


def predicate_cases(sweep: bool = False) -> list[Case]:
    """Each filter shape over each variant of its columns; with ``sweep``, each comparison
    shape also with every operator and every edge literal of its column (tests/corpus.py)."""
    cases = []
    for shape in matrix.SHAPES:
        for renames in variants(matrix.referenced_columns(shape)):
            cases.append(_predicate(shape, substitute(shape.predicate, renames)))
            compared = _comparison(shape)
            if sweep and compared is not None:
                column = renames[compared[0]]
                for op, literal in itertools.product(_SWEPT.get(compared[1], ()), corpus.LITERALS.get(column, [])):
                    cases.append(_predicate(shape, f"{column} {op} {literal}"))
    return list(dict.fromkeys(cases))


def _text(expression: str, floats: bool) -> str:
    """An output as text, so branches share a schema; a float's -0.0 added to 0.0 first (Spark's
    own MIN of {0.0, -0.0} depends on the order it meets them)."""
    return f"CAST(({expression}) + 0.0 AS STRING)" if floats else f"CAST({expression} AS STRING)"


def _floats(text: str) -> bool:
    return any(column.name in _FLOATS for column in _columns(text))


def _renamed(shape: matrix.AggregateShape, renames: dict[str, str]) -> matrix.AggregateShape:
    return matrix.AggregateShape(
        shape.label,
        tuple(substitute(key, renames) for key in shape.group_by),
        tuple((fn, None if a is None else substitute(a, renames), d) for fn, a, d in shape.functions),
    )


def _outputs(shape: matrix.AggregateShape) -> list[str]:
    """The shape's keys and functions (over edge columns) as text."""
    outputs = [_text(key, _floats(key)) for key in shape.group_by]
    for fn, argument, distinct in shape.functions:
        if argument is None:
            outputs.append("CAST(count(*) AS STRING)")
            continue
        call = f"{fn.lower()}({'DISTINCT ' if distinct else ''}{argument})"
        outputs.append(_text(call, fn != "COUNT" and _floats(argument)))
    return outputs


def aggregate_cases() -> list[Case]:
    """Each aggregate shape over each variant of its columns, every output as text (one column
    ``v``: a branch's outputs joined by ``|``)."""
    cases = []
    for shape in matrix.AGGREGATE_SHAPES:
        used = {c.name for t in (*shape.group_by, *(a for _, a, _ in shape.functions if a)) for c in _columns(t)}
        summed = any(fn == "SUM" for fn, _, _ in shape.functions)
        for renames in variants(used, _SUMMED if summed else {}):
            renamed = _renamed(shape, renames)
            outputs = " || '|' || ".join(f"coalesce({o}, 'NULL')" for o in _outputs(renamed))
            group = f" GROUP BY {', '.join(renamed.group_by)}" if renamed.group_by else ""
            sql = f"SELECT {{q}} AS q, {outputs} AS v FROM {{t}}{group}"
            cases.append(Case(("aggregate", shape.label), sql, renamed.spark_sql, renamed))
    return cases


def _columns(text: str) -> list[exp.Column]:
    return list(sqlglot.parse_one(text, read="spark").find_all(exp.Column))


def join_cases() -> list[Case]:
    """Each join shape as a self-join of the edge table on each variant of its key columns."""
    cases = []
    for shape in matrix.JOIN_SHAPES:
        for renames in variants({shape.left, shape.right}):
            renamed = replace(shape, left=renames[shape.left], right=renames[shape.right])
            on = f"l.{renamed.left} {shape.op} r.{renamed.right}"
            sql = (
                "SELECT {q} AS q, CAST(l.id AS STRING) || ',' || CAST(r.id AS STRING) AS v "
                f"FROM {{t}} l JOIN {{t}} r ON {on}"
            )
            cases.append(Case(("join", shape.label), sql, on, renamed))
    return cases


def order_claim(family: str, descending: bool, nulls_first: bool) -> tuple[str, str]:
    return ("top-N", f"{family} {'DESC' if descending else 'ASC'} NULLS {'FIRST' if nulls_first else 'LAST'}")


def topn_cases() -> list[Case]:
    """ORDER BY each edge column, both directions and NULL placements, LIMIT :data:`TOP_N`: the
    sorted column's values (ties on other columns would make the rows themselves arbitrary)."""
    cases = []
    for family, columns in VARIANTS.items():
        for column, (descending, nulls_first) in itertools.product(columns, ORDERS):
            order = f"{column} {'DESC' if descending else 'ASC'} NULLS {'FIRST' if nulls_first else 'LAST'}"
            value = _text(column, column in _FLOATS)
            cases.append(
                Case(
                    order_claim(family, descending, nulls_first),
                    f"SELECT {{q}} AS q, {value} AS v FROM (SELECT {column} FROM {{t}} ORDER BY {order} LIMIT {TOP_N})",
                    f"ORDER BY {order} LIMIT {TOP_N}",
                )
            )
    return cases


def function_claims() -> set[tuple[str, str]]:
    """Every function (sqlglot node type) some matrix dialect says it translates."""
    from sluice.dialects.lake import LakeDialect

    dialects = [p.dialect for p in matrix.PROFILES] + [LakeDialect()]
    return {("function", node.__name__) for dialect in dialects for node in dialect.functions}


def claims() -> set[tuple[str, str]]:
    """Every claim the dialects declare: the matrix's rows, the functions, the top-N orders."""
    return (
        {("filter", s.label) for s in matrix.SHAPES}
        | {("aggregate", s.label) for s in matrix.AGGREGATE_SHAPES}
        | {("join", s.label) for s in matrix.JOIN_SHAPES}
        | {order_claim(family, d, n) for family in matrix.COLUMNS for d, n in ORDERS}
        | function_claims()
    )


def covered(cases: Iterable[Case]) -> set[tuple[str, str]]:
    """The claims ``cases`` test: their own, and each function node their SQL uses."""
    out = set()
    for case in cases:
        out.add(case.claim)
        if case.claim[0] in ("filter", "aggregate"):  # the claim's own text: not the branch's casts to text
            tree = sqlglot.parse_one(case.text, read="spark")
            out |= {("function", type(node).__name__) for node in tree.walk()}
    return out


def all_cases(sweep: bool = False) -> list[Case]:
    return predicate_cases(sweep) + aggregate_cases() + join_cases() + topn_cases()
