"""Reading plans in tests: Spark offers each scan the ``IS NOT NULL`` it infers from a
predicate beside the predicate itself; tests about one predicate look at that one."""

from __future__ import annotations

import re
from collections.abc import Sequence

from sluice.pushdown.levels import Verdict

_IMPLIED = re.compile(r"NOT `[^`]+` IS NULL")


def stated(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The verdicts without Spark's inferred ``NOT col IS NULL`` conjuncts."""
    return [verdict for verdict in verdicts if not _IMPLIED.fullmatch(verdict.sql)]
