"""Iceberg lake tables: the pruning pyramid on the driver, Parquet + DuckDB on the workers.

Planning (:meth:`IcebergSource.tasks`, on the driver) prunes manifests, data files and
row groups for the pushed predicates (:mod:`sluice.lake.pyramid`) and spreads what is
left over Spark partitions, balanced by bytes. Each task names its files, their kept row
groups, and whether each file needs filtering at all. Reading (on a worker) streams those
row groups with pyarrow and, where a file needs it, runs the pushed predicates (plus the
order and limit, if pushed) in an in-process DuckDB over the Arrow stream: the lake
dialect is DuckDB's, so what is pushed is exact.

The scan reads the snapshot that was current at planning time, or the one time travel
pinned in the table's handle (``TableSchema.snapshot``, :mod:`sluice.lake.snapshots`);
tasks carry its file list, so a commit during the query is not half-seen. Columns are
found in each file by Iceberg field id (:mod:`sluice.lake.fields`), so renamed, added
and dropped columns read as Iceberg says.

Pushed aggregates (:mod:`sluice.planner.aggregates`) run in the same DuckDB over every kept
file, in one task, so only the groups reach Spark. ``COUNT(*)`` is answered from the
files' metadata, reading no data file, when strict evaluation cleared every kept file (no
filter, or filters the file statistics prove) and no kept file has delete files: the row
counts Parquet records; so are ``MIN``/``MAX`` of integer and date columns
(:mod:`sluice.lake.answers`).

Row-level deletes (:mod:`sluice.lake.deletes`) are applied as each data file is streamed,
before any filter, order, limit or aggregate: every path below sees live rows only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
from sqlglot import exp

from sluice.dialects.lake import LakeDialect
from sluice.errors import BindError, SourceError
from sluice.lake import metadata_tables
from sluice.lake.answers import from_metadata
from sluice.lake.catalog import LakeLocation, forget_catalog, open_catalog, read_table, wants_create
from sluice.lake.fields import file_columns, name_mapping, parse_mapping
from sluice.lake.paths import open_input
from sluice.lake.snapshots import snapshot_at, snapshot_schema
from sluice.pushdown.levels import Level, Verdict
from sluice.scan.aggregation import Aggregation
from sluice.scan.spec import ScanSpec
from sluice.sources.arrow import conform
from sluice.sources.base import ReadTask, Source
from sluice.sources.duckdb import SESSION_SETTINGS
from sluice.types import AsOf, Column, SparkType, TableSchema

if TYPE_CHECKING:
    import duckdb
    from pyiceberg.schema import Schema
    from pyiceberg.table import Table
    from pyiceberg.table.name_mapping import NameMapping
    from pyiceberg.table.snapshots import Snapshot
    from pyiceberg.types import IcebergType

    from sluice.lake.deletes import DeleteReader
    from sluice.lake.pyramid import FileRead, Pyramid
    from sluice.lake.vectorised import Choice, Mode
    from sluice.protocol.scan import FiltersRequest, PlanRequest

#: Iceberg primitive type (its string form) -> (Spark type, DuckDB type of the Arrow column)
_TYPES = {
    "boolean": ("boolean", "BOOLEAN"),
    "int": ("int", "INTEGER"),
    "long": ("bigint", "BIGINT"),
    "float": ("float", "FLOAT"),
    "double": ("double", "DOUBLE"),
    "string": ("string", "VARCHAR"),
    "date": ("date", "DATE"),
    "timestamptz": ("timestamp", "TIMESTAMP WITH TIME ZONE"),
    "timestamp": ("timestamp_ntz", "TIMESTAMP"),
    "binary": ("binary", "BLOB"),
}
_RELATION = "lake_rows"


class IcebergSource(Source):
    dialect = LakeDialect()
    kind = "a lake (Iceberg) source"
    aggregates = True
    #: Spark's vectorised reader decodes in the JVM, where nothing counts its Arrow bytes: both
    #: readers count the compressed bytes of the columns of the row groups they read
    bytes_counted = "compressed Parquet bytes read"

    def __init__(self, name: str, url: str, **options: Any) -> None:
        super().__init__(name, url, **options)
        self.location = LakeLocation.from_url(url)

    def _table(self, namespace: str | None, table: str) -> Table:
        """The catalog's table as it points at it now (a source holds parameters, not connections;
        the table is parsed once per metadata file, :func:`sluice.lake.catalog.read_table`)."""
        return read_table(self.location, namespace, table, self.name)

    def check(self) -> None:
        """The catalog opens; with ``create=true`` in the URL a missing one is made (an empty
        lake), and removed again when it then fails, with the folders the attach made, so a
        failed attach leaves nothing behind."""
        path = self.location.catalog_path
        created = wants_create(self.url) and not os.path.exists(path)
        made = _missing_folders((os.path.dirname(path), self.location.warehouse)) if created else []
        try:
            catalog = open_catalog(self.location, create=created, name=self.name)
            try:
                catalog.list_namespaces()
            except Exception as error:  # noqa: BLE001 - SQLAlchemy: the file is not a catalog
                raise SourceError(self.name, f"{path} is not an Iceberg SQL catalog: {error}") from None
        except BaseException:
            if created:
                forget_catalog(self.location)
                if os.path.isfile(path):
                    os.remove(path)
                for folder in made:  # deepest first; only what this attach made, and only when empty
                    try:
                        os.rmdir(folder)
                    except OSError:
                        pass
            raise

    def describe(self, schema: str | None, table: str) -> TableSchema:
        metadata = metadata_tables.split(table)
        if metadata is not None:  # t.snapshots: sluice/lake/metadata_tables.py
            iceberg = self._table(schema, metadata[0])
            return metadata_tables.describe(
                self.name, schema or "", table, iceberg, metadata_tables.rows(iceberg, metadata[1])
            )
        iceberg = self._table(schema, table)
        return _described(self.name, schema, table, iceberg, iceberg.current_snapshot(), pinned=False)

    def describe_as_of(self, schema: str | None, table: str, as_of: AsOf) -> TableSchema:
        """The table at a snapshot: its schema then, and the snapshot pinned in the handle."""
        metadata = metadata_tables.split(table)
        if metadata is not None:
            if metadata[1] not in metadata_tables.AS_OF:
                raise metadata_tables.refuse_time_travel(f"{self.name}.{schema}.{table}")
            iceberg = self._table(schema, metadata[0])
            pinned = snapshot_at(iceberg, as_of, f"{self.name}.{schema}.{metadata[0]}").snapshot_id
            found = metadata_tables.rows(iceberg, metadata[1], pinned)
            return replace(metadata_tables.describe(self.name, schema or "", table, iceberg, found), snapshot=pinned)
        iceberg = self._table(schema, table)
        snapshot = snapshot_at(iceberg, as_of, f"{self.name}.{schema}.{table}")
        return _described(self.name, schema, table, iceberg, snapshot, pinned=True)

    def tables(self) -> list[tuple[str | None, str]]:
        catalog = open_catalog(self.location, name=self.name)
        return [
            (".".join(namespace), identifier[-1])
            for namespace in catalog.list_namespaces()
            for identifier in catalog.list_tables(namespace)
        ]

    # ------------------------------------------------------------ planning
    def pruning(self, spec: ScanSpec) -> Pyramid | None:
        """The pruning pyramid of a planned scan (what EXPLAIN shows and the tasks read)."""
        if metadata_tables.split(spec.table.name) is not None:
            return None  # a metadata table's rows are PyIceberg's, not data files
        return self._pyramid(spec, _needed_columns(spec), self._table(spec.table.schema, spec.table.name))

    def _pyramid(self, spec: ScanSpec, needed: tuple[str, ...], table: Table) -> Pyramid:
        from sluice.lake.pyramid import plan_pyramid  # PyIceberg's evaluators: imported where planning happens

        try:
            return plan_pyramid(
                table, spec.table.qualified_name, tuple(spec.where_sql(self.dialect)), needed, spec.table.snapshot
            )
        except ValueError as error:
            raise SourceError(self.name, str(error)) from None
        except FileNotFoundError as error:  # planning reads manifests and data file footers
            raise SourceError(
                self.name,
                f"lake table {spec.table.qualified_name}: a file its current snapshot names is missing: {error}",
            ) from None
        except (OSError, pa.ArrowException) as error:
            raise SourceError(
                self.name, f"lake table {spec.table.qualified_name}: planning the scan failed: {error}"
            ) from None

    @property
    def lake(self) -> LakeLocation:
        return self.location

    def filters_as_read(self, table: TableSchema, verdicts: list[Verdict], request: FiltersRequest) -> list[Verdict]:
        """A lake scan Spark's vectorised Parquet reader will read (it keeps most of the rows)
        applies no conjunct: the EXACT ones become INEXACT (they prune; Spark filters)."""
        from sluice.lake.vectorised import mode_of

        if not any(v.level is Level.EXACT for v in verdicts) or metadata_tables.split(table.name) is not None:
            return verdicts
        mode = mode_of(request)
        pushed = tuple(v.pushed for v in verdicts if v.level.pushed and v.pushed is not None)
        spec = ScanSpec.for_source(self, table, tuple(c.name for c in table.columns), where=pushed, partitions=1)
        choice, _ = self.reader_choice(spec, mode=mode)
        if not choice.vectorised:
            return verdicts
        note = "read by Spark's vectorised Parquet reader: it prunes, Spark filters"
        return [
            replace(v, level=Level.INEXACT, reason=f"{v.reason}; {note}") if v.level is Level.EXACT else v
            for v in verdicts
        ]

    def plan_reader(
        self, spec: ScanSpec, request: PlanRequest, verdicts: list[Verdict]
    ) -> tuple[Choice | None, dict[str, Any] | None]:
        """The reader the planned scan gets (:meth:`reader_choice`), with what keeps it from Spark's
        vectorised one: the reference path, pushed aggregates or a pushed LIMIT need the Python
        reader. A metadata table has one reader (its rows are Arrow already)."""
        from sluice.lake.vectorised import mode_of

        if metadata_tables.split(spec.table.name) is not None:
            return None, None

        mode = mode_of(request)
        blocker = None
        if not request.pushdown:  # the reference path counts every row it reads
            blocker = "pushdown off: the reference path reads with the Python reader, which counts its rows"
        elif spec.aggregate is not None:
            blocker = "aggregates pushed: the Python reader answers them"
        elif spec.limit is not None:
            blocker = f"LIMIT {spec.limit} pushed: the Python reader stops after it"
        return self.reader_choice(
            spec,
            mode=mode,
            blocker=blocker,
            verdicts=verdicts,
            parallelism=request.parallelism or 2,
        )

    def reader_choice(
        self,
        spec: ScanSpec,
        *,
        mode: Mode,
        blocker: str | None = None,
        verdicts: list[Verdict] | None = None,
        parallelism: int = 2,
    ) -> tuple[Choice, dict[str, Any] | None]:
        """Which reader reads the scan and why (:mod:`sluice.lake.vectorised`), with what
        Spark's Parquet reader reads when it is the vectorised one."""
        from sluice.lake.pyramid import file_layout
        from sluice.lake.vectorised import choose, needed_fields, vector_read

        iceberg = self._table(spec.table.schema, spec.table.name)
        pyramid = self._pyramid(spec, _needed_columns(spec), iceberg)
        fields = _read_schema(iceberg, spec.table)
        mapping = name_mapping(iceberg, fields)
        try:
            layouts = {read.path: file_layout(read.path, fields, mapping) for read in pyramid.reads}
        except FileNotFoundError as error:
            raise SourceError(
                self.name,
                f"lake table {spec.table.qualified_name}: a file its snapshot names is missing: {error}",
            ) from None
        needed = needed_fields(fields, [(name, spec.table.column(name).type) for name in spec.columns])
        choice = choose(pyramid, layouts, needed, mode=mode, blocker=blocker, exact=verdicts)
        if not choice.vectorised:
            return choice, None
        return choice, {
            **vector_read(pyramid, layouts, needed, parallelism),
            "table": spec.table.qualified_name,
            "snapshot": pyramid.snapshot_id,
            # what Spark's reader reads: the kept row groups (Spark filters their rows)
            "rows": sum(read.rows for read in pyramid.reads),
            "bytes": sum(read.bytes for read in pyramid.reads),
        }

    def tasks(self, spec: ScanSpec) -> list[ReadTask]:
        metadata = metadata_tables.split(spec.table.name)
        if metadata is not None:
            return [self._metadata_task(spec, *metadata)]
        needed = _needed_columns(spec)
        iceberg = self._table(spec.table.schema, spec.table.name)
        pyramid = self._pyramid(spec, needed, iceberg)
        count = 1 if spec.limit is not None or spec.aggregate is not None else max(1, spec.partitions)
        groups = _balanced(list(pyramid.reads), count)
        schema = spec.arrow_schema()
        fields = _read_schema(iceberg, spec.table)
        # each column with its field id: older files hold it under another name, or not at all
        if not needed:  # COUNT(*) alone: rows without columns have no count, so one column is read
            needed = (spec.table.columns[0].name,)
        read = [[name, spec.table.column(name).type.name, fields.find_field(name).field_id] for name in needed]
        mapping = name_mapping(iceberg, fields)
        base = {
            "table": spec.table.qualified_name,
            "snapshot": pyramid.snapshot_id,
            "columns": list(spec.columns),
            "read": read,
            "mapping": mapping,
            "where": spec.where_sql(self.dialect),
            "order": spec.order_sql(self.dialect, qualify=False),  # the select list over lake_rows is bare columns
            "limit": spec.limit,
            "aggregate": spec.aggregate.to_dict() if spec.aggregate is not None else None,
        }
        if (
            spec.aggregate is not None
            and not spec.aggregate.group_by
            and not any(r.filtered or r.deletes for r in pyramid.reads)  # footers count deleted rows too
        ):
            answers = from_metadata(fields, mapping, list(pyramid.reads), spec.aggregate.outputs)
            if answers is not None:
                present = [read.path for read in pyramid.reads]  # checked at read time, as a read would find them
                return [
                    ReadTask(json.dumps({**base, "files": [], "metadata_answer": answers, "present": present}), schema)
                ]
        tasks = [
            ReadTask(json.dumps({**base, "files": [read.to_dict() for read in group]}), schema, index)
            for index, group in enumerate(groups)
        ]
        return tasks or [ReadTask(json.dumps({**base, "files": []}), schema, 0)]

    def _metadata_task(self, spec: ScanSpec, table: str, kind: str) -> ReadTask:
        """One task carrying the metadata table's rows (PyIceberg's, read now) as Arrow."""
        found = metadata_tables.rows(self._table(spec.table.schema, table), kind, spec.table.snapshot)
        needed = _needed_columns(spec) or (spec.table.columns[0].name,)  # COUNT(*) alone: one column's rows
        request = {
            "table": spec.table.qualified_name,
            "snapshot": None,
            "columns": list(spec.columns),
            "where": spec.where_sql(self.dialect),
            "order": spec.order_sql(self.dialect, qualify=False),
            "limit": spec.limit,
            "aggregate": spec.aggregate.to_dict() if spec.aggregate is not None else None,
            "files": [],
            "metadata_rows": metadata_tables.encoded(found.select([spec.table.column(n).name for n in needed])),
        }
        return ReadTask(json.dumps(request), spec.arrow_schema(), 0)

    def request_text(self, spec: ScanSpec) -> str:
        read = (
            ", ".join(self.dialect.render(o.sql_tree()) for o in spec.aggregate.outputs)
            if spec.aggregate is not None
            else ", ".join(spec.columns)
        )
        text = f"Iceberg scan of {spec.table.schema}.{spec.table.name} ({read})"
        if spec.table.snapshot is not None:  # time travel: the snapshot the handle pinned
            text += f" AS OF SNAPSHOT {spec.table.snapshot}"
        if spec.where:
            text += " WHERE " + " AND ".join(f"({w})" for w in spec.where_sql(self.dialect))
        if spec.aggregate is not None and spec.aggregate.group_by:
            text += " GROUP BY " + ", ".join(spec.aggregate.group_by_sql(self.dialect))
        elif spec.aggregate is not None:
            text += (
                " (COUNT(*) and integer/date MIN/MAX from file statistics when no kept file needs filtering"
                " or has delete files)"
            )
        if spec.order:
            text += f" {spec.order_sql(self.dialect, qualify=False)}"
        if spec.limit is not None:
            text += f" LIMIT {spec.limit}"
        return text

    # ------------------------------------------------------------ reading
    def counted_bytes(self, task: ReadTask, decoded: int) -> int:
        """The compressed bytes of the columns read in the row groups of the task's files (what
        :func:`~sluice.planner.catalog._record_vectorised` records for Spark's Parquet reader)."""
        return sum(int(f["bytes"]) for f in json.loads(task.request)["files"])

    def read(self, task: ReadTask) -> Iterator[pa.RecordBatch]:
        """Files strict evaluation cleared stream as they are; the rest go through one DuckDB query."""
        from sluice.lake.pyramid import FileRead

        request = json.loads(task.request)
        if request.get("metadata_rows") is not None:  # a metadata table (sluice/lake/metadata_tables.py)
            found = metadata_tables.decoded(request["metadata_rows"])
            batches = found.to_batches(self.batch_rows)
            if request["where"] or request["order"] or request["limit"] is not None or request["aggregate"]:
                yield from self._query(iter(batches), found.schema, request, task.schema)
            else:
                for batch in batches:
                    yield conform(batch.select(request["columns"]), task.schema)
            return
        files = [FileRead.from_dict(f) for f in request["files"]]
        columns = pa.schema([pa.field(name, SparkType(type_name).arrow()) for name, type_name, _ in request["read"]])
        field_ids = [field_id for _, _, field_id in request["read"]]
        mapping = parse_mapping(request["mapping"])
        engine_for_all = bool(request["order"] or request["limit"] is not None or request.get("aggregate"))
        filtered = [f for f in files if engine_for_all or (f.filtered and request["where"])]
        try:
            if request.get("metadata_answer") is not None:  # answered by the files' statistics (sluice/lake/answers.py)
                _check_present(request["present"])
                arrays = [
                    pa.array([value], field.type)
                    for value, field in zip(request["metadata_answer"], task.schema, strict=True)
                ]
                yield pa.RecordBatch.from_arrays(arrays, schema=task.schema)
                return
            for batch in stream_files(
                [f for f in files if f not in filtered], columns, field_ids, mapping, self.batch_rows
            ):
                yield conform(batch.select(request["columns"]), task.schema)
            if filtered or request.get("aggregate"):  # an aggregate without GROUP BY answers one row even over no file
                yield from self._query(
                    stream_files(filtered, columns, field_ids, mapping, self.batch_rows), columns, request, task.schema
                )
        except _FileError as error:
            raise SourceError(
                self.name,
                f"lake table {request['table']} (snapshot {request['snapshot']}): {error}",
            ) from None
        except (OSError, pa.ArrowException) as error:
            raise SourceError(self.name, f"reading lake table {request['table']} failed: {error}") from None

    def _query(
        self, batches: Iterator[pa.RecordBatch], columns: pa.Schema, request: dict[str, Any], schema: pa.Schema
    ) -> Iterator[pa.RecordBatch]:
        """Run the pushed predicates, order and limit in DuckDB over an Arrow stream.

        A data file that fails inside the stream reaches us as DuckDB's or Arrow's error
        text; the file's own error is kept aside and raised instead.
        """
        import duckdb

        failed: list[_FileError] = []

        def watched() -> Iterator[pa.RecordBatch]:
            try:
                yield from batches
            except _FileError as error:
                failed.append(error)
                raise

        connection = _engine().cursor()  # a connection of its own, cheaply (a new database costs ~50 ms)
        try:
            for setting in SESSION_SETTINGS:
                connection.execute(setting)
            connection.register(_RELATION, pa.RecordBatchReader.from_batches(columns, watched()))
            aggregate = Aggregation.from_dict(request["aggregate"]) if request.get("aggregate") else None
            if aggregate is not None:
                select = ", ".join(aggregate.select_sql(self))
            else:
                select = ", ".join(self.dialect.render_identifier(c) for c in request["columns"])
            sql = f"SELECT {select} FROM {_RELATION}"
            if request["where"]:
                sql += " WHERE " + " AND ".join(f"({w})" for w in request["where"])
            if aggregate is not None and aggregate.group_by:
                sql += " GROUP BY " + ", ".join(aggregate.group_by_sql(self.dialect))
            if request["order"]:
                sql += f" {request['order']}"
            if request["limit"] is not None:
                sql += f" LIMIT {int(request['limit'])}"
            for batch in connection.sql(sql).to_arrow_reader(self.batch_rows):
                yield conform(batch, schema)
        except (duckdb.Error, OSError, pa.ArrowException) as error:  # DuckDB reports a failed stream as an OSError
            if failed:
                raise failed[0] from None
            if not isinstance(error, duckdb.Error):
                raise
            raise SourceError(self.name, f"filtering lake rows failed: {error}") from None
        finally:
            connection.close()


