"""The fuzzer's aggregate and join shapes (fuzz/shapes.py): valid Spark SQL over the table, every
shape drawn, and the comparison's normal form (no Spark)."""

from __future__ import annotations

import random

import sqlglot

from fuzz import shapes, tables
from fuzz.loaders import TEXT_VARIANTS


def test_shapes_cover_grouped_global_empty_aggregates_and_three_join_types() -> None:
    drawn: list[shapes.Shape] = []
    for number in range(30):
        rng = random.Random(f"7:{number}")
        table = tables.generate(rng, f"t{number}", TEXT_VARIANTS)
        drawn += shapes.generate(random.Random(f"7:{number}:shapes"), table, 4, 2)
    texts = [s.sql("pg.sluice_fuzz.t") for s in drawn]
    for text in texts:
        sqlglot.parse_one(text, read="spark")  # raises on anything Spark's grammar would not take
    aggregates = [t for s, t in zip(drawn, texts) if s.kind == "aggregate"]
    assert any("GROUP BY" not in t for t in aggregates) and any("GROUP BY id % 3" in t for t in aggregates)
    assert any("WHERE id < 0" in t for t in aggregates)
    for call in ("count(DISTINCT", "sum(", "avg(", "min(", "max("):
        assert any(call in t for t in aggregates), call
    joins = [t for s, t in zip(drawn, texts) if s.kind == "join"]
    for kind in (" a JOIN ", " LEFT JOIN ", " RIGHT JOIN ", " <=> "):
        assert any(kind in t for t in joins), kind


def test_the_normal_form_keeps_what_pushdown_must_keep() -> None:
    """Rounding to 9 digits and -0.0 as 0.0 (Spark's own order-dependent digits); NaN equal to NaN; ints exact."""
    assert shapes.normal([(0.1 + 0.2, -0.0)]) == shapes.normal([(0.3, 0.0)])
    assert shapes.normal([(float("nan"),)]) == shapes.normal([(float("nan"),)])
    assert shapes.normal([(9223372036854775807,)]) != shapes.normal([(9223372036854775806,)])
    assert shapes.normal([(1, "a"), (1, "a")]) != shapes.normal([(1, "a")])
    assert shapes.normal([("a ",)]) != shapes.normal([("a",)])
