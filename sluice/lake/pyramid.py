"""The pruning pyramid: which manifests, data files and row groups a lake scan must read.

Four levels, each narrowing what the previous one kept, each with its counts:

1. **manifests**, by their partition summaries (lower/upper/null/NaN per partition field);
2. **partitions**: each data file's partition values against the predicates projected
   onto the partition spec (identity and ``day()`` project tightly; ``bucket()`` only
   equality and IN; a ``truncate`` value that wrapped at the integer minimum decides
   nothing, :mod:`sluice.lake.wrapped`);
3. **file statistics**: each file's column bounds and null counts;
4. **row groups**: each Parquet row group's statistics (see :mod:`sluice.lake.stats`).

Every level uses PyIceberg's own evaluators over the *superset* expressions of
:mod:`sluice.lake.expressions`, so pruning never drops a row Spark would keep. DuckDB
then applies the pushed predicates exactly to the rows read, except in files that strict
evaluation proves match entirely (every row of the file satisfies every conjunct, by its
partition values or its bounds), which are read unfiltered.

Row-level deletes (:mod:`sluice.lake.deletes`): each kept data file carries the delete files
that apply to it, and the reader removes their rows. Deletes only remove rows, so every
level above stays valid (statistics describe a superset of the live rows); the rows and
bytes counted are those of the data files, before deletes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
from pyiceberg.expressions import AlwaysTrue, And, BooleanExpression, Or
from pyiceberg.expressions.visitors import (
    _InclusiveMetricsEvaluator,
    _StrictMetricsEvaluator,
    expression_evaluator,
    manifest_evaluator,
)
from pyiceberg.manifest import ManifestContent
from pyiceberg.schema import Schema

from sluice.lake import projection
from sluice.lake.deletes import EQUALITY, POSITION, DeleteIndex, DeleteRef
from sluice.lake.expressions import IcebergFilter, combined, conjunct_filter, with_value_sets
from sluice.lake.fields import name_mapping, parse_mapping
from sluice.lake.paths import read_footer
from sluice.lake.residuals import residual_evaluator
from sluice.lake.snapshots import snapshot_schema
from sluice.lake.stats import RowGroupMetrics, row_group_metrics
from sluice.lake.wrapped import WrappedTruncates

if TYPE_CHECKING:
    from pyiceberg.manifest import DataFile, ManifestEntry
    from pyiceberg.partitioning import PartitionSpec
    from pyiceberg.table import Table


@dataclass(frozen=True)
class Tier:
    """One level of the pyramid: how many units it was given and how many it kept."""

    level: str
    unit: str
    total: int
    kept: int
    rows_kept: int
    bytes_kept: int

    @property
    def pruned_ratio(self) -> float:
        return 0.0 if self.total == 0 else 1 - self.kept / self.total

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "pruned_ratio": round(self.pruned_ratio, 4)}


@dataclass(frozen=True)
class FileRead:
    """What to read of one data file: its kept row groups, and whether to filter them."""

    path: str
    row_groups: tuple[int, ...]
    rows: int
    bytes: int  # compressed bytes of the columns read, in the kept row groups
    filtered: bool  # False: strict evaluation proved every row matches every conjunct
    deletes: tuple[DeleteRef, ...] = ()  # the delete files that apply to it (sluice/lake/deletes.py)
    file_size: int = 0  # the whole file's bytes, as the manifest records them

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "row_groups": list(self.row_groups), "deletes": [d.to_dict() for d in self.deletes]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FileRead:
        return cls(
            data["path"],
            tuple(data["row_groups"]),
            data["rows"],
            data["bytes"],
            data["filtered"],
            tuple(DeleteRef.from_dict(d) for d in data.get("deletes", ())),
            data.get("file_size", 0),
        )


@dataclass(frozen=True)
class ConjunctPruning:
    """How one pushed conjunct prunes: its Iceberg form and its partition projection."""

    sql: str
    iceberg: str
    partition: str  # "exact", "conservative" or "none"

    def to_dict(self) -> dict[str, str]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Pyramid:
    table: str
    snapshot_id: int | None
    table_rows: int
    table_bytes: int
    tiers: tuple[Tier, ...]
    reads: tuple[FileRead, ...]
    conjuncts: tuple[ConjunctPruning, ...] = field(default=())
    delete_files: int = 0  # live delete files in the snapshot

    @property
    def bytes_read(self) -> int:
        return sum(r.bytes for r in self.reads)

    @property
    def deletes_applied(self) -> dict[str, DeleteRef]:
        """The delete files the reads apply, by path (one may apply to many data files)."""
        return {d.path: d for r in self.reads for d in r.deletes}

    @property
    def unfiltered_files(self) -> int:
        return sum(1 for r in self.reads if not r.filtered)

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "snapshot_id": self.snapshot_id,
            "table_rows": self.table_rows,
            "table_bytes": self.table_bytes,
            "bytes_read": self.bytes_read,
            "files_read_unfiltered": self.unfiltered_files,
            "tiers": [t.to_dict() for t in self.tiers],
            "conjuncts": [c.to_dict() for c in self.conjuncts],
            "delete_files": self._deletes_dict(),
        }

    def _deletes_dict(self) -> dict[str, int]:
        applied = self.deletes_applied.values()
        return {
            "in_snapshot": self.delete_files,
            "applied": len(applied),
            "position": sum(1 for d in applied if d.kind == POSITION),
            "equality": sum(1 for d in applied if d.kind == EQUALITY),
            "files_with_deletes": sum(1 for r in self.reads if r.deletes),
        }

    def render(self) -> list[str]:
        """Text lines for EXPLAIN: one per level, then each conjunct's partition pruning."""
        lines = [
            f"pruning pyramid (snapshot {self.snapshot_id}; table: {self.table_rows:,} rows, {size_text(self.table_bytes)}):",
            f"    {'level':<16} {'total':>8} {'kept':>8} {'pruned':>7} {'rows kept':>12} {'bytes kept':>10}",
        ]
        for tier in self.tiers:
            lines.append(
                f"    {tier.level:<16} {tier.total:>8,} {tier.kept:>8,} {tier.pruned_ratio:>7.1%} "
                f"{tier.rows_kept:>12,} {size_text(tier.bytes_kept):>10}"
            )
        lines.append(
            f"    bytes to read: {size_text(self.bytes_read)} (projected columns of kept row groups); "
            f"{self.unfiltered_files} of {len(self.reads)} files proven to match entirely (read unfiltered)"
        )
        if self.delete_files:
            counts = self._deletes_dict()
            lines.append(
                f"    row-level deletes: {counts['applied']} of {self.delete_files} delete files applied "
                f"({counts['position']} position, {counts['equality']} equality) to {counts['files_with_deletes']} "
                f"of {len(self.reads)} files read; rows above count rows before deletes"
            )
        for conjunct in self.conjuncts:
            lines.append(f"    {conjunct.sql}  ->  {conjunct.iceberg}  [partition pruning: {conjunct.partition}]")
        return lines


