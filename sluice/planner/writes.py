"""Spark SQL's DDL and writes on a lake catalog, decided here and run by the lake's pipeline.

The catalog layer forwards ``CREATE TABLE`` (Spark's partition transforms and
``TBLPROPERTIES``), ``DROP TABLE``, ``ALTER TABLE`` (column changes, :mod:`sluice.lake.alter`),
``CREATE NAMESPACE`` and the DataFrame of an ``INSERT``
or CTAS; this module maps them onto :mod:`sluice.lake.ingest` (one Iceberg snapshot per
statement, nothing left behind by a failed one) instead of a second write path. CREATE
TABLE, DROP TABLE and writes on any other source go to :mod:`sluice.write` (:func:`_sql`, the
one dispatch point), which writes a SQL source attached ``writable=true`` and refuses otherwise.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import TYPE_CHECKING, Any

from sluice.errors import ConfigError
from sluice.lake.catalog import LakeLocation, open_catalog, read_table
from sluice.lake.layout import TRANSFORMS, WITH_NUMBER, PartitionTerm, parse_sort_by
from sluice.protocol.catalog import CreateTableRequest, DropTableRequest, NamedRequest, WriteAnswer
from sluice.sources.base import Source
from sluice.write import create_table as sql_create_table
from sluice.write import drop_table as sql_drop_table
from sluice.write import replace as sql_replace
from sluice.write import row_identity as sql_row_identity
from sluice.write import write as sql_write

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from sluice.protocol.base import SourceRequest
    from sluice.protocol.catalog import (
        AlterTableRequest,
        CreateNamespaceRequest,
        WriteRequest,
    )
    from sluice.types import TableSchema

_log = logging.getLogger(__name__)

#: TBLPROPERTIES a lake table takes: the data file size, and the sort order (as ``--sort-by`` text)
TARGET_FILE_SIZE = "write.target-file-size-bytes"
SORT_BY = "sort-by"
#: properties Spark adds itself (the writer's name, ``USING``, ``COMMENT``): not the table's layout
_SPARK_OWN = frozenset({"owner", "provider", "comment", "external", "is_managed_location"})
#: the lake's transforms that take a number besides the column (bucket count, truncate width)
_NUMBERED = frozenset(WITH_NUMBER)


def lake(source: Source, what: str) -> LakeLocation:
    """The lake ``source`` is, or a refusal naming the source: only lake tables are written."""
    location = source.lake
    if location is None:
        raise ConfigError(
            f"source {source.name!r} is read-only in Sluice: {what} works on lake catalogs "
            f"(iceberg+sqlite:// URLs), not on {type(source).__name__.removesuffix('Source')} sources"
        )
    return location


def _sql(source: Source) -> bool:
    """Whether ``source``'s DDL and writes are :mod:`sluice.write`'s (every source but a lake)."""
    return source.lake is None


def _namespace(request: NamedRequest, what: str) -> str:
    namespace = request.namespace
    if len(namespace) != 1:
        name = ".".join([*namespace, request.name]).strip(".")
        raise ConfigError(f"{what}: lake tables are named <catalog>.<namespace>.<table>, not {name!r}")
    return str(namespace[0])


def partition_terms(partitioning: list[dict[str, Any]]) -> tuple[PartitionTerm, ...]:
    """Spark's ``PARTITIONED BY`` transforms as the lake's partition terms.

    Spark hands each transform as a name (``days``, ``bucket``, ``identity``, ...) and its
    arguments: column references and number literals (in the order written, so
    ``truncate(name, 4)`` and ``truncate(4, name)`` are one term).
    """
    terms = []
    for offered in partitioning:
        name = str(offered["transform"])
        transform = TRANSFORMS.get(name.lower())
        columns = [a["column"] for a in offered["arguments"] if "column" in a]
        numbers = [a["number"] for a in offered["arguments"] if "number" in a]
        others = [a["other"] for a in offered["arguments"] if "other" in a]
        shown = f"{name}({', '.join(str(next(iter(a.values()))) for a in offered['arguments'])})"
        if transform is None:
            raise ConfigError(f"PARTITIONED BY {shown}: lake tables take {', '.join(sorted(set(TRANSFORMS)))}")
        wanted_numbers = 1 if transform in _NUMBERED else 0
        if others or len(columns) != 1 or len(numbers) != wanted_numbers:
            usage = f"{name}(N, column)" if wanted_numbers else f"{name}(column)"
            raise ConfigError(f"PARTITIONED BY {shown}: expected {usage}")
        number = 0
        if wanted_numbers:
            try:
                number = int(numbers[0])
            except ValueError:
                raise ConfigError(f"PARTITIONED BY {shown}: {numbers[0]!r} is not a whole number") from None
        terms.append(PartitionTerm(transform, columns[0], number))
    return tuple(terms)


def _layout(properties: dict[str, str]) -> tuple[str, int | None]:
    """The sort order (``--sort-by`` text) and target file size in ``TBLPROPERTIES``."""
    if properties.get("location"):
        raise ConfigError("LOCATION: lake tables live in the lake's warehouse folder; leave LOCATION out")
    unknown = sorted(
        key
        for key in properties
        if key not in _SPARK_OWN
        and key not in (TARGET_FILE_SIZE, SORT_BY, "location")
        and not key.startswith("option.")
    )
    if unknown:
        raise ConfigError(
            f"TBLPROPERTIES {', '.join(map(repr, unknown))}: lake tables take {TARGET_FILE_SIZE!r} (bytes) "
            f"and {SORT_BY!r} (columns, as in 'ts, id desc nulls last')"
        )
    size = properties.get(TARGET_FILE_SIZE)
    try:
        target = int(size) if size is not None else None
    except ValueError:
        raise ConfigError(f"TBLPROPERTIES {TARGET_FILE_SIZE!r}={size!r}: expected a number of bytes") from None
    sort_by = properties.get(SORT_BY, "")
    parse_sort_by(sort_by)  # a malformed order fails before anything is created
    return sort_by, target


def _quoted(name: str) -> str:
    return f"`{name}`"


def create_table(spark: SparkSession, source: Source, request: CreateTableRequest) -> bool:
    """``CREATE TABLE`` on a lake catalog; False when the table already exists (Spark says so)."""
    from pyspark.sql.types import StructType

    from sluice.lake import ingest

    if _sql(source):
        return sql_create_table(source, request)
    location = lake(source, "CREATE TABLE")
    namespace, name = _namespace(request, "CREATE TABLE"), request.name
    terms = partition_terms(request.partitioning)
    sort_by, target = _layout(request.properties)
    if open_catalog(location, create=True, name=source.name).table_exists((namespace, name)):
        return False
    partition_by = ", ".join(
        f"{t.transform}({t.number}, {_quoted(t.column)})"
        if t.transform in _NUMBERED
        else f"{t.transform}({_quoted(t.column)})"
        for t in terms
    )
    ingest.create_table(
        spark,
        location.url,
        namespace,
        name,
        schema=StructType.fromJson(json.loads(request.schema)),
        partition_by=partition_by,
        sort_by=sort_by,
        target_file_size=target,
    )
    return True


def drop_table(source: Source, request: DropTableRequest) -> bool:
    """``DROP TABLE``: the table leaves the catalog and its folder is deleted; False when missing."""
    from sluice.lake.ingest import remove_folder

    if _sql(source):
        return sql_drop_table(source, request)
    location = lake(source, "DROP TABLE")
    namespace, name = _namespace(request, "DROP TABLE"), request.name
    catalog = open_catalog(location, name=source.name)
    if not catalog.table_exists((namespace, name)):
        return False
    folder = catalog.load_table((namespace, name)).location()
    catalog.drop_table((namespace, name))
    remove_folder(folder)
    return True


def alter_table(source: Source, request: AlterTableRequest) -> list[str]:
    """``ALTER TABLE``: Spark's column changes in one schema update (:mod:`sluice.lake.alter`);
    what was done, in words."""
    from sluice.lake.alter import alter_table as alter

    location = lake(source, "ALTER TABLE")
    namespace, name = _namespace(request, "ALTER TABLE"), request.name
    catalog = open_catalog(location, name=source.name)
    done = alter(catalog.load_table((namespace, name)), list(request.changes))
    _log.info("ALTER TABLE %s.%s: %s", namespace, name, ", ".join(done) or "nothing to change")
    return done


def create_namespace(source: Source, request: CreateNamespaceRequest) -> bool:
    """``CREATE NAMESPACE``; False when it exists (Spark says so, or ignores it with IF NOT EXISTS)."""
    from pyiceberg.exceptions import NamespaceAlreadyExistsError

    location = lake(source, "CREATE NAMESPACE")
    namespace = request.namespace
    if len(namespace) != 1:
        raise ConfigError(f"CREATE NAMESPACE {'.'.join(namespace)}: lake namespaces have one level")
    catalog = open_catalog(location, create=True, name=source.name)
    try:
        catalog.create_namespace(namespace[0])
    except NamespaceAlreadyExistsError:
        return False
    return True


def write(spark: SparkSession, source: Source, request: WriteRequest, frame: DataFrame) -> WriteAnswer:
    """``INSERT INTO`` / ``INSERT OVERWRITE`` / CTAS: Sluice's ingest job over Spark's query.

    Spark has already lined the query's columns up with the table's and cast them (its
    by-position or BY NAME rules), so the job appends exactly the table's schema. The mode
    is Spark's: ``overwrite`` (``INSERT OVERWRITE`` in static mode) replaces every row, as
    Iceberg's Spark runtime does; ``overwrite-partitions`` (dynamic mode,
    ``partitionOverwriteMode=dynamic`` or ``DataFrameWriterV2.overwritePartitions()``)
    replaces the partitions the query's rows fall in, as Iceberg's ``ReplacePartitions``;
    ``overwrite-filter`` (static ``INSERT OVERWRITE ... PARTITION (p = v)``,
    ``DataFrameWriterV2.overwrite(condition)``) replaces the rows Spark's filter selects,
    which must be whole files (:mod:`sluice.lake.overwrite`).
    """
    from sluice.lake.ingest import ingest

    if request.mode == "replace":
        return _replace(spark, source, request, frame)
    if _sql(source):
        return sql_write(source, request, frame)
    if request.mode == "replace-data":
        return _replace_data(spark, source, request, frame)
    location = lake(source, "INSERT")
    mode = request.mode
    where = overwrite_filter(source, request) if mode == "overwrite-filter" else []
    summary = ingest(
        spark,
        location.url,
        frame,
        namespace=_namespace(request, "INSERT"),
        table=request.name,
        mode=mode,
        where=where,
        report=_log.info,
    )
    return WriteAnswer(snapshot_id=summary.snapshot_id, files=summary.files, rows=summary.rows)


def _replace(spark: SparkSession, source: Source, request: WriteRequest, frame: DataFrame) -> WriteAnswer:
    """``REPLACE TABLE [AS SELECT]``, ``CREATE OR REPLACE``, ``createOrReplace()`` (Spark stages them,
    io.sluice.spark.StagedReplace): one step of a SQL source (:func:`sluice.write.replace`); on a lake,
    Spark's own non-atomic replace (drop, create, write; the new table dropped when the write fails)."""
    named = {f.name: getattr(request, f.name) for f in dataclasses.fields(NamedRequest)}
    create = CreateTableRequest(
        **named, schema=request.schema, partitioning=request.partitioning, properties=request.properties
    )
    if _sql(source):
        return sql_replace(source, create, frame)
    drop_table(source, DropTableRequest(**named))
    create_table(spark, source, create)
    try:
        return write(spark, source, dataclasses.replace(request, mode="append"), frame)
    except BaseException:
        drop_table(source, DropTableRequest(**named))
        raise


