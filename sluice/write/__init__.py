"""Writes to SQL sources: ``INSERT INTO``, ``INSERT OVERWRITE``, ``CREATE TABLE``, CTAS, ``REPLACE TABLE``, ``DROP TABLE``.

:mod:`sluice.planner.writes` sends every DDL statement and write on a source that is not a
lake here (one dispatch point, :func:`target`). A source is written only when attached
``writable=true`` (the attach keyword, the catalog file's key, or the Spark catalog option
``spark.sql.catalog.NAME.writable``): reading credentials often can write, and an accidental
``INSERT OVERWRITE`` must not empty a production table. The statements themselves are each
source's :class:`~sluice.write.target.Target`, found in :data:`TARGETS` by the source's class;
the design (staging, one transaction, cleanup) is in docs/architecture.md, usage in
docs/writes.md.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

from sluice.errors import ConfigError
from sluice.protocol.base import SourceRequest
from sluice.protocol.catalog import CreateTableRequest, DropTableRequest, WriteAnswer, WriteRequest
from sluice.sources.base import Source
from sluice.sources.duckdb import DuckdbSource
from sluice.sources.mysql import MysqlSource
from sluice.sources.postgres import PostgresSource
from sluice.sources.sqlite import SqliteSource
from sluice.write import delta
from sluice.write.duckdb import DuckdbTarget
from sluice.write.mysql import MysqlTarget
from sluice.write.postgres import PostgresTarget
from sluice.write.sqlite import SqliteTarget
from sluice.write.target import Target
from sluice.write.typemap import fields

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_log = logging.getLogger(__name__)
#: the catalog option (and attach keyword, and catalog-file key) that allows writes
WRITABLE = "writable"
#: properties Spark adds to every CREATE TABLE itself: not a request the source must honour
_SPARK_OWN = frozenset({"owner", "provider", "comment", "external", "is_managed_location"})


#: source class -> the target that writes it. A source Sluice writes is a target module and one line here.
TARGETS: dict[type[Source], type[Target]] = {
    PostgresSource: PostgresTarget,
    SqliteSource: SqliteTarget,
    MysqlSource: MysqlTarget,
    DuckdbSource: DuckdbTarget,
}


def target(source: Source, request: SourceRequest, what: str) -> Target:
    """The target writing ``source``; a refusal naming the option when it is not writable,
    or naming the source kind when Sluice does not write it yet."""
    name = source.name
    if request.options.get(WRITABLE, "false").lower() != "true":
        raise ConfigError(
            f"source {name!r} is read-only in Sluice: {what} needs it attached with writable=true "
            f"(Federation.attach(..., writable=True), 'writable = true' in the catalog file, "
            f"or spark.sql.catalog.{name}.writable=true)"
        )
    found = TARGETS.get(type(source))
    if found is None:
        raise ConfigError(
            f"source {name!r}: Sluice does not write {source.dialect.name} sources yet ({what}); "
            "it writes PostgreSQL, MariaDB/MySQL, SQLite, DuckDB and lake catalogs"
        )
    return found(source)


def create_table(source: Source, request: CreateTableRequest) -> bool:
    """``CREATE TABLE`` (and the first half of CTAS); False when the table exists."""
    chosen = target(source, request, "CREATE TABLE")
    schema = chosen.schema_of(list(request.namespace), "CREATE TABLE")
    _plain(source, request, "CREATE TABLE")
    return chosen.create_table(schema, request.name, fields(json.loads(request.schema)))


def replace(source: Source, request: CreateTableRequest, frame: DataFrame) -> WriteAnswer:
    """``REPLACE TABLE [AS SELECT]``, ``CREATE OR REPLACE TABLE ... AS SELECT``, ``createOrReplace()``:
    the table dropped, created as ``request`` says and given ``frame``'s rows in one step of the
    source (:meth:`Target.replace`), so a failure leaves the old table as it was."""
    what = "REPLACE TABLE"
    chosen = target(source, request, what)
    schema = chosen.schema_of(list(request.namespace), what)
    _plain(source, request, what)
    rows = chosen.replace(frame, schema, request.name, fields(json.loads(request.schema)))
    _log.info("%s %s.%s.%s: %d rows", what, source.name, schema, request.name, rows)
    return WriteAnswer(snapshot_id=None, files=0, rows=rows)


def _plain(source: Source, request: CreateTableRequest, what: str) -> None:
    """Refuse what only a lake table has: partition transforms, table properties, a location."""
    if request.partitioning:
        raise ConfigError(f"{what} on source {source.name!r}: PARTITIONED BY is for lake tables; leave it out")
    properties = sorted(k for k in request.properties if k not in _SPARK_OWN and not k.startswith("option."))
    if properties:
        raise ConfigError(
            f"{what} on source {source.name!r}: TBLPROPERTIES/LOCATION {', '.join(map(repr, properties))} "
            "are for lake tables; leave them out"
        )


def drop_table(source: Source, request: DropTableRequest) -> bool:
    """``DROP TABLE``; False when it does not exist."""
    chosen = target(source, request, "DROP TABLE")
    schema = chosen.schema_of(list(request.namespace), "DROP TABLE")
    return chosen.drop_table(schema, request.name)


def row_identity(source: Source, request: SourceRequest, namespace: list[str], name: str) -> tuple[list[str], str]:
    """The row id Spark's UPDATE and MERGE take for the table (its primary key), or none and why."""
    what = "UPDATE and MERGE"
    try:
        chosen = target(source, request, what)
        schema = chosen.schema_of(namespace, what)
    except ConfigError as refused:
        return [], str(refused)
    key = chosen.primary_key(schema, name)
    return (key, "") if key else ([], delta.no_key(schema, name))


def write(source: Source, request: WriteRequest, frame: DataFrame) -> WriteAnswer:
    """``INSERT INTO`` / ``INSERT OVERWRITE`` (the whole table) / CTAS's rows, or the delta of
    an ``UPDATE`` / ``MERGE INTO`` (:mod:`sluice.write.delta`): one source transaction."""
    mode = request.mode
    if mode == "delta":
        chosen = target(source, request, "UPDATE/MERGE")
        schema = chosen.schema_of(list(request.namespace), "UPDATE/MERGE")
        rows = chosen.apply_delta(frame, schema, request.name, list(request.row_id))
        _log.info("UPDATE/MERGE %s.%s.%s: %d delta rows", source.name, schema, request.name, rows)
        return WriteAnswer(snapshot_id=None, files=0, rows=rows)
    what = "INSERT OVERWRITE" if mode.startswith("overwrite") else "INSERT"
    chosen = target(source, request, what)
    if mode not in ("append", "overwrite"):
        raise ConfigError(
            f"{what} into source {source.name!r}: Sluice replaces a SQL table whole (INSERT OVERWRITE without "
            "PARTITION, DataFrameWriterV2 createOrReplace); overwriting by a condition or by partitions is not supported"
        )
    schema = chosen.schema_of(list(request.namespace), what)
    rows = chosen.write(frame, schema, request.name, "overwrite" if mode == "overwrite" else "append")
    _log.info("%s %s.%s.%s: %d rows", what, source.name, schema, request.name, rows)
    return WriteAnswer(snapshot_id=None, files=0, rows=rows)  # a SQL source has no snapshots or files
