"""The aggregate part of a Flight request: the types each output streams in (what the client
checks), the server's reading of it into the planner's form, and the server's decision with
the source's own rules (no server, no Spark)."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest
from sqlglot import exp

from fuzz.parsers.tables import TABLES
from sluice.flight import aggregate_json, protocol
from sluice.flight.protocol import Aggregate, AggregateFunction, RequestError
from sluice.planner import aggregates
from sluice.pushdown.levels import Level
from sluice.scan.aggregation import Aggregation, Output, key_label
from sluice.sources.postgres import PostgresSource
from sluice.types import SparkType

pytestmark = pytest.mark.unit

PG = TABLES["pg"]
_MOD = {"op": "%", "args": [{"column": "i"}, {"literal": 10, "type": "int"}]}
_SUBSTRING = {"op": "substring", "args": [{"column": "s"}, {"literal": 1, "type": "int"}]}


@pytest.mark.parametrize(
    "item,expected",
    [
        (AggregateFunction("count_star"), "bigint"),
        (AggregateFunction("count", ({"column": "s"},), True), "bigint"),
        (AggregateFunction("sum", ({"column": "i"},)), "decimal(38,0)"),
        (AggregateFunction("sum", ({"column": "D"},)), "decimal(38,2)"),
        (AggregateFunction("sum", (_MOD,)), "decimal(38,0)"),
        (AggregateFunction("min", ({"column": "s"},)), "string"),
        (AggregateFunction("max", ({"column": "ts"},)), "timestamp"),
        ({"column": "dt"}, "date"),
        (_MOD, "int"),
        ({"op": "length", "args": [{"column": "s"}]}, "int"),
    ],
)
def test_each_output_streams_in_the_protocol_s_type(item: Any, expected: str) -> None:
    assert aggregate_json.read_type(item, PG) == SparkType(expected)


def test_an_expression_whose_type_the_format_does_not_tell_has_no_read_type() -> None:
    assert aggregate_json.read_type(_SUBSTRING, PG) is None
    assert aggregate_json.read_type(AggregateFunction("max", (_SUBSTRING,)), PG) is None


def test_the_server_reads_the_aggregate_as_spark_offers_one() -> None:
    aggregate = Aggregate(
        ({"column": "S"}, _MOD, _SUBSTRING),
        (AggregateFunction("count_star"), AggregateFunction("sum", ({"column": "d"},), True)),
    )
    offered = aggregate_json.offered(aggregate, PG)
    column, expression, untyped = offered["group_by"]
    assert column == {"ref": ["s"]}  # the table's own spelling
    assert isinstance(expression["tree"], exp.Expression) and expression["tree"].sql("spark") == "`i` % 10"
    assert "does not tell" in untyped["refused"] or "not one the format tells" in untyped["refused"]
    assert offered["aggregates"] == [
        {"fn": "COUNT_STAR", "distinct": False, "args": []},
        {"fn": "SUM", "distinct": True, "args": [{"ref": ["d"]}]},
    ]
    with pytest.raises(RequestError, match="unknown column 'nope'"):
        aggregate_json.offered(Aggregate(({"column": "nope"},), (AggregateFunction("count_star"),)), PG)


def test_the_server_decides_with_the_source_s_rules() -> None:
    source = PostgresSource("pg", "postgresql://u@localhost/db")
    aggregate = Aggregate(
        (_MOD, {"column": "c"}),
        (AggregateFunction("count_star"), AggregateFunction("sum", ({"column": "d"},))),
    )
    decision = aggregates.answer(source, PG, aggregate_json.offered(aggregate, PG), [], True, "UTC")
    assert decision.complete, decision.verdicts
    assert decision.aggregation is not None
    assert [o.type for o in decision.aggregation.outputs] == [
        aggregate_json.read_type(item, PG)
        for item in cast(tuple[dict[str, Any] | AggregateFunction, ...], (*aggregate.group_by, *aggregate.aggregates))
    ]
    floats = Aggregate(({"column": "f"},), (AggregateFunction("count_star"),))
    refused = aggregates.answer(source, PG, aggregate_json.offered(floats, PG), [], True, "UTC")
    assert not refused.complete and refused.verdicts[0].level is Level.UNSUPPORTED
    assert "-0.0" in refused.verdicts[0].reason
    untyped = Aggregate((_SUBSTRING,), (AggregateFunction("count_star"),))
    refused = aggregates.answer(source, PG, aggregate_json.offered(untyped, PG), [], True, "UTC")
    assert not refused.complete and refused.verdicts[0].sql == key_label({"refused": ""})


def test_a_request_with_an_aggregate_round_trips() -> None:
    request = protocol.Request(
        ("pg", "t"),
        session_zone="Europe/Paris",
        aggregate=Aggregate(({"column": "i"},), (AggregateFunction("max", ({"column": "s"},), True),), False),
    )
    assert protocol.parse_request(request.to_json()) == request
    assert json.loads(request.to_json())["aggregate"]["aggregates"] == [
        {"function": "max", "args": [{"column": "s"}], "distinct": True}
    ]


def test_the_read_s_request_is_written_from_the_scan_s_outputs() -> None:
    """A Flight scan carries its aggregate as outputs (a key, or a function over its argument's
    filter-format expression), serialised with the scan; the read's request is written from them."""
    outputs = (
        Output("k0", SparkType("int"), argument=aggregate_json.argument(_MOD)),
        Output("k1", SparkType("bigint"), "COUNT_STAR"),
        Output("k2", SparkType("bigint"), "COUNT", aggregate_json.argument({"column": "s"}), True, column="s"),
    )
    aggregation = Aggregation(outputs)
    carried = Aggregation.from_dict(json.loads(json.dumps(aggregation.to_dict())))
    assert carried == aggregation
    assert aggregate_json.request(carried) == Aggregate(
        (_MOD,), (AggregateFunction("count_star"), AggregateFunction("count", ({"column": "s"},), True)), True
    )
