"""Through Spark: a lake query prunes its table once, and a commit between two queries is seen.

Spark asks the planner about one lake scan several times (the filters it offers, the plan,
the read tasks; the optimizer replays some): the pruning pyramid is computed once per query
(counted by wrapping the real pruning, never timed), and the next query after a commit reads
the new snapshot, not a remembered plan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from sluice import Federation
from sluice.lake import pyramid
from sluice.lake.catalog import LakeLocation, open_catalog
from tests.small_lake import small_lake

pytestmark = pytest.mark.integration

ROWS = 1_000


def _rows(first: int, count: int) -> pa.Table:
    ids = list(range(first, first + count))
    return pa.table({"id": pa.array(ids, pa.int64()), "x": [float("nan") if i % 7 == 0 else i / 10 for i in ids]})


@pytest.fixture()
def lake(tmp_path: Path) -> str:
    return small_lake(tmp_path, _rows(0, ROWS // 2), _rows(ROWS // 2, ROWS // 2))


@pytest.fixture()
def fed(spark, lake: str) -> Iterator[Federation]:
    federation = Federation(spark=spark)
    federation.attach("plan_once", lake)
    yield federation
    spark.conf.unset("spark.sluice.lakeReader")
    federation.detach("plan_once")


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the real pruning runs (each still runs unchanged)."""
    calls = [0]
    original: Callable[..., Any] = pyramid._prune

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(pyramid, "_prune", counting)
    return calls


@pytest.mark.parametrize("reader", ["auto", "python", "vectorised"])
def test_one_query_prunes_its_table_once(fed: Federation, monkeypatch: pytest.MonkeyPatch, reader: str) -> None:
    """auto reads this small scan on the driver; python through Spark's Python data source;
    vectorised through Spark's Parquet reader (its filters offered INEXACT)."""
    fed.spark.conf.set("spark.sluice.lakeReader", reader)
    pruned = _counted(monkeypatch)
    rows = fed.sql("SELECT id, x FROM plan_once.ns.t WHERE id >= 900 AND x > 95.0").collect()
    assert sorted(r.id for r in rows) == [i for i in range(900, ROWS) if i % 7 == 0 or i / 10 > 95.0]
    assert pruned[0] == 1
    fed.sql("SELECT id FROM plan_once.ns.t WHERE id >= 900 AND x > 95.0").collect()  # the same pruning, fewer columns
    assert pruned[0] == 1


def test_a_commit_between_two_queries_is_seen(fed: Federation, lake: str) -> None:
    """Appended rows and deleted rows both show in the next query, through every cache."""
    query = "SELECT id FROM plan_once.ns.t WHERE id >= 990"
    assert sorted(r.id for r in fed.sql(query).collect()) == list(range(990, ROWS))
    table = open_catalog(LakeLocation.from_url(lake)).load_table(("ns", "t"))
    table.append(_rows(ROWS, 5))
    assert sorted(r.id for r in fed.sql(query).collect()) == list(range(990, ROWS + 5))
    table.delete("id = 995")
    assert sorted(r.id for r in fed.sql(query).collect()) == [i for i in range(990, ROWS + 5) if i != 995]
    assert fed.sql("SELECT count(*) AS n FROM plan_once.ns.t").collect()[0].n == ROWS + 4
