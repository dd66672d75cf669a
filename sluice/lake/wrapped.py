"""Truncate partitions whose value wrapped at the integer minimum: no projection prunes them.

Iceberg's truncate of an int or long is ``v - (((v % W) + W) % W)`` computed in the
column's own type (Iceberg Java's ``TruncateUtil.truncateInt``/``truncateLong``; pyiceberg-core,
which computes the partitions Sluice's ingest writes, agrees). Below the type's first
multiple of ``W`` the subtraction wraps: ``truncate(10, -2147483648)`` is written as
``2147483646``, ``truncate(1000, -2**63)`` as ``9223372036854775616``. PyIceberg's projections
(pruning, files proven to match whole, the files an overwrite replaces) compute the same
transform on Python integers, which do not wrap (``-2147483650``), so the projection of
``i = -2147483648`` misses the partition its rows are in, and ``i > 2147483640`` "proves"
that partition matches whole.

A wrapped value is never a multiple of ``W`` (it is ``2**bits`` modulo ``W`` away from one;
every true truncate is a multiple), so a wrapped partition record is recognised exactly.
For it no projection is trusted: every inclusive test keeps it and no strict test proves
it whole; the rows are then judged by their own column statistics, which hold true values.
A manifest is kept when its partition summary's range may hold the one value that wraps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyiceberg.manifest import ManifestFile
    from pyiceberg.partitioning import PartitionSpec
    from pyiceberg.schema import Schema


@dataclass(frozen=True)
class _WrappingField:
    """One truncate field of an int/long column whose minimum is not a multiple of its width."""

    position: int  # in the partition record
    width: int
    wrapped: int  # the value the truncate of the column's minimum is written as
    field_type: Any  # the partition field's Iceberg type (to read manifest summaries)


class WrappedTruncates:
    """The truncate fields of one partition spec that can wrap, and tests for records and manifests."""

    def __init__(self, spec: PartitionSpec, schema: Schema) -> None:
        from pyiceberg.transforms import TruncateTransform
        from pyiceberg.types import IntegerType, LongType

        partition_type = spec.partition_type(schema)
        fields = []
        for position, field in enumerate(spec.fields):
            source_type = schema.find_field(field.source_id).field_type
            if not isinstance(field.transform, TruncateTransform):
                continue
            bits = 32 if isinstance(source_type, IntegerType) else 64 if isinstance(source_type, LongType) else 0
            width = field.transform.width
            minimum = -(2 ** (bits - 1))
            if bits and minimum % width:
                wrapped = minimum - minimum % width + 2**bits
                fields.append(_WrappingField(position, width, wrapped, partition_type.fields[position].field_type))
        self.fields = tuple(fields)

    def in_record(self, record: Any) -> bool:
        """Whether a data file's partition record holds a value no true truncate gives (a wrapped one)."""
        return any((value := record[f.position]) is not None and value % f.width != 0 for f in self.fields)

    def in_manifest(self, manifest: ManifestFile) -> bool:
        """Whether a manifest's partition summaries leave room for a wrapped value (or say nothing)."""
        from pyiceberg.conversions import from_bytes

        if not self.fields:
            return False
        summaries = manifest.partitions
        if not summaries:
            return True
        for field in self.fields:
            summary = summaries[field.position]
            if summary.lower_bound is None:
                continue  # only NULLs in this field
            if int(from_bytes(field.field_type, summary.lower_bound)) > field.wrapped:
                continue
            if summary.upper_bound is None or int(from_bytes(field.field_type, summary.upper_bound)) >= field.wrapped:
                return True
        return False
