"""Iceberg's metadata tables, as Iceberg's Spark runtime names them: ``lake.ns.t.snapshots``.

Spark hands the catalog ``lake.ns.t.snapshots`` as the table ``snapshots`` in namespace
``ns.t``; the planner (:mod:`sluice.planner.catalog`) describes it as the lake table
``t.snapshots`` of namespace ``ns`` when the last part is one of :data:`NAMES`. The rows are
PyIceberg's ``table.inspect`` (the same columns as Iceberg's Java ``MetadataTableType``),
read on the driver when the scan is planned and carried to the reader as Arrow IPC, where
the pushed filters, order, limit and aggregates run in DuckDB as over a data file's rows.

Column types are those Iceberg's Spark runtime gives: Iceberg has no byte or short (PyIceberg's
``int8`` ``content`` is ``int``), its timestamps are ``timestamptz`` (Spark's ``timestamp``),
``partition``, ``readable_metrics`` and the file metrics are structs, maps and arrays.
"""

from __future__ import annotations

import base64
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

import pyarrow as pa

from sluice.errors import BindError
from sluice.types import Column, Kind, TableSchema, spark_type_of

if TYPE_CHECKING:
    from pyiceberg.table import Table

#: the metadata tables PyIceberg computes, by the name Iceberg's Spark runtime gives them
NAMES = (
    "snapshots",
    "history",
    "refs",
    "files",
    "data_files",
    "delete_files",
    "manifests",
    "partitions",
    "entries",
    "metadata_log_entries",
    "all_manifests",
    "all_files",
    "all_data_files",
    "all_delete_files",
)
#: the metadata tables of one snapshot, which ``VERSION AS OF`` / ``TIMESTAMP AS OF`` choose
#: (as in Iceberg's Spark runtime); the others describe the whole history
AS_OF = ("files", "data_files", "delete_files", "entries", "partitions")
#: the metadata tables PyIceberg computes only for a table with a snapshot
_NEED_A_SNAPSHOT = ("partitions", "entries")
_COMPLEX_REASON = "a nested column of a metadata table: Spark filters it"
#: rows kept for the scans that follow a description (the same query describes, then plans):
#: a metadata file is never rewritten, so its location names the rows for good
_KEPT: OrderedDict[tuple[str, str, int | None], pa.Table] = OrderedDict()
_KEPT_TABLES = 8
_KEPT_BYTES = 64 * 1024 * 1024
_KEPT_LOCK = threading.Lock()


def named(name: str) -> bool:
    """Whether ``name`` (a 4-part identifier's last part) names a metadata table."""
    return name.lower() in NAMES


def joined(table: str, kind: str) -> str:
    """The name the lake source describes a metadata table under: ``t.snapshots``."""
    return f"{table}.{kind.lower()}"


def split(name: str) -> tuple[str, str] | None:
    """``(table, kind)`` of a name :func:`joined` made, or None for a table's own name."""
    table, dot, kind = name.rpartition(".")
    return (table, kind) if dot and kind in NAMES else None


def rows(table: Table, kind: str, snapshot_id: int | None = None) -> pa.Table:
    """The metadata table's rows as Spark reads them (:func:`sluice.types.spark_type_of`), at
    ``snapshot_id`` (time travel, the tables of :data:`AS_OF` only) or the current snapshot.

    A query inspects the table twice, to describe it and to plan its scan; the second time
    takes the rows the first computed (up to :data:`_KEPT_TABLES` results of at most
    :data:`_KEPT_BYTES` each), keyed by the metadata file they were read from: a commit
    writes a new one, so kept rows are never stale."""
    key = (table.metadata_location, kind, snapshot_id)
    with _KEPT_LOCK:
        if key in _KEPT:
            _KEPT.move_to_end(key)
            return _KEPT[key]
    found = _inspected(table, kind, snapshot_id)
    if found.nbytes <= _KEPT_BYTES:
        with _KEPT_LOCK:
            _KEPT[key] = found
            while len(_KEPT) > _KEPT_TABLES:
                _KEPT.popitem(last=False)
    return found


def _inspected(table: Table, kind: str, snapshot_id: int | None) -> pa.Table:
    """PyIceberg's rows of the metadata table, cast to the types Spark reads."""
    if snapshot_id is not None:
        inspected = getattr(table.inspect, kind)(snapshot_id=snapshot_id)
    elif kind in _NEED_A_SNAPSHOT and table.current_snapshot() is None:
        inspected = _no_snapshot(table, kind)
    else:
        inspected = getattr(table.inspect, kind)()
    try:
        return pa.table(
            [
                column.cast(spark_type_of(field.type).arrow())
                for column, field in zip(inspected.columns, inspected.schema, strict=True)
            ],
            names=inspected.column_names,
        )
    except (ValueError, pa.ArrowException) as error:  # a column type Spark has no name for (Iceberg's time, uuid)
        raise BindError(f"metadata table {'.'.join(table.name())}.{kind}: {error}") from None


def _no_snapshot(table: Table, kind: str) -> pa.Table:
    """The rows of a metadata table PyIceberg will not compute for a table without a snapshot:
    none, with the columns it would have (Iceberg's Spark runtime reads such a table as empty)."""
    if kind == "partitions":
        from pyiceberg.io.pyarrow import schema_to_pyarrow

        struct = table.metadata.specs_struct()
        counts = [
            ("record_count", pa.int64()),
            ("file_count", pa.int32()),
            ("total_data_file_size_in_bytes", pa.int64()),
        ]
        counts += [
            (f"{deletes}_delete_{what}", pa.int64() if what == "record_count" else pa.int32())
            for deletes in ("position", "equality")
            for what in ("record_count", "file_count")
        ]
        counts += [("last_updated_at", pa.timestamp("ms")), ("last_updated_snapshot_id", pa.int64())]
        leading = [("partition", schema_to_pyarrow(struct)), ("spec_id", pa.int32())] if struct.fields else []
        return pa.schema(leading + counts).empty_table()
    raise BindError(f"metadata table {'.'.join(table.name())}.{kind}: the table has no snapshot yet")


def describe(source: str, namespace: str, name: str, table: Table, found: pa.Table) -> TableSchema:
    """The metadata table ``name`` (``t.snapshots``) of ``table``, its columns typed as ``found`` holds them."""
    columns = []
    for field in found.schema:
        kind = spark_type_of(field.type)
        complex_column = kind.kind is Kind.COMPLEX
        columns.append(
            Column(
                field.name,
                kind,
                "COMPLEX" if complex_column else kind.name.upper(),
                nullable=True,
                unpushable=_COMPLEX_REASON if complex_column else None,
            )
        )
    return TableSchema(source, namespace, name, tuple(columns), row_estimate=found.num_rows)


def refuse_time_travel(qualified: str) -> BindError:
    return BindError(
        f"lake table {qualified} is a metadata table of the table's whole history, so VERSION AS OF / "
        f"TIMESTAMP AS OF do not apply (filter it on snapshot_id; they do apply to {', '.join(AS_OF)})"
    )


def encoded(found: pa.Table) -> str:
    """``found`` as Arrow IPC in base64 (a read task's JSON carries it to the reader)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, found.schema) as writer:
        writer.write_table(found)
    return base64.b64encode(sink.getvalue().to_pybytes()).decode("ascii")


def decoded(text: str) -> pa.Table:
    return pa.ipc.open_stream(base64.b64decode(text)).read_all()
