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


def strict_booleans(integers: pa.Array) -> pa.Array:
    """Integers stored for booleans (SQLite, MySQL TINYINT(1)) as booleans; anything but
    0 and 1 raises ValueError instead of being read as TRUE."""
    if pc.any(pc.invert(pc.is_in(integers.drop_null(), pa.array([0, 1], integers.type)))).as_py():
        raise ValueError("booleans must be stored as 0 or 1")
    return pc.cast(integers, pa.bool_())
