"""Passthrough: the source's own SQL, run read-only, its result a DataFrame.

As Trino's ``system.query`` table function and Spark JDBC's ``query`` option do, a passthrough
hands the source a query Sluice does not translate (``fed.query(source, sql)``, or
``spark.read.format("sluice").option("url", ...).option("query", sql).load()``). Like Spark's
JDBC reader it reads ``SELECT ... FROM (sql) AS sluice_query``: one SELECT, one partition,
in the source's read-only session (PostgreSQL ``default_transaction_read_only``, MariaDB
``SET SESSION TRANSACTION READ ONLY``, SQLite opened ``mode=ro``, DuckDB ``read_only``), so a
statement that writes fails with the source's own error and changes nothing.

Its result is typed as the source types a table's columns (``Source.describe_query``, the
mapping ``describe`` uses), and Spark's work over it stays Spark's: every filter is
UNSUPPORTED, no aggregate, LIMIT, top-N, join or runtime filter is pushed into it, so what
runs is the SQL as written. The scan's handle is a :class:`~sluice.types.TableSchema` whose
``query`` is the SQL; the planner's rules read it from there.
"""

from __future__ import annotations

from dataclasses import replace

from sluice.errors import ConfigError, SourceError
from sluice.protocol.scan import PlanRequest
from sluice.sources.base import Source
from sluice.types import TableSchema

#: the name a passthrough's result goes by in EXPLAIN (``pg.(passthrough query)``)
NAME = "(passthrough query)"
FILTER_REASON = "a passthrough query's result: Spark filters it"
AGGREGATE_NOTE = "a passthrough query's result: Spark aggregates it"
LIMIT_NOTE = "a passthrough query's result: Spark applies it"
JOIN_NOTE = "a passthrough query's result: Spark joins it"


def describe(source: Source, sql: str) -> TableSchema:
    """The result of ``sql`` on ``source`` as a table Spark reads (no row is read here)."""
    text = sql.strip().rstrip(";").strip()
    if not text:
        raise ConfigError(f"source {source.name!r}: the passthrough query is empty")
    try:
        columns = source.describe_query(text)
    except SourceError as error:  # the source's message, first line only (PostgreSQL adds LINE 1: ... ^)
        first = error.message.strip().splitlines()[0] if error.message.strip() else error.message
        raise SourceError(source.name, f"passthrough {first}") from None
    return TableSchema(source.name, None, NAME, columns, query=text)


def bare(request: PlanRequest) -> PlanRequest:
    """A plan request over a passthrough without what Spark offered to push: its LIMIT, order
    and runtime filters stay with Spark (its filters and aggregates were refused already)."""
    return replace(request, limit=None, order=[], runtime=[])
