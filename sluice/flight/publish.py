"""The tables a server publishes: every table of every attached source, by Flight path.

A table's path is ``[source, table]`` when it lives in the source's default schema (or the
source has none), else ``[source, schema, table]``. Source names resolve case-insensitively
(as Spark resolves them); schema and table names the way their source matches them
(:meth:`~sluice.sources.base.Source.name_key`: PostgreSQL's ``"Cs"`` and ``cs`` are two tables). Any :class:`~sluice.sources.base.Source` plugs in: the server needs
only :meth:`~sluice.sources.base.Source.tables`, ``describe``, ``classify``, ``tasks`` and
``read``. Descriptions are cached briefly (the server answers many calls per query) and
refreshed after ``ttl_s`` so a changed table is seen.
"""

from __future__ import annotations

import threading
import time
from typing import Iterator, Sequence

from sluice.errors import BindError, ConfigError
from sluice.flight.protocol import RequestError
from sluice.sources.base import Source
from sluice.types import TableSchema


class PublishedTables:
    def __init__(self, sources: dict[str, Source], ttl_s: float = 30.0) -> None:
        self.sources = {name.lower(): source for name, source in sources.items()}
        self.ttl_s = ttl_s
        self._described: dict[tuple[str, str, str], tuple[float, TableSchema]] = {}
        self._lock = threading.Lock()

    def path_of(self, source: Source, schema: str | None, table: str) -> tuple[str, ...]:
        if schema is None or source.name_key(source.default_schema or "") == source.name_key(schema):
            return (source.name, table)
        return (source.name, schema, table)

    def paths(self, prefix: Sequence[str] = ()) -> Iterator[tuple[str, ...]]:
        """Every published path (under ``prefix``: a source name, then a schema)."""
        wanted = [p.lower() for p in prefix]
        for name, source in sorted(self.sources.items()):
            if wanted and wanted[0] != name:
                continue
            try:
                listed = source.tables()
            except ConfigError:  # a kind of source that cannot list: reachable by path only
                continue
            for schema, table in listed:
                path = self.path_of(source, schema, table)
                if len(path) < len(prefix):
                    continue
                if all(source.name_key(p) == source.name_key(w) for p, w in zip(path[1:len(prefix)], prefix[1:])):
                    yield path

    def resolve(self, path: Sequence[str]) -> tuple[Source, TableSchema]:
        """The source and described table at ``path``, or a :class:`RequestError` naming what exists."""
        if not 2 <= len(path) <= 3:
            raise RequestError(f"table path {list(path)} must be [source, table] or [source, schema, table]")
        source = self.sources.get(path[0].lower())
        if source is None:
            raise RequestError(f"unknown source {path[0]!r} in table path {list(path)} (published: {', '.join(sorted(self.sources))})")
        schema, table = (None, path[1]) if len(path) == 2 else (path[1], path[2])
        key = (source.name, *source.table_key(schema, table))
        now = time.monotonic()
        with self._lock:
            cached = self._described.get(key)
        if cached is not None and now - cached[0] < self.ttl_s:
            return source, cached[1]
        try:
            described = source.describe(schema, table)
        except BindError as error:
            raise RequestError(f"unknown table {list(path)}: {error}") from None
        with self._lock:
            self._described[key] = (now, described)
        return source, described
