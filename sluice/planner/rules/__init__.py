"""The planner's named rules, in the order they decide a scan (:func:`run`).

A new decision about a scan is a new module here with one :class:`~base.Rule`, added to
:data:`RULES`; ``fed.explain(q, verbose=True)`` then shows its step by its name.
"""

from __future__ import annotations

from sluice.planner.rules.base import Draft, Rule, Step
from sluice.planner.rules.classify_filters import ClassifyFilters
from sluice.planner.rules.push_aggregates import PushAggregates
from sluice.planner.rules.push_limit import PushLimit
from sluice.planner.rules.push_projection import PushProjection
from sluice.planner.rules.runtime_filters import RuntimeFilters

#: the rules in the order they run: each reads what those before it decided (a LIMIT is
#: pushed only over EXACT filters and never over pushed aggregates)
RULES: tuple[Rule, ...] = (ClassifyFilters(), RuntimeFilters(), PushAggregates(), PushProjection(), PushLimit())


def run(draft: Draft) -> tuple[Draft, list[Step]]:
    """The scan as every rule decided it, and each rule's step."""
    steps = []
    for rule in RULES:
        draft, step = rule.apply(draft)
        steps.append(step)
    return draft, steps


__all__ = ["RULES", "Draft", "Rule", "Step", "run"]
