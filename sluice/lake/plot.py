"""A picture of the pruning pyramid: one bar per level, on one absolute scale per lake scan.

Every bar is the bytes that level keeps as a share of the whole table (the top bar), so
the pyramid narrows as pruning does: a scan that reads 1.2 KiB of a 303 KiB table ends
in a sliver, however little the last level pruned of what reached it. (Each bar used to
be relative to the level above, which drew that scan as no pruning at all.) Each bar is
labelled with its counts, the share of its own input it kept and the bytes. Written as
PNG with matplotlib's Agg backend (no display needed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from sluice.lake.pyramid import Pyramid


@dataclass(frozen=True)
class Bar:
    """One level as drawn: its name, its width (a share of the table's bytes), its label."""

    level: str
    share: float
    label: str


def bars(pyramid: Pyramid) -> list[Bar]:
    """The table, then each level of ``pyramid``, on the table's byte scale (top to bottom).

    The last level (row groups) counts only the projected columns of the kept row groups:
    the bytes the scan reads.
    """
    from sluice.lake.pyramid import size_text

    whole = pyramid.table_bytes
    drawn = [Bar("table", 1.0 if whole else 0.0, f"{pyramid.table_rows:,} rows, {size_text(whole)}")]
    for index, tier in enumerate(pyramid.tiers):
        share = tier.bytes_kept / whole if whole else 0.0
        read = " (projected columns: what is read)" if index == len(pyramid.tiers) - 1 else ""
        drawn.append(
            Bar(
                tier.level,
                min(share, 1.0),
                f"{tier.kept:,} of {tier.total:,} {tier.unit} kept "
                f"({tier.pruned_ratio:.0%} pruned), {size_text(tier.bytes_kept)} "
                f"= {share:.2%} of the table{read}",
            )
        )
    return drawn


def pyramid_figure(pyramids: dict[str, Pyramid], title: str = "") -> Figure:
    """Every scan's pyramid, by the user's scan alias, one panel each."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sluice.lake.pyramid import size_text

    if not pyramids:
        raise ValueError("the query has no lake scan: there is no pruning pyramid to draw")
    figure, axes = plt.subplots(len(pyramids), 1, figsize=(10, 2.9 * len(pyramids)), squeeze=False)
    for axis, (alias, pyramid) in zip(axes[:, 0], pyramids.items(), strict=True):
        drawn = bars(pyramid)[::-1]
        names = [bar.level for bar in drawn]
        low = _axis_start([bar.share for bar in drawn])
        axis.barh(names, [1.0 - low] * len(drawn), left=low, color="#eeeeee", edgecolor="#bbbbbb")
        axis.barh(
            names,
            [max(bar.share - low, 0.0) for bar in drawn],
            left=low,
            color=["#2f7ebc"] * (len(drawn) - 1) + ["#7f7f7f"],
        )
        for row, bar in enumerate(drawn):
            axis.text(1.15, row, bar.label, va="center", fontsize=8)
        axis.set_xscale("log")
        axis.set_xlim(low, 1)
        ticks = [10.0**-k for k in range(round(-math.log10(low)), -1, -1)]
        axis.set_xticks(ticks)
        axis.set_xticklabels([f"{t:.{max(0, round(-math.log10(t)) - 2)}%}" for t in ticks], fontsize=8)
        axis.minorticks_off()
        axis.set_xlabel("share of the table's bytes kept (log scale)", fontsize=8)
        axis.set_title(
            f"{alias}: {pyramid.table} (snapshot {pyramid.snapshot_id}): "
            f"reads {size_text(pyramid.bytes_read)} of {size_text(pyramid.table_bytes)}",
            fontsize=9,
            loc="left",
        )
    if title:
        figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    return figure


def _axis_start(shares: list[float]) -> float:
    """Where the log axis starts: a power of ten below the smallest share drawn, so even
    that bar has length (between 0.001% and 1%)."""
    smallest = min((share for share in shares if share > 0), default=1.0)
    power = math.floor(math.log10(smallest))
    if 10.0**power >= smallest:
        power -= 1
    return 10.0 ** max(-5, min(-2, power))


def write_pyramid_png(pyramids: dict[str, Pyramid], path: str, title: str = "") -> None:
    """Draw every scan's pyramid (by the user's scan alias) into one PNG at ``path``."""
    import matplotlib.pyplot as plt

    figure = pyramid_figure(pyramids, title)
    figure.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(figure)
