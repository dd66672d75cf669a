"""How each target's cases are made from its seeds (see :mod:`fuzz.parsers.mutate` for the
mutations themselves): SQL text, Flight requests in the JSON formats (most mutations land in
the filter's expressions), Substrait messages (structure-aware, then wrapped in a request)
and catalog files."""

from __future__ import annotations

import json
import random
from functools import lru_cache
from typing import Any, Callable

from fuzz.parsers import mutate, seeds, wire
from sluice.flight import filter_json


def sql(rng: random.Random, pool: list[bytes]) -> bytes:
    data = rng.choice(pool)
    for _ in range(rng.randint(1, 3)):
        data = mutate.mutate_sql(rng, data, pool)
    return data


# ---------------------------------------------------------------- flight JSON
def json_generator(seed_list: Callable[[], list[bytes]], vocabulary: list[str],
                    nested: Callable[[random.Random], Any]) -> Callable[[random.Random, list[bytes]], bytes]:
    donors = [subtree for seed in seed_list() for subtree in mutate.subtrees(json.loads(seed).get("filter") or {})]

    def generate(rng: random.Random, pool: list[bytes]) -> bytes:
        data = rng.choice(pool)
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.1:
                data = mutate.mutate_bytes(rng, data, pool)
                continue
            try:
                tree = json.loads(data)
            except (ValueError, RecursionError):
                data = mutate.mutate_bytes(rng, data, pool)
                continue
            inside = _expressions(tree) if rng.random() < 0.85 else None
            if isinstance(inside, (dict, list)) and inside:
                mutate.mutate_json_tree(rng, inside, vocabulary, nested, donors)
            else:
                tree = mutate.mutate_json_tree(rng, tree, vocabulary, nested, donors)
            data = mutate.dump_json(tree)
        if rng.random() < 0.05:
            data = b"path:" + b"\x00".join(rng.choice([b"pg", b"public", b"t", b"\xff", b"", b"lite", b"x" * 300])
                                           for _ in range(rng.randint(0, 4)))
        return data
    return generate


def _expressions(request: Any) -> Any:
    """The expression list of a request's filter (where most mutations should land), if any."""
    body = request.get("filter") if isinstance(request, dict) else None
    return body.get("conjuncts", body.get("filters", body)) if isinstance(body, dict) else None


SLUICE_WORDS = ["op", "args", "column", "literal", "type", "escape", "sql", "reason", "format", "version", "conjuncts",
                 "table", "columns", "filter", "limit", "partitions", "session_zone", "protocol", "sluice", "airport",
                 "substrait", "base64", *filter_json.OPS, "i", "s", "f", "ts", "dt", "d", "id", "we\"ird"]
AIRPORT_WORDS = ["expression_class", "type", "children", "left", "right", "input", "lower", "upper", "child", "binding",
                  "column_index", "value", "is_null", "id", "type_info", "width", "scale", "name", "return_type", "upper",
                  "lower", "base64", "filters", "column_binding_names_by_index", "BOUND_COMPARISON", "BOUND_CONJUNCTION",
                  "BOUND_OPERATOR", "BOUND_BETWEEN", "BOUND_FUNCTION", "BOUND_CONSTANT", "BOUND_COLUMN_REF", "BOUND_CAST",
                  "COMPARE_EQUAL", "COMPARE_IN", "COMPARE_NOT_IN", "CONJUNCTION_AND", "CONJUNCTION_OR", "OPERATOR_NOT",
                  "OPERATOR_IS_NULL", "OPERATOR_COALESCE", "DECIMAL", "HUGEINT", "VARCHAR", "DATE", "TIMESTAMP_NS", "DOUBLE",
                  "BIGINT", "SQLNULL", "list_value", "like_escape", "~~", "prefix", "length", "+"]


def nested_sluice(rng: random.Random) -> Any:
    leaf = {"op": "=", "args": [{"column": "i"}, {"literal": 1, "type": "int"}]}
    kind = rng.randrange(3)
    if kind == 0:
        return _wrap(rng, leaf, lambda v: {"op": "not", "args": [v]})
    if kind == 1:
        return {"op": rng.choice(["and", "or", "in", "coalesce"]), "args": [leaf] * rng.choice([2, 33, 1000, 5000])}
    return _wrap(rng, leaf, lambda v: {"op": "and", "args": [v, leaf]})


