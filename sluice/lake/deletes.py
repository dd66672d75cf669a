"""Row-level deletes: which delete files apply to a data file, and the rows they leave.

Engines that write merge-on-read (Iceberg's Spark runtime, Trino, Flink) record deleted
rows in delete files instead of rewriting data files. Planning (:class:`DeleteIndex`, on
the driver) matches each kept data file with the delete files the Iceberg spec
("Scan Planning") says apply to it:

- a **position** delete file (``file_path``, ``pos``) applies when the data file's data
  sequence number is *less than or equal to* the delete file's and both have the same
  partition (spec and values); only its rows naming the data file's path count;
- an **equality** delete file applies when the data file's data sequence number is
  *strictly less than* the delete file's and both have the same partition, or the delete
  file's spec is unpartitioned (a global delete). A data row is deleted when its values
  equal a delete row's in every delete column, NULL equal to NULL; delete columns are
  found by field id (a column renamed since is still matched, one dropped since is still
  used, one the data file lacks reads as NULL).

Reading (:func:`live_rows`, on a worker) removes those rows from each batch: positions
are positions in the data file, so a batch read from a row group is placed by the rows of
the groups before it. Deletes only remove rows, so statistics-based pruning stays valid;
answers that *count* rows from footers are not (see :mod:`sluice.lake.answers`).

PyIceberg's own ``DeleteFileIndex`` is not reused: it keys partitions by ``Record``, under
which a NaN partition value is not equal to itself (its position deletes would be lost) and
-0.0 equals 0.0, and it has no equality deletes (its scan refuses them). Partition values
here compare as Iceberg's Java comparators do.

Refused with a clear error rather than read wrongly: deletion vectors (format version 3,
Puffin files), delete files that are not Parquet, and equality deletes on float or double
columns (which the spec forbids).
"""

from __future__ import annotations

import decimal
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from sluice.lake.paths import open_input

if TYPE_CHECKING:
    from pyiceberg.manifest import DataFile, ManifestEntry
    from pyiceberg.schema import Schema
    from pyiceberg.table import Table
    from pyiceberg.table.name_mapping import NameMapping

POSITION, EQUALITY = "position", "equality"
#: the reserved field ids of a position delete file's columns
FILE_PATH_ID, POS_ID = 2147483546, 2147483545


