"""Sluice's refusals and failures, raised in the JVM, reach Python as Sluice's own errors.

A refusal the planner makes inside Spark (a write to a read-only catalog, a time travel a
source cannot do) travels to the JVM as ``[SLUICE] <Kind>: message``; a source that fails
mid-read on an executor raises ``sluice.errors.<Kind>`` in a Python worker, which Spark
quotes in a job failure. PySpark knows neither: it raises ``Py4JJavaError`` with the whole
Java stack. :func:`install` wraps PySpark's conversion of JVM exceptions (the one every
py4j call of a session goes through) so that those arrive as the :class:`SluiceError`
subclass they were (``BindError``, ``TimeTravelError``, ``SourceError``, ...), whose text is
the one-line message; every other exception is converted as PySpark converts it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sluice import errors
from sluice.errors import BindError, QueryError, QuerySyntaxError, SluiceError
from sluice.masking import mask_text

#: "[SLUICE] SourceError: source 'pg': ..." -> the error class and its message
_SLUICE_MESSAGE = re.compile(r"\[SLUICE\] (?:(?P<kind>[A-Za-z]+Error): )?(?P<message>.*)", re.S)
#: the last line of a Python worker's traceback when a Sluice error ended it
#: (module-qualified, so a user's own ``QueryError`` raised in a UDF is left alone)
_WORKER_RAISED = re.compile(r"^sluice\.errors\.(?P<kind>[A-Za-z]+Error): (?P<message>.*)$", re.M)
#: Spark's error classes of a name the query got wrong (a BindError, not a QueryError)
_NOT_FOUND = ("TABLE_OR_VIEW_NOT_FOUND", "UNRESOLVED_COLUMN", "SCHEMA_NOT_FOUND", "REQUIRES_SINGLE_PART_NAMESPACE")


def sluice_error(text: str) -> SluiceError | None:
    """The Sluice error inside a JVM exception's text (with its causes), as the class it was."""
    match = _SLUICE_MESSAGE.search(text)
    if match is not None:
        return _typed(match["kind"], match["message"].split("\n\tat ", 1)[0].strip())
    raised = [(kind, message) for kind, message in _WORKER_RAISED.findall(text) if _sluice_class(kind) is not None]
    if raised:
        kind, message = raised[-1]
        return _typed(kind, message.strip())
    return None


def _sluice_class(kind: str | None) -> type[SluiceError] | None:
    """The class ``sluice.errors`` names ``kind``, if it is one of Sluice's errors."""
    error_class = getattr(errors, kind or "", None)
    return error_class if isinstance(error_class, type) and issubclass(error_class, SluiceError) else None


def _typed(kind: str | None, message: str) -> SluiceError:
    message = mask_text(message)
    error_class = _sluice_class(kind)
    if error_class is not None and error_class is not errors.SourceError:
        return error_class(message)
    source = re.match(r"source '([^']*)': (.*)", message, re.S)
    if source:
        return errors.SourceError(source[1], source[2])
    return SluiceError(message)


def install() -> None:
    """Convert Sluice's errors in every PySpark call of this process (idempotent)."""
    from pyspark.errors.exceptions import captured

    if getattr(captured.convert_exception, "sluice", False):
        return
    original = captured.convert_exception

    def convert(java_exception: Any) -> Any:
        from pyspark import SparkContext

        jvm = SparkContext._jvm
        text = jvm.org.apache.spark.util.Utils.exceptionString(java_exception) if jvm is not None else ""
        converted = sluice_error(text)
        # PySpark raises whatever this returns, unless it is its UnknownException (then the Py4JJavaError)
        return converted if converted is not None else original(java_exception)

    convert.sluice = True  # type: ignore[attr-defined]  # marks the wrapper: install once
    captured.convert_exception = convert  # type: ignore[assignment]  # returns a SluiceError too: PySpark raises it as is


@contextmanager
def translated_errors() -> Iterator[None]:
    """Spark's errors about the query, and the planner's, as Sluice's error types.

    The same for a classic session (py4j) and a Spark Connect one: both raise subclasses of
    PySpark's base exceptions (imported here, when a query runs: ``sluice sql`` on a server
    loads no more of PySpark than it needs)."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors.exceptions.base import AnalysisException, ParseException, PySparkException

    try:
        yield
    except ParseException as error:
        raise QuerySyntaxError(f"cannot parse the query: {_first_part(error)}") from None
    except AnalysisException as error:
        sluice = sluice_error(str(error))
        if sluice is not None:
            raise sluice from None
        condition = (error.getCondition() or "").split(".", 1)[0]
        kind = BindError if condition in _NOT_FOUND else QueryError
        raise kind(f"Spark rejected the query: {_first_part(error)}") from None
    except (PySparkException, Py4JJavaError) as error:
        sluice = sluice_error(str(error))
        if sluice is not None:
            raise sluice from None
        raise


def _first_part(error: Exception) -> str:
    """Spark's message up to its SQLSTATE (the search-path advice and the plan after it are noise here)."""
    text = str(error).split("\n== SQL", 1)[0]
    state = re.search(r"SQLSTATE: \w+", text)
    return mask_text((text[: state.end()] if state else text).strip())
