"""Progress of a long query on the terminal: elapsed time and Spark's task counts, on stderr.

Only for a person watching: when stderr is not a terminal nothing is written (a log or a
pipe must not fill with carriage returns), and a query that ends within ``AFTER_S`` shows
nothing either. The line is erased before the command prints its result.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

AFTER_S = 2.0
EVERY_S = 0.5
_ERASE = "\r\x1b[K"


@contextmanager
def progress(spark: SparkSession, stream: IO[str]) -> Iterator[None]:
    """Show the running query's progress on ``stream`` (a terminal) while the block runs."""
    if not stream.isatty():
        yield
        return
    stop = threading.Event()
    started = time.monotonic()

    def report() -> None:
        if stop.wait(AFTER_S):
            return
        shown = False
        while not stop.is_set():
            stream.write(f"{_ERASE}{status_line(spark, time.monotonic() - started)}")
            stream.flush()
            shown = True
            stop.wait(EVERY_S)
        if shown:
            stream.write(_ERASE)
            stream.flush()

    thread = threading.Thread(target=report, name="sluice-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def status_line(spark: SparkSession, elapsed_s: float) -> str:
    """``running 12 s: 5/8 tasks done (stage 3)``, from Spark's status tracker."""
    tracker = spark.sparkContext.statusTracker()
    done = total = 0
    stages = []
    for stage_id in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage_id)
        if info is not None:
            done += info.numCompletedTasks
            total += info.numTasks
            stages.append(str(stage_id))
    work = f": {done}/{total} tasks done (stage {', '.join(stages)})" if stages else ""
    return f"running {elapsed_s:.0f} s{work}"
