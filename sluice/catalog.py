"""Named sources in a TOML catalog file, passwords in environment variables.

A catalog keeps connection strings in one reviewable file instead of shell history,
and keeps secrets out of that file: ``password_env`` names the variable to read at
attach time. Every message names the file and the problem and shows URLs masked,
because a catalog may still hold a literal password in a URL.

.. code-block:: toml

    [sources.pg]
    url = "postgresql://root@127.0.0.1:5432/test"
    password_env = "SLUICE_PG_PASSWORD"   # optional
    partitions = 4                          # optional
    statement_timeout_s = 600               # optional
    connect_timeout_s = 10                  # optional
    writable = false                        # optional: true lets Sluice write it (docs/writes.md)
    [sources.lite]
    url = "sqlite:///demo-data/crm.db"      # relative to the working directory, as in Federation.attach
    [serve]                                 # optional: what `sluice serve` publishes
    namespaces = ["pg.public"]
    tables = ["lite.customers"]

Loading parses and validates only (no environment, no connection), so a tool can
check a catalog before starting Spark; :func:`attach_sources` resolves every password
before attaching anything, so a missing variable leaves nothing half-attached.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from sluice.errors import ConfigError
from sluice.masking import mask_url
from sluice.serve.allowlist import AllowList
from sluice.urls import UrlError, parse_url

if TYPE_CHECKING:
    from sluice.federation import Federation
    from sluice.sources.base import Source

DEFAULT_STATEMENT_TIMEOUT_S = 600.0
_KEYS = ("url", "password_env", "partitions", "statement_timeout_s", "connect_timeout_s", "writable")
_SERVE_KEYS = ("namespaces", "tables")


@dataclass(frozen=True)
class SourceConfig:
    """One source as the catalog (or a ``--source NAME=URL`` option) describes it."""

    name: str
    url: str
    password_env: str | None = None
    partitions: int | None = None
    statement_timeout_s: float = DEFAULT_STATEMENT_TIMEOUT_S
    connect_timeout_s: float | None = None  # None: the URL's option, else the default (sluice/timeouts.py)
    writable: bool = False  # whether Sluice writes it (sluice/write)

    def password(self) -> str | None:
        """The password from ``password_env``; the error names the variable, never a value."""
        if self.password_env is None:
            return None
        if self.password_env not in os.environ:
            raise ConfigError(
                f"source {self.name!r}: environment variable {self.password_env} (named by password_env) is not set"
            )
        return os.environ[self.password_env]

    def __repr__(self) -> str:  # the URL may hold a literal password
        return (
            f"SourceConfig(name={self.name!r}, url={mask_url(self.url)!r}, password_env={self.password_env!r}, "
            f"partitions={self.partitions!r}, statement_timeout_s={self.statement_timeout_s!r}, "
            f"connect_timeout_s={self.connect_timeout_s!r}, writable={self.writable!r})"
        )


@dataclass(frozen=True)
class Catalog:
    """A catalog file's sources and what ``sluice serve`` publishes of them (empty: not said)."""

    sources: dict[str, SourceConfig]
    publish: AllowList


def load_catalog(path: str | os.PathLike[str]) -> dict[str, SourceConfig]:
    """Parse and validate the catalog at ``path``: source name -> :class:`SourceConfig`."""
    return read_catalog(path).sources


