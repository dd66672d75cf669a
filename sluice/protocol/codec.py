"""The one place typed protocol messages become the JSON that crosses py4j, and back.

A message is a frozen dataclass whose fields are JSON values: ``str``, ``int``, ``float``,
``bool``, lists and string-keyed dicts of them, other messages, ``X | None`` and
:data:`JsonObject` (a JSON object another module's own decoder reads: a V2 predicate, a
verdict, a table). A field with a default is an optional key: :func:`encode` leaves it out
when it is None, :func:`decode` fills the default when it is absent. A field whose metadata
says ``wire=False`` never crosses as JSON (the Dataset a write carries beside it).

Decoding checks every key against its field's type and refuses a key no field has, so a key
renamed on one side fails on the first call with one line naming the method and the key,
not later as a ``KeyError`` deep in a rule.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any, TypeVar

from sluice.errors import SluiceError

#: a JSON object read by its own decoder (a predicate, a verdict, a table), not by the protocol
JsonObject = dict[str, Any]

M = TypeVar("M")

#: field metadata for a value that travels beside the JSON, not in it
NOT_ON_WIRE = {"wire": False}


class ProtocolError(SluiceError):
    """A message does not have the shape its method's dataclass says (missing, ill-typed or unknown key)."""


def wire_fields(cls: type) -> list[dataclasses.Field[Any]]:
    """The fields of message ``cls`` that are JSON keys, in declaration order."""
    return [f for f in dataclasses.fields(cls) if f.metadata.get("wire", True)]


def is_optional(field: dataclasses.Field[Any]) -> bool:
    """Whether the key may be absent (the field has a default)."""
    return field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING


@functools.cache
def hints(cls: type) -> dict[str, Any]:
    """The resolved type of each field of ``cls``."""
    return typing.get_type_hints(cls)


def decode(cls: type[M], data: object, where: str) -> M:
    """``data`` (parsed JSON) as message ``cls``; ``where`` names the message in errors
    (``"the 'plan' request"``)."""
    return typing.cast(M, _message(cls, data, where, ""))


def encode(message: object) -> dict[str, Any]:
    """``message`` as a JSON object (optional keys that are None left out)."""
    out: dict[str, Any] = {}
    cls: type = type(message)
    types_of = hints(cls)
    for field in wire_fields(cls):
        value = getattr(message, field.name)
        if value is None and is_optional(field):
            continue
        out[field.name] = _encoded(types_of[field.name], value)
    return out


def _encoded(hint: Any, value: object) -> Any:
    """``value`` as JSON; only where ``hint`` holds a message is there anything to convert (a
    :data:`JsonObject`, maybe a deep predicate tree, is passed through as it is)."""
    if value is None or not _holds_message(hint):
        return value
    if dataclasses.is_dataclass(hint):
        return encode(value)
    origin = typing.get_origin(hint)
    if origin is list:
        (item,) = typing.get_args(hint)
        return [_encoded(item, v) for v in value]  # type: ignore[attr-defined]  # a list, as its hint says
    if origin is dict:
        _, item = typing.get_args(hint)
        return {k: _encoded(item, v) for k, v in value.items()}  # type: ignore[attr-defined]  # a dict, as its hint says
    (option,) = [a for a in typing.get_args(hint) if a is not type(None)]  # the protocol's unions are X | None
    return _encoded(option, value)


@functools.cache
def _holds_message(hint: Any) -> bool:
    """Whether a value of type ``hint`` may hold a message (a dataclass) anywhere."""
    return dataclasses.is_dataclass(hint) or any(_holds_message(a) for a in typing.get_args(hint))


def _message(cls: type, data: object, where: str, path: str) -> object:
    if not isinstance(data, dict):
        raise ProtocolError(f"{where}: {_name(path, 'the message')} is {_kind(data)}, not an object")
    known = {f.name for f in wire_fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ProtocolError(f"{where}: unknown key {path + unknown[0]!r} (the protocol has no such key)")
    values: dict[str, Any] = {}
    types_of = hints(cls)
    for field in wire_fields(cls):
        key = path + field.name
        if field.name not in data:
            if not is_optional(field):
                raise ProtocolError(f"{where}: key {key!r} is missing")
            continue
        values[field.name] = _value(types_of[field.name], data[field.name], where, key)
    return cls(**values)


def _value(hint: Any, value: object, where: str, key: str, expected: str | None = None) -> Any:
    """``value`` checked against ``hint`` (and decoded, for a nested message); ``expected``
    names the type in errors when ``hint`` is one option of a union."""
    expected = expected or _shown(hint)
    if hint is Any:
        return value
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        options = typing.get_args(hint)
        if value is None:
            if type(None) in options:
                return None
        else:
            for option in options:
                if option is not type(None):  # the protocol's unions are X | None
                    return _value(option, value, where, key, _shown(hint))
        raise ProtocolError(f"{where}: key {key!r} is null, expected {_shown(hint)}")
    if origin is list:
        (item,) = typing.get_args(hint)
        if not isinstance(value, list):
            raise ProtocolError(f"{where}: key {key!r} is {_kind(value)}, expected {expected}")
        return [_value(item, v, where, f"{key}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        _, item = typing.get_args(hint)
        if not isinstance(value, dict):
            raise ProtocolError(f"{where}: key {key!r} is {_kind(value)}, expected {expected}")
        return {k: _value(item, v, where, f"{key}.{k}") for k, v in value.items()}
    if dataclasses.is_dataclass(hint):
        return _message(hint, value, where, key + ".")  # type: ignore[arg-type]  # is_dataclass narrows to a class here
    if _fits(hint, value):
        return float(value) if hint is float else value  # type: ignore[arg-type]  # _fits checked it is a number
    raise ProtocolError(f"{where}: key {key!r} is {_kind(value)}, expected {expected}")


def _fits(hint: Any, value: object) -> bool:
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    return False


def _kind(value: object) -> str:
    """A JSON value's kind, as errors name it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _shown(hint: Any) -> str:
    """A type as errors name it."""
    if hint is Any:
        return "any value"
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        return " or ".join(_shown(a) for a in typing.get_args(hint))
    if origin is list:
        return "an array"
    if origin is dict or dataclasses.is_dataclass(hint):
        return "an object"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", type(None): "null"}.get(
        hint, str(hint)
    )


def _name(path: str, default: str) -> str:
    return f"key {path.rstrip('.')!r}" if path else default
