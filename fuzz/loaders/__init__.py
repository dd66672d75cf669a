"""One loader per source, by attach name (``pg``, ``lite``, ``my``, ``duck``, ``lake``)."""

from __future__ import annotations

from pathlib import Path

from fuzz.loaders.base import Loader
from fuzz.loaders.duckdb import DuckdbLoader
from fuzz.loaders.lake import LakeLoader
from fuzz.loaders.mysql import MysqlLoader
from fuzz.loaders.postgres import PostgresLoader
from fuzz.loaders.sqlite import SqliteLoader

#: every loader, in a fixed order (table generation draws text variants for all of them,
#: so a seed gives the same tables whichever sources run)
LOADERS: dict[str, type[Loader]] = {
    "pg": PostgresLoader,
    "lite": SqliteLoader,
    "my": MysqlLoader,
    "duck": DuckdbLoader,
    "lake": LakeLoader,
}

#: text variants per source, for :func:`fuzz.tables.generate`
TEXT_VARIANTS = {name: loader.text_variants for name, loader in LOADERS.items()}


def build(names: list[str], folder: Path) -> dict[str, Loader]:
    unknown = [n for n in names if n not in LOADERS]
    if unknown:
        raise ValueError(f"unknown sources {unknown}; known: {list(LOADERS)}")
    return {name: LOADERS[name](folder) for name in names}
