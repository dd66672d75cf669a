"""What is measured: query shapes, timed cases, and the Arrow checks that keep paths honest.

Every raw driver path must deliver the *same Arrow table* Sluice's reader delivers (the
Spark schema of the scan), so type conversions a driver leaves undone are paid inside
the timing, not skipped. The warm-up run compares each path's rows with Sluice's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import pyarrow as pa
import pyarrow.compute as pc

from bench.data import COLUMN_NAMES
from sluice.scan.spec import ScanSpec
from sluice.sources.base import ReadTask, SqlSource


@dataclass(frozen=True)
class Shape:
    """One query shape, run by every path over the same table."""

    key: str
    title: str
    columns: tuple[str, ...]
    where: str | None = None
    #: ``ORDER BY`` text and ``LIMIT`` (top-N); the same text is valid in every engine
    order: str | None = None
    limit: int | None = None

    def spark_sql(self, table: str) -> str:
        """The query as a Sluice user writes it (Spark SQL over ``source.[schema.]table``)."""
        select = "*" if self.columns == COLUMN_NAMES else ", ".join(self.columns)
        sql = f"SELECT {select} FROM {table}"
        if self.where:
            sql += f" WHERE {self.where}"
        if self.order:
            sql += f" ORDER BY {self.order}"
        if self.limit is not None:
            sql += f" LIMIT {self.limit}"
        return sql


SHAPES: tuple[Shape, ...] = (
    Shape("full", "full scan, all 6 columns", COLUMN_NAMES),
    Shape("filter", "1% filter (status = 'refunded'), no index", COLUMN_NAMES, "status = 'refunded'"),
    Shape("indexed", "0.01% filter on an indexed column (customer_id < 10)", COLUMN_NAMES, "customer_id < 10"),
    Shape("unindexed", "0.01% filter, no index (score < 0.0001)", COLUMN_NAMES, "score < 0.0001"),
    Shape("project", "projection, 1 of 6 columns (amount)", ("amount",)),
    Shape("topn", "ORDER BY placed_at DESC LIMIT 10, all columns", COLUMN_NAMES, order="placed_at DESC", limit=10),
)
BY_KEY = {shape.key: shape for shape in SHAPES}


@dataclass
class Case:
    """One path for one shape in one scenario: ``run`` does the whole read once.

    Raw paths return the Arrow table they produced (checked against the baseline's in
    the warm-up); Spark paths return ``None`` (their output goes to the ``noop`` sink, or to
    a table that ``prepare`` empties before each run, outside the timing).
    """

    scenario: str
    shape: str
    path: str
    run: Callable[[], pa.Table | None]
    baseline: bool = False
    note: str = ""
    #: parallel reads inside the path (connectorx partitions, Spark partitions)
    streams: int = 1
    seconds: list[float] = field(default_factory=list)
    rows: int | None = None
    check: str | None = None
    error: str | None = None
    #: display-only columns of the report (bytes read, rows/s, ...)
    extra: dict[str, str] = field(default_factory=dict)
    #: untimed work before each run (a write's target emptied or reset)
    prepare: Callable[[], None] | None = None
    #: whether each timed round records the CPU-seconds of the driver, the JVM and Spark's Python
    #: workers (:func:`bench.machine.cpu_spent`) in :attr:`cpu`
    measure_cpu: bool = False
    cpu: list[dict[str, float]] = field(default_factory=list)


@dataclass(frozen=True)
class SluiceRead:
    """Sluice's single-stream read of one shape: what every raw path must reproduce."""

    engine: str
    url: str
    shape: Shape
    rows: int
    source: SqlSource
    spec: ScanSpec
    task: ReadTask

    @property
    def sql(self) -> str:
        """The exact SQL text Sluice sends for this shape."""
        return self.task.request

    @property
    def schema(self) -> pa.Schema:
        return self.task.schema

    @property
    def scenario(self) -> str:
        return f"{self.engine}-raw"

    def case(
        self, path: str, run: Callable[[], pa.Table], note: str = "", baseline: bool = False, streams: int = 1
    ) -> Case:
        return Case(self.scenario, self.shape.key, path, run, baseline=baseline, note=note, streams=streams)

    def baseline(self, reader: str) -> Case:
        """Sluice's reader, exactly as a Spark partition runs it (``Source.read``)."""
        return self.case(
            f"sluice {type(self.source).__name__}.read ({reader})",
            lambda: pa.Table.from_batches(list(self.source.read(self.task)), schema=self.schema),
            baseline=True,
        )

    def id_range_queries(self, parts: int) -> list[str] | None:
        """The same query split into ``parts`` ranges of ``id`` (None for a top-N: its LIMIT
        applies to the whole result, not to each range)."""
        if self.spec.limit is not None:
            return None
        return [
            self.spec.query(self.source, f"id > {self.rows * i // parts} AND id <= {self.rows * (i + 1) // parts}")
            for i in range(parts)
        ]


def sluice_read(engine: str, url: str, source: SqlSource, spec: ScanSpec, shape: Shape, rows: int) -> SluiceRead:
    """``spec`` (as Sluice's planner pushed it) read in one stream."""
    single = replace(spec, partitions=1)
    return SluiceRead(engine, url, shape, rows, source, single, source.tasks(single)[0])


def to_schema(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Cast a driver's table to ``schema`` by position (ADBC's opaque numeric included)."""
    arrays = []
    for index, target in enumerate(schema):
        column = table.column(index)
        if isinstance(column.type, pa.ExtensionType):
            column = pa.chunked_array([chunk.storage for chunk in column.chunks], column.type.storage_type)
        if column.type != target.type:
            column = pc.cast(column, target.type)
        arrays.append(column)
    return pa.Table.from_arrays(arrays, schema=schema)


def rows_to_batch(rows: Sequence[tuple], schema: pa.Schema) -> pa.RecordBatch:
    """Python row tuples to one typed Arrow batch (the naive drivers' last step).

    Decimals Sluice's SQL selects as text arrive as ``str``: Arrow casts those.
    """
    columns = list(zip(*rows))
    arrays = []
    for values, f in zip(columns, schema):
        text = pa.types.is_decimal(f.type) and any(isinstance(v, str) for v in values)
        arrays.append(pa.array(values, pa.string()).cast(f.type) if text else pa.array(values, f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def same_rows(table: pa.Table, reference: pa.Table) -> str:
    """'same' when both hold the same multiset of rows with the same types, else why not."""
    if table.schema.remove_metadata() != reference.schema.remove_metadata():
        return f"types differ: {table.schema.types} vs {reference.schema.types}"
    if table.num_rows != reference.num_rows:
        return f"row count differs: {table.num_rows} vs {reference.num_rows}"
    keys = [(name, "ascending") for name in table.column_names]
    ordered = table.sort_by(keys).combine_chunks()
    expected = reference.sort_by(keys).combine_chunks()
    return "same" if ordered.equals(expected) else "DIFFERENT values"
