"""How ``sluice sql`` prints rows: a table for people, CSV or JSON for programs.

A table is for reading in a terminal; a pipe or a file gets CSV unless ``--format`` says
otherwise, so ``sluice sql ... > out.csv`` and ``| jq`` work without cleaning up a drawing.
CSV and JSON carry every value losslessly as text or JSON (decimals as strings, bytes in
base64, timestamps in ISO 8601), and nothing but the rows goes to stdout.
"""

from __future__ import annotations

import base64
import csv
import datetime
import decimal
import json
import math
from collections.abc import Iterable, Sequence
from typing import IO, Any

from rich.console import Console

from sluice.render import rows_table

FORMATS = ("table", "csv", "json")


def default_format(stream: IO[str]) -> str:
    """``table`` on a terminal, else ``csv``."""
    return "table" if stream.isatty() else "csv"


def write_rows(fmt: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], out: IO[str], caption: str = "") -> int:
    """Write ``rows`` to ``out`` in ``fmt``; returns how many were written. ``caption`` is the
    table's footer (CSV and JSON have none: their callers say it on stderr)."""
    if fmt == "table":
        shown = list(rows)
        Console(file=out).print(rows_table(list(columns), shown, caption=caption))
        return len(shown)
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        count = 0
        for row in rows:
            writer.writerow([_csv_value(v) for v in row])
            count += 1
        return count
    count = 0
    out.write("[")
    for row in rows:
        out.write(
            ("," if count else "")
            + "\n"
            + json.dumps(
                dict(zip(columns, (_json_value(v) for v in row), strict=True)), ensure_ascii=False, allow_nan=False
            )
        )
        count += 1
    out.write("\n]\n" if count else "]\n")
    return count


def _json_value(value: Any) -> Any:
    """A JSON value for a Spark value: exact decimals and non-finite floats as strings."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value).replace("inf", "Infinity").replace("nan", "NaN")
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat(sep=" ") if isinstance(value, datetime.datetime) else value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    if hasattr(value, "asDict"):  # a struct
        return {k: _json_value(v) for k, v in value.asDict().items()}
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    return str(value)


def _csv_value(value: Any) -> str:
    """CSV text: NULL is an empty field, booleans lowercase, nested values as JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    converted = _json_value(value)
    return json.dumps(converted, ensure_ascii=False) if isinstance(converted, (dict, list)) else str(converted)
