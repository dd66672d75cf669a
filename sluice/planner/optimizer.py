"""The optimizer: a tuple of named rules run in order, each observed for EXPLAIN VERBOSE.

The order is visible here and nowhere else. Each rule is a module in ``rules/`` with one
function ``apply(state) -> state``; its docstring says what it rewrites and why it is safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from sluice.errors import QuerySyntaxError
from sluice.planner.rules import (
    classify_filters,
    drop_exact_filters,
    fold_constants,
    normalize_between,
    place_filters,
    push_into_subqueries,
    push_limit,
    push_not,
    push_projection,
    split_conjuncts,
)
from sluice.planner.state import PlanState

RULES: tuple[ModuleType, ...] = (
    normalize_between,
    fold_constants,
    push_not,
    split_conjuncts,
    push_into_subqueries,
    place_filters,
    classify_filters,
    drop_exact_filters,
    push_projection,
    push_limit,
)


@dataclass(frozen=True)
class TraceStep:
    rule: str
    text: str  # the state's rendering after the rule, or "same as above"
    changed: bool


def rule_name(rule: ModuleType) -> str:
    return rule.__name__.rsplit(".", 1)[-1]


def optimize(state: PlanState, trace: bool = False) -> tuple[PlanState, tuple[TraceStep, ...]]:
    """Run every rule in order; return the final state and, with ``trace``, each step.

    Rendering the state after every rule is for EXPLAIN VERBOSE only: it costs about as much
    as the rules themselves (bench: planning scenario), so plain planning skips it.
    """
    steps = [TraceStep("bind", state.render(), True)] if trace else []
    previous = steps[0].text if trace else ""
    for rule in RULES:
        try:
            state = rule.apply(state)
            text = state.render() if trace else ""
        except RecursionError:  # the binder bounds the tree's depth; this keeps any miss a clear error
            raise QuerySyntaxError(f"the query is nested too deeply to plan (rule {rule_name(rule)})") from None
        if trace:
            changed = text != previous
            steps.append(TraceStep(rule_name(rule), text if changed else "same as above", changed))
            previous = text
    return state, tuple(steps)
