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
    COMPLEX = "complex"  # array<...>, map<...>, struct<...>: read whole, never compared by Sluice


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
            if not self.name.startswith(_COMPLEX):
                raise ValueError(f"unsupported Spark type {self.name!r}")
            _parse_complex(self.name)  # raises ValueError when malformed

    @property
    def kind(self) -> Kind:
        if self.name.startswith(_COMPLEX):
            return Kind.COMPLEX
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

    def json(self) -> str | dict[str, object]:
        """Spark's JSON form of the type (``DataType.fromJson``): a name, or an object for nested types."""
        if self.kind is Kind.COMPLEX:
            return _complex_json(_parse_complex(self.name))
        return {"tinyint": "byte", "smallint": "short", "int": "integer", "bigint": "long", "null": "void"}.get(
            self.name, self.name
        )

    def arrow(self) -> pa.DataType:
        """The Arrow type the reader must yield for this column."""
        if self.kind is Kind.COMPLEX:
            return _complex_arrow(_parse_complex(self.name))
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


_COMPLEX = ("array<", "map<", "struct<")
#: a parsed nested type: a SparkType for a simple one, else ("array", element), ("map", key,
#: value) or ("struct", ((name, type), ...))
_Nested = object


def _parse_complex(text: str) -> _Nested:
    """Parse Spark's catalog string of a nested type (``map<string,array<bigint>>``,
    ``struct<a:int,`odd name`:string>``); ValueError when it is not one."""
    parsed, rest = _parse_type(text.replace(" ", "") if "`" not in text else text)
    if rest:
        raise ValueError(f"unsupported Spark type {text!r}")
    return parsed


def _parse_type(text: str) -> tuple[_Nested, str]:
    for opener in _COMPLEX:
        if text.startswith(opener):
            rest = text[len(opener) :]
            kind = opener[:-1]
            if kind == "array":
                element, rest = _parse_type(rest)
                return ("array", element), _expect(rest, ">")
            if kind == "map":
                key, rest = _parse_type(rest)
                value, rest = _parse_type(_expect(rest, ","))
                return ("map", key, value), _expect(rest, ">")
            fields: list[tuple[str, _Nested]] = []
            while not rest.startswith(">"):
                if fields:
                    rest = _expect(rest, ",")
                name, rest = _parse_name(rest)
                kind_of, rest = _parse_type(_expect(rest, ":"))
                fields.append((name, kind_of))
            return ("struct", tuple(fields)), rest[1:]
    match = re.match(r"decimal\(\d+,\s*\d+\)|[a-z_]+", text)
    if match is None or not (match[0] in _SIMPLE or _DECIMAL.fullmatch(match[0])):
        raise ValueError(f"unsupported Spark type {text!r}")
    return SparkType(match[0]), text[match.end() :]


def _parse_name(text: str) -> tuple[str, str]:
    if text.startswith("`"):
        end = 1
        name = []
        while True:
            close = text.index("`", end)
            name.append(text[end:close])
            if text[close + 1 : close + 2] != "`":
                return "`".join(name), text[close + 1 :]
            end = close + 2
    match = re.match(r"[^:,<>`]+", text)
    if match is None:
        raise ValueError(f"a struct field has no name: {text!r}")
    return match[0], text[match.end() :]


def _expect(text: str, what: str) -> str:
    if not text.startswith(what):
        raise ValueError(f"expected {what!r} in a nested Spark type at {text!r}")
    return text[len(what) :]


def _complex_arrow(parsed: _Nested) -> pa.DataType:
    if isinstance(parsed, SparkType):
        return parsed.arrow()
    assert isinstance(parsed, tuple)
    if parsed[0] == "array":
        return pa.list_(_complex_arrow(parsed[1]))
    if parsed[0] == "map":
        return pa.map_(_complex_arrow(parsed[1]), _complex_arrow(parsed[2]))
    return pa.struct([pa.field(name, _complex_arrow(kind)) for name, kind in parsed[1]])


def _complex_json(parsed: _Nested) -> str | dict[str, object]:
    if isinstance(parsed, SparkType):
        return parsed.json()
    assert isinstance(parsed, tuple)
    if parsed[0] == "array":
        return {"type": "array", "elementType": _complex_json(parsed[1]), "containsNull": True}
    if parsed[0] == "map":
        return {
            "type": "map",
            "keyType": _complex_json(parsed[1]),
            "valueType": _complex_json(parsed[2]),
            "valueContainsNull": True,
        }
    return {
        "type": "struct",
        "fields": [
            {"name": name, "type": _complex_json(kind), "nullable": True, "metadata": {}} for name, kind in parsed[1]
        ],
    }


def spark_type_of(arrow: pa.DataType) -> SparkType:
    """The Spark type Iceberg's Spark runtime gives an Arrow column PyIceberg produced
    (Iceberg has no byte or short: those are ``int``; timestamps are ``timestamp``, UTC)."""
    return SparkType(_catalog_string(arrow))


def _catalog_string(arrow: pa.DataType) -> str:
    if pa.types.is_dictionary(arrow):
        return _catalog_string(arrow.value_type)
    if pa.types.is_map(arrow):
        return f"map<{_catalog_string(arrow.key_type)},{_catalog_string(arrow.item_type)}>"
    if pa.types.is_list(arrow) or pa.types.is_large_list(arrow):
        return f"array<{_catalog_string(arrow.value_type)}>"
    if pa.types.is_struct(arrow):
        fields = [arrow.field(i) for i in range(arrow.num_fields)]
        return "struct<" + ",".join(f"`{f.name.replace('`', '``')}`:{_catalog_string(f.type)}" for f in fields) + ">"
    if pa.types.is_integer(arrow):
        return "bigint" if arrow.bit_width == 64 else "int"
    if pa.types.is_string(arrow) or pa.types.is_large_string(arrow):
        return "string"
    if pa.types.is_binary(arrow) or pa.types.is_large_binary(arrow) or pa.types.is_fixed_size_binary(arrow):
        return "binary"
    if pa.types.is_timestamp(arrow):
        return "timestamp"
    if pa.types.is_decimal(arrow):
        return f"decimal({arrow.precision},{arrow.scale})"
    simple = {pa.bool_(): "boolean", pa.float32(): "float", pa.float64(): "double", pa.date32(): "date"}
    if arrow in simple:
        return simple[arrow]
    raise ValueError(f"no Spark type for Arrow type {arrow}")


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
    """A point in a table's history to read (time travel): a snapshot id, a named reference
    (a tag or branch: ``VERSION AS OF 'name'``, as Iceberg's Spark runtime reads it), or the
    snapshot current at a moment (milliseconds since the epoch, UTC, as Iceberg records commits)."""

    snapshot_id: int | None = None
    timestamp_ms: int | None = None
    ref: str | None = None

    def __str__(self) -> str:
        if self.snapshot_id is not None:
            return f"VERSION AS OF {self.snapshot_id}"
        if self.ref is not None:
            return f"VERSION AS OF '{self.ref}'"
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
