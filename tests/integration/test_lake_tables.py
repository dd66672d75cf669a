"""Any table in: a user's CSV becomes a partitioned, sorted lake table that reads back as Spark reads the CSV.

Also append with schema evolution, overwrite, refused evolution, failures that leave the
catalog and warehouse exactly as they were, and the file count of a small ingest. Uses
the shared ``spark`` session (America/New_York) and a fresh lake per test.
"""

from __future__ import annotations

import csv as csv_module
import datetime as dt
import hashlib
import random
import re
import sqlite3
from pathlib import Path

import pytest

from sluice.cli import main
from sluice.errors import ConfigError
from sluice.lake.catalog import LakeLocation, open_catalog

pytestmark = pytest.mark.integration

ROWS = 2_000
START = dt.datetime(2025, 3, 7, tzinfo=dt.timezone.utc)
PARTITION_BY = "day(ts), bucket(4, id)"


def quiet(line: str) -> None:
    """Progress lines are not under test."""


def write_weather(path: Path, rows: int = ROWS, seed: int = 7, extra: bool = False) -> Path:
    """A CSV with a header and mixed types: long, timestamp (with an offset), string with NULLs
    and non-ASCII, double, boolean, date; ``extra`` adds an int column ``gust``."""
    rng = random.Random(seed)
    lines = ["id,ts,station,temp,wet,day" + (",gust" if extra else "")]
    for number in range(rows):
        ts = START + dt.timedelta(seconds=rng.randrange(0, 5 * 86400))  # over the DST change of 2025-03-09
        station = rng.choice(["Zürich", "Oslo", "São Paulo", "", "Köln, Ost"])
        station = f'"{station}"' if "," in station else station
        temp = "" if rng.random() < 0.05 else f"{rng.uniform(-20, 35):.2f}"
        line = (
            f"{rng.randrange(0, 300) if number % 50 else 10_000_000_000 + number},{ts:%Y-%m-%dT%H:%M:%SZ},"
            f"{station},{temp},{rng.choice(['true', 'false'])},{ts:%Y-%m-%d}"
        )
        lines.append(line + (f",{rng.randrange(0, 90)}" if extra else ""))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def lake_url(folder: Path) -> str:
    return f"iceberg+sqlite:///{folder}/catalog.db"


def load(url: str, name: str = "weather.obs"):
    return open_catalog(LakeLocation.from_url(url)).load_table(tuple(name.split(".")))


def reference(spark, path: Path):
    """Spark reading the CSV itself (the same NULL convention as the ingest: only an empty
    unquoted field is NULL)."""
    return spark.read.options(header=True, inferSchema=True, nullValue="\u0000").csv(str(path))


def answer(frame) -> list[tuple]:
    return sorted((tuple(row) for row in frame.collect()), key=repr)


