"""Spark's view of a remote table: column types as Spark sees them after the read.

Every classification decision starts from the Spark type of a column (what the reader
produces) and the remote properties that make the source compare differently (collation,
padding, case-insensitivity). Both are discovered at attach time, never assumed.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

import pyarrow as pa

from sluice.errors import BindError


class Kind(enum.Enum):
    """Families of Spark types that share comparison semantics."""

    NULL = "null"
    BOOLEAN = "boolean"
    INTEGRAL = "integral"
    DECIMAL = "decimal"
    FLOAT = "float"
    STRING = "string"
    BINARY = "binary"
    DATE = "date"
    TIMESTAMP = "timestamp"  # Spark TIMESTAMP (LTZ): an instant
    TIMESTAMP_NTZ = "timestamp_ntz"  # a wall-clock reading, no zone


_INTEGRAL_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
_SIMPLE = {
    "null": Kind.NULL,
    "boolean": Kind.BOOLEAN,
    "float": Kind.FLOAT,
    "double": Kind.FLOAT,
    "string": Kind.STRING,
    "binary": Kind.BINARY,
    "date": Kind.DATE,
    "timestamp": Kind.TIMESTAMP,
    "timestamp_ntz": Kind.TIMESTAMP_NTZ,
    **{name: Kind.INTEGRAL for name in _INTEGRAL_BITS},
}
_DECIMAL = re.compile(r"decimal\((\d+),\s*(\d+)\)")


@dataclass(frozen=True)
class SparkType:
    """A Spark SQL data type, by its DDL name (``bigint``, ``decimal(10,2)``, ...)."""

    name: str

    def __post_init__(self) -> None:
        if self.name not in _SIMPLE and not _DECIMAL.fullmatch(self.name):
            raise ValueError(f"unsupported Spark type {self.name!r}")

    @property
    def kind(self) -> Kind:
        return Kind.DECIMAL if self.name.startswith("decimal") else _SIMPLE[self.name]

    @property
    def bits(self) -> int:
        """Width of an integral or floating type."""
        if self.name in _INTEGRAL_BITS:
            return _INTEGRAL_BITS[self.name]
        return {"float": 32, "double": 64}[self.name]

    @property
    def precision_scale(self) -> tuple[int, int]:
        match = _DECIMAL.fullmatch(self.name)
        assert match, self.name
        return int(match[1]), int(match[2])

    @property
    def is_numeric(self) -> bool:
        return self.kind in (Kind.INTEGRAL, Kind.DECIMAL, Kind.FLOAT)

    def integral_range(self) -> tuple[int, int]:
        half = 1 << (self.bits - 1)
        return -half, half - 1

    def arrow(self) -> pa.DataType:
        """The Arrow type the reader must yield for this column."""
        if self.kind is Kind.DECIMAL:
            return pa.decimal128(*self.precision_scale)
        return {
            "null": pa.null(),
            "boolean": pa.bool_(),
            "tinyint": pa.int8(),
            "smallint": pa.int16(),
            "int": pa.int32(),
            "bigint": pa.int64(),
            "float": pa.float32(),
            "double": pa.float64(),
            "string": pa.string(),
            "binary": pa.binary(),
            "date": pa.date32(),
            "timestamp": pa.timestamp("us", tz="UTC"),
            "timestamp_ntz": pa.timestamp("us"),
        }[self.name]

    def __str__(self) -> str:
        return self.name


BOOLEAN = SparkType("boolean")
INT = SparkType("int")
BIGINT = SparkType("bigint")
DOUBLE = SparkType("double")
STRING = SparkType("string")
DATE = SparkType("date")
TIMESTAMP = SparkType("timestamp")
TIMESTAMP_NTZ = SparkType("timestamp_ntz")
NULL = SparkType("null")


@dataclass(frozen=True)
class Column:
    """One remote column: its Spark type and the remote properties that decide pushdown.

    ``collation`` is the remote collation name for text (``None`` = the source's binary
    default); ``padded`` means trailing spaces are insignificant in remote comparisons
    (CHAR(n)/bpchar, PAD SPACE collations); ``case_insensitive`` that the remote
    collation folds case (SQLite NOCASE, MySQL ``*_ci``).
    """

    name: str
    type: SparkType
    remote_type: str
    nullable: bool = True
    collation: str | None = None
    padded: bool = False
    case_insensitive: bool = False
    #: why no predicate on this column may be pushed (the read is lossy or re-typed); None = pushable
    unpushable: str | None = None
    #: the reader casts the value to text remotely (types Arrow cannot carry as they are)
    read_as_text: bool = False

    def describe(self) -> str:
        """The column's remote properties, for reasons: ``name text COLLATE "en-US-x-icu"``."""
        text = f"{self.name} {self.remote_type}"
        if self.collation:
            text += f' COLLATE "{self.collation}"'
        return text


