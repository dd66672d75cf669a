"""Runtime filters (join keys Spark hands a scan at run time): bounded lists, Spark's order."""

from __future__ import annotations

import pytest

from sluice.planner import runtime
from sluice.types import Kind


def test_long_key_lists_are_pushed_as_their_range() -> None:
    keys = [{"lit": str(v), "type": "bigint"} for v in range(runtime.MAX_VALUES + 5, 4, -1)]
    offered = {"op": "IN", "args": [{"ref": ["k"]}, *keys]}
    ranged, note = runtime.bounded(offered, lambda name: Kind.INTEGRAL)
    assert ranged == {
        "op": "AND",
        "args": [
            {"op": ">=", "args": [{"ref": ["k"]}, {"lit": "5", "type": "bigint"}]},
            {"op": "<=", "args": [{"ref": ["k"]}, keys[0]]},
        ],
    }
    assert note is not None and "range" in note
    short = {"op": "IN", "args": [{"ref": ["k"]}, *keys[:10]]}
    assert runtime.bounded(short, lambda name: Kind.INTEGRAL) == (short, None)
    texts = {"op": "IN", "args": [{"ref": ["s"]}, *({"lit": t, "type": "string"} for t in ["b", "é", "a"] * 4000)]}
    ranged, _ = runtime.bounded(texts, lambda name: Kind.STRING)
    assert [arg["args"][1]["lit"] for arg in ranged["args"]] == ["a", "é"]  # Spark's order: UTF-8 bytes


def _ref(name: str) -> dict:
    return {"ref": [name]}


def _lit(value: object, kind: str = "int") -> dict:
    return {"lit": value, "type": kind}


@pytest.mark.parametrize(
    ("predicate", "selective"),
    [
        ({"op": "=", "args": [_ref("r"), _lit("north", "string")]}, True),
        ({"op": "<=>", "args": [_ref("r"), _lit(1)]}, True),
        ({"op": ">=", "args": [_ref("r"), _lit(1)]}, True),
        ({"op": "IN", "args": [_ref("r"), _lit(1), _lit(2)]}, True),
        ({"op": "STARTS_WITH", "args": [_ref("r"), _lit("a", "string")]}, True),
        ({"op": "IS_NOT_NULL", "args": [_ref("r")]}, False),  # Spark's inferred isnotnull: not selective
        ({"op": "IS_NULL", "args": [_ref("r")]}, False),
        ({"op": "NOT", "args": [{"op": "IS_NULL", "args": [_ref("r")]}]}, False),
        ({"op": "NOT", "args": [{"op": "=", "args": [_ref("r"), _lit(1)]}]}, True),
        (
            {"op": "AND", "args": [{"op": "IS_NULL", "args": [_ref("r")]}, {"op": "<", "args": [_ref("r"), _lit(1)]}]},
            True,
        ),
        (
            {"op": "OR", "args": [{"op": "IS_NULL", "args": [_ref("r")]}, {"op": "<", "args": [_ref("r"), _lit(1)]}]},
            False,
        ),
        (
            {
                "op": "OR",
                "args": [{"op": "=", "args": [_ref("r"), _lit(1)]}, {"op": "<", "args": [_ref("r"), _lit(0)]}],
            },
            True,
        ),
        ({"op": "UDF", "name": "f", "args": [_ref("r")]}, False),
        (_ref("flag"), False),
    ],
)
def test_likely_selective_is_sparks_is_likely_selective(predicate: dict, selective: bool) -> None:
    assert runtime.likely_selective(predicate) is selective


@pytest.mark.parametrize("malformed", [{"op": ["="]}, {"op": {"x": 1}}, {"op": "AND", "args": {"a": 1}}, [], None, "="])
def test_likely_selective_of_what_spark_never_sends_is_false_not_an_error(malformed: object) -> None:
    """Found by the V2 parser fuzzer: an op that is not a name raised TypeError in the filters call."""
    assert runtime.likely_selective(malformed) is False
