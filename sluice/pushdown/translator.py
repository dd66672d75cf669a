"""Translate a Spark predicate into a source's SQL, classifying every node.

The AND/OR/NOT plumbing and Spark's typing rules live here, written once; every
difference between engines is a question this module asks the dialect (see
:class:`sluice.dialects.base.Dialect`). A value expression (column, function, arithmetic)
is either translated exactly or not at all; only predicates can be INEXACT.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlglot import exp

from sluice.pushdown import constants, nesting
from sluice.pushdown.constants import Constant, NotRepresentable
from sluice.pushdown.levels import Level, Verdict
from sluice.pushdown.like import LikePattern
from sluice.pushdown.negation import unfold_between, unfold_negate
from sluice.pushdown.pushed import Pushed
from sluice.pushdown.terms import Translation, Unsupported, Value, paren
from sluice.pushdown.visitor import PredicateVisitor
from sluice.types import Kind, SparkType, TableSchema

if TYPE_CHECKING:
    from sluice.dialects.base import Dialect


#: pushed SQL per scan, in characters: a 100,000-item IN list fits; more is left to Spark,
#: never sent (MariaDB's max_allowed_packet is 16 MiB, SQLite's statement limit 1e9 bytes)
MAX_PUSHED_CHARS = 4_000_000
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ)
_EQUALITIES = (exp.EQ, exp.NullSafeEQ)
_MIRROR: dict[type[exp.Expression], type[exp.Expression]] = {
    exp.GT: exp.LT,
    exp.GTE: exp.LTE,
    exp.LT: exp.GT,
    exp.LTE: exp.GTE,
}


class Translator(PredicateVisitor[Translation]):
    """Translates predicates over one table of one source (``dialect``) for one session."""

    def __init__(self, dialect: Dialect, table: TableSchema, session_zone: str) -> None:
        self.dialect = dialect
        self.table = table
        self.zone = session_zone

    # ----------------------------------------------------------------- predicates
    def predicate(self, node: exp.Expression) -> Translation:
        """A whole conjunct's translation: level, reason, remote SQL (see :func:`_guarded`)."""
        return _guarded(self.dialect, self.table, node, self._part(node))

    def _part(self, node: exp.Expression) -> Translation:
        """One node of a predicate tree, its failures turned into UNSUPPORTED verdicts."""
        try:
            return self.visit(node)
        except RecursionError:  # classify_conjuncts bounds the depth; this keeps any miss a reason
            return Translation.unsupported("the predicate is nested too deeply to translate")
        except Unsupported as unsupported:
            return Translation.unsupported(str(unsupported))
        except NotRepresentable as unsupported:
            return Translation.unsupported(str(unsupported))
        except OverflowError as overflow:  # a constant shifted past year 9999 by a time zone
            return Translation.unsupported(f"constant out of range after Spark's implicit cast: {overflow}")

    def rewrite(self, node: exp.Expression) -> exp.Expression:
        """A negation pushed down as far as it goes (``NOT a = b`` is ``a <> b``)."""
        while (unfolded := unfold_negate(node)) is not node:
            node = unfolded
        return node

    def visit_leaf(self, node: exp.Expression) -> Translation:
        if isinstance(node, exp.Between):
            unfolded = unfold_between(node)
            assert isinstance(unfolded, exp.And)
            return self.visit_and(unfolded)
        if isinstance(node, _COMPARISONS):
            return self._comparison(node)
        if isinstance(node, exp.In):
            return self._in(node)
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
            value = self.value(node.this)
            return Translation(
                Level.EXACT,
                "IS NULL has the same meaning everywhere",
                exp.Is(this=paren(value.sql), expression=exp.Null()),
            )
        if isinstance(node, (exp.Like, exp.Escape)):
            return self._like(node)
        if isinstance(node, (exp.StartsWith, exp.EndsWith)) or type(node).__name__ == "Contains":
            return self._string_match(node)
        if isinstance(node, exp.ILike):
            raise Unsupported("ILIKE: Spark folds case with Java's Unicode rules; not mirrored by any source")
        if isinstance(node, exp.Column):
            value = self.value(node)
            if value.type.kind is not Kind.BOOLEAN:
                raise Unsupported(f"{node.sql('spark')} is not a boolean")
            return Translation(Level.EXACT, "boolean column", self.dialect.boolean_test(value.sql))
        raise Unsupported(f"{self.dialect.name} translation of {type(node).__name__} is not implemented")

    def visit_and(self, node: exp.And) -> Translation:
        left, right = self._part(node.this), self._part(node.expression)
        if left.level.pushed and right.level.pushed:
            level = Level.EXACT if left.level is right.level is Level.EXACT else Level.INEXACT
            reasons = "; ".join(dict.fromkeys(t.reason for t in (left, right)))
            assert left.sql is not None and right.sql is not None  # a pushed translation has its SQL
            return Translation(level, reasons, exp.And(this=paren(left.sql), expression=paren(right.sql)))
        kept = left if left.level.pushed else right if right.level.pushed else None
        if kept is None:
            return Translation.unsupported(left.reason)
        dropped = right if kept is left else left
        return Translation(
            Level.INEXACT, f"{kept.reason}; AND pushed without the part that cannot be ({dropped.reason})", kept.sql
        )

    def visit_or(self, node: exp.Or) -> Translation:
        left, right = self._part(node.this), self._part(node.expression)
        for branch in (left, right):
            if not branch.level.pushed:
                return Translation.unsupported(f"OR branch not pushable: {branch.reason}")
        level = Level.EXACT if left.level is right.level is Level.EXACT else Level.INEXACT
        reasons = "; ".join(dict.fromkeys(t.reason for t in (left, right)))
        assert left.sql is not None and right.sql is not None  # a pushed translation has its SQL
        return Translation(level, reasons, exp.Or(this=paren(left.sql), expression=paren(right.sql)))

    def visit_not(self, node: exp.Not) -> Translation:
        inner = self._part(node.this)
        if inner.level is Level.EXACT:
            assert inner.sql is not None  # a pushed translation has its SQL
            return Translation(Level.EXACT, inner.reason, exp.Not(this=paren(inner.sql)))
        if inner.level is Level.INEXACT:
            return Translation.unsupported(f"NOT over a superset is not a superset ({inner.reason})")
        return inner

    def _comparison(self, node: exp.Expression) -> Translation:
        op = type(node)
        left_const = constants.evaluate(node.this, self.zone)
        right_const = constants.evaluate(node.expression, self.zone)
        if left_const is not None and right_const is not None:
            raise Unsupported("comparison of two constants (left to Spark)")
        if left_const is not None:  # normalise to `value op constant`
            op = _MIRROR.get(op, op)
            node = op(this=node.expression, expression=node.this)
            left_const, right_const = None, left_const
        left = self.value(node.this)
        if right_const is not None:
            left, right = self._coerce(left, right_const)
        else:
            right = self.value(node.expression)
            if left.type != right.type and not (
                left.type.is_numeric and right.type.is_numeric and left.type.kind is right.type.kind is Kind.INTEGRAL
            ):
                raise Unsupported(f"comparison of {left.type} with {right.type}: Spark's coercion is not mirrored")
        level, reason = Level.EXACT, f"{left.type} comparison has the same semantics in {self.dialect.name}"
        left_sql, right_sql = left.sql, right.sql
        rules = [t for t in (left.text, right.text) if t is not None]
        if left.type.kind is Kind.STRING and rules:
            reason = "; ".join(dict.fromkeys(r.why for r in rules))
            if any(r.equality is Level.UNSUPPORTED for r in rules):
                raise Unsupported(reason)
            orderings = {r.ordering for r in rules}
            equality = op in (*_EQUALITIES, exp.NEQ, exp.NullSafeNEQ)
            if equality and any(r.equality is Level.INEXACT for r in rules):
                if op not in _EQUALITIES:
                    raise Unsupported(f"<> is not a superset where equality is inexact: {reason}")
                level = Level.INEXACT
            if not equality and None in orderings:
                raise Unsupported(f"text ordering differs from Spark's: {reason}")
            # Ranges need code point order; two text columns may carry different
            # collations, so compare bytes (what a deterministic collation's = means).
            binary_equality = equality and any(r.binary_equality for r in rules)
            if "collate_c" in orderings and (not equality or right_const is None or binary_equality):
                exact = op(
                    this=paren(self.dialect.binary_collation(left_sql)),
                    expression=paren(self.dialect.binary_collation(right_sql)),
                )
                if op in _EQUALITIES and right_const is not None:  # the native = is a superset that can use an index
                    exact = self.dialect.keep_index(op(this=paren(left_sql), expression=paren(right_sql)), exact)
                return Translation(level, reason, exact)
            if right_const is None and orderings != {"native"}:
                left_sql, right_sql = self._common_collation(left_sql, right_sql)
        return Translation(level, reason, op(this=paren(left_sql), expression=paren(right_sql)))

    def _common_collation(self, *sqls: exp.Expression) -> tuple[exp.Expression, ...]:
        """Two text values may carry different collations, which PostgreSQL refuses to
        compare: put both under the binary collation (byte comparison keeps a superset of
        any collation's equality) where the dialect has one."""
        try:
            return tuple(self.dialect.binary_collation(sql) for sql in sqls)
        except Unsupported:
            return sqls

    def _coerce(self, value: Value, constant: Constant) -> tuple[Value, Value]:
        """Apply Spark's implicit cast for ``value op constant`` on both sides."""
        target = constants.common_type(value.type, constant.type)
        if target is None:
            raise Unsupported(
                f"{value.type} compared with a {constant.type} constant: Spark's coercion is not mirrored"
            )
        if value.type.kind is Kind.TIMESTAMP_NTZ and target.kind is Kind.TIMESTAMP:
            if not constants.is_fixed_offset(self.zone):
                raise Unsupported(
                    f"Spark converts the timestamp_ntz column to the session time zone {self.zone}, "
                    "whose offset changes (DST); use a TIMESTAMP_NTZ literal to push this"
                )
            instant = constants.coerce(constant, target, self.zone)
            wall = (
                None
                if instant.value is None
                else instant.value.astimezone(constants.session_zone(self.zone)).replace(tzinfo=None)
            )
            constant, target = Constant(wall, value.type), value.type
        coerced = constants.coerce(constant, target, self.zone)
        if target != value.type:
            if value.type.kind is Kind.DATE:
                raise Unsupported(
                    f"date compared with a {constant.type}: Spark compares as {target} at midnight in the session time zone"
                )
            if value.type.kind is Kind.DECIMAL and target.kind is Kind.DECIMAL:
                value = Value(value.sql, target, value.text, value.column)
            elif value.type.kind is Kind.INTEGRAL and target.kind is Kind.INTEGRAL:
                value = Value(value.sql, target, value.text, value.column)
            elif value.type.kind is Kind.INTEGRAL and target.kind is Kind.DECIMAL:
                value = Value(value.sql, target, value.text, value.column)
            else:
                value = Value(self.dialect.cast(value.sql, target, value.type), target, value.text, value.column)
        literal = self.dialect.literal(coerced, value)
        return value, Value(literal, target)

    def _in(self, node: exp.In) -> Translation:
        if node.args.get("query") or node.args.get("unnest") or node.args.get("field"):
            raise Unsupported("IN over a subquery is evaluated by Spark")
        value = self.value(node.this)
        compared: Value | None = None
        items = []
        for item in node.expressions:
            constant = constants.evaluate(item, self.zone)
            if constant is None:
                raise Unsupported(f"IN list item {item.sql('spark')} is not a constant")
            coerced, literal = self._coerce(value, constant)
            if constant.value is not None:
                if compared is not None and compared.type != coerced.type:
                    raise Unsupported("IN list mixes constant types; Spark's common type is not mirrored")
                compared = coerced
            items.append(literal.sql)
        compared = compared or value
        level, reason = Level.EXACT, "IN list of constants"
        native = exp.In(this=paren(compared.sql), expressions=items)
        if value.text is not None and value.type.kind is Kind.STRING:
            level, reason = value.text.equality, value.text.why
            if level is Level.UNSUPPORTED:
                raise Unsupported(reason)
            if value.text.binary_equality:
                exact = exp.In(this=paren(self.dialect.binary_collation(compared.sql)), expressions=items)
                return Translation(level, reason, self.dialect.keep_index(native, exact))
        return Translation(level, reason, native)

    def _like(self, node: exp.Expression) -> Translation:
        escape = "\\"
        if isinstance(node, exp.Escape):
            escape_const = constants.evaluate(node.expression, self.zone)
            if escape_const is None or not isinstance(escape_const.value, str) or len(escape_const.value) != 1:
                raise Unsupported("LIKE ... ESCAPE needs a one-character constant")
            escape, node = escape_const.value, node.this
        pattern_const = constants.evaluate(node.expression, self.zone)
        if pattern_const is None or not isinstance(pattern_const.value, str):
            raise Unsupported("LIKE pattern is not a string constant")
        pattern = LikePattern.parse(pattern_const.value, escape)
        if pattern is None:
            raise Unsupported(f"LIKE pattern {pattern_const.value!r}: Spark rejects its escape sequence")
        return self._match(self.value(node.this), pattern)

    def _string_match(self, node: exp.Expression) -> Translation:
        const = constants.evaluate(node.expression, self.zone)
        if const is None or not isinstance(const.value, str):
            raise Unsupported(f"{node.key} needs a string constant")
        build = {"startswith": LikePattern.starts_with, "endswith": LikePattern.ends_with}.get(
            node.key, LikePattern.contains
        )
        return self._match(self.value(node.this), build(const.value))

    def _match(self, value: Value, pattern: LikePattern) -> Translation:
        if value.type.kind is not Kind.STRING:
            raise Unsupported(f"LIKE over {value.type}: Spark casts it to string first")
        if value.text is not None and not value.text.functions_ok:
            raise Unsupported(f"pattern matching: {value.text.why}")
        return self.dialect.like(value, pattern)

    def widen(self, value: Value, target: SparkType) -> Value:
        """``value`` as Spark's ``CAST(value AS target)``, where that cast never fails and
        never changes a value: integral and decimal widening, and numbers to double (which
        Spark inserts itself to compare mixed types). Anything else is left to Spark."""
        source = value.type
        if target == source:
            return value
        if source.kind is Kind.INTEGRAL and target.kind is Kind.INTEGRAL and target.bits >= source.bits:
            # a real remote cast: arithmetic over the value must overflow at target's width
            return Value(self.dialect.cast(value.sql, target, source), target, value.text, value.column)
        if source.kind is Kind.INTEGRAL and target.kind is Kind.DECIMAL:
            precision, scale = target.precision_scale
            if precision - scale >= len(str(1 << (source.bits - 1))):
                return Value(value.sql, target, value.text, value.column)
        if source.kind is Kind.DECIMAL and target.kind is Kind.DECIMAL:
            (p1, s1), (p2, s2) = source.precision_scale, target.precision_scale
            if s2 >= s1 and p2 - s2 >= p1 - s1:
                return Value(value.sql, target, value.text, value.column)
        if target.name == "double" and source.kind in (Kind.INTEGRAL, Kind.DECIMAL, Kind.FLOAT):
            return Value(self.dialect.cast(value.sql, target, source), target, value.text, value.column)
        raise Unsupported(f"CAST({source} AS {target}) may fail or change values in Spark: left to Spark")

    # ----------------------------------------------------------------- values
    def value(self, node: exp.Expression) -> Value:
        """Translate a value exactly, or raise :class:`Unsupported`."""
        if isinstance(node, exp.Paren):
            return self.value(node.this)
        if isinstance(node, exp.Column):
            column = self.table.column(node.name)
            unpushable = column.unpushable or self.dialect.incomparable(column)
            if unpushable:
                raise Unsupported(f"{column.describe()}: {unpushable}")
            return Value(
                exp.column(column.name, quoted=True),
                column.type,
                self.dialect.text_rules(column) if column.type.kind is Kind.STRING else None,
                column,
            )
        constant = constants.evaluate(node, self.zone)
        if constant is not None:
            if constant.value is None:
                raise Unsupported("an untyped NULL as a value")
            return Value(self.dialect.literal(constant, None), constant.type)
        handler = self.dialect.functions.get(type(node))
        if handler is not None:
            return handler(self, node)
        raise Unsupported(f"{self.dialect.name} has no faithful translation of {node.sql('spark')}")


