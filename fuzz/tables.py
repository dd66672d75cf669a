"""Random tables of edge values, and their JSON form (regression cases store them).

A table is logical: column kinds and Python values. Each loader (``fuzz.loaders``) stores
it as its source can: a text column carries one *text variant* per source (a collation or
padding rule: PostgreSQL ``COLLATE "C"`` or ``char(n)``, SQLite ``NOCASE``, ...), drawn
here so that the same seed gives the same table whichever sources run.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import random
import re
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, cast

from fuzz import values

#: relative weight of each kind when columns are drawn: text is where engines differ most
_KIND_WEIGHTS = {
    "smallint": 1,
    "int": 3,
    "bigint": 2,
    "double": 3,
    "real": 1,
    "decimal": 2,
    "string": 6,
    "date": 2,
    "timestamp": 2,
    "timestamp_ntz": 2,
    "boolean": 1,
}
_PREFIX = {
    "smallint": "h",
    "int": "i",
    "bigint": "b",
    "double": "f",
    "real": "r",
    "decimal": "d",
    "string": "s",
    "date": "dt",
    "timestamp": "ts",
    "timestamp_ntz": "tn",
    "boolean": "fl",
}


@dataclass(frozen=True)
class ColumnSpec:
    """One logical column. ``text`` maps a source name to its text variant (strings only)."""

    name: str
    kind: str
    precision: int = 0
    scale: int = 0
    text: dict[str, str] = field(default_factory=dict)
    width: int = 0  # the n of char(n) variants: at least the longest value


@dataclass(frozen=True)
class Table:
    """A named table: ``id`` (bigint, 0..n-1, the row's identity) plus ``columns``."""

    name: str
    columns: tuple[ColumnSpec, ...]
    rows: tuple[tuple[Any, ...], ...]  # (id, value per column)

    def column(self, name: str) -> ColumnSpec:
        return next(c for c in self.columns if c.name == name)

    def values(self, name: str) -> list[Any]:
        index = 1 + [c.name for c in self.columns].index(name)
        return [row[index] for row in self.rows]

    def project(self, names: set[str]) -> Table:
        """Only the columns in ``names`` (and ``id``): a smaller reproduction."""
        keep = [i for i, c in enumerate(self.columns) if c.name in names]
        return Table(
            self.name, tuple(self.columns[i] for i in keep), tuple((r[0], *(r[1 + i] for i in keep)) for r in self.rows)
        )

    def with_rows(self, rows: list[tuple[Any, ...]]) -> Table:
        return replace(self, rows=tuple(rows))

    def renamed(self, name: str) -> Table:
        return replace(self, name=name)


def fresh_name(hint: str, number: int) -> str:
    """A table name no concurrent run uses (the pid) and no earlier load of this run used (``number``)."""
    return f"fz{os.getpid()}_{hint}_{number}"


def run_independent(name: str) -> str:
    """``name`` without :func:`fresh_name`'s pid prefix (any run's): what a table's layout may follow."""
    return re.sub(r"^fz\d+_", "", name)


def generate(rng: random.Random, name: str, text_variants: dict[str, tuple[str, ...]]) -> Table:
    """A table of 4-9 random columns and 15-50 rows; ``text_variants`` per source name."""
    kinds = rng.choices(list(_KIND_WEIGHTS), weights=list(_KIND_WEIGHTS.values()), k=rng.randint(4, 9))
    columns, pools, null_rates = [], [], []
    for index, kind in enumerate(kinds):
        precision = scale = 0
        if kind == "decimal":
            precision = rng.choice([1, 2, 5, 9, 10, 18, 19, 20, 28, 38])
            scale = min(precision, rng.choice([0, 0, 1, 2, 4, precision // 2, precision]))
        full = values.pool(kind, rng, precision, scale)
        chosen = rng.sample(full, rng.randint(min(3, len(full)), min(len(full), 14)))
        text = (
            {source: rng.choice(options) for source, options in sorted(text_variants.items())}
            if kind == "string"
            else {}
        )
        width = max(1, max(len(cast(str, v)) for v in chosen) + rng.randint(0, 3)) if kind == "string" else 0
        columns.append(ColumnSpec(f"{_PREFIX[kind]}{index}", kind, precision, scale, text, width))
        pools.append(chosen)
        null_rates.append(rng.choice([0.0, 0.1, 0.1, 0.3]))
    rows = []
    for row_id in range(rng.randint(15, 50)):
        rows.append(
            (row_id, *(None if rng.random() < rate else rng.choice(pool) for pool, rate in zip(pools, null_rates)))
        )
    return Table(name, tuple(columns), tuple(rows))


# ----------------------------------------------------------------- JSON form
def _encode(value: Any, kind: str) -> Any:
    if value is None or kind in ("smallint", "int", "bigint", "boolean", "string"):
        return value
    if kind in ("double", "real"):
        return repr(value) if math.isnan(value) or math.isinf(value) or value == 0 else value
    return str(value) if kind == "decimal" else value.isoformat()


def _decode(value: Any, kind: str) -> Any:
    if value is None or kind in ("smallint", "int", "bigint", "boolean", "string"):
        return value
    if kind in ("double", "real"):
        return float(value)
    if kind == "decimal":
        return Decimal(value)
    if kind == "date":
        return dt.date.fromisoformat(value)
    return dt.datetime.fromisoformat(value)


def to_json(table: Table) -> dict[str, Any]:
    """JSON-ready: NaN, ±inf and -0.0 as strings, decimals as text, times as ISO 8601."""
    return {
        "name": table.name,
        "columns": [
            {
                "name": c.name,
                "kind": c.kind,
                **({"precision": c.precision, "scale": c.scale} if c.kind == "decimal" else {}),
                **({"text": c.text, "width": c.width} if c.kind == "string" else {}),
            }
            for c in table.columns
        ],
        "rows": [[row[0], *(_encode(v, c.kind) for v, c in zip(row[1:], table.columns))] for row in table.rows],
    }


def from_json(data: dict[str, Any]) -> Table:
    columns = tuple(
        ColumnSpec(c["name"], c["kind"], c.get("precision", 0), c.get("scale", 0), c.get("text", {}), c.get("width", 0))
        for c in data["columns"]
    )
    rows = tuple((row[0], *(_decode(v, c.kind) for v, c in zip(row[1:], columns))) for row in data["rows"])
    return Table(data["name"], columns, rows)
