"""Just enough of the protobuf wire format to read a Substrait message, with no dependency.

A message is a list of (field number, value): varints as ints, length-delimited fields
as bytes (a string, bytes or a nested message: the schema says which), fixed 32/64-bit
fields as raw bytes. Truncated or malformed input raises :class:`WireError`.
"""

from __future__ import annotations

import struct
from collections import defaultdict


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message."""


class Message:
    """The fields of one message, by number; repeated fields keep their order."""

    def __init__(self, data: bytes) -> None:
        self.fields: dict[int, list[int | bytes]] = defaultdict(list)
        position = 0
        while position < len(data):
            key, position = read_varint(data, position)
            number, wire = key >> 3, key & 7
            if number == 0:
                raise WireError("field number 0")
            if wire == 0:
                value, position = read_varint(data, position)
                self.fields[number].append(value)
            elif wire == 2:
                size, position = read_varint(data, position)
                if position + size > len(data):
                    raise WireError("a length-delimited field runs past the end")
                self.fields[number].append(data[position : position + size])
                position += size
            elif wire in (1, 5):
                width = 8 if wire == 1 else 4
                if position + width > len(data):
                    raise WireError("a fixed-width field runs past the end")
                self.fields[number].append(data[position : position + width])
                position += width
            else:
                raise WireError(f"wire type {wire} (groups are not used by Substrait)")

    def has(self, number: int) -> bool:
        return number in self.fields

    def message(self, number: int) -> Message | None:
        values = self.fields.get(number)
        return Message(_bytes(values[-1])) if values else None

    def messages(self, number: int) -> list[Message]:
        return [Message(_bytes(v)) for v in self.fields.get(number, [])]

    def integer(self, number: int, default: int = 0) -> int:
        values = self.fields.get(number)
        if not values:
            return default
        if not isinstance(values[-1], int):
            raise WireError(f"field {number} is not a varint")
        return values[-1]

    def signed(self, number: int, bits: int) -> int:
        """An int32/int64 field (two's complement in a varint)."""
        value = self.integer(number) & ((1 << 64) - 1)
        if value >= 1 << 63:
            value -= 1 << 64
        return value if bits == 64 else _int32(value)

    def text(self, number: int, default: str = "") -> str:
        values = self.fields.get(number)
        if not values:
            return default
        try:
            return _bytes(values[-1]).decode("utf-8")
        except UnicodeDecodeError:
            raise WireError(f"field {number} is not UTF-8 text") from None

    def texts(self, number: int) -> list[str]:
        try:
            return [_bytes(v).decode("utf-8") for v in self.fields.get(number, [])]
        except UnicodeDecodeError:
            raise WireError(f"field {number} is not UTF-8 text") from None

    def raw(self, number: int) -> bytes:
        values = self.fields.get(number)
        return _bytes(values[-1]) if values else b""

    def double(self, number: int) -> float:
        return self._fixed(number, "<d", 8)

    def single(self, number: int) -> float:
        return self._fixed(number, "<f", 4)

    def _fixed(self, number: int, layout: str, width: int) -> float:
        raw = self.raw(number)
        if raw and len(raw) != width:
            raise WireError(f"field {number} holds {len(raw)} bytes, not a {width * 8}-bit value")
        return struct.unpack(layout, raw)[0] if raw else 0.0


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _bytes(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise WireError("a varint where a length-delimited field was expected")
    return value


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
