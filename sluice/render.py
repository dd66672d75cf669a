"""Result rows as a rich table, shared by ``sluice sql`` and the demo.

NULL and the empty string must look different (the demo data has both), so NULL is
shown as a dim ``NULL`` and strings are printed as they are, never through markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table
from rich.text import Text


def rows_table(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], caption: str | None = None, title: str | None = None
) -> Table:
    """A table of ``rows`` under ``columns``; values are shown literally."""
    table = Table(*columns, title=title, caption=caption, caption_justify="left")
    for row in rows:
        table.add_row(*(Text("NULL", style="dim") if value is None else Text(str(value)) for value in row))
    return table
