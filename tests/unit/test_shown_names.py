"""What people read names the user's tables and aliases, and the pyramid plot is on one scale."""

from __future__ import annotations

import pytest

from sluice.display import ShownNames
from sluice.lake.plot import bars, pyramid_figure
from sluice.lake.pyramid import FileRead, Pyramid, Tier

NAMES = ShownNames.of("SELECT ... FROM pg.orders o JOIN pg.orders o ... x AS _col_9",
                      [("sluice_q3_s0", "o__s0", "pg.public.orders"), ("sluice_q3_s1", "o__s1", "pg.public.orders"),
                       ("sluice_q3_s10", "orders__s10", "pg.public.orders")])


def test_internal_names_become_the_users_outside_literals() -> None:
    text = ("SELECT o__s0.id, SUM(o__s1.x) AS _col_1, y AS _col_9 FROM sluice_q3_s0 AS o__s0 JOIN sluice_q3_s1 AS o__s1 "
            "JOIN sluice_q3_s10 AS orders__s10 WHERE o__s0.t = 'o__s0 sluice_q3_s1 x AS _col_2' AND O__S1.k = 1")
    assert NAMES.text(text) == ("SELECT o.id, SUM(o#2.x), y AS _col_9 FROM pg.public.orders AS o JOIN pg.public.orders AS o#2 "
                                "JOIN pg.public.orders AS orders WHERE o.t = 'o__s0 sluice_q3_s1 x AS _col_2' AND o#2.k = 1")
    assert [NAMES.alias(a) for a in ("o__s0", "o__s1", "orders__s10")] == ["o", "o#2", "orders"]


def _pyramid() -> Pyramid:
    """303 KiB of table, of which the scan reads 1.2 KiB: the last level prunes nothing of what reaches it."""
    tiers = (Tier("manifests", "manifests", 1, 1, 20_000, 310_272), Tier("partitions", "files", 168, 12, 1_400, 22_000),
             Tier("file statistics", "files", 12, 3, 350, 6_000), Tier("row groups", "row groups", 3, 3, 350, 1_229))
    return Pyramid("lake.telemetry.readings", 42, 20_000, 310_272, tiers, (FileRead("f.parquet", (0, 1, 2), 350, 1_229, True),))


def test_the_pyramid_is_drawn_on_the_tables_scale() -> None:
    drawn = bars(_pyramid())
    assert [b.level for b in drawn] == ["table", "manifests", "partitions", "file statistics", "row groups"]
    assert drawn[0].share == 1.0 and abs(drawn[-1].share - 1_229 / 310_272) < 1e-9  # 0.4%, not the 100% kept of its input
    assert drawn[-1].label.startswith("3 of 3 row groups kept (0% pruned), 1.2 KiB = 0.40% of the table")
    figure = pyramid_figure({"r": _pyramid()})
    (axis,) = figure.axes
    ends = [patch.get_x() + patch.get_width() for patch in axis.patches][len(drawn):]  # after the grey backgrounds
    assert ends == [pytest.approx(b.share) for b in drawn[::-1]]
    assert axis.get_xscale() == "log" and axis.get_xlim()[0] == pytest.approx(0.001)  # the 0.4% bar has length
    assert axis.get_title(loc="left").startswith("r: lake.telemetry.readings (snapshot 42): reads 1.2 KiB of 303.0 KiB")
