"""Flight requests checked against the JSON Schema Sluice publishes (docs/flight-filter.schema.json,
shipped in the package as ``flight-filter.schema.json``), with the ``jsonschema`` library.

A request the schema rejects is refused with one error naming the JSON path of what is
wrong (:func:`sluice.flight.protocol.parse_request`), worded by the typed checks where they
have words for it (they know what a value means: a time zone, a count, a filter's format),
by the schema otherwise. So the published schema is binding: the schema and the server
cannot drift apart (tests/unit/test_flight_request_schema.py holds them to each other). The validator is built once (checking a typical request costs
tens of microseconds; docs/flight.md has the figure).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

SCHEMA_FILE = "flight-filter.schema.json"
#: definitions that refer to themselves (through others): kept as references
_RECURSIVE = frozenset({"expression"})
#: how much of a schema message an error shows, and of a value it quotes
_SHOWN = 300
_QUOTED = 60


@cache
def validator() -> Draft202012Validator:
    """The compiled validator of the published schema (read once from the package)."""
    schema = json.loads(resources.files("sluice.flight").joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(_inlined(schema, schema["$defs"]))


def _inlined(node: Any, definitions: dict[str, Any]) -> Any:
    """``node`` with every ``$ref`` to a definition that is not recursive replaced by the
    definition itself: the same schema, checked without resolving a reference per node
    (jsonschema resolves one per node it descends into: a fifth of a typical request's cost)."""
    if isinstance(node, list):
        return [_inlined(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    reference = node.get("$ref", "")
    name = reference.removeprefix("#/$defs/")
    if len(node) == 1 and name in definitions and name not in _RECURSIVE:
        return _inlined(definitions[name], definitions)
    return {key: _inlined(value, definitions) for key, value in node.items()}


@dataclass(frozen=True)
class Mismatch:
    """Where a request departs from the schema (a JSON path such as ``$.filter.conjuncts[0].op``) and how."""

    path: str
    message: str


def problem(request: Any) -> Mismatch | None:
    """The most relevant way ``request`` (parsed JSON) departs from the schema, or None."""
    try:
        error = best_match(validator().iter_errors(request))
    except RecursionError:  # the validator recurses per level; the typed checks bound real filters' depth
        return Mismatch("$", "the request is nested too deeply to check against the published schema")
    if error is None:
        return None
    while error.context:  # "not valid under any of the given schemas": say what the nearest branch lacks
        error = best_match(error.context) or error
        if error.validator not in ("oneOf", "anyOf"):
            break
    return Mismatch(error.json_path, _worded(error))


def _worded(error: ValidationError) -> str:
    """The schema's message, with a long quoted value shortened (the path already says where)."""
    quoted = repr(error.instance)
    message = error.message
    if len(quoted) > _QUOTED and message.startswith(quoted):
        message = f"{quoted[:_QUOTED]}...{message[len(quoted) :]}"
    return message if len(message) <= _SHOWN else message[:_SHOWN] + "..."
