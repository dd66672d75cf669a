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
    if as_of.ref is not None:
        return _by_name(table, as_of.ref, name)
    assert as_of.timestamp_ms is not None
    found = table.snapshot_as_of_timestamp(as_of.timestamp_ms)
    if found is None:
        raise TimeTravelError(
            f"lake table {name} has no snapshot at or before {_moment(as_of.timestamp_ms)} ({_known(table)})"
        )
    return found


def _by_name(table: Table, ref: str, name: str) -> Snapshot:
    """The snapshot a tag or branch points at; Iceberg resolves a name, not a number, this way."""
    found = table.snapshot_by_name(ref)
    if found is None:
        raise TimeTravelError(f"lake table {name} has no tag or branch {ref!r} ({known_refs(table)})")
    return found


def known_refs(table: Table) -> str:
    """The table's tags and branches in words, for an error naming one that is not there."""
    refs = table.metadata.refs
    if not refs:
        return "it has no tag or branch"
    shown = [f"{kind} {ref} -> {refs[ref].snapshot_id}" for kind, ref in _sorted_refs(table)]
    return "refs: " + ", ".join(shown)


def _sorted_refs(table: Table) -> list[tuple[str, str]]:
    refs = table.metadata.refs
    return sorted((str(refs[ref].snapshot_ref_type.value), ref) for ref in refs)


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
