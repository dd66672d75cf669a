"""Which reader reads a lake scan: Spark's vectorised Parquet reader, or Sluice's Python reader.

The pruning pyramid (:mod:`sluice.lake.pyramid`) says which row groups a scan must read.
Two readers can read them:

* **vectorised** (by default every scan that is not small and has no pushed limit or
  aggregate): Spark's own Parquet reader (``ParquetPartitionReaderFactory``, columnar)
  over byte ranges holding exactly the kept row groups, with its filter pushdown off (not
  NaN-safe, DESIGN.md section 2). It applies no predicate, so every pushed conjunct is
  INEXACT: pruning only, Spark filters the rows. No Python worker, no Arrow hand-over:
  the fast path for scans that keep most of the data.
* **python**: the row-group-precise Python reader of :mod:`sluice.sources.iceberg`, which
  filters the kept row groups exactly in DuckDB (and answers pushed limits, top-N and
  aggregates): the path for small scans (at most ``spark.sluice.smallReadRows`` kept
  rows), which the driver reads, and, with ``spark.sluice.lakeVectorisedFraction`` set,
  for selective ones.

The choice is made twice, identically: when Spark offers the filters (a conjunct can only
be EXACT if the Python reader reads the scan: :func:`filters_choice`), and when the scan is
planned (:func:`choose`, which also needs no EXACT verdict). Whatever the first call said,
the plan is correct: a scan planned with INEXACT conjuncts may still be read by the Python
reader (it filters exactly, Spark filters again), never the other way round.

Columns are read by Iceberg field id: each kept file is read under the names *it* holds
the table's fields by (:func:`sluice.lake.fields.file_columns`), files grouped by those
names; a field a file lacks is read as an absent name (NULL). A file holding a column in
another type than the table's (a promoted ``int`` -> ``long``, INT96 or nanosecond
timestamps) is left to the Python reader, which casts as Iceberg says.

``spark.sluice.lakeReader`` (``auto``, ``vectorised``, ``python``) forces a reader, for
tests and measurements; ``spark.sluice.lakeVectorisedFraction`` (default 0: off) is the least
fraction of the table's rows the kept row groups must hold for ``auto`` to go vectorised.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sluice.pushdown.levels import Level, Verdict

if TYPE_CHECKING:
    from pyiceberg.schema import Schema

    from sluice.lake.pyramid import FileLayout, Pyramid
    from sluice.protocol.base import SourceRequest
    from sluice.types import SparkType

VECTORISED, PYTHON = "vectorised", "python"
MODES = ("auto", VECTORISED, PYTHON)
#: measured (docs/benchmarks.md, lake): Spark's reader over the kept row groups beat the Python
#: reader on every selective shape too, so by default only small scans stay with the Python reader
DEFAULT_FRACTION = 0.0
#: Spark's spark.sql.files.maxPartitionBytes and openCostInBytes defaults: how it sizes splits
MAX_SPLIT_BYTES = 128 * 1024 * 1024
OPEN_COST_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Needed:
    """A column the scan reads: the table's name, Spark's type, the Iceberg field id."""

    name: str
    type: SparkType
    field_id: int


@dataclass(frozen=True)
class Choice:
    reader: str  # VECTORISED or PYTHON
    reason: str

    @property
    def vectorised(self) -> bool:
        return self.reader == VECTORISED

    def text(self) -> str:
        shown = "Spark's vectorised Parquet reader" if self.vectorised else "row-group-precise Python reader"
        return f"Reader: {shown} -- {self.reason}"


@dataclass(frozen=True)
class Mode:
    """The session's settings for the choice: a forced reader, the least kept fraction of the
    table's rows, and the most rows a scan read by the driver's Python may keep."""

    forced: str = "auto"
    fraction: float = DEFAULT_FRACTION
    small_rows: int = 10_000


def mode_of(request: SourceRequest) -> Mode:
    """The settings a request carries (``spark.sluice.lakeReader``, ``spark.sluice.lakeVectorisedFraction``,
    ``spark.sluice.smallReadRows``)."""
    from sluice.errors import ConfigError

    mode = (request.lake_reader or "auto").strip().lower()
    if mode not in MODES:
        raise ConfigError(f"spark.sluice.lakeReader is {mode!r}: use one of {', '.join(MODES)}")
    try:
        fraction = float(request.lake_vectorised_fraction or DEFAULT_FRACTION)
    except ValueError:
        raise ConfigError(
            f"spark.sluice.lakeVectorisedFraction is {request.lake_vectorised_fraction!r}: not a number"
        ) from None
    try:
        small = int((request.small_read_rows or "10000").strip())
    except ValueError:
        raise ConfigError(f"spark.sluice.smallReadRows is {request.small_read_rows!r}: not an integer") from None
    return Mode(mode, fraction, small)


def choose(
    pyramid: Pyramid,
    layouts: dict[str, FileLayout],
    needed: list[Needed],
    *,
    mode: Mode,
    blocker: str | None = None,
    exact: list[Verdict] | None = None,
) -> Choice:
    """The reader of a planned scan, and why.

    ``blocker``: what only the Python reader answers (a pushed limit or aggregate), if any;
    ``exact``: the scan's verdicts (an EXACT one must be read by the Python reader).
    """
    if blocker is not None:
        return Choice(PYTHON, blocker)
    if mode.forced == PYTHON:
        return Choice(PYTHON, "forced by spark.sluice.lakeReader=python")
    with_deletes = sum(1 for read in pyramid.reads if read.deletes)
    if with_deletes:  # Spark's Parquet reader would return the rows they delete: never, even when forced
        return Choice(
            PYTHON, f"{with_deletes} kept file(s) have row-level delete files: the Python reader applies them"
        )
    held_exact = [v for v in exact or [] if v.level is Level.EXACT and v.pushed is not None]
    if held_exact:  # decided when Spark offered the filters: say why, if the same reason holds now
        without = choose(pyramid, layouts, needed, mode=mode)
        if not without.vectorised:
            return without
        return Choice(PYTHON, f"{len(held_exact)} conjunct(s) pushed EXACT: the Python reader filters them exactly")
    mismatch = _type_mismatch(pyramid, layouts, needed)
    if mismatch is not None:
        return Choice(PYTHON, mismatch)
    if mode.forced == VECTORISED:
        return Choice(VECTORISED, "forced by spark.sluice.lakeReader=vectorised")
    if not pyramid.reads:
        return Choice(PYTHON, "no row group to read")
    kept = sum(r.rows for r in pyramid.reads)
    if kept <= mode.small_rows:
        return Choice(
            PYTHON, f"small: pruning keeps {kept:,} rows (<= spark.sluice.smallReadRows, {mode.small_rows:,})"
        )
    fraction = mode.fraction
    share = kept / pyramid.table_rows if pyramid.table_rows else 1.0
    groups = pyramid.tiers[-1] if pyramid.tiers else None
    counted = f"{groups.kept:,} of {groups.total:,} row groups" if groups is not None else "row groups"
    if share < fraction:
        return Choice(
            PYTHON,
            f"selective: pruning keeps {counted}, {share:.1%} of the rows (< {fraction:.0%}): "
            "read and filtered exactly in DuckDB",
        )
    bound = f", >= {fraction:.0%}" if fraction > 0 else ""
    return Choice(
        VECTORISED,
        f"pruning keeps {counted} ({share:.1%} of the rows, {kept:,} rows{bound}); "
        "Parquet filter pushdown off (not NaN-safe): Spark filters every row",
    )


def _type_mismatch(pyramid: Pyramid, layouts: dict[str, FileLayout], needed: list[Needed]) -> str | None:
    """Why some kept file holds a needed column in a type Spark's reader would not read as
    the Python reader does (None: every one matches)."""
    wanted = [(column, column.type.arrow()) for column in needed]  # once, not once per file
    matching: set[tuple[pa.DataType, pa.DataType]] = set()  # files mostly hold the same types: compared once
    for read in pyramid.reads:
        layout = layouts[read.path]
        for column, arrow in wanted:
            held = layout.columns.get(column.field_id)
            if held is None or (held[1], arrow) in matching:
                continue
            if same_type(held[1], arrow):
                matching.add((held[1], arrow))
            else:
                return (
                    f"data file {read.path} holds {column.name} as {held[1]}, not {column.type}: "
                    "the Python reader casts it as Iceberg says"
                )
    return None


def same_type(held: pa.DataType, wanted: pa.DataType) -> bool:
    """Whether Spark's Parquet reader reads a file column pyarrow sees as ``held`` into a
    column of ``wanted`` (the Arrow type of the Spark type) unchanged."""
    if pa.types.is_dictionary(held):
        held = held.value_type
    if pa.types.is_timestamp(held) and pa.types.is_timestamp(wanted):
        # the time zone Parquet records is only "adjusted to UTC" or not; pyarrow names it
        return held.unit == wanted.unit and (held.tz is None) == (wanted.tz is None)
    if pa.types.is_string(wanted):
        return pa.types.is_string(held) or pa.types.is_large_string(held) or pa.types.is_string_view(held)
    if pa.types.is_binary(wanted):
        return pa.types.is_binary(held) or pa.types.is_large_binary(held) or pa.types.is_binary_view(held)
    return bool(held == wanted)


def vector_read(
    pyramid: Pyramid, layouts: dict[str, FileLayout], needed: list[Needed], parallelism: int
) -> dict[str, Any]:
    """What Spark's Parquet reader reads: per group of files holding the needed fields under
    the same names, those names; and the partitions, each a list of byte ranges of one group.

    Each file's kept row groups become byte ranges (consecutive groups merged, up to Spark's
    split size); Spark's reader reads the row groups whose midpoint falls in a range. Ranges
    are packed into partitions as Spark packs a file scan's splits."""
    names: list[list[str]] = []
    by_names: dict[tuple[str, ...], int] = {}
    splits: list[tuple[int, str, int, int, int, int]] = []  # group, path, start, length, file size, bytes
    # as Spark sizes a file scan's splits: every file also costs the bytes of opening one
    total = sum(_kept_bytes(layouts[read.path], read.row_groups) + OPEN_COST_BYTES for read in pyramid.reads)
    max_split = min(MAX_SPLIT_BYTES, max(OPEN_COST_BYTES, total // max(1, parallelism)))
    for read in pyramid.reads:
        layout = layouts[read.path]
        held = tuple(
            layout.columns[c.field_id][0] if c.field_id in layout.columns else _absent(c, layout) for c in needed
        )
        group = by_names.setdefault(held, len(names))
        if group == len(names):
            names.append(list(held))
        for start, end, nbytes in _ranges(layout, read.row_groups, max_split, read.file_size):
            splits.append((group, read.path, start, end - start, read.file_size, nbytes))
    partitions: list[dict[str, Any]] = []
    for group in range(len(names)):
        current: list[list[Any]] = []
        size = 0
        for _, path, start, length, file_size, nbytes in sorted(
            (s for s in splits if s[0] == group), key=lambda s: (-s[5], s[1], s[2])
        ):
            if current and size + nbytes > max_split:
                partitions.append({"group": group, "files": current})
                current, size = [], 0
            current.append([path, start, length, file_size])
            size += nbytes + OPEN_COST_BYTES
        if current:
            partitions.append({"group": group, "files": current})
    return {"names": names, "partitions": partitions}


def _kept_bytes(layout: FileLayout, kept: tuple[int, ...]) -> int:
    return sum(layout.row_groups[index][2] for index in kept)


def _absent(column: Needed, layout: FileLayout) -> str:
    """A name the file does not hold, for a field it lacks (read as NULL)."""
    name = f"__sluice_absent_{column.field_id}"
    while name in layout.names:
        name += "_"
    return name


def _ranges(layout: FileLayout, kept: tuple[int, ...], max_split: int, file_size: int) -> list[tuple[int, int, int]]:
    """Byte ranges [start, end) holding the midpoints of the kept row groups, with their bytes:
    runs of consecutive kept groups merged while they stay under ``max_split`` bytes.

    Ranges that overlap could read a row group twice: the whole file is then one range."""
    ranges: list[tuple[int, int, int]] = []
    previous = -2
    for index in sorted(kept):
        low, high, nbytes = layout.row_groups[index]
        if ranges and index == previous + 1 and ranges[-1][2] + nbytes <= max_split:
            start, _, size = ranges[-1]
            ranges[-1] = (min(start, low), max(ranges[-1][1], high), size + nbytes)
        else:
            ranges.append((low, high, nbytes))
        previous = index
    ordered = sorted(ranges)
    if any(later[0] < earlier[1] for earlier, later in zip(ordered, ordered[1:], strict=False)):
        return [(0, file_size or 2**62, sum(r[2] for r in ranges))]
    return ranges


def needed_fields(schema: Schema, columns: list[tuple[str, SparkType]]) -> list[Needed]:
    return [Needed(name, kind, schema.find_field(name).field_id) for name, kind in columns]
