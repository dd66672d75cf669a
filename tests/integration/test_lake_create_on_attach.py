"""A lake made on attach: ``create=true`` in an ``iceberg+sqlite://`` URL starts an empty lake
where no catalog file exists, so a new user can go on in Spark SQL (``CREATE NAMESPACE``,
``CREATE TABLE``); without it a missing file is refused and nothing is registered.
Catalog names start with ``lkmk`` (other helpers share the machine)."""

from __future__ import annotations

import pytest

from sluice.errors import SluiceError

pytestmark = pytest.mark.integration


def test_create_true_starts_an_empty_lake_that_spark_sql_fills(spark, tmp_path) -> None:
    from sluice import Federation

    path = tmp_path / "new" / "catalog.db"
    fed = Federation(spark=spark)
    fed.attach("lkmk", f"iceberg+sqlite:///{path}?create=true")
    try:
        assert path.is_file()
        fed.sql("CREATE NAMESPACE lkmk.x")
        fed.sql("CREATE TABLE lkmk.x.t (id bigint, name string)")
        fed.sql("INSERT INTO lkmk.x.t VALUES (1, 'a'), (2, NULL)")
        assert sorted(fed.sql("SELECT * FROM lkmk.x.t").collect()) == [(1, "a"), (2, None)]
        fed.attach("lkmk", f"iceberg+sqlite:///{path}?create=true")  # an existing lake is opened, not remade
        assert fed.sql("SELECT count(*) FROM lkmk.x.t").collect()[0][0] == 2
    finally:
        fed.detach("lkmk")


def test_a_missing_lake_without_create_is_refused_and_nothing_is_registered(spark, tmp_path) -> None:
    from sluice import Federation

    path = tmp_path / "missing" / "catalog.db"
    fed = Federation(spark=spark)
    with pytest.raises(SluiceError, match=r"does not exist \(add \?create=true"):
        fed.attach("lkmk_missing", f"iceberg+sqlite:///{path}")
    assert not path.exists()
    assert spark.conf.get("spark.sql.catalog.lkmk_missing", None) is None
    with pytest.raises(SluiceError, match=r"first part is not an attached catalog; attached sources: none"):
        fed.sql("CREATE NAMESPACE lkmk_missing.x")  # Spark's own words alone would be REQUIRES_SINGLE_PART_NAMESPACE


def test_a_failed_attach_leaves_the_name_free_for_the_right_url(spark, tmp_path) -> None:
    from sluice import Federation

    (tmp_path / "afile").write_text("")
    fed = Federation(spark=spark)
    for bad, message in (
        (f"iceberg+sqlite:///{tmp_path}/afile/x/catalog.db?create=true", "cannot make the lake's catalog folder"),
        ("iceberg+sqlite://user:hunter2@host/catalog.db?create=true", "lake URLs look like"),
    ):
        with pytest.raises(SluiceError, match=message) as refused:
            fed.attach("lkmk_retry", bad)
        assert "hunter2" not in str(refused.value)
        assert spark.conf.get("spark.sql.catalog.lkmk_retry", None) is None
    path = tmp_path / "good" / "catalog.db"
    fed.attach("lkmk_retry", f"iceberg+sqlite:///{path}?create=true")
    try:
        spark.sql("CREATE NAMESPACE lkmk_retry.x")
        spark.sql("CREATE TABLE lkmk_retry.x.t (id bigint)")
        spark.sql("INSERT INTO lkmk_retry.x.t VALUES (7)")
        assert spark.sql("SELECT id FROM lkmk_retry.x.t").collect() == [(7,)]
        from sluice.lake.catalog import LakeLocation, open_catalog

        catalog = open_catalog(LakeLocation.from_url(f"iceberg+sqlite:///{path}"))
        assert catalog.load_table(("x", "t")).scan().to_arrow().column("id").to_pylist() == [7]  # PyIceberg reads it
    finally:
        fed.detach("lkmk_retry")
