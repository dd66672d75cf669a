"""Runtime filters (join keys Spark hands a scan at run time): bounded lists, Spark's order."""

from __future__ import annotations

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