def state(folder: Path) -> tuple[list[tuple], dict[str, str]]:
    """Every row of the catalog database and every file under the folder with its digest."""
    rows: list[tuple] = []
    catalog = folder / "catalog.db"
    if catalog.exists():
        with sqlite3.connect(catalog) as connection:
            for (table,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
                rows += [(table, *row) for row in connection.execute(f'SELECT * FROM "{table}" ORDER BY 1, 2, 3')]
    files = {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != "catalog.db"
    }
    dirs = {str(path.relative_to(folder)): "dir" for path in folder.rglob("*") if path.is_dir()}
    return rows, {**files, **dirs}


@pytest.fixture
def weather_lake(spark, tmp_path: Path):
    from sluice import Federation
    from sluice.lake.ingest import ingest

    csv = write_weather(tmp_path / "weather.csv")
    url = lake_url(tmp_path / "lake")
    summary = ingest(
        spark,
        url,
        csv,
        namespace="weather",
        table="obs",
        partition_by=PARTITION_BY,
        sort_by="station, ts desc",
        report=quiet,
    )
    fed = Federation(spark=spark)
    fed.attach("mylake", url)
    return fed, url, csv, summary


def test_a_csv_becomes_a_partitioned_sorted_table_that_reads_as_spark_reads_the_csv(spark, weather_lake) -> None:
    from pyiceberg.transforms import BucketTransform
    from pyiceberg.types import LongType

    fed, url, csv, summary = weather_lake
    table = load(url)
    assert [(field.name, str(field.field_type)) for field in table.schema().fields] == [
        ("id", "long"),
        ("ts", "timestamptz"),
        ("station", "string"),
        ("temp", "double"),
        ("wet", "boolean"),
        ("day", "date"),
    ]
    assert [(field.name, str(field.transform)) for field in table.spec().fields] == [
        ("ts_day", "day"),
        ("id_bucket", "bucket[4]"),
    ]
    assert [str(field) for field in table.sort_order().fields] == ["3 ASC NULLS FIRST", "2 DESC NULLS LAST"]
    assert table.properties["write.target-file-size-bytes"] == str(128 << 20)
    assert summary.rows == ROWS

    files = [task.file for task in table.scan().plan_files()]
    partitions = [tuple(data_file.partition) for data_file in files]
    assert len(partitions) == len(set(partitions)) == summary.files  # at most one file per partition
    assert summary.files <= 6 * 4  # 5 days (6 calendar days in UTC at most) x 4 buckets
    bucket = BucketTransform(4).transform(LongType())
    for data_file in files:  # every row is in its partition's file
        rows = spark.read.parquet(data_file.file_path).select("id", "ts").collect()
        assert {bucket(row.id) for row in rows} == {data_file.partition[1]}
        assert {(row.ts.astimezone(dt.timezone.utc).date() - dt.date(1970, 1, 1)).days for row in rows} == {
            data_file.partition[0]
        }

    expected = reference(spark, csv)
    assert expected.schema.simpleString() == fed.sql("SELECT * FROM mylake.weather.obs").schema.simpleString()
    assert answer(fed.sql("SELECT * FROM mylake.weather.obs")) == answer(expected)
    expected.createOrReplaceTempView("weather_csv")
    for condition in (
        "ts >= TIMESTAMP '2025-03-09 00:00:00 UTC' AND ts < TIMESTAMP '2025-03-10 00:00:00 UTC'",
        "id = 17",
        "id IN (3, 150, 10000000000)",
        "day = DATE '2025-03-08' AND id > 200",
        "station = 'Zürich' AND temp > 20",
        "station IS NULL",
        "wet AND ts < TIMESTAMP '2025-03-08'",
    ):
        lake_query = f"SELECT * FROM mylake.weather.obs WHERE {condition}"
        assert answer(fed.sql(lake_query)) == answer(spark.sql(f"SELECT * FROM weather_csv WHERE {condition}")), (
            condition
        )
    (pyramid,) = fed.pruning("SELECT * FROM mylake.weather.obs WHERE id = 17").values()
    assert pyramid.tiers[0].kept < pyramid.tiers[0].total or pyramid.tiers[1].kept < pyramid.tiers[1].total


def test_append_adds_a_column_and_overwrite_replaces_the_rows(spark, weather_lake, tmp_path: Path) -> None:
    from sluice.lake.ingest import ingest

    fed, url, csv, _ = weather_lake
    more = write_weather(tmp_path / "more.csv", rows=300, seed=8, extra=True)
    summary = ingest(spark, url, more, namespace="weather", table="obs", report=quiet)
    table = load(url)
    assert str(table.schema().find_field("gust").field_type) == "int"
    assert len(table.snapshots()) == 2 and summary.rows == 300
    both = reference(spark, csv).unionByName(reference(spark, more), allowMissingColumns=True)
    assert answer(fed.sql("SELECT * FROM mylake.weather.obs")) == answer(both)
    assert fed.sql("SELECT count(*) FROM mylake.weather.obs WHERE gust IS NULL").collect()[0][0] == ROWS

    # a DataFrame with a wider gust (long) widens the column; a string temp is refused, naming it
    wider = spark.createDataFrame(
        [(1, dt.datetime(2025, 3, 8, tzinfo=dt.timezone.utc), "Oslo", 1.5, True, dt.date(2025, 3, 8), 2**40)],
        "id long, ts timestamp, station string, temp double, wet boolean, day date, gust long",
    )
    ingest(spark, url, wider, namespace="weather", table="obs", report=quiet)
    assert str(load(url).schema().find_field("gust").field_type) == "long"
    fed.attach("mylake", url)  # a Federation describes a table once per attach (docs/lake.md)
    assert fed.sql("SELECT max(gust) FROM mylake.weather.obs").collect()[0][0] == 2**40
    narrowed = wider.withColumn("temp", wider["temp"].cast("string")).withColumn("id", wider["id"].cast("double"))
    snapshots = len(load(url).snapshots())
    with pytest.raises(
        ConfigError,
        match=r"column id: the table has bigint \(Iceberg long\), the input has double.*"
        r"column temp: the table has double \(Iceberg double\), the input has string",
    ):
        ingest(spark, url, narrowed, namespace="weather", table="obs", report=quiet)
    assert len(load(url).snapshots()) == snapshots

    summary = ingest(spark, url, more, namespace="weather", table="obs", mode="overwrite", report=quiet)
    assert summary.rows == 300
    assert answer(fed.sql("SELECT * FROM mylake.weather.obs")) == answer(
        reference(spark, more).selectExpr(
            *(f"CAST({name} AS {kind})" for name, kind in fed.sql("SELECT * FROM mylake.weather.obs").dtypes)
        )
    )
    assert load(url).current_snapshot().summary.operation.value == "overwrite"


@pytest.mark.parametrize("case", ["unparsable value", "wrong field count", "new table", "layout"])
def test_a_failed_ingest_leaves_catalog_and_warehouse_as_they_were(
    spark, weather_lake, tmp_path: Path, case: str
) -> None:
    from sluice.lake.ingest import ingest

    _, url, csv, _ = weather_lake
    lines = csv.read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "bad.csv"
    before = state(tmp_path / "lake")
    if case == "unparsable value":  # an existing table: temp parses as its double
        lines[1234] = lines[1234].replace(lines[1234].split(",")[0], "12x", 1)
        bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
        with pytest.raises(ConfigError, match=rf"{bad} line 1235, column id: '12x' is not a bigint"):
            ingest(spark, url, bad, namespace="weather", table="obs", report=quiet)
    elif case == "wrong field count":
        lines[700] += ",surplus"
        bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
        with pytest.raises(ConfigError, match=rf"{bad} line 701 has 7 fields, the header 6"):
            ingest(spark, url, bad, namespace="weather", table="obs", report=quiet)
    elif case == "new table":  # the table, namespace and folders the job made are gone again
        lines[1500] = lines[1500].replace(lines[1500].split(",")[0], "1.5", 1)
        bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
        with pytest.raises(ConfigError, match=rf"{bad} line 1501, column id: '1.5' is not a bigint"):
            ingest(
                spark,
                url,
                bad,
                namespace="fresh",
                table="obs",
                schema="id bigint, ts timestamp, station string, temp double, wet boolean, day date",
                partition_by="month(ts)",
                report=quiet,
            )
    else:
        with pytest.raises(ConfigError, match=r"partition term bucket\(4, nope\): no column nope"):
            ingest(spark, url, csv, namespace="fresh", table="obs", partition_by="bucket(4, nope)", report=quiet)
    after = state(tmp_path / "lake")
    assert sorted(set(after[1].items()) ^ set(before[1].items())) == []
    assert after == before
    assert not open_catalog(LakeLocation.from_url(url)).table_exists(("fresh", "obs"))


def test_a_failed_first_ingest_leaves_no_lake(spark, tmp_path: Path) -> None:
    from sluice.lake.ingest import ingest

    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"{bad} line 3 has 1 fields, the header 2"):
        ingest(spark, lake_url(tmp_path / "lake"), bad, namespace="n", table="t", report=quiet)
    assert not (tmp_path / "lake").exists() or not any((tmp_path / "lake").rglob("*"))


