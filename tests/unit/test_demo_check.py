"""The demo's own proof: a pushed answer that differs from the whole-table answer stops it."""

from __future__ import annotations

import pytest

from sluice.errors import PushdownError
from tools.demo.run import QUERIES, _check_same

pytestmark = pytest.mark.unit


def test_same_rows_in_any_order_with_nulls_pass() -> None:
    _check_same(QUERIES[0], [(None, 2), ("a", None), ("a", 1)], [("a", 1), (None, 2), ("a", None)])


@pytest.mark.parametrize(
    "pushed, whole, expected",
    [
        ([("a", 1)], [("a", 1), (None, 2)], "lost by pushdown: [(None, 2)]"),  # silent data loss
        ([("a", 1), ("a", 1)], [("a", 1)], "only with pushdown: [('a', 1)]"),  # a duplicate is a different answer
    ],
)
def test_any_difference_raises(
    pushed: list[tuple[object, ...]], whole: list[tuple[object, ...]], expected: str
) -> None:
    with pytest.raises(PushdownError) as caught:
        _check_same(QUERIES[0], pushed, whole)
    assert expected in str(caught.value)