def read_catalog(path: str | os.PathLike[str]) -> Catalog:
    """Parse and validate the catalog at ``path``, its ``[serve]`` table included."""
    where = f"catalog {os.fspath(path)}"
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{where}: file not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{where}: cannot read: {getattr(error, 'strerror', None) or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{where}: TOML syntax error: {error}") from None
    except RecursionError:  # tomllib recurses per nesting level of arrays and inline tables
        raise ConfigError(f"{where}: arrays or inline tables nested too deeply") from None
    except ValueError:  # an integer of more digits than Python converts (4,300)
        raise ConfigError(f"{where}: a number too long to read") from None
    unknown = sorted(set(data) - {"sources", "serve"})
    if unknown:
        raise ConfigError(
            f"{where}: unknown top-level key(s) {', '.join(unknown)} (expected [sources.NAME] tables "
            "and an optional [serve] table)"
        )
    sources = data.get("sources")
    if not isinstance(sources, dict) or not sources:
        raise ConfigError(f"{where}: no sources defined (expected [sources.NAME] tables)")
    configs: dict[str, SourceConfig] = {}
    for name, table in sources.items():
        config = _source(where, name, table)
        clash = next((other for other in configs if other.lower() == name.lower()), None)
        if clash is not None:
            raise ConfigError(
                f"{where}: sources {clash!r} and {name!r} differ only in case (names are case-insensitive)"
            )
        configs[name] = config
    publish = _serve(where, data.get("serve", {}))
    unknown_sources = sorted(publish.sources() - {name.lower() for name in configs})
    if unknown_sources:
        raise ConfigError(f"{where}: [serve] names unknown source(s) {', '.join(unknown_sources)}")
    return Catalog(configs, publish)


def _serve(where: str, table: Any) -> AllowList:
    """The ``[serve]`` table: ``namespaces`` and ``tables`` lists of dotted names."""
    where = f"{where}: [serve]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table with namespaces and tables lists")
    unknown = sorted(set(table) - set(_SERVE_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(_SERVE_KEYS)}")
    lists = {key: table.get(key, []) for key in _SERVE_KEYS}
    for key, value in lists.items():
        if not isinstance(value, list):
            raise ConfigError(f"{where}: {key} must be a list of dotted names")
    return AllowList.parse(lists["namespaces"], lists["tables"], where)


def _source(where: str, name: str, table: Any) -> SourceConfig:
    """Validate one ``[sources.NAME]`` table; messages never echo a value except masked URLs."""
    where = f"{where}: source {name!r}"
    if not name.isidentifier():
        raise ConfigError(f"{where}: a source name must be a SQL identifier (letters, digits, _)")
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table [sources.{name}], not a value")
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        hint = (
            " (put passwords in an environment variable named by password_env)"
            if any("pass" in key.lower() for key in unknown)
            else ""
        )
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(_KEYS)}{hint}")
    url = table.get("url")
    if url is None:
        raise ConfigError(f"{where}: missing url")
    try:
        parsed = parse_url(url)  # its messages show the URL masked (or not at all)
    except UrlError as error:
        raise ConfigError(f"{where}: url: {error}") from None
    password_env = table.get("password_env")
    if password_env is not None:
        if not isinstance(password_env, str) or not password_env:
            raise ConfigError(f"{where}: password_env must be the name of an environment variable")
        if parsed.password is not None:
            raise ConfigError(f"{where}: both password_env and a password in the url ({mask_url(url)}); keep one")
    partitions = table.get("partitions")
    if partitions is not None and (type(partitions) is not int or partitions < 1):
        raise ConfigError(f"{where}: partitions must be a positive integer")
    timeout = table.get("statement_timeout_s", DEFAULT_STATEMENT_TIMEOUT_S)
    if type(timeout) not in (int, float) or not 0 < timeout < math.inf:
        raise ConfigError(f"{where}: statement_timeout_s must be a positive number of seconds")
    connect = table.get("connect_timeout_s")
    if connect is not None and (type(connect) not in (int, float) or not 0 < connect < math.inf):
        raise ConfigError(f"{where}: connect_timeout_s must be a positive number of seconds")
    writable = table.get("writable", False)
    if type(writable) is not bool:
        raise ConfigError(f"{where}: writable must be true or false")
    return SourceConfig(
        name, url, password_env, partitions, float(timeout), None if connect is None else float(connect), writable
    )


def attach_sources(fed: Federation, configs: Iterable[SourceConfig]) -> None:
    """Attach ``configs`` to ``fed``; every password is resolved before the first attach."""
    resolved = [(config, config.password()) for config in configs]
    for config, password in resolved:
        fed.attach(
            config.name,
            config.url,
            password=password,
            partitions=config.partitions,
            statement_timeout_s=config.statement_timeout_s,
            connect_timeout_s=config.connect_timeout_s,
            writable=config.writable,
        )


def open_sources(configs: Iterable[SourceConfig]) -> dict[str, Source]:
    """Open and check every source (name -> source); every password is resolved first, so a
    bad URL, a missing variable or an unreachable server fails before Spark starts or a
    server listens."""
    from sluice.sources import open_source

    resolved = [(config, config.password()) for config in configs]
    sources = {}
    for config, password in resolved:
        source = open_source(
            config.name.lower(),
            config.url,
            password=password,
            partitions=config.partitions,
            statement_timeout_s=config.statement_timeout_s,
            connect_timeout_s=config.connect_timeout_s,
        )
        source.check()
        sources[source.name] = source
    return sources


def attach_catalog(fed: Federation, path: str | os.PathLike[str]) -> dict[str, SourceConfig]:
    """Load the catalog at ``path`` and attach every source in it; returns what was attached."""
    configs = load_catalog(path)
    attach_sources(fed, configs.values())
    return configs
