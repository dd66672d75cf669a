"""Two processes racing lake commits: append + delete, delete + delete, delete + optimize.

Iceberg's rule: concurrent writers never lose or bring back a row; a commit that lost the
race is retried on top of the winner when the winner does not touch what it read, and fails
otherwise. Here one process runs Sluice's DELETE (:func:`sluice.lake.delete_rows.delete_rows`,
copy-on-write through Spark) or ``optimize`` while a second process appends (PyIceberg) or
deletes whole partitions (Sluice's metadata-only DELETE, which needs no Spark) in a loop.
Each failure must be one line naming the conflicting snapshot and its operation; the rows
after the race, read by Sluice through Spark and by PyIceberg, must be what the commits that
landed leave: every appended row, no row a committed DELETE removed. Catalog names start with
``lkiso``. Slow tier: each test runs a race of several seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from sluice.errors import SluiceError
from sluice.lake.catalog import LakeLocation, open_catalog

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ARROW = pa.schema([pa.field("id", pa.int64()), pa.field("p", pa.string())])
SCHEMA = Schema(NestedField(1, "id", LongType()), NestedField(2, "p", StringType()))
PARTS = [f"p{i}" for i in range(10)]

#: the second process: ``append`` (PyIceberg, ids from 100000, 10 rows each 0.3 s) or
#: ``delete`` (Sluice's whole-partition DELETE of each named partition, planned again after a
#: conflict); one JSON line per commit or failure
RACER = textwrap.dedent(
    """
    import json, os, sys, time
    import pyarrow as pa
    from sluice.errors import SluiceError
    from sluice.lake.catalog import LakeLocation, open_catalog
    from sluice.lake.delete_rows import DeleteCondition, delete_rows
    mode, url, stop_file, parts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("p", pa.string())])
    deadline = time.monotonic() + 240
    if mode == "append":
        table = open_catalog(LakeLocation.from_url(url)).load_table(("ns", "t"))
        first = 100_000
        while time.monotonic() < deadline and (first < 100_030 or not os.path.exists(stop_file)):
            rows = [{"id": i, "p": f"p{i % 10}"} for i in range(first, first + 10)]
            table.append(pa.Table.from_pylist(rows, schema=schema))
            print(json.dumps({"appended": first}), flush=True)
            first += 10
            time.sleep(0.3)
    else:
        for part in parts:
            while time.monotonic() < deadline:
                condition = DeleteCondition(f"p = '{part}'", (f"p = '{part}'",), True)
                try:
                    done = delete_rows(None, url, "ns", "t", condition, lambda _: None)
                except SluiceError as error:
                    print(json.dumps({"failed": part, "error": str(error)}), flush=True)
                    continue
                print(json.dumps({"deleted": part, "snapshot": done.snapshot_id}), flush=True)
                break
            time.sleep(0.4)
    """
)


def _table(folder: Path) -> tuple[str, Any, list[dict[str, Any]]]:
    """ns.t partitioned by p (10 partitions), 4 appends of 100 rows: 4 small files per partition."""
    url = f"iceberg+sqlite:///{folder}/catalog.db"
    catalog = open_catalog(LakeLocation.from_url(url), create=True)
    catalog.create_namespace("ns")
    table = catalog.create_table(
        ("ns", "t"),
        schema=SCHEMA,
        partition_spec=PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "p")),
        properties={"format-version": "2"},
    )
    rows = []
    for first in range(0, 400, 100):
        batch = [{"id": i, "p": f"p{i % 10}"} for i in range(first, first + 100)]
        table.append(pa.Table.from_pylist(batch, schema=ARROW))
        rows += batch
    return url, table, rows


def _start(mode: str, url: str, stop: Path, parts: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.Popen(
        [sys.executable, "-c", RACER, mode, url, str(stop), ",".join(parts)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _finish(racer: subprocess.Popen[str], stop: Path) -> list[dict[str, Any]]:
    stop.touch()
    try:
        out, err = racer.communicate(timeout=240)
    finally:
        racer.kill()
    assert racer.returncode == 0, err[-2000:]
    return [json.loads(line) for line in out.splitlines()]


def _rows(spark: Any, url: str, table: Any) -> list[tuple[int, str]]:
    """The rows as Sluice reads them through Spark, checked equal to PyIceberg's."""
    from sluice import Federation

    fed = Federation(spark=spark)
    fed.attach("lkiso", url)
    sluice = sorted((r.id, r.p) for r in fed.sql("SELECT id, p FROM lkiso.ns.t").collect())
    table.refresh()
    assert sorted((r["id"], r["p"]) for r in table.scan().to_arrow().to_pylist()) == sluice
    return sluice


