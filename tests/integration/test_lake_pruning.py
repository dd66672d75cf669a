"""The pruning pyramid against an independent reading of the same Parquet footers.

Two copies of one telemetry table: *clustered* (rows sorted by payload_id, ts within
each file, as the ingestion pipeline writes them) and *unclustered* (random order). For
selective predicates on each partition transform and on the clustering column, the row
groups the pyramid keeps must be exactly those whose footer statistics admit the
predicate, computed here from the footers with plain Python; clustering must prune far
more; and every result must equal the read with pushdown off.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sluice.lake.catalog import LakeLocation, open_catalog
from sluice.lake.telemetry import create_readings, schema
from tests.null_partitions import TRANSFORMS, write_tables

pytestmark = pytest.mark.integration

ROWS = 24_000
START = dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc)
#: selective predicates: on the clustering column and on each partition transform
CASES = {
    "payload range (clustering column)": "payload_id BETWEEN 40 AND 44",
    "mission (identity partition)": "mission_id = 2",
    # the test session's zone is America/New_York (UTC-5 until 8 March): 19:00 there is midnight UTC
    "one day (day partition)": "ts >= TIMESTAMP '2026-03-02 19:00:00' AND ts < TIMESTAMP '2026-03-03 19:00:00'",
    "one payload (bucket partition)": "payload_id = 17",
}


def _rows(seed: int) -> pa.Table:
    rng = random.Random(seed)
    data = []
    for _ in range(ROWS):
        ts = START + dt.timedelta(seconds=rng.randrange(0, 6 * 86400))
        data.append(
            {
                "mission_id": rng.randint(1, 3),
                "payload_id": rng.randrange(0, 120),
                "sensor": rng.choice(["volt", "temp", "gyro"]),
                "ts": ts,
                "day": ts.date(),
                "voltage": rng.choice([None, float("nan"), rng.uniform(0, 30)]),
                "temperature": rng.uniform(-50, 50),
                "status": rng.choice(["OK", "WARN", "FAULT"]),
                "message": "",
            }
        )
    return pa.Table.from_pylist(data, schema=schema().as_arrow())


@pytest.fixture(scope="module")
def lake(tmp_path_factory, spark):
    from sluice import Federation

    folder: Path = tmp_path_factory.mktemp("lake")
    location = LakeLocation.from_url(f"iceberg+sqlite:///{folder}/catalog.db")
    catalog = open_catalog(location, create=True)
    rows = _rows(3)
    for name, arrow in (
        ("clustered", rows.sort_by([("payload_id", "ascending"), ("ts", "ascending")])),
        ("unclustered", rows),
    ):
        table = create_readings(catalog, "telemetry", name)
        with table.transaction() as tx:
            tx.set_properties({"write.parquet.row-group-limit": "50"})
        catalog.load_table(("telemetry", name)).append(arrow)
    fed = Federation(spark=spark)
    fed.attach("lake", location.url)
    return fed, catalog


def _expected_row_groups(catalog, table_name: str, predicate: str) -> set[tuple[str, int]]:
    """Row groups whose footer statistics admit ``predicate``, read with plain pyarrow."""
    from pyiceberg.transforms import BucketTransform
    from pyiceberg.types import LongType

    table = catalog.load_table(("telemetry", table_name))
    bucket_of = BucketTransform(4).transform(LongType())
    kept = set()
    for data_file in table.inspect.files().to_pylist():
        partition = data_file["partition"]
        path = data_file["file_path"]
        if predicate.startswith("mission_id") and partition["mission_id"] != 2:
            continue
        if predicate.startswith("ts >=") and partition["ts_day"] != dt.date(2026, 3, 3):  # one UTC day
            continue
        if predicate == "payload_id = 17" and partition["payload_id_bucket"] != bucket_of(17):
            continue
        if predicate.startswith("payload_id BETWEEN") and partition["payload_id_bucket"] not in {
            bucket_of(v) for v in range(40, 45)
        }:
            continue  # a narrow range prunes buckets as the set of its values
        metadata = pq.read_metadata(path.removeprefix("file://"))
        names = [metadata.schema.column(i).name for i in range(metadata.num_columns)]
        for index in range(metadata.num_row_groups):
            stats = metadata.row_group(index).column(names.index("payload_id")).statistics
            if predicate.startswith("payload_id BETWEEN") and (stats.max < 40 or stats.min > 44):
                continue
            if predicate == "payload_id = 17" and not stats.min <= 17 <= stats.max:
                continue
            kept.add((path, index))
    return kept


@pytest.mark.parametrize("table_name", ["clustered", "unclustered"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_kept_row_groups_are_exactly_those_the_footers_admit(lake, table_name: str, case: str) -> None:
    fed, catalog = lake
    query = f"SELECT mission_id, payload_id, ts, voltage FROM lake.telemetry.{table_name} WHERE {CASES[case]}"
    (pyramid,) = fed.pruning(query).values()
    kept = {(read.path, group) for read in pyramid.reads for group in read.row_groups}
    assert kept == _expected_row_groups(catalog, table_name, CASES[case])
    on, off = _answer(fed.sql(query)), _answer(fed.sql(query, pushdown=False))
    assert on == off and on


def _answer(frame) -> list[tuple]:
    """Rows in a comparable form: NaN (unequal to itself in Python, equal in Spark) as a marker."""
    marked = [tuple("<NaN>" if isinstance(v, float) and math.isnan(v) else v for v in row) for row in frame.collect()]
    return sorted(marked, key=repr)


def test_clustering_prunes_row_groups_that_random_order_cannot(lake) -> None:
    fed, _ = lake
    kept = {}
    for name in ("clustered", "unclustered"):
        (pyramid,) = fed.pruning(
            f"SELECT voltage FROM lake.telemetry.{name} WHERE payload_id BETWEEN 40 AND 44"
        ).values()
        groups = pyramid.tiers[-1]
        kept[name] = groups.kept / groups.total
    assert kept["clustered"] < 0.35 and kept["unclustered"] > 0.9, kept


def test_identity_and_day_partitions_decide_whole_files(lake) -> None:
    """Predicates entirely on identity/day partitions: every kept file matches entirely and
    is read without a row filter; a bucketed column's range prunes no partition."""
    fed, _ = lake
    (whole,) = fed.pruning(
        f"SELECT voltage FROM lake.telemetry.clustered WHERE mission_id = 2 AND {CASES['one day (day partition)']}"
    ).values()
    assert whole.reads and whole.unfiltered_files == len(whole.reads)
    assert {c.partition for c in whole.conjuncts} == {"exact"}
    (bucketed,) = fed.pruning("SELECT voltage FROM lake.telemetry.clustered WHERE payload_id > 100").values()
    assert bucketed.tiers[1].kept == bucketed.tiers[1].total and _on(bucketed, "100").partition == "none"
    (equal,) = fed.pruning("SELECT voltage FROM lake.telemetry.clustered WHERE payload_id = 17").values()
    assert equal.tiers[1].kept < equal.tiers[1].total / 3 and _on(equal, "17").partition == "conservative"


