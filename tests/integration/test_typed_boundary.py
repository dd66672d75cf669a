"""The boundary between planning and reading (issue 13 item 6): a scan crosses it as typed trees,
and the source renders them when it reads with the function EXPLAIN uses.

So the scan spec Spark hands its Python workers holds no rendered SQL, and the remote query
EXPLAIN shows is, character for character, the query the source runs.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sluice.scan.spec import ScanSpec
from sluice.sources import open_scan_source
from sluice.sources.base import SqlSource
from tests.sources import BY_NAME, EDGE_TABLES

pytestmark = pytest.mark.integration
QUERY = "SELECT id, i FROM {table} WHERE i > 0 AND id < 70 ORDER BY id LIMIT 5"


def _strings(value: Any) -> list[str]:
    """Every string inside a JSON value (keys and leaves)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in [key, *_strings(item)]]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


@pytest.mark.parametrize("source", sorted(EDGE_TABLES))
def test_the_scan_spec_carries_trees_and_explain_shows_what_the_source_runs(fed, source: str) -> None:
    query = QUERY.format(table=EDGE_TABLES[source])
    [scan] = fed.plan(query).scans
    pushed = [v for v in scan.verdicts if v.level.pushed]
    assert len(pushed) >= 2 and scan.spec.limit == 5 and scan.spec.order, scan.to_dict()

    carried = json.loads(scan.spec.to_json())
    texts = _strings({"where": carried["where"], "order": carried["order"]})
    rendered = [v.remote_sql for v in pushed if v.remote_sql]
    assert len(carried["where"]) == len(pushed) and all(set(c) == {"tree"} for c in carried["where"])
    assert carried["order"] == [{"column": "id", "descending": False, "nulls_first": True}]
    assert not [t for t in texts if " " in t or any(r in t for r in rendered)], texts  # no SQL text, only tree parts

    spec = ScanSpec.from_json(scan.spec.to_json())  # as a Spark worker reads it
    reader = open_scan_source(spec, None)
    tasks = reader.tasks(spec)
    expected = sorted(row.id for row in fed.sql(query).collect())
    read = sorted(v for task in tasks for batch in reader.read(task) for v in batch.column(0).to_pylist())
    assert read == expected and len(expected) == 5
    if isinstance(reader, SqlSource):  # one stream (a pushed LIMIT): its query is EXPLAIN's, exactly
        assert [task.request for task in tasks] == [scan.remote_query]
    else:  # the lake: what its tasks filter and order by is what EXPLAIN shows
        assert BY_NAME[source].kind == "iceberg"
        for task in tasks:
            request = json.loads(task.request)
            assert (
                all(f"({w})" in scan.remote_query for w in request["where"]) and request["order"] in scan.remote_query
            )
    for verdict in pushed:
        assert verdict.remote_sql is not None and verdict.remote_sql in scan.remote_query