def size_text(count: int) -> str:
    """Bytes for people: 1,234 B, 12.5 KiB, 3.1 MiB."""
    size = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def plan_pyramid(
    table: Table, name: str, where: tuple[str, ...], columns: tuple[str, ...], snapshot_id: int | None = None
) -> Pyramid:
    """Prune ``table`` for the pushed conjuncts ``where``; ``columns`` are the ones read.

    ``snapshot_id`` (time travel) prunes that snapshot's manifests with the schema it was
    written with; without it, the current snapshot.

    One query asks for its pyramid several times (the reader choice when Spark offers the
    filters, the plan, the read tasks), so the pruning is kept per process, keyed by what
    decides it: the table's metadata file (a commit or a schema change writes a new one,
    so a new snapshot is never answered from an old one), the snapshot time travel pins,
    and the conjuncts. Only the bytes counted depend on ``columns``: they are summed per call.
    """
    key = (table.metadata_location, snapshot_id, name, where)
    with _PRUNING_LOCK:
        pruned = _PRUNED.get(key)
    if pruned is None:
        pruned = _prune(table, name, where, snapshot_id)
        with _PRUNING_LOCK:
            _remember(_PRUNED, key, pruned, _PRUNED_LIMIT)
    return pruned.for_columns(columns)


def _prune(table: Table, name: str, where: tuple[str, ...], snapshot_id: int | None) -> _Pruned:
    """The column-independent part of the pyramid: what every level keeps."""
    schema = snapshot_schema(table, snapshot_id)
    filters = [conjunct_filter(sql, schema) for sql in where]
    scan_filter = combined(filters)
    conjuncts = tuple(_conjunct_pruning(sql, f, schema, table.spec()) for sql, f in zip(where, filters, strict=True))
    snapshot = table.current_snapshot() if snapshot_id is None else table.snapshot_by_id(snapshot_id)
    if snapshot is None:
        empty = tuple(Tier(level, unit, 0, 0, 0, 0) for level, unit in _LEVELS[:-1])
        return _Pruned(name, None, 0, 0, empty, 0, (), conjuncts)
    manifests = snapshot.manifests(table.io)
    delete_entries = [
        e for m in manifests if m.content == ManifestContent.DELETES for e in _manifest_entries(m, table.io)
    ]
    deletes = DeleteIndex(delete_entries, table, schema, name) if delete_entries else None
    manifests = [m for m in manifests if m.content != ManifestContent.DELETES]
    summary = snapshot.summary.additional_properties if snapshot.summary is not None else {}
    totals = (
        int(summary.get("total-data-files", 0)),
        int(summary.get("total-records", 0)),
        int(summary.get("total-files-size", 0)),
    )
    return _Pruner(table, name, schema, scan_filter, deletes).run(snapshot.snapshot_id, manifests, totals, conjuncts)


