"""Run cases of one target with a per-case time limit and sort every outcome.

Case ``i`` of a campaign is generated from ``random.Random(f"{seed}:{target}:{i}")``
alone, so any case is replayed by its index. A case is *ok* (accepted), *refused* (a
clean typed error) or a *failure*: any other exception, a :class:`Violation`, or running
past the time limit (enforced with ``SIGALRM`` in the main thread, measured elsewhere).
"""

from __future__ import annotations

import collections
import random
import signal
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from fuzz.parsers.targets import TARGETS, Target, accepted


class CaseTimeout(BaseException):
    """The case ran past its time limit (a BaseException so no ``except Exception`` in the code under test swallows it)."""


@dataclass(frozen=True)
class Failure:
    target: str
    seed: int
    index: int
    data: bytes
    error: str  # exception type and message
    where: str  # the innermost frames of the traceback
    seconds: float


@dataclass
class Summary:
    target: str
    seed: int
    cases: int = 0
    ok: int = 0
    refused: int = 0
    seconds: float = 0.0
    slowest: float = 0.0
    refusals: collections.Counter = field(default_factory=collections.Counter)
    failures: list[Failure] = field(default_factory=list)


def case_input(target: Target, seed: int, index: int, pool: list[bytes]) -> bytes:
    rng = random.Random(f"{seed}:{target.name}:{index}")
    return rng.choice(pool) if index < len(pool) else target.generate(rng, pool)


def run(name: str, cases: int, seed: int, time_limit: float = 10.0, only: list[int] | None = None) -> Summary:
    """Run ``cases`` cases of target ``name`` (the first ones replay the seeds unchanged)."""
    target = TARGETS[name]
    pool = target.seeds()
    summary = Summary(name, seed)
    for index in only if only is not None else range(cases):
        data = case_input(target, seed, index, pool)
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            with deadline(time_limit):
                target.run(data)
        except CaseTimeout as timeout:
            error = timeout
        except BaseException as caught:  # sorting every outcome is the point
            if isinstance(caught, KeyboardInterrupt):
                raise
            error = caught
        elapsed = time.perf_counter() - started
        summary.cases += 1
        summary.seconds += elapsed
        summary.slowest = max(summary.slowest, elapsed)
        if error is None and elapsed > time_limit:
            error = CaseTimeout(f"took {elapsed:.1f} s (limit {time_limit} s)")
        if error is None:
            summary.ok += 1
        elif accepted(error):
            summary.refused += 1
            summary.refusals[type(error).__name__] += 1
        else:
            summary.failures.append(
                Failure(
                    name, seed, index, data, f"{type(error).__name__}: {str(error)[:500]}", _innermost(error), elapsed
                )
            )
    return summary


def _innermost(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)[-4:]
    return " <- ".join(f"{f.filename.rsplit('/', 2)[-1]}:{f.lineno} {f.name}" for f in reversed(frames))


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`CaseTimeout` in the block after ``seconds`` (main thread; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only: the caller compares the elapsed time
        return

    def expire(signum: int, frame: object) -> None:
        raise CaseTimeout(f"ran past the {seconds} s time limit")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
