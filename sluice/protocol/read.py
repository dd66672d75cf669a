"""Reading a planned scan: its read function and partitions, and a small scan read on the driver."""

from __future__ import annotations

from dataclasses import dataclass

from sluice.protocol.base import SourceRequest


@dataclass(frozen=True, kw_only=True)
class ReadRequest(SourceRequest):
    #: the plan's ``scan`` (ScanSpec JSON text) and the read's StructType JSON (text)
    scan: str
    schema: str
    max_batch_rows: int
    binary_as_bytes: bool
    #: ``spark.sluice.smallReadRows``: at most this many rows expected and the driver reads it
    small_rows: int | None = None


@dataclass(frozen=True, kw_only=True)
class ReadAnswer:
    #: PythonDataSourceReadInfo as Spark's planning worker sends it, base64
    read_info: str
    #: the driver reads the scan itself (sluice/spark/small_reads.py)
    small: bool


@dataclass(frozen=True, kw_only=True)
class FetchRequest(SourceRequest):
    scan: str
    schema: str
    max_batch_rows: int
    #: the pickled partition, base64
    partition: str


@dataclass(frozen=True, kw_only=True)
class FetchAnswer:
    #: the partition's rows as an Arrow IPC stream, base64; absent when it outgrew the bounds
    ipc: str | None = None
    too_large: bool | None = None


@dataclass(frozen=True, kw_only=True)
class ReaderSourceRequest:
    """Asked once by a driver without Python (the planner is a process beside it, docs/architecture.md)."""


@dataclass(frozen=True, kw_only=True)
class ReaderSourceAnswer:
    """The reader's Python data source, for a driver that registers it in its sessions itself.

    A PySpark driver registers it with ``spark.dataSource.register``; a JVM-only driver (spark-sql,
    the Thrift or Connect server) has no Python to pickle it, so the planner process does.
    """

    #: ``sluice.spark.datasource.SluiceReaderSource`` pickled as Spark's Python workers unpickle it, base64
    data_source: str
    #: the ``major.minor`` of the Python that pickled it (Spark's workers check theirs against it)
    python_version: str
