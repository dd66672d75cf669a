"""SQLite's fast read path: Arrow batches from adbc_driver_sqlite, with the row reader's checks.

The row reader (:meth:`SqliteSource.read`) turns every value into a Python object and back
into Arrow: about 5x the time ADBC takes for a full scan. This path lets ADBC build the
Arrow arrays in C and keeps every check of the row reader:

* **Types.** ADBC infers a column's type from the first batch. A first row of typed
  literals (dropped) fixes int64, double, string and binary whatever NULLs follow; a first
  batch that also holds another kind of value makes ADBC widen the column, which is refused
  like the value itself. After the first batch ADBC itself refuses a REAL, TEXT or BLOB in an int64 column and TEXT or BLOB in a double
  column ("Type mismatch"), the row reader's rule, reported the same way. What ADBC would
  convert silently is flagged in SQL by one extra column: a number in a text, date or
  timestamp or binary column, and an integer a double cannot hold exactly in a double column. Text
  is validated as UTF-8 (ADBC does not); booleans, dates and timestamps go through the row
  reader's own Arrow conversions, narrow integers and decimals through ``sqlite_values``
  (a decimal column is selected twice: its REALs as doubles, its INTEGERs and TEXTs as
  tagged text), so both readers convert and refuse the same values with the same message.
* **Stale plans.** The planned table is compared with the catalog in the statement's own
  transaction (ADBC runs every statement of the connection in one), as the row reader does.
* **Locks and timeouts.** ``busy_timeout`` as in the row reader. ADBC's SQLite driver cannot
  interrupt a statement (1.13: no progress handler; Cancel is NOT_IMPLEMENTED), so the
  deadline is checked between batches. That bounds a read only when every row the
  statement scans is returned, so :func:`fast_request` offers this path only for scans of a
  rowid table with no filter beyond the partition's rowid range and no ORDER BY.

Everything else falls back to the row reader: filtered or sorted scans, views and WITHOUT
ROWID tables (see above), column types not listed in ``_ANCHORS``, and files whose text
encoding is not UTF-8 (``CAST(text AS BLOB)`` would yield UTF-16 bytes).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING
from urllib.parse import quote

import pyarrow as pa
import pyarrow.compute as pc

from sluice.errors import BindError, SourceError
from sluice.scan.query import build_query
from sluice.sources.arrow import strict_booleans
from sluice.sources.base import ReadTask
from sluice.sources.sqlite_values import Unfit, decimal_array, narrowed

if TYPE_CHECKING:
    from sluice.scan.spec import ScanSpec
    from sluice.sources.sqlite import SqliteSource

#: the first row's literal per planned Arrow type: it fixes the type ADBC infers
_ANCHORS = {
    pa.int64(): "0",
    pa.int32(): "0",
    pa.int16(): "0",
    pa.int8(): "0",
    pa.bool_(): "0",
    pa.float64(): "0.0",
    pa.string(): "''",
    pa.date32(): "''",
    pa.timestamp("us"): "''",
    pa.binary(): "x''",
}
_TEXT_LIKE = (pa.string(), pa.date32(), pa.timestamp("us"))
#: the type ADBC builds for each planned type (the anchor's)
_ADBC_TYPE = {
    arrow: {"0": pa.int64(), "0.0": pa.float64(), "''": pa.string(), "x''": pa.binary()}[literal]
    for arrow, literal in _ANCHORS.items()
}
_STORAGE = {pa.int64(): "INTEGER", pa.float64(): "REAL", pa.string(): "TEXT", pa.binary(): "BLOB"}
_EXACT_DOUBLE = 9007199254740992  # 2**53: every integer up to it has a double
_CHECK = "sluice_bad"
#: ADBC's names for what it found, as SQLite calls the storage classes
_FOUND = {
    "DOUBLE": "REAL",
    "INT64": "INTEGER",
    "STRING/BINARY": "TEXT or BLOB",
    "unknown type 1": "INTEGER",
    "unknown type 2": "REAL",
    "unknown type 3": "TEXT",
    "unknown type 4": "BLOB",
}
_MISMATCH = re.compile(r"Type mismatch in column (\d+): expected \S+ but got (.+?)\s*$", re.MULTILINE)


def fast_request(source: SqliteSource, spec: ScanSpec, partition_predicate: str | None) -> str | None:
    """The fast path's SQL for one partition of ``spec``, or None when the row reader must read it.

    A decimal column is selected twice: its REAL values (as doubles) and its INTEGER and
    TEXT values (as text, exact), which ``sqlite_values`` converts as the row reader does.
    """
    schema = spec.arrow_schema()
    if spec.where or spec.order or spec.table.split_column is None or spec.aggregate is not None:
        return None
    if any(field.type not in _ANCHORS and not pa.types.is_decimal(field.type) for field in schema):
        return None
    select, anchors, checks = [], [], []
    for index, field in enumerate(schema):
        column = source.select_expression(field.name, spec.table)
        if pa.types.is_decimal(field.type):
            select += [
                f"CASE WHEN typeof({column}) = 'real' THEN {column} END",
                f"CASE typeof({column}) WHEN 'integer' THEN 'i' || {column} WHEN 'text' THEN 't' || {column} END",
            ]
            anchors += ["0.0", "''"]
        else:
            if field.type == pa.binary():  # the row reader takes text for binary as its UTF-8 bytes
                column = f"CASE WHEN typeof({column}) = 'text' THEN CAST({column} AS BLOB) ELSE {column} END"
            elif field.type in _TEXT_LIKE:  # and a blob for text when it is UTF-8 (checked after reading)
                column = f"CASE WHEN typeof({column}) = 'blob' THEN CAST({column} AS TEXT) ELSE {column} END"
            select.append(column)
            anchors.append(_ANCHORS[field.type])
        check = _check(source.select_expression(field.name, spec.table), field.type)
        if check:
            checks.append(f"WHEN {check} THEN {index + 1}")
    select.append(f"CASE {' '.join(checks)} END AS {_CHECK}" if checks else f"NULL AS {_CHECK}")
    if spec.table.query is not None:  # a passthrough: read row by row, each value checked
        return None
    table = source.dialect.quote_table(spec.table.schema, spec.table.name)
    inner = build_query(select, table, [partition_predicate] if partition_predicate else [], None, spec.limit)
    return f"SELECT {', '.join(anchors + ['0'])} UNION ALL SELECT * FROM ({inner})"


def _check(column: str, arrow_type: pa.DataType) -> str | None:
    """SQL that is true for a value ADBC would convert but the row reader refuses."""
    if arrow_type in _TEXT_LIKE or arrow_type == pa.binary():  # ADBC turns numbers into text or bytes
        return f"typeof({column}) IN ('integer', 'real')"
    if pa.types.is_decimal(arrow_type):  # the row reader refuses a BLOB; this path selects none
        return f"typeof({column}) = 'blob'"
    if arrow_type == pa.float64():  # the row reader's rule: int(float(v)) == v (2**63 - 1 rounds up to 2**63)
        return (
            f"typeof({column}) = 'integer' AND ({column} > {_EXACT_DOUBLE} OR {column} < -{_EXACT_DOUBLE}) "
            f"AND ({column} = 9223372036854775807 OR CAST(CAST({column} AS REAL) AS INTEGER) <> {column})"
        )
    return None


def read(source: SqliteSource, task: ReadTask) -> Iterator[pa.RecordBatch] | None:
    """Batches of ``task`` through ADBC, or None when the file's encoding rules this path out."""
    import adbc_driver_sqlite.dbapi as adbc

    source.ensure_exists()
    deadline = time.monotonic() + source.statement_timeout_s
    try:
        connection = adbc.connect(f"file:{quote(source.path)}?mode=ro")
    except Exception as error:  # noqa: BLE001 - driver errors have no common base
        raise SourceError(source.name, f"cannot open {source.path}: {error}") from None
    try:
        cursor = connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {int(source.statement_timeout_s * 1000)}")
            cursor.execute("PRAGMA encoding")
            encoding = cursor.fetchone()
            if encoding is None or encoding[0] != "UTF-8":
                connection.close()
                return None
        except Exception as error:  # noqa: BLE001
            raise SourceError(source.name, f"query failed: {source.explained_text(str(error))}") from None
        return _batches(source, task, connection, cursor, deadline)
    except BaseException:
        connection.close()
        raise


