"""The JVM-planner protocol's JSON Schema and Java key names, generated from :mod:`sluice.protocol`.

Why generated: the protocol's messages are dataclasses (sluice/protocol) dispatched by
:data:`sluice.spark.bridge.METHODS`; the schema (``sluice/protocol/schema.json``) and the
constants Java reads keys by (``java/io/sluice/spark/Protocol.java``) are derived from them,
so a key renamed in Python is renamed in Java by regenerating, and
``tests/unit/test_protocol.py`` fails while either committed file is stale::

    python -m tools.protocol_schema          # rewrite both files
    python -m tools.protocol_schema --check  # exit 1 when either is stale
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import typing
from pathlib import Path
from typing import Any

from sluice.protocol.base import ErrorAnswer
from sluice.protocol.codec import hints, wire_fields
from sluice.protocol.schema import required_answer_keys, schema
from sluice.spark.bridge import METHODS

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_PATH = ROOT / "sluice" / "protocol" / "schema.json"
JAVA_PATH = ROOT / "java" / "io" / "sluice" / "spark" / "Protocol.java"


def render_schema() -> str:
    """The protocol's JSON Schema, as committed."""
    return json.dumps(schema(METHODS), indent=2) + "\n"


def keys() -> list[str]:
    """Every key of every message (requests, answers, the messages nested in them)."""
    found: set[str] = set()
    seen: set[type] = set()
    pending: list[type] = [t for m in METHODS.values() for t in (m.request, m.answer)] + [ErrorAnswer]
    while pending:
        cls = pending.pop()
        if cls in seen:
            continue
        seen.add(cls)
        for field in wire_fields(cls):
            found.add(field.name)
            pending += _nested(hints(cls)[field.name])
    return sorted(found)


def _nested(hint: Any) -> list[type]:
    """The message classes a field's type holds (``list[TableName]``, ``JoinAnswer | None``)."""
    if dataclasses.is_dataclass(hint):
        return [hint]  # type: ignore[list-item]  # is_dataclass narrows to a class here
    return [t for arg in typing.get_args(hint) for t in _nested(arg)]


def _constant(name: str) -> str:
    return re.sub(r"[^A-Z0-9]", "_", name.upper())


def render_java() -> str:
    """``Protocol.java``: the method and key names, and each answer's required keys."""
    methods = "\n".join(f'    static final String {_constant(m)} = "{m}";' for m in sorted(METHODS))
    names = "\n".join(f'    static final String {_constant(k)} = "{k}";' for k in keys())
    required = ",\n".join(
        f"      Map.entry(Method.{_constant(m)}, List.of({', '.join(f'Key.{_constant(k)}' for k in ks)}))"
        for m, ks in required_answer_keys(METHODS).items()
    )
    return f"""package io.sluice.spark;

import java.util.List;
import java.util.Map;

/**
 * The JVM-planner protocol's names: every method and message key the Java classes use.
 *
 * <p>Generated from the dataclasses of sluice/protocol by {{@code python -m tools.protocol_schema}}:
 * do not edit (tests/unit/test_protocol.py fails when this file is stale).
 */
final class Protocol {{
  private Protocol() {{}}

  /** The planner's methods ({{@code Planner.call(method, request)}}). */
  static final class Method {{
    private Method() {{}}

{methods}
  }}

  /** The keys of the requests and answers (sluice/protocol/schema.json). */
  static final class Key {{
    private Key() {{}}

{names}
  }}

  /** Per method, the keys its answer always has: Bridge checks them before any class reads the answer. */
  static final Map<String, List<String>> REQUIRED_ANSWER_KEYS = Map.ofEntries(
{required});
}}
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a committed file is stale")
    args = parser.parse_args(argv)
    stale = []
    for path, text in ((SCHEMA_PATH, render_schema()), (JAVA_PATH, render_java())):
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        if args.check:
            stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print(f"stale: {', '.join(stale)} (run python -m tools.protocol_schema)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
