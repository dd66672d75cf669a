"""Arrow helpers shared by the readers: every batch leaves with exactly Spark's schema."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


def conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """Cast a driver batch to exactly the schema Spark expects (names and types)."""
    arrays = []
    for index, field in enumerate(schema):
        array = batch.column(index)
        if isinstance(array.type, pa.ExtensionType):
            array = array.storage
        if array.type != field.type:
            array = pc.cast(array, field.type)
        arrays.append(array)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
