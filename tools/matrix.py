"""The pushdown matrix (docs/pushdown-matrix.md), generated from the capability code.

Why generated: a hand-written "what each source evaluates" table goes stale the first
time a dialect changes. Here every cell is the answer of the real
:class:`~sluice.pushdown.translator.Translator` for one predicate (a *shape*, a row) over
one *profile* (a column: a dialect plus a table whose remote properties are those of that
source), and ``tests/unit/test_pushdown_matrix.py`` fails when the committed file differs
from :func:`render_markdown` byte for byte. Regenerate with ``make docs``.

Every profile's table has the columns of :data:`COLUMNS` (one per Spark type family,
same names everywhere) so that one list of predicates works for every source. A source
without a native type for a family declares the column as its reader would produce it
(SQLite: ``INTEGER`` is read as bigint, ``DECIMAL`` as double, ``DATETIME`` as
timestamp_ntz); the document marks such columns.

Adding a source is one entry in :data:`PROFILES`, e.g.::

    Profile("PostgreSQL (C collation)", PostgresDialect(), _postgres("C")),

where the table maps each column to (Spark type the reader produces, remote type), best
through the source's own catalog mapping (as ``_sqlite`` and ``_mysql`` do) so the
profile cannot drift from what the reader produces.

Aggregates get their own table: each :data:`AGGREGATE_SHAPES` row is a ``GROUP BY`` and
aggregate functions as Spark offers them to a scan, answered by
:func:`sluice.planner.aggregates.decide` for the profile's source (complete pushdown or none).

Joins get a table too: each :data:`JOIN_SHAPES` row is an inner self-join of the profile's
table on one key, as Spark offers it, answered by :func:`sluice.planner.joins.decide`.

``python -m tools.matrix [--write PATH | --check PATH]`` prints, writes or
checks the document.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import sqlglot
from sqlglot import exp

from sluice.dialects.base import Dialect
from sluice.dialects.duckdb import DuckdbDialect
from sluice.dialects.mysql import MariadbDialect
from sluice.dialects.postgres import PostgresDialect
from sluice.dialects.sqlite import SqliteDialect
from sluice.planner import aggregates, joins
from sluice.protocol.codec import decode
from sluice.protocol.scan import JoinRequest
from sluice.pushdown.levels import Level
from sluice.pushdown.translator import Translator
from sluice.scan.spec import ScanSpec
from sluice.sources.base import Source
from sluice.sources.duckdb import DuckdbSource
from sluice.sources.mysql import MysqlSource, catalog_column
from sluice.sources.postgres import PostgresSource
from sluice.sources.sqlite import SqliteSource
from sluice.sources.sqlite_values import spark_type_for
from sluice.types import Column, Kind, SparkType, TableSchema, table_to_dict

#: Timestamp rules depend on the session zone; a DST zone is the demanding case.
SESSION_ZONE = "America/New_York"

#: The matrix table's columns: name -> the Spark type family it stands for.
COLUMNS: dict[str, str] = {
    "i": "int",
    "b": "bigint",
    "f": "double",
    "d": "decimal(10,2)",
    "s": "string",
    "dt": "date",
    "ts": "timestamp",
    "tn": "timestamp_ntz",
    "flag": "boolean",
}


def table(source: str, remote: Mapping[str, tuple[str, str]], **text: Any) -> TableSchema:
    """A profile's table: column -> (Spark type, remote type); ``text`` applies to text columns."""
    columns = tuple(
        Column(name, SparkType(spark), remote_type, **(text if SparkType(spark).kind is Kind.STRING else {}))
        for name, (spark, remote_type) in remote.items()
    )
    return TableSchema(source, None, "t", columns)


def _postgres(collation: str) -> TableSchema:
    return table(
        "pg",
        {
            "i": ("int", "integer"),
            "b": ("bigint", "bigint"),
            "f": ("double", "double precision"),
            "d": ("decimal(10,2)", "numeric(10,2)"),
            "s": ("string", "text"),
            "dt": ("date", "date"),
            "ts": ("timestamp", "timestamp with time zone"),
            "tn": ("timestamp_ntz", "timestamp without time zone"),
            "flag": ("boolean", "boolean"),
        },
        collation=collation,
    )