def test_weather_into_the_demo_table_is_refused_in_one_line(spark, tmp_path: Path, capsys) -> None:
    csv = write_weather(tmp_path / "weather.csv", rows=20)
    url = lake_url(tmp_path / "lake")
    assert main(["lake", "ingest", url, "--from", str(csv)], spark=spark) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "name a table of your own" in error and "Traceback" not in error
    assert not (tmp_path / "lake" / "catalog.db").exists()


def test_cli_create_then_ingest(spark, tmp_path: Path, capsys) -> None:
    csv = write_weather(tmp_path / "weather.csv", rows=ROWS)
    url = lake_url(tmp_path / "lake")
    assert (
        main(
            [
                "lake",
                "create",
                url,
                "--namespace",
                "w",
                "--table",
                "hourly",
                "--schema",
                "id bigint, ts timestamp, station string, temp double, wet boolean, day date",
                "--partition-by",
                "hour(ts), truncate(2, station)",
                "--sort-by",
                "id",
            ],
            spark=spark,
        )
        == 0
    )
    assert "partitioned by hour(ts), truncate(2, station)" in capsys.readouterr().out
    assert main(["lake", "ingest", url, "--from", str(csv), "--namespace", "w", "--table", "hourly"], spark=spark) == 0
    assert f"{ROWS:,} rows" in capsys.readouterr().out
    table = load(url, "w.hourly")
    files = [task.file for task in table.scan().plan_files()]
    assert len({tuple(f.partition) for f in files}) == len(files)
    assert sum(f.record_count for f in files) == ROWS
    from sluice import Federation

    fed = Federation(spark=spark)
    fed.attach("hl", url)
    condition = (
        "station = 'São Paulo' AND ts BETWEEN TIMESTAMP '2025-03-08 10:00:00' AND TIMESTAMP '2025-03-08 14:00:00'"
    )
    reference(spark, csv).createOrReplaceTempView("hourly_csv")
    assert answer(fed.sql(f"SELECT * FROM hl.w.hourly WHERE {condition}")) == answer(
        spark.sql(f"SELECT * FROM hourly_csv WHERE {condition}")
    )
    assert (
        main(
            [
                "lake",
                "ingest",
                url,
                "--from",
                str(csv),
                "--namespace",
                "w",
                "--table",
                "hourly",
                "--partition-by",
                "day(ts)",
            ],
            spark=spark,
        )
        == 2
    )
    assert "exists, partitioned by hour(ts), truncate(2, station)" in capsys.readouterr().err


