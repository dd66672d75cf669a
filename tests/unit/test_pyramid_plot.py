"""The pyramid plot is drawn on one scale: the table's bytes, not each level's input."""

from __future__ import annotations

from typing import cast

import pytest
from matplotlib.patches import Rectangle

from sluice.lake.plot import bars, pyramid_figure
from sluice.lake.pyramid import FileRead, Pyramid, Tier


def _pyramid() -> Pyramid:
    """303 KiB of table, of which the scan reads 1.2 KiB: the last level prunes nothing of what reaches it."""
    tiers = (
        Tier("manifests", "manifests", 1, 1, 20_000, 310_272),
        Tier("partitions", "files", 168, 12, 1_400, 22_000),
        Tier("file statistics", "files", 12, 3, 350, 6_000),
        Tier("row groups", "row groups", 3, 3, 350, 1_229),
    )
    return Pyramid(
        "lake.telemetry.readings", 42, 20_000, 310_272, tiers, (FileRead("f.parquet", (0, 1, 2), 350, 1_229, True),)
    )


def test_the_pyramid_is_drawn_on_the_tables_scale() -> None:
    drawn = bars(_pyramid())
    assert [b.level for b in drawn] == ["table", "manifests", "partitions", "file statistics", "row groups"]
    assert (
        drawn[0].share == 1.0 and abs(drawn[-1].share - 1_229 / 310_272) < 1e-9
    )  # 0.4%, not the 100% kept of its input
    assert drawn[-1].label.startswith("3 of 3 row groups kept (0% pruned), 1.2 KiB = 0.40% of the table")
    figure = pyramid_figure({"r": _pyramid()})
    (axis,) = figure.axes
    ends = [patch.get_x() + patch.get_width() for patch in cast(list[Rectangle], axis.patches)][
        len(drawn) :
    ]  # after the grey backgrounds
    assert ends == [pytest.approx(b.share) for b in drawn[::-1]]
    assert axis.get_xscale() == "log" and axis.get_xlim()[0] == pytest.approx(0.001)  # the 0.4% bar has length
    assert axis.get_title(loc="left").startswith("r: lake.telemetry.readings (snapshot 42): reads 1.2 KiB of 303.0 KiB")
