"""The conformance matrix: every pushdown claim of the dialects, run on every source (Trino's model).

The cases come from the claims themselves (``tests/conformance.py`` over ``tools/matrix.py``):
each filter shape, aggregate shape, join shape and top-N order, over every edge column of the
shape's type family. For each case on each source:

- the claim is what ``tools/matrix.py`` answers for the source's real described table (the
  document's classification, with this table's collations and paddings); the plan Spark and
  Sluice make must say the same (EXACT: fully pushed, nothing left to Spark; INEXACT: pushed and
  re-applied; UNSUPPORTED: not pushed; an aggregate or join claimed EXACT is pushed, one claimed
  UNSUPPORTED is not);
- the rows with pushdown on must equal Spark's over the same rows read whole (``pushdown=False``,
  read once per source and checkpointed, so every branch of the reference reads the same rows).

Cases run in UNION ALL batches, each branch its own scan with its own pushdown and tagged with
its case number, so a mismatch names the case. A case whose plan pushes nothing is Spark's own
evaluation of the rows it read (the whole-table read is checked by test_differential.py): it is
planned and its claim checked, not run. The comparison sweep over every operator and edge literal
is the ``slow`` tier. Known bugs, being fixed on other branches, are :data:`KNOWN`: each a strict
xfail of its own, so the fix flips it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from sluice.pushdown.levels import Level
from tests import conformance
from tests.conformance import Case
from tests.matrix_runner import compare, compare_batches, reference_views
from tests.plans import stated
from tests.sources import EDGE_TABLES
from tools import matrix

pytestmark = pytest.mark.integration

#: branches per Spark query (each its own scan)
BATCH = 120

#: (source, case text) -> the bug it shows: a strict xfail each (test_known_mismatch_still_differs)
KNOWN: dict[tuple[str, str], str] = {}
_LIKE = (
    "Spark 4.3 offers a DataSource V2 scan only the LIKE patterns it rewrites to StartsWith / EndsWith / "
    "Contains; a LIKE with '_' or an ESCAPE character is never offered, so the translator's claim is never used"
)
#: matrix rows the translator pushes but Spark never offers a scan, and why: checked *not* pushed
#: (so the day Spark offers them, this fails and the row gets its positive check)
NOT_OFFERED: dict[str, str] = {"LIKE with _": _LIKE, "LIKE with ESCAPE": _LIKE}


@dataclass(frozen=True)
class Checked:
    """A case as planned: what the source's claim is, what the plan did, and whether to run it."""

    case: Case
    claim: Level | None
    planned: Level | None  # None: no claim to compare (top-N)
    pushed: bool
    note: str


def _table_parts(source: str) -> tuple[str | None, str]:
    parts = EDGE_TABLES[source].split(".")[1:]
    return (parts[0] if len(parts) == 2 else None), parts[-1]


def _claim(fed, source: str, case: Case) -> Level | None:
    """What tools/matrix.py classifies for this source's real table (None: no claim, top-N)."""
    real = fed._sources[source]  # the attached source: its dialect and capabilities
    profile = matrix.Profile(source, real.dialect, fed.table(source, *_table_parts(source)))
    if isinstance(case.shape, matrix.Shape):
        return matrix.classify(profile, case.shape).level
    if isinstance(case.shape, matrix.AggregateShape):
        return matrix.classify_aggregate(profile, case.shape, real).level
    if isinstance(case.shape, matrix.JoinShape):
        return matrix.classify_join(profile, case.shape, real).level
    return None


def _filter_level(verdicts, predicate: str) -> Level:
    """The plan's answer for a predicate Spark may have split into conjuncts (and to which it
    adds the ``IS NOT NULL`` it infers): all EXACT, none pushed, or some pushed (INEXACT)."""
    own = verdicts if "IS NOT NULL" in predicate.upper() else stated(verdicts)
    levels = {v.level for v in own}
    if not levels:
        return Level.UNSUPPORTED  # Spark offered the scan only what it inferred
    if len(levels) == 1:
        return levels.pop()
    return Level.INEXACT


def check_plan(fed, source: str, case: Case) -> Checked:
    """Plan the case alone and compare the plan with the claim."""
    plan = fed.plan(case.branch(0, EDGE_TABLES[source]))
    claim, kind = _claim(fed, source, case), case.claim[0]
    if kind == "filter":
        planned = _filter_level([v for s in plan.scans for v in s.verdicts], case.text)
        pushed = planned is not Level.UNSUPPORTED
        if planned is Level.EXACT and "Filter" in plan.spark_plan:
            planned = Level.INEXACT  # Spark kept a filter of its own
    elif kind == "aggregate":
        pushed = any(s.spec.aggregate is not None for s in plan.scans)
        planned = Level.EXACT if pushed else Level.UNSUPPORTED
    elif kind == "join":
        pushed = any(s.spec.join is not None for s in plan.scans)
        planned = Level.EXACT if pushed else Level.UNSUPPORTED
    else:
        pushed = any(s.order is not None for s in plan.scans)
        planned = None
    note = "; ".join(f"{v.level.value} {v.remote_sql or v.sql} ({v.reason})" for s in plan.scans for v in s.verdicts)
    note += "".join(f" [{s.remote_query}]" for s in plan.scans)
    return Checked(case, claim, planned, pushed, note)