@dataclass(frozen=True)
class _KeptFile:
    """One data file the pyramid keeps, before the columns read are known."""

    path: str
    row_groups: tuple[RowGroupMetrics, ...]
    filtered: bool
    deletes: tuple[DeleteRef, ...]
    file_size: int


@dataclass(frozen=True)
class _Pruned:
    """What the pyramid keeps at every level, for any columns read (kept per process)."""

    table: str
    snapshot_id: int | None
    table_rows: int
    table_bytes: int
    tiers: tuple[Tier, ...]  # manifests, partitions, file statistics
    row_groups_total: int
    kept: tuple[_KeptFile, ...]
    conjuncts: tuple[ConjunctPruning, ...]
    delete_files: int = 0

    def for_columns(self, columns: tuple[str, ...]) -> Pyramid:
        """The pyramid when ``columns`` are read (the bytes of the kept row groups are theirs)."""
        reads = tuple(
            FileRead(
                kept.path,
                tuple(g.index for g in kept.row_groups),
                sum(g.record_count for g in kept.row_groups),
                sum(g.column_bytes.get(c, 0) for g in kept.row_groups for c in columns),
                filtered=kept.filtered,
                deletes=kept.deletes,
                file_size=kept.file_size,
            )
            for kept in self.kept
        )
        groups = Tier(
            "row groups",
            "row groups",
            self.row_groups_total,
            sum(len(kept.row_groups) for kept in self.kept),
            sum(r.rows for r in reads),
            sum(r.bytes for r in reads),
        )
        return Pyramid(
            self.table,
            self.snapshot_id,
            self.table_rows,
            self.table_bytes,
            (*self.tiers, groups),
            reads,
            self.conjuncts,
            self.delete_files,
        )


_LEVELS = (
    ("manifests", "manifests"),
    ("partitions", "files"),
    ("file statistics", "files"),
    ("row groups", "row groups"),
)


def _conjunct_pruning(sql: str, conjunct: IcebergFilter, schema: Schema, spec: PartitionSpec) -> ConjunctPruning:
    inclusive = projection.inclusive(schema, spec)(conjunct.expression)
    if isinstance(inclusive, AlwaysTrue):
        partition = "none"
    elif conjunct.exact and _comparable(projection.strict(schema, spec)(conjunct.expression)) == _comparable(inclusive):
        partition = "exact"
    else:
        partition = "conservative"
    return ConjunctPruning(sql, str(conjunct.expression), partition)


def _comparable(expression: BooleanExpression) -> Any:
    """A projection in a canonical form: over integer-valued partition fields (days, ids)
    ``> v`` is ``>= v+1`` and ``< v`` is ``<= v-1``, so equal projections compare equal."""
    if isinstance(expression, (And, Or)):
        return (type(expression).__name__, _comparable(expression.left), _comparable(expression.right))
    literal = getattr(expression, "literal", None)
    value = getattr(literal, "value", None)
    if isinstance(value, int) and not isinstance(value, bool):
        name, term = (
            type(expression).__name__,
            str(getattr(expression, "term", None)),
        )  # a predicate with a literal has a term
        if name == "GreaterThan":
            return ("GreaterThanOrEqual", term, value + 1)
        if name == "LessThan":
            return ("LessThanOrEqual", term, value - 1)
        return (name, term, value)
    return str(expression)


