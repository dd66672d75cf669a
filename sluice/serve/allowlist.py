"""What ``sluice serve`` publishes: the namespaces and tables the catalog or the command names.

A login usually sees far more than one wants to publish (every database of a MySQL
server, every schema of a PostgreSQL database), so the server publishes only what is
named, and answers everything else as not found: it is not listed, GetFlightInfo and
GetSchema refuse it, and a ticket for it (even one signed with the server's key) reads
nothing.

Entries are dotted names, matched case-insensitively (as Spark resolves names):

* a namespace: ``source.schema`` (``pg.public``, ``my.shop``, ``lite.main``): every table in it;
* a table: ``source.schema.table``, or ``source.table`` for the source's default namespace
  (``public`` in PostgreSQL, the URL's database in MySQL, ``main`` in SQLite and DuckDB).

With no entry at all, each source publishes its default namespace only (the database
its URL names; a source without one, such as a lake, publishes nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sluice.errors import ConfigError

Table = tuple[str, "str | None", str]


@dataclass(frozen=True)
class AllowList:
    """Namespaces as (source, schema) and tables as (source, schema, table), lowercased;
    a table's schema is None when the entry named the source's default namespace."""

    namespaces: frozenset[tuple[str, str]] = frozenset()
    tables: frozenset[Table] = frozenset()

    @classmethod
    def parse(cls, namespaces: Iterable[str], tables: Iterable[str], where: str) -> AllowList:
        """Read the entries; ``where`` says where they came from (a file, an option) in errors."""
        spaces = frozenset(
            (source, ".".join(rest)) for source, *rest in (_parts(n, 2, "namespace", where) for n in namespaces)
        )
        named = frozenset(_table(_parts(t, 2, "table", where)) for t in tables)
        return cls(spaces, named)

    @classmethod
    def defaults(cls, default_schemas: Mapping[str, str | None]) -> AllowList:
        """Each source's default namespace (source name -> its default schema, None: none)."""
        return cls(frozenset((s.lower(), d.lower()) for s, d in default_schemas.items() if d))

    def __bool__(self) -> bool:
        return bool(self.namespaces or self.tables)

    def sources(self) -> set[str]:
        return {s for s, _ in self.namespaces} | {s for s, _, _ in self.tables}

    def allows(self, source: str, schema: str | None, table: str, default_schema: str | None) -> bool:
        """Whether ``source``'s ``schema.table`` (None: the default namespace) is published."""
        source, table = source.lower(), table.lower()
        resolved = (schema or default_schema or "").lower() or None
        if resolved is not None and (source, resolved) in self.namespaces:
            return True
        default = (default_schema or "").lower() or None
        return (source, resolved, table) in self.tables or (
            (source, None, table) in self.tables and resolved == default
        )

    def entries(self) -> list[str]:
        """The entries as the user writes them, for the server's start-up line."""
        tables = [".".join(p for p in (s, n, t) if p) for s, n, t in self.tables]
        return sorted([f"{s}.{n}" for s, n in self.namespaces] + tables)


def _parts(entry: object, least: int, kind: str, where: str) -> list[str]:
    if not isinstance(entry, str):
        raise ConfigError(f"{where}: a {kind} to publish must be a dotted name, not a {type(entry).__name__}")
    parts = [p.strip().lower() for p in entry.split(".")]
    if len(parts) < least or not all(parts) or not parts[0].isidentifier():
        shape = "source.schema" if kind == "namespace" else "source.table or source.schema.table"
        raise ConfigError(f"{where}: {kind} {entry[:200]!r} must look like {shape}")
    return parts


def _table(parts: list[str]) -> Table:
    if len(parts) == 2:
        return parts[0], None, parts[1]
    return parts[0], ".".join(parts[1:-1]), parts[-1]
