"""One query prunes its lake table once, and no cached plan outlives the snapshot it was made for.

The planner asks for a scan's pruning pyramid when it chooses the reader, when it plans and
when it makes the read tasks; the pruning and the parsed table are kept per process, keyed by
the table's metadata file. These tests count how often the real pruning and the real table
load run (by wrapping them), and commit between plans to check nothing stale is answered.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pyarrow as pa
import pytest
import sqlglot
from sqlglot import exp

from sluice.lake import catalog as lake_catalog
from sluice.lake import pyramid
from sluice.lake.catalog import LakeLocation, open_catalog
from sluice.lake.vectorised import Mode
from sluice.pushdown.pushed import Pushed
from sluice.scan.spec import ScanSpec
from sluice.sources import open_source
from sluice.sources.iceberg import IcebergSource
from sluice.types import AsOf
from tests.pyramids import pyramid_of
from tests.small_lake import small_lake


@pytest.fixture()
def lake(tmp_path: Path) -> str:
    return small_lake(tmp_path, pa.table({"id": pa.array([1, 2, 3], pa.int64()), "x": [0.5, float("nan"), None]}))


def _counted(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    """Wrap ``module.name`` so each real call is counted (the call itself runs unchanged)."""
    calls = [0]
    original: Callable[..., Any] = getattr(module, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return calls


def _spec(
    source: IcebergSource, columns: tuple[str, ...], where: tuple[str, ...] = (), as_of: AsOf | None = None
) -> ScanSpec:
    table = source.describe("ns", "t") if as_of is None else source.describe_as_of("ns", "t", as_of)
    pushed = tuple(Pushed(tree=cast(exp.Expression, sqlglot.parse_one(text, read="duckdb"))) for text in where)
    return ScanSpec.for_source(source, table, columns, where=pushed, partitions=2)


def _ids(source: IcebergSource, spec: ScanSpec) -> list[int]:
    return sorted(i for task in source.tasks(spec) for batch in source.read(task) for i in batch.column(0).to_pylist())


def _source(url: str) -> IcebergSource:
    source = open_source("lake", url)
    assert isinstance(source, IcebergSource)
    return source


def test_one_scan_prunes_once_for_the_reader_choice_the_plan_and_the_tasks(
    lake: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pruned = _counted(monkeypatch, pyramid, "_prune")
    loaded = _counted(monkeypatch, lake_catalog, "load_table")
    source = _source(lake)
    where = ('"id" >= 2',)
    # the filters callback asks about every column; the plan and the tasks about the columns read
    source.reader_choice(_spec(source, ("id", "x"), where), mode=Mode())
    spec = _spec(source, ("id",), where)
    choice, _ = source.reader_choice(spec, mode=Mode())
    assert choice.reader == "python"  # a three-row table
    tasks = source.tasks(spec)
    assert pyramid_of(source, spec).bytes_read < pyramid_of(source, _spec(source, ("id", "x"), where)).bytes_read
    assert pruned[0] == 1
    assert loaded[0] == 1  # the metadata file is parsed once, however often the table is asked for
    assert sorted(i for task in tasks for batch in source.read(task) for i in batch.column(0).to_pylist()) == [2, 3]
    # other conjuncts: pruned anew (NaN > 0.1 in Spark)
    assert _ids(source, _spec(source, ("id",), ("\"x\" > CAST('0.1' AS DOUBLE)",))) == [1, 2]
    assert pruned[0] == 2 and loaded[0] == 1


def test_a_commit_between_two_plans_is_seen(lake: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Appends, deletes and schema changes each write a new metadata file: the next plan prunes it."""
    from pyiceberg.types import LongType

    pruned = _counted(monkeypatch, pyramid, "_prune")
    source = _source(lake)
    where = ('"id" >= 2',)
    first = source.describe("ns", "t").row_estimate
    assert _ids(source, _spec(source, ("id",), where)) == [2, 3]
    table = open_catalog(LakeLocation.from_url(lake)).load_table(("ns", "t"))
    old = table.current_snapshot()
    assert old is not None
    table.append(pa.table({"id": pa.array([4, 5], pa.int64()), "x": [1.0, 2.0]}))
    assert _ids(source, _spec(source, ("id",), where)) == [2, 3, 4, 5]
    table.delete("id = 3")
    assert _ids(source, _spec(source, ("id",), where)) == [2, 4, 5]
    with table.update_schema() as update:
        update.add_column("extra", LongType())
    spec = _spec(source, ("id", "extra"), where)
    assert [c.name for c in spec.table.columns] == ["id", "x", "extra"]
    assert _ids(source, spec) == [2, 4, 5]
    # time travel still reads the snapshot it names, through the same caches
    assert _ids(source, _spec(source, ("id",), where, AsOf(snapshot_id=old.snapshot_id))) == [2, 3]
    assert first == 3 and pruned[0] == 5


def test_a_pinned_snapshot_and_the_current_one_are_pruned_apart(lake: str) -> None:
    source = _source(lake)
    table = open_catalog(LakeLocation.from_url(lake)).load_table(("ns", "t"))
    old = table.current_snapshot()
    assert old is not None
    table.append(pa.table({"id": pa.array([4], pa.int64()), "x": [1.0]}))
    now = pyramid_of(source, _spec(source, ("id",)))
    then = pyramid_of(source, _spec(source, ("id",), as_of=AsOf(snapshot_id=old.snapshot_id)))
    assert then.snapshot_id == old.snapshot_id != now.snapshot_id
    assert (len(then.reads), len(now.reads)) == (1, 2)
    assert json.loads(json.dumps(now.to_dict()))["tiers"][-1]["rows_kept"] == 4
