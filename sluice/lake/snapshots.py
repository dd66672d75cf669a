"""Time travel: which snapshot of a lake table a query reads, and that snapshot's schema.

A snapshot keeps the id of the schema it was written with, so reading an old snapshot
shows the columns the table had then (renamed ones under their old names, dropped ones
still there, later ones absent), as Iceberg's own readers do.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING

from sluice.errors import TimeTravelError

if TYPE_CHECKING:
    from pyiceberg.schema import Schema
    from pyiceberg.table import Table
    from pyiceberg.table.snapshots import Snapshot

    from sluice.types import AsOf

#: how many snapshots an error lists (a long-lived table has thousands)
_LISTED = 10


def snapshot_at(table: Table, as_of: AsOf, name: str) -> Snapshot:
    """The snapshot ``as_of`` names, or a :class:`TimeTravelError` naming the table and its snapshots."""
    if as_of.snapshot_id is not None:
        found = table.snapshot_by_id(as_of.snapshot_id)
        if found is None:
            raise TimeTravelError(f"lake table {name} has no snapshot {as_of.snapshot_id} ({_known(table)})")
        return found
    assert as_of.timestamp_ms is not None
    found = table.snapshot_as_of_timestamp(as_of.timestamp_ms)
    if found is None:
        raise TimeTravelError(
            f"lake table {name} has no snapshot at or before {_moment(as_of.timestamp_ms)} ({_known(table)})"
        )
    return found


def snapshot_schema(table: Table, snapshot_id: int | None) -> Schema:
    """The schema a pinned snapshot (time travel) was written with; None: the table's current
    schema (a schema change makes no snapshot, so the current snapshot may predate it)."""
    snapshot = table.snapshot_by_id(snapshot_id) if snapshot_id is not None else None
    if snapshot is None or snapshot.schema_id is None:
        return table.schema()
    return table.schemas()[snapshot.schema_id]


def _known(table: Table) -> str:
    history = sorted(table.snapshots(), key=lambda s: s.timestamp_ms)
    if not history:
        return "it has no snapshot yet"
    shown = [f"{s.snapshot_id} at {_moment(s.timestamp_ms)}" for s in history[-_LISTED:]]
    more = f"{len(history) - _LISTED} older and " if len(history) > _LISTED else ""
    return f"snapshots: {more}" + ", ".join(shown)


def _moment(timestamp_ms: int) -> str:
    return datetime.fromtimestamp(timestamp_ms / 1000, timezone.utc).isoformat(timespec="milliseconds")
