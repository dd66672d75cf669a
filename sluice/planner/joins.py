"""Join pushdown: whether a source runs Spark's join of two of its tables, with Spark's exact rows.

With ``spark.sql.optimizer.datasourceV2JoinPushdown=true`` Spark offers a scan the join of
two scans (``SupportsPushDownJoin``) once each side's filters are pushed and nothing is left
for Spark to apply above either scan. The offer carries both sides (their table, the verdicts
of their pushed filters, the columns Spark needs from each, duplicate names aliased), the join
type (Spark 4.3 offers INNER, LEFT OUTER and RIGHT OUTER only) and the condition as a V2
predicate over the aliased names.

The keys travel to the reader as the classifier's trees (as filters do, see
:mod:`sluice.pushdown.pushed`); the source's dialect writes them when the query is read.

Rules, each refusal with its reason (Spark then joins, which is always correct):

* both sides are tables of the same attached source (one catalog, the same options), which
  runs SQL; neither side already holds a pushed join (two tables at a time);
* every filter of each side is EXACT (a superset read would join rows Spark drops);
* the condition is an AND of key comparisons ``=`` / ``<=>``, each between a column of each
  side (Spark's casts included). Each key is classified by the filter classifier, over the
  two sides' columns as one table, and must be EXACT: text keys only where the engine compares
  as Spark does (MySQL's ``_ci``/PAD SPACE collations under a binary no-pad collation,
  PostgreSQL ``char(n)`` refused), numeric casts only where the engine computes them as Spark,
  NULL-safe equality in the dialect's spelling (``IS NOT DISTINCT FROM``, ``<=>``, ``IS``).
  Floating-point keys are refused: Spark normalises NaN and -0.0 in join keys;
* no column read by the join has a value the reader would refuse (``Dialect.suspect``): the
  reference path reads such a value and fails, a pushed join could skip its row. Values a
  column's type allows and Spark's cannot hold (PostgreSQL's ``infinity``) are looked for in
  both tables before the joined query runs instead (sluice/sources/unreadable.py);
* the source would not run it slower than Spark joining two scans, by its own statistics
  (join_cost.py: MariaDB without statistics for a filtered column or an index on a key).

The joined read is one query, in one partition::

    SELECT <outputs> FROM (SELECT <left columns> FROM l WHERE <left filters>) AS sluice_l
      <INNER | LEFT OUTER> JOIN (SELECT ... FROM r WHERE <right filters>) AS sluice_r ON <keys>

Each side's columns are renamed ``sluice_l0``, ``sluice_r0``, ... inside the subqueries, so
the pushed filters keep their unqualified columns and the keys never collide. A RIGHT join is
read as the mirrored LEFT join (SQLite before 3.39 has no RIGHT JOIN).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from sluice.planner import join_cost
from sluice.protocol.scan import JoinRequest, JoinSide
from sluice.pushdown.levels import Level, Verdict
from sluice.pushdown.pushed import Pushed
from sluice.pushdown.terms import Unsupported
from sluice.scan import v2
from sluice.scan.join import SIDES, JoinRead, Output
from sluice.types import Column, Kind, TableSchema, table_from_dict

#: Spark's V2 join types -> the SQL Sluice reads them with (RIGHT is read mirrored)
_TYPES = {"INNER_JOIN": "INNER", "LEFT_OUTER_JOIN": "LEFT", "RIGHT_OUTER_JOIN": "RIGHT"}
_INNER = re.compile(r"\bsluice_([lr])(\d+)\b")


@dataclass(frozen=True)
class Decision:
    """The answer to one offered join: pushed or not, the verdict of each key, and why not."""

    pushed: bool
    verdicts: tuple[Verdict, ...]
    join: JoinRead | None = None
    note: str | None = None


class _Refused(Exception):
    """The join is not pushed; the message is why."""


def decide(source: Any, request: JoinRequest) -> Decision:
    """Classify Spark's offered join (``left``, ``right``, ``join_type``, ``condition``) for ``source``."""
    try:
        return _decide(source, request)
    except _Refused as why:
        return Decision(False, (), None, str(why))


def _decide(source: Any, request: JoinRequest) -> Decision:
    left, right = request.left, request.right
    if not request.same_source:
        raise _Refused(f"the tables are in different sources ({left.catalog}, {right.catalog}): Spark joins them")
    if not getattr(source, "joins", False):
        raise _Refused(f"{type(source).__name__} does not run join queries")
    kind = _TYPES.get(request.join_type)
    if kind is None:
        raise _Refused(f"join type {request.join_type} is not pushed")
    for side in (left, right):
        if side.join is not None:
            raise _Refused("a side already holds a pushed join: Sluice pushes joins of two tables")
        unsure = [Verdict.from_dict(v) for v in side.verdicts if v["level"] != Level.EXACT.value]
        if unsure:
            raise _Refused(f"a filter is not EXACT ({unsure[0].sql}): Spark joins what it filters")
    sides = {"left": left, "right": right}
    tables = {name: table_from_dict(sides[name].table["table"]) for name in SIDES}
    if any(table.query is not None for table in tables.values()):
        raise _Refused("a passthrough query's result: Spark joins it")
    outputs = tuple(
        Output(c.alias or c.name, name, tables[name].column(c.name).name) for name in SIDES for c in sides[name].columns
    )
    keys = _keys(request.condition)
    used: dict[str, list[str]] = {name: [] for name in SIDES}
    for output in outputs:
        _need(used[output.side], output.column)
    pairs = [tuple(_side(outputs, ref) for ref in _refs(key)) for key in keys]
    for pair in pairs:
        if len(pair) != 2 or {pair[0].side, pair[1].side} != set(SIDES):
            raise _Refused("only comparisons of a column of each side are pushed as join keys")
        for output in pair:
            _need(used[output.side], output.column)
    for name in SIDES:
        for column_name in used[name]:
            _check_read(source, tables[name].column(column_name))
    join = JoinRead(
        kind,
        tables["left"],
        tables["right"],
        _where(left),
        _where(right),
        tuple(used["left"]),
        tuple(used["right"]),
        (),
        outputs,
    )
    verdicts = tuple(_classify(source, join, key, request.zone) for key in keys)
    if any(v.level is not Level.EXACT for v in verdicts):
        return Decision(False, verdicts, None, "a join key is not EXACT: Spark joins")
    trees = tuple(v.pushed for v in verdicts if v.pushed is not None)
    if len(trees) != len(keys):  # an EXACT verdict always carries its tree; a key lost would cross-join
        return Decision(False, verdicts, None, "a join key has no tree to render: Spark joins")
    slower = join_cost.slower_at_source(
        source, join, {name: tuple(o.column for pair in pairs for o in pair if o.side == name) for name in SIDES}
    )
    if slower is not None:
        return Decision(False, verdicts, None, slower)
    return Decision(True, verdicts, replace(join, on=trees))


