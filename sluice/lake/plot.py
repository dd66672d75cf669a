"""A picture of the pruning pyramid: one bar per level, kept over total, per lake scan.

Written as PNG with matplotlib's Agg backend (no display needed). Each level's bar shows
the share of its input it kept, labelled with the counts and the bytes kept, so the
narrowing from manifests to row groups reads top to bottom.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sluice.lake.pyramid import Pyramid


def write_pyramid_png(pyramids: dict[str, "Pyramid"], path: str, title: str = "") -> None:
    """Draw every scan's pyramid (by scan alias) into one PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sluice.lake.pyramid import size_text

    if not pyramids:
        raise ValueError("the query has no lake scan: there is no pruning pyramid to draw")
    figure, axes = plt.subplots(len(pyramids), 1, figsize=(9, 2.6 * len(pyramids)), squeeze=False)
    for axis, (alias, pyramid) in zip(axes[:, 0], pyramids.items()):
        tiers = list(pyramid.tiers)
        names = [t.level for t in tiers][::-1]
        kept = [(t.kept / t.total if t.total else 0.0) for t in tiers][::-1]
        axis.barh(names, [1.0] * len(tiers), color="#e6e6e6", edgecolor="#999999")
        axis.barh(names, kept, color="#2f7ebc")
        for row, tier in enumerate(tiers[::-1]):
            axis.text(1.01, row, f"{tier.kept:,} of {tier.total:,} {tier.unit} ({tier.pruned_ratio:.0%} pruned), "
                                 f"{size_text(tier.bytes_kept)}", va="center", fontsize=8)
        axis.set_xlim(0, 1)
        axis.set_xticks([0, 0.5, 1])
        axis.set_xticklabels(["0%", "50%", "100% kept"])
        axis.set_title(f"{alias}: {pyramid.table} (snapshot {pyramid.snapshot_id}); "
                       f"reads {size_text(pyramid.bytes_read)} of {size_text(pyramid.table_bytes)}", fontsize=9, loc="left")
    if title:
        figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(figure)
