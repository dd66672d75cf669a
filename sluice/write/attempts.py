"""Which Spark task attempts' staged rows a statement moves: only those of the attempts Spark kept.

A staging writer's tasks load their partition's rows into the staging table, each from its own
session and committed as they go. A task that fails after loading some rows (an executor lost,
a source connection dropped, an error upstream in the query) is run again, and the retry loads
the whole partition again: the failed attempt's rows are still in the staging table. So every
staged row carries the id of the task attempt that loaded it (:data:`COLUMN`,
``TaskContext.taskAttemptId()``, unique in the application), every task returns its attempt id
and row count as its only result row, and the driver moves the rows of the attempts whose
results Spark's ``collect`` returned: one attempt per partition, the one Spark kept (a failed
attempt's result never reaches the driver, nor does a speculative copy's once the partition
has a result). The staged rows of the kept attempts are exactly the partition's rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: the staging column naming the Spark task attempt that loaded the row
COLUMN = "sluice_attempt"
#: the one row each task returns: its attempt id and the rows it loaded
_RESULT = "attempt long, rows long"


def current() -> int:
    """This task attempt's id (0 outside a Spark task)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    return context.taskAttemptId() if context is not None else 0


def tagged(batch: pa.RecordBatch, names: list[str], attempt: int) -> pa.RecordBatch:
    """``batch``'s columns under the staging table's ``names``, then :data:`COLUMN` = ``attempt``."""
    column = pc.fill_null(pa.nulls(batch.num_rows, pa.int64()), attempt)
    return pa.RecordBatch.from_arrays([*batch.columns, column], names=[*names, COLUMN])


def result(attempt: int, rows: int) -> pa.RecordBatch:
    """What a task yields when its rows are loaded: its attempt id and how many rows."""
    return pa.record_batch([pa.array([attempt], pa.int64()), pa.array([rows], pa.int64())], names=["attempt", "rows"])


def kept(frame: DataFrame, stager: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]) -> dict[int, int]:
    """Run ``stager`` in Spark's tasks over ``frame``: the attempts Spark kept and the rows each loaded."""
    return {int(r[0]): int(r[1]) for r in frame.mapInArrow(stager, _RESULT).collect()}


def only(kept: dict[int, int], quote: Callable[[str], str]) -> str:
    """The condition selecting the staged rows of the ``kept`` attempts (no rows when none)."""
    return f"{quote(COLUMN)} IN ({', '.join(str(int(a)) for a in sorted(kept)) or 'NULL'})"
