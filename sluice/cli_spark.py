"""Spark for the command line: its output goes to a log file, never to the user's terminal.

The JVM prints a banner and warnings, and PySpark logs every failed query as ~25 KB of
JSON (its ``SQLQueryContextLogger``, with the Java stack trace) before Python gets the
error; the command's own one-line message would come last, under all of it. PySpark
starts the JVM as a child that inherits the process's stdout and stderr, so while it
starts, both descriptors point at a log file (the JVM, and the Python workers it later
starts, keep writing there), and PySpark's query-context loggers write to the same file.
Python's own output is unaffected.

The log is ``$SLUICE_SPARK_LOG`` if set (kept, appended to), else a temporary file removed
when the command exits.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import tempfile
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LOG_VARIABLE = "SLUICE_SPARK_LOG"
#: PySpark's loggers that write a failed query's context and stack trace to stderr
_PYSPARK_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")
_temporary_log: str | None = None


def log_path() -> str:
    """Where Spark's output goes: ``$SLUICE_SPARK_LOG``, else a temporary file removed at exit."""
    global _temporary_log
    path = os.environ.get(LOG_VARIABLE) or _temporary_log
    if path is None:
        handle, path = tempfile.mkstemp(prefix="sluice-spark-", suffix=".log")
        os.close(handle)
        atexit.register(_remove, path)
        _temporary_log = path  # one file per process
    return path


def quiet_pyspark_loggers(path: str) -> None:
    """PySpark's query-context loggers write to ``path`` instead of stderr (any session: the
    CLI's own, or one a caller hands it)."""
    from pyspark.logger import PySparkLogger

    for name in _PYSPARK_LOGGERS:
        logger = PySparkLogger.getLogger(name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.addHandler(logging.FileHandler(path, encoding="utf-8"))  # PySparkLogger keeps its JSON format


def quiet_session(app_name: str = "sluice") -> SparkSession:
    """A Spark session whose JVM output goes to the log file, not to stdout/stderr."""
    from sluice.spark.session import build_session

    path = log_path()
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    quiet_pyspark_loggers(path)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = (os.dup(1), os.dup(2))
    try:
        os.dup2(log, 1)
        os.dup2(log, 2)
        return build_session(app_name=app_name)
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, log):
            os.close(fd)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
