"""Snapshot tags on a lake table: a name for one snapshot, read back with ``VERSION AS OF 'name'``.

Spark's parser has no ``ALTER TABLE ... CREATE TAG`` (Iceberg adds that grammar with its own
extensions), so the lake catalog offers Spark's stored procedures instead:
``CALL lake.system.create_tag('ns.t', 'name' [, snapshot_id])`` and
``CALL lake.system.drop_tag('ns.t', 'name')`` (``Procedures.java``). Each is one PyIceberg
``manage_snapshots`` commit. PyIceberg would silently move an existing tag and accept a
snapshot id the table never had, so both are checked here first; a tag made by another
process between the check and the commit fails PyIceberg's ref requirement and is reported
as existing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sluice.errors import ConfigError, TimeTravelError
from sluice.lake.snapshots import known_refs

if TYPE_CHECKING:
    from pyiceberg.table import Table


def create_tag(table: Table, name: str, tag: str, snapshot_id: int | None) -> int:
    """Tag ``snapshot_id`` (None: the current snapshot) of ``table`` as ``tag``; the snapshot tagged."""
    from pyiceberg.exceptions import CommitFailedException

    _check_name(tag, name)
    if tag in table.metadata.refs:
        raise ConfigError(f"lake table {name} already has a {_kind(table, tag)} {tag!r}: drop it first")
    if snapshot_id is None:
        current = table.current_snapshot()
        if current is None:
            raise TimeTravelError(f"lake table {name} has no snapshot yet to tag as {tag!r}: write rows first")
        snapshot_id = current.snapshot_id
    elif table.snapshot_by_id(snapshot_id) is None:
        raise TimeTravelError(f"lake table {name} has no snapshot {snapshot_id} to tag as {tag!r}")
    try:
        table.manage_snapshots().create_tag(snapshot_id, tag).commit()
    except CommitFailedException:
        raise ConfigError(f"lake table {name}: tag {tag!r} was created by another commit meanwhile") from None
    return snapshot_id


def drop_tag(table: Table, name: str, tag: str) -> int:
    """Remove ``tag`` from ``table`` (the snapshot stays); the snapshot it pointed at."""
    from pyiceberg.exceptions import CommitFailedException

    ref = table.metadata.refs.get(tag)
    if ref is None:
        raise ConfigError(f"lake table {name} has no tag {tag!r} ({known_refs(table)})")
    if _kind(table, tag) != "tag":
        raise ConfigError(f"lake table {name}: {tag!r} is a branch, not a tag; drop_tag removes tags only")
    try:
        table.manage_snapshots().remove_tag(tag).commit()
    except CommitFailedException:
        raise ConfigError(f"lake table {name}: tag {tag!r} was changed by another commit meanwhile") from None
    return ref.snapshot_id


def _kind(table: Table, ref: str) -> str:
    return str(table.metadata.refs[ref].snapshot_ref_type.value)


def _check_name(tag: str, name: str) -> None:
    # an all-digit name would read as a snapshot id in VERSION AS OF, as Iceberg's Spark runtime reads it
    if not tag or not tag.strip() or tag.lstrip("-").isdigit():
        raise ConfigError(f"lake table {name}: {tag!r} is no tag name (VERSION AS OF reads digits as a snapshot id)")
