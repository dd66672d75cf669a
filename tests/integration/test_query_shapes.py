"""Filter placement through joins and subqueries, LIMIT and top-N: same rows either way.

The contract and differential tests cover predicates over one scan; these queries make
the placement rules (outer-join sides, ON clauses, derived tables) and the limit rule
earn their place against the real sources.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration

E, L = "pg.sluice_test.edge", "lite.edge"
QUERIES = [
    f"SELECT a.id, b.id FROM {E} a LEFT JOIN {L} b ON a.id = b.i WHERE b.id IS NULL AND a.i > 0",
    f"SELECT a.id, b.t FROM {E} a LEFT JOIN {L} b ON a.id = b.id AND b.t LIKE 'a%' AND a.f > 1",
    f"SELECT a.id, b.id FROM {E} a RIGHT JOIN {L} b ON a.id = b.id AND a.t = 'a' WHERE b.i IS NOT NULL",
    f"SELECT a.id, b.id FROM {E} a FULL JOIN {L} b ON a.id = b.id AND a.t < 'b' WHERE a.i = 1 OR b.i = 1",
    f"SELECT a.id FROM {E} a JOIN {L} b ON a.id = b.id AND b.tc = 'a' WHERE a.ch = 'a'",
    f"SELECT a.id FROM {E} a LEFT SEMI JOIN {L} b ON a.id = b.id AND b.f > 1",
    f"SELECT a.id FROM {E} a LEFT ANTI JOIN {L} b ON a.id = b.id AND b.t = 'a'",
    f"SELECT s.id, s.j FROM (SELECT id, id + 1 AS j, t FROM {E}) s WHERE s.j > 5 AND s.t <> 'a'",
    f"SELECT s.i, s.n FROM (SELECT i, count(*) AS n FROM {E} GROUP BY i) s WHERE s.n > 1",
    f"SELECT s.id FROM (SELECT id, t FROM {L} WHERE f > 0) s LEFT JOIN {E} e ON s.id = e.id WHERE e.t IS NULL",
    f"SELECT id FROM {E} WHERE EXISTS (SELECT 1 FROM {L} b WHERE b.id = {E.split('.')[-1]}.id AND b.i = 1)",
    f"SELECT id, t FROM {E} WHERE i > 0 ORDER BY t DESC NULLS LAST, id LIMIT 7",
    f"SELECT id, f FROM {E} ORDER BY f, id LIMIT 9",
    f"SELECT id, f FROM {L} WHERE f IS NOT NULL ORDER BY f DESC, id LIMIT 5",
    f"SELECT id FROM {E} WHERE ch = 'a' LIMIT 3",
    f"SELECT t, count(*) FROM {L} WHERE tc = 'a' OR t LIKE '%b' GROUP BY t HAVING count(*) > 0",
]


@pytest.mark.parametrize("query", QUERIES)
def test_same_rows_with_and_without_pushdown(fed, query: str) -> None:  # type: ignore[no-untyped-def]
    pushed, reference = fed.sql(query), fed.sql(query, pushdown=False)
    assert pushed.columns == reference.columns
    if "LIMIT" in query and "ORDER BY" not in query:  # any 3 rows will do; they must satisfy the filter
        assert pushed.count() == reference.count()
        return
    assert sorted(map(repr, pushed.collect())) == sorted(map(repr, reference.collect()))
