"""The tables a server publishes, by Flight path: those of its sources that the allow-list names.

What is not on the allow-list (:mod:`sluice.serve.allowlist`) is answered exactly as a
table that does not exist, before any catalog query, so a client cannot tell the two apart.
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
from collections.abc import Iterator, Sequence

from sluice.errors import BindError, ConfigError
from sluice.flight.protocol import NotFound, RequestError
from sluice.serve.allowlist import AllowList
from sluice.sources.base import Source
from sluice.types import TableSchema


class PublishedTables:
    def __init__(self, sources: dict[str, Source], allow: AllowList | None = None, ttl_s: float = 30.0) -> None:
        """``allow``: what to publish; None or empty, each source's default namespace."""
        self.sources = {name.lower(): source for name, source in sources.items()}
        self.allow = allow or AllowList.defaults({name: s.default_schema for name, s in self.sources.items()})
        unknown = sorted(self.allow.sources() - set(self.sources))
        if unknown:
            raise ConfigError(
                f"the tables to publish name unknown source(s) {', '.join(unknown)} "
                f"(sources: {', '.join(sorted(self.sources))})"
            )
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
                if not self.allow.allows(name, schema, table, source.default_schema):
                    continue
                path = self.path_of(source, schema, table)
                if len(path) < len(prefix):
                    continue
                if all(
                    source.name_key(p) == source.name_key(w)
                    for p, w in zip(path[1 : len(prefix)], prefix[1:], strict=True)
                ):
                    yield path

    def resolve(self, path: Sequence[str]) -> tuple[Source, TableSchema]:
        """The source and described table at ``path``; :class:`NotFound` if it is not published
        (whether or not it exists)."""
        if not 2 <= len(path) <= 3:
            raise RequestError(f"table path {list(path)} must be [source, table] or [source, schema, table]")
        source = self.sources.get(path[0].lower())
        schema, table = (None, path[1]) if len(path) == 2 else (path[1], path[2])
        if source is None or not self.allow.allows(source.name, schema, table, source.default_schema):
            raise NotFound(f"no published table {'.'.join(path)}")
        key = (source.name, *source.table_key(schema, table))
        now = time.monotonic()
        with self._lock:
            cached = self._described.get(key)
        if cached is not None and now - cached[0] < self.ttl_s:
            return source, cached[1]
        try:
            described = source.describe(schema, table)
        except BindError:  # its message lists the source's tables, published or not
            raise NotFound(f"no published table {'.'.join(path)}") from None
        with self._lock:
            self._described[key] = (now, described)
        return source, described
