"""Which column of a data file holds each Iceberg field: schema evolution by field id.

Iceberg identifies a column by its field id, never by its name: a renamed column keeps
its id (old files hold it under the old name), an added column has an id no older file
holds (it reads as NULL), and a dropped column's id is simply no longer asked for. Files
PyIceberg writes record the ids in the Parquet schema; Spark's files (Sluice's ingest)
carry none, and the table's ``schema.name-mapping.default`` maps their names to ids
(PyIceberg's ``update_schema`` adds the new name of a renamed column as an alias). This
module asks PyIceberg's own reader code for the file's schema in ids.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.table import Table
    from pyiceberg.table.name_mapping import NameMapping


def name_mapping(table: Table, schema: Schema) -> str:
    """The table's name mapping as JSON (it travels in read tasks), or one made from ``schema``
    for a table without (its files are then matched by the names the schema has)."""
    from pyiceberg.table.name_mapping import create_mapping_from_schema

    mapping = table.metadata.name_mapping() or create_mapping_from_schema(schema)
    return mapping.model_dump_json()


def parse_mapping(text: str) -> NameMapping:
    from pyiceberg.table.name_mapping import parse_mapping_from_json

    return parse_mapping_from_json(text)


def file_columns(file_schema: pa.Schema, mapping: NameMapping) -> dict[int, str]:
    """Field id -> the name of the top-level column holding it in a data file.

    Ids the file records win; a file without ids is read through ``mapping``.
    """
    from pyiceberg.io.pyarrow import pyarrow_to_schema

    found = pyarrow_to_schema(file_schema, name_mapping=mapping, downcast_ns_timestamp_to_us=True)
    return {field.field_id: field.name for field in found.fields}


def names_held(table: Table) -> dict[str, int]:
    """Column name -> the field id the table's name mapping gives it: every name a file without
    field ids may hold, a dropped column's and a renamed column's old name included (the
    mapping keeps them). Empty for a table without a mapping (its files carry ids)."""
    mapping = table.metadata.name_mapping()
    if mapping is None:
        return {}
    return {name: field.field_id for field in mapping for name in field.names if field.field_id is not None}
