"""A pushed aggregation as the scan reads it: its outputs (grouping keys, then aggregates, each a
typed tree the source renders), the decision on Spark's offer, and the offer's vocabulary (how
an offered key or function is shown, the notes when nothing is pushed).

Which aggregates a source answers is decided above the sources (:mod:`sluice.planner.aggregates`,
or a Flight source's server); this module is what that decision hands the reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from sluice.dialects.base import Dialect
from sluice.pushdown.levels import Verdict
from sluice.pushdown.pushed import Pushed
from sluice.pushdown.terms import Unsupported
from sluice.scan import v2
from sluice.scan.query import Selects
from sluice.types import SparkType

#: the note when Spark offers AVG (it asks again with SUM and COUNT)
AVERAGES = "AVG: Spark rewrites it into SUM and COUNT and divides itself (as its own AVG does)"
#: the note when a filter is not EXACT
FILTERED = "a filter is not EXACT: Spark aggregates what it filters"
#: the reason AVG is not pushed as such
AVG_REASON = "AVG is pushed as SUM and COUNT (Spark rewrites it and divides itself)"

#: the aggregate functions a source computes, as the sqlglot nodes its dialect renders
CALLS: dict[str, type[exp.Expression]] = {"COUNT": exp.Count, "SUM": exp.Sum, "MIN": exp.Min, "MAX": exp.Max}


@dataclass(frozen=True)
class Output:
    """One column of the aggregated read: its name, the Spark type it is read as (Spark casts it to
    the aggregate's own type where they differ) and what the source computes, as a typed tree.

    A grouping key has no ``function``; an aggregate is ``function(DISTINCT? argument)``, with no
    argument for ``COUNT_STAR``. The argument crosses to the reader as a pushed filter does
    (:class:`Pushed`): a SQL source's tree, as the grouping or ordering rules force it (a binary
    collation), which the source's dialect renders at read time; or a Flight source's expression
    in the filter format, from which the Flight request is written
    (:func:`sluice.flight.aggregate_json.request`)."""

    name: str
    type: SparkType
    #: COUNT_STAR, COUNT, SUM, MIN or MAX; None for a grouping key
    function: str | None = None
    argument: Pushed | None = None
    distinct: bool = False
    #: the argument's column when it is a column of an aggregate (lake tables answer MIN/MAX from metadata)
    column: str | None = None

    def sql_tree(self) -> exp.Expression:
        """What a SQL source computes for this output (its dialect renders it)."""
        if self.function == "COUNT_STAR":
            return exp.Count(this=exp.Star())
        if self.argument is None:
            raise ValueError(f"the pushed output {self.name} has no argument")
        value = self.argument.sql_tree()
        if self.function is None:
            return value
        return CALLS[self.function](this=exp.Distinct(expressions=[value]) if self.distinct else value)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type.name,
            "function": self.function,
            "argument": self.argument.to_dict() if self.argument is not None else None,
            "distinct": self.distinct,
            "column": self.column,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Output:
        argument = data.get("argument")
        return cls(
            data["name"],
            SparkType(data["type"]),
            data.get("function"),
            Pushed.from_dict(argument) if argument is not None else None,
            bool(data.get("distinct")),
            data.get("column"),
        )


@dataclass(frozen=True)
class Aggregation:
    """What a scan with pushed aggregates reads: ``outputs`` are the grouping keys then the
    aggregates, in Spark's order, each a typed tree the source renders when it reads."""

    outputs: tuple[Output, ...]

    @property
    def group_by(self) -> tuple[Output, ...]:
        """The grouping keys (the source groups by their trees)."""
        return tuple(o for o in self.outputs if o.function is None)

    def select_sql(self, source: Selects) -> list[str]:
        """Each output as ``source`` selects it (``<value> AS "sluice_0"``), in its dialect."""
        dialect = source.dialect
        return [
            f"{source.select_value(dialect.render(o.sql_tree()), o.type)} AS {dialect.render_identifier(o.name)}"
            for o in self.outputs
        ]

    def group_by_sql(self, dialect: Dialect) -> list[str]:
        """The ``GROUP BY`` keys in ``dialect``'s SQL."""
        return [dialect.render(key.sql_tree()) for key in self.group_by]

    def to_dict(self) -> dict[str, Any]:
        return {"outputs": [o.to_dict() for o in self.outputs]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Aggregation:
        return cls(tuple(Output.from_dict(o) for o in data["outputs"]))

    def spark_ddl(self) -> str:
        return ", ".join(f"`{o.name}` {o.type}" for o in self.outputs)


@dataclass(frozen=True)
class Decision:
    """The answer to one offered aggregation: pushed completely or not at all, and why."""

    complete: bool
    verdicts: tuple[Verdict, ...]
    aggregation: Aggregation | None = None
    note: str | None = None  # why nothing is pushed when no single item is to blame


def is_averaged_sum(function: dict[str, Any], averaged: list[dict[str, Any]]) -> bool:
    """Whether an offered SUM is the one Spark made of an offered AVG (the same argument and
    DISTINCT): Spark's AVG adds doubles, so such a SUM is pushed only where the two agree."""
    return str(function.get("fn")) == "SUM" and any(
        bool(a.get("distinct")) == bool(function.get("distinct"))
        and (a.get("args") or []) == (function.get("args") or [])
        for a in averaged
    )


def key_label(expression: Any) -> str:
    """A grouping key as a verdict shows it (``GROUP BY i``)."""
    return f"GROUP BY {_shown(expression)}"


def function_label(function: dict[str, Any]) -> str:
    """An offered aggregate function as a verdict shows it (``count(*)``, ``sum(DISTINCT d)``)."""
    name = str(function.get("fn", "?"))
    args = function.get("args") or []
    label = "count" if name == "COUNT_STAR" else name.lower()
    keyword = "DISTINCT " if function.get("distinct") else ""
    return f"{label}({keyword}{', '.join(_shown(a) for a in args) if args else '*'})"


def _shown(expression: Any) -> str:
    if isinstance(expression, dict) and isinstance(expression.get("ref"), list):
        return ".".join(map(str, expression["ref"]))
    if isinstance(expression, dict) and isinstance(expression.get("tree"), exp.Expression):
        return str(expression["tree"].sql(dialect="spark"))
    if isinstance(expression, dict) and "refused" in expression:
        return "(an expression)"
    if isinstance(expression, dict) and "op" in expression:
        try:
            return v2.to_tree(expression).sql(dialect="spark")
        except (Unsupported, KeyError, TypeError, ValueError):
            pass
    if isinstance(expression, dict):
        return str(expression.get("op") or expression.get("lit") or "?")
    return repr(expression)[:100]