def nested_airport(rng: random.Random) -> Any:
    leaf = {"expression_class": "BOUND_COLUMN_REF", "binding": {"column_index": 7}}
    compare = {"expression_class": "BOUND_COMPARISON", "type": "COMPARE_EQUAL", "left": leaf,
               "right": {"expression_class": "BOUND_CONSTANT", "value": {"type": {"id": "INTEGER"}, "is_null": False, "value": 1}}}
    if rng.random() < 0.5:
        return {"expression_class": "BOUND_CONJUNCTION", "type": rng.choice(["CONJUNCTION_AND", "CONJUNCTION_OR"]),
                "children": [compare] * rng.choice([2, 33, 1000, 5000])}
    return _wrap(rng, compare, lambda v: {"expression_class": "BOUND_OPERATOR", "type": "OPERATOR_NOT", "children": [v]})


def _wrap(rng: random.Random, leaf: Any, wrap: Callable[[Any], Any]) -> Any:
    value = leaf
    for _ in range(rng.choice(mutate.DEPTHS[:6])):
        value = wrap(value)
    return value


# ---------------------------------------------------------------- substrait
@lru_cache(maxsize=1)
def _substrait_messages() -> tuple[bytes, ...]:
    return tuple(seeds.substrait_messages())


def substrait_seeds() -> list[bytes]:
    return [seeds.substrait_request(message) for message in _substrait_messages()]


def substrait(rng: random.Random, pool: list[bytes]) -> bytes:
    """Mutate the protobuf bytes themselves (flips, truncation, splicing, nesting), then wrap
    them in a request; now and then mutate the request's JSON instead."""
    messages = list(_substrait_messages())
    message = rng.choice(messages)
    for _ in range(rng.randint(1, 3)):
        choice = rng.random()
        if choice < 0.1:
            message = _nest_message(rng, message)
        elif choice < 0.15:
            message = _varint_bomb(rng, message)
        elif choice < 0.35:
            message = mutate.mutate_bytes(rng, message, messages)
        else:
            message = wire.mutate(rng, message, messages)
    data = seeds.substrait_request(message)
    if rng.random() < 0.1:
        data = json_generator(substrait_seeds, SLUICE_WORDS, nested_sluice)(rng, [data])
    return data


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return wire.varint(number << 3 | 2) + wire.varint(len(payload)) + payload


def _nest_message(rng: random.Random, message: bytes) -> bytes:
    """Expressions nested deeply: ``not(not(...))`` scalar functions, or a message in itself."""
    depth = rng.choice(mutate.DEPTHS[:5])
    expression = _field(1, _field(5, b"\x08\x01"))  # a literal i32 = 1
    for _ in range(depth):
        call = _field(4, _field(3, expression)) + b"\x08" + wire.varint(rng.choice([0, 1, 2, 99]))  # args, function anchor
        expression = _field(3, call)
    reference = _field(3, _field(1, expression))
    return message + reference


def _varint_bomb(rng: random.Random, message: bytes) -> bytes:
    position = rng.randrange(len(message) + 1)
    bomb = rng.choice([b"\xff" * 11, b"\x80" * 10 + b"\x01", wire.varint(2**63), b"\x0a\xff\xff\xff\xff\x0f"])
    return message[:position] + bomb + message[position:]


# ---------------------------------------------------------------- catalog
_TOML_PIECES = [
    "[sources.x]\n", "url = \"sqlite:///a.db\"\n", "partitions = ", "statement_timeout_s = ", "password_env = ", "= ", "\"",
    "'", "'''", "\"\"\"", "\\u0000", "\\uD800", "\\x", "[[sources]]\n", "[sources]\n", "inf", "nan", "-0.0", "1e999", "0x7f",
    "9" * 5000, "1979-05-27T07:32:00Z", "{ url = 1 }", "[", "]", "{", "}", ".", "\n", "\r", "\x00", "#", "true",
]


def catalog(rng: random.Random, pool: list[bytes]) -> bytes:
    data = rng.choice(pool)
    for _ in range(rng.randint(1, 3)):
        choice = rng.random()
        if choice < 0.4:
            data = mutate.mutate_bytes(rng, data, pool)
        elif choice < 0.8:
            position = rng.randrange(len(data) + 1)
            data = data[:position] + rng.choice(_TOML_PIECES).encode("utf-8", "surrogatepass") + data[position:]
        else:
            depth = rng.choice(mutate.DEPTHS[:6])
            opener, closer = rng.choice([("[", "]"), ("{ a = ", " }"), ("[{ a = ", " }]")])
            data += f"\n[sources.deep]\nurl = \"sqlite:///d.db\"\nx = {opener * depth}1{closer * depth}\n".encode()
    return data
