"""The seam between Spark's JVM and Sluice's planner: a py4j callback on the driver.

:func:`install` makes a Spark session ready for Sluice catalogs: it registers the reader
(the Python data source planned scans are read through), starts py4j's callback server and
hands the JVM a :class:`PlannerCallback`. The catalog layer then calls
``Planner.call(method, request)``; requests and answers are JSON, typed by the dataclasses
of :mod:`sluice.protocol` and dispatched by :data:`METHODS`, so this module is the
only transport-specific code besides :mod:`sluice.spark.planner_process`, which answers the
same JSON over a pipe for drivers without Python (docs/architecture.md).

A failure never escapes as a Python traceback across py4j: it becomes an ``error`` answer
(``no_such_table``, ``no_such_namespace`` or ``error`` with a masked message), which the
Java side raises as Spark's own exception.
"""

from __future__ import annotations

import base64
import collections
import json
import logging
import sys
import threading
import time
from dataclasses import replace
from typing import Any

from py4j.java_gateway import JavaClass, JavaObject
from py4j.protocol import Py4JJavaError
from pyspark import SparkContext
from pyspark.errors.exceptions.captured import CapturedException
from pyspark.java_gateway import ensure_callback_server_started
from pyspark.serializers import CloudPickleSerializer
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from sluice.errors import ConfigError, SluiceError, spark_reason
from sluice.lake import commit
from sluice.masking import guard_py4j_logs, mask_text
from sluice.planner.catalog import CatalogPlanner, NoSuchTable
from sluice.protocol.base import ErrorAnswer, ErrorBody
from sluice.protocol.catalog import (
    AlterTableAnswer,
    AlterTableRequest,
    CanDeleteAnswer,
    CreateNamespaceAnswer,
    CreateNamespaceRequest,
    CreateTableAnswer,
    CreateTableRequest,
    DeleteAnswer,
    DeleteRequest,
    DescribeAnswer,
    DescribeRequest,
    DropTableAnswer,
    DropTableRequest,
    ExplainWriteAnswer,
    ExplainWriteRequest,
    NamespacesAnswer,
    NamespacesRequest,
    TablesAnswer,
    TablesRequest,
    TagAnswer,
    TagRequest,
    WriteAnswer,
    WriteRequest,
)
from sluice.protocol.codec import decode, encode
from sluice.protocol.methods import Method
from sluice.protocol.read import (
    FetchAnswer,
    FetchRequest,
    ReadAnswer,
    ReaderSourceAnswer,
    ReaderSourceRequest,
    ReadRequest,
)
from sluice.protocol.scan import (
    AggregateAnswer,
    AggregateRequest,
    FiltersAnswer,
    FiltersRequest,
    JoinAnswer,
    JoinRequest,
    PlanAnswer,
    PlanRequest,
)
from sluice.scan.spec import ScanSpec
from sluice.spark import errors as spark_errors
from sluice.spark import small_reads
from sluice.spark.datasource import SluiceReader, SluiceReaderSource, read_info

_log = logging.getLogger(__name__)
#: one planner per driver process: the JVM's Bridge holds one callback
PLANNER = CatalogPlanner()
_installed: set[int] = set()
_install_lock = threading.Lock()


def _read(planner: CatalogPlanner, request: ReadRequest) -> ReadAnswer:
    """The scan's read function and partitions, planned here on the driver (see read_info),
    and whether the driver reads it itself when Spark runs it (:mod:`sluice.spark.small_reads`)."""
    source = planner.source(request)
    spec = ScanSpec.from_json(request.scan)
    reader = SluiceReader(spec, source.credential)
    schema = StructType.fromJson(json.loads(request.schema))
    info = read_info(reader, schema, request.max_batch_rows, request.binary_as_bytes)
    rows = small_reads.SMALL_ROWS if request.small_rows is None else request.small_rows
    small = small_reads.is_small(spec, reader.planned, rows)
    return ReadAnswer(read_info=base64.b64encode(info).decode("ascii"), small=small)


