"""A scan as Spark executes it: what to read from where, serialisable to a Spark option.

The pushed conjuncts, ORDER BY, aggregates (grouping keys and functions) and join keys travel
as typed trees and keys, never as text: the source writes them in its own language when it
reads (:meth:`ScanSpec.where_sql`, :meth:`ScanSpec.order_sql`,
:meth:`~sluice.scan.aggregation.Aggregation.select_sql`,
:meth:`~sluice.scan.join.JoinRead.query`), with the function EXPLAIN uses
(:meth:`~sluice.dialects.base.Dialect.render`), so EXPLAIN shows what runs.

The spec carries no secret: the source URL is stored without its password, which
travels separately in an option Spark redacts (see :mod:`sluice.spark.datasource`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa

from sluice.dialects.base import Dialect
from sluice.pushdown.pushed import Pushed
from sluice.scan.aggregation import Aggregation
from sluice.scan.join import JoinRead
from sluice.scan.query import OrderKey, SqlReader, build_query, order_by
from sluice.types import TableSchema, table_from_dict, table_to_dict
from sluice.urls import parse_url


class Attached(Protocol):
    """What a spec takes from the attached source that will read it (:meth:`ScanSpec.for_source`):
    its name, the URL an executor opens it by, and its time limits. A protocol, not
    :class:`~sluice.sources.base.Source`, so this package stays below the sources."""

    @property
    def name(self) -> str: ...

    @property
    def portable_url(self) -> str: ...

    @property
    def statement_timeout_s(self) -> float: ...

    @property
    def connect_timeout_s(self) -> float | None: ...


def strip_password(url: str) -> tuple[str, str | None]:
    """Split ``url`` into (url without password, password as written); a URL that does not
    parse is a :class:`~sluice.urls.UrlError` that shows it masked."""
    parsed = parse_url(url)
    if parsed.password is None:
        return url, None
    return parsed.without_password(), parsed.raw_password


@dataclass(frozen=True)
class ScanSpec:
    source_name: str
    source_url: str  # never holds a password
    table: TableSchema
    columns: tuple[str, ...]
    #: the conjuncts the source evaluates, as the classifier's trees (the source renders them)
    where: tuple[Pushed, ...] = ()
    #: a pushed ORDER BY (with a pushed LIMIT), key by key
    order: tuple[OrderKey, ...] = ()
    limit: int | None = None
    partitions: int = 1
    statement_timeout_s: float = 600.0
    connect_timeout_s: float | None = None  # None: the URL's option or the default (sluice/timeouts.py)
    metrics_dir: str | None = None
    #: whether the source may read fewer partitions than ``partitions`` when it expects few rows
    #: (False when the user set the partitions)
    fewer_when_selective: bool = True
    #: Spark's default parallelism when the scan was planned (None: not known), which sizes a
    #: filtered read by the rows it returns (:func:`sluice.sources.base.read_partitions`)
    cores: int | None = None
    #: pushed aggregates: the scan reads their grouped answer (one query) instead of ``columns``
    aggregate: Aggregation | None = None
    #: a pushed join of ``table`` with another table of the source: the scan reads the joined
    #: query (one partition) and ``columns`` are Spark's names for the join's outputs
    join: JoinRead | None = None

    @classmethod
    def for_source(cls, source: Attached, table: TableSchema, columns: tuple[str, ...], **kwargs: Any) -> ScanSpec:
        url, _ = strip_password(source.portable_url)
        return cls(
            source.name,
            url,
            table,
            columns,
            statement_timeout_s=source.statement_timeout_s,
            connect_timeout_s=source.connect_timeout_s,
            **kwargs,
        )

    def arrow_schema(self) -> pa.Schema:
        if self.aggregate is not None:
            return pa.schema([pa.field(o.name, o.type.arrow()) for o in self.aggregate.outputs])
        if self.join is not None:
            return pa.schema([pa.field(name, kind.arrow()) for name, kind in self.join.fields(self.columns)])
        return pa.schema([pa.field(c.name, c.type.arrow()) for c in (self.table.column(n) for n in self.columns)])

    def spark_ddl(self) -> str:
        if self.aggregate is not None:
            return self.aggregate.spark_ddl()
        if self.join is not None:
            return ", ".join(f"`{name}` {kind}" for name, kind in self.join.fields(self.columns))
        return self.table.spark_ddl(self.columns)

    def where_sql(self, dialect: Dialect) -> list[str]:
        """The pushed conjuncts in ``dialect``'s SQL: the rendering the reader, EXPLAIN and the
        golden files share (:meth:`Dialect.render`)."""
        return [dialect.render(conjunct.sql_tree()) for conjunct in self.where]

    def order_sql(self, dialect: Dialect, qualify: bool = True) -> str | None:
        """The pushed ``ORDER BY`` in ``dialect``'s SQL (None: no order pushed), each key qualified
        by the table's name unless ``qualify`` is false (:func:`~sluice.scan.query.order_by`); over a
        pushed join, by the join's subqueries (:meth:`JoinRead.order_sql`)."""
        if self.join is not None:
            return self.join.order_sql(dialect, self.order) if self.order else None
        return order_by(dialect, self.table, self.order, qualify)

    def query(self, source: SqlReader, partition_predicate: str | None = None) -> str:
        if self.join is not None:  # one partition: the joined query is never split
            return self.join.query(source, self.columns, self.aggregate, self.order, self.limit)
        where = self.where_sql(source.dialect) + ([partition_predicate] if partition_predicate else [])
        table = (
            source.dialect.quote_table(self.table.schema, self.table.name)
            if self.table.query is None
            else f"({self.table.query}) AS sluice_query"  # a passthrough (sluice/planner/passthrough.py)
        )
        order = self.order_sql(source.dialect)
        if self.aggregate is not None:
            group_by = tuple(self.aggregate.group_by_sql(source.dialect))
            return build_query(self.aggregate.select_sql(source), table, where, order, self.limit, group_by)
        select = [source.select_expression(name, self.table) for name in self.columns]
        return build_query(select, table, where, order, self.limit)

    def to_json(self) -> str:
        data = {
            **self.__dict__,
            "table": table_to_dict(self.table),
            "columns": list(self.columns),
            "where": [conjunct.to_dict() for conjunct in self.where],
            "order": [key.__dict__ for key in self.order],
            "aggregate": self.aggregate.to_dict() if self.aggregate is not None else None,
            "join": self.join.to_dict() if self.join is not None else None,
        }
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> ScanSpec:
        data = json.loads(text)
        aggregate = Aggregation.from_dict(data["aggregate"]) if data.get("aggregate") is not None else None
        return cls(
            **{
                **data,
                "table": table_from_dict(data["table"]),
                "columns": tuple(data["columns"]),
                "where": tuple(Pushed.from_dict(conjunct) for conjunct in data["where"]),
                "order": tuple(OrderKey(**key) for key in data["order"]),
                "aggregate": aggregate,
                "join": JoinRead.from_dict(data["join"]) if data.get("join") is not None else None,
            }
        )