@pytest.fixture(scope="module")
def references(fed) -> Iterator[dict[str, str]]:
    """Per source, its edge table read whole once (``pushdown=False``), as a view."""
    with reference_views(
        fed, {source: (f"matrix_reference_{source}", table) for source, table in EDGE_TABLES.items()}
    ) as views:
        yield views


def _broken_claim(result: Checked) -> str | None:
    """How the plan breaks the claim, or None. A claim is a promise of pushdown: EXACT must be
    planned EXACT, INEXACT pushed. UNSUPPORTED promises nothing the rows do not check: Spark may
    offer the scan more than the matrix's unanalysed predicate (it folds ``i = '5'`` to ``i = 5``,
    casts ``d`` to double in ``f < d``), and the plan may push that."""
    if result.case.claim[1] in NOT_OFFERED and result.case.claim[0] == "filter":
        return "pushed, but listed as never offered (NOT_OFFERED)" if result.pushed else None
    if result.claim is Level.EXACT and result.planned is not Level.EXACT and result.planned is not None:
        return f"claimed EXACT, planned {result.planned.value}"
    if result.claim is Level.INEXACT and not result.pushed and result.planned is not None:
        return "claimed INEXACT (pushed), not pushed"
    return None


def run_matrix(
    fed, source: str, view: str, cases: list[Case], *, claims: bool = True
) -> tuple[list[str], dict[str, int]]:
    """Plan every case (claim vs plan, unless ``claims`` is false), then run the pushed ones in
    batches; failures and counts. Cases of :data:`KNOWN` are left to their own xfail test."""
    started = time.monotonic()
    failures, checked = [], []
    for case in cases:
        if (source, case.text) in KNOWN:
            continue
        result = check_plan(fed, source, case)
        checked.append(result)
        broken = _broken_claim(result) if claims else None
        if broken:
            failures.append(f"{case.text}: {broken}: {result.note}")
    run = [(tag, c.case) for tag, c in enumerate(checked) if c.pushed]
    planned_in = time.monotonic() - started
    failures += compare_batches(fed, EDGE_TABLES[source], view, run, BATCH)
    counts = {
        "cases": len(checked),
        "run": len(run),
        "plan_s": int(planned_in),
        "run_s": int(time.monotonic() - started - planned_in),
    }
    return failures, counts


def _assert_clean(source: str, failures: list[str], counts: dict[str, int]) -> None:
    print(f"conformance matrix on {source}: {counts}")  # shown with -s / -rP: the matrix's cost
    assert not failures, f"{len(failures)} of {counts['cases']} cases fail on {source}:\n" + "\n".join(failures[:30])


@pytest.mark.parametrize("source", sorted(EDGE_TABLES))
def test_every_claim_holds(fed, references, source: str) -> None:
    """Each claim's cases: filters, aggregates, joins, top-N, at the claims' own constants."""
    failures, counts = run_matrix(fed, source, references[source], conformance.all_cases())
    assert counts["run"] > 0.3 * counts["cases"], counts  # the matrix proves nothing if nothing is pushed
    _assert_clean(source, failures, counts)


@pytest.mark.slow
@pytest.mark.parametrize("source", sorted(EDGE_TABLES))
def test_every_comparison_holds_at_the_edge_literals(fed, references, source: str) -> None:
    """The comparison shapes swept over every operator and every edge literal of tests/corpus.py: the
    rows only. A claim is the matrix's at its own constants (test_every_claim_holds); a literal of
    another type (2147483648 or 1.5 against an int, NULL) makes Spark cast or fold the predicate it
    offers, which the shape's claim does not describe."""
    swept = [c for c in conformance.predicate_cases(sweep=True) if c not in set(conformance.predicate_cases())]
    failures, counts = run_matrix(fed, source, references[source], swept, claims=False)
    _assert_clean(source, failures, counts)


def _known() -> list[object]:
    return [
        pytest.param(source, text, marks=pytest.mark.xfail(strict=True, reason=reason), id=f"{source}-{text}")
        for (source, text), reason in sorted(KNOWN.items())
        if source in EDGE_TABLES
    ]


@pytest.mark.parametrize(("source", "text"), _known())
def test_known_mismatch_still_differs(fed, references, source: str, text: str) -> None:
    """A known bug's case, alone: fails until the fix lands (then strict xfail flips: drop it from KNOWN)."""
    [case] = [c for c in conformance.all_cases(sweep=True) if c.text == text]
    result = check_plan(fed, source, case)
    assert _broken_claim(result) is None, result.note
    assert not compare(fed, EDGE_TABLES[source], references[source], [(0, case)])
