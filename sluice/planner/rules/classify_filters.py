"""Classify every candidate conjunct of every scan: EXACT, INEXACT or UNSUPPORTED.

The scan's source decides (:meth:`sluice.sources.base.Source.classify`): SQL sources ask
their dialect, through :class:`sluice.pushdown.translator.Translator`; a Flight source
asks its server. Each verdict carries the reason a user reads in EXPLAIN and the remote
text it became. A plan state built with dialects only (no sources) asks the dialect.
"""

from __future__ import annotations

from dataclasses import replace

from sluice.planner.state import PlanState
from sluice.pushdown.translator import classify_conjuncts


def apply(state: PlanState) -> PlanState:
    scans = []
    for scan in state.scans:
        source = state.sources.get(scan.source)
        if source is not None:
            verdicts = source.classify(scan.table, scan.candidates, state.session_zone)
        else:
            verdicts = classify_conjuncts(state.dialects[scan.source], scan.table, scan.candidates, state.session_zone)
        scans.append(replace(scan, verdicts=tuple(verdicts)))
    return replace(state, scans=tuple(scans))
