"""Running cases fairly: one warm-up, then interleaved rounds in a shuffled order.

Every round runs every case once, in an order shuffled per round (seeded), so machine
noise, cache state and JIT warm-up hit all paths alike instead of whichever ran last.
A case that fails in the warm-up is recorded with its error and left out afterwards;
a benchmark reports, it does not stop.
"""

from __future__ import annotations

import gc
import os
import random
import statistics
import time
from collections.abc import Callable

import pyarrow as pa

from bench.cases import Case, same_rows
from bench.machine import cpu_snapshot, cpu_spent

Log = Callable[[str], None]


def describe(error: BaseException) -> str:
    """One line naming the failure; for a Spark job, the innermost Java cause (not "o1095.save")."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    causes = [line for line in lines if line.startswith("Caused by:")]
    text = causes[-1].removeprefix("Caused by:").strip() if causes else (lines[0] if lines else "")
    return f"{type(error).__name__}: {text[:300]}"


def _timed(case: Case) -> tuple[float, pa.Table | None]:
    """One run of ``case`` after its untimed ``prepare``; with ``measure_cpu``, the CPU-seconds
    of each process class during the run are appended to ``case.cpu``."""
    if case.prepare is not None:
        case.prepare()
    gc.collect()
    before = cpu_snapshot() if case.measure_cpu else None
    started = time.perf_counter()
    result = case.run()
    seconds = time.perf_counter() - started
    if before is not None:
        case.cpu.append({kind: round(spent, 2) for kind, spent in cpu_spent(before, cpu_snapshot()).items()})
    return seconds, result


def warm_up(cases: list[Case], log: Log) -> None:
    """Run each case once, untimed; check raw paths' rows against their group's baseline."""
    references: dict[tuple[str, str], object] = {}
    for case in sorted(cases, key=lambda c: not c.baseline):  # baselines first: they are the reference
        try:
            seconds, result = _timed(case)
        except Exception as error:  # noqa: BLE001 - any driver failure is a result to report
            case.error = describe(error)
            log(f"  warm-up {case.scenario} {case.shape} {case.path}: FAILED {case.error}")
            continue
        if result is not None:
            case.rows = result.num_rows
            key = (case.scenario, case.shape)
            if case.baseline:
                references[key] = result
                case.check = "reference"
            elif key in references:
                case.check = same_rows(result, references[key])
        log(
            f"  warm-up {case.scenario:16} {case.shape:8} {seconds:8.3f}s  {case.path}"
            + (f"  [{case.check}]" if case.check and case.check != "reference" else "")
        )
        del result
    references.clear()
    for case in cases:
        case.cpu.clear()  # the timed rounds' CPU only


def measure(cases: list[Case], runs: int, seed: int, log: Log) -> list[dict[str, float]]:
    """``runs`` interleaved rounds over the cases that survived the warm-up.

    Returns each round's duration and the 1-minute load average after it: on a shared
    machine, a load above the core count means other work competed with the paths.
    """
    rounds = []
    live = [c for c in cases if c.error is None]
    shuffle = random.Random(seed)
    for round_number in range(1, runs + 1):
        started = time.perf_counter()
        order = live[:]
        shuffle.shuffle(order)
        for case in order:
            if case.error is not None:
                continue
            try:
                seconds, _ = _timed(case)
            except Exception as error:  # noqa: BLE001
                case.error = f"round {round_number}: {describe(error)}"
                log(f"  {case.scenario} {case.shape} {case.path}: FAILED {case.error}")
                continue
            case.seconds.append(seconds)
        seconds, load = time.perf_counter() - started, os.getloadavg()[0]
        rounds.append({"seconds": round(seconds, 1), "load_1min": round(load, 2)})
        log(f"  round {round_number}/{runs}: {seconds:.1f}s, load average {load:.2f}")
    return rounds


def summary(case: Case, baseline: Case | None) -> dict[str, object]:
    """One case as a JSON record: timings, median/min/max and the ratio to the baseline."""
    record: dict[str, object] = {
        "scenario": case.scenario,
        "shape": case.shape,
        "path": case.path,
        "baseline": case.baseline,
        "note": case.note,
        "streams": case.streams,
        "rows": case.rows,
        "check": case.check,
        "error": case.error,
        "runs_s": [round(s, 4) for s in case.seconds],
    }
    extra = dict(case.extra)
    if case.cpu:
        cpu = {kind: round(statistics.median(c[kind] for c in case.cpu), 2) for kind in case.cpu[0]}
        record["cpu_s"] = cpu
        extra["CPU s driver / JVM / workers"] = " / ".join(f"{cpu[k]:.1f}" for k in ("driver", "jvm", "workers"))
    if extra:
        record["extra"] = extra
    if case.seconds:
        median = statistics.median(case.seconds)
        record.update(median_s=round(median, 4), min_s=round(min(case.seconds), 4), max_s=round(max(case.seconds), 4))
        if baseline is not None and baseline.seconds:
            record["ratio"] = round(median / statistics.median(baseline.seconds), 3)
    return record


def warmed_rounds(label: str, cases: list[Case], runs: int, seed: int, log: Log) -> list[dict[str, float]]:
    """One warm-up run of every case, then ``runs`` interleaved rounds (:func:`measure`), each step
    announced as ``== <label>: ...``."""
    log(f"== {label}: warm-up of {len(cases)} cases")
    warm_up(cases, log)
    log(f"== {label}: {runs} interleaved rounds")
    return measure(cases, runs, seed, log)
