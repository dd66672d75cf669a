"""The fuzzer's write round: random edge-value rows written by Sluice, read back equal (issue 26).

Per round and per writable SQL source (PostgreSQL, MariaDB, SQLite, DuckDB), a seeded draw
of rows from the edge pools (:mod:`fuzz.values`: NULL, NaN, ±0.0, ±Infinity, '', trailing
spaces, case and non-ASCII strings, integer extremes, DST instants and wall clocks, decimals
at their precision limits, booleans, binary) becomes a Spark DataFrame; Sluice creates the
table from it (``writeTo(t).create()``: the documented type map) and appends a second draw.
The table is then read by the source's own driver and by Sluice, and both must equal what
Spark held (its Arrow form). Values the source cannot hold (:data:`UNSTORABLE`: NaN and
±Infinity on MariaDB, NaN on SQLite, a NUL character on PostgreSQL) are appended among
good rows and must fail with an error naming the problem, the table keeping its rows (read
back by the driver before and after). A round's rows follow from ``(seed, round)`` only.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from fuzz.values import DOUBLES, INTS, STRINGS, decimal_pool, pool
from tests.sources import MYSQL_URL, PG_URL, mariadb, mariadb_execute

UTC = dt.timezone.utc
_SCHEMA = "sluice_fuzz_w"  # PostgreSQL schema and MariaDB database of the written tables
_BINARY = [b"", b"\x00", b"\x00\xff\x10", b"\x7f", bytes(range(256)), b"a ", b"A"]


@dataclass(frozen=True)
class Target:
    """A writable source of the round: what it holds, and how its driver reads a table back."""

    name: str
    url: str
    namespace: str
    #: the columns (name, Spark type) it is written with; a type it refuses is left out
    columns: tuple[tuple[str, str], ...]
    #: values of a column kind it cannot hold, each with the words its error must carry
    unstorable: dict[str, list[tuple[object, str]]] = field(default_factory=dict)
    #: the value it keeps for one Spark wrote, where it differs by documentation (MariaDB's -0.0)
    stored: Callable[[str, object], object] = lambda _kind, value: value


_ALL = (
    ("b", "boolean"),
    ("n", "int"),
    ("i", "bigint"),
    ("d", "decimal(15,4)"),
    ("w", "decimal(38,10)"),
    ("f", "double"),
    ("s", "string"),
    ("bin", "binary"),
    ("day", "date"),
    ("ntz", "timestamp_ntz"),
    ("ts", "timestamp"),
)


def _without(*names: str) -> tuple[tuple[str, str], ...]:
    return tuple(c for c in _ALL if c[0] not in names)


def _positive_zero(kind: str, value: object) -> object:
    """MariaDB and SQLite keep no negative zero (docs/writes.md): -0.0 lands as 0.0 (SQLite stores
    a REAL with no fraction as an integer)."""
    return 0.0 if kind == "double" and value == 0.0 else value


def _create_file(kind: str, path: str) -> None:
    """An empty SQLite or DuckDB database at ``path`` (kept when it exists)."""
    if kind == "lite":
        sqlite3.connect(path).close()
        return
    import duckdb

    duckdb.connect(path).close()


def targets(folder: str) -> dict[str, Target]:
    """Every writable SQL source, by the fuzzer's source name; files in ``folder``."""
    non_finite: list[tuple[object, str]] = [(math.nan, "NaN"), (math.inf, "Infinity"), (-math.inf, "Infinity")]
    return {
        "pg": Target("pg", PG_URL, _SCHEMA, _ALL, {"string": [("a\x00b", "0x00")]}),
        # SQLite: no instants (cast to timestamp_ntz), decimals of at most 15 digits, NaN stored as NULL
        "lite": Target(
            "lite",
            f"sqlite:///{folder}/writes.db",
            "main",
            _without("ts", "w"),
            {"double": [(math.nan, "NaN")]},
            _positive_zero,
        ),
        # MariaDB: DATETIME(6) for instants is read back as timestamp_ntz (docs/writes.md); left to test_writes_mysql
        "my": Target(
            "my",
            MYSQL_URL.rsplit("/", 1)[0] + f"/{_SCHEMA}",
            _SCHEMA,
            _without("ts"),
            {"double": non_finite},
            _positive_zero,
        ),
        "duck": Target("duck", f"duckdb:///{folder}/writes.duckdb", "main", _ALL),
    }