def classify_conjuncts(
    dialect: Dialect, table: TableSchema, candidates: Sequence[exp.Expression], session_zone: str
) -> tuple[Verdict, ...]:
    """Each candidate conjunct's verdict under ``dialect``: level, reason and remote SQL.

    A conjunct nested deeper than remote engines parse, or whose SQL would take the scan's
    pushed text past :data:`MAX_PUSHED_CHARS`, is left to Spark (UNSUPPORTED, with why)."""
    translator = Translator(dialect, table, session_zone)
    verdicts = []
    budget = MAX_PUSHED_CHARS
    for candidate in candidates:
        levels = nesting.depth(candidate)
        if levels > nesting.MAX_PUSH_DEPTH:
            verdicts.append(
                Verdict(
                    _label(candidate, levels),
                    Level.UNSUPPORTED,
                    f"the predicate is nested {levels} levels deep; "
                    f"Sluice pushes at most {nesting.MAX_PUSH_DEPTH} (remote engines limit expression depth)",
                    None,
                )
            )
            continue
        translation = translator.predicate(candidate)
        remote_levels = nesting.depth(translation.sql) if translation.sql is not None else 0
        if remote_levels > dialect.max_depth:
            translation = Translation.unsupported(
                f"its {dialect.name} SQL nests {remote_levels} levels; "
                f"{dialect.name}'s parser takes {dialect.max_depth}"
            )
        try:
            remote = dialect.render(translation.sql) if translation.sql is not None else None
        except RecursionError:
            translation, remote = Translation.unsupported("the pushed SQL is nested too deeply to write"), None
        if remote is not None and len(remote) > budget:
            left = "" if budget == MAX_PUSHED_CHARS else f" ({budget:,} left after the conjuncts before it)"
            translation = Translation.unsupported(
                f"its SQL is {len(remote):,} characters; a scan pushes at most {MAX_PUSHED_CHARS:,}{left} "
                "(remote engines limit a statement's length)"
            )
            remote = None
        budget -= len(remote or "")
        pushed = Pushed(tree=translation.sql) if remote is not None and translation.sql is not None else None
        verdicts.append(Verdict(_label(candidate, levels), translation.level, translation.reason, remote, pushed))
    return tuple(verdicts)


def _guarded(dialect: Dialect, table: TableSchema, candidate: exp.Expression, translation: Translation) -> Translation:
    """``translation`` widened to return every row whose columns hold values the source
    compares differently from Spark (:meth:`Dialect.suspect`); INEXACT then, so Spark judges them."""
    if translation.sql is None:
        return translation
    suspects = []
    for name in dict.fromkeys(node.name for node in candidate.find_all(exp.Column)):
        found = next((c for c in table.columns if c.name.lower() == name.lower()), None)
        suspect = dialect.suspect(found) if found is not None else None
        if suspect is not None:
            suspects.append(suspect)
    if not suspects:
        return translation
    sql = translation.sql
    for guard, _ in suspects:
        sql = exp.Or(this=paren(sql), expression=paren(guard))
    why = "; ".join(dict.fromkeys(reason for _, reason in suspects))
    return Translation(Level.INEXACT, f"{translation.reason}; {why}", sql)


def _label(candidate: exp.Expression, levels: int) -> str:
    try:
        return candidate.sql(dialect="spark")
    except RecursionError:
        return f"(a predicate nested {levels} levels deep)"
