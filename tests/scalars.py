"""The one value of a one-row, one-column answer, for tests that count or read a setting.

DB-API drivers type ``fetchone()`` as possibly no row; a ``count(*)`` or a ``SHOW`` always
has one, and a missing one should fail the test where it happens, not as a TypeError.
"""

from __future__ import annotations

from typing import Any


def first_value(row: tuple[Any, ...] | None) -> Any:
    assert row is not None, "the query returned no row"
    return row[0]
