"""The Spark session Sluice runs on: the caller's, or a local one built with what we need."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping

from pyspark.sql import SparkSession

from sluice.errors import ConfigError
from sluice.scan.spec import strip_password
from sluice.spark.jvm import ensure_jar

_log = logging.getLogger(__name__)
#: the Python of a driver's planner process and of the reader's workers (io.sluice.spark.ProcessPlanner)
PYTHON_CONF = "spark.sluice.python"
_checked_applications: set[str] = set()

#: settings of the sessions Sluice builds. Spark's own readers and cache are not NaN-safe; a
#: caller's session is left as it is (a warning names what differs): Sluice's reads do not go
#: through either, only the caller's own DataFrames do
SAFE_CONF = {
    # Spark's own Parquet reader is not NaN-safe with filter pushdown (README.md, Spark settings).
    "spark.sql.parquet.filterPushdown": "false",
    # Nor is its in-memory cache: batch min/max leave NaN out, so `f = NaN` over a cached
    # DataFrame prunes every batch and returns no rows (seen in Spark 4.3; see tests).
    "spark.sql.inMemoryColumnarStorage.partitionPruning": "false",
}
#: optimisations Sluice turns on in the sessions it builds (never in a caller's: docs/pushdown.md, Joins)
PUSHDOWN_CONF = {
    # Spark offers a join of two tables of one source to the source only with this (off by default)
    "spark.sql.optimizer.datasourceV2JoinPushdown": "true",
}


def session_conf(catalogs: Mapping[str, str] | None = None) -> dict[str, str]:
    """The settings a Spark session needs for Sluice, as ``--conf`` pairs (``spark-sql``,
    ``spark-submit``, a Connect or Thrift server) or for :func:`configure`.

    The jar on the driver's and executors' class paths (executors deserialise its reader
    factories), :data:`SAFE_CONF`, :data:`PUSHDOWN_CONF`, and ``spark.sluice.python``: this
    Python runs the planner process of a driver without Python and the reader's workers.
    ``catalogs`` maps catalog names to source URLs (:func:`catalog_conf`).
    """
    jar = str(ensure_jar())
    conf = {
        "spark.driver.extraClassPath": jar,  # the catalog layer (sluice/spark/jvm.py)
        "spark.executor.extraClassPath": jar,
        PYTHON_CONF: sys.executable,
        **SAFE_CONF,
        **PUSHDOWN_CONF,
    }
    for name, url in (catalogs or {}).items():
        conf.update(catalog_conf(name, url))
    return conf


def catalog_conf(name: str, url: str, password_env: str | None = None) -> dict[str, str]:
    """The settings that attach ``url`` as Spark catalog ``name`` (``io.sluice.spark.SluiceCatalog``).

    A password never goes into a setting (any code holding the session reads settings back):
    ``password_env`` names the environment variable the planner reads it from.
    """
    if not name.isidentifier():
        raise ConfigError(f"catalog name {name!r} must be a SQL identifier")
    if strip_password(url)[1] is not None:
        raise ConfigError(
            f"catalog {name!r}: the URL holds a password; put it in an environment variable and name it with password_env"
        )
    prefix = f"spark.sql.catalog.{name}"
    conf = {prefix: "io.sluice.spark.SluiceCatalog", f"{prefix}.url": url}
    if password_env is not None:
        conf[f"{prefix}.password.env"] = password_env
    return conf


def configure(builder: SparkSession.Builder, catalogs: Mapping[str, str] | None = None) -> SparkSession.Builder:
    """``builder`` with what a session needs for Sluice (:func:`session_conf`): its catalogs then
    plan in a planner process beside the driver, or in this Python once ``sluice.spark.install``
    (``Federation``) ran on the session."""
    for key, value in session_conf(catalogs).items():
        builder = builder.config(key, value)
    return builder


def local_conf(master: str | None = None) -> dict[str, str]:
    """The settings of the local Spark Sluice starts (:func:`build_session`, ``sluice server``):
    ``local[*]`` unless ``SLUICE_SPARK_MASTER`` or ``master`` says otherwise, no UI, UTC."""
    return {
        "spark.master": master or os.environ.get("SLUICE_SPARK_MASTER", "local[*]"),
        "spark.ui.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": os.environ.get("SLUICE_SHUFFLE_PARTITIONS", "8"),
        "spark.driver.memory": os.environ.get("SLUICE_DRIVER_MEMORY", "4g"),
        "spark.python.worker.reuse": "true",
        # Spark's progress bar where someone watches (the JVM inherits fd 2); never into a log file or a pipe
        "spark.ui.showConsoleProgress": "true" if os.isatty(2) else "false",
    }


def build_session(
    master: str | None = None, app_name: str = "sluice", conf: dict[str, str] | None = None
) -> SparkSession:
    """A local session (``local[*]`` unless ``SLUICE_SPARK_MASTER`` or ``master`` says otherwise)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # local mode stays on loopback
    builder = SparkSession.builder.appName(app_name)
    builder = configure(builder)
    for key, value in {**local_conf(master), **(conf or {})}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def prepare(session: SparkSession) -> SparkSession:
    """Install the catalog planner in ``session``, changing none of its settings (a Spark Connect
    session is returned as it is: its planner runs on the server).

    A caller's session may lack :data:`SAFE_CONF`: that is said once, loudly, not changed
    behind their back. Its executors must import ``sluice`` (the reader runs there): checked
    once per application, with the fix named, instead of a ModuleNotFoundError deep in a job.
    """
    if is_connect(session):
        # its catalogs plan on the server (its planner process), whose workers run the server's
        # Python: nothing to install here, nothing to check; Federation attaches through spark.conf
        return session
    from sluice.spark.bridge import install  # the planner: imported when a classic session needs it

    install(session)
    unsafe = {key: value for key, value in SAFE_CONF.items() if (session.conf.get(key, None) or "").lower() != value}
    if unsafe:
        _log.warning(
            "Sluice: this Spark session has %s; Spark's own Parquet filter pushdown and in-memory cache "
            "pruning drop NaN rows (Sluice's README.md, 'Spark settings'). Sluice's reads do not use them; for your own DataFrames "
            "set %s.",
            ", ".join(f"{k}={session.conf.get(k, None)}" for k in unsafe),
            ", ".join(f"{k}={v}" for k, v in unsafe.items()),
        )
    _check_executors(session)
    return session


def is_connect(session: object) -> bool:
    """Whether ``session`` is a Spark Connect client's (``SparkSession.builder.remote(...)``)."""
    return type(session).__module__.startswith("pyspark.sql.connect")


def _check_executors(session: SparkSession) -> None:
    application = session.sparkContext.applicationId
    if application in _checked_applications:
        return
    try:
        session.sparkContext.parallelize([0], 1).map(lambda _: __import__("sluice").__name__).collect()
    except Exception as error:  # whatever the worker raised, the fix is the same
        if "No module named 'sluice'" not in str(error) and "ModuleNotFoundError" not in str(error):
            raise
        raise ConfigError(
            "Spark's Python workers cannot import sluice: start the session with this Python "
            f"(PYSPARK_PYTHON={sys.executable}, or spark.pyspark.python), or install Sluice on every "
            "worker (sluice.spark.session.build_session() sets this up)"
        ) from None
    _checked_applications.add(application)