def _keys(condition: Any) -> list[dict[str, Any]]:
    """The conjuncts of the condition: each an ``=`` or ``<=>`` (else refused)."""
    if not isinstance(condition, dict):
        raise _Refused("a join without a condition is not pushed")
    parts = condition.get("args", []) if condition.get("op") == "AND" else [condition]
    for part in parts:
        if not isinstance(part, dict) or part.get("op") not in ("=", "<=>"):
            shown = part.get("op") if isinstance(part, dict) else part
            raise _Refused(f"only key equalities (=, <=>) are pushed as join conditions, not {shown}")
    return parts


def _refs(node: dict[str, Any]) -> list[str]:
    """The column names a key compares (under Spark's casts); anything else is refused."""
    names = []
    for arg in node.get("args", []):
        while isinstance(arg, dict) and arg.get("op") == "CAST":
            arg = arg["args"][0]
        if not isinstance(arg, dict) or not isinstance(arg.get("ref"), list) or len(arg["ref"]) != 1:
            raise _Refused("only comparisons of columns (under Spark's casts) are pushed as join keys")
        names.append(str(arg["ref"][0]))
    return names


def _side(outputs: tuple[Output, ...], name: str) -> Output:
    found = next((o for o in outputs if o.name.lower() == name.lower()), None)
    if found is None:
        raise _Refused(f"the condition names {name!r}, which neither side reads")
    return found


def _need(names: list[str], column: str) -> None:
    if column not in names:
        names.append(column)


def _check_read(source: Any, column: Column) -> None:
    """A column the join reads must be read as Spark reads it with pushdown off."""
    suspect = source.dialect.suspect(column)
    why = suspect[1] if suspect is not None else source.dialect.joined(column)
    if why is not None:
        raise _Refused(f"{why} (the reference read would fail on such a row; a pushed join could skip it)")


def _classify(source: Any, join: JoinRead, key: dict[str, Any], zone: str) -> Verdict:
    """The key's verdict, classified as a filter over both sides' columns as one table."""
    outputs = {o.name.lower(): o for o in join.outputs}
    renamed = {side: join.renamed(side) for side in SIDES}
    shown = " ".join(
        [_shown(key["args"][0], outputs), "<=>" if key["op"] == "<=>" else "=", _shown(key["args"][1], outputs)]
    )
    for arg in key["args"]:
        output = outputs[_refs({"args": [arg]})[0].lower()]
        column = join.table(output.side).column(output.column)
        if column.type.kind is Kind.FLOAT:
            return Verdict(
                shown,
                Level.UNSUPPORTED,
                f"{column.describe()}: Spark matches NaN with NaN and -0.0 with 0.0 in join keys; not pushed",
            )
    both = TableSchema(join.left.source, None, "joined", renamed["left"].columns + renamed["right"].columns)
    try:
        tree = v2.to_tree(_renamed_key(key, join, outputs))
    except Unsupported as why:
        return Verdict(shown, Level.UNSUPPORTED, str(why))
    verdict = source.classify(both, [tree], zone)[0]
    return Verdict(shown, verdict.level, _named(verdict.reason, join), verdict.remote_sql, verdict.pushed)


def _renamed_key(node: Any, join: JoinRead, outputs: dict[str, Output]) -> Any:
    """The key with Spark's names replaced by the subqueries' (``sluice_l0``)."""
    if isinstance(node, dict) and isinstance(node.get("ref"), list):
        return {"ref": [join.inner_name(outputs[str(node["ref"][0]).lower()])]}
    if isinstance(node, dict) and "args" in node:
        return {**node, "args": [_renamed_key(arg, join, outputs) for arg in node["args"]]}
    return node


def _shown(node: Any, outputs: dict[str, Output]) -> str:
    while isinstance(node, dict) and node.get("op") == "CAST":
        node = node["args"][0]
    output = outputs[str(node["ref"][0]).lower()]
    return f"{output.side}.{output.column}"


def _named(text: str, join: JoinRead) -> str:
    """``text`` with the subqueries' column names (``sluice_l0``) shown as ``left.column``."""

    def shown(match: re.Match[str]) -> str:
        side = "left" if match.group(1) == "l" else "right"
        names = join.left_columns if side == "left" else join.right_columns
        index = int(match.group(2))
        return f"{side}.{names[index]}" if index < len(names) else match.group(0)

    return _INNER.sub(shown, text)


def _where(side: JoinSide) -> tuple[Pushed, ...]:
    verdicts = [Verdict.from_dict(v) for v in side.verdicts]
    return tuple(v.pushed for v in verdicts if v.level.pushed and v.pushed is not None)
