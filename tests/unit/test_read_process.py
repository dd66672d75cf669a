"""The read process beside the driver (sluice/spark/read_process.py): answers, errors, death."""

from __future__ import annotations

import os
import signal

import pytest

from sluice.errors import SourceError
from sluice.spark.read_process import PROCESSES, ReadProcessDied, ReadProcesses

pytestmark = pytest.mark.unit


def test_it_answers_and_raises_the_functions_own_errors() -> None:
    processes = ReadProcesses()
    assert processes.call(sorted, [3, 1, 2]) == [1, 2, 3]
    assert processes.call(os.getpid) != os.getpid()  # it ran elsewhere
    with pytest.raises(SourceError, match="source 'pg': gone") as failure:
        processes.call(_fail, "pg")
    assert failure.value.source == "pg"
    assert processes.call(sum, [1, 2]) == 3  # still serving after an error


def test_a_process_that_dies_is_reported_and_replaced() -> None:
    processes = ReadProcesses()
    pid = processes.call(os.getpid)
    with pytest.raises(ReadProcessDied):
        processes.call(os.kill, pid, signal.SIGKILL)
    assert processes.call(os.getpid) not in (pid, os.getpid())


def _fail(source: str) -> None:
    raise SourceError(source, "gone")


def test_errors_give_their_process_back() -> None:
    """Two processes; after more failed reads than that, a read must still find one (it once waited forever)."""
    processes = ReadProcesses()
    for _ in range(PROCESSES + 2):
        with pytest.raises(SourceError):
            processes.call(_fail, "my")
    assert processes.call(sum, [2, 3]) == 5
