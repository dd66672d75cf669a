"""Reading plans in tests: Spark offers each scan the ``IS NOT NULL`` it infers from a
predicate beside the predicate itself; tests about one predicate look at that one."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from sluice.pushdown.levels import Verdict

_IMPLIED = re.compile(r"NOT `[^`]+` IS NULL")


def stated(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The verdicts without Spark's inferred ``NOT col IS NULL`` conjuncts."""
    return [verdict for verdict in verdicts if not _IMPLIED.fullmatch(verdict.sql)]


#: fed.plan answers by (federation, query): the contract test and the pushed-share count in
#: test_differential.py plan the same ``SELECT id FROM t WHERE p`` queries, and planning
#: (Spark's analysis and optimisation with the planner's callbacks) is most of their cost
_PLANNED: dict[tuple[int, str], Any] = {}


def planned(fed: Any, query: str) -> Any:
    """``fed.plan(query)``, planned once per test session and federation."""
    key = (id(fed), query)
    if key not in _PLANNED:
        _PLANNED[key] = fed.plan(query)
    return _PLANNED[key]