def _on(pyramid, constant: str):
    """The conjunct comparing with ``constant`` (Spark offers its implied IS NOT NULL beside it)."""
    (conjunct,) = [c for c in pyramid.conjuncts if constant in c.sql]
    return conjunct


def test_explain_plot_writes_a_picture(lake, tmp_path) -> None:
    from sluice.lake.plot import write_pyramid_png

    fed, _ = lake
    path = tmp_path / "pyramid.png"
    write_pyramid_png(
        fed.pruning("SELECT voltage FROM lake.telemetry.clustered WHERE payload_id BETWEEN 40 AND 44"), str(path)
    )
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
    text = fed.explain("SELECT voltage FROM lake.telemetry.clustered WHERE mission_id = 2")
    assert "pruning pyramid" in text and "row groups" in text


def test_a_lake_reads_the_same_under_any_attach_name(lake, spark) -> None:
    """PyIceberg's SQL catalog keys tables by the catalog's name: it must come from the URL,
    not from the name the source is attached under (or the DataFrame API's 'sluice')."""
    fed, _ = lake
    url = fed._sources["lake"].url
    fed.attach("archive", url)
    frame = spark.read.format("sluice").option("url", url).option("table", "telemetry.clustered").load()
    counts = {
        fed.sql(f"SELECT count(*) FROM {name}.telemetry.clustered").collect()[0][0] for name in ("lake", "archive")
    }
    assert counts == {frame.count()} == {ROWS}


#: partition values a writer escapes in directory names (PyIceberg: ``s=%5C``, ``s=a%2Fb``, ``s=x+y%25``)
ESCAPED_VALUES = ["\\", "a/b", "x y%", "%5C", "q?#", "é", "", None]


