"""The differential fuzzer on a bounded budget: every regression plus a few hundred new cases
(predicates, and per round a few aggregate and join shapes: fuzz/shapes.py).

The seed is today's date, so each day explores different tables and predicates while a
failure stays replayable: the message names the seed, and ``python -m fuzz --seed S
--sources ...`` regenerates the same cases and shrinks what it finds (see
docs/correctness.md). Mismatches are not shrunk here, to keep the budget.
"""

from __future__ import annotations

import datetime as dt

import pytest

from fuzz import loaders as fuzz_loaders
from fuzz import regressions
from fuzz.campaign import Campaign
from fuzz.runner import quiet
from fuzz.writes import WriteRound, WriteSummary
from tests.sources import selected

pytestmark = pytest.mark.integration

CASES = 300  # all sources together: about two minutes on two cores
MIN_PUSHED = 0.3  # share of cases with at least one conjunct pushed, per source


@pytest.mark.parametrize(
    ("per_round", "budget_s", "min_cases"),
    [
        # make test: every regression, then one round on every source (a table, 30 predicates and the shapes)
        pytest.param(30, None, None, id="one-round"),
        # make test-all: new rounds for about two minutes (60 predicates per table, more tables in the
        # budget); fewer than 120 new cases means the run is too slow to prove anything
        pytest.param(60, 120.0, 120, id="two-minutes", marks=pytest.mark.slow),
    ],
)
def test_fuzz(spark, tmp_path, per_round: int, budget_s: float | None, min_cases: int | None) -> None:
    from sluice import Federation

    seed = int(f"{dt.date.today():%Y%m%d}")
    built = fuzz_loaders.build([s.name for s in selected()], tmp_path)
    usable = {name: loader for name, loader in built.items() if loader.problem() is None}
    skipped = {name: loader.problem() for name, loader in built.items() if name not in usable}
    assert usable, f"no selected source can run: {skipped}"
    campaign = Campaign(Federation(spark=spark), usable, seed, log=print, per_round=per_round, shrink=False)
    campaign.runner.attach()
    with quiet(spark):
        summary = campaign.replay(regressions.load())
        replayed = summary.cases
        if budget_s is None:
            campaign.run(CASES, rounds=[0], summary=summary)
        else:
            campaign.run(CASES, max(30.0, budget_s - summary.seconds), summary=summary)

    replay = f"python -m fuzz --seed {seed} --sources {','.join(usable)}"
    print(summary.render())
    found = "\n\n".join([f.text for f in summary.found[:3]] + summary.shapes_found[:3])
    mismatches, fresh = summary.mismatches, summary.cases - replayed
    assert mismatches == 0, (
        f"{mismatches} mismatch(es), seed {seed} (replay and shrink: {replay}; "
        f"skipped sources: {skipped or 'none'})\n{summary.render()}\n\n{found}"
    )
    if min_cases is None:  # one round: every source ran all of its predicates
        min_cases = per_round * len(usable)
    assert fresh >= min_cases, f"too few new cases ran (seed {seed}):\n{summary.render()}"
    # the aggregate and join shapes ran, and some were answered by their source (fuzz/shapes.py)
    tallies = summary.tallies.values()
    assert sum(t.shapes for t in tallies) > 0 and sum(t.shapes_pushed for t in tallies) > 0, summary.render()
    for name, tally in summary.tallies.items():
        assert tally.scans_pushed >= MIN_PUSHED * tally.scans, (
            f"{name}: too little pushed to prove anything\n{summary.render()}"
        )


# slow: about a minute of Spark writes on a quiet machine (108 s at load 5); make test keeps the same
# claim per type and source in test_writes_sql.py / test_writes_mysql.py round trips
@pytest.mark.slow
def test_fuzz_write_round(spark, tmp_path) -> None:
    """One write round (fuzz/writes.py) on every selected writable SQL source: edge rows written by
    Sluice read back equal by the source's driver and by Sluice; unstorable values refused, the
    table unchanged. Seeded by today's date, as the read rounds; ``python -m fuzz`` runs more."""
    from sluice import Federation

    seed = int(f"{dt.date.today():%Y%m%d}")
    names = [s.name for s in selected() if s.name in ("pg", "lite", "my", "duck")]
    summary = WriteSummary()
    WriteRound(Federation(spark=spark), names, str(tmp_path), seed, rows=12).run(0, summary)
    print(summary.render())
    assert not summary.found, f"replay: python -m fuzz --seed {seed} --sources {','.join(names)}\n" + "\n".join(
        summary.found
    )
    assert summary.rows == 24 * len(names)
