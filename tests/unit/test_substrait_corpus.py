"""The Substrait decoder on a recorded corpus: the answers of the hand-written wire decoder
it replaced (sluice/flight/protobuf.py, recorded before the swap to the published
``substrait`` classes) on every filter shape the tests use, the fuzz campaign's pinned
inputs and 1,300 seeded mutants of the fuzz generator (flips, truncation, splicing, varint
bombs, deep nesting).

Producers' messages decode exactly as before. On mutants: a message the old decoder refused
is refused (with the same words, unless the bytes are malformed: protobuf reads the whole
message first, so malformed bytes anywhere are reported as such); a message it accepted gives
the same conjuncts, unless it is malformed in a part the old decoder never read (refused now)
or sets a non-repeated field or a oneof twice (protobuf merges or keeps the last, as its spec says).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from substrait import algebra_pb2, extended_expression_pb2

from fuzz.parsers import wire
from fuzz.parsers.tables import TABLES
from sluice.flight import substrait
from sluice.flight.protocol import RequestError
from tests.unit.test_flight_substrait import TABLE

pytestmark = pytest.mark.unit

CORPUS = json.loads((Path(__file__).parent / "data" / "substrait_corpus.json").read_text())
#: the old decoder's wire-format errors: protobuf finds these when parsing, in its own words
_WIRE_ERRORS = ("is not a valid ExtendedExpression message", "is malformed: ")
#: the messages as producers wrote them (pyarrow and the fuzz seeds), before the mutants
_UNMUTATED = 20
#: a function anchor past uint32 (Substrait's type for it), which protobuf truncates: the
#: message names the truncated number where the old decoder named the sent one
_TRUNCATED_ANCHOR = "function reference 9223372036854775807"


def _answer(message: bytes, table: Any) -> Any:
    try:
        return [
            [c.tree.sql("spark") if c.tree is not None else None, c.label, c.reason]
            for c in substrait.decode_filter(message, table)
        ]
    except RequestError as error:
        return {"error": str(error)}


def _refused_as_malformed(answer: Any) -> bool:
    return isinstance(answer, dict) and _WIRE_ERRORS[0] in answer["error"]


def _sets_a_field_twice(data: bytes, kind: Any = extended_expression_pb2.ExtendedExpression) -> bool:
    """Whether a non-repeated field, or a second member of a oneof, occurs twice somewhere in
    ``data``: protobuf merges a message's copies and keeps the last member of a oneof (as its
    spec says), where the old decoder kept the last copy and read the oneof's members in order."""
    fields = wire.decode(data) or []
    declared = kind.DESCRIPTOR.fields_by_number
    slots = Counter(
        (field.containing_oneof.name if field.containing_oneof else field.name)
        for field in (declared.get(number) for number, _, _ in fields)
        if field is not None and not field.is_repeated
    )
    if any(count > 1 for count in slots.values()):
        return True
    for number, wire_type, value in fields:
        field = declared.get(number)
        if field is None or field.message_type is None or wire_type != 2:
            continue
        nested = wire.encode(value) if isinstance(value, list) else value
        if _sets_a_field_twice(nested, field.message_type._concrete_class):
            return True
    return False


def _difference(message: bytes, old: Any, new: Any) -> str | None:
    """Why ``new`` is not an acceptable answer where the old decoder gave ``old``, or None."""
    if old == new:
        return None
    if isinstance(old, dict):
        if not isinstance(new, dict):
            return "the old decoder refused it, the new one accepts it"
        if any(marker in old["error"] for marker in _WIRE_ERRORS) or _refused_as_malformed(new):
            return None  # malformed bytes: refused by both, protobuf reading the whole message first
        return None if _TRUNCATED_ANCHOR in old["error"] else "a different error"
    if _refused_as_malformed(new):
        return None  # malformed bytes in a part the old decoder never read
    return None if _sets_a_field_twice(message) else "different conjuncts"


def test_the_corpus_covers_accepted_and_refused_messages() -> None:
    assert len(CORPUS) > 1000
    assert sum(isinstance(entry["pg"], list) for entry in CORPUS) > 300
    assert sum(isinstance(entry["pg"], dict) for entry in CORPUS) > 300


@pytest.mark.parametrize("table", ["pg", "test"])
def test_producers_messages_decode_exactly_as_before(table: str) -> None:
    schema = TABLES["pg"] if table == "pg" else TABLE
    for entry in CORPUS[:_UNMUTATED]:
        if not any(marker in str(entry[table]) for marker in _WIRE_ERRORS):
            assert _answer(bytes.fromhex(entry["message"]), schema) == entry[table]


@pytest.mark.parametrize("table", ["pg", "test"])
def test_the_library_decoder_answers_as_the_hand_written_one_did(table: str) -> None:
    schema = TABLES["pg"] if table == "pg" else TABLE
    different = []
    for entry in CORPUS:
        message = bytes.fromhex(entry["message"])
        answer = _answer(message, schema)
        why = _difference(message, entry[table], answer)
        if why is not None:
            different.append(f"{entry['message'][:80]}: {why}\n  old {entry[table]}\n  new {answer}")
    assert not different, "\n".join(different[:10])


def _nested_not(depth: int) -> bytes:
    """``not(not(...(true)))``, ``depth`` calls deep, as a Substrait producer nests it."""
    message = extended_expression_pb2.ExtendedExpression()
    declaration = message.extensions.add().extension_function
    declaration.function_anchor, declaration.name = 1, "not:bool"
    expression = algebra_pb2.Expression()
    expression.literal.boolean = True
    for _ in range(depth):
        call = algebra_pb2.Expression()
        call.scalar_function.function_reference = 1
        call.scalar_function.arguments.add().value.CopyFrom(expression)
        expression = call
    reference = message.referred_expr.add()
    reference.expression.CopyFrom(expression)
    reference.output_names.append("e")
    return message.SerializeToString()


def test_nesting_is_bounded_by_protobufs_limit_of_100_messages() -> None:
    """The one refusal of valid input the swap brought: upb parses at most 100 nested messages
    (not configurable) and each expression level is three (Expression, ScalarFunction,
    FunctionArgument), so 32 levels pass where the hand-written decoder took 64. pyarrow cannot
    write such a message anyway: its serialisation grows exponentially with nesting (an OR of
    13 terms already passes the 1 MiB request limit)."""
    [conjunct] = substrait.decode_filter(_nested_not(32), TABLE)
    assert conjunct.tree is not None and conjunct.sql.count("NOT") == 32
    with pytest.raises(RequestError, match="nested past protobuf's limit of 100"):
        substrait.decode_filter(_nested_not(33), TABLE)
