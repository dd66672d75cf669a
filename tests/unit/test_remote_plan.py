"""The CALL that reads a query's plan on a server (sluice/remote_plan.py): its text and its catalog."""

from __future__ import annotations

import pytest
import sqlglot

from sluice.errors import ConfigError
from sluice.remote_plan import CATALOG_CLASS, plan_call, sluice_catalog


@pytest.mark.parametrize(
    "query",
    [
        "SELECT 1",
        "SELECT * FROM pg.public.t WHERE name = 'O''Brien' OR name LIKE 'a\\\\_%'",
        "SELECT '\\n' AS x,\n  `odd``col` FROM lite.t -- comment",
    ],
)
def test_the_query_is_one_spark_string_literal_that_reads_back_as_written(query: str) -> None:
    call = plan_call("pg", query, run=True)
    parsed = sqlglot.parse_one(call.replace("CALL ", "SELECT ", 1), read="spark")
    literal = parsed.find(sqlglot.exp.Literal)
    assert literal is not None and literal.this == query
    assert call.startswith("CALL `pg`.system.plan(query => '") and call.endswith(", run => true)")


def test_a_catalog_name_is_quoted() -> None:
    assert plan_call("we`ird", "SELECT 1").startswith("CALL `we``ird`.system.plan(")


def test_the_catalog_is_the_first_named_else_a_sluice_catalog_of_the_session() -> None:
    assert sluice_catalog(["Lite", "pg"], {}) == "lite"
    conf = {
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.execution.datasources.v2.V2SessionCatalog",
        "spark.sql.catalog.zeta": CATALOG_CLASS,
        "spark.sql.catalog.alpha": CATALOG_CLASS,
        "spark.sql.catalog.alpha.url": "sqlite:///x.db",
    }
    assert sluice_catalog([], conf) == "alpha"
    with pytest.raises(ConfigError, match="no Sluice catalog to plan the query with"):
        sluice_catalog([], {"spark.sql.catalog.spark_catalog": "x"})