class _Pruner:
    def __init__(
        self,
        table: Table,
        name: str,
        schema: Schema,
        scan_filter: IcebergFilter,
        deletes: DeleteIndex | None = None,
    ) -> None:
        self.table, self.name, self.schema, self.deletes = table, name, schema, deletes
        self.mapping = name_mapping(table, schema)
        self.expression: BooleanExpression = scan_filter.expression
        self.exact = scan_filter.exact
        self.specs = table.specs()
        # bound once per spec, not once per data file (planning walks every file); narrow
        # integer ranges as value sets, which bucket partitions can prune
        partition_expression = with_value_sets(self.expression, schema)
        projected = {sid: projection.inclusive(schema, spec)(partition_expression) for sid, spec in self.specs.items()}
        self.partition_filters = projected
        self.partition_admits = {
            sid: expression_evaluator(Schema(*spec.partition_type(schema).fields), projected[sid], True)
            for sid, spec in self.specs.items()
        }
        self.residuals = {sid: residual_evaluator(spec, self.expression, schema) for sid, spec in self.specs.items()}
        # partitions a truncate wrapped at the integer minimum: no projection decides them
        self.wrapped = {sid: WrappedTruncates(spec, schema) for sid, spec in self.specs.items()}
        self.strict_file = _StrictMetricsEvaluator(schema, self.expression) if self.exact else None

    def run(
        self, snapshot_id: int, manifests: list, totals: tuple[int, int, int], conjuncts: tuple[ConjunctPruning, ...]
    ) -> _Pruned:
        """``totals``: the snapshot's data files, rows and bytes (from its summary); ``manifests``:
        its data manifests."""
        table_files, table_rows, table_bytes = totals
        manifest_ok = {
            sid: manifest_evaluator(spec, self.schema, self.partition_filters[sid]) for sid, spec in self.specs.items()
        }
        kept_manifests = [
            m
            for m in manifests
            if self.wrapped[m.partition_spec_id].in_manifest(m) or manifest_ok[m.partition_spec_id](m)
        ]
        entries = [e for m in kept_manifests for e in _manifest_entries(m, self.table.io)]
        files_in_kept = [e.data_file for e in entries]
        admitted = [e for e in entries if self._partition_admits(e.data_file)]
        by_partition = [e.data_file for e in admitted]
        metrics = _InclusiveMetricsEvaluator(self.schema, self.expression)
        kept_entries = [e for e in admitted if metrics.eval(e.data_file)]
        by_stats = [e.data_file for e in kept_entries]
        kept, groups_total = self._row_groups(kept_entries)
        tiers = (
            Tier(
                "manifests",
                "manifests",
                len(manifests),
                len(kept_manifests),
                _rows(files_in_kept),
                _bytes(files_in_kept),
            ),
            Tier("partitions", "files", table_files, len(by_partition), _rows(by_partition), _bytes(by_partition)),
            Tier("file statistics", "files", len(by_partition), len(by_stats), _rows(by_stats), _bytes(by_stats)),
        )
        delete_files = self.deletes.total if self.deletes is not None else 0
        return _Pruned(
            self.name, snapshot_id, table_rows, table_bytes, tiers, groups_total, tuple(kept), conjuncts, delete_files
        )

    def _partition_admits(self, data_file: DataFile) -> bool:
        """Whether the file's partition may hold matching rows (a wrapped one always may)."""
        spec_id = data_file.spec_id
        return self.wrapped[spec_id].in_record(data_file.partition) or self.partition_admits[spec_id](
            data_file.partition
        )

    def _whole_file_matches(self, data_file: DataFile) -> bool:
        """Strict evaluation: every row of the file satisfies every (exactly translated) conjunct,
        by its partition (unless a truncate wrapped there) or by its column bounds."""
        if self.strict_file is None:
            return False
        if not self.wrapped[data_file.spec_id].in_record(data_file.partition):
            residual = self.residuals[data_file.spec_id].residual_for(data_file.partition)
            if isinstance(residual, AlwaysTrue):
                return True
        return self.strict_file.eval(data_file)

    def _row_groups(self, entries: list[ManifestEntry]) -> tuple[list[_KeptFile], int]:
        """The kept files with their kept row groups, and how many row groups the files hold."""
        inclusive = _InclusiveMetricsEvaluator(self.schema, self.expression, include_empty_files=True)
        strict = self.strict_file
        kept, total = [], 0
        for entry in entries:
            data_file = entry.data_file
            whole = self._whole_file_matches(data_file)
            groups = row_group_metrics_of(data_file.file_path, self.schema, self.mapping)
            total += len(groups)
            admitted = [g for g in groups if inclusive.eval(g)]  # type: ignore[arg-type]  # the evaluator reads the metrics fields of a DataFile, which RowGroupMetrics has
            if not admitted:
                continue
            whole = whole or (strict is not None and all(strict.eval(g) for g in admitted))  # type: ignore[arg-type]  # the evaluator reads the metrics fields of a DataFile, which RowGroupMetrics has
            kept.append(
                _KeptFile(
                    data_file.file_path,
                    tuple(admitted),
                    filtered=not whole,
                    deletes=self.deletes.for_data_file(entry) if self.deletes is not None else (),
                    file_size=data_file.file_size_in_bytes,
                )
            )
        return kept, total


