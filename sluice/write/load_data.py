"""Arrow batches as the text MariaDB's and MySQL's ``LOAD DATA`` reads back to the same values.

The text is built by Arrow's compute kernels (no Python loop over values): fields separated
by ``,``, rows ended by ``\\n``, text and bytes enclosed in ``"`` with ``"`` doubled inside,
no escape character (:data:`FORMAT`), so every byte of a string or binary value arrives as it
was, newlines and quotes included; the file is read as ``CHARACTER SET binary`` (no
conversion: Spark's strings are UTF-8 already). NULL is the bare word ``NULL``, which the
server reads as NULL where a quoted ``"NULL"`` is the text. Numbers, dates and timestamps
are Arrow's text forms: decimals exact (``1E-10`` included, which the server reads exactly),
doubles the shortest text that reads back to the same double, a float as its exact double
(the float's shortest text may lie beyond FLOAT's range: 3.4028235e38), booleans 0/1, a
wall clock as it is, an instant as its UTC wall clock (Spark sends instants only for a
``TIMESTAMP`` column, which Sluice reads as ``timestamp``; the writing session's
``time_zone`` is UTC, so that column gets the same instant). NaN and
±Infinity have no column to go to: :class:`Unstorable`, naming the column.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

#: the LOAD DATA clauses that read what :func:`encode` writes
FORMAT = "CHARACTER SET binary FIELDS TERMINATED BY ',' ENCLOSED BY '\"' ESCAPED BY '' LINES TERMINATED BY '\\n'"
_QUOTE = pa.scalar(b'"', pa.large_binary())
_EMPTY = pa.scalar(b"", pa.large_binary())
_COMMA = pa.scalar(b",", pa.large_binary())
_NEWLINE = pa.scalar(b"\n", pa.large_binary())
_NULL = pa.scalar(b"NULL", pa.large_binary())


class Unstorable(ValueError):
    """A value the server has no form for (NaN, ±Infinity) or a type with no text form here."""

    def __init__(self, column: str, why: str) -> None:
        super().__init__(f"column {column!r} {why}")


def encode(batch: pa.RecordBatch) -> memoryview:
    """``batch``'s rows as LOAD DATA text (:data:`FORMAT`), one line per row."""
    fields = [_text(batch.schema.field(i).name, batch.column(i)) for i in range(batch.num_columns)]
    lines = pc.binary_join_element_wise(pc.binary_join_element_wise(*fields, _COMMA), _NEWLINE, _EMPTY)
    offsets, data = lines.buffers()[1:3]
    if not len(lines) or data is None:
        return memoryview(b"")
    bounds = pa.Array.from_buffers(pa.int64(), len(lines) + 1, [None, offsets], offset=lines.offset)
    return memoryview(data)[bounds[0].as_py() : bounds[-1].as_py()]  # the lines, back to back


def _text(name: str, column: pa.Array) -> pa.Array:
    """One column's values as their LOAD DATA fields (bytes), NULL as the bare word."""
    kind = column.type
    if pa.types.is_null(kind):  # Spark's NULL literal: no value to write
        return pa.array([b"NULL"] * len(column), pa.large_binary())
    if any(
        test(kind)
        for test in (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary, pa.types.is_large_binary)
    ):
        raw = pc.cast(column, pa.large_binary())
        text = pc.binary_join_element_wise(_QUOTE, pc.replace_substring(raw, b'"', b'""'), _QUOTE, _EMPTY)
    elif pa.types.is_floating(kind):
        doubles = pc.cast(column, pa.float64())  # a float's exact value: within FLOAT's range, read back as itself
        unfit = pc.filter(doubles, pc.or_(pc.is_nan(doubles), pc.is_inf(doubles)))
        if len(unfit):
            value = unfit[0].as_py()
            shown = "NaN" if value != value else "Infinity" if value > 0 else "-Infinity"
            raise Unstorable(name, f"holds {shown}: MariaDB and MySQL cannot store NaN or ±Infinity")
        text = pc.cast(pc.cast(doubles, pa.string()), pa.large_binary())
    elif pa.types.is_boolean(kind):
        text = pc.cast(pc.cast(pc.cast(column, pa.int8()), pa.string()), pa.large_binary())
    elif pa.types.is_timestamp(kind):
        wall_clock = pc.cast(column, pa.timestamp("us"))  # an instant's UTC wall clock; a local one as it is
        text = pc.cast(pc.cast(wall_clock, pa.string()), pa.large_binary())
    elif pa.types.is_integer(kind) or pa.types.is_decimal(kind) or pa.types.is_date32(kind):
        text = pc.cast(pc.cast(column, pa.string()), pa.large_binary())
    else:
        raise Unstorable(name, f"is Arrow {kind}, which Sluice does not write to MariaDB or MySQL")
    return pc.fill_null(text, _NULL)
