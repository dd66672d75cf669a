"""A Spark driver killed in the middle of a SQLite or DuckDB write leaves the file's table as it was.

SQLite and DuckDB are written by the driver in one transaction of the file (sluice/write/sqlite.py,
duckdb.py). ``tests/killed_file_write.py`` runs an ``INSERT OVERWRITE`` of a million rows in a
process of its own; the test watches it and SIGKILLs its process group (driver, JVM, workers)
once it holds the file's write transaction: SQLite's rollback journal exists (the DELETE has
run and the INSERT is under way), or the driver has the DuckDB file open for writing. Then the
file must be readable with every old row and no new one, and the next write (from this test's
session) must go through: no lock or journal of the dead process stops it.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

_ROOT = Path(__file__).resolve().parents[2]
_BEFORE = [(1, "one"), (2, "two"), (3, "three")]


def _open_for_writing(pid: int, path: Path) -> bool:
    """Whether process ``pid`` has ``path`` open read-write (a DuckDB reader opens it read-only)."""
    folder = Path(f"/proc/{pid}/fd")
    try:
        descriptors = os.listdir(folder)
    except OSError:
        return False
    for fd in descriptors:
        try:
            if os.readlink(folder / fd) != str(path):
                continue
            flags = next(
                line
                for line in (Path(f"/proc/{pid}/fdinfo/{fd}").read_text().splitlines())
                if line.startswith("flags:")
            )
        except (OSError, StopIteration):
            continue
        if int(flags.split()[1], 8) & os.O_ACCMODE == os.O_RDWR:
            return True
    return False


def _rows(kind: str, path: Path) -> list[tuple]:
    if kind == "sqlite":
        with sqlite3.connect(path) as connection:
            return sorted(connection.execute("SELECT id, pad FROM w_killed").fetchall())
    with duckdb.connect(str(path), read_only=True) as connection:
        return sorted(connection.execute("SELECT id, pad FROM w_killed").fetchall())


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "duckdb"])
def test_a_killed_driver_leaves_the_file_as_it_was(spark, tmp_path, kind) -> None:
    from sluice import Federation

    path = (tmp_path / ("k.db" if kind == "sqlite" else "k.duckdb")).resolve()
    create = "CREATE TABLE w_killed (id BIGINT, pad TEXT)"
    fill = "INSERT INTO w_killed VALUES (1, 'one'), (2, 'two'), (3, 'three')"
    if kind == "sqlite":
        with sqlite3.connect(path) as connection:
            connection.execute(create)
            connection.execute(fill)
    else:
        with duckdb.connect(str(path)) as connection:
            connection.execute(create)
            connection.execute(fill)
    url = f"{kind}:///{path}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, str(_ROOT / "tests" / "killed_file_write.py"), "--url", url]
    command += ["--table", "w_killed", "--rows", "1000000"]
    driver = subprocess.Popen(
        command, cwd=_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )

    def writing() -> bool:
        if kind == "sqlite":  # the rollback journal: the write transaction has changed the file
            return Path(f"{path}-journal").exists()
        return _open_for_writing(driver.pid, path)

    try:
        deadline = time.monotonic() + 240
        while not writing() and driver.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        caught = writing()
    finally:
        os.killpg(driver.pid, signal.SIGKILL)
        out, err = driver.communicate(timeout=60)
    assert caught, f"the driver never held the write transaction; it printed {out!r}\n{err[-3000:]}"
    assert "written" not in out
    assert _rows(kind, path) == _BEFORE
    fed = Federation(spark=spark)
    fed.attach("wkfile", url, writable=True)
    try:
        fed.sql("INSERT INTO wkfile.main.w_killed VALUES (4, 'four')")
    finally:
        fed.detach("wkfile")
    assert _rows(kind, path) == [*_BEFORE, (4, "four")]
