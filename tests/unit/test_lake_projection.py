"""Partition projections at the ends of the calendar (sluice/lake/projection.py): a literal PyIceberg
cannot step past (year 1, year 9999) prunes nothing and proves nothing, instead of failing the scan,
while the conjuncts beside it still prune. Found by the conformance matrix (years(dt), months(dt))."""

from __future__ import annotations

import pytest
from pyiceberg.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    LessThan,
    LessThanOrEqual,
)
from pyiceberg.expressions.visitors import inclusive_projection, strict_projection
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import MonthTransform, YearTransform
from pyiceberg.types import DateType, IntegerType, NestedField

from sluice.lake import projection

SCHEMA = Schema(NestedField(1, "dt", DateType(), required=False), NestedField(2, "i", IntegerType(), required=False))
SPECS = {
    "year": PartitionSpec(
        PartitionField(1, 1000, YearTransform(), "dt_year"), PartitionField(2, 1001, MonthTransform(), "dt_m")
    ),
    "month": PartitionSpec(PartitionField(1, 1000, MonthTransform(), "dt_month")),
}
#: the predicates PyIceberg 0.12 cannot project one way or the other
EDGES: list[BooleanExpression] = [
    LessThan("dt", "0001-01-01"),  # type: ignore[call-arg,arg-type]  # pyiceberg's pydantic fields hide its (term, literal) __init__
    GreaterThan("dt", "9999-12-31"),  # type: ignore[call-arg,arg-type]  # pyiceberg's pydantic fields hide its (term, literal) __init__
    LessThanOrEqual("dt", "9999-12-31"),  # type: ignore[call-arg,arg-type]  # pyiceberg's pydantic fields hide its (term, literal) __init__
    GreaterThanOrEqual("dt", "0001-01-01"),  # type: ignore[call-arg,arg-type]  # pyiceberg's pydantic fields hide its (term, literal) __init__
]


@pytest.mark.parametrize("transform", sorted(SPECS))
@pytest.mark.parametrize("edge", EDGES, ids=str)
def test_an_edge_literal_prunes_nothing_and_proves_nothing_instead_of_failing(
    transform: str, edge: BooleanExpression
) -> None:
    spec = SPECS[transform]
    failing = []
    for name, raw in (("inclusive", inclusive_projection), ("strict", strict_projection)):
        try:
            raw(SCHEMA, spec)(edge)
        except OverflowError:
            failing.append(name)
    assert failing, "PyIceberg projects this literal now: the guard may be obsolete"
    inclusive = projection.inclusive(SCHEMA, spec)(edge)
    strict = projection.strict(SCHEMA, spec)(edge)
    if "inclusive" in failing:
        assert inclusive == AlwaysTrue()
    if "strict" in failing:
        assert strict == AlwaysFalse()


def test_the_conjuncts_beside_an_edge_literal_still_prune() -> None:
    spec = SPECS["month"]
    beside = EqualTo("dt", "2024-03-05")  # type: ignore[call-arg,arg-type]  # pyiceberg's pydantic fields hide its (term, literal) __init__
    projected = projection.inclusive(SCHEMA, spec)(And(LessThan("dt", "0001-01-01"), beside))  # type: ignore[call-arg,arg-type]  # pyiceberg's pydantic fields hide its (term, literal) __init__
    assert projected == inclusive_projection(SCHEMA, spec)(beside)
