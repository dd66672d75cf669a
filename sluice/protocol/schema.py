"""The protocol's JSON Schema, generated from its dataclasses (``python -m tools.protocol_schema``).

Both sides check messages against what is generated here: Python's :mod:`~sluice.protocol.codec`
by the same dataclasses, Java's ``Bridge`` by the required answer keys in ``Protocol.java``.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any

from sluice.protocol.base import ErrorAnswer
from sluice.protocol.codec import hints, is_optional, wire_fields
from sluice.protocol.methods import Method

SCHEMA_ID = "https://sluice.dev/schemas/planner-protocol.json"


def schema(methods: Mapping[str, Method[Any, Any]]) -> dict[str, Any]:
    """One definition per message; ``methods`` maps each method to its request and answer."""
    defs: dict[str, Any] = {}
    listed: dict[str, Any] = {}
    for name, method in sorted(methods.items()):
        listed[name] = {"request": _ref(method.request, defs), "answer": _ref(method.answer, defs)}
    error = _ref(ErrorAnswer, defs)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "Sluice's JVM-planner protocol (generated from sluice/protocol; do not edit)",
        "methods": listed,
        "error": error,
        "$defs": dict(sorted(defs.items())),
    }


def _ref(cls: type, defs: dict[str, Any]) -> dict[str, str]:
    if cls.__name__ not in defs:
        defs[cls.__name__] = {}  # placeholder: a message nested in itself refers back
        defs[cls.__name__] = _object(cls, defs)
    return {"$ref": f"#/$defs/{cls.__name__}"}


def _object(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    types_of = hints(cls)
    fields = wire_fields(cls)
    out: dict[str, Any] = {"type": "object"}
    doc = (cls.__doc__ or "").strip()
    if doc and not doc.startswith(f"{cls.__name__}("):  # not the dataclass's generated signature
        out["description"] = " ".join(doc.split())
    out["properties"] = {f.name: _type(types_of[f.name], defs) for f in fields}
    out["required"] = [f.name for f in fields if not is_optional(f)]
    out["additionalProperties"] = False
    return out


def _type(hint: Any, defs: dict[str, Any]) -> dict[str, Any]:
    if hint is Any:
        return {}
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        return {"anyOf": [_type(a, defs) for a in typing.get_args(hint)]}
    if origin is list:
        return {"type": "array", "items": _type(typing.get_args(hint)[0], defs)}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type(typing.get_args(hint)[1], defs)}
    if dataclasses.is_dataclass(hint):
        return _ref(hint, defs)  # type: ignore[arg-type]  # is_dataclass narrows to a class here
    return {"type": {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}[hint]}


def required_answer_keys(methods: Mapping[str, Method[Any, Any]]) -> dict[str, list[str]]:
    """Per method, the keys its answer always has (what the Java side checks before use)."""
    return {
        name: [f.name for f in wire_fields(method.answer) if not is_optional(f)]
        for name, method in sorted(methods.items())
    }
