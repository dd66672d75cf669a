"""Open the Iceberg catalog a Sluice URL names.

``iceberg+sqlite:///relative/catalog.db?warehouse=relative/warehouse`` (or four slashes
for absolute paths) is the embedded default: PyIceberg's SQL catalog in a SQLite file and
a local warehouse folder, so nothing needs a server. Without ``warehouse`` the warehouse
is the folder ``warehouse`` beside the catalog file. On a cluster the warehouse must be a
path every executor sees (a shared mount); the catalog file is only read on the driver.
``catalog=NAME`` selects one of several catalogs kept in one file (default ``sluice``):
tables belong to a catalog name, not to the name a source is attached under.
``create=true`` makes attaching start a new, empty lake when the catalog file does not
exist (without it a missing file is an error: a mistyped path must not become a new lake).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, quote, urlsplit

from sluice.errors import BindError, ConfigError, SourceError, no_such_table
from sluice.masking import mask_url

if TYPE_CHECKING:
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.table import Table

SCHEME = "iceberg+sqlite"
DEFAULT_CATALOG = "sluice"
#: URL option: attaching makes the catalog file and warehouse when missing (a new, empty lake)
CREATE = "create"


def wants_create(url: str) -> bool:
    """Whether ``url`` asks for a new lake where none exists (``create=true``); any other value is refused."""
    values = parse_qs(urlsplit(url).query).get(CREATE, [])
    if any(value.lower() not in ("true", "false") for value in values):
        raise ConfigError(f"lake URL option {CREATE}= takes true or false, not {values[-1]!r}")
    return bool(values) and values[-1].lower() == "true"


@dataclass(frozen=True)
class LakeLocation:
    """Where a lake lives: the catalog file and the warehouse folder (absolute paths)."""

    catalog_path: str
    warehouse: str
    #: the catalog's name inside the file (PyIceberg's SQL catalog keys every table by it),
    #: so it is part of where a table lives, not the name a source is attached under
    catalog: str = DEFAULT_CATALOG

    @classmethod
    def from_url(cls, url: str) -> LakeLocation:
        parts = urlsplit(url)
        if parts.scheme.lower() != SCHEME:
            raise ConfigError(f"lake URLs start with {SCHEME}://, not {mask_url(url)!r}")
        rest = url.split("://", 1)[1].split("?", 1)[0]
        if not rest.startswith("/") or len(rest) < 2:
            raise ConfigError(
                f"lake URLs look like {SCHEME}:///relative/catalog.db or {SCHEME}:////abs/catalog.db, "
                f"not {mask_url(url)!r}"
            )
        catalog_path = Path(rest[1:]).resolve()
        options = parse_qs(parts.query)
        unknown = sorted(set(options) - {"warehouse", "catalog", CREATE})
        if unknown:
            raise ConfigError(
                f"lake URL {mask_url(url)!r}: unknown option(s) {', '.join(unknown)} (known: warehouse, catalog, {CREATE})"
            )
        warehouse = (
            Path(options["warehouse"][0]).resolve() if "warehouse" in options else catalog_path.parent / "warehouse"
        )
        return cls(str(catalog_path), str(warehouse), options.get("catalog", [DEFAULT_CATALOG])[0])

    @property
    def url(self) -> str:
        """The URL :meth:`from_url` reads back as this location: the query's values quoted, as
        its parsing decodes them (a warehouse folder named ``a%41`` or ``a+b`` stays so)."""
        suffix = f"&catalog={quote(self.catalog, safe='')}" if self.catalog != DEFAULT_CATALOG else ""
        return f"{SCHEME}:///{self.catalog_path}?warehouse={quote(self.warehouse, safe='/')}{suffix}"


#: one catalog (a SQLAlchemy engine, a connection pool) per location and process, with the
#: identity (inode) of the file it was opened on: a catalog file deleted and made again
#: (the demo rebuilding its lake) must not be written through a pool on the old one
_OPEN: dict[LakeLocation, tuple[SqlCatalog, int | None]] = {}


def _inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None


_OPENING = threading.Lock()


def open_catalog(location: LakeLocation, create: bool = False, name: str = "lake") -> SqlCatalog:
    """The PyIceberg catalog; ``create`` makes the file and warehouse folder when missing.

    ``name`` is the source name errors mention; the catalog's own name is the location's.
    One thread at a time: two jobs opening a new lake at once would both create its tables.
    """
    with _OPENING:
        return _open_catalog(location, create, name)


def _open_catalog(location: LakeLocation, create: bool, name: str) -> SqlCatalog:
    from pyiceberg.catalog.sql import SqlCatalog

    cached = _OPEN.pop(location, None)
    if cached is not None:
        if cached[1] is not None and cached[1] == _inode(location.catalog_path):
            _OPEN[location] = cached
            return cached[0]
        cached[0].engine.dispose()
    if os.path.isdir(location.catalog_path):
        raise SourceError(name, f"Iceberg catalog file {location.catalog_path} is a directory, not a catalog file")
    if not create and not os.path.isfile(location.catalog_path):
        raise SourceError(
            name,
            f"Iceberg catalog file {location.catalog_path} does not exist "
            f"(add ?{CREATE}=true to the lake URL to start a new, empty lake there)",
        )
    if create:
        for folder, what in ((os.path.dirname(location.catalog_path), "catalog"), (location.warehouse, "warehouse")):
            try:
                os.makedirs(folder, exist_ok=True)
            except OSError as error:  # a file in the way, no permission, a read-only file system
                raise SourceError(
                    name, f"cannot make the lake's {what} folder {folder}: {error.strerror or error}"
                ) from None
    try:
        catalog = SqlCatalog(
            location.catalog,
            # SQLAlchemy percent-decodes the database path of its URL: a folder named "%41" must stay one
            uri=f"sqlite:///{quote(location.catalog_path)}",
            warehouse=f"file://{location.warehouse}",
        )
    except Exception as error:  # noqa: BLE001 - SQLAlchemy's errors: a file that is not a catalog, a locked file
        raise SourceError(name, f"cannot open Iceberg catalog {location.catalog_path}: {error}") from None
    _OPEN[location] = (catalog, _inode(location.catalog_path))
    return catalog


def forget_catalog(location: LakeLocation) -> None:
    """Close this process's catalog on ``location`` (an attach that failed removes what it made)."""
    with _OPENING:
        cached = _OPEN.pop(location, None)
    if cached is not None:
        cached[0].engine.dispose()


