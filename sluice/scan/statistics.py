"""What a source's planner knows about a table, as the source reports it
(:meth:`~sluice.sources.base.Source.statistics`): the planner weighs a pushed join by it
(:mod:`sluice.planner.join_cost`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TableStatistics:
    """What a source's planner knows about one table (lower-case column names)."""

    #: columns that lead an index (the source can probe them, and estimates them from the index)
    indexed: frozenset[str]
    #: columns with a histogram or other per-column statistics
    histograms: frozenset[str]
    #: how to give the planner statistics for a column (shown in the reason), e.g. ANALYZE ...
    remedy: str = ""

    def estimated(self, column: str) -> bool:
        return column.lower() in self.indexed or column.lower() in self.histograms
