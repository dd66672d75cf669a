"""A thin Spark Connect client for the command line: a query's rows from a running server, fast.

``sluice sql`` against a running ``sluice server`` should answer a small query in about a
second. PySpark's own Connect client costs about 1 s just to import (its package checks that
pandas is installed, and its session imports pandas), before any work. The command needs none
of that: it sends one ``ExecutePlan`` with the query's SQL relation (under a ``Limit`` when it
wants the first rows only) and turns the Arrow batches into rows with PySpark's own converter
(``ArrowTableToRowsConversion``, the one ``DataFrame.collect`` of a Connect session uses), so the
rows are the values a Spark session hands back and print alike. Errors are PySpark's own
exception types (``convert_exception``), which the CLI already says in one line.

The generated protocol modules live in the package ``pyspark.sql.connect``, whose
``__init__`` runs that dependency check; :func:`_protocol` registers the package without
running it (only when no one imported it yet; then the full client still works later in the
process, the check aside).
"""

from __future__ import annotations

import getpass
import importlib.util
import sys
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import grpc
    from pyspark.sql.types import StructType

#: what the server's logs and UI call this client
CLIENT_TYPE = "sluice-cli"


def _protocol() -> ModuleType:
    """``pyspark.sql.connect.proto`` without the pandas import of its package's ``__init__``."""
    if "pyspark.sql.connect" not in sys.modules:
        import pyspark.sql

        spec = importlib.util.find_spec("pyspark.sql.connect")
        if spec is not None:
            sys.modules["pyspark.sql.connect"] = importlib.util.module_from_spec(spec)  # its path, not its code
            pyspark.sql.connect = sys.modules["pyspark.sql.connect"]  # as an import would
    import pyspark.sql.connect.proto as proto

    return proto


@dataclass
class Result:
    """A query's answer: its columns, then its rows as they arrive (read them once)."""

    columns: list[str]
    rows: Iterator[Any]


@dataclass
class ConnectClient:
    """One Spark Connect session on the server at ``url`` (``sc://host:port``), its settings given once."""

    url: str
    conf: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        import grpc

        host_port = self.url.removeprefix("sc://").split("/", 1)[0].split(";", 1)[0]
        self._proto = _protocol()
        from pyspark.sql.connect.proto import base_pb2_grpc

        self._channel = grpc.insecure_channel(host_port)
        self._stub = base_pb2_grpc.SparkConnectServiceStub(self._channel)
        self._session = str(uuid.uuid4())
        self._user = getpass.getuser()
        if self.conf:
            self.set(self.conf)

    def _who(self) -> dict[str, Any]:
        """The fields every request names its session with."""
        return {
            "session_id": self._session,
            "user_context": self._proto.UserContext(user_id=self._user),
            "client_type": CLIENT_TYPE,
        }

    def close(self) -> None:
        """Release the server's session (its settings go with it), then the channel."""
        proto = self._proto
        try:
            self._stub.ReleaseSession(
                proto.ReleaseSessionRequest(**self._who()),
                timeout=5,
            )
        except Exception:  # noqa: BLE001 - the server may be gone; it drops idle sessions itself
            pass
        self._channel.close()

    def __enter__(self) -> ConnectClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def set(self, pairs: Mapping[str, str]) -> None:
        """Settings of this session only (``spark.conf.set``)."""
        proto = self._proto
        request = proto.ConfigRequest(**self._who())
        request.operation.set.pairs.extend(proto.KeyValue(key=k, value=v) for k, v in pairs.items())
        with _spark_errors():
            self._stub.Config(request)

    def get_all(self, keys: list[str]) -> dict[str, str]:
        """The settings among ``keys`` this session has (one call; unset keys are left out)."""
        proto = self._proto
        request = proto.ConfigRequest(**self._who())
        request.operation.get_option.keys.extend(keys)
        with _spark_errors():
            answer = self._stub.Config(request)
        return {pair.key: pair.value for pair in answer.pairs if pair.HasField("value")}

    def get_prefixed(self, prefix: str) -> dict[str, str]:
        """Every setting of this session whose key starts with ``prefix`` (``spark.conf.getAll``, filtered)."""
        proto = self._proto
        request = proto.ConfigRequest(**self._who())
        request.operation.get_all.prefix = prefix
        with _spark_errors():
            answer = self._stub.Config(request)
        return {pair.key: pair.value for pair in answer.pairs if pair.HasField("value")}

    def sql(self, query: str, limit: int | None = None) -> Result:
        """``spark.sql(query)`` (its first ``limit`` rows: ``DataFrame.take``), run on the server."""
        proto = self._proto
        relation = proto.Relation(sql=proto.SQL(query=query))
        if limit is not None:
            relation = proto.Relation(limit=proto.Limit(input=relation, limit=limit))
        request = proto.ExecutePlanRequest(
            **self._who(),
            operation_id=str(uuid.uuid4()),
            plan=proto.Plan(root=relation),
        )
        responses = iter(self._stub.ExecutePlan(request))
        schema: StructType | None = None
        batches: list[Any] = []
        with _spark_errors():
            for response in responses:  # the schema comes before the first batch; take it, keep streaming the rest
                if response.HasField("schema"):
                    schema = _struct(response.schema)
                if response.HasField("arrow_batch"):
                    batches.extend(_batches(response.arrow_batch.data))
                    if schema is not None:
                        break
        if schema is None:
            raise RuntimeError("the Spark Connect server sent no schema")  # a protocol break, not a user error
        return Result(schema.names, self._rows(schema, batches, responses))

    def _rows(self, schema: StructType, first: list[Any], rest: Iterator[Any]) -> Iterator[Any]:
        from pyspark.sql.conversion import ArrowTableToRowsConversion

        def convert(batches: list[Any]) -> list[Any]:
            import pyarrow as pa

            if not batches:
                return []
            return list(ArrowTableToRowsConversion.convert(pa.Table.from_batches(batches), schema))

        yield from convert(first)
        with _spark_errors():
            for response in rest:
                if response.HasField("arrow_batch"):
                    yield from convert(_batches(response.arrow_batch.data))


def _struct(data_type: Any) -> StructType:
    from pyspark.sql.connect.types import proto_schema_to_pyspark_data_type
    from pyspark.sql.types import StructType

    schema = proto_schema_to_pyspark_data_type(data_type)
    assert isinstance(schema, StructType)  # a query's rows are a struct
    return schema


def _batches(data: bytes) -> list[Any]:
    import pyarrow as pa

    with pa.ipc.open_stream(data) as reader:
        return list(reader)


@contextmanager
def _spark_errors() -> Iterator[None]:
    """A failed call as PySpark's exception for it (``AnalysisException``, ``ParseException``, ...)."""
    import grpc

    try:
        yield
    except grpc.RpcError as error:
        raise _converted(error) from None


def _converted(error: grpc.RpcError) -> Exception:
    import grpc
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status
    from pyspark.errors.exceptions.connect import SparkConnectGrpcException, convert_exception

    status = rpc_status.from_call(error)
    code = error.code() if isinstance(error, grpc.Call) else grpc.StatusCode.UNKNOWN
    if status is None:
        return SparkConnectGrpcException(message=str(error), grpc_status_code=code)
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return convert_exception(info, status.message, None, False, code)
    return SparkConnectGrpcException(message=status.message, grpc_status_code=code)
