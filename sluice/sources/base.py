"""What a source is: a catalog to describe tables, a dialect, and an Arrow reader.

A :class:`Source` is created on the driver at attach time and pickled to Spark's Python
workers, where :meth:`read` runs. It holds connection parameters only, never an open
connection, so pickling is cheap and safe.

Two families share the interface. A :class:`SqlSource` answers a scan with one remote
SQL query per partition (its dialect renders the pushed predicates, :meth:`SqlSource.split`
partitions the table). Other sources (Iceberg lake tables, Flight services) plan their own
read tasks from the same :class:`~sluice.scan.ScanSpec`: its pushed predicates are text in
the source's dialect, which they parse back into their own filter language.
"""

from __future__ import annotations

import abc
from pathlib import Path
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Iterator, Sequence
from urllib.parse import urlsplit

import pyarrow as pa

from sluice.dialects.base import Dialect
from sluice.errors import ConfigError
from sluice.masking import mask_text, mask_url
from sluice.pushdown.levels import Verdict
from sluice.pushdown.translator import classify_conjuncts
from sluice.types import TableSchema

if TYPE_CHECKING:
    from sqlglot import exp

    from sluice.lake.pyramid import Pyramid
    from sluice.scan import ScanSpec


@dataclass(frozen=True)
class ReadTask:
    """One partition's request and the Arrow schema its batches must have.

    ``request`` is what the source runs: SQL text for a :class:`SqlSource`, a JSON
    document for the others. It is shown (masked) in metrics, so it holds no secret.
    """

    request: str
    schema: pa.Schema
    partition: int = 0


def file_path(name: str, url: str, kind: str, suffix: str) -> str:
    """The absolute path in a file URL: ``scheme:///relative`` or ``scheme:////absolute``."""
    scheme, _, rest = url.partition("://")
    rest = rest.split("?", 1)[0]
    if not rest.startswith("/") or len(rest) < 2:
        raise ConfigError(f"source {name!r}: {kind} URLs look like {scheme}:///relative{suffix} or "
                          f"{scheme}:////abs/path{suffix}, not {url!r}")
    return str(Path(rest[1:]).resolve())


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
    parts += [f"{key} >= {a} AND {key} < {b}" for a, b in zip(cuts, cuts[1:])]
    parts.append(f"{key} >= {cuts[-1]}")
    return parts


class Source(abc.ABC):
    """A remote system Sluice reads from. Subclasses implement the abstract methods."""

    dialect: ClassVar[Dialect]
    default_schema: ClassVar[str | None] = None
    batch_rows: ClassVar[int] = 65_536

    def __init__(self, name: str, url: str, password: str | None = None, partitions: int | None = None,
                 statement_timeout_s: float = 600.0) -> None:
        self.name = name
        self.url = url
        self.password = password
        self.partitions = partitions
        self.statement_timeout_s = statement_timeout_s

    @property
    def display_url(self) -> str:
        """The URL as shown to people: password masked."""
        return mask_url(self.url)

    @property
    def credential(self) -> str | None:
        """The password to log in with: given separately, or inside the URL."""
        return self.password or urlsplit(self.url).password

    def secrets(self) -> tuple[str, ...]:
        return tuple(s for s in (self.password, urlsplit(self.url).password) if s)

    def masked(self, text: str) -> str:
        """Driver messages may echo the DSN: strip every secret before showing them."""
        return mask_text(text, self.secrets())

    @abc.abstractmethod
    def check(self) -> None:
        """Connect once and fail with a clear :class:`SourceError` if that is impossible."""

    @abc.abstractmethod
    def describe(self, schema: str | None, table: str) -> TableSchema:
        """The table's columns as Spark will see them, from the live catalog."""

    @abc.abstractmethod
    def tasks(self, spec: "ScanSpec") -> list[ReadTask]:
        """The read tasks of a planned scan: one per Spark partition."""

    @abc.abstractmethod
    def request_text(self, spec: "ScanSpec") -> str:
        """What the scan asks of the source, as EXPLAIN shows it (before masking)."""

    @abc.abstractmethod
    def read(self, task: ReadTask) -> Iterator[pa.RecordBatch]:
        """Run ``task.request`` read-only and yield batches of exactly ``task.schema``."""

    def classify(self, table: TableSchema, candidates: "Sequence[exp.Expression]", session_zone: str) -> tuple[Verdict, ...]:
        """Each candidate conjunct's level, reason and remote text (the pushdown contract).

        The dialect's translator decides here; a source whose remote end decides for
        itself (a Flight server) overrides this and asks it.
        """
        return classify_conjuncts(self.dialect, table, candidates, session_zone)

    def tables(self) -> list[tuple[str | None, str]]:
        """Every table the source can read, as (schema, name): what a Flight server publishes."""
        raise ConfigError(f"source {self.name!r}: a {type(self).__name__} cannot list its tables")

    def pruning(self, spec: "ScanSpec") -> "Pyramid | None":
        """What the scan skips before reading (lake tables: the pruning pyramid); None: nothing."""
        return None

    def default_partitions(self, table: TableSchema) -> int:
        if self.partitions:
            return self.partitions
        rows = table.row_estimate or 0
        return max(1, min(8, rows // 250_000))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.display_url!r})"


class SqlSource(Source):
    """A source that runs one remote SQL query per partition."""

    def tasks(self, spec: "ScanSpec") -> list[ReadTask]:
        """One query per partition; a pushed LIMIT is answered by a single stream."""
        count = 1 if spec.limit is not None else spec.partitions
        schema = spec.arrow_schema()
        return [ReadTask(spec.query(self, predicate), schema, index)
                for index, predicate in enumerate(self.split(spec.table, count))]

    def request_text(self, spec: "ScanSpec") -> str:
        return spec.query(self)

    #: (schema, table) of everything readable, for :meth:`tables`; sources without an
    #: information_schema override it
    catalog_query: ClassVar[str] = (
        "SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema NOT IN "
        "('information_schema', 'pg_catalog', 'mysql', 'performance_schema', 'sys') ORDER BY 1, 2"
    )

    def tables(self) -> list[tuple[str | None, str]]:
        task = ReadTask(self.catalog_query, pa.schema([("schema", pa.string()), ("name", pa.string())]))
        return [(schema, name) for batch in self.read(task)
                for schema, name in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist())]

    @abc.abstractmethod
    def split(self, table: TableSchema, count: int) -> list[str | None]:
        """Remote predicates (SQL text) that partition ``table`` into about ``count`` parts.

        Every row falls in exactly one part. ``[None]`` means a single unsplit read.
        """

    def select_expression(self, column_name: str, table: TableSchema) -> str:
        """How the reader selects a column (a cast for types Arrow cannot carry as-is)."""
        return self.dialect.render_identifier(column_name)
