"""The staging helpers of sluice/write/attempts.py, outside Spark (attempt 0)."""

from __future__ import annotations

import pyarrow as pa

from sluice.write import attempts


def test_tagged_renames_the_columns_and_adds_the_attempt() -> None:
    batch = pa.record_batch([pa.array([1, None, 3]), pa.array(["a", "b", None])], names=["sluice_attempt", "x"])
    staged = attempts.tagged(batch, ["c0", "c1"], 42)
    assert staged.schema.names == ["c0", "c1", attempts.COLUMN]
    assert staged.to_pydict() == {"c0": [1, None, 3], "c1": ["a", "b", None], attempts.COLUMN: [42, 42, 42]}
    assert attempts.current() == 0  # outside a Spark task


def test_only_selects_the_kept_attempts_and_nothing_when_none() -> None:
    quote = lambda name: f'"{name}"'  # noqa: E731 - PostgreSQL's rule for a plain name
    assert attempts.only({7: 10, 3: 0}, quote) == '"sluice_attempt" IN (3, 7)'
    assert attempts.only({}, quote) == '"sluice_attempt" IN (NULL)'
    assert attempts.result(7, 10).to_pydict() == {"attempt": [7], "rows": [10]}