def _fetch(planner: CatalogPlanner, request: FetchRequest) -> FetchAnswer:
    """Read a small scan's one partition here and answer its Arrow stream; ``too_large``
    when it outgrew the bounds (a worker reads it then)."""
    source = planner.source(request)
    stream = small_reads.fetch(
        source,
        request.scan,
        source.credential,
        base64.b64decode(request.partition),
        request.schema,
        request.max_batch_rows,
    )
    if stream is None:
        return FetchAnswer(too_large=True)
    return FetchAnswer(ipc=base64.b64encode(stream).decode("ascii"))


def _reader_source(planner: CatalogPlanner, request: ReaderSourceRequest) -> ReaderSourceAnswer:
    """The reader's data source class pickled here, for a driver without Python to register
    (``Bridge.registerReader``; the pickle names the class: the workers import ``sluice``)."""
    pickled = CloudPickleSerializer().dumps(SluiceReaderSource)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    return ReaderSourceAnswer(data_source=base64.b64encode(pickled).decode("ascii"), python_version=version)


#: every method the catalog layer calls: its request and answer messages and its handler.
#: A new method is a dataclass pair in sluice/protocol and one line here (then
#: ``python -m tools.protocol_schema`` regenerates the schema and Protocol.java).
METHODS: dict[str, Method[Any, Any]] = {
    "namespaces": Method(NamespacesRequest, NamespacesAnswer, CatalogPlanner.namespaces),
    "tables": Method(TablesRequest, TablesAnswer, CatalogPlanner.tables),
    "describe": Method(DescribeRequest, DescribeAnswer, CatalogPlanner.describe),
    "filters": Method(FiltersRequest, FiltersAnswer, CatalogPlanner.filters),
    "aggregate": Method(AggregateRequest, AggregateAnswer, CatalogPlanner.aggregate),
    "join": Method(JoinRequest, JoinAnswer, CatalogPlanner.join),
    "plan": Method(PlanRequest, PlanAnswer, CatalogPlanner.plan),
    "create_table": Method(CreateTableRequest, CreateTableAnswer, CatalogPlanner.create_table),
    "drop_table": Method(DropTableRequest, DropTableAnswer, CatalogPlanner.drop_table),
    "alter_table": Method(AlterTableRequest, AlterTableAnswer, CatalogPlanner.alter_table),
    "create_namespace": Method(CreateNamespaceRequest, CreateNamespaceAnswer, CatalogPlanner.create_namespace),
    "create_tag": Method(TagRequest, TagAnswer, CatalogPlanner.create_tag),
    "drop_tag": Method(TagRequest, TagAnswer, CatalogPlanner.drop_tag),
    "write": Method(WriteRequest, WriteAnswer, CatalogPlanner.write),
    "delete": Method(DeleteRequest, DeleteAnswer, CatalogPlanner.delete),
    "can_delete": Method(DeleteRequest, CanDeleteAnswer, CatalogPlanner.can_delete),
    "explain_write": Method(ExplainWriteRequest, ExplainWriteAnswer, CatalogPlanner.explain_write),
    "read": Method(ReadRequest, ReadAnswer, _read),
    "fetch": Method(FetchRequest, FetchAnswer, _fetch),
    "reader_source": Method(ReaderSourceRequest, ReaderSourceAnswer, _reader_source),
}