class _FileError(Exception):
    """One data file of a planned scan could not be read (it is named, and the query fails)."""

    def __init__(self, path: str, problem: str, kind: str = "data file") -> None:
        super().__init__(f"{kind} {path} {problem}")
        self.path, self.problem, self.kind = path, problem, kind


_ENGINE: list[duckdb.DuckDBPyConnection] = []


def _engine() -> duckdb.DuckDBPyConnection:
    """The process's in-memory DuckDB (one thread per query: Spark runs the tasks in parallel)."""
    import duckdb

    if not _ENGINE:
        _ENGINE.append(duckdb.connect(":memory:", config={"threads": 1}))
    return _ENGINE[0]


def stream_files(
    files: list[FileRead], columns: pa.Schema, field_ids: list[int], mapping: NameMapping, batch_rows: int
) -> Iterator[pa.RecordBatch]:
    """The kept row groups of ``files``, ``columns`` only (typed as Spark reads them).

    Columns are found in each file by field id (:mod:`sluice.lake.fields`): a renamed column
    under its old name, and a column the file lacks (added to the table after the file was
    written) reads as NULL, as Iceberg's schema evolution says.
    """
    from sluice.lake.deletes import DeleteFileError, DeleteReader

    deletes = DeleteReader(mapping)
    for read in files:
        if not read.row_groups:
            continue
        try:
            with open_input(read.path) as handle:
                parquet = pq.ParquetFile(handle)
                held = file_columns(parquet.schema_arrow, mapping)
                if read.deletes:
                    yield from _live(parquet, read, held, columns, field_ids, deletes, batch_rows)
                    continue
                wanted = list(dict.fromkeys(held[i] for i in field_ids if i in held))
                for batch in parquet.iter_batches(
                    batch_size=batch_rows, row_groups=list(read.row_groups), columns=wanted
                ):
                    yield _project(batch, held, columns, field_ids)
        except DeleteFileError as error:
            raise _FileError(
                error.path, f"{error.problem} (it applies to data file {read.path})", "delete file"
            ) from None
        except FileNotFoundError:
            raise _FileError(
                read.path,
                "is missing (deleted after the scan was planned?): the query fails rather than return fewer rows",
            ) from None
        except (OSError, pa.ArrowException) as error:
            raise _FileError(read.path, f"cannot be read: {error}") from None


