"""The demo world: row counts, determinism, reuse of current files, and the traps it must contain."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from tools.demo import world
from tools.demo.world import build_world

pytestmark = pytest.mark.unit


def small(directory: Path, rebuild: bool = False) -> world.World:
    return build_world(directory, orders=2_500, customers=900, rebuild=rebuild, console=Console(file=io.StringIO()))


def dump(path: Path, table: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as connection:
        rows = connection.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()
    connection.close()
    return rows


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(world, "CHUNK_ROWS", 700)  # several chunks, one of them partial


def test_counts_schema_and_indexes(tmp_path: Path) -> None:
    built = small(tmp_path)
    assert (len(dump(built.crm, "customers")), len(dump(built.sales, "orders"))) == (900, 2_500)
    with sqlite3.connect(built.sales) as connection:
        indexes = {row[0] for row in connection.execute("SELECT sql FROM sqlite_master WHERE type = 'index'")}
    connection.close()
    assert indexes == {
        "CREATE INDEX orders_customer_id ON orders (customer_id)",
        "CREATE INDEX orders_day ON orders (day)",
    }
    assert not list(tmp_path.glob("*.building"))


def test_deterministic(tmp_path: Path) -> None:
    first, second = small(tmp_path / "a"), small(tmp_path / "b")
    assert dump(first.crm, "customers") == dump(second.crm, "customers")
    assert dump(first.sales, "orders") == dump(second.sales, "orders")


def test_current_files_are_reused_and_rebuild_rewrites(tmp_path: Path) -> None:
    built = small(tmp_path)
    stamp = built.sales.stat().st_mtime_ns
    small(tmp_path)
    assert built.sales.stat().st_mtime_ns == stamp
    small(tmp_path, rebuild=True)
    assert built.sales.stat().st_mtime_ns != stamp


def test_wrong_count_or_version_is_rebuilt(tmp_path: Path) -> None:
    built = small(tmp_path)
    with sqlite3.connect(built.crm) as connection:
        connection.execute("DELETE FROM customers WHERE id = 1")
    connection.close()
    with sqlite3.connect(built.sales) as connection:
        connection.execute(f"PRAGMA user_version = {world.WORLD_VERSION + 1}")
    connection.close()
    small(tmp_path)
    assert len(dump(built.crm, "customers")) == 900
    with sqlite3.connect(built.sales) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == world.WORLD_VERSION
    connection.close()


def test_data_holds_the_traps_the_demo_shows(tmp_path: Path) -> None:
    built = small(tmp_path)
    names = [row[1] for row in dump(built.crm, "customers")]
    assert None in names and "" in names and any(n and n.endswith("  ") for n in names)
    assert any(n and not n.isascii() for n in names)
    emails = {row[2] for row in dump(built.crm, "customers") if row[2]}
    assert any(e != e.lower() and e.lower() in emails for e in emails)  # equal under NOCASE only
    statuses = {row[2] for row in dump(built.sales, "orders")}
    assert {"shipped", "Shipped", "shipping"} <= statuses
    for _, _, _, _, placed_at, day, _ in dump(built.sales, "orders"):
        assert placed_at[:10] == day and len(placed_at) == 19
