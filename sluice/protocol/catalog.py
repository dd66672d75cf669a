"""The catalog's messages: listing and describing tables, lake DDL and writes."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import DataFrame  # at run time: the codec resolves every field's type

from sluice.protocol.base import SourceRequest
from sluice.protocol.codec import NOT_ON_WIRE, JsonObject


@dataclass(frozen=True, kw_only=True)
class NamespacesRequest(SourceRequest):
    """``SHOW NAMESPACES``."""


@dataclass(frozen=True, kw_only=True)
class NamespacesAnswer:
    namespaces: list[list[str]]


@dataclass(frozen=True, kw_only=True)
class TablesRequest(SourceRequest):
    """``SHOW TABLES [IN namespace]`` (no namespace: the source's default schema)."""

    namespace: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class TableName:
    namespace: list[str]
    name: str


@dataclass(frozen=True, kw_only=True)
class TablesAnswer:
    tables: list[TableName]


@dataclass(frozen=True, kw_only=True)
class DescribeRequest(SourceRequest):
    """A table looked up by name; a DataFrame reader's names it in ``options['table']`` instead.
    ``version`` / ``timestamp`` (microseconds): Spark's ``VERSION AS OF`` / ``TIMESTAMP AS OF``."""

    namespace: list[str] = field(default_factory=list)
    name: str | None = None
    version: str | None = None
    timestamp: int | None = None


@dataclass(frozen=True, kw_only=True)
class DescribeAnswer:
    #: the table's qualified name
    name: str
    #: Spark's JSON form of the table's StructType
    schema: JsonObject
    #: what every scan request of this table carries back (``{"table": ...}``, sluice/types.py)
    handle: JsonObject
    #: a lake table's identity partition columns (``INSERT ... PARTITION (column = value)``)
    partitioning: list[str]
    #: the primary key of a writable SQL table: Spark's row id for UPDATE and MERGE (none: not row-level)
    row_id: list[str] = field(default_factory=list)
    #: why UPDATE and MERGE are refused on a SQL table when ``row_id`` is empty ("": a lake table or a
    #: DataFrame reader's, which are not row-level)
    row_level_refused: str = ""
    #: a catalog's lake table: UPDATE and MERGE rewrite the data files they read (copy-on-write,
    #: sluice/lake/row_level.py)
    copy_on_write: bool = False
    #: ``copy_on_write`` only: the table's current snapshot as described (None: it has none yet);
    #: the operation reads it and its write replaces files of it
    snapshot_id: int | None = None


@dataclass(frozen=True, kw_only=True)
class NamedRequest(SourceRequest):
    """A request naming one table: ``namespace`` and ``name``."""

    namespace: list[str] = field(default_factory=list)
    name: str


@dataclass(frozen=True, kw_only=True)
class CreateTableRequest(NamedRequest):
    #: Spark's JSON form of the new table's StructType (text)
    schema: str
    #: Spark's ``PARTITIONED BY`` transforms: ``{"transform": name, "arguments": [...]}``
    partitioning: list[JsonObject] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class CreateTableAnswer:
    #: False: the table already existed
    created: bool


@dataclass(frozen=True, kw_only=True)
class DropTableRequest(NamedRequest):
    pass


@dataclass(frozen=True, kw_only=True)
class DropTableAnswer:
    dropped: bool


@dataclass(frozen=True, kw_only=True)
class AlterTableRequest(NamedRequest):
    #: Spark's table changes as JSON (``kind``, the column's path, the change's own fields)
    changes: list[JsonObject] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class AlterTableAnswer:
    #: what was done, one line per change
    done: list[str]


@dataclass(frozen=True, kw_only=True)
class CreateNamespaceRequest(SourceRequest):
    namespace: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class CreateNamespaceAnswer:
    #: False: the namespace already existed
    created: bool


@dataclass(frozen=True, kw_only=True)
class TagRequest(SourceRequest):
    """``CALL lake.system.create_tag(table, tag[, snapshot_id])`` / ``drop_tag(table, tag)``
    (``Procedures.java``): the arguments as the user wrote them; the planner parses ``table``."""

    #: ``namespace.table`` (or ``catalog.namespace.table``), as a string argument
    table: str
    tag: str
    #: create_tag only: the snapshot to tag (none: the current one)
    snapshot_id: int | None = None


@dataclass(frozen=True, kw_only=True)
class TagAnswer:
    #: the table's qualified name
    table: str
    tag: str
    #: the snapshot tagged, or the one a dropped tag pointed at
    snapshot_id: int


@dataclass(frozen=True, kw_only=True)
class WriteRequest(NamedRequest):
    """``INSERT`` / ``INSERT OVERWRITE`` / CTAS into a lake table; Spark's query travels beside the JSON."""

    #: ``append``, ``overwrite``, ``overwrite-filter`` or ``overwrite-partitions`` (sluice/planner/writes.py),
    #: ``replace`` (the table dropped and created anew with the rows), ``delta`` (UPDATE / MERGE on a
    #: SQL table, sluice/write/delta.py) or ``replace-data`` (UPDATE / MERGE on a lake table: the rows
    #: of the files read, changed, sluice/lake/row_level.py)
    mode: str = "append"
    #: ``delta`` only: the row id (primary key) columns, whose old values end each delta row
    row_id: list[str] = field(default_factory=list)
    #: ``replace-data`` (UPDATE / MERGE on a lake table, sluice/lake/row_level.py): the statement
    #: (``UPDATE`` or ``MERGE``) and the snapshot its rows were read at (None: the table had none)
    command: str = ""
    snapshot_id: int | None = None
    #: Spark's overwrite filter (V2 predicates, conjuncts) for ``overwrite-filter``
    predicates: list[JsonObject] = field(default_factory=list)
    #: ``replace`` only (REPLACE TABLE [AS SELECT], createOrReplace): the new table as a
    #: :class:`CreateTableRequest` names it: Spark's StructType (JSON text), transforms, properties
    schema: str = ""
    partitioning: list[JsonObject] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)
    #: the rows to write (a py4j argument of its own: a Dataset is no JSON)
    frame: DataFrame | None = field(default=None, metadata=NOT_ON_WIRE, compare=False)


