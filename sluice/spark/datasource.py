"""The ``sluice`` Spark Python Data Source: Arrow batches from a source, in parallel.

Two ways in, one reader:

* ``Federation.sql`` registers each planned scan with option ``scan`` (a
  :class:`~sluice.scan.ScanSpec` as JSON: projection, pushed filters, order, limit).
* ``spark.read.format("sluice").option("url", ...).option("table", ...)`` describes the
  table on the driver. With ``.option("pushFilters", "true")`` Spark's ``pushFilters`` is
  answered by the same classifier: a filter is returned to Spark (re-checked) unless it
  is EXACT; INEXACT ones are also sent to the source.

Why ``pushFilters`` is opt-in: Spark 4.3 keeps the reader planned by the last
``pushFilters`` call on the loaded relation (``PythonDataSourceV2.readInfo``) and, for a
later query on the same DataFrame that has no filter Spark can hand over (none at all, or
only ``upper(x) = ...``), reuses it without asking Python again. That query then reads
the earlier query's filtered rows: silent data loss. Planned scans (``Federation.sql``)
therefore never accept Spark's filters (Sluice's planner has pushed what it can already),
and the DataFrame API pushes only when asked, for a DataFrame used by one query.

A password travels in option ``password`` only: Spark redacts options whose key matches
``spark.redaction.regex`` in plans and logs, and the scan spec never holds one.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from typing import Iterator, Mapping, Sequence
from urllib.parse import unquote

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, Filter, InputPartition
from pyspark.sql.types import StructType

from sluice.errors import ConfigError
from sluice.pushdown.levels import Level
from sluice.pushdown.translator import Unsupported
from sluice.scan import ScanSpec, strip_password
from sluice.sources import open_source
from sluice.spark.filters import to_expression


class SluiceDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "sluice"

    def _spec(self) -> ScanSpec:
        if "scan" in self.options:
            return ScanSpec.from_json(self.options["scan"])
        if "url" not in self.options or "table" not in self.options:
            raise ConfigError("format('sluice') needs options 'url' and 'table' (or a planned 'scan')")
        url, _ = strip_password(self.options["url"])
        source = open_source("sluice", url, password=_password(self.options))
        table_name = self.options["table"]
        schema, _, table = table_name.rpartition(".")
        described = source.describe(schema or None, table)
        partitions = int(self.options.get("partitions", source.default_partitions(described)))
        accept = self.options.get("pushFilters", "false").lower() == "true"
        return ScanSpec.for_source(source, described, tuple(c.name for c in described.columns), partitions=partitions,
                                   accept_spark_filters=accept)

    def schema(self) -> str:
        return self._spec().spark_ddl()

    def reader(self, schema: StructType) -> DataSourceReader:
        spec = self._spec()
        return SluiceReader(spec, _password(self.options), self.options.get("session_zone", "UTC"))


def _password(options: Mapping[str, str]) -> str | None:
    """Option ``password``, else the URL's password percent-decoded (as the login uses it)."""
    in_url = strip_password(options["url"])[1] if "url" in options else None  # a planned scan has no url
    return options.get("password") or (unquote(in_url) if in_url else None)


class SluiceReader(DataSourceReader):
    def __init__(self, spec: ScanSpec, password: str | None, session_zone: str) -> None:
        self.spec = spec
        self.password = password
        self.session_zone = session_zone

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:
        if not self.spec.accept_spark_filters:
            yield from filters
            return
        source = self.spec.open(self.password)
        candidates = []
        for spark_filter in filters:
            try:
                candidates.append((spark_filter, to_expression(spark_filter)))
            except Unsupported:
                yield spark_filter
        verdicts = source.classify(self.spec.table, [expression for _, expression in candidates], self.session_zone)
        pushed = list(self.spec.where)
        for (spark_filter, _), verdict in zip(candidates, verdicts):
            if verdict.level.pushed:
                pushed.append(verdict.remote_sql)
            if verdict.level is not Level.EXACT:
                yield spark_filter
        self.spec = self.spec.with_filters(tuple(pushed))

    def partitions(self) -> Sequence[InputPartition]:
        source = self.spec.open(self.password)
        return [InputPartition(task) for task in self.spec.tasks(source)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        source = self.spec.open(self.password)
        task = partition.value
        rows = nbytes = 0
        started = time.perf_counter()
        for batch in source.read(task):
            rows += batch.num_rows
            nbytes += batch.nbytes
            yield batch
        if self.spec.metrics_dir:
            record = {"partition": task.partition, "rows": rows, "bytes": nbytes, "seconds": time.perf_counter() - started, "request": source.masked(task.request)}
            path = os.path.join(self.spec.metrics_dir, f"{task.partition}-{uuid.uuid4().hex}.json")
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(record, handle)
