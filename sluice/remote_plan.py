"""A query's Sluice plan from a session with no JVM here: ``CALL <catalog>.system.plan(...)``.

``Federation.plan`` reads the Sluice scans of Spark's optimised plan through py4j
(``io.sluice.spark.Plans.scans``). A Spark Connect client (``sluice explain`` on a running
server, ``Federation`` over a Connect session) has no py4j; every Sluice catalog answers the
procedure ``system.plan`` instead (``java/io/sluice/spark/PlanProcedure.java``), which does the
same reads on the server's driver, in the caller's session, and returns them as one row. So the
plan, and with it ``explain``'s text, is the one the local path computes: remote queries,
verdicts and reasons, rules, and (``run``) transfer metrics.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sluice.errors import ConfigError
from sluice.scan.plan import QueryPlan

#: the class a Sluice catalog's setting names
CATALOG_CLASS = "io.sluice.spark.SluiceCatalog"


def plan_call(catalog: str, query: str, run: bool = False) -> str:
    """The ``CALL`` that plans ``query`` (``run``: runs it first) on Sluice catalog ``catalog``."""
    return f"CALL `{catalog.replace('`', '``')}`.system.plan(query => {_literal(query)}, run => {str(run).lower()})"


def _literal(text: str) -> str:
    """``text`` as a Spark SQL string literal (a backslash escapes in Spark's literals)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def sluice_catalog(names: Iterable[str], conf: dict[str, str]) -> str:
    """A Sluice catalog to call the procedure on: the first of ``names``, else the first of ``conf``'s
    ``spark.sql.catalog.*`` settings (a session's, read with its prefix) that is Sluice's."""
    for name in names:
        return name.lower()
    found = sorted(key.removeprefix("spark.sql.catalog.") for key, value in conf.items() if value == CATALOG_CLASS)
    if not found:
        raise ConfigError(
            "this session has no Sluice catalog to plan the query with: attach a source (--source NAME=URL or "
            "--catalog FILE), or start the server with one (`sluice server start --source/--catalog`)"
        )
    return found[0]


def remote_plan(first_row: Callable[[str], tuple[str, str]], catalog: str, query: str, run: bool = False) -> QueryPlan:
    """``query``'s plan, as ``Federation.plan`` gives it, from ``first_row(sql)``: the first row of a
    statement run in the caller's session."""
    spark_plan, scans = first_row(plan_call(catalog, query, run))
    return QueryPlan.from_scans_json(query, spark_plan, scans)
