"""What the planner's named rules share: the scan as they shape it, and one rule's step.

Each rule decides one thing about the scan Spark offers (which filters the source runs,
which join keys found at run time, whether it answers the aggregates, the LIMIT, the columns
read) and says what it decided in a :class:`Step`, which ``fed.explain(q, verbose=True)``
shows under the rule's name. A rule reads the :class:`Draft` the rules before it left and
returns a new one: nothing is kept between requests (Spark replays the negotiation at every
optimisation, from several threads).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from sluice.protocol.scan import PlanRequest
from sluice.pushdown.levels import Verdict
from sluice.scan.aggregation import Aggregation, Decision
from sluice.scan.query import OrderKey
from sluice.sources.base import Source
from sluice.types import TableSchema


@dataclass(frozen=True)
class Draft:
    """The scan as decided so far: what the request offered, and what each rule settled."""

    request: PlanRequest
    source: Source
    table: TableSchema
    #: the verdicts on Spark's filters, one per conjunct it offered (from the ``filters`` call)
    verdicts: tuple[Verdict, ...] = ()
    #: the verdicts on the join keys Spark found at run time (dynamic pruning)
    runtime: tuple[Verdict, ...] = ()
    #: the aggregate offer's decision, when Spark offered one
    grouped: Decision | None = None
    #: the aggregation the source answers (Spark pushed it and the planner accepted it)
    aggregation: Aggregation | None = None
    limit: int | None = None
    order: tuple[OrderKey, ...] = ()
    #: why a LIMIT Spark offered is not applied by the source (or by Spark only)
    limit_note: str | None = None
    #: the table's columns the source reads
    columns: tuple[str, ...] = field(default_factory=tuple)

    @property
    def zone(self) -> str:
        """The session time zone Spark evaluates timestamps in."""
        return self.request.zone


@dataclass(frozen=True)
class Step:
    """What one rule decided, as EXPLAIN VERBOSE shows it."""

    rule: str
    text: str
    #: whether the rule changed what the source runs (EXPLAIN VERBOSE says "same as above" when not)
    changed: bool

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "text": self.text, "changed": self.changed}


class Rule(ABC):
    """One named decision about a scan."""

    #: the name EXPLAIN VERBOSE shows
    name: str

    @abstractmethod
    def apply(self, draft: Draft) -> tuple[Draft, Step]:
        """The draft with this rule's decision, and the step that says what it was."""

    def step(self, text: str, changed: bool) -> Step:
        return Step(self.name, text, changed)