def test_partition_values_escaped_in_paths_are_read_from_the_paths_written(lake, tmp_path) -> None:
    """Data file paths are taken literally: percent-decoding ``s=%5C`` opened a missing file
    (found by the differential fuzzer: a table with a ``\\`` partition could not be read)."""
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType

    fed, catalog = lake
    catalog.create_namespace_if_not_exists("odd")
    fields = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "s", StringType(), required=False))
    table = catalog.create_table(
        ("odd", "escaped"),
        schema=fields,
        partition_spec=PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "s")),
    )
    table.append(
        pa.table({"id": pa.array(range(len(ESCAPED_VALUES)), pa.int64()), "s": pa.array(ESCAPED_VALUES, pa.string())})
    )
    paths = [task.file.file_path for task in table.scan().plan_files()]
    assert any("%5C" in p for p in paths), paths  # the layout this test is about
    expected = sorted((r["id"], r["s"]) for r in table.scan().to_arrow().to_pylist())
    assert sorted(fed.sql("SELECT id, s FROM lake.odd.escaped").collect()) == expected
    for value in ("\\", "a/b", "%5C", "q?#"):
        literal = value.replace("\\", "\\\\").replace("'", "\\'")
        query = f"SELECT id FROM lake.odd.escaped WHERE s = '{literal}'"
        on = fed.sql(query).collect()
        assert (
            [r.id for r in on]
            == [ESCAPED_VALUES.index(value)]
            == [r.id for r in fed.sql(query, pushdown=False).collect()]
        ), value


def test_a_narrow_range_prunes_buckets_and_returns_the_rows_of_pushdown_off(lake) -> None:
    """The bucket pruning of a narrow integer range (its values as a set), through Spark:
    only files of the values' buckets are kept, and the rows equal pushdown off."""
    from pyiceberg.transforms import BucketTransform
    from pyiceberg.types import LongType

    fed, catalog = lake
    query = (
        "SELECT mission_id, payload_id, ts, voltage FROM lake.telemetry.clustered WHERE payload_id BETWEEN 17 AND 18"
    )
    (pyramid,) = fed.pruning(query).values()
    bucket_of = BucketTransform(4).transform(LongType())
    buckets = {
        f["file_path"]: f["partition"]["payload_id_bucket"]
        for f in catalog.load_table(("telemetry", "clustered")).inspect.files().to_pylist()
    }
    assert {buckets[read.path] for read in pyramid.reads} <= {bucket_of(17), bucket_of(18)}
    assert pyramid.tiers[1].kept < pyramid.tiers[1].total
    on, off = _answer(fed.sql(query)), _answer(fed.sql(query, pushdown=False))
    assert on == off and on


#: Spark SQL over partition columns holding NULLs, AND/OR/NOT shapes (the session zone is
#: America/New_York: 00:00 there is 05:00 UTC)
NULL_PARTITION_QUERIES = [
    "a > 5 OR b = 3",
    "NOT (a > 5 OR b = 3)",
    "(a < 5 OR b IS NULL) AND NOT (b = 1)",
    "a IN (1, 2, 7) OR b > 3",
    "s > 'v3' OR b = 3",
    "NOT (s < 'v2' AND b IS NOT NULL)",
    "ts > TIMESTAMP '2026-03-03 00:00:00' OR b = 3",
    "NOT (ts <= TIMESTAMP '2026-03-03 00:00:00') AND (a > 5 OR b IS NULL)",
    "d >= DATE '2026-03-04' OR a < 3",
    "NOT (d < DATE '2026-03-04' OR b = 3)",
]


@pytest.mark.parametrize("table", sorted(TRANSFORMS))
def test_null_partition_values_answer_as_pushdown_off(lake, table: str) -> None:
    """NULL partition values under every transform: an OR over partition columns crashed
    planning (``'>' not supported between 'NoneType' and 'int'``); every shape must return
    the rows of pushdown off."""
    fed, catalog = lake
    if ("np",) not in catalog.list_namespaces():
        write_tables(catalog, "np")
    for condition in NULL_PARTITION_QUERIES:
        query = f"SELECT id FROM lake.np.{table} WHERE {condition}"
        on, off = _answer(fed.sql(query)), _answer(fed.sql(query, pushdown=False))
        assert on == off, condition


