"""The pushdown contract: EXACT / INEXACT / UNSUPPORTED, and how they compose.

EXACT means more than "the same rows": the pushed predicate has the same truth value as
Spark's in three-valued logic (TRUE, FALSE *and* NULL) on every row. That is what makes
``NOT`` over an EXACT predicate EXACT again. INEXACT means the source keeps every row for
which Spark's predicate is TRUE (a superset); Spark reapplies it. UNSUPPORTED predicates
never reach the source.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from sluice.pushdown.pushed import Pushed


class Level(enum.Enum):
    EXACT = "EXACT"
    INEXACT = "INEXACT"
    UNSUPPORTED = "UNSUPPORTED"

    @property
    def pushed(self) -> bool:
        return self is not Level.UNSUPPORTED

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Verdict:
    """The classification of one conjunct for one scan, with the reason a user reads."""

    sql: str  # the conjunct in Spark SQL, as the user would recognise it
    level: Level
    reason: str
    remote_sql: str | None = None  # what the source evaluates, as EXPLAIN shows it (None when UNSUPPORTED)
    #: what the scan carries to the reader (the source renders it, see :mod:`sluice.pushdown.pushed`)
    pushed: Pushed | None = None

    def shown(self) -> dict[str, str | None]:
        """The verdict as users read it (plans, EXPLAIN, a Flight server's answer): no tree."""
        return {"sql": self.sql, "level": self.level.value, "reason": self.reason, "remote_sql": self.remote_sql}

    def to_dict(self) -> dict[str, Any]:
        """The verdict with its tree: what the catalog layer hands back when it asks for the plan."""
        return {**self.shown(), **({"pushed": self.pushed.to_dict()} if self.pushed is not None else {})}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        pushed = Pushed.from_dict(data["pushed"]) if data.get("pushed") is not None else None
        return cls(data["sql"], Level(data["level"]), data["reason"], data.get("remote_sql"), pushed)
