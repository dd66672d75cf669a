"""A fuzzing campaign: rounds of (random table, random predicates) on every source.

Round ``r`` of seed ``S`` is generated from ``random.Random(f"{S}:{r}")`` alone, so any
round can be regenerated without the ones before it (``python -m fuzz --seed S --round
r``), whichever sources run. Each round loads its table into every source, runs its
predicates there, and drops it. Mismatches are shrunk (one or two per kind and error: the
same bug tends to be found many times), reported, and returned as regression cases.
"""

from __future__ import annotations

import collections
import itertools
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fuzz import predicates, regressions, report, shapes, tables
from fuzz.loaders import TEXT_VARIANTS
from fuzz.loaders.base import Loader
from fuzz.predicates import Pred
from fuzz.runner import BATCH, UNREADABLE, Mismatch, Runner, ShapeMismatch, Tally
from fuzz.shapes import Shape
from fuzz.shrink import Shrinker

#: predicates per round (two batches): enough to amortise loading the table
PER_ROUND = 120
#: aggregate and join shapes per round (fuzz/shapes.py): each is two Spark queries of its own
SHAPES_PER_ROUND = (4, 2)


@dataclass
class Found:
    """A mismatch as reported: its reproduction text and its regression case."""

    mismatch: Mismatch  # shrunk when ``shrunk``
    shrunk: bool
    text: str
    case: dict[str, Any]
    regression: bool = False  # a replayed regression entry, not a new find


@dataclass
class Summary:
    """What a run did: per-source tallies, what it found, how long it took."""

    tallies: dict[str, Tally] = field(default_factory=lambda: collections.defaultdict(Tally))
    found: list[Found] = field(default_factory=list)
    #: aggregate / join shapes that differ, as reported (fuzz/shapes.py)
    shapes_found: list[str] = field(default_factory=list)
    seconds: float = 0.0
    shrink_seconds: float = 0.0  # shrinking and reporting: not part of the rate

    @property
    def cases(self) -> int:
        return sum(t.cases for t in self.tallies.values())

    @property
    def mismatches(self) -> int:
        return sum(t.mismatches for t in self.tallies.values())

    def rate(self) -> float:
        running = self.seconds - self.shrink_seconds
        return self.cases / running if running > 0 else 0.0

    def render(self) -> str:
        lines = [
            f"{self.cases} cases in {self.seconds:.0f}s ({self.rate():.2f} cases/s, not counting "
            f"{self.shrink_seconds:.0f}s of shrinking), {self.mismatches} mismatch(es)",
            f"{'source':<7}{'cases':>7}{'mismatch':>9}{'both fail':>10}{'scans pushed':>14}{'EXACT':>8}{'INEXACT':>9}{'UNSUPP.':>9}",
        ]
        for name, t in sorted(self.tallies.items()):
            total = sum(t.levels.values()) or 1
            pushed = f"{100 * t.scans_pushed / (t.scans or 1):.0f}%"
            shares = [f"{100 * t.levels[level] / total:.0f}%" for level in ("EXACT", "INEXACT", "UNSUPPORTED")]
            lines.append(
                f"{name:<7}{t.cases:>7}{t.mismatches:>9}{t.both_failed:>10}{pushed:>14}{shares[0]:>8}{shares[1]:>9}{shares[2]:>9}"
            )
        lines.append("(scans pushed: cases with at least one conjunct pushed; levels: shares of all conjuncts)")
        lines.append(
            "aggregate/join shapes (pushed by the source / run): "
            + ", ".join(f"{name} {t.shapes_pushed}/{t.shapes}" for name, t in sorted(self.tallies.items()))
        )
        return "\n".join(lines)


def _signature(mismatch: Mismatch) -> tuple[str, ...]:
    """What makes two mismatches probably the same bug: the kind and the error's class
    (the same error on two sources is usually one bug), or the kind and the source."""
    error = mismatch.pushed.error or mismatch.reference.error
    if error is None:
        return mismatch.kind, mismatch.source
    named = re.search(r"\[([A-Z_.]+)\]", error)
    return mismatch.kind, named[1] if named else error.split(":", 2)[-1][:60]


