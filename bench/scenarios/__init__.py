"""The benchmark scenarios, in the order ``python -m bench`` runs and reports them.

Each module has ``KEY``, ``TITLE`` and ``run(ctx: BenchContext) -> dict`` (the record of
:func:`bench.context.scenario_result`). A new scenario is a new module listed here (a key's ``-`` is the module name's ``_``).
"""

from __future__ import annotations

import importlib
from types import ModuleType

ORDER = (
    "sql",
    "lake",
    "flight",
    "planning",
    "catalog",
    "aggregates",
    "joins",
    "ingest",
    "writes",
    "lake-dml",
    "connect",
)


def load(keys: list[str] | None = None) -> list[ModuleType]:
    """The scenario modules for ``keys`` (default: all), in ``ORDER``."""
    wanted = keys or list(ORDER)
    unknown = sorted(set(wanted) - set(ORDER))
    if unknown:
        raise SystemExit(f"unknown scenario(s) {', '.join(unknown)}; known: {', '.join(ORDER)}")
    return [importlib.import_module(f"bench.scenarios.{key.replace('-', '_')}") for key in ORDER if key in wanted]