READERS = {
    "vectorised": "Reader: Spark's vectorised Parquet reader",
    "python": "Reader: row-group-precise Python reader",
}
#: CASES, plus NaN, NULL and negation over the float column, wide and narrow
READ_CASES = [
    *CASES.values(),
    "voltage > 10",
    "NOT (voltage > 10)",
    "isnan(voltage) OR voltage IS NULL",
    "status <> 'OK' AND payload_id < 60",
    "temperature = -0.0 OR sensor = ''",
]


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("table_name", ["clustered", "unclustered"])
def test_both_readers_return_what_spark_returns_over_the_same_rows(lake, spark, reader: str, table_name: str) -> None:
    """Forced through Spark's vectorised Parquet reader (byte ranges of the kept row groups: 50-row
    groups, so most reads are parts of files) and through the Python reader: the rows Spark
    finds in a plain DataFrame of the table's rows."""
    fed, catalog = lake
    spark.createDataFrame(catalog.load_table(("telemetry", table_name)).scan().to_arrow()).createOrReplaceTempView(
        "pruning_expected"
    )
    spark.conf.set("spark.sluice.lakeReader", reader)
    try:
        for predicate in [*READ_CASES, "true"]:
            query = f"SELECT * FROM {{t}} WHERE {predicate}"
            lake_query = query.format(t=f"lake.telemetry.{table_name}")
            assert READERS[reader] in fed.explain(lake_query), lake_query
            got = sorted(map(repr, fed.sql(lake_query).collect()))
            assert got == sorted(map(repr, spark.sql(query.format(t="pruning_expected")).collect())), lake_query
    finally:
        spark.conf.unset("spark.sluice.lakeReader")


def test_auto_reads_scans_vectorised_unless_a_fraction_keeps_selective_ones_in_python(lake, spark) -> None:
    fed, _ = lake
    full = fed.explain("SELECT * FROM lake.telemetry.clustered")
    assert READERS["vectorised"] in full and "Parquet filter pushdown off" in full, full
    wide = fed.explain("SELECT payload_id FROM lake.telemetry.clustered WHERE status <> 'OK'")
    assert READERS["vectorised"] in wide and "[INEXACT] NOT `status` = 'OK'" in wide, wide
    query = "SELECT payload_id FROM lake.telemetry.clustered WHERE payload_id BETWEEN 0 AND 79"
    selective = fed.explain(query)  # half the row groups: more than spark.sluice.smallReadRows rows
    assert READERS["vectorised"] in selective and "[INEXACT] `payload_id`" in selective, selective
    spark.conf.set("spark.sluice.lakeVectorisedFraction", "0.9")
    try:
        selective = fed.explain(query)
        assert READERS["python"] in selective and "selective: pruning keeps" in selective, selective
        assert "[EXACT] `payload_id`" in selective, selective
    finally:
        spark.conf.unset("spark.sluice.lakeVectorisedFraction")
    counted = fed.explain("SELECT count(*) FROM lake.telemetry.clustered")
    assert READERS["python"] in counted and "aggregates pushed" in counted, counted


def test_a_vectorised_scan_counts_the_rows_of_the_row_groups_it_kept(lake, spark) -> None:
    """No Python reader runs for Spark's Parquet reader: the planner records what it reads (the
    kept row groups, which Spark then filters), so fed.transferred is not zero for it."""
    fed, catalog = lake
    table = catalog.load_table(("telemetry", "clustered"))
    whole = sum(task.file.record_count for task in table.scan().plan_files())
    query = "SELECT payload_id FROM lake.telemetry.clustered WHERE payload_id BETWEEN 0 AND 79"
    assert READERS["vectorised"] in fed.explain(query)
    [counted] = fed.transferred(query).values()
    assert 0 < counted["rows"] < whole and counted["bytes"] > 0, counted
    assert counted["rows"] >= len(fed.sql(query).collect())  # Spark filters the kept groups' rows
    [full] = fed.transferred("SELECT * FROM lake.telemetry.clustered").values()
    assert full["rows"] == whole, full


def test_a_vectorised_scan_and_the_whole_read_count_the_same_kind_of_bytes(lake) -> None:
    """Spark's Parquet reader and the lake's Python reader both count the compressed bytes of the
    columns of the row groups they read: a pushed filter that prunes nothing transfers exactly the
    bytes of the whole read (the demo once compared compressed bytes with decoded Arrow bytes)."""
    fed, _ = lake
    query = "SELECT payload_id, voltage FROM lake.telemetry.clustered WHERE payload_id > -1000000"
    assert READERS["vectorised"] in fed.explain(query)
    [pushed] = fed.transferred(query).values()
    [whole] = fed.transferred(query, pushdown=False).values()
    assert pushed["rows"] == whole["rows"] and pushed["bytes"] == whole["bytes"] > 0, (pushed, whole)
