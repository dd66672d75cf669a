"""A pushed join as the scan reads it: both tables, each side's pushed filters and read columns,
the keys as trees, and the one query that reads them (:meth:`JoinRead.query`).

Whether a join is pushed is decided above the sources (:mod:`sluice.planner.joins`); this is
what the decision hands the reader, carried in the :class:`~sluice.scan.spec.ScanSpec`.
Each side's columns are renamed ``sluice_l0``, ``sluice_r0``, ... inside its subquery, so
the pushed filters keep their unqualified columns and the keys never collide.

Spark may push more above the join (sluice/planner/joined.py decides): a LIMIT or top-N is
appended to the joined query, its keys naming the subqueries' columns (never the select list's
outputs, which a reader may select through a cast such as PostgreSQL's ``::text``); an
aggregation groups the joined rows, read as a derived table ``sluice_j`` whose columns are the
raw values under Spark's names.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp

from sluice.dialects.base import Dialect
from sluice.pushdown.pushed import Pushed
from sluice.scan.aggregation import Aggregation
from sluice.scan.query import OrderKey, SqlReader, build_query
from sluice.types import Kind, SparkType, TableSchema, table_from_dict, table_to_dict

SIDES = ("left", "right")


@dataclass(frozen=True)
class Output:
    """One column of the joined read: Spark's name for it (the alias, if any), whose table and which column."""

    name: str
    side: str
    column: str