#: Iceberg never rewrites a manifest or a data file in place, so what was read from one
#: path stays true: planning many queries over one table reads each footer once.
_CACHE_LIMIT = 4096
_ENTRIES: dict[str, list] = {}
_ROW_GROUPS: dict[tuple[str, int, str], tuple[list[RowGroupMetrics], FileLayout]] = {}
#: nor a metadata file: the pruning of (metadata file, pinned snapshot, table name, conjuncts)
#: stays true; a handful of recent queries' worth (each holds its kept files' row groups)
_PRUNED_LIMIT = 64
_PRUNED: dict[tuple[str, int | None, str, tuple[str, ...]], _Pruned] = {}
_PRUNING_LOCK = threading.Lock()


@dataclass(frozen=True)
class FileLayout:
    """How a data file holds the table's columns, from its footer (what a reader of it needs).

    ``columns``: Iceberg field id -> (the file's name for that column, its Arrow type as
    pyarrow reads the file); ``names``: every top-level column name in the file;
    ``row_groups``: per row group, a byte range [low, high) holding its midpoint (where
    Spark's Parquet reader places a row group when it reads part of a file) and its
    compressed bytes.
    """

    columns: dict[int, tuple[str, Any]]
    names: frozenset[str]
    row_groups: tuple[tuple[int, int, int], ...]


def _remember(cache: dict, key: Any, value: Any, limit: int = _CACHE_LIMIT) -> Any:
    if len(cache) >= limit:
        cache.pop(next(iter(cache)))
    cache[key] = value
    return value


def _manifest_entries(manifest: Any, io: Any) -> list:
    found = _ENTRIES.get(manifest.manifest_path)
    if found is None:
        found = _remember(_ENTRIES, manifest.manifest_path, manifest.fetch_manifest_entry(io, discard_deleted=True))
    return found


def _footer_facts(path: str, schema: Schema, mapping: str) -> tuple[list[RowGroupMetrics], FileLayout]:
    key = (path, schema.schema_id, mapping)
    found = _ROW_GROUPS.get(key)
    if found is None:
        footer = read_footer(path)
        found = _remember(
            _ROW_GROUPS, key, (row_group_metrics(footer, schema, parse_mapping(mapping)), _layout(footer, mapping))
        )
    return found


def row_group_metrics_of(path: str, schema: Schema, mapping: str) -> list[RowGroupMetrics]:
    """The statistics of a data file's row groups (each footer read once per process);
    ``mapping``: the table's name mapping as JSON (:func:`sluice.lake.fields.name_mapping`)."""
    return _footer_facts(path, schema, mapping)[0]


def file_layout(path: str, schema: Schema, mapping: str) -> FileLayout:
    """How a data file holds the table's columns (read with its statistics, once per process)."""
    return _footer_facts(path, schema, mapping)[1]


def _layout(footer: pq.FileMetaData, mapping: str) -> FileLayout:
    from sluice.lake.fields import file_columns

    arrow = footer.schema.to_arrow_schema()
    held = file_columns(arrow, parse_mapping(mapping))
    groups = []
    for index in range(footer.num_row_groups):
        group = footer.row_group(index)
        if group.num_columns == 0:
            groups.append((0, 0, 0))
            continue
        first = group.column(0)
        total = sum(group.column(i).total_compressed_size for i in range(group.num_columns))
        # Spark's Parquet reader keeps the row groups whose midpoint (first page + half the
        # compressed size) falls in its byte range: every place that midpoint can be computed
        starts = [first.data_page_offset] + ([first.dictionary_page_offset] if first.has_dictionary_page else [])
        midpoints = [start + total // 2 for start in starts]
        groups.append((min(midpoints), max(midpoints) + 1, total))
    return FileLayout(
        {field_id: (name, arrow.field(name).type) for field_id, name in held.items()},
        frozenset(arrow.names),
        tuple(groups),
    )


def _rows(files: list[DataFile]) -> int:
    return sum(f.record_count for f in files)


def _bytes(files: list[DataFile]) -> int:
    return sum(f.file_size_in_bytes for f in files)
