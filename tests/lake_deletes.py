"""Row-level delete files for tests, as merge-on-read engines write them.

Spark's Iceberg runtime, Trino and Flink record deleted rows in delete files; PyIceberg 0.12
(the only Iceberg writer here) deletes copy-on-write. This helper writes spec-conformant
Parquet delete files (field ids in the Parquet schema, PyIceberg's own column statistics)
and commits them as a new ``delete`` snapshot whose delete manifest PyIceberg's manifest
writer writes (its v2 writer, with ``content`` set to deletes), through PyIceberg's snapshot
producer (sequence numbers, manifest list and summary are PyIceberg's).

- :func:`position_deletes`: a position delete file (``file_path``, ``pos``), sorted as the
  spec asks;
- :func:`equality_deletes`: an equality delete file holding the delete columns (and
  optionally others), with ``equality_ids``;
- :func:`commit_deletes`: one snapshot adding the delete files.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.io.pyarrow import (
    compute_statistics_plan,
    data_file_statistics_from_parquet_metadata,
    parquet_path_to_id_mapping,
    schema_to_pyarrow,
)
from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    ManifestWriterV2,
)
from pyiceberg.schema import Schema
from pyiceberg.table.snapshots import Operation
from pyiceberg.table.update.snapshot import _FastAppendFiles
from pyiceberg.typedef import Record
from pyiceberg.types import LongType, NestedField, StringType

if TYPE_CHECKING:
    from pyiceberg.table import Table, Transaction
    from pyiceberg.table.snapshots import Snapshot

#: the spec's position delete file schema (reserved field ids)
POSITION_SCHEMA = Schema(
    NestedField(2147483546, "file_path", StringType(), required=True),
    NestedField(2147483545, "pos", LongType(), required=True),
)


def _write(table: Table, schema: Schema, rows: pa.Table, stem: str) -> tuple[str, int, Any]:
    """``rows`` as a Parquet file with ``schema``'s field ids; its path, size and statistics."""
    arrow_schema = schema_to_pyarrow(schema)
    rows = rows.select(arrow_schema.names).cast(arrow_schema)
    path = f"{table.location().rstrip('/')}/data/{stem}-{uuid.uuid4()}.parquet"
    output = table.io.new_output(path)
    with output.create() as stream:
        pq.write_table(rows, stream, row_group_size=max(1, rows.num_rows // 2 or 1))
    with table.io.new_input(path).open() as stream:
        metadata = pq.read_metadata(stream)
    statistics = data_file_statistics_from_parquet_metadata(
        metadata, compute_statistics_plan(schema, table.metadata.properties), parquet_path_to_id_mapping(schema)
    )
    return path, len(table.io.new_input(path)), statistics


def position_deletes(
    table: Table, deleted: list[tuple[str, int]], partition: Record | None = None, spec_id: int | None = None
) -> DataFile:
    """A position delete file deleting row ``pos`` of data file ``file_path`` for each pair."""
    ordered = sorted(deleted)
    rows = pa.table(
        {"file_path": [p for p, _ in ordered], "pos": pa.array([n for _, n in ordered], pa.int64())},
    )
    path, size, statistics = _write(table, POSITION_SCHEMA, rows, "pos-deletes")
    delete = DataFile.from_args(
        content=DataFileContent.POSITION_DELETES,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=partition if partition is not None else Record(),
        file_size_in_bytes=size,
        sort_order_id=None,
        equality_ids=None,
        key_metadata=None,
        **statistics.to_serialized_dict(),
    )
    delete.spec_id = table.metadata.default_spec_id if spec_id is None else spec_id
    return delete


def equality_deletes(
    table: Table,
    rows: pa.Table,
    delete_columns: list[str],
    partition: Record | None = None,
    spec_id: int | None = None,
    schema: Schema | None = None,
) -> DataFile:
    """An equality delete file: ``rows`` (columns named as in ``schema``, default the table's),
    matched on ``delete_columns``."""
    schema = schema or table.schema()
    written = schema.select(*rows.column_names)
    path, size, statistics = _write(table, written, rows, "eq-deletes")
    delete = DataFile.from_args(
        content=DataFileContent.EQUALITY_DELETES,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=partition if partition is not None else Record(),
        file_size_in_bytes=size,
        sort_order_id=None,
        equality_ids=[schema.find_field(name).field_id for name in delete_columns],
        key_metadata=None,
        **statistics.to_serialized_dict(),
    )
    delete.spec_id = table.metadata.default_spec_id if spec_id is None else spec_id
    return delete


class _DeleteManifestWriter(ManifestWriterV2):
    """PyIceberg's v2 manifest writer, for a manifest of delete files."""

    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


class _RowDelta(_FastAppendFiles):
    """PyIceberg's snapshot producer, adding delete files (in delete manifests) instead of data files."""

    def __init__(self, transaction: Transaction, io: Any, deletes: list[DataFile]) -> None:
        super().__init__(operation=Operation.DELETE, transaction=transaction, io=io)
        self._added_data_files = list(deletes)  # the summary counts them (as delete files, by content)

    def _manifests(self) -> list[ManifestFile]:
        by_spec: dict[int, list[DataFile]] = {}
        for delete in self._added_data_files:
            by_spec.setdefault(delete.spec_id, []).append(delete)
        manifests = []
        for spec_id, deletes in by_spec.items():
            writer = _DeleteManifestWriter(
                self.spec(spec_id), self.schema(), self.new_manifest_output(), self._snapshot_id, self._compression
            )
            with writer:
                for delete in deletes:
                    writer.add(
                        ManifestEntry.from_args(
                            status=ManifestEntryStatus.ADDED,
                            snapshot_id=self._snapshot_id,
                            sequence_number=None,
                            file_sequence_number=None,
                            data_file=delete,
                        )
                    )
            manifests.append(writer.to_manifest_file())
        return manifests + self._existing_manifests()


def commit_deletes(table: Table, deletes: list[DataFile]) -> Snapshot:
    """One ``delete`` snapshot adding ``deletes``; the table's new current snapshot."""
    with table.transaction() as transaction:
        _RowDelta(transaction, table.io, deletes).commit()
    table.refresh()
    snapshot = table.current_snapshot()
    assert snapshot is not None
    return snapshot


def data_files(table: Table) -> list[tuple[str, int]]:
    """(path, rows) of each live data file of the current snapshot, in manifest order."""
    snapshot = table.current_snapshot()
    if snapshot is None:
        return []
    return [
        (entry.data_file.file_path, entry.data_file.record_count)
        for manifest in snapshot.manifests(table.io)
        if manifest.content == ManifestContent.DATA
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True)
    ]
