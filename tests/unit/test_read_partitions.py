"""The default read-task rule and MariaDB/MySQL's returned-row estimate (issue 29)."""

from __future__ import annotations

import json

from sluice.sources.base import ROWS_PER_TASK_BEYOND_CORES, read_partitions
from sluice.sources.mysql import returned_rows


def test_no_more_tasks_than_cores_until_each_holds_far_more_than_a_batch() -> None:
    assert read_partitions(100, 2) == 1
    assert read_partitions(1_000_000, 2) == 2  # 4 before issue 29
    assert read_partitions(5_000_000, 2) == 2  # 8 before
    assert read_partitions(1_000_000, 1) == 1
    assert read_partitions(1_000_000, 16) == 4  # many cores: one task per 250,000 rows
    assert read_partitions(2 * ROWS_PER_TASK_BEYOND_CORES, 2) == 2
    assert read_partitions(2 * ROWS_PER_TASK_BEYOND_CORES + 1, 2) == 4  # a second round of tasks
    assert read_partitions(100_000_000, 2) == 8  # at most 8
    assert read_partitions(5_000_000, None) == 8  # cores unknown (a Flight server): rows alone
    assert read_partitions(5_000_000, 0) == 8


def test_returned_rows_are_rows_examined_times_filtered() -> None:
    mariadb = {"query_block": {"select_id": 1, "nested_loop": [{"table": {"rows": 1000000, "filtered": 0.01}}]}}
    mysql8 = {"query_block": {"table": {"rows_examined_per_scan": 1000000, "filtered": "10.00"}}}
    unfiltered = {"query_block": {"table": {"rows": 5000}}}
    assert returned_rows(json.loads(json.dumps(mariadb))) == 100
    assert returned_rows(mysql8) == 100_000
    assert returned_rows(unfiltered) == 5000
