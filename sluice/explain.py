"""EXPLAIN text: per scan, what the source does and what Spark still does, and why."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from sluice.planner import runtime
from sluice.scan.plan import QueryPlan

if TYPE_CHECKING:
    from sluice.lake.pyramid import Pyramid
    from sluice.sources.base import Source


def scan_pruning(plan: QueryPlan, sources: Mapping[str, Source]) -> dict[str, Pyramid]:
    """The pruning pyramid of each of ``plan``'s scans that has one (lake scans), by scan id;
    ``sources`` by name (a scan of a source not among them has none)."""
    found = {}
    for scan in plan.scans:
        source = sources.get(scan.source)
        pyramid = source.pruning(scan.spec) if source is not None else None
        if pyramid is not None:
            found[scan.scan_id] = pyramid
    return found


def pyramids_by_table(plan: QueryPlan, pruning: Mapping[str, Pyramid]) -> dict[str, Pyramid]:
    """``pruning`` (by scan id) by table (``table#2`` for a second scan of it)."""
    return {scan.alias: pyramid for scan in plan.scans if (pyramid := pruning.get(scan.scan_id))}


def render_explain(
    plan: QueryPlan,
    verbose: bool = False,
    metrics: dict[str, dict[str, int]] | None = None,
    pruning: dict[str, Pyramid] | None = None,
) -> str:
    lines = ["== Sluice plan =="]
    for scan in plan.scans:
        lines.append(f"Scan {scan.alias} on {scan.source} ({scan.source_url})")
        lines.append(f"  remote query: {scan.remote_query}")
        partitions = (
            1
            if scan.spec.limit is not None or scan.spec.aggregate is not None or scan.spec.join is not None
            else scan.spec.partitions
        )
        if scan.spec.aggregate is None:
            lines.append(f"  columns: {', '.join(scan.spec.columns)}")
        lines.append(f"  partitions: up to {partitions}")
        if scan.reader is not None:
            shown = (
                "Spark's vectorised Parquet reader"
                if scan.reader == "vectorised"
                else "row-group-precise Python reader"
            )
            lines.append(f"  Reader: {shown} -- {scan.reader_reason}")
        if scan.spec.limit is not None:
            lines.append(f"  limit: {scan.spec.limit}" + (f" ({scan.order})" if scan.order else ""))
        for verdict in scan.verdicts:
            lines.append(f"  [{verdict.level.value}] {verdict.sql}")
            lines.append(f"      reason: {verdict.reason}")
        if scan.aggregates:
            lines.append(
                "  aggregates: "
                + (
                    "pushed (the source returns the final groups)"
                    if scan.spec.aggregate is not None
                    else "computed by Spark"
                )
            )
        for verdict in scan.aggregates:
            lines.append(f"  [{verdict.level.value}] {verdict.sql}")
            lines.append(f"      reason: {verdict.reason}")
        if scan.joins or scan.join_note:
            lines.append(
                "  join: "
                + ("pushed (the source joins both tables)" if scan.spec.join is not None else "run by Spark")
                + (f": {scan.join_note}" if scan.join_note else "")
            )
        for verdict in scan.joins:
            lines.append(f"  [JOIN {verdict.level.value}] {verdict.sql}")
            lines.append(f"      reason: {verdict.reason}")
        for verdict in scan.runtime:
            lines.append(f"  [RUNTIME {verdict.level.value}] {runtime.clipped(verdict.sql)}")
            lines.append(f"      reason: {verdict.reason}")
        if pruning and scan.scan_id in pruning:
            lines += ["  " + line for line in pruning[scan.scan_id].render()]
        if metrics is not None:
            measured = metrics.get(scan.scan_id, {"rows": 0, "bytes": 0, "reads": 0})
            lines.append(
                f"  transferred: {measured['rows']:,} rows, {measured['bytes']:,} "
                + ("compressed Parquet bytes" if scan.reader is not None else "bytes")  # a lake scan (IcebergSource)
                + f" ({measured['reads']} partition reads)"
            )
        if verbose:
            for step in scan.trace:
                lines.append(f"  -- after {step.rule}: {step.text if step.changed else 'same as above'}")
    lines.append("== Spark's plan ==")
    lines.append(plan.spark_plan)
    return "\n".join(lines)
