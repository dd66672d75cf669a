"""Filter placement through joins and subqueries, LIMIT and top-N: same rows either way.

The contract and differential tests cover predicates over one scan; these queries make
the placement rules (outer-join sides, ON clauses, derived tables) and the limit rule
earn their place against the real sources.
"""

from __future__ import annotations

import pytest

from tests.sources import EDGE_TABLES

pytestmark = pytest.mark.integration

#: (E, L) source pairs: each query joins two different sources' edge tables
PAIRS = [pair for pair in (("pg", "lite"), ("my", "duck")) if set(pair) <= set(EDGE_TABLES)]
TEMPLATES = [
    "SELECT a.id, b.id FROM {E} a LEFT JOIN {L} b ON a.id = b.i WHERE b.id IS NULL AND a.i > 0",
    "SELECT a.id, b.t FROM {E} a LEFT JOIN {L} b ON a.id = b.id AND b.t LIKE 'a%' AND a.f > 1",
    "SELECT a.id, b.id FROM {E} a RIGHT JOIN {L} b ON a.id = b.id AND a.t = 'a' WHERE b.i IS NOT NULL",
    "SELECT a.id, b.id FROM {E} a FULL JOIN {L} b ON a.id = b.id AND a.t < 'b' WHERE a.i = 1 OR b.i = 1",
    "SELECT a.id FROM {E} a JOIN {L} b ON a.id = b.id AND b.tc = 'a' WHERE a.ch = 'a'",
    "SELECT a.id FROM {E} a LEFT SEMI JOIN {L} b ON a.id = b.id AND b.f > 1",
    "SELECT a.id FROM {E} a LEFT ANTI JOIN {L} b ON a.id = b.id AND b.t = 'a'",
    "SELECT s.id, s.j FROM (SELECT id, id + 1 AS j, t FROM {E}) s WHERE s.j > 5 AND s.t <> 'a'",
    "SELECT s.i, s.n FROM (SELECT i, count(*) AS n FROM {E} GROUP BY i) s WHERE s.n > 1",
    "SELECT s.id FROM (SELECT id, t FROM {L} WHERE f > 0) s LEFT JOIN {E} e ON s.id = e.id WHERE e.t IS NULL",
    "SELECT id FROM {E} WHERE EXISTS (SELECT 1 FROM {L} b WHERE b.id = {E_NAME}.id AND b.i = 1)",
    "SELECT id, t FROM {E} WHERE i > 0 ORDER BY t DESC NULLS LAST, id LIMIT 7",
    "SELECT id, f FROM {E} ORDER BY f, id LIMIT 9",
    "SELECT id, f FROM {L} WHERE f IS NOT NULL ORDER BY f DESC, id LIMIT 5",
    "SELECT id FROM {E} WHERE ch = 'a' LIMIT 3",
    "SELECT t, count(*) FROM {L} WHERE tc = 'a' OR t LIKE '%b' GROUP BY t HAVING count(*) > 0",
]


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
@pytest.mark.parametrize("template", TEMPLATES)
def test_same_rows_with_and_without_pushdown(fed, pair: tuple[str, str], template: str) -> None:
    e_table, l_table = EDGE_TABLES[pair[0]], EDGE_TABLES[pair[1]]
    query = template.format(E=e_table, L=l_table, E_NAME=e_table.split(".")[-1])
    pushed, reference = fed.sql(query), fed.sql(query, pushdown=False)
    assert pushed.columns == reference.columns
    if "LIMIT" in query and "ORDER BY" not in query:  # any 3 rows will do; they must satisfy the filter
        assert pushed.count() == reference.count()
        return
    assert sorted(map(repr, pushed.collect())) == sorted(map(repr, reference.collect()))
