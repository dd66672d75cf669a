"""The dialect of a Flight source: it decides nothing about filters.

A Flight server classifies every conjunct itself (:meth:`FlightSource.classify` asks it),
so the translator never runs over a Flight table's filters. The planner still asks a
dialect whether sort keys order as in Spark (top-N pushdown): a Flight request carries no
ORDER BY, so no column of a Flight table is comparable remotely and ``ORDER BY ... LIMIT``
stays with Spark. A plain ``LIMIT`` over EXACT filters is still pushed.
"""

from __future__ import annotations

from sluice.dialects.base import Dialect
from sluice.types import Column


class FlightDialect(Dialect):
    name = "Arrow Flight"

    def incomparable(self, column: Column) -> str | None:
        return "a Flight request carries no ORDER BY; the Flight server classifies filters itself"