def _replace_data(spark: SparkSession, source: Source, request: WriteRequest, frame: DataFrame) -> WriteAnswer:
    """``UPDATE`` / ``MERGE INTO`` a lake table: Spark's new content of the files its scan read,
    committed as one snapshot replacing them (:mod:`sluice.lake.row_level`)."""
    from sluice.lake.row_level import replace_data, statement

    location = lake(source, request.command or "UPDATE")
    namespace = _namespace(request, statement(request.command, request.name))
    summary = replace_data(
        spark, location.url, namespace, request.name, request.command, request.snapshot_id, frame, _log.info
    )
    return WriteAnswer(snapshot_id=summary.snapshot_id, files=summary.files, rows=summary.rows)


def copy_on_write(source: Source, namespace: list[str], table: TableSchema) -> tuple[bool, int | None]:
    """Whether a catalog's table takes UPDATE and MERGE as a lake copy-on-write, and the snapshot
    its operation reads (the current one; None: the table has none yet). A SQL table, a time
    travel (pinned) description and a metadata table (``t.snapshots``) do not."""
    from sluice.lake import metadata_tables

    location = source.lake
    if location is None or table.snapshot is not None or len(namespace) != 1:
        return False, None
    if metadata_tables.split(table.name) is not None:
        return False, None
    current = read_table(location, namespace[0], table.name, source.name).current_snapshot()
    return True, current.snapshot_id if current is not None else None


