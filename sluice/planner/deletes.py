"""``DELETE FROM`` a lake table or a writable SQL source, as Spark hands it (``SupportsDeleteV2.deleteWhere``).

**A SQL source** (PostgreSQL, MariaDB/MySQL, SQLite, DuckDB, attached ``writable=true``)
runs its own ``DELETE FROM table WHERE ...`` in one transaction, and only when every
conjunct is EXACT for it (:func:`exact_delete`): the very classifier and rendering a read's
pushed filters go through, so the source deletes exactly the rows for which Spark's
condition is TRUE (a NULL keeps the row, as Spark's DELETE does). A conjunct the source
does not evaluate as Spark does (a ``_ci`` collation's equality, a zone-dependent
timestamp) is refused, naming it and the classifier's reason: nothing is deleted. What
the statement does is each source's :class:`~sluice.write.target.Target`.

**A lake table**: Spark translates the statement's condition into V2 predicates (conjuncts) or refuses the
statement itself (``cannotTranslateExpressionToSourceFilterError``: a subquery, a UDF it
has no V2 form for). Here each conjunct takes two forms (:class:`DeleteCondition`):

- **Spark SQL**, which Spark evaluates over the rows of the files the delete rewrites.
  Operators are sqlglot's Spark dialect; every constant is spelled so that Spark reads
  back exactly Spark's own value, never through a locale, zone or float printing: strings
  as ``CAST(unhex(...) AS STRING)``, timestamps as ``TIMESTAMP_MICROS(n)``, dates as
  ``DATE_FROM_UNIX_DATE(n)``, numbers as casts of their exact text (NaN, ±Infinity, -0.0
  included). A conjunct Sluice has no Spark SQL form for is refused, naming it: nothing
  is deleted.
- **The lake's dialect**, as the lake's filter classifier renders it, only to decide
  which files can hold no match (kept unread) or match whole (removed unread).

``ALWAYS_TRUE`` (``DELETE`` without ``WHERE``, ``TRUNCATE TABLE``) deletes every row;
``ALWAYS_FALSE`` none.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sluice.errors import ConfigError, SluiceError, SourceError
from sluice.lake.delete_rows import DeleteCondition, delete_rows
from sluice.protocol.catalog import CanDeleteAnswer, DeleteAnswer, DeleteRequest
from sluice.pushdown.constants import TYPED, Constant
from sluice.pushdown.levels import Level
from sluice.pushdown.terms import Unsupported
from sluice.scan import v2
from sluice.sources.base import Source, SqlSource
from sluice.sources.unreadable import Check, condition_check
from sluice.types import TableSchema

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_log = logging.getLogger(__name__)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_EPOCH_DAY = dt.date(1970, 1, 1)


def delete(spark: SparkSession, source: Source, request: DeleteRequest) -> DeleteAnswer:
    """Delete the rows the request's predicates select from the table it names: a lake table's in
    one snapshot, a SQL source's in one transaction (:func:`sql_delete`)."""
    from sluice.planner.writes import lake

    if source.lake is None:
        return sql_delete(source, request)
    location = lake(source, "DELETE FROM")
    namespace, name = list(request.namespace), request.name
    if len(namespace) != 1:
        raise ConfigError(
            f"DELETE FROM {'.'.join([*namespace, name])}: lake tables are named <catalog>.<namespace>.<table>"
        )
    condition = delete_condition(source, namespace[0], name, list(request.predicates), request.zone)
    if condition is None:
        return DeleteAnswer(snapshot_id=None, removed_files=0, rewritten_files=0, written_files=0, rows=0)
    summary = delete_rows(spark, location.url, namespace[0], name, condition, _log.info)
    return DeleteAnswer(
        snapshot_id=summary.snapshot_id,
        removed_files=summary.removed_files,
        rewritten_files=summary.rewritten_files,
        written_files=summary.written_files,
        rows=None,  # the lake counts files; the rows of those dropped whole are not read
    )


@dataclass(frozen=True)
class ExactDelete:
    """Whether a SQL source can delete exactly the rows Spark's conjuncts select, and how.

    ``refused`` names each conjunct that is not EXACT and the classifier's reason; otherwise
    ``where`` is the source's condition (None: every row) and ``nothing`` says a conjunct is
    ``ALWAYS_FALSE`` (no statement is needed)."""

    where: str | None = None
    refused: str | None = None
    nothing: bool = False
    #: the rows where a column ``where`` tests holds a value the reader refuses (None: it reads every value)
    check: Check | None = None
    #: each conjunct's verdict as EXPLAIN shows it: ``[EXACT] sql -- reason``
    verdicts: tuple[str, ...] = ()

    @property
    def exact(self) -> bool:
        return self.refused is None


