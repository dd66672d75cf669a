"""The vocabulary shared by the classifier and the dialects: a value translated exactly, the
text rules of a column, a translation's verdict, "unsupported" as a normal outcome, and
explicit parentheses. Its own module so that dialects and the translator import it, not
each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from sluice.pushdown.levels import Level
from sluice.types import Column, SparkType


class Unsupported(Exception):
    """Raised inside translation; the message is the reason shown to the user."""


@dataclass(frozen=True)
class TextRules:
    """How a source compares a text value, and why (naming the column property).

    ``equality`` is EXACT or INEXACT (case-folding or padding remote comparisons keep a
    superset). ``ordering`` is ``"native"`` (binary code point order), ``"collate_c"``
    (exact once wrapped in the dialect's binary collation) or ``None`` (ranges unsupported).
    """

    equality: Level
    ordering: str | None
    why: str
    functions_ok: bool = True  # False when remote functions see a different string (bpchar)
    #: = is exact only under the dialect's binary collation (MySQL's case-folding, PAD SPACE collations)
    binary_equality: bool = False


@dataclass(frozen=True)
class Value:
    """A value expression translated exactly: remote SQL, Spark type, text rules."""

    sql: exp.Expression
    type: SparkType
    text: TextRules | None = None
    column: Column | None = None


@dataclass(frozen=True)
class Translation:
    level: Level
    reason: str
    sql: exp.Expression | None = None

    @classmethod
    def unsupported(cls, reason: str) -> Translation:
        return cls(Level.UNSUPPORTED, reason)


def paren(node: exp.Expression) -> exp.Expression:
    """Explicit parentheses around anything that is not atomic: we never trust precedence."""
    if isinstance(node, exp.Paren):
        return node
    composite = (exp.Connector, exp.Binary, exp.Unary, exp.Predicate)
    atomic = (exp.Column, exp.Literal, exp.Null, exp.Boolean, exp.Paren, exp.Cast, exp.Func)
    return node if isinstance(node, atomic) and not isinstance(node, composite) else exp.Paren(this=node)
