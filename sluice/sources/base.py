"""What a source is: a catalog to describe tables, a dialect, and an Arrow reader.

A :class:`Source` is created on the driver at attach time and pickled to Spark's Python
workers, where :meth:`read` runs. It holds connection parameters only, never an open
connection, so pickling is cheap and safe.

Two families share the interface. A :class:`SqlSource` answers a scan with one remote
SQL query per partition (its dialect renders the pushed predicates, :meth:`SqlSource.split`
partitions the table). Other sources (Iceberg lake tables, Flight services) plan their own
read tasks from the same :class:`~sluice.scan.spec.ScanSpec`: its pushed predicates are text in
the source's dialect, which they parse back into their own filter language.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

from sluice.dialects.base import Dialect
from sluice.errors import ConfigError, SluiceError, SourceError, TimeTravelError
from sluice.masking import mask_text, mask_url
from sluice.pushdown.levels import Verdict
from sluice.pushdown.translator import classify_conjuncts
from sluice.scan.aggregation import Decision
from sluice.scan.query import build_query
from sluice.sources.unreadable import Check, check_schema, scan_checks
from sluice.timeouts import connect_timeout
from sluice.types import AsOf, Column, SparkType, TableSchema
from sluice.urls import parse_source_url

if TYPE_CHECKING:
    from sqlglot import exp

    from sluice.lake.catalog import LakeLocation
    from sluice.lake.pyramid import Pyramid
    from sluice.lake.vectorised import Choice
    from sluice.protocol.scan import FiltersRequest, PlanRequest
    from sluice.scan.spec import ScanSpec
    from sluice.scan.statistics import TableStatistics


@dataclass(frozen=True)
class ReadTask:
    """One partition's request and the Arrow schema its batches must have.

    ``request`` is what the source runs: SQL text for a :class:`SqlSource`, a JSON
    document for the others. It is shown (masked) in metrics, so it holds no secret.
    """

    request: str
    schema: pa.Schema
    partition: int = 0
    #: the table as planned: a reader compares what the source returns now against it
    table: TableSchema | None = None
    #: the same read in a form a faster reader takes, when the source judged it safe
    #: (SQLite: sluice/sources/sqlite_arrow.py); None: ``request`` is the only form
    fast_request: str | None = None
    #: ``request`` also returns the rows the pushed filter rejects but whose values the reader
    #: must check, marked by one more column (SQLite: ``SqliteSource.read_task``)
    guarded: bool = False
    #: partitions of one scan that must read one snapshot share this token (PostgreSQL:
    #: sluice/sources/pg_snapshot.py); None: the task reads on its own
    snapshot_group: str | None = None
    #: how many partitions share ``snapshot_group``
    group_size: int = 1
    #: the rows the source expects this task to return (its planner's estimate), when it gave one;
    #: sizes the read only (sluice/spark/small_reads.py), never decides a row
    expected_rows: int | None = None
    #: a pushed join's read: the tables it reads, which a reader that checks the planned table
    #: against the catalog checks instead of ``table`` (then the join's outputs, named as Spark names them)
    tables: tuple[TableSchema, ...] = ()

    def planned_tables(self) -> tuple[TableSchema, ...]:
        """The remote tables this read touches, as planned (a passthrough's result is none: no
        catalog describes it again, the reader checks its columns' types only)."""
        planned = self.tables or ((self.table,) if self.table is not None else ())
        return tuple(table for table in planned if table.query is None)


_ASCII_UPPER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_folded(name: str) -> str:
    """``name`` with ASCII letters lower-cased and nothing else touched: how SQLite and DuckDB
    match identifiers (``É`` and ``é`` name two tables there; ``str.lower`` would merge them)."""
    return name.translate(_ASCII_UPPER)


#: the fewest rows worth a read task of their own: a read of fewer is not split (a split costs a
#: session, a task and, on PostgreSQL, a join of the shared snapshot per part)
ROWS_PER_PARTITION = 250_000
#: the most read tasks a default read is split into
MAX_READ_PARTITIONS = 8
#: rows one read task holds, past which a read takes more tasks than Spark has cores: 64 batches
#: of 65,536 rows. Below it the extra tasks only queue behind the first ones and add their fixed
#: cost (docs/benchmarks.md, "Read partitions": 1M rows on 2 cores took 0.84, 1.06, 1.24 and
#: 1.37 s in 1, 2, 4 and 8 partitions; 5M took 3.61 s in 2 and 4.12 s in 8)
ROWS_PER_TASK_BEYOND_CORES = 64 * 65_536


def read_partitions(rows: int, cores: int | None) -> int:
    """How many read tasks a read of about ``rows`` rows takes by default.

    One per ``ROWS_PER_PARTITION`` rows, at most ``MAX_READ_PARTITIONS``, and no more than
    ``cores`` (Spark's default parallelism, as the planner learns it from Spark) unless
    ``cores`` tasks would each hold more than ``ROWS_PER_TASK_BEYOND_CORES`` rows: then a
    multiple of ``cores``, so no round of tasks runs with cores idle. ``cores`` None (a Flight
    server, which does not know its client's Spark): the row rule alone.
    """
    count = max(1, min(MAX_READ_PARTITIONS, rows // ROWS_PER_PARTITION))
    if not cores or count <= cores:
        return count
    rounds = -(-rows // (cores * ROWS_PER_TASK_BEYOND_CORES))
    return max(1, min(count, cores * rounds))


def file_path(name: str, url: str, kind: str, suffix: str) -> str:
    """The absolute path in a file URL: ``scheme:///relative`` or ``scheme:////absolute``."""
    scheme, _, rest = url.partition("://")
    rest = rest.split("?", 1)[0]
    if not rest.startswith("/") or len(rest) < 2:
        raise ConfigError(
            f"source {name!r}: {kind} URLs look like {scheme}:///relative{suffix} or "
            f"{scheme}:////abs/path{suffix}, not {mask_url(url)!r}"
        )
    return str(Path(rest[1:]).resolve())


def absolute_file_url(url: str, path: str) -> str:
    """``url`` with its (possibly relative) file path replaced by the absolute ``path``."""
    scheme, _, rest = url.partition("://")
    query = rest.partition("?")[2]
    return f"{scheme}:///{path}" + (f"?{query}" if query else "")


def key_ranges(key: str, low: int | None, high: int | None, count: int) -> list[str | None]:
    """``count`` predicates on integer ``key`` that together hold every row exactly once.

    The first and last parts are open-ended, so a row added after ``low``/``high`` were
    read still falls in exactly one part. ``[None]`` (one unsplit read) when the range is
    empty or narrower than ``count``.
    """
    if low is None or high is None or high - low < count:
        return [None]
    step = -(-(high - low + 1) // count)
    cuts = [low + i * step for i in range(1, count)]
    parts: list[str | None] = [f"{key} < {cuts[0]}"]
    parts += [f"{key} >= {a} AND {key} < {b}" for a, b in pairwise(cuts)]
    parts.append(f"{key} >= {cuts[-1]}")
    return parts


class Source(abc.ABC):
    """A remote system Sluice reads from. Subclasses implement the abstract methods."""

    dialect: Dialect  # a class attribute; a source that learns its server's kind sets its own (MySQL)
    #: whether the source answers pushed aggregates (a ``ScanSpec`` with ``aggregate``)
    aggregates: ClassVar[bool] = False
    #: whether the reader keeps the GIL while the server works: the driver then reads this source's
    #: small scans in a read process beside it (sluice/spark/small_reads.py), else one slow small
    #: query would stall every other Python thread of the driver
    holds_gil_while_reading: ClassVar[bool] = False
    #: whether the source runs a pushed join of two of its tables (sluice/planner/joins.py)
    joins: ClassVar[bool] = False
    default_schema: ClassVar[str | None] = None
    batch_rows: ClassVar[int] = 65_536
    #: what a scan's transferred bytes (``fed.transferred``) count for this source, as its output says
    bytes_counted: ClassVar[str] = "Arrow bytes decoded"

    def __init__(
        self,
        name: str,
        url: str,
        password: str | None = None,
        partitions: int | None = None,
        statement_timeout_s: float = 600.0,
        connect_timeout_s: float | None = None,
    ) -> None:
        self.name = name
        self.url = url
        self.parsed = parse_source_url(name, url)
        self.password = password
        self.partitions = partitions
        self.statement_timeout_s = statement_timeout_s
        self.connect_timeout_s = connect_timeout(name, self.parsed, connect_timeout_s)

    @property
    def display_url(self) -> str:
        """The URL as shown to people: password masked."""
        return mask_url(self.url)

    @property
    def portable_url(self) -> str:
        """The URL a scan carries to the executors. It must name this source from any working
        directory (an executor's is not the driver's), so file sources make their path absolute."""
        return self.url

    @property
    def credential(self) -> str | None:
        """The password to log in with: given separately, or inside the URL (percent-decoded)."""
        return self.password or self.parsed.password

    def secrets(self) -> tuple[str, ...]:
        """Every spelling of the password a message could echo (the URL's encoded one too)."""
        return tuple(s for s in (self.password, *self.parsed.secrets()) if s)

    def masked(self, text: str) -> str:
        """Driver messages may echo the DSN: strip every secret before showing them."""
        return mask_text(text, self.secrets())

    def timeout_named(self, message: str) -> str:
        """``message``, naming Sluice's setting when the server says the statement ran too long."""
        if any(
            words in message
            for words in ("statement timeout", "max_statement_time", "maximum statement execution time")
        ):
            return f"{message} (statement_timeout_s={self.statement_timeout_s:g})"
        return message

    @abc.abstractmethod
    def check(self) -> None:
        """Connect once and fail with a clear :class:`SourceError` if that is impossible."""

    @abc.abstractmethod
    def describe(self, schema: str | None, table: str) -> TableSchema:
        """The table's columns as Spark will see them, from the live catalog."""

    def describe_as_of(self, schema: str | None, table: str, as_of: AsOf) -> TableSchema:
        """The table as it was at ``as_of``: only lake tables keep their history."""
        raise TimeTravelError(
            f"source {self.name!r} ({type(self).__name__}): time travel ({as_of}) is only for lake tables"
        )

    @abc.abstractmethod
    def tasks(self, spec: ScanSpec) -> list[ReadTask]:
        """The read tasks of a planned scan: one per Spark partition."""

    @abc.abstractmethod
    def request_text(self, spec: ScanSpec) -> str:
        """What the scan asks of the source, as EXPLAIN shows it (before masking)."""

    @abc.abstractmethod
    def read(self, task: ReadTask) -> Iterator[pa.RecordBatch]:
        """Run ``task.request`` read-only and yield batches of exactly ``task.schema``."""

    def describe_query(self, sql: str) -> tuple[Column, ...]:
        """The columns of ``sql``'s result, typed as :meth:`describe` types a table's (a passthrough,
        sluice/planner/passthrough.py), found without reading a row, read-only."""
        raise ConfigError(
            f"source {self.name!r} is {self.kind}: a passthrough query runs on a SQL source "
            "(PostgreSQL, MySQL/MariaDB, SQLite, DuckDB), which it hands the SQL as written"
        )

    #: what the source is, in words, with its article (messages)
    kind: ClassVar[str] = "a source"

    def counted_bytes(self, task: ReadTask, decoded: int) -> int:
        """The bytes ``task`` transferred, as :attr:`bytes_counted` says (``decoded``: the Arrow
        bytes the reader yielded). A lake scan counts what it read from storage, whichever
        reader read it, so its pushed and whole reads compare like with like."""
        return decoded

    def classify(
        self, table: TableSchema, candidates: Sequence[exp.Expression], session_zone: str
    ) -> tuple[Verdict, ...]:
        """Each candidate conjunct's level, reason and remote text (the pushdown contract).

        The dialect's translator decides here; a source whose remote end decides for
        itself (a Flight server) overrides this and asks it.
        """
        return classify_conjuncts(self.dialect, table, candidates, session_zone)

    def decide_aggregation(
        self, table: TableSchema, offered: dict[str, Any], filters: list[Verdict], ansi: bool, session_zone: str
    ) -> Decision | None:
        """The source's own answer to Spark's offered ``GROUP BY`` and aggregates, or None: the
        planner's rules decide by the source's dialect (:func:`sluice.planner.aggregates.answer`).
        A hook, not the rules themselves, so sources stay below the planner; a source whose remote
        end decides (a Flight server, which asks its own source) answers here."""
        return None

    def name_key(self, name: str) -> str:
        """``name`` as this source compares identifiers: two names with one key are one object.

        The default is exact comparison (PostgreSQL's quoted identifiers: ``"Cs"`` and ``cs``
        are two tables). Sources that fold case override it, so a cache keyed by it never
        hands one table's description to a query of another.
        """
        return name

    def table_key(self, schema: str | None, table: str) -> tuple[str, str]:
        """The identity of ``schema.table`` as the source resolves it (no schema: the default)."""
        return self.name_key(schema or self.default_schema or ""), self.name_key(table)

    def tables(self) -> list[tuple[str | None, str]]:
        """Every table the source can read, as (schema, name): what a Flight server publishes."""
        raise ConfigError(f"source {self.name!r}: a {type(self).__name__} cannot list its tables")

    def select_value(self, sql: str, spark_type: SparkType) -> str:
        """How the reader selects a computed value (an aggregate) it reads as ``spark_type``."""
        return sql

    def refused(self, column: Column) -> exp.Expression | None:
        """SQL true on a stored value of ``column`` that its type allows and the reader refuses
        (PostgreSQL's ``infinity`` dates); None when there is none. Such values are looked for
        before a pushed scan reads (:meth:`SqlSource.run_checks`)."""
        return None

    def pruning(self, spec: ScanSpec) -> Pyramid | None:
        """What the scan skips before reading (lake tables: the pruning pyramid); None: nothing."""
        return None

    def order_text(self, spec: ScanSpec) -> str | None:
        """The pushed ``ORDER BY`` as this source's reader renders it, for EXPLAIN (None: no
        order pushed). Keys are unqualified here: only a SQL query names its table."""
        return spec.order_sql(self.dialect, qualify=False)

    def checks_text(self, spec: ScanSpec) -> str:
        """EXPLAIN's words on what is read before ``spec`` (empty here: nothing is)."""
        return ""

    @property
    def lake(self) -> LakeLocation | None:
        """The lake this source is, when it is one: its tables are Iceberg tables Sluice creates,
        writes and maintains, and a commit to any lake changes what they describe. None: a
        system Sluice reads, whose DDL and writes are :mod:`sluice.write`'s. The planner asks
        this instead of testing the source's class, so it imports no kind of source."""
        return None

    def filters_as_read(self, table: TableSchema, verdicts: list[Verdict], request: FiltersRequest) -> list[Verdict]:
        """The verdicts on Spark's offered conjuncts as the reader that will read ``table`` applies
        them. Unchanged here: the source's reader applies every pushed conjunct. A lake scan that
        Spark's vectorised Parquet reader reads applies none (it prunes; Spark filters)."""
        return verdicts

    def plan_reader(
        self, spec: ScanSpec, request: PlanRequest, verdicts: list[Verdict]
    ) -> tuple[Choice | None, dict[str, Any] | None]:
        """Which reader reads ``spec`` and why, with what Spark's Parquet reader reads when it is
        that one; (None, None) here: the source has one reader. A lake source chooses between
        its Python reader and Spark's vectorised one (:mod:`sluice.lake.vectorised`)."""
        return None, None

    def default_partitions(self, table: TableSchema, cores: int | None = None) -> int:
        """The read tasks of a scan of ``table``: the ``partitions`` the user set, else
        :func:`read_partitions` of the table's estimated rows on ``cores``."""
        if self.partitions:
            return self.partitions
        return read_partitions(table.row_estimate or 0, cores)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.display_url!r})"


class SqlSource(Source):
    """A source that runs one remote SQL query per partition."""

    #: runs ``GROUP BY`` queries for pushed aggregates (sluice/planner/aggregates.py)
    aggregates: ClassVar[bool] = True
    #: runs pushed joins of two of its tables as one query (sluice/planner/joins.py)
    joins: ClassVar[bool] = True

    def tasks(self, spec: ScanSpec) -> list[ReadTask]:
        """One query per partition; a pushed LIMIT is answered by a single stream, and a filtered
        read takes the partitions :func:`read_partitions` gives the rows the source expects it to
        *return* (at most ``spec.partitions``): splitting 10 rows into 8 partitions costs 8
        sessions and 8 tasks for nothing.
        A pushed join is one query over both tables, never split."""
        self.run_checks(spec)
        if spec.join is not None:
            joined = spec.join.read_table(spec.columns)
            return [
                ReadTask(spec.query(self), spec.arrow_schema(), 0, joined, tables=(spec.join.left, spec.join.right))
            ]
        count = 1 if spec.limit is not None or spec.aggregate is not None else spec.partitions
        # the estimate sizes the read: fewer partitions, or a small read by the driver
        wanted = spec.where and spec.limit is None and spec.aggregate is None
        expected = self.estimated_rows(spec) if wanted else None
        if count > 1 and expected is not None and spec.fewer_when_selective:
            count = min(count, read_partitions(expected, spec.cores))
        schema = spec.arrow_schema()
        try:
            parts = self.split(spec.table, count)
        except SluiceError:
            raise
        except Exception as error:  # noqa: BLE001 - each driver has its own errors (a table dropped since planning)
            raise SourceError(
                self.name,
                f"cannot split {spec.table.qualified_name} into partitions: {self.masked(str(error)).strip()}",
            ) from None
        tasks = [self.read_task(spec, predicate, index, schema) for index, predicate in enumerate(parts)]
        return [replace(tasks[0], expected_rows=expected)] if len(tasks) == 1 and expected is not None else tasks

    def read_task(self, spec: ScanSpec, partition_predicate: str | None, index: int, schema: pa.Schema) -> ReadTask:
        """The task reading one partition of ``spec``."""
        return ReadTask(spec.query(self, partition_predicate), schema, index, spec.table)

    def request_text(self, spec: ScanSpec) -> str:
        return spec.query(self)

    def read_checks(self, spec: ScanSpec) -> tuple[Check, ...]:
        """What :meth:`run_checks` looks for before ``spec`` is read, per table (none: nothing; a
        passthrough pushes nothing, so no row it reads can be skipped)."""
        return () if spec.table.query is not None else scan_checks(spec, self.refused)

    def check_query(self, check: Check) -> str:
        """The query returning one row that holds a value ``check`` looks for."""
        select = [self.select_expression(name, check.table) for name in check.columns]
        table = self.dialect.quote_table(check.table.schema, check.table.name)
        return build_query(select, table, [self.dialect.render(check.condition)], None, 1)

    def order_text(self, spec: ScanSpec) -> str | None:
        return spec.order_sql(self.dialect)

    def checks_text(self, spec: ScanSpec) -> str:
        """The queries :meth:`run_checks` runs before a pushed scan (sluice/sources/unreadable.py)."""
        return "".join(
            f" | Checked first ({check.reason}): {self.masked(self.check_query(check))}"
            for check in self.read_checks(spec)
        )

    def run_checks(self, spec: ScanSpec) -> None:
        """Fail as the reference read fails when a row the pushed query may skip holds a value the
        reader refuses (sluice/sources/unreadable.py): that row is read, and refused, first."""
        for check in self.read_checks(spec):
            self.run_check(check)

    def run_check(self, check: Check) -> None:
        """Read the first row ``check`` finds, which the reader refuses, naming column and value."""
        task = ReadTask(self.check_query(check), check_schema(check), 0, check.table)
        for _ in self.read(task):
            pass

    def guarded_request(self, spec: ScanSpec, partition_predicate: str | None) -> str | None:
        """The filtered read that also returns, marked by a last column ``sluice_guard``, the
        rows whose read columns hold a suspect value (:meth:`Dialect.suspect`); None when the
        scan needs no guard. A reader of such a request converts every row, then drops the marked.

        Without it another pushed conjunct (``id < 10``) could skip a row holding a value
        the reader refuses (1.005 in a SQLite DECIMAL(10,2), 2 in a MySQL TINYINT(1)) where
        the reference read, which reads every row, fails. A pushed LIMIT reads a prefix either
        way (guarded rows would take its places), so a limited scan is not guarded.
        """
        if not spec.where or spec.limit is not None or spec.aggregate is not None:
            return None
        guards = [
            self.dialect.render(suspect[0])
            for name in spec.columns
            if (suspect := self.dialect.suspect(spec.table.column(name))) is not None
        ]
        if not guards:
            return None
        pushed = " AND ".join(f"({w})" for w in spec.where_sql(self.dialect))
        select = [self.select_expression(name, spec.table) for name in spec.columns]
        select.append(f"CASE WHEN {pushed} THEN NULL ELSE 1 END AS sluice_guard")
        where = [" OR ".join([f"({pushed})"] + [f"({g})" for g in guards])] + (
            [partition_predicate] if partition_predicate else []
        )
        return build_query(
            select,
            self.dialect.quote_table(spec.table.schema, spec.table.name),
            where,
            spec.order_sql(self.dialect),
            None,
        )

    def estimated_rows(self, spec: ScanSpec) -> int | None:
        """The rows the source's own planner expects the scan to return; None: no estimate.
        Only sizes the read (never decides a row), so any failure is just no estimate."""
        return None

    def statistics(self, table: TableSchema) -> TableStatistics | None:
        """What the source's planner knows of ``table`` (row count, indexed columns, histograms),
        for the join cost rule (sluice/planner/join_cost.py); None: its planner needs no such check."""
        return None

    #: (schema, table) of everything readable, for :meth:`tables`; sources without an
    #: information_schema override it
    catalog_query: ClassVar[str] = (
        "SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema NOT IN "
        "('information_schema', 'pg_catalog', 'mysql', 'performance_schema', 'sys') ORDER BY 1, 2"
    )

    def tables(self) -> list[tuple[str | None, str]]:
        task = ReadTask(self.catalog_query, pa.schema([("schema", pa.string()), ("name", pa.string())]))
        return [
            (schema, name)
            for batch in self.read(task)
            for schema, name in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True)
        ]

    @abc.abstractmethod
    def split(self, table: TableSchema, count: int) -> list[str | None]:
        """Remote predicates (SQL text) that partition ``table`` into about ``count`` parts.

        Every row falls in exactly one part. ``[None]`` means a single unsplit read.
        """

    def select_expression(self, column_name: str, table: TableSchema) -> str:
        """How the reader selects a column (a cast for types Arrow cannot carry as-is)."""
        return self.dialect.render_identifier(column_name)

    def checked(self, batch: pa.RecordBatch, task: ReadTask) -> pa.RecordBatch:
        """``batch`` if every column still holds the kind of value planned, else a SourceError.

        The table may change between planning and reading; casting blindly to the planned
        type would turn text ``'00042'`` into the integer 42 or read a float as an integer.
        Only the kind is compared: drivers may widen (``uint8`` for ``smallint``), and
        decimals travel as text.
        """
        where = task.table.qualified_name if task.table is not None else "the query"
        if batch.num_columns != len(task.schema):
            raise SourceError(
                self.name,
                f"{where}: the source returned {batch.num_columns} columns, "
                f"{len(task.schema)} were planned{STALE_PLAN}",
            )
        for field, array in zip(task.schema, batch.columns, strict=True):
            got = array.type.storage_type if isinstance(array.type, pa.ExtensionType) else array.type
            if not _holds(got, field.type):
                column = task.table.find(field.name) if task.table is not None else None  # None: a computed value
                planned = column.remote_type if column is not None else field.type
                raise SourceError(
                    self.name,
                    f"{where}: column {field.name!r} was {planned} when planned (read as "
                    f"{field.type}) but the source now returns {got}{STALE_PLAN}",
                )
        return batch

    def ensure_unchanged(self, planned: TableSchema, current: Sequence[Column] | None) -> None:
        """Fail, naming it, if a planned column is gone or has another type or collation now.

        ``current`` is the table's columns as the catalog shows them now (None: the table is
        gone). For sources that convert between types without a word (SQLite, MySQL), where a
        stale plan would return wrong rows rather than fail.
        """
        if current is None:
            raise SourceError(self.name, f"table {planned.qualified_name} no longer exists{STALE_PLAN}")
        now = {column.name.lower(): column for column in current}
        for column in planned.columns:
            found = now.get(column.name.lower())
            if found is None:
                raise SourceError(
                    self.name, f"{planned.qualified_name}: column {column.name!r} no longer exists{STALE_PLAN}"
                )
            if (found.remote_type, found.collation) != (column.remote_type, column.collation):
                raise SourceError(
                    self.name,
                    f"{planned.qualified_name}: column {column.name!r} was {_declared(column)} when "
                    f"planned and is {_declared(found)} now{STALE_PLAN}",
                )


def _declared(column: Column) -> str:
    return column.remote_type + (f" COLLATE {column.collation}" if column.collation else "")


STALE_PLAN = "; the table changed after it was described (attach the source again to read its new schema)"


def _kind(arrow_type: pa.DataType) -> str:
    """The kind of value an Arrow type holds, whatever its width or encoding."""
    for kind, tests in _KINDS:
        if any(test(arrow_type) for test in tests):
            return kind
    return str(arrow_type)


_KINDS = (
    ("boolean", (pa.types.is_boolean,)),
    ("integer", (pa.types.is_integer,)),
    ("floating", (pa.types.is_floating,)),
    ("decimal", (pa.types.is_decimal,)),
    ("text", (pa.types.is_string, pa.types.is_large_string, pa.types.is_string_view)),
    ("binary", (pa.types.is_binary, pa.types.is_large_binary, pa.types.is_fixed_size_binary, pa.types.is_binary_view)),
    ("date", (pa.types.is_date,)),
    ("timestamp", (pa.types.is_timestamp,)),
)


def _holds(got: pa.DataType, planned: pa.DataType) -> bool:
    """Whether a driver column of type ``got`` carries the values of a ``planned`` column.

    Decimals may arrive as text (read with a cast to keep every digit). A time-zone-aware
    instant must not become a wall-clock timestamp; the reverse is how MySQL's TIMESTAMP
    arrives (UTC wall clock in a ``+00:00`` session).
    """
    if pa.types.is_decimal(planned) and _kind(got) == "text":
        return True
    if pa.types.is_timestamp(planned) and pa.types.is_timestamp(got) and planned.tz is None and got.tz is not None:
        return False
    return _kind(got) == _kind(planned)
