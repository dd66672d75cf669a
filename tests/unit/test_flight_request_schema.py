"""The published JSON Schema of Flight requests (docs/flight-filter.schema.json) and the
server's typed decoder agree: every valid example validates and decodes; every invalid one is
refused by both, with one error naming the JSON path of what is wrong."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from fuzz.parsers.tables import TABLES
from fuzz.parsers.targets import TARGETS
from sluice.flight import airport, filter_json, protocol, request_schema, substrait
from sluice.flight.protocol import RequestError

pytestmark = pytest.mark.unit

DOCS_SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "flight-filter.schema.json"
_DECODERS: dict[str, Callable[..., object]] = {
    "sluice": filter_json.decode_filter,
    "airport": airport.decode_filter,
    "substrait": substrait.decode_filter,
}
_TABLE = ["pg", "public", "t"]


def _typed(data: Any) -> str | None:
    """The typed decoder's refusal of a parsed request (filter included), or None if it accepts it."""
    try:
        request = protocol.request_of(data)
        if request.filter is not None:
            _DECODERS[request.filter.format](request.filter.body, TABLES["pg"])
    except RequestError as error:
        return str(error)
    return None


def _sluice(*conjuncts: Any) -> dict[str, Any]:
    return {"table": _TABLE, "filter": {"format": "sluice", "conjuncts": list(conjuncts)}}


_LEAF = {"op": "=", "args": [{"column": "i"}, {"literal": 1, "type": "int"}]}
#: (request, the JSON path the error names, words of the error)
INVALID: list[tuple[Any, str, str]] = [
    ({"table": "pg"}, "$.table", "table must be a Flight path"),
    ({"table": []}, "$.table", "table must be a Flight path"),
    ({"table": _TABLE, "limit": -1}, "$.limit", "limit must be an integer at least 0"),
    ({"table": _TABLE, "partitions": 65}, "$.partitions", "between 1 and 64"),
    ({"table": _TABLE, "colour": "red"}, "$", "unknown key(s) colour"),
    ({"table": _TABLE, "version": 2}, "$.version", "version 2"),
    ({"table": _TABLE, "session_zone": 3}, "$.session_zone", "session_zone must be a time zone name"),
    ({"table": _TABLE, "filter": {"format": "substrait", "base64": 5}}, "$.filter.base64", "substrait filter is"),
    ({"table": _TABLE, "filter": {"format": "csv"}}, "$.filter", "format is one of"),
    (_sluice({"op": "bogus", "args": []}), "$.filter.conjuncts[0].op", "is not one of"),
    (_sluice({"literal": 1}), "$.filter.conjuncts[0]", "'type' is a required property"),
    (_sluice({"op": "=", "args": {"column": "i"}}), "$.filter.conjuncts[0].args", "is not of type 'array'"),
    (_sluice({"op": "opaque", "args": [_LEAF], "sql": "x"}), "$.filter.conjuncts[0].args", "is expected to be empty"),
    (_sluice({"op": "cast", "args": [{"column": "i"}]}), "$.filter.conjuncts[0]", "'type' is a required property"),
    (_sluice({"column": ""}), "$.filter.conjuncts[0].column", "should be non-empty"),
    ({"table": _TABLE, "filter": {"format": "sluice", "conjuncts": [_LEAF] * 1025}}, "$.filter.conjuncts", "too long"),
    (
        {"table": _TABLE, "aggregate": {"aggregates": [{"function": "avg", "args": [{"column": "i"}]}]}},
        "$.aggregate.aggregates[0].function",
        "an aggregate function is",
    ),
    ({"table": _TABLE, "aggregate": {"group_by": [{"column": "i"}]}}, "$.aggregate", "non-empty list"),
    (
        {"table": _TABLE, "aggregate": {"aggregates": [{"function": "count_star", "args": [{"column": "i"}]}]}},
        "$.aggregate.aggregates[0].args",
        "takes 0 argument(s)",
    ),
    (
        {"table": _TABLE, "aggregate": {"aggregates": [{"function": "sum"}]}},
        "$.aggregate.aggregates[0]",
        "takes 1 argument(s)",
    ),
    (
        {"table": _TABLE, "aggregate": {"aggregates": [{"function": "count_star"}], "ansi": "yes"}},
        "$.aggregate.ansi",
        "ansi must be true or false",
    ),
    (
        {"table": _TABLE, "limit": 3, "aggregate": {"aggregates": [{"function": "count_star"}]}},
        "$.limit",
        "takes no limit",
    ),
]

