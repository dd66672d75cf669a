"""The demo world: ``crm.db`` (customers) and ``sales.db`` (orders), built deterministically.

The data is shaped to exercise the traps of DESIGN.md §2 rather than to look pretty:
names in mixed case with non-ASCII letters, NULLs, empty strings and trailing spaces;
e-mails under ``COLLATE NOCASE`` that differ only in case (equality is a superset);
statuses that differ only in case (LIKE must stay case-sensitive); text dates.

Generation is vectorised with a seeded NumPy generator, one chunk at a time, and
written with ``executemany`` in a single transaction with journaling off, into a
temporary file that replaces the target only when complete: an interrupted build never
leaves a half-written file that a later run would trust.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from urllib.parse import quote

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

#: bump when the generated data changes, so files of an older layout are rebuilt
WORLD_VERSION = 1
SEED = 20240601
DEFAULT_CUSTOMERS = 100_000
DEFAULT_ORDERS = 1_200_000
CHUNK_ROWS = 100_000

FIRST_NAMES = [
    "Ada",
    "alice",
    "ALICE",
    "Alan",
    "anders",
    "Ærø",
    "Łukasz",
    "Zoë",
    "José",
    "Ångström",
    "Björk",
    "Émile",
    "Grace",
    "grace",
    "Hedy",
    "Inès",
    "Jürgen",
    "Kateřina",
    "Linus",
    "Margaret",
    "Niklaus",
    "Olga",
    "Øyvind",
    "Pedro",
    "Radia",
    "Søren",
    "Ursula",
    "Vint",
    "Wen",
    "Yukihiro",
]
LAST_NAMES = [
    "Lovelace",
    "Turing",
    "Hopper",
    "Lamarr",
    "Kowalski",
    "Nørgaard",
    "García",
    "Müller",
    "Dvořák",
    "Wirth",
    "Ritchie",
    "Thompson",
    "van Rossum",
    "Dijkstra",
    "Liskov",
    "Perlman",
    "Łoś",
    "O'Brien",
]
DOMAINS = ["example.com", "example.org", "mail.test", "post.example"]
REGIONS = {
    "EU": ["DE", "FR", "DK", "PL", "ES", "SE"],
    "NA": ["US", "CA", "MX"],
    "APAC": ["JP", "IN", "AU", "SG"],
    "LATAM": ["BR", "AR", "CL"],
    "MEA": ["ZA", "EG", "AE"],
}
STATUSES = {
    "delivered": 0.40,
    "shipped": 0.25,
    "shipping": 0.10,
    "pending": 0.10,
    "cancelled": 0.08,
    "returned": 0.05,
    "Shipped": 0.015,
    "SHIPPED": 0.005,
}
NOTES = [
    "gift wrap",
    "leave at door",
    "",
    "call before delivery",
    "Ærø ferry",
    "fragile  ",
    "100% cotton",
    "under_score",
]

CUSTOMERS_DDL = """CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, email TEXT COLLATE NOCASE,
    region TEXT, country TEXT, signup_date DATE, score REAL)"""
ORDERS_DDL = """CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, status TEXT, amount REAL,
    placed_at DATETIME, day DATE, note TEXT)"""
ORDERS_INDEXES = ["CREATE INDEX orders_customer_id ON orders (customer_id)", "CREATE INDEX orders_day ON orders (day)"]

Row = tuple[object, ...]


@dataclass(frozen=True)
class World:
    """Where the demo files are and how many rows each table holds."""

    crm: Path
    sales: Path
    customers: int
    orders: int


def build_world(
    data_dir: str | os.PathLike[str],
    orders: int = DEFAULT_ORDERS,
    customers: int = DEFAULT_CUSTOMERS,
    rebuild: bool = False,
    console: Console | None = None,
) -> World:
    """Create (or reuse) ``crm.db`` and ``sales.db`` in ``data_dir``, with a progress bar per table."""
    directory = Path(data_dir).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    world = World(directory / "crm.db", directory / "sales.db", customers, orders)
    tables = [
        (world.crm, "customers", CUSTOMERS_DDL, [], customers, lambda: _customer_rows(customers)),
        (world.sales, "orders", ORDERS_DDL, ORDERS_INDEXES, orders, lambda: _order_rows(orders, customers)),
    ]
    columns = (TextColumn("{task.description:<22}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=False) as progress:
        for path, table, ddl, indexes, rows, generate in tables:
            if not rebuild and _is_current(path, table, rows):
                progress.add_task(f"{table}: up to date", total=rows, completed=rows)
                continue
            task = progress.add_task(f"{table}: generating", total=rows)
            _write(
                path,
                ddl,
                table,
                generate(),
                indexes,
                on_chunk=partial(progress.advance, task),
                on_index=partial(progress.update, task, description=f"{table}: indexing"),
            )
            progress.update(task, description=f"{table}: built")
    return world


def _is_current(path: Path, table: str, rows: int) -> bool:
    """True when ``path`` holds ``table`` with ``rows`` rows written by this WORLD_VERSION."""
    if not path.exists():
        return False
    try:
        with sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True) as connection:
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            count = connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    except sqlite3.Error:
        return False
    return bool(version == WORLD_VERSION and count == rows)


def _write(
    path: Path,
    ddl: str,
    table: str,
    chunks: Iterator[Sequence[Row]],
    indexes: list[str],
    on_chunk: Callable[[int], None],
    on_index: Callable[[], None],
) -> None:
    temporary = path.with_name(path.name + ".building")
    temporary.unlink(missing_ok=True)
    connection = sqlite3.connect(temporary, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode = OFF")
        connection.execute("PRAGMA synchronous = OFF")
        connection.execute("BEGIN")
        connection.execute(ddl)
        for rows in chunks:
            connection.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})", rows)
            on_chunk(len(rows))
        on_index()
        for statement in indexes:
            connection.execute(statement)
        connection.execute(f"PRAGMA user_version = {WORLD_VERSION}")
        connection.execute("COMMIT")
    finally:
        connection.close()
    os.replace(temporary, path)


def _chunks(total: int) -> Iterator[tuple[int, int]]:
    for start in range(0, total, CHUNK_ROWS):
        yield start, min(CHUNK_ROWS, total - start)


def _nulls(values: list[object], mask: np.ndarray) -> list[object]:
    return [None if hidden else value for value, hidden in zip(values, mask.tolist(), strict=True)]


def _customer_rows(total: int) -> Iterator[list[Row]]:
    rng = np.random.default_rng([SEED, 1])
    regions = list(REGIONS)
    epoch = dt.date(2015, 1, 1)
    for start, size in _chunks(total):
        first = rng.integers(len(FIRST_NAMES), size=size).tolist()
        last = rng.integers(len(LAST_NAMES), size=size).tolist()
        domain = rng.integers(len(DOMAINS), size=size).tolist()
        shape = rng.random(size).tolist()  # name: NULL, '', trailing spaces or as written
        casing = rng.random(size).tolist()  # e-mail: NULL, lower, upper or as written
        region = rng.integers(len(regions), size=size).tolist()
        country = rng.integers(1 << 16, size=size).tolist()
        signup = rng.integers(3653, size=size).tolist()
        score = _nulls(np.round(rng.random(size) * 100, 2).tolist(), rng.random(size) < 0.03)
        no_region = (rng.random(size) < 0.01).tolist()
        no_signup = (rng.random(size) < 0.01).tolist()
        rows: list[Row] = []
        for i in range(size):
            first_name, last_name = FIRST_NAMES[first[i]], LAST_NAMES[last[i]]
            name = f"{first_name} {last_name}"
            email = f"{first_name}.{last_name.replace(' ', '')}@{DOMAINS[domain[i]]}"
            home = None if no_region[i] else regions[region[i]]
            rows.append(
                (
                    start + i + 1,
                    None if shape[i] < 0.01 else "" if shape[i] < 0.015 else name + "  " if shape[i] < 0.025 else name,
                    None
                    if casing[i] < 0.02
                    else email.lower()
                    if casing[i] < 0.62
                    else email.upper()
                    if casing[i] < 0.72
                    else email,
                    home,
                    None if home is None else REGIONS[home][country[i] % len(REGIONS[home])],
                    None if no_signup[i] else (epoch + dt.timedelta(days=signup[i])).isoformat(),
                    score[i],
                )
            )
        yield rows


def _order_rows(total: int, customers: int) -> Iterator[list[Row]]:
    rng = np.random.default_rng([SEED, 2])
    statuses, weights = list(STATUSES), np.array(list(STATUSES.values()))
    start_day, days = dt.date(2022, 1, 1), 3 * 365
    day_text = [(start_day + dt.timedelta(days=d)).isoformat() for d in range(days)]
    for start, size in _chunks(total):
        customer = _nulls(rng.integers(1, customers + 1, size=size).tolist(), rng.random(size) < 0.005)
        status = [statuses[s] for s in rng.choice(len(statuses), size=size, p=weights / weights.sum()).tolist()]
        amount = _nulls(np.round(rng.lognormal(3.5, 1.0, size=size), 2).tolist(), rng.random(size) < 0.005)
        day = rng.integers(days, size=size).tolist()
        second = rng.integers(86_400, size=size).tolist()
        placed = [
            f"{day_text[d]} {s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}" for d, s in zip(day, second, strict=True)
        ]
        note = _nulls([NOTES[n] for n in rng.integers(len(NOTES), size=size).tolist()], rng.random(size) < 0.9)
        ids = range(start + 1, start + size + 1)
        yield list(zip(ids, customer, status, amount, placed, [day_text[d] for d in day], note, strict=True))
