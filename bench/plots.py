"""One PNG per scenario: each group's paths as bars of their ratio to the group's baseline.

Drawn from the JSON alone (the largest scale of the scenario), on a log axis so that
"2x slower" and "2x faster" look alike; the baseline is the line at 1.
"""

from __future__ import annotations

import os
from typing import Any


def plot_scenario(scenario: dict[str, Any], path: str) -> str | None:
    """Write the scenario's plot to ``path``; None when nothing was timed against a baseline."""
    if not scenario["scales"]:
        return None
    scale = scenario["scales"][-1]
    groups = list(dict.fromkeys(r["scenario"] for r in scale["results"] if r.get("ratio") is not None))
    if not groups:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    rows_per_group = [
        [r for r in scale["results"] if r["scenario"] == g and r.get("ratio") is not None] for g in groups
    ]
    heights = [max(1.2, 0.22 * len(records) + 0.6) for records in rows_per_group]
    figure, axes = plt.subplots(
        len(groups), 1, figsize=(10, sum(heights)), squeeze=False, gridspec_kw={"height_ratios": heights}
    )
    for axis, group, records in zip(axes[:, 0], groups, rows_per_group):
        labels = [f"{r['shape']}: {r['path']}" for r in records]
        ratios = [r["ratio"] for r in records]
        colors = ["#4c72b0" if r["baseline"] else ("#55a868" if r["ratio"] < 1 else "#c44e52") for r in records]
        positions = range(len(records))
        axis.barh(positions, ratios, color=colors)
        axis.set_yticks(list(positions), labels, fontsize=7)
        axis.invert_yaxis()
        axis.set_xscale("log")
        axis.xaxis.set_minor_formatter(NullFormatter())  # labels on decades only: minor ones overlap
        axis.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}x"))
        axis.axvline(1.0, color="black", linewidth=0.8)
        axis.set_title(
            f"{group}, {scale['rows'] or 0:,} rows: median time / baseline (green: faster than the baseline)",
            fontsize=9,
            loc="left",
        )
        axis.tick_params(axis="x", labelsize=7)
    figure.tight_layout()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path
