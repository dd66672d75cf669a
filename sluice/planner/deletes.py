"""``DELETE FROM`` a lake table, as Spark hands it (``SupportsDeleteV2.deleteWhere``).

Spark translates the statement's condition into V2 predicates (conjuncts) or refuses the
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
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sluice.errors import ConfigError
from sluice.lake.delete_rows import DeleteCondition, delete_rows
from sluice.protocol.catalog import DeleteAnswer, DeleteRequest
from sluice.pushdown.constants import TYPED, Constant
from sluice.pushdown.levels import Level
from sluice.pushdown.terms import Unsupported
from sluice.scan import v2
from sluice.sources.base import Source

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_log = logging.getLogger(__name__)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_EPOCH_DAY = dt.date(1970, 1, 1)


def delete(spark: SparkSession, source: Source, request: DeleteRequest) -> DeleteAnswer:
    """Delete the rows the request's predicates select from the lake table it names, in one snapshot."""
    from sluice.planner.writes import lake

    location = lake(source, "DELETE FROM")
    namespace, name = list(request.namespace), request.name
    if len(namespace) != 1:
        raise ConfigError(
            f"DELETE FROM {'.'.join([*namespace, name])}: lake tables are named <catalog>.<namespace>.<table>"
        )
    condition = delete_condition(source, namespace[0], name, list(request.predicates), request.zone)
    if condition is None:
        return DeleteAnswer(snapshot_id=None, removed_files=0, rewritten_files=0, written_files=0)
    summary = delete_rows(spark, location.url, namespace[0], name, condition, _log.info)
    return DeleteAnswer(
        snapshot_id=summary.snapshot_id,
        removed_files=summary.removed_files,
        rewritten_files=summary.rewritten_files,
        written_files=summary.written_files,
    )


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
