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
from typing import Any

from sluice import errors
from sluice.errors import SluiceError
from sluice.masking import mask_text

#: "[SLUICE] SourceError: source 'pg': ..." -> the error class and its message
_SLUICE_MESSAGE = re.compile(r"\[SLUICE\] (?:(?P<kind>[A-Za-z]+Error): )?(?P<message>.*)", re.S)
#: the last line of a Python worker's traceback when a Sluice error ended it
#: (module-qualified, so a user's own ``QueryError`` raised in a UDF is left alone)
_WORKER_RAISED = re.compile(r"^sluice\.errors\.(?P<kind>[A-Za-z]+Error): (?P<message>.*)$", re.M)


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