def exact_delete(source: Source, table: TableSchema, predicates: list[Any], zone: str) -> ExactDelete:
    """Spark's V2 conjuncts as ``table``'s source's own ``WHERE`` text, or why not.

    A conjunct goes to the source only when the read path's classifier calls it EXACT: the
    same truth value (TRUE, FALSE and NULL) as Spark's on every row, so the source's
    ``DELETE ... WHERE`` removes exactly the rows Spark's condition is TRUE for. Rendered as
    a read's pushed filter is (:meth:`sluice.scan.spec.ScanSpec.where_sql`), so what a
    SELECT with that filter returns is what the DELETE removes. Kept apart from running the
    statement so a planner deciding between this and a row-level rewrite can ask it first.
    """
    from sluice.planner.rules.classify_filters import classify

    constants = [_constant(p) for p in predicates]
    if False in constants:
        return ExactDelete(nothing=True)
    conjuncts = [p for p, constant in zip(predicates, constants, strict=True) if constant is not True]
    if not conjuncts:
        return ExactDelete()
    verdicts = classify(source, table, conjuncts, zone)
    shown = tuple(f"[{v.level.value}] {v.sql} -- {v.reason}" for v in verdicts)
    refused = [v for v in verdicts if v.level is not Level.EXACT or v.pushed is None]
    if refused:
        return ExactDelete(refused="; ".join(f"{v.sql}: {v.level.value}, {v.reason}" for v in refused), verdicts=shown)
    trees = [v.pushed.sql_tree() for v in verdicts if v.pushed is not None]
    rendered = [source.dialect.render(tree) for tree in trees]
    check = condition_check(table, trees, source.refused)
    return ExactDelete(where=" AND ".join(f"({text})" for text in rendered), check=check, verdicts=shown)


def _constant(predicate: Any) -> bool | None:
    """True for Spark's ``ALWAYS_TRUE`` (``DELETE`` without ``WHERE``, ``TRUNCATE TABLE``), False
    for ``ALWAYS_FALSE``, None for any other conjunct. Spark's ``AlwaysTrue`` is a boolean
    literal predicate, and arrives as one (``{"type": "boolean", "lit": "true"}``)."""
    if not isinstance(predicate, dict):
        return None
    op = predicate.get("op")
    if op in ("ALWAYS_TRUE", "ALWAYS_FALSE"):
        return op == "ALWAYS_TRUE"
    if predicate.get("type") == "boolean" and str(predicate.get("lit")).lower() in ("true", "false"):
        return str(predicate["lit"]).lower() == "true"
    return None


def can_delete(source: Source, request: DeleteRequest) -> CanDeleteAnswer:
    """Whether the SQL source deletes the request's rows itself (:func:`exact_delete`): asked by a
    table with a primary key before Spark chooses between ``deleteWhere`` and its row-level
    rewrite. A read-only source says yes, so that ``deleteWhere`` refuses it, naming the option."""
    from sluice.write import target

    if source.lake is not None:
        return CanDeleteAnswer(pushed=True)
    try:
        chosen = target(source, request, "DELETE FROM")
    except ConfigError:  # read-only, or not written by Sluice: deleteWhere says so
        return CanDeleteAnswer(pushed=True)
    table = source.describe(chosen.schema_of(list(request.namespace), "DELETE FROM"), request.name)
    refused = exact_delete(source, table, list(request.predicates), request.zone).refused
    if refused is not None:
        _log.info(
            "DELETE FROM %s: not pushed, Spark's row-level rewrite deletes by key (%s)", table.qualified_name, refused
        )
    return CanDeleteAnswer(pushed=refused is None, reason=refused)


