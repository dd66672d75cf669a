"""Push ``LIMIT n`` (and ``ORDER BY ... LIMIT n``, top-N) into a scan when that is exact.

Only for a query that reads one scan with nothing between the limit and the scan that
changes row counts (no join, aggregate, DISTINCT, window, OFFSET, residual filter) and
whose every filter is EXACT. Top-N also needs every sort key to order identically in the
source (numbers, dates, booleans, text under a binary collation) with NULL placement
stated explicitly. Spark keeps its own ORDER BY and LIMIT over the returned rows.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from sluice.planner.state import OrderKey, PlanState, ScanState
from sluice.pushdown.levels import Level
from sluice.pushdown.translator import Translator, Unsupported
from sluice.types import Kind

_ORDERABLE = (Kind.INTEGRAL, Kind.DECIMAL, Kind.FLOAT, Kind.DATE, Kind.TIMESTAMP, Kind.TIMESTAMP_NTZ, Kind.BOOLEAN, Kind.STRING)


def _single_scan(state: PlanState, select: exp.Select) -> ScanState | None:
    from_ = select.args.get("from_")
    if from_ is None or select.args.get("joins") or not isinstance(from_.this, exp.Table):
        return None
    return next((s for s in state.scans if s.alias == from_.this.alias_or_name and s.scan_id == from_.this.name), None)


def _changes_row_count(select: exp.Select) -> bool:
    blocked = ("where", "group", "having", "distinct", "offset", "qualify", "windows")
    if any(select.args.get(key) for key in blocked):
        return True
    return any(True for e in select.expressions for _ in e.find_all(exp.AggFunc, exp.Window, exp.Explode, exp.Posexplode))


def _order_keys(state: PlanState, scan: ScanState, select: exp.Select) -> tuple[OrderKey, ...] | None:
    """The sort keys if every one orders identically in the source, else None."""
    order = select.args.get("order")
    if order is None:
        return ()
    translator = Translator(state.dialects[scan.source], scan.table, state.session_zone)
    outputs = {e.alias: e.this for e in select.expressions if isinstance(e, exp.Alias)}
    keys = []
    for ordered in order.expressions:
        node = ordered.this
        if isinstance(node, exp.Column) and not node.table:  # ORDER BY a select alias
            node = outputs.get(node.name, node)
        if not isinstance(node, exp.Column) or node.table != scan.alias:
            return None
        try:
            value = translator.value(node)
        except Unsupported:
            return None
        if value.type.kind not in _ORDERABLE or (value.text is not None and value.text.ordering is None):
            return None
        if value.column is not None and state.dialects[scan.source].suspect(value.column) is not None:
            return None  # some stored values sort differently remotely (SQLite decimals held as TEXT)
        if value.type.kind in (Kind.TIMESTAMP, Kind.TIMESTAMP_NTZ) and not state.dialects[scan.source].orders_timestamps:
            return None
        descending = bool(ordered.args.get("desc"))
        nulls_first = ordered.args.get("nulls_first")
        keys.append(OrderKey(value.column.name if value.column else node.name, descending,
                             (not descending) if nulls_first is None else bool(nulls_first)))
    return tuple(keys)


def apply(state: PlanState) -> PlanState:
    select = state.tree
    if not isinstance(select, exp.Select) or select.args.get("limit") is None:
        return state
    limit_node = select.args["limit"].expression
    scan = _single_scan(state, select)
    if scan is None or _changes_row_count(select) or not isinstance(limit_node, exp.Literal) or limit_node.is_string:
        return state
    if any(v.level is not Level.EXACT for v in scan.verdicts):
        return state
    keys = _order_keys(state, scan, select)
    if keys is None:
        return state
    return state.with_scan(replace(scan, limit=int(limit_node.this), order=keys))