def _sqlite() -> TableSchema:
    """Declared types read through the SQLite source's own mapping, so they cannot drift."""
    declared = {
        "i": "INTEGER",
        "b": "INTEGER",
        "f": "REAL",
        "d": "DECIMAL(10,2)",
        "s": "TEXT",
        "dt": "DATE",
        "ts": "DATETIME",
        "tn": "DATETIME",
        "flag": "BOOLEAN",
    }
    return table("lite", {name: (spark_type_for(t).name, t) for name, t in declared.items()})


def _mysql(collation: str) -> TableSchema:
    """information_schema rows read through the MySQL source's own mapping."""
    declared = {
        "i": ("int", "int(11)"),
        "b": ("bigint", "bigint(20)"),
        "f": ("double", "double"),
        "d": ("decimal", "decimal(10,2)"),
        "s": ("varchar", "varchar(40)"),
        "dt": ("date", "date"),
        "ts": ("timestamp", "timestamp(6)"),
        "tn": ("datetime", "datetime(6)"),
        "flag": ("tinyint", "tinyint(1)"),
    }
    columns = tuple(
        catalog_column(
            (
                name,
                data_type,
                column_type,
                "YES",
                "utf8mb4" if data_type == "varchar" else None,
                collation if data_type == "varchar" else None,
                10,
                2,
            )
        )
        for name, (data_type, column_type) in declared.items()
    )
    return TableSchema("my", None, "t", columns)


def _duckdb(collation: str | None) -> TableSchema:
    """DuckDB's own types; collations as the source reads them from the table's DDL."""
    return table(
        "duck",
        {
            "i": ("int", "INTEGER"),
            "b": ("bigint", "BIGINT"),
            "f": ("double", "DOUBLE"),
            "d": ("decimal(10,2)", "DECIMAL(10,2)"),
            "s": ("string", "VARCHAR"),
            "dt": ("date", "DATE"),
            "ts": ("timestamp", "TIMESTAMPTZ"),
            "tn": ("timestamp_ntz", "TIMESTAMP"),
            "flag": ("boolean", "BOOLEAN"),
        },
        collation=collation,
    )


@dataclass(frozen=True)
class Profile:
    """A column of the matrix: how one source, with one set of remote properties, answers."""

    name: str
    dialect: Dialect
    table: TableSchema


PROFILES: tuple[Profile, ...] = (
    Profile("PostgreSQL (C collation)", PostgresDialect(), _postgres("C")),
    Profile("PostgreSQL (ICU/non-C collation)", PostgresDialect(), _postgres("en-US-x-icu")),
    Profile("SQLite", SqliteDialect(), _sqlite()),
    Profile("MariaDB (utf8mb4_general_ci)", MariadbDialect(), _mysql("utf8mb4_general_ci")),
    Profile("MariaDB (utf8mb4_nopad_bin)", MariadbDialect(), _mysql("utf8mb4_nopad_bin")),
    Profile("DuckDB (plain VARCHAR)", DuckdbDialect(), _duckdb(None)),
    Profile("DuckDB (COLLATE NOCASE)", DuckdbDialect(), _duckdb("NOCASE")),
)


@dataclass(frozen=True)
class Shape:
    """A row of the matrix: a Spark SQL predicate over the :data:`COLUMNS`."""

    group: str
    label: str
    predicate: str


def _shapes(group: str, *rows: tuple[str, str]) -> list[Shape]:
    return [Shape(group, label, predicate) for label, predicate in rows]


