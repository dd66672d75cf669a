"""What a lake job reads from the JVM, computed for a Spark Connect session (sluice/lake/connect_session.py)."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import types as st

from sluice.lake.connect_session import default_size, size_estimate


@pytest.mark.parametrize(
    ("data_type", "size"),
    [  # Spark 4.3's DataType.defaultSize of each
        (st.LongType(), 8),
        (st.IntegerType(), 4),
        (st.ShortType(), 2),
        (st.ByteType(), 1),
        (st.BooleanType(), 1),
        (st.DoubleType(), 8),
        (st.FloatType(), 4),
        (st.StringType(), 20),
        (st.BinaryType(), 100),
        (st.DateType(), 4),
        (st.TimestampType(), 8),
        (st.TimestampNTZType(), 8),
        (st.DecimalType(18, 2), 8),
        (st.DecimalType(19, 2), 16),
        (st.ArrayType(st.IntegerType()), 4),
        (st.MapType(st.StringType(), st.LongType()), 28),
        (st.StructType([st.StructField("a", st.LongType()), st.StructField("b", st.StringType())]), 28),
    ],
)
def test_default_size_is_sparks(data_type: st.DataType, size: int) -> None:
    assert default_size(data_type) == size


class Explained:
    """A Connect DataFrame's ``_explain_string``, as Spark prints ``EXPLAIN COST``."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _explain_string(self, mode: str) -> str:
        assert mode == "cost"
        return self.text


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("== Optimized Logical Plan ==\nRelation [id#0L] csv, Statistics(sizeInBytes=9.4 KiB)\n", int(9.4 * 1024)),
        ("Project [a#1], Statistics(sizeInBytes=1.5 MiB)\n+- Relation ..., Statistics(sizeInBytes=3.0 MiB)", 1572864),
        ("Range (0, 10, step=1), Statistics(sizeInBytes=80.0 B, rowCount=10)", 80),
        ("LocalRelation, Statistics(sizeInBytes=8.0 EiB)", 8 << 60),
        ("== Physical Plan ==\n*(1) Scan\n", None),
    ],
)
def test_the_size_estimate_is_the_plans_first_statistics(text: str, size: int | None) -> None:
    frame: Any = Explained(text)
    assert size_estimate(frame) == size
