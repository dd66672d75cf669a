"""A small lake table ``ns.t`` (id bigint, x double) for tests of the lake source and its plan cache."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from sluice.lake.catalog import LakeLocation, open_catalog


def small_lake(tmp_path: Path, *batches: pa.Table) -> str:
    """A new SQLite-catalogued lake under ``tmp_path`` whose table ``ns.t`` got one append per
    batch (one snapshot each); returns the lake URL."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import DoubleType, LongType, NestedField

    location = LakeLocation.from_url(f"iceberg+sqlite:///{tmp_path}/catalog.db")
    catalog = open_catalog(location, create=True)
    catalog.create_namespace("ns")
    table = catalog.create_table(
        ("ns", "t"),
        schema=Schema(
            NestedField(1, "id", LongType(), required=False), NestedField(2, "x", DoubleType(), required=False)
        ),
    )
    for batch in batches:
        table.append(batch)
    return location.url