@dataclass(frozen=True)
class JoinRead:
    """What a scan with a pushed join reads (carried in the ``ScanSpec``)."""

    kind: str  # INNER, LEFT, RIGHT
    left: TableSchema
    right: TableSchema
    #: each side's pushed filters, as trees its dialect renders when the query is written
    left_where: tuple[Pushed, ...]
    right_where: tuple[Pushed, ...]
    #: each side's columns the query reads (outputs and keys), renamed sluice_l<i> / sluice_r<i>
    left_columns: tuple[str, ...]
    right_columns: tuple[str, ...]
    #: the keys as the classifier's trees over the renamed columns, rendered by the dialect at read time
    on: tuple[Pushed, ...]
    outputs: tuple[Output, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "left": table_to_dict(self.left),
            "right": table_to_dict(self.right),
            "left_where": [p.to_dict() for p in self.left_where],
            "right_where": [p.to_dict() for p in self.right_where],
            "left_columns": list(self.left_columns),
            "right_columns": list(self.right_columns),
            "on": [key.to_dict() for key in self.on],
            "outputs": [[o.name, o.side, o.column] for o in self.outputs],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JoinRead:
        return cls(
            data["kind"],
            table_from_dict(data["left"]),
            table_from_dict(data["right"]),
            tuple(Pushed.from_dict(p) for p in data["left_where"]),
            tuple(Pushed.from_dict(p) for p in data["right_where"]),
            tuple(data["left_columns"]),
            tuple(data["right_columns"]),
            tuple(Pushed.from_dict(key) for key in data["on"]),
            tuple(Output(*o) for o in data["outputs"]),
        )

    def table(self, side: str) -> TableSchema:
        return self.left if side == "left" else self.right

    def renamed(self, side: str) -> TableSchema:
        """The side's read columns under their subquery names (what the outer query selects)."""
        table = self.table(side)
        names = self.left_columns if side == "left" else self.right_columns
        columns = tuple(replace(table.column(name), name=_inner(side, i)) for i, name in enumerate(names))
        return TableSchema(table.source, table.schema, table.name, columns)

    def inner_name(self, output: Output) -> str:
        names = self.left_columns if output.side == "left" else self.right_columns
        return _inner(output.side, names.index(self.table(output.side).column(output.column).name))

    def fields(self, names: tuple[str, ...] | None = None) -> list[tuple[str, SparkType]]:
        """(name, Spark type) of the outputs read: ``names`` (Spark's, after pruning) or all."""
        chosen = self.outputs if names is None else tuple(self.output(n) for n in names)
        return [(o.name, self.table(o.side).column(o.column).type) for o in chosen]

    def output(self, name: str) -> Output:
        found = next((o for o in self.outputs if o.name.lower() == name.lower()), None)
        if found is None:
            raise KeyError(f"the joined scan has no column {name!r}")
        return found

    def read_table(self, names: tuple[str, ...]) -> TableSchema:
        """The joined read as one table (its columns named as Spark names them), for the reader's
        checks and messages."""
        columns = []
        for name in names:
            output = self.output(name)
            columns.append(replace(self.table(output.side).column(output.column), name=output.name))
        return TableSchema(self.left.source, None, f"({self.title()})", tuple(columns))

    def title(self) -> str:
        return f"{self.left.qualified_name} {self.kind} JOIN {self.right.qualified_name}"

    def query(
        self,
        source: SqlReader,
        names: tuple[str, ...],
        aggregate: Aggregation | None = None,
        order: tuple[OrderKey, ...] = (),
        limit: int | None = None,
    ) -> str:
        """The remote query returning ``names`` (Spark's output names), one partition; with
        ``aggregate``, its grouped answer instead; with ``limit`` (and ``order``), the first rows."""
        dialect = source.dialect
        quote = dialect.render_identifier
        if aggregate is not None:  # the joined rows' raw values under Spark's names, grouped outside
            raw = [f"{self._qualified(o, dialect)} AS {quote(o.name)}" for o in self.outputs]
            joined = f"({self._joined(dialect, raw)}) AS {quote('sluice_j')}"
            group_by = tuple(aggregate.group_by_sql(dialect))
            return build_query(aggregate.select_sql(source), joined, [], None, limit, group_by)
        renamed = {side: self.renamed(side) for side in SIDES}
        select = []
        for name in names:
            output = self.output(name)
            expression = source.select_expression(self.inner_name(output), renamed[output.side])
            select.append(f"{expression} AS {quote(output.name)}")
        sql = self._joined(dialect, select)
        if order:
            sql += f" {self.order_sql(dialect, order)}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return sql

    def order_sql(self, dialect: Dialect, order: tuple[OrderKey, ...]) -> str:
        """``ORDER BY`` over the subqueries' columns (``"sluice_l"."sluice_l0"``), NULL placement
        spelled out and text under a binary collation where the column's collation is not one:
        a bare name would bind to a select-list output first, which may be a cast's text."""
        parts = []
        for key in order:
            output = self.output(key.column)
            column = self.table(output.side).column(output.column)
            sql: exp.Expression = exp.column(self.inner_name(output), table=_alias(output.side), quoted=True)
            if column.type.kind is Kind.STRING and dialect.text_rules(column).ordering == "collate_c":
                sql = dialect.binary_collation(sql)
            parts.append(dialect.order_key(dialect.render(sql), key.descending, key.nulls_first))
        return "ORDER BY " + ", ".join(parts)

    def _qualified(self, output: Output, dialect: Dialect) -> str:
        """The output's raw value in the joined query: its subquery's column."""
        return dialect.render(exp.column(self.inner_name(output), table=_alias(output.side), quoted=True))

    def _joined(self, dialect: Dialect, select: list[str]) -> str:
        """``SELECT <select> FROM (left) AS sluice_l <JOIN> (right) AS sluice_r ON <keys>``."""
        quote = dialect.render_identifier
        sides = {}
        for side in SIDES:
            table = self.table(side)
            columns = self.left_columns if side == "left" else self.right_columns
            inner_select = [f"{quote(table.column(c).name)} AS {quote(_inner(side, i))}" for i, c in enumerate(columns)]
            where = [dialect.render(p.sql_tree()) for p in (self.left_where if side == "left" else self.right_where)]
            inner = build_query(inner_select, dialect.quote_table(table.schema, table.name), where, None, None)
            sides[side] = f"({inner}) AS {quote(_alias(side))}"
        first, second = ("right", "left") if self.kind == "RIGHT" else ("left", "right")
        keyword = "INNER JOIN" if self.kind == "INNER" else "LEFT OUTER JOIN"
        on = " AND ".join(f"({dialect.render(key.sql_tree())})" for key in self.on)
        return f"SELECT {', '.join(select)} FROM {sides[first]} {keyword} {sides[second]} ON {on}"


def _alias(side: str) -> str:
    """The name of a side's subquery in the joined query (``sluice_l``, ``sluice_r``)."""
    return f"sluice_{side[0]}"


def _inner(side: str, index: int) -> str:
    """The name of a side's ``index``-th read column inside its subquery (``sluice_l0``)."""
    return f"sluice_{side[0]}{index}"
