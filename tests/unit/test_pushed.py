"""The typed boundary (sluice/pushdown/pushed.py, sluice/scan/spec.py): what a scan carries to its
reader survives JSON as a tree, renders as the classifier's SQL did, and holds no SQL text."""

from __future__ import annotations

import json
from typing import cast

import pytest
import sqlglot
from sqlglot import exp

from sluice.dialects.mysql import MariadbDialect
from sluice.dialects.postgres import PostgresDialect
from sluice.pushdown.pushed import Pushed
from sluice.pushdown.translator import classify_conjuncts
from sluice.scan.query import OrderKey
from sluice.scan.spec import ScanSpec
from tests.unit.tables import MYSQL_TABLE, PG_TABLE

PREDICATES = [
    "s < 'b'",
    "name = 'o''brien'",
    "i IN (1, 2, NULL)",
    "NOT (i = 1 OR f > 2)",
    "ts > TIMESTAMP '2024-01-01'",
]


@pytest.mark.parametrize(("dialect", "table"), [(PostgresDialect(), PG_TABLE), (MariadbDialect(), MYSQL_TABLE)])
def test_a_spec_carries_trees_that_render_as_the_verdicts_showed(dialect, table) -> None:
    trees = [
        cast(exp.Expression, sqlglot.parse_one(p, read="spark"))
        for p in PREDICATES
        if set(_columns(p)) <= {c.name for c in table.columns}
    ]
    verdicts = [v for v in classify_conjuncts(dialect, table, trees, "UTC") if v.level.pushed]
    assert len(verdicts) >= 3
    keys = (OrderKey(table.columns[0].name, descending=True, nulls_first=False),)
    spec = ScanSpec(
        "src",
        "x://",
        table,
        (table.columns[0].name,),
        where=tuple(cast(Pushed, v.pushed) for v in verdicts),
        order=keys,
    )
    text = spec.to_json()
    carried = json.loads(text)
    assert all(set(conjunct) == {"tree"} for conjunct in carried["where"])
    assert not any(cast(str, v.remote_sql) in text or json.dumps(v.remote_sql)[1:-1] in text for v in verdicts)
    assert "ORDER BY" not in text
    back = ScanSpec.from_json(text)
    assert back.to_json() == text  # stable: the scan id hashes it
    assert back.where_sql(dialect) == [v.remote_sql for v in verdicts]
    assert back.order_sql(dialect) == spec.order_sql(dialect) and "DESC" in (back.order_sql(dialect) or "")


def test_only_sqlglot_node_classes_are_built() -> None:
    tree = Pushed(tree=cast(exp.Expression, sqlglot.parse_one("a = 1"))).to_dict()["tree"]
    for name in ("os.system", "Pushed", "serde"):
        forged = [dict(tree[0], c=name), *tree[1:]]
        with pytest.raises(ValueError, match="not a sqlglot expression"):
            Pushed.from_dict({"tree": forged})


def test_a_pushed_conjunct_is_one_kind() -> None:
    with pytest.raises(ValueError):
        Pushed()
    with pytest.raises(ValueError, match="Flight filter expression was handed to a source that reads SQL"):
        Pushed(flight={"expr": {}, "level": "EXACT", "zone": "UTC"}).sql_tree()


def _columns(predicate: str) -> list[str]:
    return [c.name for c in sqlglot.parse_one(predicate, read="spark").find_all(sqlglot.exp.Column)]
