"""Iceberg's metadata tables through Spark SQL, as Iceberg's Spark runtime names them:
``lake.ns.t.snapshots``, ``history``, ``refs``, ``files``, ``manifests``, ``partitions``.

One partitioned PyIceberg table gets two appends and an overwrite; every metadata table is
read with ``spark.sql`` (filters, aggregates, ORDER BY/LIMIT, a map lookup) and compared with
PyIceberg's ``table.inspect``, the second reader. Catalog names start with ``lkmt``.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from sluice.errors import SluiceError
from sluice.lake.catalog import LakeLocation, open_catalog

pytestmark = pytest.mark.integration

#: the columns and types Iceberg's Spark runtime gives (MetadataTableType's schemas; timestamps are timestamptz)
TYPES = {
    "snapshots": "struct<committed_at:timestamp,snapshot_id:bigint,parent_id:bigint,operation:string,"
    "manifest_list:string,summary:map<string,string>>",
    "history": "struct<made_current_at:timestamp,snapshot_id:bigint,parent_id:bigint,is_current_ancestor:boolean>",
    "refs": "struct<name:string,type:string,snapshot_id:bigint,max_reference_age_in_ms:bigint,"
    "min_snapshots_to_keep:int,max_snapshot_age_in_ms:bigint>",
}


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory):
    from sluice import Federation

    url = f"iceberg+sqlite:///{tmp_path_factory.mktemp('meta')}/catalog.db"
    catalog = open_catalog(LakeLocation.from_url(url), create=True)
    catalog.create_namespace("x")
    table = catalog.create_table(("x", "t"), schema=pa.schema([("id", pa.int64()), ("g", pa.string())]))
    with table.update_spec() as update:
        update.add_identity("g")
    table.append(pa.table({"id": [1, 2], "g": ["a", "b"]}))
    table.append(pa.table({"id": [3], "g": ["a"]}))
    table.overwrite(pa.table({"id": [4, 5, 6], "g": ["c", "c", None]}))
    fed = Federation(spark=spark)
    fed.attach("lkmt", url)
    yield fed, catalog.load_table(("x", "t"))
    fed.detach("lkmt")


def test_types_are_iceberg_spark_runtimes(lake) -> None:
    fed, _ = lake
    for kind, expected in TYPES.items():
        assert fed.sql(f"SELECT * FROM lkmt.x.t.{kind}").schema.simpleString() == expected


def test_snapshots_and_history_are_pyicebergs(lake) -> None:
    fed, table = lake
    snapshots = table.inspect.snapshots().to_pylist()
    got = fed.sql(
        "SELECT unix_millis(committed_at) AS at, snapshot_id, parent_id, operation, manifest_list, summary "
        "FROM lkmt.x.t.snapshots ORDER BY committed_at, snapshot_id"
    ).collect()
    expected = sorted(snapshots, key=lambda r: (r["committed_at"], r["snapshot_id"]))
    assert len(got) == len(expected) == 4  # append, append, overwrite = delete + append
    for row, want in zip(got, expected, strict=True):
        assert (row.snapshot_id, row.parent_id, row.operation, row.manifest_list) == (
            want["snapshot_id"],
            want["parent_id"],
            want["operation"],
            want["manifest_list"],
        )
        assert row.summary == dict(want["summary"])
    history = fed.sql("SELECT * FROM lkmt.x.t.history ORDER BY made_current_at, snapshot_id").collect()
    assert [(r.snapshot_id, r.parent_id, r.is_current_ancestor) for r in history] == [
        (r["snapshot_id"], r["parent_id"], r["is_current_ancestor"])
        for r in sorted(table.inspect.history().to_pylist(), key=lambda r: (r["made_current_at"], r["snapshot_id"]))
    ]
    # the instants are Iceberg's (milliseconds, UTC), whatever the session's zone
    at = {r.snapshot_id: r.at for r in got}
    assert at == {s.snapshot_id: s.timestamp_ms for s in table.snapshots()}


def test_filters_aggregates_and_order_on_a_metadata_table(lake) -> None:
    fed, table = lake
    current = table.current_snapshot()
    assert current is not None
    one = fed.sql(f"SELECT operation FROM lkmt.x.t.snapshots WHERE snapshot_id = {current.snapshot_id}").collect()
    assert one == [(current.summary.operation.value,)]
    appends = [s for s in table.snapshots() if s.summary is not None and s.summary.operation.value == "append"]
    assert fed.sql("SELECT count(*) FROM lkmt.x.t.snapshots WHERE operation = 'append'").collect()[0][0] == len(appends)
    first = fed.sql("SELECT snapshot_id FROM lkmt.x.t.history ORDER BY made_current_at LIMIT 1").collect()
    assert first == [(table.snapshots()[0].snapshot_id,)]
    added = fed.sql(
        "SELECT snapshot_id FROM lkmt.x.t.snapshots WHERE summary['added-records'] = '1' AND parent_id IS NOT NULL"
    ).collect()
    assert added == [(table.snapshots()[1].snapshot_id,)]
    for pushdown in (True, False):  # the reference path reads the same rows
        assert fed.sql("SELECT count(*) FROM lkmt.x.t.history", pushdown=pushdown).collect()[0][0] == 4


def test_refs_files_manifests_partitions_are_pyicebergs(lake) -> None:
    fed, table = lake
    refs = fed.sql("SELECT name, type, snapshot_id FROM lkmt.x.t.refs").collect()
    assert [tuple(r) for r in refs] == [
        (r["name"], r["type"], r["snapshot_id"]) for r in table.inspect.refs().to_pylist()
    ]
    files = fed.sql("SELECT file_path, record_count, partition.g AS g, content FROM lkmt.x.t.files").collect()
    assert sorted(tuple(r) for r in files) == sorted(
        (r["file_path"], r["record_count"], r["partition"]["g"], r["content"])
        for r in table.inspect.files().to_pylist()
    )
    assert sorted(str(r.g) for r in files) == ["None", "c"]  # the overwrite's files only: the current snapshot's
    metrics = fed.sql("SELECT readable_metrics.id.lower_bound AS low FROM lkmt.x.t.files WHERE partition.g = 'c'")
    assert metrics.collect() == [(4,)]
    manifests = fed.sql("SELECT path, added_snapshot_id, added_data_files_count FROM lkmt.x.t.manifests").collect()
    assert sorted(tuple(r) for r in manifests) == sorted(
        (r["path"], r["added_snapshot_id"], r["added_data_files_count"]) for r in table.inspect.manifests().to_pylist()
    )
    partitions = fed.sql("SELECT partition.g AS g, record_count, file_count FROM lkmt.x.t.partitions").collect()
    assert sorted(partitions, key=lambda r: str(r.g)) == sorted(
        [(r["partition"]["g"], r["record_count"], r["file_count"]) for r in table.inspect.partitions().to_pylist()],
        key=lambda r: str(r[0]),
    )
    assert fed.sql("SELECT sum(record_count) FROM lkmt.x.t.partitions").collect()[0][0] == 3


def test_a_new_commit_is_seen_and_mistakes_are_named(lake) -> None:
    fed, table = lake
    before = fed.sql("SELECT count(*) FROM lkmt.x.t.snapshots").collect()[0][0]
    fed.sql("INSERT INTO lkmt.x.t VALUES (7, 'd')")
    assert fed.sql("SELECT count(*) FROM lkmt.x.t.snapshots").collect()[0][0] == before + 1
    fed.sql("CREATE TABLE lkmt.x.empty (id bigint)")
    for kind in ("snapshots", "history", "files", "manifests", "partitions"):  # no snapshot yet: no rows
        assert fed.sql(f"SELECT count(*) FROM lkmt.x.empty.{kind}").collect()[0][0] == 0, kind
    with pytest.raises(SluiceError, match="has no namespace x.t"):
        fed.sql("SELECT * FROM lkmt.x.t.nosuch")
    with pytest.raises(SluiceError, match="missing"):
        fed.sql("SELECT * FROM lkmt.x.missing.snapshots")
    first = table.snapshots()[0].snapshot_id
    old = fed.sql(f"SELECT file_path, record_count FROM lkmt.x.t.files VERSION AS OF {first}").collect()
    assert sorted(tuple(r) for r in old) == sorted(
        (r["file_path"], r["record_count"]) for r in table.inspect.files(snapshot_id=first).to_pylist()
    )
    assert sorted(r.record_count for r in old) == [1, 1]  # the first append's two files
    then = fed.sql(f"SELECT sum(record_count) FROM lkmt.x.t.partitions VERSION AS OF {first}").collect()
    assert then == [(2,)]
    with pytest.raises(SluiceError, match="is a metadata table of the table's whole history"):
        fed.sql(f"SELECT * FROM lkmt.x.t.history VERSION AS OF {table.snapshots()[0].snapshot_id}").collect()


#: each shape the reader evaluates in DuckDB for a metadata table: a filter (with NULLs:
#: the first snapshot has no parent), IN, IS NULL, ORDER BY ... LIMIT both ways with NULLs,
#: a grouped aggregate, and a filter on a column Spark keeps (a map)
PUSHED_SHAPES = (
    "SELECT snapshot_id, operation FROM lkmt.x.t.snapshots WHERE parent_id > 0",
    "SELECT snapshot_id FROM lkmt.x.t.snapshots WHERE operation IN ('append', 'overwrite', 'delete')",
    "SELECT snapshot_id FROM lkmt.x.t.history WHERE parent_id IS NULL",
    "SELECT snapshot_id, parent_id FROM lkmt.x.t.history ORDER BY parent_id ASC NULLS FIRST LIMIT 2",
    "SELECT snapshot_id, parent_id FROM lkmt.x.t.history ORDER BY parent_id DESC NULLS LAST LIMIT 2",
    "SELECT operation, count(*), min(committed_at), max(snapshot_id) FROM lkmt.x.t.snapshots GROUP BY operation",
    "SELECT file_path, record_count FROM lkmt.x.t.files WHERE record_count >= 2 AND file_format = 'PARQUET'",
    "SELECT partition.g, count(*) FROM lkmt.x.t.files WHERE content = 0 GROUP BY partition.g",
    "SELECT snapshot_id FROM lkmt.x.t.snapshots WHERE summary['added-records'] = '1'",
    "SELECT name, snapshot_id FROM lkmt.x.t.refs WHERE type = 'BRANCH' AND name <> ''",
)


@pytest.mark.parametrize("query", PUSHED_SHAPES)
def test_pushdown_on_equals_off_on_metadata_tables(lake, query) -> None:
    fed, _ = lake
    pushed = sorted(fed.sql(query).collect(), key=repr)
    whole = sorted(fed.sql(query, pushdown=False).collect(), key=repr)
    assert pushed == whole, query
    assert whole, f"{query}: no rows, so the comparison proves nothing"
