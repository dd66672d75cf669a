"""Spark's PARTITIONED BY transforms as the lake's partition terms (sluice/planner/writes.py)."""

from __future__ import annotations

import pytest

from sluice.errors import ConfigError
from sluice.lake.layout import PartitionTerm
from sluice.planner.writes import partition_terms


def offered(name: str, *arguments: str | int) -> dict[str, object]:
    """A transform as SluiceCatalog sends it: numbers are literals, text is a column."""
    return {
        "transform": name,
        "arguments": [{"number": str(a)} if isinstance(a, int) else {"column": a} for a in arguments],
    }


def test_every_spark_transform_maps_to_its_iceberg_term() -> None:
    terms = partition_terms(
        [
            offered("identity", "region"),
            offered("years", "ts"),
            offered("months", "ts"),
            offered("days", "ts"),
            offered("hours", "ts"),
            offered("bucket", 16, "id"),
            offered("truncate", "name", 4),
            offered("truncate", 2, "code"),
        ]
    )
    assert terms == (
        PartitionTerm("identity", "region"),
        PartitionTerm("year", "ts"),
        PartitionTerm("month", "ts"),
        PartitionTerm("day", "ts"),
        PartitionTerm("hour", "ts"),
        PartitionTerm("bucket", "id", 16),
        PartitionTerm("truncate", "name", 4),
        PartitionTerm("truncate", "code", 2),
    )


@pytest.mark.parametrize(
    ("transform", "message"),
    [
        (offered("sorted_by", "id"), "lake tables take"),
        (offered("truncate", "name"), r"expected truncate\(N, column\)"),
        (offered("days", "a", "b"), r"expected days\(column\)"),
        (offered("bucket", 4, 8), r"expected bucket\(N, column\)"),
        ({"transform": "days", "arguments": [{"other": "a + 1"}]}, "expected days"),
    ],
)
def test_transforms_the_lake_cannot_take_are_refused_naming_them(transform, message) -> None:
    with pytest.raises(ConfigError, match=message):
        partition_terms([transform])
