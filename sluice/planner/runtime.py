"""Runtime filters: the join keys Spark found on one side restrict the scan of the other.

When Spark joins a Sluice scan with a selective side it broadcasts, it hands the scan the
keys it found as ``key IN (v1, v2, ...)`` before the read (``SupportsRuntimeV2Filtering``,
Spark's dynamic pruning). The scan is planned again with that predicate classified like any
filter: pushed where the source evaluates it exactly or as a superset, dropped otherwise.
Spark still joins, so pushing it is always safe; a key it drops is simply read.

The list is bounded: past :data:`MAX_VALUES` values it becomes the range of the values
(``key >= min AND key <= max``, a superset), which any source evaluates cheaply. Ranges are
taken in Spark's order of the type: numbers and dates by value, text by UTF-8 bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from sluice.types import Column, Kind

#: the longest IN list a runtime filter pushes as such (about 100 KB of SQL at most)
MAX_VALUES = 10_000
#: kinds whose join keys a runtime filter may restrict (a float key's -0.0/NaN join rules are Spark's)
KINDS = (Kind.INTEGRAL, Kind.DECIMAL, Kind.DATE, Kind.STRING, Kind.TIMESTAMP, Kind.TIMESTAMP_NTZ)
_ORDER: dict[Kind, Callable[[str], Any]] = {
    Kind.INTEGRAL: int,
    Kind.DATE: int,
    Kind.TIMESTAMP: int,
    Kind.TIMESTAMP_NTZ: int,
    Kind.DECIMAL: Decimal,
    Kind.STRING: lambda text: text.encode("utf-8", "surrogatepass"),
}


def clipped(text: str, width: int = 200) -> str:
    """A runtime filter as EXPLAIN shows it: thousands of join keys are not worth a screen."""
    return text if len(text) <= width else f"{text[:width]}... ({len(text):,} characters)"


def filterable(columns: list[Column]) -> list[str]:
    """The read columns Spark may restrict at run time."""
    return [column.name for column in columns if column.type.kind in KINDS]


def bounded(predicate: Any, kind_of: Callable[[str], Kind | None]) -> tuple[Any, str | None]:
    """``predicate`` as offered, or, for an IN list longer than :data:`MAX_VALUES`, the range of its
    values, with a note saying so. ``kind_of`` gives a referenced column's kind."""
    if not isinstance(predicate, dict) or predicate.get("op") != "IN":
        return predicate, None
    args = predicate.get("args") or []
    values = [a for a in args[1:] if isinstance(a, dict) and a.get("lit") is not None]
    if len(args) - 1 <= MAX_VALUES or not args or not isinstance(args[0].get("ref"), list):
        return predicate, None
    kind = kind_of(str(args[0]["ref"][0]))
    if kind not in _ORDER or not values:
        return predicate, None
    key = _ORDER[kind]
    low = min(values, key=lambda v: key(v["lit"]))
    high = max(values, key=lambda v: key(v["lit"]))
    ranged = {"op": "AND", "args": [{"op": ">=", "args": [args[0], low]}, {"op": "<=", "args": [args[0], high]}]}
    return ranged, f"{len(args) - 1:,} join keys pushed as their range (more than {MAX_VALUES:,})"


#: V2 predicates Spark's ``PredicateHelper.isLikelySelective`` calls selective (comparisons, IN, string predicates)
_SELECTIVE_OPS = frozenset({"=", "<>", "!=", "<=>", "<", "<=", ">", ">=", "IN", "STARTS_WITH", "ENDS_WITH", "CONTAINS"})


def likely_selective(predicate: Any) -> bool:
    """Whether Spark's dynamic pruning would call ``predicate`` (a V2 predicate as JSON) likely selective,
    had it kept it in a ``Filter``: Spark 4.3's ``isLikelySelective``, over the V2 names of its cases
    (``NOT`` of a selective one; ``AND`` when any operand is, ``OR`` when every operand is). Anything
    else is not (Spark's ``case _ => false``), so a scan is never called selective where Spark would not."""
    if not isinstance(predicate, dict):
        return False
    op, args = predicate.get("op"), predicate.get("args") or []
    if not isinstance(op, str) or not isinstance(args, list):  # not a predicate Spark sends: not selective
        return False
    if op == "NOT":
        return len(args) == 1 and likely_selective(args[0])
    if op == "AND":
        return any(likely_selective(a) for a in args)
    if op == "OR":
        return bool(args) and all(likely_selective(a) for a in args)
    return op in _SELECTIVE_OPS
