"""The JVM-planner protocol (sluice/protocol): every message round-trips through the JSON that
crosses py4j and validates against the committed schema; the schema and Java's key names are
what the dataclasses generate; a malformed request fails naming its method and key."""

from __future__ import annotations

import dataclasses
import json
import re
import types
import typing
from pathlib import Path
from typing import Any, cast

import pytest
from jsonschema import Draft202012Validator

from sluice.protocol.base import ErrorAnswer
from sluice.protocol.codec import ProtocolError, decode, encode, hints, is_optional, wire_fields
from sluice.protocol.scan import JoinRequest
from sluice.spark.bridge import CALLBACK, METHODS
from tools import protocol_schema

ROOT = Path(__file__).resolve().parents[2]
JAVA = ROOT / "java" / "io" / "sluice" / "spark"
MESSAGES = sorted(
    {t for m in METHODS.values() for t in (m.request, m.answer)} | {ErrorAnswer}, key=lambda t: t.__name__
)


def sample(hint: Any, full: bool) -> Any:
    """A value of type ``hint``; ``full``: every optional key set too."""
    if hint is Any:
        return {"any": [1, "two"]}
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        return sample(next(a for a in typing.get_args(hint) if a is not type(None)), full)
    if origin is list:
        return [sample(typing.get_args(hint)[0], full)]
    if origin is dict:
        return {"key": sample(typing.get_args(hint)[1], full)}
    if dataclasses.is_dataclass(hint):
        return message(hint, full)  # type: ignore[arg-type]  # is_dataclass narrows to a class here
    return {str: "text", int: 7, float: 0.5, bool: True}[hint]


def message(cls: type, full: bool) -> Any:
    types_of = hints(cls)
    return cls(**{f.name: sample(types_of[f.name], full) for f in wire_fields(cls) if full or not is_optional(f)})


def validator() -> Draft202012Validator:
    return Draft202012Validator(json.loads((ROOT / "sluice" / "protocol" / "schema.json").read_text()))


@pytest.mark.parametrize("full", [True, False], ids=["every key", "required keys"])
@pytest.mark.parametrize("cls", MESSAGES, ids=lambda cls: cls.__name__)
def test_every_message_round_trips_through_json_and_validates_against_the_schema(cls: type, full: bool) -> None:
    original = message(cls, full)
    wire = json.loads(json.dumps(encode(original)))
    # validated as the committed schema's definition of the message (its references resolve in that schema)
    whole = cast(dict[str, Any], validator().schema)  # jsonschema types a schema as bool | Mapping
    errors = [e.message for e in Draft202012Validator({**whole, "$ref": f"#/$defs/{cls.__name__}"}).iter_errors(wire)]
    assert errors == []
    assert decode(cls, wire, cls.__name__) == original


def test_the_committed_schema_and_protocol_java_are_what_the_dataclasses_generate() -> None:
    assert (ROOT / "sluice" / "protocol" / "schema.json").read_text() == protocol_schema.render_schema(), (
        "stale: run python -m tools.protocol_schema"
    )
    assert (JAVA / "Protocol.java").read_text() == protocol_schema.render_java(), (
        "stale: run python -m tools.protocol_schema"
    )


def test_the_java_constants_are_the_schema_keys_and_methods() -> None:
    schema = json.loads((ROOT / "sluice" / "protocol" / "schema.json").read_text())
    java = (JAVA / "Protocol.java").read_text()
    methods_part, keys_part = java.split("class Key")
    keys_part = keys_part.split("REQUIRED_ANSWER_KEYS")[0]
    constant = re.compile(r'static final String \w+ = "(\w+)";')
    schema_keys = {key for definition in schema["$defs"].values() for key in definition["properties"]}
    assert set(constant.findall(keys_part)) == schema_keys
    assert set(constant.findall(methods_part)) == set(schema["methods"]) == set(METHODS)


def test_java_reads_no_protocol_key_or_method_by_a_string_literal() -> None:
    """Keys of the protocol's messages and method names come from Protocol.java (payload keys
    such as a predicate's ``op`` or a verdict's ``level`` belong to their own formats)."""
    keys = set(protocol_schema.keys())
    receivers = r"(?:request|answer|plan|node|side|named|again|described|error|table|pushedJoin)"
    access = re.compile(
        receivers + r'\s*\.\s*(?:put|set|putArray|putObject|putNull|path|has|hasNonNull|get)\(\s*"(\w+)"'
    )
    calls = re.compile(r'Bridge\.(?:call|callUnchecked|callForNamespace|answered)\(\s*"(\w+)"|\)\.path\(\s*"(\w+)"')
    found = []
    # Expressions.java writes predicates, VectorBatch.java reads the vectorised read's plan: formats of their own
    for path in sorted(p for p in JAVA.glob("*.java") if p.name not in ("Expressions.java", "VectorBatch.java")):
        text = path.read_text()
        found += [f"{path.name}: {k}" for k in access.findall(text) if k in keys]
        found += [f"{path.name}: {m or k}" for m, k in calls.findall(text) if m or (k in keys)]
    assert found == []


def test_every_handler_takes_its_methods_request_and_answers_its_answer() -> None:
    for name, method in METHODS.items():
        annotations = typing.get_type_hints(method.handler)
        assert annotations["request"] is method.request, name
        assert annotations["return"] is method.answer, name


def test_a_missing_key_names_the_method_and_the_key() -> None:
    with pytest.raises(ProtocolError, match=r"^the 'join' request: key 'left\.table' is missing$"):
        decode(JoinRequest, {"left": {}, "right": {}, "join_type": "INNER_JOIN"}, "the 'join' request")


def test_an_ill_typed_or_unknown_key_names_the_method_and_the_key() -> None:
    side = {"table": {}, "columns": [{"name": 1}]}
    with pytest.raises(ProtocolError, match=r"key 'left\.columns\[0\]\.name' is a number, expected a string"):
        decode(JoinRequest, {"left": side, "right": side, "join_type": "INNER_JOIN"}, "the 'join' request")
    with pytest.raises(ProtocolError, match=r"unknown key 'same_sauce'"):
        decode(JoinRequest, {"same_sauce": True}, "the 'join' request")


def test_the_bridge_answers_a_malformed_request_with_an_error_naming_method_and_key() -> None:
    answer = json.loads(CALLBACK.call("plan", json.dumps({"catalog": "pg", "columns": ["id"]})))
    assert answer == {
        "error": {"kind": "error", "message": "ProtocolError: the 'plan' request: key 'table' is missing"}
    }
    unknown = json.loads(CALLBACK.call("vacuum", "{}"))
    assert unknown == {"error": {"kind": "error", "message": "the Sluice planner has no method 'vacuum'"}}
