"""Sluice: Spark SQL over the databases and files where data lives, with faithful pushdown.

``Federation`` and ``Level`` are imported on first use: Spark's Python workers import this
package to run the ``sluice`` data source and need none of the planner, and ``sluice sql`` on
a running server answers in about a second only without sqlglot's import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sluice.errors import BindError, ConfigError, PushdownError, QueryError, QuerySyntaxError, SluiceError, SourceError
from sluice.masking import guard_py4j_logs

# py4j logs every command and answer at DEBUG, passwords included: masked from the moment Sluice
# is imported, so a session built by hand (its catalogs' .password options) is covered too
guard_py4j_logs()

if TYPE_CHECKING:
    from sluice.federation import Federation
    from sluice.pushdown.levels import Level

__all__ = [
    "Federation",
    "Level",
    "SluiceError",
    "BindError",
    "ConfigError",
    "PushdownError",
    "QueryError",
    "QuerySyntaxError",
    "SourceError",
]


def __getattr__(name: str) -> object:
    if name == "Federation":
        from sluice.federation import Federation

        return Federation
    if name == "Level":
        from sluice.pushdown.levels import Level

        return Level
    raise AttributeError(f"module 'sluice' has no attribute {name!r}")
