"""The live rows of data files that row-level delete files apply to, as a Spark DataFrame.

Spark's Parquet reader knows nothing of delete files, so a compaction that read such a file
with it would bring deleted rows back. These files are read by the lake's own reader
instead (:func:`sluice.sources.iceberg.stream_files`, the one every lake query uses, which
applies position and equality deletes as :mod:`sluice.lake.deletes` says), on the
executors: one Spark row per data file (its path and the delete files that apply to it),
expanded by ``mapInArrow`` into the file's live rows in the table's current columns
(found by field id, NULL where a file lacks one).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from pyiceberg.table import Table
    from pyspark.sql import DataFrame, SparkSession

    from sluice.lake.deletes import DeleteRef

#: rows per Arrow batch handed to Spark
BATCH_ROWS = 65_536


def read_live_rows(spark: SparkSession, lake_table: Table, files: list[tuple[str, tuple[DeleteRef, ...]]]) -> DataFrame:
    """The rows of each data file path in ``files`` that its delete files leave."""
    from pyspark.sql.types import StructField, StructType

    from sluice.lake.conform import spark_type
    from sluice.lake.fields import name_mapping
    from sluice.types import SparkType

    schema = lake_table.schema()
    types = [spark_type(field.field_type) for field in schema.fields]
    spark_schema = StructType([StructField(f.name, t) for f, t in zip(schema.fields, types, strict=True)])
    columns = pa.schema(
        [pa.field(f.name, SparkType(t.simpleString()).arrow()) for f, t in zip(schema.fields, types, strict=True)]
    )
    tasks = [json.dumps({"path": path, "deletes": [d.to_dict() for d in deletes]}) for path, deletes in files]
    slices = max(1, min(len(tasks), spark.sparkContext.defaultParallelism))
    frame = spark.createDataFrame([(task,) for task in tasks], "task string").repartition(slices)
    read = partial(_live_batches, columns, [f.field_id for f in schema.fields], name_mapping(lake_table, schema))
    return frame.mapInArrow(read, spark_schema)


def _live_batches(
    columns: pa.Schema, field_ids: list[int], mapping: str, tasks: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """On an executor: each task's data file, streamed with its deletes applied."""
    from sluice.lake.deletes import DeleteRef
    from sluice.lake.fields import parse_mapping
    from sluice.lake.pyramid import FileRead, read_footer
    from sluice.sources.iceberg import stream_files

    parsed = parse_mapping(mapping)
    for batch in tasks:
        for task in batch.column(0).to_pylist():
            found = json.loads(task)
            groups = tuple(range(read_footer(found["path"]).num_row_groups))
            deletes = tuple(DeleteRef.from_dict(d) for d in found["deletes"])
            yield from stream_files(
                [FileRead(found["path"], groups, 0, 0, False, deletes)], columns, field_ids, parsed, BATCH_ROWS
            )