def _project(batch: pa.RecordBatch, held: dict[int, str], columns: pa.Schema, field_ids: list[int]) -> pa.RecordBatch:
    """``batch`` as the ``columns`` read: each found by field id, NULL where the file lacks it."""
    arrays = [
        _cast(batch.column(held[i]), f.type) if i in held else pa.nulls(batch.num_rows, f.type)
        for f, i in zip(columns, field_ids, strict=True)
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=columns)


def _live(
    parquet: pq.ParquetFile,
    read: FileRead,
    held: dict[int, str],
    columns: pa.Schema,
    field_ids: list[int],
    deletes: DeleteReader,
    batch_rows: int,
) -> Iterator[pa.RecordBatch]:
    """The kept row groups of a data file without the rows its delete files delete.

    Each row group is read on its own so every batch knows the file position of its first
    row (the rows of the groups before it); equality delete columns are read too (by field
    id, NULL where the file lacks one) and dropped after matching.
    """
    from sluice.lake.deletes import EQUALITY, live_rows
    from sluice.types import SparkType

    equality = [d for d in read.deletes if d.kind == EQUALITY]
    positions = deletes.positions(read.path, read.deletes)
    keys = [(d, deletes.equality(d)) for d in equality]
    key_ids = [field_id for d in equality for field_id, _ in d.keys]
    wanted = list(dict.fromkeys(held[i] for i in [*field_ids, *key_ids] if i in held))
    starts = [0]
    for group in range(parquet.metadata.num_row_groups):
        starts.append(starts[-1] + parquet.metadata.row_group(group).num_rows)
    for group in read.row_groups:
        start = starts[group]
        for batch in parquet.iter_batches(batch_size=batch_rows, row_groups=[group], columns=wanted):
            matches = [
                (
                    [
                        _cast(batch.column(held[i]), SparkType(t).arrow())
                        if i in held
                        else pa.nulls(batch.num_rows, SparkType(t).arrow())
                        for i, t in d.keys
                    ],
                    table,
                )
                for d, table in keys
            ]
            live = live_rows(batch, start, positions, matches)
            start += batch.num_rows
            if live.num_rows:
                yield _project(live, held, columns, field_ids)


