"""Structure-aware mutation of protobuf messages (Substrait filters): decode the fields,
change one (a varint to an edge value, a string to hostile text, a subtree spliced from
another message, a field dropped or repeated), encode again. Byte flips alone rarely get
past the wire format; these reach the decoder's semantic checks."""

from __future__ import annotations

import random

from fuzz.parsers.mutate import HOSTILE_TEXT, INVALID_UTF8

Field = list  # [number, wire type, value]: int for varints, bytes for fixed, bytes or list[Field] for length-delimited
Value = int | bytes | list
EDGE_INTS = [0, 1, 2, 3, 5, 7, 12, 29, 99, 2**31 - 1, 2**31, 2**32, 2**63 - 1, 2**63, 2**64 - 1]


class WireError(ValueError):
    """The bytes are not a protobuf message (the mutator then treats them as plain bytes)."""


def read_varint(data: bytes, position: int) -> tuple[int, int]:
    """The varint at ``position`` and the position after it (:class:`WireError` if malformed)."""
    result = shift = 0
    while True:
        if position >= len(data):
            raise WireError("a varint runs past the end")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7
        if shift > 63:
            raise WireError("a varint longer than 10 bytes")


def decode(data: bytes, depth: int = 0) -> list[Field] | None:
    """The fields of ``data``, nested messages decoded too; None if it is not a message."""
    fields: list[Field] = []
    position = 0
    try:
        while position < len(data):
            key, position = read_varint(data, position)
            number, wire = key >> 3, key & 7
            if number == 0:
                return None
            if wire == 0:
                value, position = read_varint(data, position)
                fields.append([number, 0, value])
            elif wire == 2:
                size, position = read_varint(data, position)
                if position + size > len(data):
                    return None
                payload = data[position : position + size]
                position += size
                nested = decode(payload, depth + 1) if depth < 40 and payload else None
                fields.append([number, 2, nested if nested else payload])
            elif wire in (1, 5):
                width = 8 if wire == 1 else 4
                if position + width > len(data):
                    return None
                fields.append([number, wire, data[position : position + width]])
                position += width
            else:
                return None
    except WireError:
        return None
    return fields


def encode(fields: list[Field]) -> bytes:
    out = bytearray()
    for number, wire, value in fields:
        out += varint(number << 3 | wire)
        if wire == 0:
            out += varint(value)
        elif wire == 2:
            payload = encode(value) if isinstance(value, list) else value
            out += varint(len(payload)) + payload
        else:
            out += value
    return bytes(out)


def _all_fields(fields: list[Field]) -> list[tuple[list[Field], int]]:
    found, pending = [], [fields]
    while pending:
        current = pending.pop()
        for index, field in enumerate(current):
            found.append((current, index))
            if isinstance(field[2], list):
                pending.append(field[2])
    return found


def mutate(rng: random.Random, message: bytes, others: list[bytes]) -> bytes:
    """One structural change to ``message``; bytes that do not decode are returned unchanged."""
    fields = decode(message)
    if not fields:
        return message
    slots = _all_fields(fields)
    container, index = rng.choice(slots)
    number, wire, value = container[index]
    kind = rng.randrange(6)
    if kind == 0 and wire == 0:
        container[index] = [number, 0, rng.choice(EDGE_INTS)]
    elif kind == 1:
        del container[index]
    elif kind == 2:
        container.insert(index, list(container[index]))
    elif kind == 3:
        donor = decode(rng.choice(others)) or []
        donated = _all_fields(donor)
        if donated:
            parent, position = rng.choice(donated)
            container[index] = [number if rng.random() < 0.5 else parent[position][0], *parent[position][1:]]
    elif kind == 4 and wire == 2 and not isinstance(value, list):
        text = "".join(rng.choice(HOSTILE_TEXT) for _ in range(rng.randint(1, 4))).encode("utf-8", "surrogatepass")
        container[index] = [number, 2, text + (rng.choice(INVALID_UTF8) if rng.random() < 0.3 else b"")]
    else:
        container[index] = [rng.choice([number, rng.randint(1, 40)]), wire, value]
    return encode(fields)


def varint(value: int) -> bytes:
    """``value`` as a protobuf varint (taken modulo 2**64, as protobuf does)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)