def test_expire_snapshots_deletes_the_files_only_old_snapshots_held(
    spark, weather_lake, tmp_path: Path, capsys
) -> None:
    from sluice.lake.ingest import ingest

    fed, url, csv, first = weather_lake
    ingest(spark, url, csv, namespace="weather", table="obs", report=quiet)  # two snapshots of 2,000 rows each
    ingest(spark, url, csv, namespace="weather", table="obs", mode="overwrite", report=quiet)
    data = tmp_path / "lake" / "warehouse" / "weather" / "obs" / "data"
    before = sorted(data.rglob("*.parquet"))
    assert len(before) == 3 * first.files and len(load(url).snapshots()) == 3
    where = ["--namespace", "weather", "--table", "obs"]
    assert main(["lake", "expire-snapshots", url, *where], spark=spark) == 0  # default: Iceberg's 5 days
    assert "expired 0 snapshot(s)" in capsys.readouterr().out and len(load(url).snapshots()) == 3
    now = dt.datetime.now(dt.timezone.utc).isoformat()
    assert main(["lake", "expire-snapshots", url, *where, "--older-than", now], spark=spark) == 0
    assert "expired 2 snapshot(s), deleted " + str(2 * first.files) + " data file(s)" in capsys.readouterr().out
    table = load(url)
    assert len(table.snapshots()) == 1
    live = {Path(task.file.file_path.removeprefix("file://")) for task in table.scan().plan_files()}
    assert set(data.rglob("*.parquet")) == live and len(live) == first.files
    fed.attach("mylake", url)
    assert answer(fed.sql("SELECT * FROM mylake.weather.obs")) == answer(reference(spark, csv))


