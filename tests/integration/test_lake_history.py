"""A lake table's history: time travel, schema evolution by field id, copy-on-write deletes.

One PyIceberg table lives through appends, a schema change (a column renamed, one added,
one dropped), a delete and an overwrite. After each step the expected rows are kept (as
Arrow, in the schema of that moment); every snapshot is then read back through the
catalog (``VERSION AS OF`` / ``TIMESTAMP AS OF``) and through ``format("sluice")``, and
compared with Spark evaluating the same queries over the kept rows as a plain DataFrame,
and with the reference path (pushdown off). Edge values: NULL, NaN, -0.0, '', trailing
spaces, mixed case, non-ASCII, extreme longs, decimals, timestamps.
"""

from __future__ import annotations

import datetime as dt
import decimal
import random
import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest

from sluice.errors import TimeTravelError
from sluice.lake.catalog import LakeLocation, open_catalog

pytestmark = pytest.mark.integration

UTC = dt.timezone.utc
ARROW = pa.schema(
    [
        pa.field("id", pa.int64()),
        pa.field("x", pa.float64()),
        pa.field("s", pa.string()),
        pa.field("amount", pa.decimal128(18, 4)),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("n", pa.int32()),
    ]
)
TEXTS = ["", "a ", "A", "Zürich", "MiXed", "naïve  ", None]
FLOATS = [float("nan"), -0.0, 0.0, 1.5, -2.25, float("inf"), float("-inf"), None]


def _rows(count: int, seed: int, first: int) -> pa.Table:
    rng = random.Random(seed)
    ids: list[int | None] = [first + i for i in range(count)]
    ids[:3] = [-(2**63), 2**63 - 1, None] if first == 0 else ids[:3]
    return pa.table(
        {
            "id": ids,
            "x": [rng.choice(FLOATS) for _ in ids],
            "s": [rng.choice(TEXTS) for _ in ids],
            "amount": [rng.choice([None, decimal.Decimal(rng.randrange(-(10**8), 10**8)) / 10**4]) for _ in ids],
            "ts": [
                rng.choice(
                    [None, dt.datetime(2025, 3, 9, 6, 59, 59, 999999, UTC) + dt.timedelta(hours=rng.randrange(48))]
                )
                for _ in ids
            ],
            "n": [rng.choice([None, -(2**31), 2**31 - 1, 0, 7]) for _ in ids],
        },
        schema=ARROW,
    )


def _renamed(rows: pa.Table) -> pa.Table:
    """Rows of the evolved schema: s renamed label, n dropped, extra added (NULL in old rows)."""
    return pa.table(
        {
            "id": rows["id"],
            "x": rows["x"],
            "label": rows["s"],
            "amount": rows["amount"],
            "ts": rows["ts"],
            "extra": pa.nulls(rows.num_rows, pa.int64()),
        }
    )


@pytest.fixture(scope="module")
def history(spark, tmp_path_factory):
    """The lake table after every step, with each snapshot's id, time and expected rows."""
    from pyiceberg.expressions import EqualTo, GreaterThanOrEqual

    folder = tmp_path_factory.mktemp("lakehistory")
    url = f"iceberg+sqlite:///{folder}/catalog.db"
    catalog = open_catalog(LakeLocation.from_url(url), create=True)
    catalog.create_namespace("hist")
    table = catalog.create_table(("hist", "t"), schema=ARROW)
    kept: list[tuple[int, int, pa.Table]] = []

    def remember(rows: pa.Table) -> None:
        snapshot = table.current_snapshot()
        assert snapshot is not None
        kept.append((snapshot.snapshot_id, snapshot.timestamp_ms, rows))

    first = _rows(40, 1, 0)
    table.append(first)
    remember(first)
    second = _rows(60, 2, 1000)
    table.append(second)
    remember(pa.concat_tables([first, second]))

    with table.update_schema() as update:
        update.rename_column("s", "label")
        update.add_column("extra", __import__("pyiceberg.types", fromlist=["LongType"]).LongType())
        update.delete_column("n")
    third = _renamed(_rows(30, 3, 2000)).set_column(5, "extra", pa.array(range(30), pa.int64()))
    table.append(third)
    before = pa.concat_tables([_renamed(first), _renamed(second), third])
    remember(before)

    table.delete(GreaterThanOrEqual("id", 1030))  # type: ignore[call-arg,arg-type]  # pyiceberg's pydantic fields hide its (term, literal) __init__; copy-on-write: PyIceberg 0.12 rewrites the files
    ids = before["id"].to_pylist()
    remember(before.filter(pa.array([i is None or i < 1030 for i in ids])))
    table.delete(EqualTo("label", ""))  # type: ignore[call-arg,arg-type]  # pyiceberg's pydantic fields hide its (term, literal) __init__
    last = kept[-1][2]
    remember(last.filter(pa.array([s != "" for s in last["label"].to_pylist()])))

    fourth = _renamed(_rows(25, 4, 3000))
    table.overwrite(fourth)
    remember(fourth)

    from sluice import Federation

    fed = Federation(spark=spark)
    fed.attach("hlake", url)
    return fed, url, kept


