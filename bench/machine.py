"""Facts about the machine and software a result was measured on, recorded with it.

Numbers from a 2-core box and a 32-core one are not comparable; neither are two
connectorx versions. The report carries these facts so nobody has to guess. And what the
processes of a run spent: :func:`cpu_by_class` splits the CPU-seconds between the driver,
its JVM and Spark's Python workers.
"""

from __future__ import annotations

import datetime
import os
import platform
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata

import psycopg

PACKAGES = (
    "pyarrow",
    "pyspark",
    "adbc-driver-manager",
    "adbc-driver-postgresql",
    "adbc-driver-sqlite",
    "connectorx",
    "psycopg",
    "psycopg-binary",
    "pymysql",
    "duckdb",
    "pyiceberg",
    "sqlglot",
    "numpy",
)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gib() -> float | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def _command(*argv: str) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (done.stdout or done.stderr).strip()
    return text.splitlines()[0] if text else None


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _mariadb_version(url: str) -> str:
    from bench.data import mysql_connect

    try:
        connection = mysql_connect(url)
    except Exception as error:  # noqa: BLE001 - a fact, not a failure
        return f"unreachable: {type(error).__name__}"
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT VERSION()")
            return str(cursor.fetchone()[0])
    finally:
        connection.close()


def _one(row: tuple | None) -> object:
    """The value of a one-row, one-column answer (``fetchone`` is typed as possibly no row)."""
    assert row is not None
    return row[0]


def facts(pg_url: str, mysql_url: str, jars: dict[str, str]) -> dict[str, object]:
    """Machine, interpreter, library, server and repository facts, as JSON-ready values."""
    try:
        with psycopg.connect(pg_url) as connection:
            server = _one(connection.execute("SHOW server_version").fetchone())
            shared_buffers = _one(connection.execute("SHOW shared_buffers").fetchone())
    except psycopg.Error as error:
        server, shared_buffers = f"unreachable: {error}", None
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    commit = _command("git", "-C", repo, "rev-parse", "--short", "HEAD")
    dirty = bool(_command("git", "-C", repo, "status", "--porcelain"))
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": _memory_gib(),
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "packages": {name: _version(name) for name in PACKAGES},
        "sqlite_library": sqlite3.sqlite_version,
        "postgresql_server": server,
        "postgresql_shared_buffers": shared_buffers,
        "mariadb_server": _mariadb_version(mysql_url),
        "java": _command("java", "-version"),
        "jdbc_jars": {kind: os.path.basename(os.path.realpath(path)) for kind, path in jars.items()},
        "git_commit": f"{commit}{' (uncommitted changes)' if dirty else ''}" if commit else None,
    }


TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Process:
    """One live process as ``/proc/<pid>/stat`` and ``cmdline`` tell it."""

    parent: int
    name: str
    command: bytes
    #: CPU-seconds of the process itself (user + system)
    own_cpu: float
    #: the same with its reaped children's
    cpu: float


def processes() -> dict[int, Process]:
    """Every live process by pid."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as stat:
                text = stat.read()
            with open(f"/proc/{name}/cmdline", "rb") as cmdline:
                command = cmdline.read()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        ticks = [int(f) for f in fields[11:15]]
        found[int(name)] = Process(
            int(fields[1]),
            text[text.index("(") + 1 : text.rindex(")")],
            command,
            sum(ticks[:2]) / TICKS,
            sum(ticks) / TICKS,
        )
    return found


def process_cpu(pid: int) -> float:
    """CPU-seconds so far of process ``pid`` (0.0 once it is gone)."""
    found = processes().get(pid)
    return found.cpu if found is not None else 0.0


def cpu_snapshot() -> dict[int, tuple[str, float]]:
    """This driver and its descendants: pid -> (class: driver, jvm or workers; CPU-seconds so far,
    with its reaped children)."""
    live = processes()
    me = os.getpid()
    found = {}
    for pid, process in live.items():
        chain, parent = [], pid
        while parent in live and parent != me and parent > 1:
            chain.append(live[parent].name)
            parent = live[parent].parent
        if pid == me:
            found[pid] = ("driver", process.cpu)
        elif parent == me:
            kind = "jvm" if process.name == "java" else ("workers" if "java" in chain[1:] else "driver")
            found[pid] = (kind, process.cpu)
    return found


def cpu_by_class() -> dict[str, float]:
    """CPU-seconds so far of this driver, its JVM and the JVM's Python workers."""
    return cpu_spent({}, cpu_snapshot())


def cpu_spent(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]) -> dict[str, float]:
    """CPU-seconds each class spent between two :func:`cpu_snapshot`s, process by process: a
    process that exited in between is left out (what it spent is lost: an undercount, never
    the negative figure a difference of sums gives), one that started counts whole."""
    classes = {"driver": 0.0, "jvm": 0.0, "workers": 0.0}
    for pid, (kind, seconds) in after.items():
        classes[kind] += seconds - before.get(pid, (kind, 0.0))[1]
    return classes
