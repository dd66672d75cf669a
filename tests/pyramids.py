"""The pruning pyramid of a lake scan, for tests that read its tiers.

``Source.pruning`` answers None for a scan that prunes nothing (a SQL source, a lake
metadata table); the tests here ask about data tables, where a pyramid is the answer.
"""

from __future__ import annotations

from sluice.lake.pyramid import Pyramid
from sluice.scan.spec import ScanSpec
from sluice.sources.base import Source


def pyramid_of(source: Source, spec: ScanSpec) -> Pyramid:
    pyramid = source.pruning(spec)
    assert pyramid is not None, f"{spec.table.name}: no pruning pyramid"
    return pyramid