def test_optimize_leaves_one_sorted_file_per_partition_in_one_snapshot(spark, weather_lake, capsys) -> None:
    from sluice.lake.ingest import ingest

    fed, url, csv, first = weather_lake
    for _ in range(2):
        ingest(spark, url, csv, namespace="weather", table="obs", report=quiet)
    assert len(list(load(url).scan().plan_files())) == 3 * first.files
    assert main(["lake", "optimize", url, "--namespace", "weather", "--table", "obs"], spark=spark) == 0
    assert f"{3 * ROWS:,} rows" in capsys.readouterr().out
    table = load(url)
    files = [task.file for task in table.scan().plan_files()]
    assert len(files) == first.files == len({tuple(data_file.partition) for data_file in files})
    assert len(table.snapshots()) == 4
    for data_file in files:  # sorted by station, ts desc within each file
        rows = [
            (row.station is not None, row.station or "", -row.ts.timestamp())
            for row in spark.read.parquet(data_file.file_path).select("station", "ts").collect()
        ]
        assert rows == sorted(rows)
    expected = reference(spark, csv)
    assert answer(fed.sql("SELECT * FROM mylake.weather.obs")) == answer(expected.unionAll(expected).unionAll(expected))
    assert main(["lake", "optimize", url, "--namespace", "weather", "--table", "obs"], spark=spark) == 0
    assert "nothing to do" in capsys.readouterr().out


def _with_bytes(path: Path, line: int, old: str, new: bytes) -> Path:
    """``path`` with the first ``old`` on 1-based ``line`` replaced by raw ``new`` bytes."""
    lines = path.read_bytes().split(b"\n")
    lines[line - 1] = lines[line - 1].replace(old.encode(), new, 1)
    path.write_bytes(b"\n".join(lines))
    return path


@pytest.mark.parametrize("table", ["existing", "new"])
def test_a_csv_byte_that_is_not_utf8_fails_naming_file_and_line(
    spark, weather_lake, tmp_path: Path, capsys, table: str
) -> None:
    """Spark's CSV reader stores a byte that is not UTF-8 as U+FFFD (caf\\xe9 became caf\\ufffd):
    the job must fail naming the file and line, and leave the lake as it was (issue 23)."""
    from sluice.lake.ingest import ingest

    _, url, csv, _ = weather_lake
    bad = tmp_path / "bad.csv"  # a copy with one Latin-1 byte past line 1500
    bad.write_bytes(csv.read_bytes())
    line = next(n for n, text in enumerate(bad.read_text().splitlines(), 1) if n > 1500 and ",Oslo," in text)
    _with_bytes(bad, line, ",Oslo,", b",caf\xe9,")
    expected = rf"{bad} line {line}: byte\(s\) e9 are not utf-8 text, in b'[^']*,caf\\xe9,"
    before = state(tmp_path / "lake")
    if table == "existing":
        with pytest.raises(ConfigError, match=expected):
            ingest(spark, url, bad, namespace="weather", table="obs", report=quiet)
    else:
        assert (
            main(["lake", "ingest", url, "--from", str(bad), "--namespace", "fresh", "--table", "t"], spark=spark) == 2
        )
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and re.search(expected, error), error
    assert state(tmp_path / "lake") == before
    assert not open_catalog(LakeLocation.from_url(url)).table_exists(("fresh", "t"))