_TS, _NTZ = "TIMESTAMP '2024-01-01 00:00:00'", "TIMESTAMP_NTZ '2024-01-01 00:00:00'"
SHAPES: tuple[Shape, ...] = (
    *_shapes(
        "Comparisons with a constant",
        ("int =", "i = 1"),
        ("int <", "i < 1"),
        ("bigint =", "b = 3000000000"),
        ("bigint <", "b < 1"),
        ("double =", "f = 1.5"),
        ("double <", "f < 0.1"),
        ("decimal =", "d = 1.25"),
        ("decimal < (finer scale)", "d < 1.005"),
        ("string =", "s = 'a'"),
        ("string <", "s < 'b'"),
        ("string <>", "s <> 'a'"),
        ("date =", "dt = DATE '2024-01-01'"),
        ("date <", "dt < DATE '2024-01-01'"),
        ("timestamp =", f"ts = {_TS}"),
        ("timestamp <", f"ts < {_TS}"),
        ("timestamp_ntz =", f"tn = {_NTZ}"),
        ("timestamp_ntz <", f"tn < {_NTZ}"),
        ("timestamp_ntz < timestamp constant", f"tn < {_TS}"),
        ("boolean =", "flag = TRUE"),
        ("boolean <", "flag < TRUE"),
        ("boolean column", "flag"),
        ("int = string constant", "i = '5'"),
    ),
    *_shapes(
        "NULL, IN and boolean logic",
        ("IN list", "i IN (1, 2, 3)"),
        ("IN list of strings", "s IN ('a', 'b')"),
        ("IN list with NULL", "i IN (1, NULL)"),
        ("NOT IN", "i NOT IN (1, 2)"),
        ("IS NULL", "s IS NULL"),
        ("IS NOT NULL", "s IS NOT NULL"),
        ("NOT", "NOT (s < 'b')"),
        ("OR", "i = 1 OR s = 'a'"),
        ("OR with an unpushable branch", "i = 1 OR upper(s) = 'A'"),
        ("AND with an unpushable side", "i = 1 AND upper(s) = 'A'"),
    ),
    *_shapes(
        "Pattern matching",
        ("LIKE prefix", "s LIKE 'ab%'"),
        ("LIKE suffix", "s LIKE '%ab'"),
        ("LIKE contains", "s LIKE '%ab%'"),
        ("LIKE with _", "s LIKE 'a_c'"),
        ("LIKE with ESCAPE", "s LIKE 'a!%b%' ESCAPE '!'"),
        ("NOT LIKE", "s NOT LIKE 'ab%'"),
        ("startswith", "startswith(s, 'ab')"),
        ("endswith", "endswith(s, 'ab')"),
        ("contains", "contains(s, 'ab')"),
        ("ILIKE", "s ILIKE 'ab%'"),
    ),
    *_shapes(
        "NULL-safe equality",
        ("<=> constant", "i <=> 1"),
        ("<=> NULL", "i <=> NULL"),
        ("string <=>", "s <=> 'a'"),
    ),
    *_shapes(
        "Functions",
        ("length", "length(s) > 3"),
        ("abs (int)", "abs(i) < 5"),
        ("abs (double)", "abs(f) < 1.5"),
        ("substr", "substr(s, 1, 2) = 'ab'"),
        ("substr, range", "substr(s, 2) < 'b'"),
        ("substr from position 0", "substr(s, 0, 2) = 'ab'"),
        ("coalesce (int)", "coalesce(i, 0) = 5"),
        ("coalesce (string)", "coalesce(s, '') = 'a'"),
        ("upper", "upper(s) = 'A'"),
        ("lower", "lower(s) = 'a'"),
    ),
    *_shapes(
        "Arithmetic",
        ("int +", "i + 1 > 5"),
        ("int -", "i - 1 > 5"),
        ("int *", "i * 2 > 5"),
        ("int /", "i / 2 > 1"),
        ("int %", "i % 2 = 1"),
        ("int &", "i & 1 = 1"),
        ("int |", "i | 1 = 1"),
        ("int ^", "i ^ 1 = 0"),
        ("int + bigint", "i + b > 5"),
        ("double +", "f + 1 > 2"),
        ("decimal +", "d + 1 > 2"),
    ),
    *_shapes(
        "NaN and infinity",
        ("= NaN", "f = double('NaN')"),
        ("< NaN", "f < double('NaN')"),
        ("> Infinity", "f > double('inf')"),
    ),
    *_shapes(
        "Two columns",
        ("int = bigint", "i = b"),
        ("int < bigint", "i < b"),
        ("double < decimal", "f < d"),
        ("string < string expression", "s < substr(s, 2)"),
        ("date < timestamp", "dt < ts"),
        ("timestamp = timestamp_ntz", "ts = tn"),
    ),
)


