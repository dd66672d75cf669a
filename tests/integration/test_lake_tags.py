"""Snapshot tags: ``CALL lake.system.create_tag`` / ``drop_tag`` and ``VERSION AS OF 'tag'``.

One lake table is written, tagged, then changed (an append, a DELETE, a tag moved). Each
tag is read back through Spark (pushdown on and off, and the ``tag`` reader option) and
compared with the rows Spark read at that moment; PyIceberg reads the same tag as a second
reader, and ``t.refs`` must list what PyIceberg's metadata holds. The refusals name what
was wrong.
"""

from __future__ import annotations

import sqlite3

import pytest

from sluice.lake.catalog import LakeLocation, open_catalog

pytestmark = pytest.mark.integration


def _rows(frame) -> list[tuple]:
    """Rows in a comparable form (NaN equal to itself), sorted."""
    return sorted((tuple("NaN" if v != v else v for v in row) for row in frame.collect()), key=repr)


@pytest.fixture(scope="module")
def tagged(spark, tmp_path_factory):
    """The lake after: 3 rows tagged 'first', an append tagged 'second', a DELETE; the rows each tag saw."""
    from sluice import Federation

    folder = tmp_path_factory.mktemp("laketags")
    url = f"iceberg+sqlite:///{folder}/catalog.db?create=true"
    fed = Federation(spark=spark)
    fed.attach("tlake", url)
    spark.sql("CREATE NAMESPACE tlake.ns")
    spark.sql("CREATE TABLE tlake.ns.t (id BIGINT, s STRING, x DOUBLE) PARTITIONED BY (s)")
    spark.sql("INSERT INTO tlake.ns.t VALUES (1, 'a', 0.5), (2, 'b', NULL), (3, NULL, -0.0)")
    first = _rows(spark.table("tlake.ns.t"))
    made = spark.sql("CALL tlake.system.create_tag('ns.t', 'first')").collect()
    spark.sql("INSERT INTO tlake.ns.t VALUES (4, 'a', 1e300), (5, '', double('NaN'))")
    second = _rows(spark.table("tlake.ns.t"))
    made += spark.sql("CALL tlake.system.create_tag(table => 'tlake.ns.t', tag => 'second')").collect()
    spark.sql("DELETE FROM tlake.ns.t WHERE s = 'a'")
    yield fed, url, made, {"first": first, "second": second}
    fed.detach("tlake")


def _iceberg(url: str):
    return open_catalog(LakeLocation.from_url(url)).load_table(("ns", "t"))


@pytest.mark.parametrize("pushdown", ["true", "false"])
def test_version_as_of_a_tag_reads_the_tagged_snapshot(spark, tagged, pushdown) -> None:
    _, url, made, seen = tagged
    table = _iceberg(url)
    assert [(r.table, r.tag) for r in made] == [("tlake.ns.t", "first"), ("tlake.ns.t", "second")]
    spark.conf.set("spark.sluice.pushdown", pushdown)
    try:
        for tag, rows in seen.items():
            assert _rows(spark.sql(f"SELECT * FROM tlake.ns.t VERSION AS OF '{tag}'")) == rows
            snapshot = table.snapshot_by_name(tag)
            assert snapshot is not None
            assert _rows(spark.sql(f"SELECT * FROM tlake.ns.t VERSION AS OF {snapshot.snapshot_id}")) == rows
            # PyIceberg, the second reader, sees the same rows at the same tag
            arrow = table.scan(snapshot_id=snapshot.snapshot_id).to_arrow()
            assert sorted(zip(*(arrow[c].to_pylist() for c in ("id", "s")), strict=True), key=repr) == [
                (r[0], r[1]) for r in rows
            ]
            filtered = spark.sql(f"SELECT id FROM tlake.ns.t VERSION AS OF '{tag}' WHERE s = 'a' ORDER BY id")
            assert [r.id for r in filtered.collect()] == sorted(r[0] for r in rows if r[1] == "a")
        assert [r.id for r in spark.sql("SELECT id FROM tlake.ns.t ORDER BY id").collect()] == [2, 3, 5]
    finally:
        spark.conf.unset("spark.sluice.pushdown")


