"""``fuzz/regressions.json``: every mismatch the fuzzer ever found, replayed on every run.

Two kinds of entry. An explicit case (``table`` + ``predicate``) holds its own data, so
it replays the same whatever the generators become; this is what a found mismatch is
recorded as. A seed entry (``seed`` + ``cases``) replays a generated campaign; it stays
meaningful only while the generators are unchanged, so it suits a campaign worth
repeating, not a bug. An explicit case runs on the selected sources among its
``sources`` (those it was found on; all of them when absent): its predicate is typed by
logical column kinds, so it is valid on every source, but CI's budget pays for the ones
that matter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fuzz import tables
from fuzz.predicates import Leaf, Pred, from_json

PATH = Path(__file__).with_name("regressions.json")


def load(path: Path = PATH) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []


def append(entries: list[dict[str, Any]], path: Path = PATH) -> None:
    """Add ``entries`` (skipping any whose name is taken, with a numbered suffix)."""
    existing = load(path)
    names = {e["name"] for e in existing}
    for entry in entries:
        base, number = entry["name"], 2
        while entry["name"] in names:
            entry = {**entry, "name": f"{base}-{number}"}
            number += 1
        names.add(entry["name"])
        existing.append(entry)
    path.write_text(json.dumps(existing, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def explicit_case(entry: dict[str, Any]) -> tuple[tables.Table, Pred]:
    """The table and predicate of an explicit entry: its tree when recorded (so it can be
    shrunk again), else its text as one leaf that may read any column."""
    table = tables.from_json(entry["table"])
    if "tree" in entry:
        return table, from_json(entry["tree"])
    return table, Leaf(entry["predicate"], frozenset(c.name for c in table.columns))
