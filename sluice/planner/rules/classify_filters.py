"""Classify every candidate conjunct of every scan: EXACT, INEXACT or UNSUPPORTED.

The source's dialect decides, through :class:`sluice.pushdown.translator.Translator`;
each verdict carries the reason a user reads in EXPLAIN and the remote SQL it became.
"""

from __future__ import annotations

from dataclasses import replace

from sluice.planner.state import PlanState
from sluice.pushdown.levels import Verdict
from sluice.pushdown.translator import Translator


def apply(state: PlanState) -> PlanState:
    scans = []
    for scan in state.scans:
        dialect = state.dialects[scan.source]
        translator = Translator(dialect, scan.table, state.session_zone)
        verdicts = []
        for candidate in scan.candidates:
            translation = translator.predicate(candidate)
            remote = dialect.render(translation.sql) if translation.sql is not None else None
            verdicts.append(Verdict(candidate.sql(dialect="spark"), translation.level, translation.reason, remote))
        scans.append(replace(scan, verdicts=tuple(verdicts)))
    return replace(state, scans=tuple(scans))