def _batches(source: SqliteSource, task: ReadTask, connection, cursor, deadline: float) -> Iterator[pa.RecordBatch]:
    try:
        try:
            for planned in task.planned_tables():
                source.verify(_Queries(cursor), planned)
            cursor.adbc_statement.set_options(**{"adbc.sqlite.query.batch_rows": str(source.batch_rows)})
            cursor.execute(task.fast_request)
            reader = cursor.fetch_record_batch()
        except (SourceError, BindError):
            raise
        except Exception as error:  # noqa: BLE001
            raise SourceError(source.name, f"query failed: {source.explained_text(str(error))}") from None
        first = True
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                break
            except Exception as error:  # noqa: BLE001
                raise SourceError(source.name, _read_failure(str(error), task, source)) from None
            if time.monotonic() > deadline:
                raise SourceError(
                    source.name,
                    f"read failed: query interrupted after statement_timeout_s={source.statement_timeout_s:g}",
                )
            if first:
                batch, first = batch.slice(1), False
            if batch.num_rows:
                yield _conformed(batch, task, source)
    finally:
        connection.close()


class _Queries:
    """The ``execute(sql, params).fetchone()`` shape the catalog queries use, over an ADBC cursor."""

    def __init__(self, cursor) -> None:
        self.cursor = cursor

    def execute(self, sql: str, params: tuple = ()):
        self.cursor.execute(sql, params or None)
        return self.cursor