def _check_present(paths: list[str]) -> None:
    """Every data file a metadata answer counted still exists: a missing one fails the query,
    naming it, as reading it would (footers are cached per process, so planning may not notice)."""

    for path in paths:
        try:
            open_input(path).close()
        except FileNotFoundError:
            raise _FileError(
                path,
                "is missing (deleted after the scan was planned?): the query fails rather than "
                "answer from its statistics",
            ) from None


def _cast(array: pa.Array, target: pa.DataType) -> pa.Array:
    return array if array.type == target else array.cast(target)


def _needed_columns(spec: ScanSpec) -> tuple[str, ...]:
    """Projected columns (or those the pushed aggregates read) plus every column the pushed
    predicates and order refer to."""
    names = {c.name.lower(): c.name for c in spec.table.columns}
    needed = list(spec.columns) if spec.aggregate is None else []
    referred = [column.name for conjunct in spec.where for column in conjunct.sql_tree().find_all(exp.Column)]
    referred += [key.column for key in spec.order]
    for output in spec.aggregate.outputs if spec.aggregate is not None else ():
        referred += [column.name for column in output.sql_tree().find_all(exp.Column)]
    for referred_name in referred:
        name = names.get(referred_name.lower())
        if name is not None and name not in needed:
            needed.append(name)
    return tuple(needed)