@dataclass(frozen=True)
class AggregateShape:
    """A row of the aggregates table: grouping keys and (function, column, DISTINCT) as Spark offers them."""

    label: str
    group_by: tuple[str, ...]
    functions: tuple[tuple[str, str | None, bool], ...]
    #: the SUMs are Spark's rewrite of an AVG of the same argument (the offer carries the AVG)
    averaged: bool = False

    @property
    def spark_sql(self) -> str:
        shown = [
            f"{'count' if fn == 'COUNT_STAR' else fn.lower()}({'DISTINCT ' if distinct else ''}{column or '*'})"
            for fn, column, distinct in self.functions
        ]
        keys = f" GROUP BY {', '.join(self.group_by)}" if self.group_by else ""
        return f"SELECT {', '.join([*self.group_by, *shown])} FROM t{keys}"


def _aggregate(label: str, keys: tuple[str, ...], *functions: tuple[str, str | None, bool]) -> AggregateShape:
    return AggregateShape(label, keys, functions)


def _average(label: str, column: str) -> AggregateShape:
    """``avg(column)`` as Spark offers it once the AVG is declined: SUM and COUNT of the column."""
    return AggregateShape(label, (), (("SUM", column, False), ("COUNT", column, False)), averaged=True)


_STAR = ("COUNT_STAR", None, False)
AGGREGATE_SHAPES: tuple[AggregateShape, ...] = (
    _aggregate("COUNT(*)", (), _STAR),
    _aggregate("GROUP BY int", ("i",), _STAR),
    _aggregate("GROUP BY string", ("s",), _STAR),
    _aggregate("GROUP BY double", ("f",), _STAR),
    _aggregate("GROUP BY date, boolean", ("dt", "flag"), _STAR),
    _aggregate("GROUP BY timestamp", ("ts",), _STAR),
    _aggregate("COUNT(column)", (), ("COUNT", "s", False)),
    _aggregate("COUNT(DISTINCT string)", (), ("COUNT", "s", True)),
    _aggregate("SUM(int), SUM(bigint)", (), ("SUM", "i", False), ("SUM", "b", False)),
    _aggregate("SUM(decimal)", (), ("SUM", "d", False)),
    _aggregate("SUM(double)", (), ("SUM", "f", False)),
    _average("AVG(decimal), as Spark rewrites it", "d"),
    _average("AVG(int), as Spark rewrites it", "i"),
    _aggregate("MIN, MAX (int, date)", (), ("MIN", "i", False), ("MAX", "dt", False)),
    _aggregate("MIN, MAX (string)", (), ("MIN", "s", False), ("MAX", "s", False)),
    _aggregate("MAX(double)", (), ("MAX", "f", False)),
    _aggregate("MAX(timestamp)", (), ("MAX", "ts", False)),
    _aggregate("stddev_samp", (), ("STDDEV_SAMP", "i", False)),
    _aggregate("GROUP BY int % 10", ("i % 10",), _STAR),
    _aggregate("GROUP BY int & 7, SUM(bigint + 1)", ("i & 7",), ("SUM", "b + 1", False)),
    _aggregate("GROUP BY length(string)", ("length(s)",), _STAR),
    _aggregate("MAX(abs(bigint))", (), ("MAX", "abs(b)", False)),
    _aggregate("GROUP BY int / 2", ("i / 2",), _STAR),
)
#: a source of each profile's kind (never connected: the decision reads the table and the dialect)
_SOURCES: dict[type[Dialect], Source] = {
    PostgresDialect: PostgresSource("pg", "postgresql://matrix@localhost/db"),
    SqliteDialect: SqliteSource("lite", "sqlite:///matrix.db"),
    MariadbDialect: MysqlSource("my", "mysql://matrix@localhost/db"),
    DuckdbDialect: DuckdbSource("duck", "duckdb:///matrix.duckdb"),
}


def _source_of(profile: Profile) -> Source:
    """The never-connected source of the profile's kind, answering with the profile's dialect."""
    source = _SOURCES[type(profile.dialect)]
    source.dialect = profile.dialect
    return source


@dataclass(frozen=True)
class Cell:
    """The translator's verdict for one shape on one profile."""

    level: Level
    reason: str
    remote_sql: str | None


