"""What the lake's Spark jobs read from the session's JVM, for a Spark Connect session that has none.

``sluice lake ingest``, ``create`` and ``optimize`` run their Spark jobs on a running ``sluice
server`` through a Connect session when one answers. Three facts they take from a classic
session's JVM are computed here instead, the same way Spark computes them:

- a row's estimated size (``StructType.defaultSize``, per type as Spark's ``DataType.defaultSize``),
  which sizes ``maxRecordsPerFile``;
- the optimiser's size estimate of the input (``Statistics(sizeInBytes=...)`` of the plan's
  ``EXPLAIN COST`` text, which Spark prints to one decimal of its unit), which sizes an
  unpartitioned write's file count;
- the default parallelism of a local server (its master is ``local[*]``: the machine's cores).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType

#: Spark's ``Utils.bytesToString`` units
_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50, "EiB": 1 << 60}
_SIZE = re.compile(r"Statistics\(sizeInBytes=(?P<value>[0-9.]+) (?P<unit>[KMGTPE]?i?B)")
#: ``DataType.defaultSize`` of the fixed-size types, by ``typeName``
_FIXED = {
    "boolean": 1,
    "byte": 1,
    "short": 2,
    "integer": 4,
    "long": 8,
    "float": 4,
    "double": 8,
    "date": 4,
    "timestamp": 8,
    "timestamp_ntz": 8,
    "string": 20,
    "binary": 100,
    "void": 1,
    "interval": 16,
    "variant": 2048,
}


def default_size(data_type: DataType) -> int:
    """Spark's ``DataType.defaultSize`` of ``data_type``."""
    from pyspark.sql import types as st

    if isinstance(data_type, st.StructType):
        return sum(default_size(field.dataType) for field in data_type.fields)
    if isinstance(data_type, st.ArrayType):
        return default_size(data_type.elementType)
    if isinstance(data_type, st.MapType):
        return default_size(data_type.keyType) + default_size(data_type.valueType)
    if isinstance(data_type, st.DecimalType):
        return 8 if data_type.precision <= 18 else 16
    if isinstance(data_type, (st.CharType, st.VarcharType)):
        return data_type.length
    if isinstance(data_type, st.DayTimeIntervalType):
        return 8
    if isinstance(data_type, st.YearMonthIntervalType):
        return 4
    return _FIXED.get(data_type.typeName(), 8)


def size_estimate(frame: DataFrame) -> int | None:
    """The optimiser's estimate of ``frame``'s size in bytes (None: it printed none)."""
    connect_frame: Any = frame  # typed as the classic DataFrame; _explain_string is the Connect one's
    text = connect_frame._explain_string(mode="cost")
    match = _SIZE.search(text)
    if match is None:
        return None
    return int(float(match["value"]) * _UNITS[match["unit"]])


def default_parallelism() -> int:
    """A local server's default parallelism (``local[*]``: this machine's cores)."""
    return os.cpu_count() or 1
