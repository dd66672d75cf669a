"""Running differential cases in batches: pushdown on over a source's table against Spark over
the same rows read whole once (``pushdown=False``), each branch of a UNION ALL tagged with its case.

Why a reference read once: Spark evaluates every branch of the reference over one checkpointed
copy of the rows (no source in its plan, so nothing can be pushed), and a few hundred branches
cost one small job instead of a few hundred whole-table reads.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from tests.conformance import Case


@contextmanager
def reference_views(fed, tables: Mapping[str, tuple[str, str]]) -> Iterator[dict[str, str]]:
    """key -> (view, table): each table read whole with ``pushdown=False``, checkpointed (so no
    later query reads the source again) and shown as the view; key -> view while open."""
    views = {}
    for key, (view, table) in tables.items():
        fed.sql(f"SELECT * FROM {table}", pushdown=False).localCheckpoint(eager=True).createOrReplaceTempView(view)
        views[key] = view
    try:
        yield views
    finally:
        for view in views.values():
            fed.spark.catalog.dropTempView(view)


def _rows(fed, cases: list[tuple[int, Case]], table: str, pushdown: bool) -> dict[int, collections.Counter]:
    """tag -> the multiset of the branch's ``v`` values."""
    query = " UNION ALL ".join(case.branch(tag, table) for tag, case in cases)
    out: dict[int, collections.Counter] = {tag: collections.Counter() for tag, _ in cases}
    for row in fed.sql(query, pushdown=pushdown).collect():
        out[row[0]][row[1]] += 1
    return out


class Raised(str):
    """A case that raised: any two agree (Spark's overflow and the source's are different
    exception classes with the same meaning); the text says what was raised."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Raised)

    def __hash__(self) -> int:
        return 0


def _outcome(fed, case: Case, table: str, pushdown: bool) -> object:
    """One case's rows, or that it raised (both paths raising, e.g. an overflow, agree)."""
    try:
        return _rows(fed, [(0, case)], table, pushdown)[0]
    except Exception as error:  # noqa: BLE001 - an error Spark or the source raises
        return Raised(f"raised {type(error).__name__}: {str(error).strip().splitlines()[0][:200]}")


#: the texts of cases that raised on either path (Spark's ANSI overflow at the edge table's integer
#: extremes): later batches, on any source, compare them alone, so no batch is halved again and
#: again to find the same cases (most of the matrix's cost before)
RAISERS: set[str] = set()


def compare_batches(fed, table: str, view: str, cases: list[tuple[int, Case]], batch: int) -> list[str]:
    """:func:`compare` over ``batch`` cases at a time, with each case known to raise compared alone."""
    alone = [case for case in cases if case[1].text in RAISERS]
    rest = [case for case in cases if case[1].text not in RAISERS]
    failures = [failure for case in alone for failure in compare(fed, table, view, [case])]
    for start in range(0, len(rest), batch):
        failures += compare(fed, table, view, rest[start : start + batch])
    return failures


def compare(fed, table: str, view: str, cases: list[tuple[int, Case]]) -> list[str]:
    """The cases whose rows differ between pushdown on over ``table`` and Spark over ``view``; a
    batch that raises is halved until the cases that raise are alone (a case agrees when both
    paths raise; each that raised joins :data:`RAISERS`)."""
    try:
        actual: Mapping[int, object] = _rows(fed, cases, table, True)
        expected: Mapping[int, object] = _rows(fed, cases, view, False)
    except Exception:  # noqa: BLE001 - find the cases that raise
        if len(cases) > 1:
            half = len(cases) // 2
            return compare(fed, table, view, cases[:half]) + compare(fed, table, view, cases[half:])
        actual = {tag: _outcome(fed, case, table, True) for tag, case in cases}
        expected = {tag: _outcome(fed, case, view, False) for tag, case in cases}
        RAISERS.update(case.text for tag, case in cases if Raised in (type(actual[tag]), type(expected[tag])))
    failures = []
    for tag, case in cases:
        got, want = actual[tag], expected[tag]
        if got == want:
            continue
        if isinstance(got, collections.Counter) and isinstance(want, collections.Counter):
            only_pushed, only_spark = sorted((got - want).elements())[:10], sorted((want - got).elements())[:10]
            failures.append(f"{case.text}\n    only pushed: {only_pushed}\n    only Spark: {only_spark}")
        else:
            failures.append(f"{case.text}\n    pushed: {str(got)[:200]}\n    Spark: {str(want)[:200]}")
    return failures