def classify(profile: Profile, shape: Shape) -> Cell:
    """One cell, exactly as the planner's classifier would produce it for a single conjunct."""
    translator = Translator(profile.dialect, profile.table, SESSION_ZONE)
    predicate = cast(
        exp.Expression, sqlglot.parse_one(shape.predicate, read="spark")
    )  # typed with the nodes' Expr base
    translation = translator.predicate(predicate)
    remote = profile.dialect.render(translation.sql) if translation.sql is not None else None
    return Cell(translation.level, translation.reason, remote)


def classify_aggregate(profile: Profile, shape: AggregateShape, source: Source | None = None) -> Cell:
    """One aggregates cell: EXACT with the remote query when the source answers it completely.

    ``source``: a real attached source whose table ``profile.table`` is (the conformance
    matrix asks for its claims); by default a never-connected source of the profile's kind.
    """
    source = source or _source_of(profile)
    offered = {
        "group_by": [_operand(key) for key in shape.group_by],
        "aggregates": [
            {"fn": fn, "distinct": distinct, "args": [_operand(column)] if column else []}
            for fn, column, distinct in shape.functions
        ],
    }
    if shape.averaged:
        offered["averaged"] = [
            {"fn": "AVG", "distinct": distinct, "args": [_operand(column)] if column else []}
            for fn, column, distinct in shape.functions
            if fn == "SUM"
        ]
    decision = aggregates.decide(source, profile.table, offered, [], ansi=True, session_zone=SESSION_ZONE)
    if decision.aggregation is not None:
        spec = ScanSpec.for_source(
            source, profile.table, (profile.table.columns[0].name,), aggregate=decision.aggregation
        )
        return Cell(
            Level.EXACT, "; ".join(dict.fromkeys(v.reason for v in decision.verdicts)), source.request_text(spec)
        )
    refused = [v.reason for v in decision.verdicts if v.level is not Level.EXACT]
    return Cell(Level.UNSUPPORTED, refused[0] if refused else decision.note or "not pushed", None)


def _operand(text: str) -> dict[str, Any]:
    """A grouping key or argument of a shape as Spark offers it: a column, or an expression (its tree)."""
    node = sqlglot.parse_one(text, read="spark")
    return {"ref": [node.name]} if isinstance(node, exp.Column) else {"tree": node}


def referenced_columns(shape: Shape) -> set[str]:
    """Column names a shape reads: every profile must have them (checked by the unit tests)."""
    return {column.name for column in sqlglot.parse_one(shape.predicate, read="spark").find_all(exp.Column)}


# ------------------------------------------------------------------ markdown
_INTRO = """\
# Pushdown matrix

<!-- Generated by `python -m tools.matrix`; do not edit. Regenerate with `make docs`. -->

What each source evaluates, per predicate shape, as the translator classifies it (the
rules behind it: [pushdown.md](pushdown.md)). Every cell is computed from the dialect
code, and a unit test fails when this file is stale: regenerate it with `make docs`.

- **EXACT**: the source returns exactly Spark's rows: the remote predicate has Spark's
  truth value (TRUE, FALSE *and* NULL) on every row, so it stays exact under `NOT` and
  three-valued logic. Spark drops the filter.
- **INEXACT**: the source returns a superset of Spark's rows; Spark re-applies the filter.
- **UNSUPPORTED**: not sent to the source; Spark evaluates it.

Session time zone: `{zone}`. Timestamp rules depend on it (its UTC offset
changes with DST). Each row is one predicate classified on its own; in a query the
planner first splits `AND`s into conjuncts, pushes `NOT` down and folds constants, then
classifies each conjunct.
"""


def _code(text: str, in_table: bool = False) -> str:
    """A Markdown code span that survives any backticks in ``text`` (and ``|`` in tables).

    Remote SQL is arbitrary text: MySQL quotes identifiers with backticks, `|` is an operator.
    """
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    span = f"{fence}{pad}{text}{pad}{fence}"
    return span.replace("|", "\\|") if in_table else span


