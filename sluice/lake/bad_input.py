"""One clear message for an input file Spark could not read: the file, the line, the column.

An ingest reads CSV and JSON in FAILFAST mode, so the first value that does not parse
fails the job. Spark's error names the file at best (``FAILED_READ_FILE``) and quotes
the record as it had parsed it so far, with the bad value already NULL, under a JVM stack
trace. After such a failure, :func:`bad_input_message` reads the input again in
PERMISSIVE mode with a corrupt-record column, which keeps each bad record's raw text, takes
the first one, finds its line in its file (local files) and compares the raw fields with
the parsed ones to name the column whose value did not parse. It costs a second pass over
the input, on the failure path only.
"""

from __future__ import annotations

import csv
import io
import os
import re
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from sluice.errors import spark_reason
from sluice.lake.csv_text import CsvText, csv_options

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

#: the corrupt-record column the diagnosis adds (a name no input column is expected to have)
CORRUPT = "_sluice_corrupt_record"
#: Spark's and Hadoop's errors for a file that is gone (FAILED_READ_FILE.FILE_NOT_EXIST, FileNotFoundException)
_VANISHED = re.compile(r"(?:FILE_NOT_EXIST\] File|FileNotFoundException: File) (\S+) does not exist")
#: Spark's error naming the file a task failed to read
_FAILED_FILE = re.compile(r"Encountered error while reading file (\S+?)\.?\s")


def bad_input_message(
    spark: SparkSession,
    path: str,
    kind: str,
    schema: StructType | None,
    error: BaseException,
    csv_text: CsvText | None = None,
) -> str:
    """What is wrong with the input at ``path``, as one line; Spark's own reason when the
    diagnosis finds no bad record (a header that does not match, an unreadable file).
    ``csv_text`` is how the failed read read a CSV (encoding, ``multiLine``): the diagnosis
    reads it the same way."""
    text = str(error)
    failed = _FAILED_FILE.search(text)
    where = _local(failed.group(1)) if failed else path
    try:
        found = _first_bad_record(spark, path, kind, schema, csv_options(csv_text))
    except Exception:  # noqa: BLE001 - the diagnosis is best effort; Spark's reason follows
        found = None
    if found:
        return f"cannot ingest {kind} {path}: {found}"
    reason = spark_reason(_cause(text))
    return f"cannot ingest {kind} {where}: {reason}"


def vanished_file(error: BaseException) -> str | None:
    """The file Spark found missing when ``error`` is that (an input file or a file the job
    wrote under its staging folder, removed by another process mid-job), as a local path."""
    found = _VANISHED.search(str(error))
    return _local(found.group(1)) if found else None


def _cause(text: str) -> str:
    """The most specific Spark condition in the error: the last ``[CONDITION] ...`` line
    other than the generic FAILED_READ_FILE."""
    lines = [line for line in re.findall(r"\[[A-Z][A-Z0-9_.]*\] [^\n]*", text) if "FAILED_READ_FILE" not in line]
    return lines[-1] if lines else text


def _local(uri: str) -> str:
    return unquote(urlsplit(uri).path) if uri.startswith("file:") else uri


def _first_bad_record(
    spark: SparkSession, path: str, kind: str, schema: StructType | None, options: dict[str, str]
) -> str | None:
    """``file line N: ...`` for the first record that does not parse, or None."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    if kind not in ("csv", "json"):
        return None
    read_schema = schema or _failing_schema(spark, path, kind, options)
    if read_schema is None:
        return None
    with_corrupt = StructType([*read_schema.fields, StructField(CORRUPT, StringType())])
    reader = spark.read.format(kind).schema(with_corrupt).options(mode="PERMISSIVE", columnNameOfCorruptRecord=CORRUPT)
    if kind == "csv":
        reader = reader.options(header=True, enforceSchema=False, nullValue="\u0000", **options)
    frame = reader.load(path).withColumn("_sluice_file", F.input_file_name())
    rows = frame.where(F.col(CORRUPT).isNotNull()).limit(1).collect()
    if not rows:
        return None
    row = rows[0].asDict()
    raw, file_uri = row.pop(CORRUPT), row.pop("_sluice_file")
    file_path = _local(file_uri)
    line = _line_of(file_path, raw)
    place = f"{file_path}" + (f" line {line}" if line else "")
    if kind == "csv":
        fields = next(csv.reader(io.StringIO(raw)), [])
        names = [field.name for field in read_schema.fields]
        if len(fields) != len(names):
            return f"{place} has {len(fields)} fields, the header {len(names)}: {_quote(raw)}"
        for name, value in zip(names, fields, strict=True):
            if row.get(name) is None and value != "":
                kind_name = read_schema[name].dataType.simpleString()
                return f"{place}, column {name}: {value!r} is not a {kind_name}"
    return f"{place}: cannot parse {_quote(raw)} as {read_schema.simpleString()}"


def _failing_schema(spark: SparkSession, path: str, kind: str, options: dict[str, str]) -> StructType | None:
    """The schema the failed read used when the caller gave none: Spark's inference (a CSV
    read with inferred types fails only on a record with the wrong number of fields)."""
    reader = spark.read.format(kind).option("mode", "PERMISSIVE")
    if kind == "csv":
        reader = reader.options(header=True, inferSchema=True, **options)
    return reader.load(path).schema


def _quote(raw: str, most: int = 120) -> str:
    return repr(raw if len(raw) <= most else raw[:most] + "...")


def _line_of(file_path: str, raw: str) -> int | None:
    """The 1-based line of ``file_path`` where the record ``raw`` starts (local files only)."""
    if not os.path.isfile(file_path) or "\n" in raw:
        return None
    try:
        with open(file_path, encoding="utf-8", errors="replace", newline="") as handle:
            for number, text in enumerate(handle, 1):
                if text.rstrip("\r\n") == raw:
                    return number
    except OSError:
        return None
    return None
