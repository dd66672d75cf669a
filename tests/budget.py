"""The suite's time budget, seen at the end of every run.

``make test`` must stay under 35 minutes on a quiet two-core machine (docs/correctness.md,
"Test tiers"). ``--durations`` names the slowest tests; this plugin adds what a budget decision
needs: the time of each file, split by tier, so a ``make test-all`` run also tells what
``make test`` would cost, and ``build/test-durations.json`` keeps every test's time for a later
look (which tests to move to the slow tier, which file grew).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

# What `make test` is allowed, in seconds: the figure docs/correctness.md promises.
MAIN_TIER_BUDGET = 35 * 60
FILES_SHOWN = 15
REPORT = Path(__file__).resolve().parent.parent / "build" / "test-durations.json"

_seconds: dict[str, float] = defaultdict(float)
_slow: set[str] = set()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add setup, call and teardown alike: a session fixture's start-up is paid by some test."""
    _seconds[report.nodeid] += report.duration
    if "slow" in report.keywords:
        _slow.add(report.nodeid)


def _by_file(nodeids: list[str]) -> dict[str, float]:
    totals: dict[str, float] = defaultdict(float)
    for nodeid in nodeids:
        totals[nodeid.split("::", 1)[0]] += _seconds[nodeid]
    return totals


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the time per file and per tier; write every test's time to build/."""
    if not _seconds:
        return
    main = [nodeid for nodeid in _seconds if nodeid not in _slow]
    slow = [nodeid for nodeid in _seconds if nodeid in _slow]
    main_seconds = sum(_seconds[nodeid] for nodeid in main)
    slow_seconds = sum(_seconds[nodeid] for nodeid in slow)
    terminalreporter.write_sep("=", "time by file")
    totals = _by_file(list(_seconds))
    for path, seconds in sorted(totals.items(), key=lambda item: -item[1])[:FILES_SHOWN]:
        terminalreporter.write_line(f"{seconds:8.1f}s  {path}")
    if len(totals) > FILES_SHOWN:
        terminalreporter.write_line(f"          (+{len(totals) - FILES_SHOWN} more files)")
    share = 100 * main_seconds / MAIN_TIER_BUDGET
    terminalreporter.write_line(
        f"main tier (make test): {len(main)} tests, {main_seconds / 60:.1f} min in tests, "
        f"{share:.0f}% of the {MAIN_TIER_BUDGET // 60}-minute budget; "
        f"slow tier: {len(slow)} tests, {slow_seconds / 60:.1f} min"
    )
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(
        json.dumps(
            {"main": {n: round(_seconds[n], 3) for n in main}, "slow": {n: round(_seconds[n], 3) for n in slow}},
            indent=1,
        )
    )
    terminalreporter.write_line(f"every test's time: {REPORT}")