def _read_schema(iceberg: Table, table: TableSchema) -> Schema:
    """The schema a scan finds its columns' field ids in: the pinned snapshot's for a time travel
    (whose description has that schema's columns), the current one when the description has
    columns that schema lacks: a row-level operation (UPDATE, MERGE) pins the current snapshot
    with the current columns, and a column added or renamed since that snapshot is only there."""
    pinned = snapshot_schema(iceberg, table.snapshot)
    names = {field.name for field in pinned.fields}
    return pinned if all(column.name in names for column in table.columns) else iceberg.schema()


def _described(
    source: str, schema: str | None, table: str, iceberg: Table, snapshot: Snapshot | None, pinned: bool
) -> TableSchema:
    """A lake table as Spark sees it at ``snapshot`` (its schema then); ``pinned``: time travel,
    the snapshot travels in the handle."""
    name = ".".join(iceberg.name())
    pinned_id = snapshot.snapshot_id if snapshot is not None and pinned else None
    fields = snapshot_schema(iceberg, pinned_id).fields  # the current table: its current schema
    columns = tuple(_column(f.name, f.field_type, not f.required, name) for f in fields)
    summary = snapshot.summary if snapshot is not None else None
    rows = int(summary.additional_properties.get("total-records", 0)) if summary is not None else 0
    return TableSchema(source, schema, table, columns, row_estimate=rows, snapshot=pinned_id)


