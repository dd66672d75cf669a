"""The lake catalog's tag procedures (``CALL lake.system.create_tag`` / ``drop_tag``): the table
argument resolved against the source, the work done by :mod:`sluice.lake.tags`."""

from __future__ import annotations

import logging

from sluice.errors import ConfigError
from sluice.lake.catalog import load_table, open_catalog
from sluice.planner.writes import lake
from sluice.protocol.catalog import TagAnswer, TagRequest
from sluice.sources.base import Source

_log = logging.getLogger(__name__)


def create_tag(source: Source, request: TagRequest) -> TagAnswer:
    """Tag a snapshot of the table ``request.table`` names."""
    from sluice.lake.tags import create_tag as create

    namespace, name, qualified = _table(source, request, "create_tag")
    table = load_table(open_catalog(lake(source, "create_tag"), name=source.name), namespace, name, source.name)
    tagged = create(table, qualified, request.tag, request.snapshot_id)
    _log.info("create_tag %s: %r -> snapshot %s", qualified, request.tag, tagged)
    return TagAnswer(table=qualified, tag=request.tag, snapshot_id=tagged)


def drop_tag(source: Source, request: TagRequest) -> TagAnswer:
    """Remove a tag from the table ``request.table`` names; its snapshot stays."""
    from sluice.lake.tags import drop_tag as drop

    namespace, name, qualified = _table(source, request, "drop_tag")
    table = load_table(open_catalog(lake(source, "drop_tag"), name=source.name), namespace, name, source.name)
    was = drop(table, qualified, request.tag)
    _log.info("drop_tag %s: %r (snapshot %s)", qualified, request.tag, was)
    return TagAnswer(table=qualified, tag=request.tag, snapshot_id=was)


def _table(source: Source, request: TagRequest, what: str) -> tuple[str, str, str]:
    """``ns.t`` (or ``catalog.ns.t`` naming this catalog) as namespace, name and qualified name."""
    lake(source, what)  # a SQL source is refused, named, before its argument is parsed
    parts = request.table.split(".")
    if len(parts) == 3 and parts[0] == source.name:
        parts = parts[1:]
    if len(parts) != 2 or not all(parts):
        raise ConfigError(
            f"{what}: the table argument is <namespace>.<table> of catalog {source.name!r}, not {request.table!r}"
        )
    return parts[0], parts[1], f"{source.name}.{parts[0]}.{parts[1]}"