class PlannerCallback:
    """What the JVM calls: ``call(method, request) -> answer``, JSON both ways.

    ``seconds`` adds up the time spent answering, per method: Sluice's own share of a query's
    planning (the benchmarks read it; the rest is Spark's and py4j's).
    """

    def __init__(self, planner: CatalogPlanner) -> None:
        self.seconds: collections.defaultdict[str, float] = collections.defaultdict(float)
        self.calls: collections.Counter[str] = collections.Counter()
        self._planner = planner

    def call(self, method: str, request: str) -> str:
        started = time.perf_counter()
        try:
            return self._answer(method, request)
        finally:
            self.seconds[method] += time.perf_counter() - started
            self.calls[method] += 1

    def write(self, request: str, jdf: JavaObject) -> str:
        """Spark's INSERT or CTAS query (a JVM Dataset) written by the planner; JSON as for :meth:`call`."""
        started = time.perf_counter()
        try:
            return self._answer("write", request, jdf)
        finally:
            self.seconds["write"] += time.perf_counter() - started
            self.calls["write"] += 1

    def _answer(self, method: str, request: str, jdf: JavaObject | None = None) -> str:
        try:
            found = METHODS.get(method)
            # only Planner.write carries rows (a Dataset): "write" through call() has none to write
            if found is None or (method == "write") != (jdf is not None):
                return _error("error", f"the Sluice planner has no method {method!r}")
            decoded = decode(found.request, json.loads(request), f"the {method!r} request")
            if jdf is not None:  # the write's rows: a Dataset crosses py4j beside the JSON
                session = SparkSession(SparkContext._active_spark_context, jdf.sparkSession())  # type: ignore[arg-type]  # set while a driver runs
                decoded = replace(decoded, frame=DataFrame(jdf, session))
            return json.dumps(encode(found.handler(self._planner, decoded)))
        except NoSuchTable as missing:
            body = ErrorBody(
                kind="no_such_table", namespace=missing.namespace, name=missing.name, message=mask_text(str(missing))
            )
            return json.dumps(encode(ErrorAnswer(error=body)))
        except SluiceError as error:
            return _error("error", mask_text(f"{type(error).__name__}: {error}"))
        except (CapturedException, Py4JJavaError) as error:  # Spark failed the write's job: its own reason
            return _error("error", mask_text(f"the write failed: {spark_reason(str(error))}"))
        except Exception as error:  # noqa: BLE001 - a planner bug must fail the query clearly, not hang py4j
            _log.exception("Sluice planner failed on %s", method)
            return _error(
                "error", mask_text(f"internal error in the Sluice planner ({method}): {type(error).__name__}: {error}")
            )

    class Java:
        implements = ["io.sluice.spark.Planner"]


commit.on_commit(PLANNER.forget_lake_tables)  # a lake job's next query sees its snapshot and schema

#: the callback the JVM holds (one per driver process)
CALLBACK = PlannerCallback(PLANNER)


def _error(kind: str, message: str) -> str:
    return json.dumps(encode(ErrorAnswer(error=ErrorBody(kind=kind, message=message))))


def install(spark: SparkSession) -> None:
    """Make ``spark`` ready for Sluice catalogs and ``format("sluice")`` (idempotent)."""
    guard_py4j_logs()  # before any password option crosses py4j
    spark_errors.install()  # Sluice's errors raised in the JVM reach Python as Sluice's error classes
    bridge = spark._jvm.io.sluice.spark.Bridge  # type: ignore[union-attr]  # py4j resolves JVM names dynamically
    if not isinstance(bridge, JavaClass):
        from sluice.spark.jvm import ensure_jar

        raise ConfigError(
            "this Spark session was started without Sluice's catalog classes: build it with "
            "sluice.spark.configure(SparkSession.builder).getOrCreate() (or "
            "sluice.spark.session.build_session()), or start it with "
            f"spark.driver.extraClassPath={ensure_jar()}"
        )
    with _install_lock:
        spark.dataSource.register(SluiceReaderSource)
        # INSERT OVERWRITE in dynamic mode, planned on the V1 write fallback (java OverwritePartitions)
        spark._jvm.io.sluice.spark.OverwritePartitions.install(spark._jsparkSession)  # type: ignore[union-attr]  # py4j names
        # UPDATE and MERGE of a SQL table with a primary key, planned on the same fallback (java RowLevelWrites)
        spark._jvm.io.sluice.spark.RowLevelWrites.install(spark._jsparkSession)  # type: ignore[union-attr]  # py4j names
        gateway = spark.sparkContext._gateway
        ensure_callback_server_started(gateway)
        if id(gateway) not in _installed or not bridge.isRegistered():
            bridge.register(CALLBACK)
            _installed.add(id(gateway))
        # dynamic pruning for joins with a scan whose selective filters were pushed EXACT (SelectiveScans.java)
        spark._jvm.io.sluice.spark.SelectiveScans.install(spark._jsparkSession)  # type: ignore[union-attr]  # py4j