def draw(
    rng: random.Random,
    columns: tuple[tuple[str, str], ...],
    count: int,
    first_id: int,
    left_out: dict[str, list[object]] | None = None,
) -> list[tuple[Any, ...]]:
    """``count`` rows of edge values for ``columns`` (an id first), NULL in about one value of eight;
    ``left_out``: per type, values the source cannot store (tried on their own, after the round)."""
    unwanted = {kind: {repr(v) for v in values} for kind, values in (left_out or {}).items()}
    pools = {kind: [v for v in _pool(kind, rng) if repr(v) not in unwanted.get(kind, set())] for _, kind in columns}
    rows = []
    for n in range(count):
        values = [None if rng.random() < 0.125 else rng.choice(pools[kind]) for _, kind in columns]
        rows.append((first_id + n, *values))
    return rows


def _pool(kind: str, rng: random.Random) -> list[Any]:
    if kind in ("int", "bigint"):
        return list(pool(kind, rng))
    if kind.startswith("decimal"):
        precision, scale = (int(p) for p in kind[len("decimal(") : -1].split(","))
        return decimal_pool(precision, scale)
    if kind == "double":
        return DOUBLES + [round(rng.uniform(-1e6, 1e6), rng.randint(0, 6)) for _ in range(3)]
    if kind == "string":
        return STRINGS
    if kind == "binary":
        return _BINARY
    if kind == "timestamp":
        return list(pool("timestamp", rng))
    return list(pool(kind, rng))


