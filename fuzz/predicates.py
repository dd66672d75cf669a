"""Random predicates over a generated table, kept as trees so they can be shrunk.

Leaves are Spark SQL text (a comparison, IN, LIKE, a function, ...) with the columns
they read; ``Not`` and ``Junction`` (AND/OR) nest them. Every leaf type-checks in Spark
for the table's logical column kinds; a few may still fail at run time (ANSI overflow in
``i + 1`` on 2147483647, for instance), which is part of what is compared: with pushdown
on, a query must fail exactly when it fails with pushdown off.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import cast

from fuzz import literals, values
from fuzz.tables import ColumnSpec, Table

NUMERIC = ("smallint", "int", "bigint", "double", "real", "decimal")
INTEGRAL = ("smallint", "int", "bigint")
TEMPORAL = ("date", "timestamp", "timestamp_ntz")
COMPARISONS = ["=", "<>", "!=", "<", "<=", ">", ">=", "<=>"]


@dataclass(frozen=True)
class Leaf:
    sql: str
    columns: frozenset[str]


@dataclass(frozen=True)
class Not:
    child: Pred


@dataclass(frozen=True)
class Junction:
    op: str  # AND | OR
    children: tuple[Pred, ...]


Pred = Leaf | Not | Junction


def render(pred: Pred) -> str:
    if isinstance(pred, Leaf):
        return pred.sql
    if isinstance(pred, Not):
        return f"NOT ({render(pred.child)})"
    return "(" + f" {pred.op} ".join(render(c) for c in pred.children) + ")"


def columns(pred: Pred) -> frozenset[str]:
    if isinstance(pred, Leaf):
        return pred.columns
    if isinstance(pred, Not):
        return columns(pred.child)
    return frozenset().union(*(columns(c) for c in pred.children))


def to_json(pred: Pred) -> object:
    """The tree as JSON (regression cases keep it, so a replay can shrink again)."""
    if isinstance(pred, Leaf):
        return {"leaf": pred.sql, "columns": sorted(pred.columns)}
    if isinstance(pred, Not):
        return {"not": to_json(pred.child)}
    return {pred.op.lower(): [to_json(c) for c in pred.children]}


def from_json(data: dict) -> Pred:
    if "leaf" in data:
        return Leaf(data["leaf"], frozenset(data["columns"]))
    if "not" in data:
        return Not(from_json(data["not"]))
    op = next(iter(data))
    return Junction(op.upper(), tuple(from_json(c) for c in data[op]))


@dataclass(frozen=True)
class Operand:
    """A value expression over columns: its SQL, its logical kind, the columns it reads."""

    sql: str
    kind: str
    columns: frozenset[str]
    column: ColumnSpec | None = None  # set when the operand is a bare column


class Generator:
    """Random predicates over ``table`` (seeded by ``rng``); literals in session ``zone``."""

    def __init__(self, rng: random.Random, table: Table, zone: str) -> None:
        self.rng = rng
        self.table = table
        self.zone = zone
        self.leaves: list[tuple[Callable[[], Leaf | None], int]] = [
            (self.comparison, 30),
            (self.column_comparison, 8),
            (self.in_list, 8),
            (self.null_test, 4),
            (self.between, 5),
            (self.like, 9),
            (self.string_match, 5),
            (self.ilike, 1),
            (self.boolean, 3),
            (self.constant, 1),
        ]

    # ------------------------------------------------------------- trees
    def predicate(self, depth: int = 3) -> Pred:
        roll = self.rng.random()
        if depth == 0 or roll < 0.4:
            return self.leaf()
        if roll < 0.55:
            return Not(self.predicate(depth - 1))
        op = "AND" if roll < 0.8 else "OR"
        return Junction(op, tuple(self.predicate(depth - 1) for _ in range(self.rng.choice([2, 2, 2, 3]))))

    def leaf(self) -> Leaf:
        makers, weights = zip(*self.leaves)
        while True:
            made = self.rng.choices(makers, weights=weights)[0]()
            if made is not None:
                return made

    # ------------------------------------------------------------- pieces
    def _columns(self, kinds: tuple[str, ...]) -> list[ColumnSpec]:
        return [c for c in self.table.columns if c.kind in kinds]

    def _value(self, operand: Operand) -> object:
        """A constant for ``operand``: mostly a value the column holds, else an edge value."""
        if operand.column is not None and self.rng.random() < 0.6:
            present = [v for v in self.table.values(operand.column.name) if v is not None]
            if present:
                return self.rng.choice(present)
        column = operand.column
        precision, scale = (
            (column.precision, column.scale) if column is not None and column.kind == "decimal" else (10, 2)
        )
        if operand.kind == "decimal" and self.rng.random() < 0.2:  # a literal finer than the column's scale
            precision, scale = min(38, precision + 2), min(38, scale + 2)
        return self.rng.choice(values.pool(operand.kind, self.rng, precision, scale))

    def _literal(self, operand: Operand, allow_null: bool = True) -> str:
        value = None if allow_null and self.rng.random() < 0.05 else self._value(operand)
        if operand.kind == "decimal" and value is not None:
            precision, scale = literals.decimal_type(cast(Decimal, value))
            return literals.spell(self.rng, value, operand.kind, self.zone, precision, scale)
        return literals.spell(self.rng, value, operand.kind, self.zone)

    def operand(self, kinds: tuple[str, ...]) -> Operand | None:
        """A column of one of ``kinds``, or (a third of the time) a function of one."""
        candidates = self._columns(kinds)
        if not candidates:
            return None
        column = self.rng.choice(candidates)
        bare = Operand(column.name, column.kind, frozenset([column.name]), column)
        if self.rng.random() < 0.65:
            return bare
        if column.kind == "string":
            return self._string_function(bare)
        if column.kind in NUMERIC:
            return self._arithmetic(bare)
        if self.rng.random() < 0.5:
            return Operand(
                f"coalesce({column.name}, {self._literal(bare, allow_null=False)})", column.kind, bare.columns, column
            )
        return bare

    def _string_function(self, bare: Operand) -> Operand:
        name, roll = bare.sql, self.rng.random()
        if roll < 0.25:
            return Operand(f"length({name})", "int", bare.columns)
        if roll < 0.5:
            start = self.rng.choice([-3, -1, 0, 1, 1, 2, 3])
            size = self.rng.choice([None, None, -1, 0, 1, 2, 3])
            return Operand(
                f"substr({name}, {start}" + ("" if size is None else f", {size}") + ")", "string", bare.columns
            )
        if roll < 0.65:
            return Operand(f"{self.rng.choice(['upper', 'lower'])}({name})", "string", bare.columns)
        others = [c for c in self._columns(("string",)) if c.name != name]
        if others and self.rng.random() < 0.4:
            other = self.rng.choice(others)
            return Operand(f"coalesce({name}, {other.name})", "string", bare.columns | {other.name})
        return Operand(
            f"coalesce({name}, {self._literal(bare, allow_null=False)})", "string", bare.columns, bare.column
        )

    def _arithmetic(self, bare: Operand) -> Operand:
        name, kind = bare.sql, bare.kind
        if self.rng.random() < 0.2:
            return Operand(f"abs({name})", kind, bare.columns, bare.column)
        # + - * overflow (an ANSI error) on the extreme values most tables hold, so they
        # are drawn less often than the operators that cannot overflow
        ops = ["+", "-", "*", "/", "%", "%"] + (["&", "|", "^", "&", "|", "^"] if kind in INTEGRAL else ["/", "%"])
        op = self.rng.choice(ops)
        others = [c for c in self._columns(INTEGRAL if op in "&|^" else NUMERIC) if c.name != name]
        if others and op not in "/%" and self.rng.random() < 0.3:  # no division by a column that holds 0
            other = self.rng.choice(others)
            result = "double" if "double" in (kind, other.kind) or op == "/" else kind
            return Operand(f"({name} {op} {other.name})", result, bare.columns | {other.name})
        constant = self.rng.choice([1, 2, 3, 7, -2, 100] if kind in INTEGRAL else [1, 2, -1, 0.5, 100])
        spelled = str(constant) if kind in INTEGRAL or op in "&|^" else literals.floating(self.rng, float(constant))
        result = "double" if op == "/" and kind != "decimal" else kind
        return Operand(f"({name} {op} {spelled})", result, bare.columns)

    # ------------------------------------------------------------- leaves
    def comparison(self) -> Leaf | None:
        operand = self.operand(NUMERIC + ("string",) + TEMPORAL + ("boolean",))
        if operand is None:
            return None
        op = self.rng.choice(COMPARISONS)
        literal = self._literal(operand)
        sql = f"{operand.sql} {op} {literal}" if self.rng.random() < 0.85 else f"{literal} {op} {operand.sql}"
        return Leaf(sql, operand.columns)

    def column_comparison(self) -> Leaf | None:
        families = [NUMERIC, ("string",), TEMPORAL, ("boolean",)]
        family = self.rng.choice([f for f in families if len(self._columns(f)) >= 2] or [()])
        if not family:
            return None
        left, right = self.rng.sample(self._columns(family), 2)
        return Leaf(f"{left.name} {self.rng.choice(COMPARISONS)} {right.name}", frozenset([left.name, right.name]))

    def in_list(self) -> Leaf | None:
        operand = self.operand(NUMERIC + ("string",) + TEMPORAL)
        if operand is None:
            return None
        items = [self._literal(operand) for _ in range(self.rng.randint(1, 5))]
        if self.rng.random() < 0.2:
            items.append("NULL")
        negated = "NOT " if self.rng.random() < 0.35 else ""
        return Leaf(f"{operand.sql} {negated}IN ({', '.join(items)})", operand.columns)

    def null_test(self) -> Leaf | None:
        if not self.table.columns:
            return None
        column = self.rng.choice(self.table.columns)
        form = self.rng.choice(["{} IS NULL", "{} IS NOT NULL", "isnull({})", "isnotnull({})", "NOT ({} IS NULL)"])
        return Leaf(form.format(column.name), frozenset([column.name]))

    def between(self) -> Leaf | None:
        operand = self.operand(NUMERIC + ("string",) + TEMPORAL)
        if operand is None:
            return None
        negated = "NOT " if self.rng.random() < 0.3 else ""
        return Leaf(
            f"{operand.sql} {negated}BETWEEN {self._literal(operand)} AND {self._literal(operand)}", operand.columns
        )

    def text_operand(self) -> Operand | None:
        """A string-valued operand (LIKE and friends take no ``length()``)."""
        operand = self.operand(("string",))
        if operand is None or operand.kind == "string":
            return operand
        column = self.table.column(next(iter(operand.columns)))
        return Operand(column.name, column.kind, frozenset([column.name]), column)

    def _text_piece(self, operand: Operand) -> str:
        """A fragment of a value the column holds (so patterns match), or an edge atom."""
        if operand.column is not None and self.rng.random() < 0.6:
            present = [v for v in self.table.values(operand.column.name) if v]
            if present:
                text = self.rng.choice(present)
                start = self.rng.randint(0, len(text) - 1)
                return text[start : start + self.rng.randint(1, 3)]
        return self.rng.choice(values.STRING_ATOMS)

    def like(self) -> Leaf | None:
        operand = self.text_operand()
        if operand is None:
            return None
        escape = self.rng.choice(["\\", "\\", "#"])
        parts = []
        for _ in range(self.rng.randint(1, 4)):
            roll = self.rng.random()
            if roll < 0.25:
                parts.append("%")
            elif roll < 0.4:
                parts.append("_")
            elif roll < 0.5:
                parts.append(escape + self.rng.choice(["%", "_", escape]))
            else:
                piece = self._text_piece(operand)
                parts.append("".join(escape + ch if ch in ("%", "_", escape) else ch for ch in piece))
        if self.rng.random() < 0.01:  # an escape before an ordinary character, or a trailing one: Spark rejects it
            parts.append(escape + self.rng.choice(["a", ""]))
        pattern = literals.string("".join(parts))
        clause = f" ESCAPE {literals.string(escape)}" if escape != "\\" or self.rng.random() < 0.1 else ""
        negated = "NOT " if self.rng.random() < 0.25 else ""
        return Leaf(f"{operand.sql} {negated}LIKE {pattern}{clause}", operand.columns)

    def ilike(self) -> Leaf | None:
        operand = self.text_operand()
        if operand is None:
            return None
        pattern = self._text_piece(operand).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return Leaf(
            f"{operand.sql} ILIKE {literals.string(self.rng.choice(['', '%']) + pattern + '%')}", operand.columns
        )

    def string_match(self) -> Leaf | None:
        operand = self.text_operand()
        if operand is None:
            return None
        function = self.rng.choice(["startswith", "endswith", "contains"])
        return Leaf(f"{function}({operand.sql}, {literals.string(self._text_piece(operand))})", operand.columns)

    def boolean(self) -> Leaf | None:
        flags = self._columns(("boolean",))
        if not flags:
            return None
        name = self.rng.choice(flags).name
        form = self.rng.choice(
            ["{}", "NOT {}", "{} = TRUE", "{} = FALSE", "{} <=> NULL", "{} <> TRUE", "{} IN (TRUE, NULL)"]
        )
        return Leaf(form.format(name), frozenset([name]))

    def constant(self) -> Leaf:
        return Leaf(self.rng.choice(["TRUE", "FALSE", "NULL", "1 = 1", "1 = 0", "NULL = 1"]), frozenset())


def generate(rng: random.Random, table: Table, zone: str, count: int) -> list[Pred]:
    """``count`` random predicate trees over ``table``."""
    generator = Generator(rng, table, zone)
    return [generator.predicate() for _ in range(count)]