def _read_failure(message: str, task: ReadTask, source: SqliteSource) -> str:
    """ADBC's type mismatch in the row reader's words (naming column and stored type); other failures as they are."""
    found = _MISMATCH.search(message)
    if found is None:
        return f"read failed: {source.explained_text(message)}"
    field = _field_of_column(task.schema, int(found[1]))
    stored = _FOUND.get(found[2], found[2])
    return source.unreadable(task, field, f"a {stored} value")


def _field_of_column(schema: pa.Schema, position: int) -> pa.Field:
    """The planned field read by the fast request's ``position``-th column (decimals take two)."""
    for field in schema:
        width = 2 if pa.types.is_decimal(field.type) else 1
        if position < width:
            return field
        position -= width
    raise IndexError(position)


def not_held(field: pa.Field, what: str) -> str:
    """The message of both SQLite readers for a value the planned type cannot hold."""
    return f"column {field.name!r} holds a value that is not {field.type} (SQLite affinity lets a column hold any type): {what}"


def _conformed(batch: pa.RecordBatch, task: ReadTask, source: SqliteSource) -> pa.RecordBatch:
    schema = task.schema
    flags = batch.column(batch.num_columns - 1)
    if flags.null_count != len(flags):
        field = schema.field(pc.drop_null(flags)[0].as_py() - 1)
        what = (
            "an INTEGER value no double holds exactly"
            if field.type == pa.float64()
            else "a BLOB value"
            if pa.types.is_decimal(field.type)
            else "a number (INTEGER or REAL)"
        )
        raise SourceError(source.name, source.unreadable(task, field, what))
    arrays, position = [], 0
    for field in schema:
        try:
            if pa.types.is_decimal(field.type):
                reals, texts = batch.column(position), batch.column(position + 1)
                position += 2
                for part, expected in ((reals, pa.float64()), (texts, pa.string())):
                    if part.type != expected:  # the first batch held another kind of value: ADBC widened the column
                        raise SourceError(
                            source.name,
                            source.unreadable(task, field, f"a {_STORAGE.get(part.type, str(part.type))} value"),
                        )
                values = [
                    r if r is not None else _tagged(t)
                    for r, t in zip(reals.to_pylist(), texts.to_pylist(), strict=True)
                ]
                arrays.append(decimal_array(values, field.type))
                continue
            array = batch.column(position)
            position += 1
            if (
                array.type != _ADBC_TYPE[field.type]
            ):  # the first batch held another kind of value: ADBC widened the column
                raise SourceError(
                    source.name, source.unreadable(task, field, f"a {_STORAGE.get(array.type, str(array.type))} value")
                )
            arrays.append(_converted(array, field.type))
        except Unfit as unfit:
            raise SourceError(source.name, source.unreadable(task, field, unfit.why, unfit.value)) from None
        except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError) as error:
            raise SourceError(source.name, source.unreadable(task, field, str(error))) from None
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _tagged(text: str | None) -> int | str | None:
    """A decimal column's INTEGER (``i…``) or TEXT (``t…``) value as the sqlite3 module returns it."""
    if text is None:
        return None
    return int(text[1:]) if text[0] == "i" else text[1:]


def _converted(array: pa.Array, arrow_type: pa.DataType) -> pa.Array:
    """ADBC's array as the row reader would have built it (same Arrow conversions)."""
    if pa.types.is_boolean(arrow_type):
        return strict_booleans(array)
    if pa.types.is_integer(arrow_type):
        return narrowed(array, arrow_type)
    if arrow_type in _TEXT_LIKE:
        array.validate(full=True)  # UTF-8: SQLite text and blobs read as text are not checked by ADBC
        return array if array.type == arrow_type else pc.cast(array, arrow_type)
    return array