@dataclass(frozen=True, kw_only=True)
class WriteAnswer:
    snapshot_id: int | None
    files: int
    rows: int


@dataclass(frozen=True, kw_only=True)
class DeleteRequest(NamedRequest):
    """``DELETE FROM`` a lake table or a writable SQL source (``SupportsDeleteV2.deleteWhere``):
    Spark's condition as conjuncts."""

    #: V2 predicates, ANDed (``ALWAYS_TRUE`` for a DELETE without WHERE or a TRUNCATE TABLE)
    predicates: list[JsonObject] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class CanDeleteAnswer:
    """``SupportsDeleteV2.canDeleteWhere`` on a SQL table with a primary key: whether the source
    runs the DELETE itself (every conjunct EXACT); if not, Spark's row-level rewrite deletes
    the rows Spark's condition selects, by their key."""

    pushed: bool
    #: the conjuncts that are not EXACT, and why (None when pushed)
    reason: str | None = None


@dataclass(frozen=True, kw_only=True)
class DeleteAnswer:
    #: the snapshot the delete committed; None when it deleted nothing (an ``ALWAYS_FALSE`` condition)
    snapshot_id: int | None
    #: data files dropped unread (proved to match whole), rewritten (kept rows written anew), and written
    removed_files: int
    rewritten_files: int
    written_files: int
    #: the rows deleted (a SQL source's count); None when not counted (a lake table's files dropped whole)
    rows: int | None


@dataclass(frozen=True, kw_only=True)
class ExplainWriteRequest(NamedRequest):
    """What a planned write would do, for Spark's EXPLAIN (``toString`` of Sluice's write node):
    asked while Spark prints the plan, so answering it reads the catalog and writes nothing."""

    #: the write's mode (:class:`WriteRequest`'s), or ``delete`` for a DELETE Spark hands the source
    mode: str = "append"
    #: ``delta`` only: ``UPDATE``, ``MERGE`` or ``DELETE`` (Spark's row-level command)
    command: str = ""
    #: ``delta`` only: the row id (primary key) columns
    row_id: list[str] = field(default_factory=list)
    #: ``delete`` and ``overwrite-filter``: Spark's conjuncts (V2 predicates)
    predicates: list[JsonObject] = field(default_factory=list)
    #: a DELETE's ``delta``: why the source does not delete the rows itself (``can_delete``'s reason)
    not_pushed: str = ""


@dataclass(frozen=True, kw_only=True)
class ExplainWriteAnswer:
    """The path a write takes, the statements the source runs, and why (sluice/write/explain.py)."""

    #: e.g. ``bulk load: binary COPY into a staging table, one INSERT ... SELECT``; ``refused`` when it would fail
    path: str
    #: the source's statements, in order (a staging table's name as ``sluice_stage_<hex>``)
    statements: list[str]
    reasons: list[str]
    #: the one line Spark's EXPLAIN shows (path, statements and reasons, as a scan's description)
    description: str