#: requests with an aggregate the schema and the server both take
AGGREGATES: list[dict[str, Any]] = [
    {"table": _TABLE, "aggregate": {"aggregates": [{"function": "count_star"}]}},
    {
        "table": _TABLE,
        "columns": ["i"],
        "filter": {"format": "sluice", "conjuncts": [_LEAF]},
        "aggregate": {
            "group_by": [{"column": "s"}, {"op": "%", "args": [{"column": "i"}, {"literal": 10, "type": "int"}]}],
            "aggregates": [
                {"function": "count_star", "args": []},
                {"function": "count", "args": [{"column": "i"}], "distinct": True},
                {"function": "sum", "args": [{"column": "d"}]},
                {"function": "min", "args": [{"column": "s"}]},
                {"function": "max", "args": [{"column": "i"}], "distinct": False},
            ],
            "ansi": False,
        },
    },
]


def test_the_docs_publish_the_schema_the_server_checks() -> None:
    packaged = resources.files("sluice.flight").joinpath(request_schema.SCHEMA_FILE).read_text(encoding="utf-8")
    assert DOCS_SCHEMA.read_text(encoding="utf-8") == packaged


@pytest.mark.parametrize("target", ["flight-json", "airport", "substrait"])
def test_every_valid_example_validates_and_decodes(target: str) -> None:
    for seed in TARGETS[target].seeds():
        data = json.loads(seed)
        assert request_schema.problem(data) is None, seed
        assert _typed(data) is None, seed
        protocol.parse_request(seed)


@pytest.mark.parametrize("request_json", AGGREGATES)
def test_aggregates_validate_and_decode(request_json: dict[str, Any]) -> None:
    assert request_schema.problem(request_json) is None
    request = protocol.parse_request(json.dumps(request_json).encode())
    assert request.aggregate is not None
    assert json.loads(request.to_json())["aggregate"]["aggregates"][0]["function"] == "count_star"


@pytest.mark.parametrize("request_json,path,words", INVALID, ids=[p + " " + w for _, p, w in INVALID])
def test_every_invalid_example_is_refused_by_both_naming_its_path(request_json: Any, path: str, words: str) -> None:
    mismatch = request_schema.problem(request_json)
    assert mismatch is not None and mismatch.path == path
    assert _typed(request_json) is not None
    with pytest.raises(RequestError) as refused:
        protocol.parse_request(json.dumps(request_json).encode())
    assert str(refused.value).startswith(f"at {path}: ") and words in str(refused.value)


@pytest.mark.parametrize("target", ["flight-json", "airport", "substrait"])
def test_no_mutant_the_decoder_accepts_is_refused_by_the_schema(target: str) -> None:
    """Seeded mutants of the fuzz generators: the schema never refuses what the decoder takes
    (it would refuse a request the server used to serve); the decoder refuses more (a column
    the table lacks, an arity, a literal not of its type: what a schema cannot know)."""
    rng, pool = random.Random(20261125), TARGETS[target].seeds()
    accepted = 0
    for _ in range(400):
        try:
            data = json.loads(TARGETS[target].generate(rng, pool))
        except (ValueError, RecursionError):  # a mutant nested past what json reads
            continue
        if _typed(data) is None:
            accepted += 1
            assert request_schema.problem(data) is None, json.dumps(data)[:500]
    assert accepted > 10


def test_a_filter_nested_past_the_validators_recursion_is_refused_cleanly() -> None:
    node: dict[str, Any] = _LEAF
    for _ in range(300):
        node = {"op": "not", "args": [node]}
    with pytest.raises(RequestError):
        protocol.parse_request(json.dumps(_sluice(node)).encode())
