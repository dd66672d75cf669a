"""What is measured: query shapes, timed cases, and the Arrow checks that keep paths honest.

Every raw driver path must deliver the *same Arrow table* Sluice's reader delivers (the
Spark schema of the scan), so type conversions a driver leaves undone are paid inside
the timing, not skipped. The warm-up run compares each path's rows with Sluice's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc

from bench.data import COLUMN_NAMES, TABLE
from sluice.scan import ScanSpec
from sluice.sources import open_source
from sluice.sources.base import ReadTask, Source

#: the one 1%-selective predicate; the same text is valid Spark SQL, PostgreSQL and SQLite,
#: and Spark's JDBC source can push it too (no index helps it: the server scans everything)
FILTER_SQL = "status = 'refunded'"


@dataclass(frozen=True)
class Shape:
    """One query shape, run by every path over the same table."""

    key: str
    title: str
    columns: tuple[str, ...]
    where: str | None = None

    def spark_sql(self, table: str) -> str:
        """The query as a Sluice user writes it (Spark SQL over ``source.[schema.]table``)."""
        select = "*" if self.columns == COLUMN_NAMES else ", ".join(self.columns)
        where = f" WHERE {self.where}" if self.where else ""
        return f"SELECT {select} FROM {table}{where}"


SHAPES: tuple[Shape, ...] = (
    Shape("full", "full scan, all 6 columns", COLUMN_NAMES),
    Shape("filter", f"1% filter ({FILTER_SQL}), all columns", COLUMN_NAMES, FILTER_SQL),
    Shape("project", "projection, 1 of 6 columns (amount)", ("amount",)),
)


@dataclass
class Case:
    """One path for one shape in one scenario: ``run`` does the whole read once.

    Raw paths return the Arrow table they produced (checked against the baseline's in
    the warm-up); Spark paths return ``None`` (their output goes to the ``noop`` sink).
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


def rows_to_batch(rows: list[tuple], schema: pa.Schema) -> pa.RecordBatch:  # type: ignore[type-arg]
    """Python row tuples to one typed Arrow batch (the naive drivers' last step)."""
    columns = list(zip(*rows))
    return pa.RecordBatch.from_arrays([pa.array(values, f.type) for values, f in zip(columns, schema)], schema=schema)


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


def sluice_task(name: str, url: str, schema: str | None, shape: Shape) -> tuple[Source, ScanSpec, ReadTask]:
    """Sluice's own single-partition read of ``shape``: source, scan spec, and the task
    (SQL text and Arrow schema).

    Every raw path runs this very SQL text and must produce this schema, so the paths
    differ only in the driver.
    """
    source = open_source(name, url)
    table = source.describe(schema, TABLE)
    spec = ScanSpec.for_source(source, table, shape.columns, where=(shape.where,) if shape.where else ())
    return source, spec, spec.tasks(source)[0]


def read_sluice(source: Source, task: ReadTask) -> pa.Table:
    """Sluice's reader, exactly as a Spark partition runs it (``Source.read``)."""
    return pa.Table.from_batches(list(source.read(task)), schema=task.schema)
