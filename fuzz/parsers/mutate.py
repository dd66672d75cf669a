"""Mutations: bytes (flips, truncation, splicing, invalid UTF-8) and JSON trees (random
subtrees, deep nesting, huge numbers, wrong types), with the edge values targets draw on.
Every choice comes from the ``random.Random`` passed in, so a case is reproduced from
(seed, target, index) alone."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from typing import Any

#: byte sequences that are not UTF-8: a lone continuation byte, a truncated sequence, an
#: encoded surrogate, an overlong NUL, a code point past U+10FFFF
INVALID_UTF8 = [b"\x80", b"\xc3", b"\xed\xa0\x80", b"\xc0\x80", b"\xf4\x90\x80\x80", b"\xff\xfe"]
#: text that has broken quoting, escaping or parsers somewhere
HOSTILE_TEXT = [
    "'",
    "''",
    '"',
    "`",
    "\\",
    "\\'",
    "\\\\",
    "--",
    "/*",
    "*/",
    "#",
    ";",
    "\x00",
    "\n",
    "\r\n",
    "\t",
    "\u2019",
    "\uff07",
    "\u02bc",
    "\u2028",
    "\ufeff",
    "$$",
    "$1",
    "?",
    "%",
    "_",
    "[",
    "*",
    "x'; DROP TABLE t; --",
    "' OR '1'='1",
    "\\u0000",
    "\\uD800",
    "\\U0001F600",
    "\\0",
    "\\Z",
    "\\101",
    "\U0001f600",
    "\ud800",
    "X'zz'",
    "N'x'",
    "E'\\x41'",
    "_utf8mb4'x'",
]
#: numbers as text, at and past the edges of every reader (Spark's suffixes and Python's spellings too)
NUMBERS = [
    "0",
    "-0",
    "-0.0",
    "1e308",
    "1e309",
    "-1e999999",
    "1e-400",
    "9" * 40,
    "9" * 400,
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551616",
    "1L",
    "127Y",
    "32768S",
    "1.5BD",
    "1D",
    "1F",
    "0x1F",
    "NaN",
    "Infinity",
    "1.",
    ".5",
    "1e",
    "1_000",
]
DECIMAL_TYPES = [
    "decimal(38,38)",
    "decimal(39,0)",
    "decimal(0,0)",
    "decimal(5,9)",
    "decimal(999999999,2)",
    "decimal(38, 0)",
]
TYPE_NAMES = [
    "boolean",
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "float",
    "double",
    "string",
    "binary",
    "date",
    "timestamp",
    "timestamp_ntz",
    "null",
    "decimal(10,2)",
    "interval",
    "",
    "INT",
    *DECIMAL_TYPES,
]
#: placeholder for a JSON number longer than Python converts (4,300 digits)
HUGE = "<a number of 5000 digits>"
#: nesting depths tried: below, at and past every limit (32 for chains kept as written, 64 for Flight,
#: 128 pushed), and far past
DEPTHS = [31, 33, 64, 65, 129, 1000, 5000]


# ---------------------------------------------------------------- bytes
def flip_bits(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return data
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        buffer[rng.randrange(len(buffer))] ^= 1 << rng.randrange(8)
    return bytes(buffer)


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def delete_range(rng: random.Random, data: bytes) -> bytes:
    start = rng.randrange(len(data) + 1)
    return data[:start] + data[start + rng.randint(1, 16) :]


def duplicate_range(rng: random.Random, data: bytes) -> bytes:
    start = rng.randrange(len(data) + 1)
    chunk = data[start : start + rng.randint(1, 32)]
    return data[:start] + chunk * rng.choice([2, 10, 1000]) + data[start:]


def insert_bytes(rng: random.Random, data: bytes) -> bytes:
    position = rng.randrange(len(data) + 1)
    insert = rng.choice(
        [bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))), rng.choice(INVALID_UTF8), b"\x00"]
    )
    return data[:position] + insert + data[position:]


def splice(rng: random.Random, data: bytes, other: bytes) -> bytes:
    """A prefix of ``data`` followed by a suffix of ``other`` (another seed)."""
    return data[: rng.randrange(len(data) + 1)] + other[rng.randrange(len(other) + 1) :]


def deep_brackets(rng: random.Random, data: bytes) -> bytes:
    """Brackets nested far past every limit (100,000 levels: json's C parser recurses per level)."""
    position = rng.randrange(len(data) + 1)
    depth = rng.choice([1000, 100_000])
    opener, closer = rng.choice([(b"[", b"]"), (b'{"a":', b"}"), (b"(", b")")])
    return data[:position] + opener * depth + closer * depth + data[position:]


BYTE_MUTATIONS: list[Callable[[random.Random, bytes], bytes]] = [
    flip_bits,
    truncate,
    delete_range,
    duplicate_range,
    insert_bytes,
    deep_brackets,
]


def mutate_bytes(rng: random.Random, data: bytes, seeds: list[bytes]) -> bytes:
    if rng.random() < 0.15:
        return splice(rng, data, rng.choice(seeds))
    return rng.choice(BYTE_MUTATIONS)(rng, data)


# ---------------------------------------------------------------- JSON trees
def random_json(rng: random.Random, depth: int = 0, vocabulary: list[str] | None = None) -> Any:
    """A random JSON value: scalars of every type, objects with known keys, lists."""
    words = vocabulary or ["op", "args", "column", "literal", "type"]
    choice = rng.randrange(9 if depth < 5 else 6)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([True, False])
    if choice == 2:
        return rng.choice([0, -1, 1, 2**31, 2**63, -(2**63) - 1, 2**64, 10**300, rng.randint(-1000, 1000)])
    if choice == 3:
        return rng.choice([0.5, -0.0, 1e308, float("inf"), float("-inf"), float("nan"), 1e-320])
    if choice == 4:
        return rng.choice(HOSTILE_TEXT + TYPE_NAMES + words)
    if choice == 5:
        return "".join(rng.choice(HOSTILE_TEXT) for _ in range(rng.randint(0, 4)))
    if choice == 6:
        return [random_json(rng, depth + 1, words) for _ in range(rng.randint(0, 4))]
    return {rng.choice(words): random_json(rng, depth + 1, words) for _ in range(rng.randint(0, 4))}


def deep_json(rng: random.Random, leaf: Any, wrap_key: str | None = None) -> Any:
    """``leaf`` under one of :data:`DEPTHS` levels of lists or objects (built without recursion)."""
    value = leaf
    for _ in range(rng.choice(DEPTHS)):
        value = {wrap_key or "args": [value]} if wrap_key else [value]
    return value


def _slots(tree: Any) -> list[tuple[Any, Any]]:
    """Every (container, key or index) in ``tree``, found iteratively."""
    slots, pending = [], [tree]
    while pending:
        node = pending.pop()
        keys = list(node) if isinstance(node, dict) else range(len(node)) if isinstance(node, list) else []
        for key in keys:
            slots.append((node, key))
            pending.append(node[key])
    return slots


def subtrees(tree: Any) -> list[Any]:
    """Every object and list inside ``tree``: donors for :func:`mutate_json_tree`."""
    return [container[key] for container, key in _slots(tree) if isinstance(container[key], (dict, list))]


def mutate_json_tree(
    rng: random.Random,
    tree: Any,
    vocabulary: list[str],
    nested: Callable[[random.Random], Any],
    donors: Sequence[Any] = (),
) -> Any:
    """Change one place of ``tree`` (in place when possible; the new root is returned)."""
    slots = _slots(tree)
    if not slots:
        return random_json(rng, 0, vocabulary)
    container, key = rng.choice(slots)
    old = container[key]
    kind = rng.randrange(11)
    if kind >= 9 and donors:  # a valid subtree from a seed, in a new place
        container[key] = json.loads(json.dumps(rng.choice(donors)))
    elif kind == 0:
        container[key] = random_json(rng, 0, vocabulary)
    elif kind == 1:
        container[key] = deep_json(rng, old if rng.random() < 0.5 else random_json(rng, 3, vocabulary))
    elif kind == 2:
        container[key] = nested(rng)
    elif kind == 3:
        container[key] = rng.choice(
            [10**400, -(10**400), 10**4299, 2**64, 2**63, -(2**63) - 1, 1e308, "9" * 5000, HUGE]
        )
    elif kind == 4:  # wrong type: the same value as something else
        container[key] = rng.choice([[old], {"x": old}, str(old)[:100], 1, True, None, ""])
    elif kind == 5 and isinstance(container, dict):
        del container[key]
    elif kind == 6 and isinstance(container, dict):
        container[rng.choice(vocabulary + ["unknown", ""])] = random_json(rng, 2, vocabulary)
    elif kind == 7 and isinstance(old, list) and old:
        container[key] = old * rng.choice([2, 40, 2000])
    else:
        container[key] = rng.choice(vocabulary + TYPE_NAMES + HOSTILE_TEXT)
    return tree


def dump_json(tree: Any) -> bytes:
    """JSON text of ``tree`` (NaN and Infinity as Python writes them; too-deep trees as they
    would be written; :data:`HUGE` as a number of more digits than Python reads)."""
    try:
        text = json.dumps(tree, separators=(",", ":"))
    except (RecursionError, ValueError):
        text = _dump_iteratively(tree)
    return text.replace(json.dumps(HUGE), "9" * 5000).encode("utf-8", "surrogatepass")


def _dump_iteratively(tree: Any) -> str:
    """The JSON text of a tree too deep for :func:`json.dumps`, written with an explicit stack."""
    out: list[str] = []
    pending: list[Any] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, _Text):
            out.append(node.text)
        elif isinstance(node, dict):
            pending.append(_Text("}"))
            for position, (key, value) in enumerate(reversed(list(node.items()))):
                pending += [value, _Text(json.dumps(str(key)) + ":")]
                if position < len(node) - 1:
                    pending.append(_Text(","))
            pending.append(_Text("{"))
        elif isinstance(node, list):
            pending.append(_Text("]"))
            for position, value in enumerate(reversed(node)):
                pending.append(value)
                if position < len(node) - 1:
                    pending.append(_Text(","))
            pending.append(_Text("["))
        else:
            try:
                out.append(json.dumps(node))
            except ValueError:  # an int past the conversion limit
                out.append(json.dumps(HUGE))
    return "".join(out)


class _Text:
    """Literal JSON text on :func:`_dump_iteratively`'s stack."""

    def __init__(self, text: str) -> None:
        self.text = text
