"""``ALTER TABLE`` on a lake table: Spark's column changes as one PyIceberg schema update.

Spark hands the catalog a list of ``TableChange``-s (as JSON: ``kind``, the column's path
and the change's own fields; see ``SluiceCatalog.alterTable``). Every change is decided
first, and all of them are applied in one ``update_schema`` commit, or none is: one refused
change refuses the statement, with the column, the types and the reason named.

Taken: ``ADD COLUMN(S)`` (optional primitive columns, with a comment and ``FIRST`` /
``AFTER``), ``RENAME COLUMN``, ``DROP COLUMN(S)``, ``ALTER COLUMN ... TYPE`` when Iceberg
widens it (``int`` to ``bigint``, ``float`` to ``double``, a decimal's precision at the same
scale), ``DROP NOT NULL``, ``COMMENT`` and ``FIRST`` / ``AFTER``. Iceberg reads by field id,
so a renamed column reads its old files' values, a dropped one is no longer read, and an
added one reads NULL in files written before it (:mod:`sluice.lake.fields`).

Refused, with the reason: a column without a value in the rows already there (``NOT NULL``,
``DEFAULT``), nested columns, a narrowing or any other type change, dropping a column the
table is partitioned or sorted by, table properties, and a name the table's older files
hold for another field. That last one is particular to Spark's files: they carry no field
ids, the table's name mapping links their column names to ids, and a new column named as a
dropped one (or as a renamed one was) would read that column's old values instead of NULL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sluice.errors import ConfigError
from sluice.lake.conform import iceberg_widens, spark_type
from sluice.lake.fields import names_held

if TYPE_CHECKING:
    from pyiceberg.table import Table
    from pyiceberg.table.update.schema import UpdateSchema
    from pyiceberg.types import IcebergType

Step = Callable[["UpdateSchema"], Any]
#: what Iceberg widens a column's type to, in words (the refusals say it)
WIDENINGS = "Iceberg widens only int to bigint, float to double and a decimal's precision at the same scale"


def alter_table(table: Table, changes: list[dict[str, Any]]) -> list[str]:
    """Apply Spark's ``changes`` to ``table``'s schema in one commit; what was done, in words.

    Every change is checked before anything is applied: a refused one is a ConfigError
    naming the table, the column and why, and the table is left as it was.
    """
    name = ".".join(table.name())
    adding = [
        str(change["new_name"]) if change.get("kind") == "rename_column" else str((change.get("column") or [""])[0])
        for change in changes
        if change.get("kind") in ("add_column", "rename_column")
    ]
    decided = _Decisions(table, adding)
    for change in changes:
        decided.decide(change)
    if decided.refused:
        raise ConfigError(f"ALTER TABLE {name}: " + "; ".join(decided.refused))
    if not decided.steps:  # DROP COLUMN IF EXISTS of a missing column, a column altered to its own type
        return []
    update = table.update_schema()
    for shown, step in decided.steps:
        try:
            step(update)
        except ValueError as error:  # PyIceberg's own check (a name taken, a column missing, ...)
            raise ConfigError(f"ALTER TABLE {name}: {shown}: {error}") from None
    update.commit()
    return [shown for shown, _ in decided.steps]


class _Decisions:
    """The steps of one statement, or its refusals; names tracked as the steps change them."""

    def __init__(self, table: Table, adding: list[str]) -> None:
        self.table = table
        self.schema = table.schema()
        self.columns: dict[str, Any] = {field.name: field for field in self.schema.fields}
        # of the names the statement gives fields, those older files without field ids hold, to their ids
        self.held = names_held(table, adding)
        self.steps: list[tuple[str, Step]] = []
        self.refused: list[str] = []
        self.pinned = self._pinned()

    def _pinned(self) -> dict[int, str]:
        """Field id -> why it cannot be dropped: a partition field's or the sort order's source
        (``{}`` stands for the column's name)."""
        pinned = {}
        for spec in self.table.metadata.partition_specs:
            for partition_field in spec.fields:
                pinned[partition_field.source_id] = f"the table is partitioned by {partition_field.transform}({{}})"
        for sort_field in self.table.sort_order().fields:
            pinned.setdefault(sort_field.source_id, "the table is sorted by {}")
        return pinned

    def refuse(self, message: str) -> None:
        self.refused.append(message)

    def decide(self, change: dict[str, Any]) -> None:
        kind = str(change.get("kind", "other"))
        path = [str(part) for part in change.get("column") or []]
        if kind == "other":
            self.refuse(f"{change.get('description', 'this change')}: lake tables take column changes only")
            return
        shown_column = ".".join(path)
        if len(path) != 1:
            self.refuse(f"column {shown_column}: lake tables have top-level columns only")
            return
        column = path[0]
        decide = getattr(self, f"_{kind}", None)
        if decide is None:
            self.refuse(f"column {column}: {kind} is not a change lake tables take")
            return
        decide(column, change)

    def _existing(self, column: str, what: str) -> Any:
        field = self.columns.get(column)
        if field is None:
            self.refuse(f"{what} {column}: the table has no column {column}")
        return field

    def _add_column(self, column: str, change: dict[str, Any]) -> None:
        from pyspark.sql.types import _parse_datatype_json_string

        from sluice.lake.layout import iceberg_type

        shown = f"ADD COLUMN {column}"
        if change.get("default") is not None:
            self.refuse(f"{shown}: DEFAULT values are not supported (rows already there would read NULL)")
            return
        if not change.get("nullable", True):
            self.refuse(f"{shown}: NOT NULL cannot be added, the table's rows have no value for it")
            return
        if any(existing.lower() == column.lower() for existing in self.columns):
            self.refuse(f"{shown}: the table has a column named {column} (names are compared ignoring case)")
            return
        if column in self.held:
            self.refuse(self._held_message(shown, column))
            return
        try:
            kind = iceberg_type(_parse_datatype_json_string(change["type"]), column)
        except ConfigError as error:
            self.refuse(f"{shown}: {error}")
            return
        comment = change.get("comment")
        self.columns[column] = None  # taken from here on in this statement
        self.held[column] = -1
        self.steps.append((f"{shown} {kind}", lambda update: update.add_column(column, kind, doc=comment)))
        self._position(shown, column, change)

    def _held_message(self, shown: str, column: str) -> str:
        return (
            f"{shown}: the table's older data files hold a column named {column} for another field "
            f"(id {self.held[column]}, dropped or renamed since), and those files carry no field ids "
            f"(written before Sluice wrote them), so their {column} values would read as this column's; "
            "choose another name, or rewrite those files first (sluice lake optimize)"
        )

    def _position(self, shown: str, column: str, change: dict[str, Any]) -> None:
        if change.get("first"):
            self.steps.append((f"{shown} FIRST", lambda update: update.move_first(column)))
        elif change.get("after"):
            after = str(change["after"])
            self.steps.append((f"{shown} AFTER {after}", lambda update: update.move_after(column, after)))

    def _rename_column(self, column: str, change: dict[str, Any]) -> None:
        new = str(change["new_name"])
        shown = f"RENAME COLUMN {column} TO {new}"
        field = self._existing(column, "RENAME COLUMN")
        if field is None:
            return
        if any(existing.lower() == new.lower() for existing in self.columns if existing != column):
            self.refuse(f"{shown}: the table has a column named {new} (names are compared ignoring case)")
            return
        if new in self.held and self.held[new] != field.field_id:
            self.refuse(self._held_message(shown, new))
            return
        self.columns[new] = self.columns.pop(column)
        self.held[new] = field.field_id
        self.steps.append((shown, lambda update: update.rename_column(column, new)))

    def _drop_column(self, column: str, change: dict[str, Any]) -> None:
        shown = f"DROP COLUMN {column}"
        if column not in self.columns and change.get("if_exists"):
            return
        field = self._existing(column, "DROP COLUMN")
        if field is None:
            return
        if field.field_id in self.pinned:
            self.refuse(f"{shown}: {self.pinned[field.field_id].format(column)}")
            return
        if len(self.columns) == 1:
            self.refuse(f"{shown}: it is the table's last column")
            return
        del self.columns[column]
        self.steps.append((shown, lambda update: update.delete_column(column)))

    def _update_column_type(self, column: str, change: dict[str, Any]) -> None:
        from pyspark.sql.types import _parse_datatype_json_string

        from sluice.lake.layout import iceberg_type

        field = self._existing(column, "ALTER COLUMN")
        if field is None:
            return
        wanted = _parse_datatype_json_string(change["type"])
        shown = f"ALTER COLUMN {column} TYPE {wanted.simpleString()}"
        try:
            kind: IcebergType | None = iceberg_type(wanted, column)
        except ConfigError:
            kind = None
        if kind == field.field_type:
            return
        if kind is None or not iceberg_widens(field.field_type, kind):
            self.refuse(
                f"{shown}: column {column} is {spark_type(field.field_type).simpleString()} "
                f"(Iceberg {field.field_type}); {WIDENINGS}"
            )
            return
        self.steps.append((shown, lambda update: update.update_column(column, field_type=kind)))

    def _update_column_nullability(self, column: str, change: dict[str, Any]) -> None:
        field = self._existing(column, "ALTER COLUMN")
        if field is None:
            return
        if not change.get("nullable"):
            self.refuse(f"ALTER COLUMN {column} SET NOT NULL: the rows already there are not checked for NULL")
        elif field.required:
            self.steps.append(
                (f"ALTER COLUMN {column} DROP NOT NULL", lambda update: update.make_column_optional(column))
            )

    def _update_column_comment(self, column: str, change: dict[str, Any]) -> None:
        if self._existing(column, "ALTER COLUMN") is None:
            return
        comment = change.get("comment")
        self.steps.append((f"ALTER COLUMN {column} COMMENT", lambda update: update.update_column(column, doc=comment)))

    def _update_column_position(self, column: str, change: dict[str, Any]) -> None:
        if self._existing(column, "ALTER COLUMN") is not None:
            self._position(f"ALTER COLUMN {column}", column, change)