def _ddl(columns: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(["id bigint", *(f"{name} {kind}" for name, kind in columns)])


@dataclass
class WriteSummary:
    """What the write rounds did, and what they found."""

    rows: int = 0
    refusals: int = 0
    seconds: float = 0.0
    found: list[str] = field(default_factory=list)

    def render(self) -> str:
        return (
            f"write rounds: {self.rows} rows written and read back, {self.refusals} unstorable writes refused, "
            f"{len(self.found)} mismatches, {self.seconds:.1f} s"
        )


class WriteRound:
    """Runs write rounds on ``names`` (of :func:`targets`) through ``fed``'s Spark session."""

    def __init__(self, fed: Any, names: list[str], folder: str, seed: int, rows: int = 24) -> None:
        known = targets(folder)
        self.fed, self.seed, self.rows = fed, seed, rows
        self.targets = [known[n] for n in names if n in known]
        self.folder = folder

    def run(self, round_number: int, summary: WriteSummary) -> None:
        started = time.monotonic()
        self._prepare()
        for target in self.targets:
            rng = random.Random(f"{self.seed}-w{round_number}-{target.name}")
            found = self._one(target, rng, f"w{round_number}")
            summary.found += [f"seed {self.seed} write round {round_number} on {target.name}: {f}" for f in found]
            summary.rows += 2 * self.rows
            summary.refusals += sum(len(v) for v in target.unstorable.values())
        summary.seconds += time.monotonic() - started

    def _prepare(self) -> None:
        import psycopg

        names = {t.name for t in self.targets}
        if "pg" in names:
            with psycopg.connect(PG_URL, autocommit=True) as connection:
                connection.execute(f"CREATE SCHEMA IF NOT EXISTS {_SCHEMA}")
        if "my" in names:
            mariadb_execute(f"CREATE DATABASE IF NOT EXISTS {_SCHEMA}")
        for target in self.targets:
            if target.name in ("lite", "duck"):  # a file source attaches an existing file: make an empty one
                _create_file(target.name, target.url.split(":///", 1)[1])
            catalog = f"fw_{target.name}"
            if catalog not in self.fed.sources:
                self.fed.attach(catalog, target.url, writable=True)

    def _one(self, target: Target, rng: random.Random, table: str) -> list[str]:
        """Write two draws to a new table, compare, then try each unstorable value; the mismatches."""
        spark, catalog = self.fed.spark, f"fw_{target.name}"
        name = f"{catalog}.{target.namespace}.{table}"
        ddl = _ddl(target.columns)
        kinds = ["bigint", *(kind for _, kind in target.columns)]
        left_out = {kind: [value for value, _ in values] for kind, values in target.unstorable.items()}
        first = draw(rng, target.columns, self.rows, 0, left_out)
        second = draw(rng, target.columns, self.rows, self.rows, left_out)
        self.fed.sql(f"DROP TABLE IF EXISTS {name}")
        spark.createDataFrame(first, ddl).writeTo(name).create()
        spark.createDataFrame(second, ddl).writeTo(name).append()
        held = spark.createDataFrame(first + second, ddl).toArrow()
        expected = _canon_rows(_arrow_rows(held), kinds, target.stored)
        found = []
        by_driver = _canon_rows(_driver_rows(target, table), kinds, lambda _k, v: v)
        if by_driver != expected:
            found.append(_difference("the source's driver", expected, by_driver))
        by_sluice = _canon_rows(_arrow_rows(self.fed.sql(f"SELECT * FROM {name}").toArrow()), kinds, lambda _k, v: v)
        if by_sluice != expected:
            found.append(_difference("Sluice", expected, by_sluice))
        for kind, values in target.unstorable.items():
            column = next(i for i, (_, k) in enumerate(target.columns) if k == kind)
            for value, words in values:
                bad = list(draw(rng, target.columns, 3, 1000, left_out))
                bad[1] = (*bad[1][: 1 + column], value, *bad[1][2 + column :])
                # compared in the canonical form: a NaN read twice is two floats that are not ==
                before = _canon_rows(_driver_rows(target, table), kinds, lambda _k, v: v)
                try:
                    spark.createDataFrame(bad, ddl).writeTo(name).append()
                except Exception as error:  # noqa: BLE001  # Spark raises its own classes around Sluice's
                    if words not in str(error):
                        found.append(f"writing {value!r} failed without naming {words!r}: {str(error)[:300]}")
                else:
                    found.append(f"writing {value!r} into a {kind} column did not fail")
                after = _canon_rows(_driver_rows(target, table), kinds, lambda _k, v: v)
                if after != before:
                    change = _difference("the source's driver", before, after).replace("Spark held", "before")
                    found.append(f"a failed write of {value!r} changed the table: {change}")
        self.fed.sql(f"DROP TABLE IF EXISTS {name}")
        return found


def _difference(reader: str, expected: list[tuple[Any, ...]], got: list[tuple[Any, ...]]) -> str:
    """The first row where ``reader``'s rows differ from Spark's."""
    for want, have in zip(expected, got, strict=False):
        if want != have:
            return f"{reader} read {have!r}, Spark held {want!r}"
    return f"{reader} read {len(got)} rows, Spark held {len(expected)}"


def _arrow_rows(table: Any) -> list[tuple[Any, ...]]:
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    return list(zip(*columns, strict=True))


def _driver_rows(target: Target, table: str) -> list[tuple[Any, ...]]:
    """The table as the source's own driver reads it (values in the driver's forms)."""
    if target.name == "pg":
        import psycopg

        with psycopg.connect(PG_URL) as connection:
            connection.execute("SET TIME ZONE 'UTC'")
            return list(connection.execute(f"SELECT * FROM {_SCHEMA}.{table} ORDER BY 1").fetchall())
    if target.name == "my":
        connection = mariadb(_SCHEMA)
        try:
            with connection.cursor() as cursor:
                cursor.execute(f"SELECT * FROM {table} ORDER BY 1")
                return list(cursor.fetchall())
        finally:
            connection.close()
    path = urlsplit(target.url).path
    if target.name == "lite":
        with sqlite3.connect(path) as db:
            return db.execute(f'SELECT * FROM "{table}" ORDER BY 1').fetchall()
    import duckdb

    with duckdb.connect(path, read_only=True) as db:
        return db.execute(f'SELECT * FROM "{table}" ORDER BY 1').fetchall()


def _canon_rows(
    rows: list[tuple[Any, ...]], kinds: list[str], stored: Callable[[str, object], object]
) -> list[tuple[Any, ...]]:
    """Rows in one comparable form, sorted by id: floats by ``repr`` (NaN, -0.0, ±inf kept apart),
    decimals by value, SQLite's text dates parsed, booleans as bools, instants in UTC."""
    out = []
    for row in rows:
        out.append(tuple(_canon(kind, stored(kind, value)) for kind, value in zip(kinds, row, strict=True)))
    return sorted(out, key=lambda r: r[0])


def _canon(kind: str, value: Any) -> Any:
    if value is None:
        return None
    if kind == "double":
        return repr(float(value))
    if kind.startswith("decimal"):
        number = Decimal(str(value))
        return Decimal(0) if number == 0 else number.normalize()
    if kind == "boolean":
        return bool(value)
    if kind == "binary":
        return bytes(value)
    if kind == "date":
        return dt.date.fromisoformat(value) if isinstance(value, str) else value
    if kind == "timestamp_ntz":
        parsed = dt.datetime.fromisoformat(value) if isinstance(value, str) else value
        return parsed.replace(tzinfo=None)
    if kind == "timestamp":
        return value.astimezone(UTC)
    if kind in INTS:
        return int(value)
    return value
