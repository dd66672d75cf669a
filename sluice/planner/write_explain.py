"""What a write would do, for Spark's EXPLAIN: the path, the source's statements, and why.

Spark plans ``INSERT``, ``INSERT OVERWRITE``, ``DELETE``, ``UPDATE`` and ``MERGE INTO`` without
running them under ``EXPLAIN``, and prints each node with its arguments' ``toString``: Sluice's
write objects (java SluiceWrite, RowLevelWrites.Fallback, ExplainedDelete) answer theirs with
this module's one line, as a scan's ``description()`` carries its remote query and verdicts
(:func:`sluice.planner.catalog._description`). The decision is the one the write makes when it
runs: the same target (:func:`sluice.write.target`), the same statement builders
(``explain_write``/``explain_delta`` of each target) and, for a DELETE, the same EXACT
classification (:func:`sluice.planner.deletes.exact_delete`). Answering reads the catalog only;
nothing is written, and the source's URL is shown masked.
"""

from __future__ import annotations

from sluice.errors import ConfigError, SourceError
from sluice.masking import mask_url
from sluice.planner.deletes import exact_delete
from sluice.protocol.catalog import ExplainWriteAnswer, ExplainWriteRequest
from sluice.sources.base import Source
from sluice.write import target
from sluice.write.target import Plan

#: the statement each mode is, as EXPLAIN names it
_STATEMENTS = {
    "append": "INSERT INTO",
    "overwrite": "INSERT OVERWRITE",
    "overwrite-filter": "INSERT OVERWRITE (by a condition)",
    "overwrite-partitions": "INSERT OVERWRITE (dynamic partitions)",
    "delete": "DELETE FROM",
}


def explain_write(source: Source, request: ExplainWriteRequest) -> ExplainWriteAnswer:
    """The plan of the write ``request`` describes; a refusal (read-only source, no exact
    condition, an unsupported overwrite) is shown as the path ``refused`` with the error it would raise."""
    mode = request.mode
    what = (request.command or "UPDATE/MERGE") if mode == "delta" else _STATEMENTS.get(mode, mode)
    shown = ".".join([*request.namespace, request.name])
    try:
        plan, reasons = _plan(source, request, what)
    except (ConfigError, SourceError) as refused:
        plan, reasons = Plan("refused", "the statement would fail; nothing is written", []), [str(refused)]
    parts = [f"SluiceWrite {what} {shown} on {source.name} ({mask_url(source.url)})", f"Path: {plan.path}"]
    parts.append(f"Why: {plan.reason}")
    parts += [f"Remote: {statement}" for statement in plan.statements]
    parts += reasons
    return ExplainWriteAnswer(
        path=plan.path,
        statements=plan.statements,
        reasons=[plan.reason, *reasons],
        description=source.masked(" | ".join(parts)),
    )


def _plan(source: Source, request: ExplainWriteRequest, what: str) -> tuple[Plan, list[str]]:
    """The target's plan and the reasons beyond its own (a DELETE's verdicts, why it was not pushed)."""
    if source.lake is not None:
        return _lake(request.mode), []
    chosen = target(source, request, what)
    schema = chosen.schema_of(list(request.namespace), what)
    table = source.describe(schema, request.name)
    if request.mode == "delta":
        extra = [f"not pushed: {request.not_pushed}"] if request.not_pushed else []
        return chosen.explain_delta(table, list(request.row_id)), extra
    if request.mode == "delete":
        decision = exact_delete(source, table, list(request.predicates), request.zone)
        if decision.refused is not None:
            raise ConfigError(
                f"DELETE FROM {table.qualified_name}: the table has no primary key and these conjuncts are not "
                f"EXACT ({decision.refused}); nothing would be deleted"
            )
        if decision.nothing:
            return Plan("nothing to delete", "a conjunct is always FALSE", []), []
        plan = Plan(
            "pushed DELETE: the source deletes the rows in one transaction",
            "every conjunct is EXACT for the source (the same truth value as Spark's on every row)"
            if decision.where is not None
            else "no condition: every row",
            [chosen.delete_statement(table, decision.where)],
        )
        return plan, list(decision.verdicts)
    if request.mode not in ("append", "overwrite"):
        raise ConfigError(
            f"{what} into source {source.name!r}: Sluice replaces a SQL table whole; overwriting by a condition "
            "or by partitions is not supported"
        )
    return chosen.explain_write(table, "overwrite" if request.mode == "overwrite" else "append"), []


def _lake(mode: str) -> Plan:
    """A lake table's write or delete: Sluice's Iceberg pipeline (docs/lake.md), one snapshot."""
    if mode == "delete":
        return Plan(
            "lake DELETE: files the condition matches whole are dropped, the others holding matches rewritten",
            "one Iceberg snapshot per statement (sluice.lake.delete_rows)",
            [],
        )
    return Plan(
        f"lake {mode}: Sluice's ingest job writes Parquet files and commits them",
        "one Iceberg snapshot per statement (sluice.lake.ingest); a failed job commits nothing",
        [],
    )