def _text(text: str, in_table: bool = False) -> str:
    """Plain text (labels, reasons) with the characters Markdown would interpret escaped."""
    # `<` only starts HTML before a letter, / ! or ?; `_` only emphasises at a word boundary.
    escaped = re.sub(r"[\\`*]|<(?=[A-Za-z/!?])|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])", lambda m: "\\" + m[0], text)
    return escaped.replace("|", "\\|") if in_table else escaped


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _columns_section(profiles: tuple[Profile, ...]) -> list[str]:
    lines = [
        "## Profiles",
        "",
        "The table every predicate runs against, per profile: remote type → Spark type as read.",
        "",
    ]
    lines += [_row(["column", *(_text(p.name, True) for p in profiles)]), _row(["---"] * (len(profiles) + 1))]
    marked = False
    for name, family in COLUMNS.items():
        cells = []
        for profile in profiles:
            column = profile.table.column(name)
            differs = column.type.name != family
            marked |= differs
            collation = f' COLLATE "{column.collation}"' if column.collation else ""
            cells.append(_text(f"{column.remote_type}{collation} → {column.type}", True) + (" \\*" if differs else ""))
        lines.append(_row([_code(name, in_table=True), *cells]))
    if marked:
        lines += [
            "",
            "\\* the source has no native type for this family; the column is typed as its reader produces it.",
        ]
    return lines


@dataclass(frozen=True)
class JoinShape:
    """A row of the joins table: ``t JOIN t AS u ON <key>``, the key as Spark offers it (``u``'s columns aliased ``_1``)."""

    label: str
    left: str
    right: str
    op: str = "="
    cast: str | None = None  # Spark's cast of the left column (the right column's type)

    @property
    def spark_sql(self) -> str:
        return f"SELECT * FROM t JOIN t AS u ON t.{self.left} {self.op} u.{self.right}"

    def offer(self, table: TableSchema) -> dict[str, Any]:
        left: dict[str, Any] = {"ref": [self.left]}
        if self.cast is not None:
            left = {"op": "CAST", "from": table.column(self.left).type.name, "to": self.cast, "args": [left]}
        side = {"catalog": table.source, "table": {"table": table_to_dict(table)}, "verdicts": []}
        return {
            "left": {**side, "columns": [{"name": self.left, "alias": None}]},
            "right": {**side, "columns": [{"name": self.right, "alias": f"{self.right}_1"}]},
            "join_type": "INNER_JOIN",
            "same_source": True,
            "condition": {"op": self.op, "args": [left, {"ref": [f"{self.right}_1"]}]},
        }


JOIN_SHAPES: tuple[JoinShape, ...] = (
    JoinShape("int = int", "i", "i"),
    JoinShape("int = bigint (Spark casts the int)", "i", "b", cast="bigint"),
    JoinShape("decimal = decimal", "d", "d"),
    JoinShape("string = string", "s", "s"),
    JoinShape("string <=> string (NULL-safe)", "s", "s", "<=>"),
    JoinShape("date = date", "dt", "dt"),
    JoinShape("timestamp = timestamp", "ts", "ts"),
    JoinShape("double = double", "f", "f"),
)


def classify_join(profile: Profile, shape: JoinShape, source: Source | None = None) -> Cell:
    """One joins cell: EXACT with the joined query when the source runs the join (``source``:
    as for :func:`classify_aggregate`)."""
    source = source or _source_of(profile)
    decision = joins.decide(source, decode(JoinRequest, shape.offer(profile.table), "the 'join' request"))
    if decision.join is not None:
        spec = ScanSpec.for_source(
            source, profile.table, tuple(o.name for o in decision.join.outputs), join=decision.join
        )
        return Cell(Level.EXACT, "; ".join(v.reason for v in decision.verdicts), source.request_text(spec))
    refused = [v.reason for v in decision.verdicts if v.level is not Level.EXACT]
    return Cell(Level.UNSUPPORTED, refused[0] if refused else decision.note or "not pushed", None)


