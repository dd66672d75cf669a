"""Result names read off the query's text (sluice/planner/names.py) are the names Spark gives.

For every query below, the names :func:`known_names` reads are compared with Spark's own
analysis of the reference query over empty stand-ins (what ``Federation.sql`` asked for
before the shortcut), and ``fed.sql`` must return the same column names and types with
pushdown on (shortcut taken) and off (Spark names the result itself).
"""

from __future__ import annotations

import pytest

from sluice.errors import QueryError
from sluice.planner.names import known_names
from sluice.spark import execute
from tests.sources import EDGE_TABLES

pytestmark = pytest.mark.integration

SOURCES = [name for name in ("pg", "lite") if name in EDGE_TABLES]
#: queries whose names the text decides (the shortcut must be taken)
KNOWN = [
    "SELECT id, t FROM {E} WHERE i > 0",
    "SELECT ID, T, Flag FROM {E} WHERE i > 0",
    "SELECT * FROM {E} WHERE t = 'a'",
    "SELECT e.ID, e.f AS `weird name`, i + 1 AS j, upper(t) AS u FROM {E} AS e WHERE e.f > 0 ORDER BY e.id LIMIT 5",
    "SELECT *, b.id AS bid FROM {E} a JOIN {L} b ON a.id = b.id WHERE a.i > 0",
    "SELECT * FROM {E} a LEFT JOIN {L} b ON a.id = b.id",
    "SELECT t, count(*) AS n FROM {E} GROUP BY t HAVING count(*) > 0",
    "SELECT DISTINCT T FROM {E} WHERE t IS NOT NULL",
]
#: queries only Spark can name (expressions without alias, subqueries, USING, semi joins, names Spark
#: resolves elsewhere): the shortcut must step aside
UNKNOWN = [
    "SELECT id + 1, t FROM {E}",
    "SELECT count(*) FROM {E}",
    "SELECT s.id FROM (SELECT id FROM {E}) s",
    "WITH c AS (SELECT id FROM {E}) SELECT id FROM c",
    "SELECT * FROM {E} a JOIN {L} b USING (id)",
    "SELECT * FROM {E} a LEFT SEMI JOIN {L} b ON a.id = b.id",
    "SELECT id FROM {E} UNION ALL SELECT id FROM {L}",
    "SELECT e.* FROM {E} e WHERE e.i > 0",  # qualified stars: sqlglot's canonical aliases lost them once
    "SELECT a.*, b.id AS bid FROM {E} a JOIN {L} b ON a.id = b.id WHERE a.i > 0",
    "SELECT s.* FROM (SELECT id, t FROM {E}) s",
]


def _spark_names(fed, query: str) -> tuple[list[str], list[str] | None]:  # type: ignore[no-untyped-def]
    """Spark's names for ``query`` (stand-in analysis) and the names read off its text."""
    plan, bound = fed._plan(query, execute.next_prefix())
    return fed._analysed_names(plan, bound, {}), known_names(bound.reference, {s.scan_id: s.table for s in bound.scans})


def _columns(frame) -> list[tuple[str, str, bool]]:  # type: ignore[no-untyped-def]
    """Names, types and nullability (field metadata such as Spark's auto-alias marks left out)."""
    return [(f.name, f.dataType.simpleString(), f.nullable) for f in frame.schema.fields]


def _query(template: str, source: str) -> str:
    other = EDGE_TABLES["lite" if source != "lite" else "pg"] if len(EDGE_TABLES) > 1 else EDGE_TABLES[source]
    return template.format(E=EDGE_TABLES[source], L=other)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("template", KNOWN)
def test_names_read_off_the_text_are_sparks(fed, source: str, template: str) -> None:  # type: ignore[no-untyped-def]
    query = _query(template, source)
    spark_names, read = _spark_names(fed, query)
    assert read == spark_names
    assert _columns(fed.sql(query)) == _columns(fed.sql(query, pushdown=False))


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("template", UNKNOWN)
def test_other_shapes_are_left_to_spark(fed, source: str, template: str) -> None:  # type: ignore[no-untyped-def]
    query = _query(template, source)
    _, read = _spark_names(fed, query)
    assert read is None
    assert _columns(fed.sql(query)) == _columns(fed.sql(query, pushdown=False))


def test_an_error_is_the_reference_querys(fed) -> None:  # type: ignore[no-untyped-def]
    """With the shortcut taken, a query Spark rejects fails with the message the stand-in analysis gives."""
    query = f"SELECT id, t FROM {EDGE_TABLES[SOURCES[0]]} WHERE nosuchfn(i) = 1"
    plan, bound = fed._plan(query, execute.next_prefix())
    with pytest.raises(QueryError) as expected:
        fed._analysed_names(plan, bound, {s.scan_id: s.table.qualified_name for s in bound.scans})
    with pytest.raises(QueryError) as shortcut:
        fed.sql(query)
    assert str(shortcut.value).replace(EDGE_TABLES[SOURCES[0]], "T") == str(expected.value).replace(EDGE_TABLES[SOURCES[0]], "T")
    assert "NOSUCHFN" in str(shortcut.value).upper()