def row_identity(source: Source, request: SourceRequest, namespace: list[str], name: str) -> tuple[list[str], str]:
    """The row id (primary key) Spark's UPDATE and MERGE take for a table, or none and why:
    a SQL table's is :mod:`sluice.write`'s; a lake table has none (no reason: the
    catalog layer hands it to Spark as a copy-on-write table, :func:`copy_on_write`)."""
    if _sql(source):
        return sql_row_identity(source, request, namespace, name)
    return [], ""  # a lake table rewrites files instead (copy_on_write)


def overwrite_filter(source: Source, request: WriteRequest) -> list[str]:
    """Spark's overwrite filter (V2 predicates, conjuncts) as the lake dialect's SQL.

    Each conjunct must translate EXACTLY (the lake evaluates it as Spark does), or the
    rows it deletes are not the rows Spark means: refused, naming the conjunct and why.
    """
    from sluice.planner.rules.classify_filters import classify
    from sluice.pushdown.levels import Level

    namespace, name = _namespace(request, "INSERT OVERWRITE"), request.name
    table = source.describe(namespace, name)
    predicates = [_null_safe_as_equal(p) for p in request.predicates]
    verdicts = classify(source, table, predicates, request.zone)
    refused = [v for v in verdicts if v.level is not Level.EXACT or v.pushed is None]
    if refused:
        reasons = "; ".join(f"{v.sql}: {v.reason}" for v in refused)
        raise ConfigError(
            f"overwrite of lake table {namespace}.{name}: Sluice cannot evaluate the filter exactly ({reasons}); "
            "nothing was written"
        )
    return [source.dialect.render(v.pushed.sql_tree()) for v in verdicts if v.pushed is not None]


