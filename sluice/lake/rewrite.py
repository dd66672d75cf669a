"""Commit a compaction as Iceberg's rewrite-files: replace exactly the files it read, beside writers.

A rewrite read its files at one snapshot (the *base*) and wrote the same rows into new
files. Committing it must not undo what other writers committed since, and must not bring
back a row they deleted. Iceberg's rule for ``RewriteFiles`` (Java's ``BaseRewriteFiles``)
is what this module applies, in one ``replace`` snapshot:

- a concurrent **append** adds files; it does not touch the rewritten ones, so it is no
  conflict: the commit keeps the appended files (the manifests are rebuilt on the head);
- a concurrent commit that **removed** one of the rewritten data files, or one of the delete
  files the rewrite drops (an overwrite, a copy-on-write DELETE, another compaction), or
  that **added a position delete file** that may name a rewritten file, IS a conflict: the
  rows the rewrite read are no longer the table's, so it fails with one line naming that
  snapshot and its operation, and nothing is committed;
- a concurrent **equality delete** is no conflict: the new files take the base snapshot's
  sequence number as their data sequence number (Java's ``dataSequenceNumber``, as its
  rewrite action sets it by default), so an equality delete committed after the base
  applies to them as it applied to the files they replace.

PyIceberg's own ``overwrite`` checks the table's isolation level (``serializable`` by
default), under which *any* concurrently added file fails the commit ("Added data files were
found matching the filter"), so a compaction never committed while an ingest appended. Here
the snapshot producer is PyIceberg's (manifest list, summary, sequence numbers, its commit
retries: each retry refreshes the table and rebuilds the manifests on the new head), with
the manifests and the checks above built here, on every attempt, against the head it
commits on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyiceberg.exceptions import ValidationException
from pyiceberg.manifest import (
    DataFileContent,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestWriterV2,
)
from pyiceberg.table.snapshots import Operation, Summary, ancestors_of
from pyiceberg.table.update.snapshot import _SnapshotProducer
from pyiceberg.typedef import EMPTY_DICT

from sluice.lake.deletes import _names, _partition_key

if TYPE_CHECKING:
    from pyiceberg.io import FileIO
    from pyiceberg.manifest import DataFile, ManifestFile, ManifestWriter
    from pyiceberg.table import Transaction
    from pyiceberg.table.snapshots import Snapshot


@dataclass(frozen=True)
class Rewrite:
    """What a compaction replaces: the data files it read at ``base`` and the delete files that,
    once those are gone, apply to no live data file.

    ``statement`` (``UPDATE lake.ns.t``, :mod:`sluice.lake.row_level`) makes it a copy-on-write
    row change instead, as Iceberg's ``OverwriteFiles`` commits one: an ``overwrite`` snapshot
    whose new files take its own sequence number (they hold changed rows, not the same rows),
    and any delete file added since the base that may apply to a replaced file, equality
    deletes too, is a conflict (the statement read rows that are no longer the table's)."""

    table: str
    base: Snapshot
    data_files: list[DataFile]
    delete_files: list[DataFile]
    statement: str | None = None


class RewriteConflict(ValidationException):
    """A concurrent commit changed the rows the rewrite read; the message is one line saying which."""


class _DeleteManifestWriter(ManifestWriterV2):
    """PyIceberg's v2 manifest writer, for a manifest of delete files (PyIceberg writes none)."""

    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


class RewriteFiles(_SnapshotProducer["RewriteFiles"]):
    """One ``replace`` snapshot: the rewrite's new data files added, the replaced files removed."""

    def __init__(self, transaction: Transaction, io: FileIO, rewrite: Rewrite, properties: dict[str, str]) -> None:
        self._kind = Operation.REPLACE if rewrite.statement is None else Operation.OVERWRITE
        super().__init__(self._kind, transaction, io, snapshot_properties=properties)
        self._rewrite = rewrite
        self._starting_snapshot_id = rewrite.base.snapshot_id
        self._deleted_data_files = {*rewrite.data_files, *rewrite.delete_files}  # the summary counts them by content

    def _summary(self, snapshot_properties: dict[str, str] = EMPTY_DICT) -> Summary:
        """PyIceberg's summary (added, removed and total counts), whose totals it computes for an
        ``overwrite`` but not a ``replace``: built as one, then named what it is."""
        self._operation = Operation.OVERWRITE
        try:
            summary = super()._summary(snapshot_properties)
        finally:
            self._operation = self._kind
        return Summary(self._kind, **summary.additional_properties)

    def _validate_concurrency(self) -> None:
        """Checked in :meth:`_manifests`, against the head each attempt commits on."""

    def _deleted_entries(self) -> list[ManifestEntry]:
        return []  # written by _manifests, in the manifests they were in

    def _existing_manifests(self) -> list[ManifestFile]:
        return []

    def _manifests(self) -> list[ManifestFile]:
        metadata = self._transaction.table_metadata
        head = metadata.snapshot_by_name(self._target_branch)
        if head is None:
            raise self._conflict("the table has no snapshot any more")
        self._check_since_base(head)
        replaced = {data_file.file_path for data_file in self._deleted_data_files}
        found: set[str] = set()
        manifests = []
        for manifest in head.manifests(self._io):
            entries = manifest.fetch_manifest_entry(self._io, discard_deleted=True)
            hits = {entry.data_file.file_path for entry in entries} & replaced
            if not hits:
                manifests.append(manifest)
                continue
            found |= hits
            with self._writer(manifest) as writer:
                for entry in entries:
                    (writer.delete if entry.data_file.file_path in hits else writer.existing)(entry)
            manifests.append(writer.to_manifest_file())
        if missing := sorted(replaced - found):
            raise self._conflict(f"{missing[0]} (one of the files it replaces) is no longer live at the head")
        return self._added_manifests(metadata.format_version) + manifests

    def _added_manifests(self, format_version: int) -> list[ManifestFile]:
        if not self._added_data_files:
            return []
        compaction = self._rewrite.statement is None
        sequence = self._rewrite.base.sequence_number if format_version >= 2 and compaction else None
        with self.new_manifest_writer(spec=self._transaction.table_metadata.spec()) as writer:
            for data_file in self._added_data_files:
                writer.add_entry(
                    ManifestEntry.from_args(
                        status=ManifestEntryStatus.ADDED,
                        snapshot_id=self._snapshot_id,
                        sequence_number=sequence,
                        file_sequence_number=None,
                        data_file=data_file,
                    )
                )
        return [writer.to_manifest_file()]

    def _writer(self, manifest: ManifestFile) -> ManifestWriter:
        if manifest.content == ManifestContent.DATA:
            return self.new_manifest_writer(self.spec(manifest.partition_spec_id))
        return _DeleteManifestWriter(
            self.spec(manifest.partition_spec_id),
            self.schema(),
            self.new_manifest_output(),
            self._snapshot_id,
            self._compression,
        )

    def _check_since_base(self, head: Snapshot) -> None:
        """Fail when a commit after the base removed a file this rewrite replaces, or added a
        position delete file that may apply to a replaced data file."""
        base_id = self._rewrite.base.snapshot_id
        metadata = self._transaction.table_metadata
        newer = []
        for snapshot in ancestors_of(head, metadata):
            if snapshot.snapshot_id == base_id:
                break
            newer.append(snapshot)
        else:
            raise self._conflict(f"snapshot {base_id}, which it read, is no longer an ancestor of the head")
        replaced = {data_file.file_path for data_file in self._deleted_data_files}
        data_files = self._rewrite.data_files
        for snapshot in reversed(newer):
            for manifest in snapshot.manifests(self._io):
                if manifest.added_snapshot_id != snapshot.snapshot_id:
                    continue
                for entry in manifest.fetch_manifest_entry(self._io, discard_deleted=False):
                    if entry.snapshot_id != snapshot.snapshot_id:
                        continue
                    path = entry.data_file.file_path
                    if entry.status == ManifestEntryStatus.DELETED and path in replaced:
                        raise self._conflict(f"{path}, one of the files it replaces", snapshot, "removed")
                    if entry.status == ManifestEntryStatus.ADDED and self._conflicting_delete(entry.data_file):
                        named = next((d for d in data_files if self._may_apply(entry.data_file, d)), None)
                        if named is not None:
                            kind = (
                                "position"
                                if entry.data_file.content == DataFileContent.POSITION_DELETES
                                else "equality"
                            )
                            raise self._conflict(
                                f"{kind} delete file {path}, which may delete rows of {named.file_path}",
                                snapshot,
                                "added",
                            )

    def _conflicting_delete(self, added: DataFile) -> bool:
        """Whether a delete file added since the base may conflict: a position delete always; an
        equality delete only for a row change (a compaction's files keep the base's sequence
        number, so the delete applies to them as to the files they replace)."""
        if added.content == DataFileContent.POSITION_DELETES:
            return True
        return added.content == DataFileContent.EQUALITY_DELETES and self._rewrite.statement is not None

    def _may_apply(self, delete: DataFile, data: DataFile) -> bool:
        """A delete file may delete rows of ``data``; an equality delete of an unpartitioned spec
        is global (it applies to every partition)."""
        if delete.content == DataFileContent.EQUALITY_DELETES:
            spec = self._transaction.table_metadata.specs().get(delete.spec_id or 0)
            if spec is None or spec.is_unpartitioned():
                return True
        return _may_name(delete, data)

    def _conflict(self, what: str, snapshot: Snapshot | None = None, verb: str = "") -> RewriteConflict:
        by = ""
        if snapshot is not None:
            summary = snapshot.summary
            operation = summary.operation.value if summary is not None else "unknown operation"
            job = summary.additional_properties.get("sluice.ingest-job") if summary is not None else None
            by = f"snapshot {snapshot.snapshot_id} ({operation}{f', job {job}' if job else ''}) {verb} "
        base = self._rewrite.base.snapshot_id
        if self._rewrite.statement is not None:
            return RewriteConflict(
                f"{self._rewrite.statement} conflicts with a concurrent commit: {by}{what}; the statement read "
                f"snapshot {base}, nothing was committed and no row changed; run it again"
            )
        return RewriteConflict(
            f"optimize {self._rewrite.table} conflicts with a concurrent commit: {by}{what}; the rewrite of "
            f"snapshot {base} was not committed and no row changed; run optimize again"
        )


def _may_name(delete: DataFile, data: DataFile) -> bool:
    """A position delete file may delete rows of ``data``: same partition, and its ``file_path``
    bounds (when it has them) include the data file's path."""
    return _partition_key(delete.spec_id, delete.partition) == _partition_key(data.spec_id, data.partition) and _names(
        delete, data
    )


def commit_rewrite(
    transaction: Transaction, io: Any, rewrite: Rewrite, added: list[DataFile], properties: dict[str, str]
) -> None:
    """Stage the rewrite's snapshot in ``transaction`` (committed, and retried, by the caller)."""
    producer = RewriteFiles(transaction, io, rewrite, properties)
    for data_file in added:
        producer.append_data_file(data_file)
    producer.commit()