def render_markdown(profiles: tuple[Profile, ...] = PROFILES, shapes: tuple[Shape, ...] = SHAPES) -> str:
    """The whole document; deterministic, so the staleness test can compare bytes."""
    cells = {(s, p.name): classify(p, s) for s in shapes for p in profiles}
    numbered = list(enumerate(shapes, 1))
    lines = [_INTRO.format(zone=SESSION_ZONE), *_columns_section(profiles), ""]
    lines += ["## Summary", "", _row(["#", "shape", "predicate", *(_text(p.name, True) for p in profiles)])]
    lines.append(_row(["---"] * (len(profiles) + 3)))
    group = None
    for number, shape in numbered:
        if shape.group != group:
            group = shape.group
            lines.append(_row(["", f"**{_text(group, True)}**", *[""] * (len(profiles) + 1)]))
        levels = [cells[shape, p.name].level.value for p in profiles]
        lines.append(_row([str(number), _text(shape.label, True), _code(shape.predicate, in_table=True), *levels]))
    lines += ["", "## Details"]
    group = None
    for number, shape in numbered:
        if shape.group != group:
            group = shape.group
            lines += ["", f"### {_text(group)}"]
        lines += ["", f"#### {number}. {_text(shape.label)} — {_code(shape.predicate)}", ""]
        for profile in profiles:
            cell = cells[shape, profile.name]
            lines.append(f"- **{_text(profile.name)}**: {cell.level.value} — {_text(cell.reason)}")
            if cell.remote_sql is not None:
                lines.append(f"  - remote: {_code(cell.remote_sql)}")
    lines += _aggregates_section(profiles)
    lines += _joins_section(profiles)
    return "\n".join(lines) + "\n"


def _joins_section(profiles: tuple[Profile, ...]) -> list[str]:
    """The joins table and its details: the source runs the join (EXACT) or Spark does (see pushdown.md, Joins)."""
    intro = (
        "Each row is an inner join of two tables of one source on one key, as Spark offers it to the "
        "scan (both sides' filters EXACT); the source runs the join (EXACT) or Spark joins the rows."
    )
    return _shapes_section("Joins", intro, JOIN_SHAPES, classify_join, profiles)


def _aggregates_section(profiles: tuple[Profile, ...]) -> list[str]:
    """The aggregates table and its details: complete pushdown or none (see pushdown.md, Aggregates)."""
    intro = (
        "Each row is a `GROUP BY` and its aggregates as Spark offers them to a scan whose "
        "filters are all EXACT; the source answers it completely (EXACT) or Spark aggregates the rows. "
        "An expression as a key or argument is pushed where the filter classifier translates it exactly "
        "for the source (the Arithmetic rows of the filter tables). A table served by a Sluice Flight "
        "server answers as its source's column here: the server hands Spark's offer to its source's "
        "own decision (flight.md, Aggregates; the client sends an expression only when the filter "
        "format tells its type); any other Flight server gets no aggregate."
    )
    return _shapes_section("Aggregates", intro, AGGREGATE_SHAPES, classify_aggregate, profiles)


def _shapes_section(
    title: str,
    intro: str,
    shapes: Sequence[Any],
    classify: Callable[[Profile, Any], Any],
    profiles: tuple[Profile, ...],
) -> list[str]:
    """A table of query shapes by profile (each cell a level), then each cell's reason and remote query."""
    lines = ["", f"## {title}", "", intro, ""]
    lines += [_row(["shape", "query", *(_text(p.name, True) for p in profiles)]), _row(["---"] * (len(profiles) + 2))]
    cells = {(s.label, p.name): classify(p, s) for s in shapes for p in profiles}
    for shape in shapes:
        levels = [cells[shape.label, p.name].level.value for p in profiles]
        lines.append(_row([_text(shape.label, True), _code(shape.spark_sql, in_table=True), *levels]))
    for shape in shapes:
        lines += ["", f"#### {_text(shape.label)} — {_code(shape.spark_sql)}", ""]
        for profile in profiles:
            cell = cells[shape.label, profile.name]
            lines.append(f"- **{_text(profile.name)}**: {cell.level.value} — {_text(cell.reason)}")
            if cell.remote_sql is not None:
                lines.append(f"  - remote: {_code(cell.remote_sql)}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.matrix", description="Print, write or check the pushdown matrix."
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", metavar="PATH", help="write the matrix to PATH")
    mode.add_argument("--check", metavar="PATH", help="exit 1 if PATH differs from the generated matrix")
    args = parser.parse_args(argv)
    document = render_markdown().encode("utf-8")
    if args.write:
        Path(args.write).write_bytes(document)
    elif args.check:
        path = Path(args.check)
        if not path.exists() or path.read_bytes() != document:
            print(f"{args.check} is stale: run `make docs`", file=sys.stderr)
            return 1
    else:
        sys.stdout.write(document.decode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