def test_refs_and_snapshot_ids_are_pyicebergs(spark, tagged) -> None:
    _, url, made, _ = tagged
    table = _iceberg(url)
    refs = {r.name: (r.type, r.snapshot_id) for r in spark.sql("SELECT * FROM tlake.ns.t.refs").collect()}
    expected = {
        name: (ref.snapshot_ref_type.value.upper(), ref.snapshot_id) for name, ref in table.metadata.refs.items()
    }
    assert refs == expected
    assert refs["first"][0] == "TAG"
    assert [r.snapshot_id for r in made] == [refs["first"][1], refs["second"][1]]
    tags = spark.sql("SELECT name FROM tlake.ns.t.refs WHERE type = 'TAG' ORDER BY name").collect()
    assert [r.name for r in tags] == ["first", "second"]


def test_a_tag_by_snapshot_id_moved_and_dropped(spark, tagged) -> None:
    _, url, _, seen = tagged
    oldest = spark.sql("SELECT min_by(snapshot_id, committed_at) AS id FROM tlake.ns.t.snapshots").first().id
    made = spark.sql(f"CALL tlake.system.create_tag('ns.t', 'oldest', {oldest})").first()
    assert made.snapshot_id == oldest
    assert _rows(spark.sql("SELECT * FROM tlake.ns.t VERSION AS OF 'oldest'")) == seen["first"]
    reader = spark.read.format("sluice").option("url", url).option("table", "ns.t")
    assert _rows(reader.option("tag", "oldest").load()) == seen["first"]
    # dropped and made again at another snapshot: the next read follows it (no stale description)
    dropped = spark.sql("CALL tlake.system.drop_tag('ns.t', 'oldest')").first()
    assert dropped.snapshot_id == oldest
    with pytest.raises(Exception, match=r"has no tag or branch 'oldest' \(refs: branch main -> \d+, tag first"):
        spark.sql("SELECT * FROM tlake.ns.t VERSION AS OF 'oldest'").collect()
    spark.sql("CALL tlake.system.create_tag('ns.t', 'oldest')")
    assert [r.id for r in spark.sql("SELECT id FROM tlake.ns.t VERSION AS OF 'oldest' ORDER BY id").collect()] == [
        2,
        3,
        5,
    ]
    spark.sql("CALL tlake.system.drop_tag(tag => 'oldest', table => 'ns.t')")
    # the snapshot itself stays readable by id
    assert _rows(spark.sql(f"SELECT * FROM tlake.ns.t VERSION AS OF {oldest}")) == seen["first"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            "CALL tlake.system.create_tag('ns.t', 'first')",
            r"lake table tlake.ns.t already has a tag 'first': drop it first",
        ),
        ("CALL tlake.system.create_tag('ns.nope', 'x')", r"source 'tlake' has no table ns.nope"),
        (
            "CALL tlake.system.create_tag('t', 'x')",
            r"create_tag: the table argument is <namespace>.<table> of catalog 'tlake', not 't'",
        ),
        ("CALL tlake.system.create_tag('ns.t', 'x', 42)", r"lake table tlake.ns.t has no snapshot 42 to tag as 'x'"),
        ("CALL tlake.system.create_tag('ns.t', '123')", r"'123' is no tag name \(VERSION AS OF reads digits"),
        ("CALL tlake.system.drop_tag('ns.t', 'main')", r"'main' is a branch, not a tag"),
        ("CALL tlake.system.drop_tag('ns.t', 'nope')", r"lake table tlake.ns.t has no tag 'nope' \(refs: branch main"),
        (
            "CALL tlake.system.rollback('ns.t')",
            r"catalog tlake has no procedure system.rollback \(it has system.plan, system.create_tag, system.drop_tag",
        ),
    ],
)
def test_refusals_name_what_was_wrong(spark, tagged, call, message) -> None:
    _, url, _, _ = tagged
    before = dict(_iceberg(url).metadata.refs)
    with pytest.raises(Exception, match=message):
        spark.sql(call).collect()
    assert dict(_iceberg(url).metadata.refs) == before


def test_a_sql_source_is_not_tagged(spark, tmp_path) -> None:
    from sluice import Federation

    path = tmp_path / "plain.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (id INTEGER)")
    fed = Federation(spark=spark)
    fed.attach("tplain", f"sqlite:///{path}")
    try:
        with pytest.raises(
            Exception, match=r"source 'tplain' is read-only in Sluice: create_tag works on lake catalogs"
        ):
            spark.sql("CALL tplain.system.create_tag('main.t', 'x')").collect()
    finally:
        fed.detach("tplain")
