"""One hierarchy for every error Sluice raises.

Users catch :class:`SluiceError`; the subclasses say which stage failed, so a message
never has to guess. Every message is built from masked text (see :mod:`sluice.masking`):
no constructor here ever receives a password. :func:`spark_reason` reads the one line of
what went wrong out of an error Spark raised, for the CLI, the planner bridge and lake jobs
alike (it imports nothing, so none of them reaches up to another for it).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable


class SluiceError(Exception):
    """Base class: something Sluice could not do, with a message that names what."""


class ConfigError(SluiceError):
    """A connection string, catalog file or option is malformed or incomplete."""


class BindError(SluiceError):
    """The query names a source, table or column that does not exist."""


class TimeTravelError(BindError):
    """A time travel names a snapshot the lake table never had, or a source that keeps no history."""


class QuerySyntaxError(SluiceError):
    """The SQL text does not parse."""


class QueryError(SluiceError):
    """Spark rejected the query (an unknown function, a type error, ...)."""


class PushdownError(SluiceError):
    """A pushdown invariant was violated (a bug in Sluice, never a user mistake)."""


class SourceError(SluiceError):
    """A remote source failed: unreachable, refused credentials, died mid-read, ..."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"source {source!r}: {message}")
        self.source = source
        self.message = message

    def __reduce__(self) -> tuple[type[SourceError], tuple[str, str]]:
        """Pickled with its two arguments, so it crosses to the driver from the read process."""
        return type(self), (self.source, self.message)


def no_such_table(source: str, schema: str | None, table: str, names: Iterable[str]) -> BindError:
    """The error for a table ``source`` lacks: it names the schema asked about and the few
    names of that schema closest to ``table``, never a listing of the whole source (unbounded
    on a real server, and other schemas' and databases' names are not the asker's business)."""
    where = f"{schema}.{table}" if schema else table
    listed = sorted(set(names))
    by_key = {name.lower(): name for name in listed}
    closest = [by_key[key] for key in difflib.get_close_matches(table.lower(), list(by_key), n=3, cutoff=0.6)]
    scope = schema or "the source"
    if closest:
        hint = f"closest in {scope}: {', '.join(closest)}"
    elif listed:
        hint = f"none of the {len(listed)} table(s) in {scope} is close"
    else:
        hint = f"no schema {schema}, or it has no tables" if schema else "it has no tables"
    return BindError(f"source {source!r} has no table {where} ({hint})")


#: the last "SomeError: message" line of a Python traceback quoted inside a Spark error
_RAISED = re.compile(r"^(?:[A-Za-z_][\w]*\.)*([A-Za-z_]\w*(?:Error|Exception)): (.+)$", re.M)


#: Spark's error line inside a JVM stack trace: "[CONDITION] message" (``SQLSTATE`` ends it)
_CONDITION = re.compile(r"\[[A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)?\] [^\n]*")


def spark_reason(text: str) -> str:
    """What Spark's error says went wrong: the first line, or, when it quotes a Python
    traceback (a data source's reader failed), the exception at the end of it."""
    if "Traceback (most recent call last)" in text:
        raised = _RAISED.findall(text)
        if raised:
            name, message = raised[-1]
            return f"{name}: {message}"
    condition = _CONDITION.search(text)  # a JVM error quoted by py4j: Spark's own line (e.g. [DIVIDE_BY_ZERO] ...)
    if condition:
        return condition.group(0).strip()
    return text.strip().splitlines()[0] if text.strip() else "failed"
