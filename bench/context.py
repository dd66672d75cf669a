"""What every scenario receives: the shared Spark session, the run's settings, a logger.

One ``Federation`` (one SparkSession, JDBC jars on its classpath) serves every scenario:
a Python process holds one SparkContext, and sharing it keeps every path in the same JVM,
interleaved in the same run.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from sluice import Federation


def log(message: str) -> None:
    """Progress goes to stderr, so stdout stays clean for whoever pipes the report."""
    print(message, file=sys.stderr, flush=True)


@dataclass
class BenchContext:
    """Settings of one ``python -m bench`` run, shared by every scenario."""

    fed: Federation
    #: row counts of the scaled scenarios, smallest first
    scales: list[int]
    #: timed rounds after the warm-up
    runs: int
    seed: int
    quick: bool
    #: where generated files (SQLite, DuckDB, lakes) are kept between runs
    data_dir: str
    pg_url: str
    mysql_url: str
    #: installed JDBC driver jars by source kind (Spark's JDBC paths need them)
    jars: dict[str, str] = field(default_factory=dict)
    #: query shapes to run (keys of bench.cases.SHAPES); None runs them all
    shapes: list[str] | None = None
    #: whether ``--scales`` named the scales (scenarios with a fixed default size then measure those)
    scales_chosen: bool = False

    def rows_for(self, full_rows: int) -> list[int]:
        """The row counts a scenario with a fixed default size measures: the scales ``--scales``
        named, the smallest one with ``--quick``, else ``full_rows``."""
        if self.scales_chosen:
            return list(self.scales)
        return [min(self.scales)] if self.quick else [full_rows]


def scenario_result(
    key: str, title: str, about: list[str], scales: list[dict[str, Any]], targets: list[dict[str, Any]]
) -> dict[str, Any]:
    """The JSON record of one scenario, the shape ``bench.report`` renders.

    ``scales``: one entry per data size, ``{"rows": n, "rounds": [...], "results": [records of
    bench.timing.summary, each optionally with an ``extra`` dict of display columns], "facts": {...}}``.
    ``targets``: ``{"target": text, "measured": text, "met": True | False | None, "command": text}``.
    """
    return {"key": key, "title": title, "about": about, "scales": scales, "targets": targets}