def _balanced(reads: list[FileRead], count: int) -> list[list[FileRead]]:
    """At most ``count`` groups of similar byte size (largest file first, to the lightest group)."""
    groups: list[list[FileRead]] = [[] for _ in range(min(count, len(reads)))]
    sizes = [0] * len(groups)
    for read in sorted(reads, key=lambda r: r.bytes, reverse=True):
        lightest = sizes.index(min(sizes))
        groups[lightest].append(read)
        sizes[lightest] += read.bytes
    return groups


def _column(name: str, field_type: IcebergType, nullable: bool, table: str) -> Column:
    text = str(field_type)
    if text in _TYPES:
        spark, duck = _TYPES[text]
        return Column(name, SparkType(spark), duck, nullable=nullable)
    from pyiceberg.types import DecimalType

    if isinstance(field_type, DecimalType):
        precision, scale = field_type.precision, field_type.scale
        return Column(
            name, SparkType(f"decimal({precision},{scale})"), f"DECIMAL({precision},{scale})", nullable=nullable
        )
    raise BindError(f"lake table {table}: column {name} has Iceberg type {text}, which Sluice does not read yet")


def _missing_folders(folders: tuple[str, ...]) -> list[str]:
    """The folders (and their ancestors) that do not exist yet, deepest first."""
    missing: list[str] = []
    for folder in folders:
        while folder and not os.path.exists(folder) and folder not in missing:
            missing.append(folder)
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    return sorted(missing, key=lambda f: f.count(os.sep), reverse=True)
