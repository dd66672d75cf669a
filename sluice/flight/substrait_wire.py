"""Parse Substrait bytes with the published ``substrait`` package's generated classes, with
the checks a server needs on top of protobuf's own.

Protobuf keeps a field whose wire type does not match its declaration as an unknown field
(and carries on); a server must not read such a message as if the field were absent, so
:func:`parse` refuses it, naming the field. Fields Substrait has since deprecated and
removed from the classes (pyarrow still writes its microsecond timestamps) stay readable
through :func:`deprecated_field`.
"""

from __future__ import annotations

import google.protobuf.unknown_fields as unknown_fields  # type: ignore[import-not-found]  # types-protobuf has no stub for it
from google.protobuf import descriptor, message
from substrait import extended_expression_pb2

#: protobuf's wire types, as the unknown-field set reports them
_FIXED64, _LENGTH_DELIMITED, _FIXED32 = 1, 2, 5
_FIXED_BITS = {
    descriptor.FieldDescriptor.TYPE_DOUBLE: 64,
    descriptor.FieldDescriptor.TYPE_FIXED64: 64,
    descriptor.FieldDescriptor.TYPE_SFIXED64: 64,
    descriptor.FieldDescriptor.TYPE_FLOAT: 32,
    descriptor.FieldDescriptor.TYPE_FIXED32: 32,
    descriptor.FieldDescriptor.TYPE_SFIXED32: 32,
}


class WireError(ValueError):
    """The bytes are not a well-formed ExtendedExpression message."""


def parse(payload: bytes) -> extended_expression_pb2.ExtendedExpression:
    """The message in ``payload``, or :class:`WireError` saying what is wrong with it."""
    parsed = extended_expression_pb2.ExtendedExpression()
    try:
        parsed.ParseFromString(payload)
    except message.DecodeError:
        raise WireError(
            "the bytes do not parse (truncated, a bad field key, text that is not UTF-8, "
            "or messages nested past protobuf's limit of 100)"
        ) from None
    _check_wire_types(parsed)
    return parsed


def deprecated_field(parsed: message.Message, number: int) -> int | None:
    """The varint value of field ``number``, which the generated classes no longer declare
    (so protobuf kept it as an unknown field), or None when the message does not hold it."""
    values = [field.data for field in unknown_fields.UnknownFieldSet(parsed) if field.field_number == number]
    return values[-1] if values and isinstance(values[-1], int) else None


def has_deprecated_field(parsed: message.Message, number: int) -> bool:
    """Whether the message holds field ``number``, which the generated classes no longer declare."""
    return any(field.field_number == number for field in unknown_fields.UnknownFieldSet(parsed))


def _check_wire_types(parsed: message.Message) -> None:
    """Refuse a declared field sent with another wire type, in this message or any below it."""
    declared = parsed.DESCRIPTOR.fields_by_number
    for unknown in unknown_fields.UnknownFieldSet(parsed):
        field = declared.get(unknown.field_number)
        if field is None:
            continue  # a field this version does not know: protobuf skips it, so do we
        bits = _FIXED_BITS.get(field.type)
        if bits is not None and unknown.wire_type in (_LENGTH_DELIMITED, _FIXED32, _FIXED64):
            width = {_LENGTH_DELIMITED: len(unknown.data), _FIXED64: 8, _FIXED32: 4}[unknown.wire_type]
            raise WireError(f"field {unknown.field_number} holds {width} bytes, not a {bits}-bit value")
        raise WireError(f"field {unknown.field_number} ({field.name}) is not encoded as its declared type")
    for field, value in parsed.ListFields():
        if field.type != descriptor.FieldDescriptor.TYPE_MESSAGE:
            continue
        for child in value if field.is_repeated else [value]:
            if isinstance(child, message.Message):
                _check_wire_types(child)