def _one_line_naming(message: str, operations: tuple[str, ...]) -> None:
    assert "\n" not in message, message
    assert "conflicts with" in message and "nothing was committed" in message, message
    assert any(f"({operation}" in message for operation in operations), message


def _delete(spark: Any, url: str, k: int) -> bool:
    """Sluice's copy-on-write DELETE of ``id % 5 = k`` (every partition's files rewritten);
    False when it lost to a concurrent commit (checked to say so in one line)."""
    from sluice.lake.delete_rows import DeleteCondition, delete_rows

    try:
        delete_rows(spark, url, "ns", "t", DeleteCondition(f"id % 5 = {k}"), lambda _: None)
    except SluiceError as error:
        _one_line_naming(str(error), ("append", "overwrite", "replace", "delete"))
        return False
    return True


def test_deletes_race_a_process_appending(spark, tmp_path) -> None:
    url, table, rows = _table(tmp_path)
    racer = _start("append", url, tmp_path / "stop", [])
    try:
        committed = [k for k in range(3) if _delete(spark, url, k)]
    finally:
        lines = _finish(racer, tmp_path / "stop")
    appended: list[dict[str, Any]] = [
        {"id": i, "p": f"p{i % 10}"} for line in lines for i in range(line["appended"], line["appended"] + 10)
    ]
    assert appended, "the appending process appended nothing: the race was not run"
    # an appended row (id >= 100000) matching a committed delete's condition may be deleted by it only
    # if it landed before that delete's read; the others are all there, and no deleted row came back
    expected = sorted((r["id"], r["p"]) for r in rows if r["id"] % 5 not in committed)
    got = _rows(spark, url, table)
    assert [r for r in got if r[0] < 100_000] == expected
    kept_appends = {r[0] for r in got if r[0] >= 100_000}
    assert {r["id"] for r in appended if r["id"] % 5 not in committed} <= kept_appends
    assert kept_appends <= {r["id"] for r in appended}


def test_deletes_race_a_process_deleting_partitions(spark, tmp_path) -> None:
    url, table, rows = _table(tmp_path)
    racer = _start("delete", url, tmp_path / "stop", PARTS[:5])
    try:
        committed = [k for k in range(3) if _delete(spark, url, k)]
    finally:
        lines = _finish(racer, tmp_path / "stop")
    deleted = {line["deleted"] for line in lines if "deleted" in line}
    assert deleted == set(PARTS[:5]), lines  # each partition's delete landed, after retries if it lost
    for line in lines:
        if "failed" in line:
            _one_line_naming(line["error"], ("overwrite",))
    expected = sorted((r["id"], r["p"]) for r in rows if r["p"] not in deleted and r["id"] % 5 not in committed)
    assert _rows(spark, url, table) == expected


def test_optimize_races_a_process_deleting_partitions(spark, tmp_path) -> None:
    from sluice.lake.maintenance import optimize

    url, table, rows = _table(tmp_path)
    racer = _start("delete", url, tmp_path / "stop", PARTS[:6])
    outcomes = []
    try:
        for _ in range(3):
            try:
                outcomes.append(optimize(spark, url, "ns", "t", report=lambda _: None))
            except SluiceError as error:
                message = str(error)
                assert "\n" not in message and "(overwrite" in message and "run optimize again" in message, message
                outcomes.append(None)
    finally:
        lines = _finish(racer, tmp_path / "stop")
    deleted = {line["deleted"] for line in lines if "deleted" in line}
    assert deleted == set(PARTS[:6]), lines
    for line in lines:
        if "failed" in line:  # a partition delete that lost to the optimize's replace, planned again
            _one_line_naming(line["error"], ("replace",))
    # no deleted partition brought back by a rewrite, no row of the others lost
    assert _rows(spark, url, table) == sorted((r["id"], r["p"]) for r in rows if r["p"] not in deleted)
    assert any(outcome is not None for outcome in outcomes), "no optimize committed"