def _answer(frame) -> list[tuple]:
    """Rows in a comparable form (NaN equal to itself), sorted."""
    return sorted((tuple("NaN" if v != v else v for v in row) for row in frame.collect()), key=repr)


QUERIES = [
    "SELECT * FROM {t}",
    "SELECT id, {s} FROM {t} WHERE x > 0",
    "SELECT id FROM {t} WHERE x = 0",
    "SELECT id, x FROM {t} WHERE isnan(x) OR x IS NULL",
    "SELECT id FROM {t} WHERE {s} = 'a ' OR {s} = ''",
    "SELECT id FROM {t} WHERE {s} LIKE 'Z%' OR {s} > 'M'",
    "SELECT id FROM {t} WHERE id < 0 OR id > 2000",
    "SELECT id FROM {t} WHERE amount > 0 AND ts >= TIMESTAMP '2025-03-10 00:00:00'",
    "SELECT count(*), min(id), max(id), max(ts) FROM {t}",
    "SELECT count(*) FROM {t} WHERE id >= 1000",
    "SELECT {s}, count(*), sum(amount) FROM {t} GROUP BY {s}",
]


def _differential(spark, fed, table: str, expected: pa.Table) -> int:
    """Every query over ``table`` (a time-travel reference) as Spark answers it over ``expected``."""
    spark.createDataFrame(expected).createOrReplaceTempView("hist_expected")
    label = "label" if "label" in expected.column_names else "s"
    for query in QUERIES:
        lake = fed.sql(query.format(t=table, s=label))
        want = _answer(spark.sql(query.format(t="hist_expected", s=label)))
        assert _answer(lake) == want, f"{query} over {table}"
        assert _answer(fed.sql(query.format(t=table, s=label), pushdown=False)) == want, f"{query} (reference)"
    return len(QUERIES)


def test_every_snapshot_reads_as_spark_over_its_remembered_rows(spark, history) -> None:
    fed, _, kept = history
    checked = 0
    for snapshot_id, _, rows in kept:
        checked += _differential(spark, fed, f"hlake.hist.t VERSION AS OF {snapshot_id}", rows)
    # the current table is the last snapshot
    checked += _differential(spark, fed, "hlake.hist.t", kept[-1][2])
    assert checked == len(QUERIES) * (len(kept) + 1)


def test_timestamp_as_of_reads_the_snapshot_current_then(spark, history) -> None:
    fed, _, kept = history
    for _, at_ms, rows in kept[:3]:
        _differential(spark, fed, f"hlake.hist.t TIMESTAMP AS OF timestamp_millis({at_ms})", rows)


def test_an_old_snapshot_shows_its_own_schema(history) -> None:
    fed, _, kept = history
    old = fed.sql(f"SELECT * FROM hlake.hist.t VERSION AS OF {kept[0][0]}")
    assert old.columns == ["id", "x", "s", "amount", "ts", "n"]
    assert fed.sql("SELECT * FROM hlake.hist.t").columns == ["id", "x", "label", "amount", "ts", "extra"]


def test_the_reader_option_names_the_snapshot(spark, history) -> None:
    _, url, kept = history
    snapshot_id, at_ms, rows = kept[1]
    by_id = spark.read.format("sluice").option("url", url).option("table", "hist.t").option("snapshot-id", snapshot_id)
    assert by_id.load().count() == rows.num_rows
    at = spark.read.format("sluice").option("url", url).option("table", "hist.t").option("as-of-timestamp", at_ms)
    assert _answer(at.load()) == _answer(spark.createDataFrame(rows))