@dataclass(frozen=True)
class AsOf:
    """A point in a table's history to read (time travel): a snapshot id, or the snapshot
    current at a moment (milliseconds since the epoch, UTC, as Iceberg records commits)."""

    snapshot_id: int | None = None
    timestamp_ms: int | None = None

    def __str__(self) -> str:
        if self.snapshot_id is not None:
            return f"VERSION AS OF {self.snapshot_id}"
        return f"TIMESTAMP AS OF {self.timestamp_ms} ms"


@dataclass(frozen=True)
class TableSchema:
    """A remote table as attached: where it lives and its columns in remote order."""

    source: str
    schema: str | None
    name: str
    columns: tuple[Column, ...]
    row_estimate: int | None = None
    split_column: str | None = field(default=None, compare=False)
    #: the lake snapshot this description is of (time travel): every later request and the
    #: read carry it in the handle, so the whole query sees one snapshot
    snapshot: int | None = None
    #: a passthrough: the source's own SQL, whose result this describes (sluice/planner/passthrough.py);
    #: the scan reads ``SELECT ... FROM (query) AS sluice_query`` and pushes nothing into it
    query: str | None = None

    def __post_init__(self) -> None:
        seen: dict[str, str] = {}
        for column in self.columns:
            key = column.name.lower()
            if key in seen:
                raise BindError(
                    f"table {self.qualified_name}: columns {seen[key]!r} and {column.name!r} differ only "
                    "by case; Spark resolves names case-insensitively and cannot tell them apart"
                )
            seen[key] = column.name

    @property
    def qualified_name(self) -> str:
        parts = [self.source, self.schema, self.name]
        return ".".join(p for p in parts if p)

    def find(self, name: str) -> Column | None:
        """The column called ``name`` as Spark resolves names (case-insensitively), or None."""
        return next((column for column in self.columns if column.name.lower() == name.lower()), None)

    def column(self, name: str) -> Column:
        """Look a column up the way Spark does: case-insensitively."""
        found = self.find(name)
        if found is not None:
            return found
        known = ", ".join(c.name for c in self.columns)
        raise BindError(f"table {self.qualified_name} has no column {name!r} (columns: {known})")

    def spark_ddl(self, names: tuple[str, ...] | None = None) -> str:
        """Spark DDL schema string (``a bigint, b string``) for the given columns or all."""
        columns = self.columns if names is None else tuple(self.column(n) for n in names)
        return ", ".join(f"`{c.name.replace('`', '``')}` {c.type}" for c in columns)


def table_to_dict(table: TableSchema) -> dict:
    """JSON-ready form (scan specs travel to Spark workers as JSON options)."""
    columns = [{**column.__dict__, "type": column.type.name} for column in table.columns]
    return {
        "source": table.source,
        "schema": table.schema,
        "name": table.name,
        "columns": columns,
        "row_estimate": table.row_estimate,
        "split_column": table.split_column,
        "snapshot": table.snapshot,
        "query": table.query,
    }


def table_from_dict(data: dict) -> TableSchema:
    columns = tuple(Column(**{**c, "type": SparkType(c["type"])}) for c in data["columns"])
    return TableSchema(
        data["source"],
        data["schema"],
        data["name"],
        columns,
        data["row_estimate"],
        data["split_column"],
        data.get("snapshot"),
        data.get("query"),
    )
