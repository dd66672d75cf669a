"""Sources: one module per kind of system, registered by URL scheme."""

from __future__ import annotations

from typing import Any

from sluice.errors import ConfigError
from sluice.scan.spec import ScanSpec
from sluice.sources.base import Source
from sluice.sources.duckdb import DuckdbSource
from sluice.sources.flight import FlightSource
from sluice.sources.iceberg import IcebergSource
from sluice.sources.mysql import MysqlSource
from sluice.sources.postgres import PostgresSource
from sluice.sources.sqlite import SqliteSource
from sluice.urls import parse_source_url

#: URL scheme -> Source class. A new kind of source is a new module and one line here.
SCHEMES: dict[str, type[Source]] = {
    "postgresql": PostgresSource,
    "postgres": PostgresSource,
    "sqlite": SqliteSource,
    "duckdb": DuckdbSource,
    "mysql": MysqlSource,
    "mariadb": MysqlSource,
    "iceberg+sqlite": IcebergSource,
    "grpc": FlightSource,
    "grpc+tcp": FlightSource,
    "grpc+tls": FlightSource,
}


def open_source(name: str, url: str, password: str | None = None, **options: Any) -> Source:
    """Build the source for ``url`` (nothing is contacted yet: see :meth:`Source.check`)."""
    parsed = parse_source_url(name, url)
    if parsed.scheme not in SCHEMES:
        known = ", ".join(sorted(SCHEMES))
        raise ConfigError(
            f"source {name!r}: unknown URL scheme {parsed.scheme!r} in {parsed.masked()} (known: {known})"
        )
    return SCHEMES[parsed.scheme](name, url, password=password, **options)


def open_scan_source(spec: ScanSpec, password: str | None) -> Source:
    """The source ``spec`` reads, built where the scan runs (a Spark worker): the spec carries the
    URL without its password, which travels apart (sluice/spark/datasource.py)."""
    return open_source(
        spec.source_name,
        spec.source_url,
        password=password,
        statement_timeout_s=spec.statement_timeout_s,
        connect_timeout_s=spec.connect_timeout_s,
    )