def _null_safe_as_equal(predicate: dict[str, Any]) -> dict[str, Any]:
    """``column <=> literal``, Spark's filter for ``PARTITION (column = literal)``, as the
    equality (or ``IS NULL``) it means here: a row it does not select is kept either way,
    and the lake proves whole-file matches for equalities only."""
    args = predicate.get("args") or []
    if predicate.get("op") != "<=>" or len(args) != 2:
        return predicate
    column, value = (args[0], args[1]) if "lit" in args[1] else (args[1], args[0])
    if "ref" not in column or "lit" not in value:
        return predicate
    if value["lit"] is None:
        return {"op": "IS_NULL", "args": [column]}
    return {"op": "=", "args": [column, value]}


def identity_partitions(source: Source, namespace: list[str], name: str) -> list[str]:
    """A lake table's identity-partitioned columns (what Spark takes in a ``PARTITION`` clause);
    none for other sources."""
    from pyiceberg.transforms import IdentityTransform

    location = source.lake
    if location is None or len(namespace) != 1:
        return []
    table = read_table(location, namespace[0], name, source.name)  # the read path's: parsed once per metadata file
    schema = table.metadata.schema()
    return [
        schema.find_column_name(field.source_id) or ""
        for field in table.spec().fields
        if isinstance(field.transform, IdentityTransform)
    ]