def test_a_declared_encoding_keeps_every_character(spark, tmp_path: Path, capsys) -> None:
    """``--encoding latin1``: the file's characters arrive as written (Python's own Latin-1
    decoding is the reference), quoted line breaks and quotes included."""
    from sluice import Federation

    text = write_weather(tmp_path / "weather.csv", rows=200).read_text(encoding="utf-8")
    lines = text.splitlines()
    lines[17] = lines[17].replace(lines[17].split(",")[2], '"café, crème\nsur deux lignes"', 1)
    latin1 = tmp_path / "latin1.csv"
    latin1.write_bytes("\n".join(lines).encode("latin1"))
    url = lake_url(tmp_path / "lake")
    command = ["lake", "ingest", url, "--from", str(latin1), "--namespace", "w", "--table", "t", "--encoding", "latin1"]
    assert main(command, spark=spark) == 0, capsys.readouterr().err
    fed = Federation(spark=spark)
    fed.attach("l1", url)
    stored = answer(fed.sql("SELECT id, station FROM l1.w.t"))
    with open(latin1, encoding="latin1", newline="") as handle:
        written = sorted(((int(row["id"]), row["station"] or None) for row in csv_module.DictReader(handle)), key=repr)
    assert stored == written
    assert (int(lines[17].split(",")[0]), "café, crème\nsur deux lignes") in stored


def test_a_quoted_line_break_is_read_as_part_of_its_value(spark, tmp_path: Path) -> None:
    """A valid CSV whose quoted field holds a line break (RFC 4180) was refused: the reader
    split records at every line break."""
    from sluice.lake.ingest import ingest

    path = tmp_path / "notes.csv"
    path.write_text('id,note\n1,"first line\nsecond line"\n2,plain\n3,"a, b"\n4,"ends\r\n"\n')
    url = lake_url(tmp_path / "lake")
    summary = ingest(spark, url, path, namespace="n", table="notes", report=quiet)
    stored = sorted((row["id"], row["note"]) for row in load(url, "n.notes").scan().to_arrow().to_pylist())
    with open(path, newline="") as handle:
        written = sorted((int(row["id"]), row["note"]) for row in csv_module.DictReader(handle))
    assert summary.rows == 4 and stored == written


def test_a_duplicate_csv_header_names_the_column_and_file(spark, tmp_path: Path) -> None:
    from sluice.lake.ingest import ingest

    path = tmp_path / "twice.csv"
    path.write_text("id,Temp,station,temp\n1,2.5,Oslo,3.5\n")
    with pytest.raises(ConfigError, match=rf"{path}: the header names column 'temp' twice \(fields 2 and 4\)"):
        ingest(spark, lake_url(tmp_path / "lake"), path, namespace="n", table="t", report=quiet)
    assert not (tmp_path / "lake").exists() or not any((tmp_path / "lake").rglob("*"))


def test_a_file_removed_mid_job_is_named_in_one_line(spark, tmp_path: Path, capsys) -> None:
    """A file that vanishes while the job runs (here the input, removed once the job has
    planned its write) failed with a bare Py4J line: one line must name the file, and the
    lake is left as it was."""
    path = write_weather(tmp_path / "weather.csv", rows=200)
    url = lake_url(tmp_path / "lake")

    def remove_the_input(line: str) -> None:
        if "writing under" in line:
            path.unlink()

    from sluice.lake.ingest import ingest

    with pytest.raises(ConfigError, match=rf"^the ingest stopped: {path} was removed while the job ran"):
        ingest(spark, url, path, namespace="n", table="t", report=remove_the_input)
    assert not (tmp_path / "lake").exists() or not any((tmp_path / "lake").rglob("*"))
