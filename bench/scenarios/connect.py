"""Spark Connect scenario (issue 28): planning in the planner process, small queries over a server.

A ``sluice server`` (the real one: the wheel's Connect server, its planner in a process of its
own) is started with the planning scenario's three sources as catalogs; the benchmark's own
classic session (the py4j planner, in this Python) attaches the same three. Cases, timed in
interleaved rounds:

- **planning**: ``CALL plan_lite.system.plan(query => Q)`` (the procedure ``sluice explain``
  uses on a server: Spark's parse, analysis and optimisation with every planner call, then
  the plan read back) of the planning scenario's 10-conjunct query, in the classic session
  (py4j planner) and over Connect (the planner process), and the same ``CALL`` of a query with
  no Sluice scan on both (what a statement costs without planner calls: Connect's gRPC round
  trip, the procedure). The planner process's extra cost per planner call is the difference
  of the two differences over the planner calls a plan makes (counted in the py4j planner).
- **10 rows**: a Connect client (PySpark's own) collecting ``SELECT * FROM
  plan_lite.customers WHERE id <= 10`` vs ``spark.range(10)``, same server and session.
- **CLI**: ``sluice sql`` of that query (a new Python process, the thin client) against the
  running server, end to end.

Each case's CPU-seconds per process class (this process, its JVM, the server's JVM, the
server's planner process and Python workers, the CLI's processes) are read from ``/proc``
around every timed run and reported per call beside the wall time.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.cases import Case
from bench.context import BenchContext, log, scenario_result
from bench.machine import processes
from bench.scenarios.planning import QUERY, ensure_sources
from bench.timing import summary, warmed_rounds
from sluice.spark.bridge import CALLBACK

KEY = "connect"
TITLE = "Spark Connect: the planner process, small queries over a server, the CLI"
COMMAND = "python -m bench --only connect"
PER_CALL_LIMIT_S = 0.005
RATIO_LIMIT = 1.2
CLI_GOAL_S = 1.0
RUNS, QUICK_RUNS = 15, 5
EMPTY = "SELECT 1 AS one"
TEN_ROWS = "SELECT * FROM plan_lite.customers WHERE id <= 10"
ROOT = Path(__file__).resolve().parents[2]


def cpu_by_class(server_pid: int) -> dict[str, float]:
    """CPU-seconds so far: this process, its JVM (and that JVM's Python workers), the server's
    JVM, planner process and workers, and this process's reaped children (the CLI runs)."""
    live = processes()
    me = os.getpid()
    classes: dict[str, float] = defaultdict(float)
    own = resource.getrusage(resource.RUSAGE_SELF)
    classes["bench"] = own.ru_utime + own.ru_stime
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    classes["cli"] = children.ru_utime + children.ru_stime
    for pid, process in live.items():
        name, command, seconds = process.name, process.command, process.own_cpu
        parent = pid
        while parent in live and parent not in (me, server_pid) and parent > 1:
            parent = live[parent].parent
        if parent == me and pid != me:
            classes["local jvm" if name == "java" else "local workers"] += seconds
        elif parent == server_pid or pid == server_pid:
            if name == "java":
                classes["server jvm"] += seconds
            elif b"sluice.spark.planner_process" in command:
                classes["server planner"] += seconds
            else:
                classes["server workers"] += seconds
    return classes


class CpuMeter:
    """Per case, the CPU-seconds of each process class over its timed runs (the warm-up left out)."""

    def __init__(self, server_pid: int) -> None:
        self.server_pid = server_pid
        self.spent: dict[str, list[dict[str, float]]] = defaultdict(list)

    def wrap(self, key: str, run: Callable[[], None]) -> Callable[[], None]:
        def measured() -> None:
            before = cpu_by_class(self.server_pid)
            run()
            after = cpu_by_class(self.server_pid)
            self.spent[key].append({kind: after[kind] - before.get(kind, 0.0) for kind in after})

        return measured

    def per_call(self, key: str) -> dict[str, float]:
        runs = self.spent[key][1:]  # the first run is the warm-up
        kinds = sorted({kind for run in runs for kind in run})
        return {kind: sum(run.get(kind, 0.0) for run in runs) / max(1, len(runs)) for kind in kinds}


def _cpu_text(spent: dict[str, float]) -> str:
    return ", ".join(f"{kind} {seconds * 1000:.0f}" for kind, seconds in spent.items() if seconds >= 0.0005) or "0"


ABOUT = [
    "A `sluice server` (the wheel's Connect server; its planner in a process of its own) serves the planning "
    "scenario's three sources; the benchmark's classic session (py4j planner, in this Python) attaches the same.",
    "Planning: `CALL plan_lite.system.plan(query => Q)` (what `sluice explain` runs on a server) of the 10-conjunct "
    f"query, classic vs Connect, and the same CALL of `{EMPTY}` (no planner call) on both; the planner process's "
    "cost per planner call is the difference of the two differences over the planner calls of one plan.",
    f"10 rows: PySpark's Connect client collecting `{TEN_ROWS}` vs `spark.range(10)`, same server and session. "
    "CLI: `sluice sql` of that query in a new Python process against the running server, end to end.",
    "Interleaved rounds; CPU ms per call by process class (this process, its JVM and workers, the server's JVM, "
    "planner process and workers, the CLI's processes), read from /proc around each timed run.",
]


def run(ctx: BenchContext) -> dict[str, Any]:
    """Start the server, time the cases in interleaved rounds, stop it."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    from sluice import server
    from sluice.catalog import SourceConfig
    from sluice.connect_client import ConnectClient
    from sluice.remote_plan import plan_call

    urls = ensure_sources(ctx)
    folder = tempfile.mkdtemp(prefix="sluice-bench-server-")
    previous = os.environ.get(server.DIR_VARIABLE)
    os.environ[server.DIR_VARIABLE] = folder
    for name, url in urls.items():
        ctx.fed.attach(name, url)
    try:
        log("== connect: starting a sluice server")
        state = server.start([SourceConfig(name, url) for name, url in urls.items()], port=0)
        client = ConnectClient(state.url)
        connect = ConnectSession.builder.remote(state.url).create()
        meter = CpuMeter(state.pid)
        spark = ctx.fed.spark
        plan, empty = plan_call("plan_lite", QUERY), plan_call("plan_lite", EMPTY)
        cli = [sys.executable, "-m", "sluice.cli", "sql", TEN_ROWS, "--format", "csv"]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}

        def cli_run() -> None:
            done = subprocess.run(cli, capture_output=True, text=True, env=env, check=False, timeout=600)
            if done.returncode != 0 or done.stdout.count("\n") != 11:  # the header and 10 rows
                raise RuntimeError(f"sluice sql failed: {done.stderr[-500:]}{done.stdout[-500:]}")

        cases_def: list[tuple[str, str, str, Callable[[], None], bool]] = [
            (
                "planning",
                "py4j",
                "CALL system.plan, classic session (py4j planner)",
                lambda: _first(spark.sql(plan)),
                True,
            ),
            (
                "planning",
                "process",
                "CALL system.plan over Connect (planner process)",
                lambda: _rows(client, plan),
                False,
            ),
            (
                "planning",
                "py4j-empty",
                f"CALL system.plan('{EMPTY}'), classic session",
                lambda: _first(spark.sql(empty)),
                False,
            ),
            (
                "planning",
                "process-empty",
                f"CALL system.plan('{EMPTY}') over Connect",
                lambda: _rows(client, empty),
                False,
            ),
            (
                "ten-rows",
                "range",
                "spark.range(10).collect() over Connect",
                lambda: _ten(connect.range(10).collect()),
                True,
            ),
            (
                "ten-rows",
                "sluice",
                "10-row Sluice query over Connect",
                lambda: _ten(connect.sql(TEN_ROWS).collect()),
                False,
            ),
            ("cli", "cli", "sluice sql (10 rows) on the running server", cli_run, True),
        ]
        cases = [
            Case(group, shape, path, meter.wrap(shape, _none(call)), baseline=baseline)
            for group, shape, path, call, baseline in cases_def
        ]
        before_calls = sum(CALLBACK.calls.values())
        _first(spark.sql(plan))
        calls_per_plan = sum(CALLBACK.calls.values()) - before_calls
        rounds = warmed_rounds("connect", cases, QUICK_RUNS if ctx.quick else RUNS, ctx.seed, log)
        connect.client.close()
        client.close()
    finally:
        for name in urls:
            ctx.fed.detach(name)
        if server.read_state() is not None:
            server.stop()
        if previous is None:
            del os.environ[server.DIR_VARIABLE]
        else:
            os.environ[server.DIR_VARIABLE] = previous
    return _result(cases, meter, rounds, calls_per_plan)


def _none(call: Callable[[], object]) -> Callable[[], None]:
    def run() -> None:
        call()

    return run


def _first(frame: Any) -> None:
    frame.collect()


def _rows(client: Any, sql: str) -> None:
    list(client.sql(sql).rows)


def _ten(rows: list[Any]) -> None:
    if len(rows) != 10:
        raise RuntimeError(f"expected 10 rows, got {len(rows)}")


def _median(cases: list[Case], shape: str) -> float:
    case = next(c for c in cases if c.shape == shape)
    if not case.seconds:
        raise RuntimeError(f"case {shape} has no timings: {case.error}")
    return statistics.median(case.seconds)


def _result(cases: list[Case], meter: CpuMeter, rounds: list[dict[str, float]], calls: int) -> dict[str, Any]:
    records = []
    baselines = {case.scenario: case for case in cases if case.baseline}
    for case in cases:
        record = summary(case, baselines.get(case.scenario))
        record["extra"] = {"CPU ms per call by process": _cpu_text(meter.per_call(case.shape))}
        records.append(record)
    extra_s = (_median(cases, "process") - _median(cases, "process-empty")) - (
        _median(cases, "py4j") - _median(cases, "py4j-empty")
    )
    per_call = extra_s / max(1, calls)
    ratio = _median(cases, "sluice") / _median(cases, "range")
    cli_s = _median(cases, "cli")
    log(f"  planner process: {extra_s * 1000:+.1f} ms a plan, {per_call * 1000:+.2f} ms per call ({calls} calls)")
    log(f"  10 rows over Connect: {ratio:.2f}x spark.range(10); CLI {cli_s:.2f} s")
    scale = {
        "rows": None,
        "rounds": rounds,
        "results": records,
        "facts": {"query": QUERY.strip(), "planner_calls_per_plan": calls, "ten_rows": TEN_ROWS},
    }
    targets = [
        {
            "target": "planning through the planner process within 5 ms a call of the py4j path",
            "measured": f"{per_call * 1000:+.2f} ms a call ({extra_s * 1000:+.1f} ms over the {calls} planner calls "
            "of a plan, each path's statement cost without planner calls subtracted)",
            "met": per_call <= PER_CALL_LIMIT_S,
            "command": COMMAND,
        },
        {
            "target": "a 10-row query over Spark Connect within 1.2x spark.range(10) over the same server",
            "measured": f"{ratio:.2f}x ({_median(cases, 'sluice') * 1000:.1f} ms vs {_median(cases, 'range') * 1000:.1f} ms)",
            "met": ratio <= RATIO_LIMIT,
            "command": COMMAND,
        },
        {
            "target": "sluice sql, 10 rows, against a running server: 1 s end to end (goal, on a quiet machine)",
            "measured": f"{cli_s:.2f} s median",
            "met": cli_s <= CLI_GOAL_S,
            "command": COMMAND,
        },
    ]
    return scenario_result(KEY, TITLE, ABOUT, [scale], targets)