class Campaign:
    """Generates rounds, runs them on every loader's source, shrinks and reports what differs."""

    def __init__(
        self,
        fed: Any,
        loaders: dict[str, Loader],
        seed: int,
        log: Callable[[str], None] = print,
        per_round: int = PER_ROUND,
        batch: int = BATCH,
        shrink: bool = True,
        max_shrinks: int = 5,
        shapes_per_round: tuple[int, int] = SHAPES_PER_ROUND,
    ) -> None:
        self.fed = fed
        self.loaders = loaders
        self.seed = seed
        self.log = log
        self.per_round = per_round
        self.runner = Runner(fed, loaders, batch)
        self.shrink = shrink
        self.max_shrinks = max_shrinks
        self.shapes_per_round = shapes_per_round
        self.zone = fed.spark.conf.get("spark.sql.session.timeZone")
        self._names = itertools.count()
        self._shrunk: collections.Counter = collections.Counter()

    def _fresh(self, hint: str) -> str:
        return tables.fresh_name(hint, next(self._names))

    def round(self, number: int) -> tuple[tables.Table, list[Pred]]:
        rng = random.Random(f"{self.seed}:{number}")
        table = tables.generate(rng, self._fresh(f"r{number}"), TEXT_VARIANTS)
        return table, predicates.generate(rng, table, self.zone, self.per_round)

    def shapes(self, number: int, table: tables.Table) -> list[shapes.Shape]:
        """The round's aggregate and join shapes (a generator of their own: the predicates of
        a seed stay what they were)."""
        return shapes.generate(random.Random(f"{self.seed}:{number}:shapes"), table, *self.shapes_per_round)

    # ------------------------------------------------------------- running
    def run(
        self, cases: int, budget: float | None = None, rounds: list[int] | None = None, summary: Summary | None = None
    ) -> Summary:
        """Rounds until ``cases`` cases ran or ``budget`` seconds passed (``rounds``: only those)."""
        summary = summary or Summary()
        started = time.monotonic()
        done, shrinking = 0, 0.0
        for number in rounds if rounds is not None else itertools.count():
            if done >= cases or (budget is not None and time.monotonic() - started > budget):
                break
            table, preds = self.round(number)
            for source, loader in self.loaders.items():
                if done >= cases or (budget is not None and time.monotonic() - started > budget):
                    break
                preds_here = preds[: max(1, min(len(preds), cases - done))]
                tally, mismatches, shape_mismatches = self._round_on(
                    source, loader, table, preds_here, self.shapes(number, table), f"seed {self.seed} round {number}"
                )
                summary.tallies[source].add(tally)
                for shape_mismatch in shape_mismatches:
                    summary.shapes_found.append(shape_mismatch.text(loader.reference(table.name)))
                    self.log(summary.shapes_found[-1])
                done += tally.cases
                for mismatch in mismatches:
                    before = time.monotonic()
                    summary.found.append(self._found(mismatch))
                    shrinking += time.monotonic() - before
                elapsed = time.monotonic() - started - shrinking
                self.log(
                    f"[{done:>6}/{cases}] round {number} {source:<4} {tally.cases:>4} cases  "
                    f"{done / elapsed:5.2f} cases/s  mismatches so far: {summary.mismatches}"
                )
        summary.seconds += time.monotonic() - started
        summary.shrink_seconds += shrinking
        return summary

    def _round_on(
        self,
        source: str,
        loader: Loader,
        table: tables.Table,
        preds: list[Pred],
        found: list[Shape],
        origin: str,
    ) -> tuple[Tally, list[Mismatch], list[ShapeMismatch]]:
        loader.load(table)
        try:
            tally, mismatches = self.runner.compare(source, table, preds, origin)
            if any(m.kind == UNREADABLE for m in mismatches):  # one finding for the table, not one per shape
                return tally, mismatches, []
            shaped, shape_mismatches = self.runner.compare_shapes(source, table, found, origin)
            tally.add(shaped)
            return tally, mismatches, shape_mismatches
        finally:
            self.runner.forget(source, table)
            loader.drop(table.name)

    def _found(self, mismatch: Mismatch) -> Found:
        signature = _signature(mismatch)
        shrunk = False
        per_signature = 1 if mismatch.pushed.error or mismatch.reference.error else 2
        if self.shrink and sum(self._shrunk.values()) < self.max_shrinks and self._shrunk[signature] < per_signature:
            self._shrunk[signature] += 1
            self.log(f"  shrinking: {mismatch.kind} on {mismatch.source} ({mismatch.origin})")
            mismatch = self._shrink(mismatch)
            shrunk = True
        found = Found(mismatch, shrunk, self._report(mismatch), report.case(mismatch, self.zone))
        self.log(found.text)
        return found

    def _shrink(self, mismatch: Mismatch) -> Mismatch:
        def reproduce(table: tables.Table, pred: Pred) -> Mismatch | None:
            return self.runner.reproduce(mismatch.source, table.renamed(self._fresh("s")), pred, mismatch.origin)

        return Shrinker(reproduce).shrink(mismatch)

    def _report(self, mismatch: Mismatch) -> str:
        loader = self.loaders[mismatch.source]
        loader.load(mismatch.table)
        try:
            query = (
                f"SELECT id FROM {loader.reference(mismatch.table.name)} WHERE {predicates.render(mismatch.predicate)}"
            )
            return report.text(mismatch, self.loaders, self.fed, query)
        finally:
            loader.drop(mismatch.table.name)

    # ------------------------------------------------------------- regressions
    def replay(self, entries: list[dict[str, Any]], summary: Summary | None = None, shrink: bool = False) -> Summary:
        """Every entry (regressions, found cases) on its ``sources`` (default: every source);
        seed entries as small campaigns. Explicit entries run together, one batch per
        source and session zone.
        """
        summary = summary or Summary()
        started = time.monotonic()
        for entry in entries:
            if "seed" in entry:
                campaign = Campaign(self.fed, self.loaders, entry["seed"], self.log, self.per_round, shrink=False)
                campaign.run(entry.get("cases", self.per_round), summary=summary)
        by_zone: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
        for entry in entries:
            if "seed" not in entry:
                by_zone[entry.get("session_zone", self.zone)].append(entry)
        for zone, group in by_zone.items():
            self.fed.spark.conf.set("spark.sql.session.timeZone", zone)
            try:
                for source in self.loaders:
                    self._replay_on(source, group, zone, shrink, summary)
            finally:
                self.fed.spark.conf.set("spark.sql.session.timeZone", self.zone)
        summary.seconds += time.monotonic() - started
        self.log(f"replayed {len(entries)} case(s) in {time.monotonic() - started:.0f}s")
        return summary

    def _replay_on(self, source: str, entries: list[dict[str, Any]], zone: str, shrink: bool, summary: Summary) -> None:
        loader = self.loaders[source]
        cases, by_origin = [], {}
        for entry in entries:
            if source not in entry.get("sources", [source]):
                continue
            table, predicate = regressions.explicit_case(entry)
            table = table.renamed(self._fresh("g"))
            loader.load(table)
            cases.append((table, predicate, f"regression {entry['name']}"))
            by_origin[cases[-1][2]] = entry
        if not cases:
            return
        try:
            tally, mismatches = self.runner.compare_tables(source, cases)
        finally:
            for table, _, _ in cases:
                self.runner.forget(source, table)
                loader.drop(table.name)
        summary.tallies[source].add(tally)
        for mismatch in mismatches:
            entry = by_origin[mismatch.origin]
            if shrink:
                mismatch = self._shrink(mismatch)
            case = report.case(mismatch, zone) if shrink else entry
            summary.found.append(Found(mismatch, shrink, self._report(mismatch), case, regression=not shrink))
            self.log(summary.found[-1].text)
