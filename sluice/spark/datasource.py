"""The reader of planned scans: a Spark Python Data Source yielding Arrow batches in parallel.

Spark never sees this source by name in a query. The catalog layer
(``io.sluice.spark.SluiceScan``) builds one of its scans for every planned Sluice scan,
with option ``scan`` (a :class:`~sluice.scan.spec.ScanSpec` as JSON: projection, pushed
filters, order, limit) and the schema to read, and returns that scan's batch to Spark.
Nothing is negotiated here: the reader never answers Spark's ``pushFilters`` (so Spark 4.3's
reuse of a filtered Python reader across queries cannot happen), it reads what was planned.

A password travels in option ``password`` only (or inside option ``url``, as the user gave
it): Spark redacts options whose key matches ``spark.redaction.regex`` in plans and logs,
and the scan spec never holds one.
"""

from __future__ import annotations

import io
import json
import os
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from urllib.parse import unquote

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from sluice.errors import ConfigError
from sluice.scan.spec import ScanSpec, strip_password
from sluice.sources import open_scan_source
from sluice.sources.base import ReadTask

#: the name the catalog layer looks this source up by (SluiceScan.READER)
READER_NAME = "sluice_reader"


class SluiceReaderSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return READER_NAME

    def _spec(self) -> ScanSpec:
        if "scan" not in self.options:
            raise ConfigError(
                f"format({READER_NAME!r}) reads planned scans only (option 'scan'); "
                "use spark.read.format('sluice') or a Sluice catalog"
            )
        return ScanSpec.from_json(self.options["scan"])

    def schema(self) -> str:
        return self._spec().spark_ddl()

    def reader(self, schema: StructType) -> DataSourceReader:
        return SluiceReader(self._spec(), _password(self.options))


def read_info(reader: SluiceReader, schema: StructType, max_batch_rows: int, binary_as_bytes: bool) -> bytes:
    """What Spark's planning worker (``pyspark.sql.worker.plan_data_source_read``) would send
    back for this scan: the pickled read function and the pickled partitions, in its wire format.

    The driver's Python already has the source open and every module loaded, so the catalog
    layer asks it (``SluiceScan`` hands the bytes to ``PythonDataSourceV2.setReadInfo``) instead
    of starting a data source and a planning round trip in Python workers for every scan.
    ``reader.planned`` holds the tasks afterwards.
    """
    from pyspark.sql.worker.plan_data_source_read import write_read_func_and_partitions

    out = io.BytesIO()
    write_read_func_and_partitions(
        out,
        reader=reader,
        data_source=SluiceReaderSource({}),
        schema=schema,
        max_arrow_batch_size=max_batch_rows,
        binary_as_bytes=binary_as_bytes,
    )
    return out.getvalue()


def _password(options: Mapping[str, str]) -> str | None:
    """Option ``password``, else the URL's password percent-decoded (as the login uses it)."""
    in_url = strip_password(options["url"])[1] if "url" in options else None  # a planned scan has no url
    return options.get("password") or (unquote(in_url) if in_url else None)


class SluiceReader(DataSourceReader):
    def __init__(self, spec: ScanSpec, password: str | None) -> None:
        self.spec = spec
        self.password = password
        #: the tasks ``partitions`` planned (on the driver; not pickled into the read function's use)
        self.planned: list[ReadTask] = []

    def partitions(self) -> Sequence[InputPartition]:
        source = open_scan_source(self.spec, self.password)
        self.planned = source.tasks(self.spec)
        return [InputPartition(task) for task in self.planned]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        source = open_scan_source(self.spec, self.password)
        task = partition.value
        rows = nbytes = 0
        started = time.perf_counter()
        for batch in source.read(task):
            rows += batch.num_rows
            nbytes += batch.nbytes
            yield batch
        if self.spec.metrics_dir:
            record = {
                "partition": task.partition,
                "rows": rows,
                "bytes": source.counted_bytes(task, nbytes),
                "counted": source.bytes_counted,
                "seconds": time.perf_counter() - started,
                "request": source.masked(task.request),
            }
            path = os.path.join(self.spec.metrics_dir, f"{task.partition}-{uuid.uuid4().hex}.json")
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(record, handle)