@dataclass(frozen=True)
class DeleteRef:
    """One delete file that applies to a data file; ``keys``: an equality delete's columns
    as (field id, Spark type both sides are compared in)."""

    path: str
    kind: str
    rows: int
    keys: tuple[tuple[int, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "rows": self.rows, "keys": [list(k) for k in self.keys]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DeleteRef:
        return cls(data["path"], data["kind"], data["rows"], tuple((int(i), str(t)) for i, t in data["keys"]))


def _canonical(value: Any) -> Any:
    """A partition value as a key: NaN equal to NaN, -0.0 apart from 0.0 (as Iceberg compares them)."""
    if isinstance(value, float):
        return ("float", "NaN" if math.isnan(value) else repr(value))
    return value


def _partition_key(spec_id: int | None, partition: Any) -> tuple[Any, ...]:
    values = tuple(_canonical(partition[i]) for i in range(len(partition))) if partition is not None else ()
    return (spec_id or 0, values)


class DeleteIndex:
    """The live delete files of a snapshot, by partition, checked for what Sluice can apply.

    ``strict=False`` (maintenance, which only needs to know *whether* deletes apply to a file)
    indexes every delete file, those Sluice cannot read too, instead of refusing the table.
    """

    def __init__(
        self, entries: list[ManifestEntry], table: Table, schema: Schema, name: str, strict: bool = True
    ) -> None:
        from pyiceberg.manifest import DataFileContent, FileFormat

        self.total = len(entries)
        self._position: dict[tuple[Any, ...], list[tuple[int, DataFile, DeleteRef]]] = defaultdict(list)
        self._equality: dict[tuple[Any, ...], list[tuple[int, DeleteRef]]] = defaultdict(list)
        self._global: list[tuple[int, DeleteRef]] = []
        specs = table.specs()
        for entry in entries:
            delete = entry.data_file
            if strict and delete.file_format != FileFormat.PARQUET:
                kind = "a deletion vector (format version 3)" if delete.file_format == FileFormat.PUFFIN else ""
                raise ValueError(
                    f"lake table {name}: delete file {delete.file_path} is {kind or delete.file_format.name}"
                    f"{' in Puffin' if kind else ''}, which Sluice does not apply yet (it reads Parquet "
                    "position and equality delete files); the table is refused rather than read with deleted rows"
                )
            sequence = entry.sequence_number or 0
            key = _partition_key(delete.spec_id, delete.partition)
            if delete.content == DataFileContent.POSITION_DELETES:
                self._position[key].append(
                    (sequence, delete, DeleteRef(delete.file_path, POSITION, delete.record_count))
                )
            elif delete.content == DataFileContent.EQUALITY_DELETES:
                try:
                    keys = _equality_keys(delete, table, schema, name)
                except ValueError:
                    if strict:
                        raise
                    keys = ()
                ref = DeleteRef(delete.file_path, EQUALITY, delete.record_count, keys)
                spec = specs.get(delete.spec_id or 0)
                if spec is None and strict:  # global or not: guessing either way could be wrong
                    raise ValueError(
                        f"lake table {name}: equality delete file {delete.file_path} has partition spec "
                        f"{delete.spec_id}, which the table does not have"
                    )
                if spec is None or _unpartitioned(spec):
                    self._global.append((sequence, ref))
                else:
                    self._equality[key].append((sequence, ref))
            elif strict:
                raise ValueError(f"lake table {name}: a delete manifest lists {delete.file_path} as {delete.content}")

    def for_data_file(self, entry: ManifestEntry) -> tuple[DeleteRef, ...]:
        """The delete files that apply to the data file of ``entry`` (its data sequence number and partition)."""
        data = entry.data_file
        sequence = entry.sequence_number or 0
        key = _partition_key(data.spec_id, data.partition)
        found = [ref for seq, delete, ref in self._position.get(key, ()) if seq >= sequence and _names(delete, data)]
        found += [ref for seq, ref in self._equality.get(key, ()) if seq > sequence]
        found += [ref for seq, ref in self._global if seq > sequence]
        return tuple(found)


def _unpartitioned(spec: Any) -> bool:
    """No partition field, or only void ones (Iceberg's ``PartitionSpec.isUnpartitioned``)."""
    from pyiceberg.transforms import VoidTransform

    return all(isinstance(field.transform, VoidTransform) for field in spec.fields)


def _has(schema: Schema, field_id: int) -> bool:
    try:
        schema.find_field(field_id)
    except ValueError:
        return False
    return True


def _names(delete: DataFile, data: DataFile) -> bool:
    """False only when the delete file's ``file_path`` bounds exclude the data file's path (bounds
    compare UTF-8 bytes, code point order; a truncated bound still bounds)."""
    lower = (delete.lower_bounds or {}).get(FILE_PATH_ID)
    upper = (delete.upper_bounds or {}).get(FILE_PATH_ID)
    path = data.file_path.encode()
    return not (lower is not None and path < lower) and not (upper is not None and path > upper)


def _equality_keys(delete: DataFile, table: Table, schema: Schema, name: str) -> tuple[tuple[int, str], ...]:
    """Each delete column's field id and the Spark type it is compared in (the snapshot's type;
    a column dropped since: its type in the schema that last had it)."""
    from pyiceberg.types import DoubleType, FloatType

    from sluice.errors import ConfigError
    from sluice.lake.conform import spark_type

    if not delete.equality_ids:
        raise ValueError(f"lake table {name}: equality delete file {delete.file_path} names no equality field ids")
    schemas = [schema, *sorted(table.schemas().values(), key=lambda s: -s.schema_id)]
    keys = []
    for field_id in delete.equality_ids:
        found = next((s.find_field(field_id) for s in schemas if _has(s, field_id)), None)
        if found is None:
            raise ValueError(
                f"lake table {name}: equality delete file {delete.file_path} names field id {field_id}, "
                "which no schema of the table has"
            )
        if isinstance(found.field_type, (FloatType, DoubleType)):
            raise ValueError(
                f"lake table {name}: equality delete file {delete.file_path} deletes by the {found.field_type} "
                f"column {found.name}, which the Iceberg spec forbids (float and double columns cannot be "
                "delete columns); the table is refused rather than read with a guess"
            )
        try:
            keys.append((field_id, spark_type(found.field_type).simpleString()))
        except ConfigError:
            raise ValueError(
                f"lake table {name}: equality delete file {delete.file_path} deletes by the "
                f"{found.field_type} column {found.name}, which Sluice does not read yet"
            ) from None
    return tuple(keys)


# ------------------------------------------------------------------ reading


class DeleteReader:
    """Reads delete files for one read task, each once (a delete file often applies to many data files)."""

    def __init__(self, mapping: NameMapping) -> None:
        self.mapping = mapping
        self._positions: dict[str, dict[str, Any]] = {}
        self._equality: dict[str, pa.Table] = {}

    def positions(self, data_path: str, deletes: tuple[DeleteRef, ...]) -> Any:
        """The sorted positions of ``data_path`` that its position delete files delete (a numpy array)."""
        import numpy as np

        found = [self._by_path(d.path).get(data_path) for d in deletes if d.kind == POSITION]
        arrays = [a for a in found if a is not None]
        return np.unique(np.concatenate(arrays)) if arrays else np.empty(0, dtype=np.int64)

    def _by_path(self, path: str) -> dict[str, Any]:
        import numpy as np

        if path not in self._positions:
            table = _read_columns(path, [(FILE_PATH_ID, "file_path"), (POS_ID, "pos")], self.mapping)
            grouped = table.group_by("c0").aggregate([("c1", "list")])
            self._positions[path] = {
                target: np.asarray(positions, dtype=np.int64)
                for target, positions in zip(grouped["c0"].to_pylist(), grouped["c1_list"].to_pylist(), strict=True)
            }
        return self._positions[path]

    def equality(self, delete: DeleteRef) -> pa.Table:
        """The distinct delete keys of an equality delete file, columns ``k0..``, in their compare types."""
        from sluice.types import SparkType

        if delete.path not in self._equality:
            table = _read_columns(delete.path, [(field_id, None) for field_id, _ in delete.keys], self.mapping)
            columns = [
                _cast(table.column(i), SparkType(type_name).arrow()) for i, (_, type_name) in enumerate(delete.keys)
            ]
            keys = pa.table({f"k{i}": c for i, c in enumerate(columns)})
            self._equality[delete.path] = keys.group_by(keys.column_names).aggregate([])
        return self._equality[delete.path]


class DeleteFileError(Exception):
    """A delete file that applies to a data file could not be read: the query fails, naming it,
    rather than return rows it deletes."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"delete file {path} {problem}")
        self.path, self.problem = path, problem


def _read_columns(path: str, wanted: list[tuple[int, str | None]], mapping: NameMapping) -> pa.Table:
    """Columns of a delete file by field id (a file without ids: by ``name``, else by the name mapping)."""
    import pyarrow.parquet as pq

    from sluice.lake.fields import file_columns

    try:
        with open_input(path) as handle:
            parquet = pq.ParquetFile(handle)
            held = file_columns(parquet.schema_arrow, mapping)
            names = []
            for field_id, fallback in wanted:
                name = held.get(field_id) or (fallback if fallback in parquet.schema_arrow.names else None)
                if name is None:
                    raise DeleteFileError(path, f"has no column with field id {field_id}")
                names.append(name)
            table = parquet.read(columns=list(dict.fromkeys(names)))
    except FileNotFoundError:
        raise DeleteFileError(path, "is missing: the query fails rather than return the rows it deletes") from None
    except (OSError, ValueError, pa.ArrowException) as error:
        raise DeleteFileError(path, f"cannot be read: {error}") from None
    return pa.table([table.column(name) for name in names], names=[f"c{i}" for i in range(len(names))])


def _cast(array: Any, target: pa.DataType) -> Any:
    return array if array.type == target else array.cast(target)


def _zero(data_type: pa.DataType) -> pa.Scalar:
    """A non-NULL value of ``data_type`` to stand in for NULL in a join key (a flag column tells them apart)."""
    if pa.types.is_string(data_type) or pa.types.is_large_string(data_type):
        return pa.scalar("", data_type)
    if pa.types.is_binary(data_type) or pa.types.is_large_binary(data_type):
        return pa.scalar(b"", data_type)
    if pa.types.is_boolean(data_type):
        return pa.scalar(False)
    if pa.types.is_decimal(data_type):
        return pa.scalar(decimal.Decimal(0), data_type)
    if pa.types.is_date32(data_type):
        return pa.scalar(0, pa.int32()).cast(data_type)
    return pa.scalar(0, pa.int64()).cast(data_type)  # integers and timestamps


def _null_safe(columns: list[Any]) -> dict[str, Any]:
    """Join keys on which NULL equals NULL: each column as (is NULL, value with NULL filled)."""
    keys: dict[str, Any] = {}
    for i, column in enumerate(columns):
        keys[f"n{i}"] = pc.is_null(column)
        keys[f"v{i}"] = pc.fill_null(column, _zero(column.type))
    return keys


def equality_deleted(columns: list[Any], delete_keys: pa.Table) -> Any:
    """A numpy mask of the rows whose ``columns`` equal a row of ``delete_keys`` (NULL equals NULL)."""
    import numpy as np

    count = len(columns[0])
    mask = np.zeros(count, dtype=bool)
    if count == 0 or delete_keys.num_rows == 0:
        return mask
    left = pa.table({**_null_safe(columns), "__row": pa.array(np.arange(count, dtype=np.int64))})
    right = pa.table(_null_safe([delete_keys.column(i) for i in range(delete_keys.num_columns)]))
    matched = left.join(right, keys=[k for k in right.column_names], join_type="left semi")
    mask[matched.column("__row").to_numpy()] = True
    return mask


def live_rows(
    batch: pa.RecordBatch,
    start: int,
    positions: Any,
    equality: list[tuple[list[Any], pa.Table]],
) -> pa.RecordBatch:
    """``batch`` (rows ``start`` .. of its data file) without the deleted rows: ``positions`` (sorted)
    and, per equality delete file, the batch's values of its delete columns and its delete keys."""
    import numpy as np

    count = batch.num_rows
    keep = np.ones(count, dtype=bool)
    if len(positions):
        low, high = np.searchsorted(positions, [start, start + count])
        keep[positions[low:high] - start] = False
    for columns, keys in equality:
        keep &= ~equality_deleted(columns, keys)
    return batch if keep.all() else batch.filter(pa.array(keep))
