"""Shrink a mismatch to a minimal reproduction: a smaller predicate, fewer columns, fewer rows.

Greedy and deterministic: try each simpler candidate in turn and keep the first one for
which the same kind of mismatch persists, until none does. Predicates shrink by
replacing a node with one of its children (which drops AND/OR branches and NOTs);
columns by keeping only those the predicate reads (or, when that loses the mismatch,
by dropping the others one at a time); rows by removing halves, then
quarters, ... then single rows (delta debugging). Every attempt loads a table and runs
the case, so attempts are capped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from fuzz.predicates import Junction, Leaf, Not, Pred, columns
from fuzz.runner import Mismatch
from fuzz.tables import Table

#: reproduce(table, predicate) -> the mismatch if it persists, else None
Reproduce = Callable[[Table, Pred], "Mismatch | None"]


def simpler(pred: Pred) -> Iterator[Pred]:
    """Candidates one step simpler than ``pred``, simplest first."""
    if isinstance(pred, Leaf):
        return
    children = (pred.child,) if isinstance(pred, Not) else pred.children
    yield from children  # a sub-predicate alone
    if isinstance(pred, Junction) and len(pred.children) > 2:
        for drop in range(len(pred.children)):  # the junction without one branch
            yield Junction(pred.op, pred.children[:drop] + pred.children[drop + 1 :])
    for position, child in enumerate(children):  # the same node over a simpler child
        for smaller in simpler(child):
            if isinstance(pred, Not):
                yield Not(smaller)
            else:
                yield Junction(pred.op, pred.children[:position] + (smaller,) + pred.children[position + 1 :])


class Shrinker:
    def __init__(self, reproduce: Reproduce, attempts: int = 150) -> None:
        self.reproduce = reproduce
        self.attempts = attempts

    def _same(self, original: Mismatch, table: Table, pred: Pred) -> Mismatch | None:
        if self.attempts <= 0:
            return None
        self.attempts -= 1
        found = self.reproduce(table, pred)
        return found if found is not None and found.kind == original.kind else None

    def shrink(self, mismatch: Mismatch) -> Mismatch:
        return self._rows(self._columns(self._predicate(mismatch)))

    def _columns(self, current: Mismatch) -> Mismatch:
        """Only the columns the predicate reads, else (an unreadable table, say) one fewer at a time."""
        read = set(columns(current.predicate))
        projected = current.table.project(read)
        if projected.columns != current.table.columns:
            found = self._same(current, projected, current.predicate)
            if found is not None:
                return found
        for column in [c.name for c in current.table.columns if c.name not in read]:
            names = {c.name for c in current.table.columns} - {column}
            current = self._same(current, current.table.project(names), current.predicate) or current
        return current

    def _predicate(self, current: Mismatch) -> Mismatch:
        improved = True
        while improved and self.attempts > 0:
            improved = False
            for candidate in simpler(current.predicate):
                found = self._same(current, current.table, candidate)
                if found is not None:
                    current, improved = found, True
                    break
        return current

    def _rows(self, current: Mismatch) -> Mismatch:
        rows = list(current.table.rows)
        chunk = max(1, len(rows) // 2)
        while self.attempts > 0:
            start, removed = 0, False
            while start < len(rows) and self.attempts > 0:
                trial = rows[:start] + rows[start + chunk :]
                found = (
                    self._same(current, current.table.with_rows(trial), current.predicate) if trial != rows else None
                )
                if found is not None:
                    current, rows, removed = found, trial, True
                else:
                    start += chunk
            if chunk == 1 and not removed:
                break
            chunk = max(1, chunk // 2) if not removed else chunk
        return current
