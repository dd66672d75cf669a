"""Orphan files: files under a lake table's folder that no snapshot and no metadata file names.

They come from jobs that could not clean up (a process killed outright leaves its
``_staging-<job>`` folder, or a ``<job>`` folder if killed inside the commit call; see
docs/lake.md "Commit"), from other writers, or from copies made by hand. No reader ever
opens them, but they take space. :func:`remove_orphan_files` lists every file under the
table's location and deletes those that are

* named by nothing the table's metadata reaches: the current and logged ``metadata.json``
  files, every snapshot's manifest list, its manifests and every data and delete file they
  list (added, existing or deleted entries alike, so a file an older snapshot still reads
  is kept), and the table's (partition) statistics files; and
* older than ``older_than`` (by modification time). A running job's files are named by no
  snapshot until it commits; the age margin (Iceberg's own default: 3 days) keeps them.

The references are read before the folder is listed, so a file committed in between is new
and kept by the age rule. ``dry_run`` lists what would go and deletes nothing.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlparse

import pyarrow.fs as pafs

from sluice.errors import ConfigError
from sluice.lake.catalog import LakeLocation, load_table, open_catalog
from sluice.lake.maintenance import snapshot_files
from sluice.lake.paths import filesystem_of

if TYPE_CHECKING:
    from pyiceberg.table import Table

#: files younger than this may belong to a job that has not committed yet (Iceberg's default)
DEFAULT_MIN_AGE = dt.timedelta(days=3)


@dataclass(frozen=True)
class OrphanSummary:
    """What :func:`remove_orphan_files` found (and deleted unless it was a dry run)."""

    table: str
    orphans: tuple[str, ...]
    orphan_bytes: int
    too_new: int
    referenced: int
    dry_run: bool

    def __str__(self) -> str:
        verb = "would delete" if self.dry_run else "deleted"
        head = (
            f"{self.table}: {verb} {len(self.orphans)} orphan file(s), {self.orphan_bytes:,} bytes; "
            f"{self.referenced} referenced file(s) kept"
        )
        if self.too_new:
            head += f"; {self.too_new} unreferenced file(s) newer than the cut-off kept (a job may still be running)"
        return "\n".join([head, *(f"  {path}" for path in self.orphans)])


def remove_orphan_files(
    lake_url: str,
    namespace: str,
    table: str,
    *,
    older_than: dt.datetime | None = None,
    dry_run: bool = False,
) -> OrphanSummary:
    """Delete the files under ``namespace.table``'s folder that its metadata does not name and
    that were last modified before ``older_than`` (default: 3 days ago); ``dry_run`` only lists them."""
    cutoff = older_than or dt.datetime.now(dt.timezone.utc) - DEFAULT_MIN_AGE
    if cutoff.tzinfo is None:
        raise ConfigError(f"older_than needs a time zone (an instant), not {cutoff.isoformat()}")
    lake_table = load_table(open_catalog(LakeLocation.from_url(lake_url)), namespace, table)
    referenced = _referenced(lake_table)
    filesystem, root = filesystem_of(lake_table.location())
    listed = filesystem.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
    orphans: list[pafs.FileInfo] = []
    too_new = 0
    for info in listed:
        if info.type != pafs.FileType.File or _path(info.path) in referenced:
            continue
        if info.mtime is not None and info.mtime >= cutoff:
            too_new += 1
            continue
        orphans.append(info)
    orphans.sort(key=lambda info: info.path)
    if not dry_run:
        for info in orphans:
            filesystem.delete_file(info.path)
        _remove_emptied_folders(filesystem, root, {os.path.dirname(info.path) for info in orphans})
    return OrphanSummary(
        f"{namespace}.{table}",
        tuple(info.path for info in orphans),
        sum(info.size or 0 for info in orphans),
        too_new,
        len(referenced),
        dry_run,
    )


def _referenced(lake_table: Table) -> set[str]:
    """Every file the table's metadata reaches, as plain paths."""
    metadata = lake_table.metadata
    paths = {lake_table.metadata_location, *(entry.metadata_file for entry in metadata.metadata_log)}
    paths.update(statistics.statistics_path for statistics in metadata.statistics)
    paths.update(statistics.statistics_path for statistics in metadata.partition_statistics)
    data_files, manifests = snapshot_files(metadata.snapshots, lake_table.io, discard_deleted=False)
    return {_path(path) for path in paths | data_files | manifests}


def _path(location: str) -> str:
    """``file:///a/b`` and ``/a/b`` as the same key (the catalog writes URIs, a listing gives paths)."""
    parsed = urlparse(location)
    return os.path.normpath(parsed.path if parsed.scheme in ("file", "") else location)


def _remove_emptied_folders(filesystem: pafs.FileSystem, root: str, folders: set[str]) -> None:
    """Remove the folders the deletions emptied (a killed job's ``_staging-<job>``); the table's
    own ``data`` and ``metadata`` folders stay."""
    stop = os.path.normpath(root)
    for folder in sorted(folders, key=len, reverse=True):
        current = os.path.normpath(folder)
        while current.startswith(stop + os.sep) and os.path.dirname(current) != stop:
            listed = filesystem.get_file_info(pafs.FileSelector(current, allow_not_found=True))
            if listed:
                break
            filesystem.delete_dir(current)
            current = os.path.dirname(current)
