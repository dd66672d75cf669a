"""The aggregate part of a Sluice Flight request (docs/flight.md, "Aggregates"): what it means.

``{"group_by": [expression], "aggregates": [{"function": f, "args": [expression], "distinct":
bool}], "ansi": bool}`` (read by :func:`sluice.flight.protocol.parse_request`): the grouping
keys and aggregate functions Spark offered a scan, keys and arguments spelled as the filter's
expressions (:mod:`sluice.flight.filter_json`). ``function`` is ``count_star`` (no argument),
``count``, ``sum``, ``min`` or ``max``; ``ansi`` is Spark's ``spark.sql.ansi.enabled`` (a
``SUM`` is answered only under ANSI).

A server answers it as its source's own planner answers Spark (:func:`offered` is Spark's
offer in the planner's form, decided by the source): completely (the stream is the grouped
answer: the keys, then the functions, in the request's order) or not at all (the stream is
the filtered rows), with a verdict per key and function. Each output has the Spark type
:func:`read_type` names, which the client checks: Spark casts it to its own result type
(``SUM`` is read as ``decimal(38,s)``). A client sends an aggregate only to a server whose
``sluice.capabilities`` list ``aggregate``, and only when every conjunct is EXACT there.
"""

from __future__ import annotations

import json
from typing import Any

from sluice.flight import filter_json
from sluice.flight.protocol import AGGREGATE_FUNCTIONS, MAX_AGGREGATE_ITEMS, Aggregate, AggregateFunction
from sluice.pushdown.pushed import Pushed
from sluice.pushdown.terms import Unsupported
from sluice.scan.aggregation import Aggregation
from sluice.types import Kind, SparkType, TableSchema

#: what this server takes as a grouping key or an argument: a column, or an expression of the
#: filter format whose type the format tells (:func:`sluice.flight.filter_json.type_of`), pushed
#: where the source's classifier translates it exactly
ARGUMENTS = ("column", "expression")


def capabilities() -> dict[str, Any]:
    """What ``sluice.capabilities`` says of aggregates."""
    return {
        "functions": list(AGGREGATE_FUNCTIONS),
        "distinct": ["count", "max", "min", "sum"],
        "arguments": list(ARGUMENTS),
        "max_items": MAX_AGGREGATE_ITEMS,
    }


def offered(aggregate: Aggregate, table: TableSchema) -> dict[str, Any]:
    """The aggregate as Spark offers one to the planner (:func:`sluice.planner.aggregates.decide`):
    a column is ``{"ref": [name]}``, another expression ``{"tree": <its Spark SQL tree>}`` (read
    against the table as a filter's: a malformed one is a :class:`RequestError`); the planner
    decides it as it decides Spark's own expressions."""
    return {
        "group_by": [_expression(key, table) for key in aggregate.group_by],
        "aggregates": [
            {
                "fn": function.function.upper(),
                "distinct": function.distinct,
                "args": [_expression(arg, table) for arg in function.args],
            }
            for function in aggregate.aggregates
        ],
    }


def _expression(node: dict[str, Any], table: TableSchema) -> dict[str, Any]:
    if set(node) == {"column"} and isinstance(node["column"], str):
        return {"ref": [filter_json.column_name(table, node["column"])]}
    if filter_json.type_of(node, table) is None:  # the client could not check the type it streams
        return {"refused": f"the type of {json.dumps(node)[:200]} is not one the format tells"}
    try:
        return {"tree": filter_json.decode(node, table)}
    except Unsupported as reason:
        return {"refused": str(reason)}


def read_type(item: dict[str, Any] | AggregateFunction, table: TableSchema) -> SparkType | None:
    """The Spark type a grouping key or function is streamed as (None: an expression whose type the
    format does not tell). ``COUNT`` is ``bigint``; ``SUM`` of an integral or ``decimal(p,s)``
    operand ``decimal(38,s)`` (Spark casts it to ``bigint`` / ``decimal(p+10,s)``, raising on
    overflow as its own ``SUM`` does); a key, ``MIN`` and ``MAX`` the operand's type."""
    if isinstance(item, AggregateFunction):
        if item.function in ("count", "count_star"):
            return SparkType("bigint")
        operand = filter_json.type_of(item.args[0], table)
        if operand is None or item.function != "sum":
            return operand
        scale = operand.precision_scale[1] if operand.kind is Kind.DECIMAL else 0
        return SparkType(f"decimal(38,{scale})")
    return filter_json.type_of(item, table)


def argument(node: dict[str, Any]) -> Pushed:
    """A grouping key or argument the server accepted, as a pushed aggregate carries it."""
    return Pushed(flight={"expr": node})


def request(aggregation: Aggregation) -> Aggregate:
    """The aggregate part of a planned scan's request, written from the scan's aggregate (the
    same outputs a SQL source renders): the keys, then the functions, in the planned order.
    ``ansi`` is sent true: a pushed aggregation holds a SUM only when it was planned under
    ANSI, and nothing else depends on it."""
    keys = tuple(key.argument.flight_expression()["expr"] for key in aggregation.group_by if key.argument is not None)
    functions = tuple(
        AggregateFunction(
            output.function.lower(),
            (output.argument.flight_expression()["expr"],) if output.argument is not None else (),
            output.distinct,
        )
        for output in aggregation.outputs
        if output.function is not None
    )
    return Aggregate(keys, functions, True)
