"""The user's convenience: attach sources as Spark catalogs, then query them with Spark SQL.

>>> fed = Federation()                                        # doctest: +SKIP
>>> fed.attach("lite", "sqlite:///demo-data/crm.db")          # doctest: +SKIP
>>> fed.spark.sql("SELECT count(*) FROM lite.customers WHERE region = 'EU'").show()  # doctest: +SKIP

Everything runs through Spark's own front end: ``fed.sql(q)`` is ``spark.sql(q)`` over the
attached catalogs (and the user's own tables and views), and ``plan``/``explain`` read back
what Spark's optimiser and Sluice's planner decided for each scan.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, cast

from pyspark.sql import DataFrame, SparkSession

from sluice.errors import BindError, ConfigError
from sluice.explain import pyramids_by_table, render_explain, scan_pruning
from sluice.masking import mask_url
from sluice.scan.plan import QueryPlan
from sluice.scan.spec import strip_password
from sluice.sources import open_source
from sluice.sources.base import Source
from sluice.spark import small_reads
from sluice.spark.bridge import PLANNER
from sluice.spark.errors import translated_errors
from sluice.spark.session import build_session, is_connect, prepare
from sluice.types import TableSchema

if TYPE_CHECKING:
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    from sluice.lake.pyramid import Pyramid

CATALOG_CLASS = "io.sluice.spark.SluiceCatalog"
PUSHDOWN_CONF = "spark.sluice.pushdown"
METRICS_CONF = "spark.sluice.metricsDir"
#: which Federation's source each session's catalog is now, and the options it set, by
#: (session, catalog name): the settings to replace when another Federation takes the name
_OWNERS: dict[tuple[int, str], tuple[int, dict[str, str]]] = {}


class Federation:
    """Attached sources (Spark catalogs) plus the Spark session that queries them."""

    def __init__(self, spark: SparkSession | ConnectSession | None = None, partitions: int | None = None) -> None:
        # a Connect session is typed as the classic one from here on: its DataFrame API is the same,
        # and what only a classic session has (the JVM) is refused by is_connect checks
        self.spark = prepare(cast("SparkSession", spark) or build_session())
        self.partitions = partitions
        self._sources: dict[str, Source] = {}
        self._options: dict[str, dict[str, str]] = {}
        self._tables: dict[tuple[str, str, str], TableSchema] = {}

    # ------------------------------------------------------------ sources
    def attach(
        self,
        name: str,
        url: str,
        password: str | None = None,
        partitions: int | None = None,
        statement_timeout_s: float = 600.0,
        connect_timeout_s: float | None = None,
        writable: bool = False,
    ) -> None:
        """Attach a source as catalog ``name``; connects once so a bad URL fails here, clearly.

        ``connect_timeout_s`` bounds connecting and logging in (default: the URL's
        ``connect_timeout_s`` option, else 10 s; see :mod:`sluice.timeouts`). ``writable``
        lets Sluice write a SQL source (INSERT, CTAS, DROP TABLE: docs/writes.md); without
        it every write is refused.
        """
        key = name.lower()
        if not key.isidentifier():
            raise ConfigError(f"source name {name!r} must be a SQL identifier")
        if is_connect(self.spark) and (password is not None or strip_password(url)[1] is not None):
            raise ConfigError(
                f"source {key!r} needs a password: over Spark Connect a source is attached with spark.conf "
                "settings, which never hold one, and the server's planner reads passwords from its own "
                "environment. Start the server with the source (`sluice server start --catalog catalog.toml`, "
                "its password variable set) and query it with spark.sql"
            )
        source = open_source(
            key,
            url,
            password=password,
            partitions=partitions or self.partitions,
            statement_timeout_s=statement_timeout_s,
            connect_timeout_s=connect_timeout_s,
        )
        source.check()
        small_reads.warm(source)
        bare_url, _ = strip_password(url)
        options = {"url": bare_url, "statement_timeout_s": repr(float(statement_timeout_s))}
        if partitions or self.partitions:
            options["partitions"] = str(partitions or self.partitions)
        if connect_timeout_s is not None:
            options["connect_timeout_s"] = repr(float(connect_timeout_s))
        if writable:
            options["writable"] = "true"
        # The password stays in this process: the planner logs in with the attached source and
        # hands the reader its login itself, so no Spark setting (readable by any code holding the
        # session) ever holds it
        PLANNER.forget(key)
        self._tables = {k: v for k, v in self._tables.items() if k[0] != key}
        self._sources[key] = source
        self._options[key] = options
        self._take(key)

    def detach(self, name: str) -> None:
        key = name.lower()
        if self._sources.pop(key, None) is None:
            return
        options = self._options.pop(key)
        if _OWNERS.get((id(self.spark), key), (None,))[0] == id(self):
            for option in options:
                self.spark.conf.unset(f"spark.sql.catalog.{key}.{option}")
            self.spark.conf.unset(f"spark.sql.catalog.{key}")
            del _OWNERS[(id(self.spark), key)]
        PLANNER.forget(key)
        self._tables = {k: v for k, v in self._tables.items() if k[0] != key}

    def activate(self) -> None:
        """Make this federation's sources the session's catalogs again.

        Catalog names belong to the Spark session: another Federation on the same session that
        attached a source under the same name took it over. Every query through this object
        calls this first; call it before plain ``spark.sql`` when several Federations share a session.
        """
        for key in self._options:
            if _OWNERS.get((id(self.spark), key), (None,))[0] != id(self):
                self._take(key)

    def _take(self, key: str) -> None:
        """Point the session's catalog ``key`` at this federation's source (the settings only:
        reading them back would bring every setting, passwords others set included, across py4j)."""
        options = self._options[key]
        prefix = f"spark.sql.catalog.{key}."
        _, previous = _OWNERS.get((id(self.spark), key), (None, {}))
        for option in previous.keys() - options.keys():
            self.spark.conf.unset(prefix + option)
        self.spark.conf.set(f"spark.sql.catalog.{key}", CATALOG_CLASS)
        for option, value in options.items():
            self.spark.conf.set(prefix + option, value)
        PLANNER.remember(key, options, self._sources[key])
        _OWNERS[(id(self.spark), key)] = (id(self), options)

    @property
    def sources(self) -> dict[str, str]:
        """Attached source names and their (masked) URLs."""
        return {name: mask_url(source.url) for name, source in self._sources.items()}

    def table(self, source: str, schema: str | None, name: str) -> TableSchema:
        """The described table (cached: the catalog is read once per attach)."""
        key = (source, *self._sources[source].table_key(schema, name))  # the source's own name matching
        if key not in self._tables:
            self._tables[key] = self._sources[source].describe(schema, name)
        return self._tables[key]

    # ------------------------------------------------------------ running
    def sql(self, query: str, pushdown: bool = True) -> DataFrame:
        """``spark.sql(query)`` over the attached sources; Spark's errors as Sluice's.

        ``pushdown=False`` is the reference path: every table is read whole and Spark
        evaluates everything; with pushdown on the answer must be the same rows. With
        pushdown on, the session's own ``spark.sluice.pushdown`` (default true) is left alone:
        setting and restoring it would cost three JVM round trips per query.
        """
        self.activate()
        try:
            with _session_conf(self.spark, {} if pushdown else {PUSHDOWN_CONF: "false"}), translated_errors():
                return self.spark.sql(query)
        except BindError as error:
            attached = ", ".join(sorted(self._sources)) or "none"
            if "REQUIRES_SINGLE_PART_NAMESPACE" in str(error):
                # CREATE NAMESPACE lake.x with no catalog lake: Spark took lake.x for a namespace of its own
                raise BindError(
                    f"{error} (a multi-part name whose first part is not an attached catalog; "
                    f"attached sources: {attached})"
                ) from None
            if "TABLE_OR_VIEW_NOT_FOUND" not in str(error):
                raise
            raise BindError(f"{error} (attached sources: {attached})") from None

    def query(self, source: str, sql: str) -> DataFrame:
        """The result of ``sql``, run by attached source ``source`` as written, as a DataFrame
        (a passthrough: sluice/planner/passthrough.py).

        The source reads ``SELECT * FROM (sql)`` in its read-only session, one partition; the
        columns are typed as the source's tables are; Spark's filters, aggregates and limits over
        the DataFrame are Spark's own (nothing is pushed into the SQL). Flight and lake sources
        have no SQL of their own to run and refuse it.
        """
        key = source.lower()
        attached = self._sources.get(key)
        if attached is None:
            raise BindError(
                f"no source {source!r} is attached (attached: {', '.join(sorted(self._sources)) or 'none'})"
            )
        reader = (
            self.spark.read.format("sluice").options(**self._options[key]).option("source", key).option("query", sql)
        )
        if attached.credential:  # Spark redacts option 'password' in plans and logs
            reader = reader.option("password", attached.credential)
        with translated_errors():
            return reader.load()

    def plan(self, query: str) -> QueryPlan:
        """What Spark and Sluice decided for ``query``, per scan (with each step's trace), without running it.

        Over Spark Connect the server's driver reads it, through a Sluice catalog's procedure
        (:mod:`sluice.remote_plan`)."""
        if is_connect(self.spark):
            return self._remote_plan(query)
        return self._plan_of(query, self.sql(query))

    def _remote_plan(self, query: str) -> QueryPlan:
        from sluice.remote_plan import remote_plan, sluice_catalog

        self.activate()
        names = list(self._options)
        conf = {} if names else {k: v for k, v in self.spark.conf.getAll.items() if k.startswith("spark.sql.catalog.")}

        def first_row(sql: str) -> tuple[str, str]:
            row = self.spark.sql(sql).collect()[0]
            return str(row[0]), str(row[1])

        with translated_errors():
            return remote_plan(first_row, sluice_catalog(names, conf), query)

    def _plan_of(self, query: str, frame: DataFrame) -> QueryPlan:
        with translated_errors():
            execution = frame._jdf.queryExecution()
            scans = self.spark._jvm.io.sluice.spark.Plans.scans(execution.optimizedPlan())  # type: ignore[union-attr]  # py4j
            # the optimised logical plan: the physical one would already plan the reads' partitions
            return QueryPlan.from_scans_json(query, execution.optimizedPlan().treeString(), scans)

    def _measure(self, query: str, pushdown: bool) -> tuple[QueryPlan, dict[str, dict[str, int]]]:
        """Run ``query`` to completion; rows and bytes each scan transferred, by scan id."""
        self._classic_only()
        directory = tempfile.mkdtemp(prefix="sluice-metrics-")
        try:
            with _session_conf(self.spark, {METRICS_CONF: directory}):
                frame = self.sql(query, pushdown)
                with translated_errors():
                    # this frame's own execution (its scans then hold what Spark handed them at run
                    # time), run as one SQL execution: a small scan the driver read is then not read again
                    self.spark._jvm.io.sluice.spark.Plans.run(frame._jdf.queryExecution())  # type: ignore[union-attr]  # py4j
                plan = self._plan_of(query, frame)
            return plan, {scan.scan_id: read_metrics(os.path.join(directory, scan.scan_id)) for scan in plan.scans}
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    def _classic_only(self) -> None:
        """``transferred`` and ``explain(analyze=True)`` count what the readers wrote into a folder of this machine."""
        if is_connect(self.spark):
            raise ConfigError(
                "fed.transferred and fed.explain(analyze=True) count the rows each scan's readers wrote into a "
                "folder of the driver's machine, which a Spark Connect client does not share. Over Connect, "
                "`sluice explain --analyze` on the server's machine gives them, or a classic session does"
            )

    def explain(self, query: str, verbose: bool = False, analyze: bool = False) -> str:
        """Per scan: remote query, each conjunct's level and reason, columns, limit.

        ``verbose`` adds what each of the planner's rules decided; ``analyze`` runs the query
        and adds rows and bytes transferred per scan.
        """
        plan, metrics = self.explained(query, analyze)
        return render_explain(plan, verbose=verbose, metrics=metrics, pruning=self.scan_pruning(plan))

    def explained(self, query: str, analyze: bool = False) -> tuple[QueryPlan, dict[str, dict[str, int]] | None]:
        """What :meth:`explain` renders: the plan, and (``analyze``: after running it) the transfers by scan id."""
        return self._measure(query, pushdown=True) if analyze else (self.plan(query), None)

    def pruning(self, query: str) -> dict[str, Pyramid]:
        """The pruning pyramid of every lake scan of ``query``, by table (``table#2`` for a second scan of it)."""
        plan = self.plan(query)
        return pyramids_by_table(plan, self.scan_pruning(plan))

    def scan_pruning(self, plan: QueryPlan) -> dict[str, Pyramid]:
        """The pruning pyramids of ``plan``'s lake scans, by scan id."""
        return scan_pruning(plan, self._sources)

    def transferred(self, query: str, pushdown: bool = True) -> dict[str, dict[str, int]]:
        """Run ``query``; rows and bytes each scan transferred, by table (``table#2`` for a second scan of it)."""
        plan, metrics = self._measure(query, pushdown)
        return {scan.alias: metrics[scan.scan_id] for scan in plan.scans}


@contextmanager
def _session_conf(spark: SparkSession, settings: dict[str, str]) -> Iterator[None]:
    """``settings`` in force for the block, then as they were."""
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, previous in before.items():
            if previous is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, previous)


def read_metrics(directory: str) -> dict[str, int]:
    """Rows and bytes per scan. Spark may read a partition twice (a global sort samples it
    first), so each partition counts once; ``reads`` says how many reads there were."""
    per_partition: dict[int, dict[str, int]] = {}
    reads = 0
    if os.path.isdir(directory):
        for name in os.listdir(directory):
            with open(os.path.join(directory, name), encoding="utf-8") as handle:
                record = json.load(handle)
            per_partition[record["partition"]] = record
            reads += 1
    rows = sum(r["rows"] for r in per_partition.values())
    nbytes = sum(r["bytes"] for r in per_partition.values())
    return {"rows": rows, "bytes": nbytes, "reads": reads}
