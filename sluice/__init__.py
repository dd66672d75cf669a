"""Sluice: Spark SQL over the databases and files where data lives, with faithful pushdown."""

from sluice.errors import BindError, ConfigError, PushdownError, QueryError, QuerySyntaxError, SluiceError, SourceError
from sluice.federation import Federation
from sluice.pushdown.levels import Level

__all__ = ["Federation", "Level", "SluiceError", "BindError", "ConfigError", "PushdownError", "QueryError", "QuerySyntaxError", "SourceError"]