def load_table(catalog: SqlCatalog, namespace: str | None, table: str, name: str = "lake") -> Table:
    """The table ``namespace.table``; a missing one is a :class:`BindError` naming what exists."""
    from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

    if not namespace:
        raise BindError(f"source {name!r}: lake tables are named {name}.<namespace>.<table>, not {name}.{table}")
    try:
        return catalog.load_table((namespace, table))
    except NoSuchTableError:
        try:
            names = [identifier[-1] for identifier in catalog.list_tables(namespace)]
        except NoSuchNamespaceError:
            names = []
        raise no_such_table(name, namespace, table, names) from None


#: the tables the read path loaded, by where each lives, with the metadata file it was parsed
#: from: planning one query asks for its table several times, and a metadata file never
#: changes, so a table is parsed again only when the catalog points at another file (a
#: commit, a schema change, a drop). Read only: writers load their own (they commit through it).
_READ_TABLES: dict[tuple[LakeLocation, str, str], Table] = {}
_READ_TABLES_LIMIT = 64
_READING = threading.Lock()


def read_table(location: LakeLocation, namespace: str | None, table: str, name: str = "lake") -> Table:
    """The table as the catalog points at it now, for reading; parsed once per metadata file."""
    catalog = open_catalog(location, name=name)
    key = (location, namespace or "", table)
    with _READING:
        known = _READ_TABLES.get(key)
    if known is not None and known.metadata_location == _metadata_location(catalog, key[1], table):
        return known
    loaded = load_table(catalog, namespace, table, name)
    with _READING:
        if key not in _READ_TABLES and len(_READ_TABLES) >= _READ_TABLES_LIMIT:
            _READ_TABLES.pop(next(iter(_READ_TABLES)))
        _READ_TABLES[key] = loaded
    return loaded


def _metadata_location(catalog: SqlCatalog, namespace: str, table: str) -> str | None:
    """Where the catalog's row for ``namespace.table`` points (None: no such table): one
    indexed SQLite read, where loading the table parses its whole metadata file."""
    from pyiceberg.catalog.sql import IcebergTables
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    with Session(catalog.engine) as session:
        return session.scalar(
            select(IcebergTables.metadata_location).where(
                IcebergTables.catalog_name == catalog.name,
                IcebergTables.table_namespace == namespace,
                IcebergTables.table_name == table,
            )
        )
