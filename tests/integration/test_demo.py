"""The demo end to end on a small world: every query's pushed answer equals the whole-table answer.

run_demo raises PushdownError on any difference, so finishing is the assertion; the
checks below pin what each query is there to show.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from tools.demo.lake import FLIGHT_QUERY, LAKE_QUERIES
from tools.demo.run import QUERIES, run_demo

pytestmark = pytest.mark.integration


def test_demo_on_a_small_world(spark, tmp_path: Path) -> None:
    output = io.StringIO()
    outcomes = run_demo(tmp_path, orders=20_000, readings=200_000, spark=spark, console=Console(file=output, width=120))
    assert [o.query for o in outcomes] == [*QUERIES, *LAKE_QUERIES, FLIGHT_QUERY]
    by_label = {o.query.label: o for o in outcomes}
    top_n = by_label["top-N"]
    assert top_n.rows == 10 and sum(s["rows"] for s in top_n.pushed.values()) == 10
    exact = by_label["EXACT"]
    assert sum(s["rows"] for s in exact.pushed.values()) < sum(s["rows"] for s in exact.whole.values())
    text = output.getvalue()
    assert "Every answer matched the whole-table answer" in text
    for level in ("[EXACT]", "[INEXACT]", "[UNSUPPORTED]"):
        assert level in text
    assert (
        text.count("pruning pyramid") >= len(LAKE_QUERIES)
        and "lake: ingesting 200,000" in text
        and "second week" in text
    )
    assert "Flight server listening on grpc://127.0.0.1:" in text and by_label["flight"].rows > 0
    # the lake scan of the Flight query keeps nearly every row: its bytes compare like with like
    # (compressed Parquet on both sides; the whole read's decoded Arrow bytes made it 0.1%)
    flight = by_label["flight"]
    for alias, moved in flight.pushed.items():
        full = flight.whole[alias]
        if alias.startswith("lake.") and full["rows"]:
            rows_ratio, bytes_ratio = moved["rows"] / full["rows"], moved["bytes"] / full["bytes"]
            assert bytes_ratio > rows_ratio / 2, (alias, moved, full)
    assert "compressed Parquet bytes of the row groups it read" in " ".join(text.split())  # the caption wraps
    for label in ("lake: partitions", "lake: row groups"):
        lake = by_label[label]
        assert sum(s["rows"] for s in lake.pushed.values()) < sum(s["rows"] for s in lake.whole.values()) / 5