def sql_delete(source: Source, request: DeleteRequest) -> DeleteAnswer:
    """``DELETE FROM`` a writable SQL source: its own statement in one transaction, when EXACT.

    Refused (nothing deleted) on a read-only source, naming ``writable=true``, and when a
    conjunct is not EXACT, naming it and why."""
    from sluice.write import target

    chosen = target(source, request, "DELETE FROM")
    schema = chosen.schema_of(list(request.namespace), "DELETE FROM")
    table = source.describe(schema, request.name)
    decision = exact_delete(source, table, list(request.predicates), request.zone)
    shown = table.qualified_name
    if decision.refused is not None:
        raise ConfigError(
            f"DELETE FROM {shown}: Sluice deletes from a SQL source only by a condition the source evaluates "
            f"exactly as Spark does, and these conjuncts are not EXACT ({decision.refused}); nothing was deleted"
        )
    if decision.check is not None and isinstance(source, SqlSource):
        try:
            source.run_check(decision.check)
        except SluiceError as unreadable:
            raise SourceError(
                source.name,
                f"DELETE FROM {shown}: the condition tests a column holding a value Spark cannot read, where "
                f"Spark's condition has no truth value ({unreadable}); nothing was deleted",
            ) from None
    rows = 0 if decision.nothing else chosen.delete(table, decision.where)
    _log.info("DELETE FROM %s%s: %d rows deleted", shown, f" WHERE {decision.where}" if decision.where else "", rows)
    return DeleteAnswer(snapshot_id=None, removed_files=0, rewritten_files=0, written_files=0, rows=rows)


def delete_condition(
    source: Source, namespace: str, name: str, predicates: list[Any], zone: str
) -> DeleteCondition | None:
    """Spark's conjuncts as a :class:`DeleteCondition`; None when one is ``ALWAYS_FALSE``."""
    from sluice.planner.rules.classify_filters import classify

    ops = [p.get("op") if isinstance(p, dict) else None for p in predicates]
    if "ALWAYS_FALSE" in ops:
        return None
    conjuncts = [p for p, op in zip(predicates, ops, strict=True) if op != "ALWAYS_TRUE"]
    if not conjuncts:
        return DeleteCondition(None)
    texts = []
    for conjunct in conjuncts:
        try:
            texts.append(spark_sql(v2.to_tree(conjunct)))
        except Unsupported as reason:
            raise ConfigError(
                f"DELETE FROM lake table {namespace}.{name}: Sluice cannot hand the condition "
                f"{v2.shown(conjunct)} back to Spark exactly ({reason}); nothing was deleted"
            ) from None
    table = source.describe(namespace, name)
    verdicts = classify(source, table, conjuncts, zone)
    pruning = tuple(
        source.dialect.render(v.pushed.sql_tree())
        for v in verdicts
        if v.pushed is not None and v.level in (Level.EXACT, Level.INEXACT)
    )
    exact = all(v.level is Level.EXACT and v.pushed is not None for v in verdicts)
    return DeleteCondition(" AND ".join(f"({text})" for text in texts), pruning, exact)


def spark_sql(tree: exp.Expression) -> str:
    """A V2 conjunct's tree (:func:`sluice.scan.v2.to_tree`) as Spark SQL whose constants
    Spark reads back as exactly the values Spark sent."""

    def faithful(node: exp.Expression) -> exp.Expression:
        constant = node.meta.get(TYPED)
        return node if constant is None else constant_sql(constant)

    return tree.transform(faithful).sql(dialect="spark")


def constant_sql(constant: Constant) -> exp.Expression:
    """One typed constant as a Spark SQL expression of that type and exactly that value."""
    value, name = constant.value, constant.type.name
    to = exp.DataType.build(name, dialect="spark")

    def cast(text: str) -> exp.Expression:
        return exp.Cast(this=exp.Literal.string(text), to=to)

    if value is None:
        return exp.Cast(this=exp.Null(), to=to)
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if name in ("float", "double"):
        if math.isnan(value):
            return cast("NaN")
        if math.isinf(value):
            return cast("Infinity" if value > 0 else "-Infinity")
        return cast(repr(value))
    if name == "string":
        return exp.Cast(this=_unhex(value.encode("utf-8")), to=to)
    if name == "binary":
        return _unhex(value)
    if name == "date":
        return exp.Anonymous(this="DATE_FROM_UNIX_DATE", expressions=[exp.Literal.number((value - _EPOCH_DAY).days)])
    if name == "timestamp":
        micros = (value - _EPOCH) // dt.timedelta(microseconds=1)
        return exp.Anonymous(this="TIMESTAMP_MICROS", expressions=[exp.Literal.number(micros)])
    if name == "timestamp_ntz":
        return cast(value.isoformat(sep=" ", timespec="microseconds"))
    if name.startswith("decimal"):
        return cast(format(value, "f"))
    return cast(str(int(value)))  # tinyint, smallint, int, bigint


def _unhex(data: bytes) -> exp.Expression:
    return exp.Anonymous(this="unhex", expressions=[exp.Literal.string(data.hex())])
