"""Which column of a data file holds each Iceberg field: schema evolution by field id.

Iceberg identifies a column by its field id, never by its name: a renamed column keeps
its id (old files hold it under the old name), an added column has an id no older file
holds (it reads as NULL), and a dropped column's id is simply no longer asked for. Files
PyIceberg writes record the ids in the Parquet schema, and so do the files Sluice's jobs
write: Spark's Parquet writer writes a column's ``parquet.field.id`` metadata as its field
id (``spark.sql.parquet.fieldId.write.enabled``, :func:`with_field_ids`). Files written
before that, and files with a list or map column (Spark has no field to carry the
element's, key's or value's id), are read through the table's
``schema.name-mapping.default``, which maps names to ids (PyIceberg's ``update_schema``
adds the new name of a renamed column as an alias). This module asks PyIceberg's own
reader code for the file's schema in ids.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.table import Table
    from pyiceberg.table.name_mapping import NameMapping
    from pyiceberg.types import IcebergType
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType

#: the StructField metadata key Spark's Parquet writer writes as the column's field id
FIELD_ID_KEY = "parquet.field.id"
#: Spark's switch for writing it (on by default since Spark 3.3; set by the jobs anyway)
FIELD_ID_WRITE = "spark.sql.parquet.fieldId.write.enabled"


def with_field_ids(frame: DataFrame, schema: Schema) -> DataFrame:
    """``frame`` (the table's columns, by name) with every column and struct field carrying its
    Iceberg field id, so the Parquet files Spark writes from it record them."""
    from pyspark.sql import functions as F

    return frame.select(
        *(
            F.col(field.name)
            .cast(_tagged(frame.schema[field.name].dataType, field.field_type))
            .alias(field.name, metadata={FIELD_ID_KEY: field.field_id})
            for field in schema.fields
        )
    )


def _tagged(spark_type: DataType, iceberg_type: IcebergType) -> DataType:
    """``spark_type`` with each struct field's id in its metadata (inside lists and maps too)."""
    from pyiceberg import types as ice
    from pyspark.sql import types as st

    if isinstance(spark_type, st.StructType) and isinstance(iceberg_type, ice.StructType):
        return st.StructType(
            [
                st.StructField(
                    field.name,
                    _tagged(field.dataType, nested.field_type),
                    field.nullable,
                    {**(field.metadata or {}), FIELD_ID_KEY: nested.field_id},
                )
                for field, nested in zip(spark_type.fields, iceberg_type.fields, strict=True)
            ]
        )
    if isinstance(spark_type, st.ArrayType) and isinstance(iceberg_type, ice.ListType):
        return st.ArrayType(_tagged(spark_type.elementType, iceberg_type.element_type), spark_type.containsNull)
    if isinstance(spark_type, st.MapType) and isinstance(iceberg_type, ice.MapType):
        return st.MapType(
            _tagged(spark_type.keyType, iceberg_type.key_type),
            _tagged(spark_type.valueType, iceberg_type.value_type),
            spark_type.valueContainsNull,
        )
    return spark_type


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


def names_held(table: Table, adding: Collection[str]) -> dict[str, int]:
    """Of the names ``adding`` (a new column's, a rename's new one), each that a data file of
    the table (any snapshot) holds and reads by name (it carries no field ids) -> the field
    id the name mapping gives it: a new field must not take such a name (unless it is that
    field), or those values would read as its.

    Costs nothing unless a name in ``adding`` is in the table's name mapping (a dropped or
    renamed column's, or a rename back); then the footers of its files are read until
    every such name is settled.
    """
    mapping = table.metadata.name_mapping()
    if mapping is None:
        return {}
    stale = {
        name: field.field_id
        for field in mapping
        for name in field.names
        if field.field_id is not None and name in adding
    }
    if not stale:
        return {}
    held: dict[str, int] = {}
    for path in _data_file_paths(table):
        file_schema = _parquet_schema(path)
        if _has_ids(file_schema):
            continue
        held.update({name: stale[name] for name in file_schema.names if name in stale})
        if len(held) == len(stale):
            break
    return held


def _data_file_paths(table: Table) -> list[str]:
    """Every data file any snapshot of ``table`` reads (time travel reads old ones too)."""
    from pyiceberg.manifest import DataFileContent, ManifestContent

    paths: dict[str, None] = {}
    for snapshot in table.snapshots():
        for manifest in snapshot.manifests(table.io):
            if manifest.content != ManifestContent.DATA:
                continue
            for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
                if entry.data_file.content == DataFileContent.DATA:
                    paths[entry.data_file.file_path] = None
    return list(paths)


def _parquet_schema(path: str) -> pa.Schema:
    import pyarrow.parquet as pq

    from sluice.lake.paths import open_input  # pyarrow.fs: imported where a file is read

    with open_input(path) as stream:
        return pq.read_schema(stream)


def _has_ids(file_schema: pa.Schema) -> bool:
    """Whether PyIceberg reads the file by its field ids (every field has one), not by name:
    the rule of ``pyarrow_to_schema``, which both lake readers use (:func:`file_columns`)."""
    from pyiceberg.io.pyarrow import _HasIds, visit_pyarrow  # its own check: the rule must be the same

    return bool(visit_pyarrow(file_schema, _HasIds()))