def test_explain_names_the_snapshot_read(history) -> None:
    fed, _, kept = history
    snapshot_id = kept[0][0]
    text = fed.explain(f"SELECT id FROM hlake.hist.t VERSION AS OF {snapshot_id} WHERE x > 0")
    assert f"snapshot {snapshot_id}" in text and f"AS OF SNAPSHOT {snapshot_id}" in text
    (pyramid,) = fed.pruning(f"SELECT id FROM hlake.hist.t VERSION AS OF {snapshot_id} WHERE id > 5").values()
    assert pyramid.snapshot_id == snapshot_id and pyramid.table_rows == kept[0][2].num_rows


def test_pruning_follows_a_renamed_column_by_field_id(history) -> None:
    """Old files hold ``label`` as ``s``: its statistics still prune (by id), and keep every match."""
    fed, _, kept = history
    (pyramid,) = fed.pruning("SELECT id FROM hlake.hist.t WHERE label = 'zzz-nothing'").values()
    assert pyramid.tiers[-1].kept < pyramid.tiers[-1].total or pyramid.tiers[2].kept < pyramid.tiers[2].total
    (pyramid,) = fed.pruning(f"SELECT id FROM hlake.hist.t VERSION AS OF {kept[2][0]} WHERE label = 'A'").values()
    assert pyramid.tiers[-1].kept >= 1


def test_unknown_snapshots_name_the_table_and_what_exists(history) -> None:
    fed, _, kept = history
    with pytest.raises(
        TimeTravelError, match=rf"lake table hlake\.hist\.t has no snapshot 42 \(snapshots: .*{kept[0][0]}"
    ):
        fed.sql("SELECT * FROM hlake.hist.t VERSION AS OF 42").collect()
    with pytest.raises(TimeTravelError, match=r"no snapshot at or before 2001-.*snapshots: "):
        fed.sql("SELECT * FROM hlake.hist.t TIMESTAMP AS OF TIMESTAMP '2001-01-01 00:00:00'").collect()


def test_time_travel_is_only_for_lake_tables(spark, tmp_path: Path) -> None:
    from sluice import Federation

    path = tmp_path / "plain.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (id INTEGER)")
    fed = Federation(spark=spark)
    fed.attach("histlite", f"sqlite:///{path}")
    with pytest.raises(TimeTravelError, match=r"source 'histlite'.*time travel \(VERSION AS OF 3\) is only for lake"):
        fed.sql("SELECT * FROM histlite.t VERSION AS OF 3").collect()


@pytest.fixture
def lake_reader(spark, request):
    """The session's lake reader forced to ``request.param`` (sluice/lake/vectorised.py) for one test."""
    spark.conf.set("spark.sluice.lakeReader", request.param)
    yield request.param
    spark.conf.unset("spark.sluice.lakeReader")


READERS = {
    "vectorised": "Reader: Spark's vectorised Parquet reader",
    "python": "Reader: row-group-precise Python reader",
}


@pytest.mark.parametrize("lake_reader", list(READERS), indirect=True)
def test_both_readers_read_every_snapshot_as_spark(spark, history, lake_reader: str) -> None:
    """The same queries through Spark's vectorised Parquet reader and through the Python reader:
    every snapshot (renamed, added and dropped columns, copy-on-write deletes), edge values."""
    fed, _, kept = history
    for snapshot_id, _, rows in kept:
        _differential(spark, fed, f"hlake.hist.t VERSION AS OF {snapshot_id}", rows)
    _differential(spark, fed, "hlake.hist.t", kept[-1][2])
    for query in ("SELECT id, label, x FROM hlake.hist.t WHERE x > 0", "SELECT * FROM hlake.hist.t"):
        text = fed.explain(query)
        assert READERS[lake_reader] in text, text
    # the vectorised reader applies no conjunct: Spark keeps its Filter over the scan
    plan = fed.sql("SELECT id FROM hlake.hist.t WHERE x > 0")._jdf.queryExecution().executedPlan().toString()
    assert ("Filter (" in plan) == (lake_reader == "vectorised"), plan


def test_a_small_table_is_read_by_the_python_reader_on_the_driver(history) -> None:
    fed, _, _ = history
    small = fed.explain("SELECT id, label FROM hlake.hist.t")  # 25 rows
    assert READERS["python"] in small and "small: pruning keeps 25 rows" in small, small
