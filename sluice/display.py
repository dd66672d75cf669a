"""The user's names for what the planner renamed, for everything people read.

To run a query the planner gives each scan a Spark view (``sluice_q3_s0``) and a unique
alias (``o__s0``), and sqlglot names unnamed result columns ``_col_1``. None of those is
in the query the user wrote, so EXPLAIN, ``fed.plan(q).to_dict()``, error messages and
plot titles show the user's alias (``o``; a repeated one as ``o#2``), the table as
``source.schema.table``, and result expressions without the generated alias.

Names are replaced outside single-quoted literals only, so a literal that happens to
look like an internal name is shown as the user wrote it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

_LITERAL = re.compile(r"'(?:[^'\\]|\\.|'')*'")
_GENERATED_ALIAS = re.compile(r"\s+AS\s+(_col_\d+)\b")


@dataclass(frozen=True)
class ShownNames:
    """Internal name -> the name shown: scan views, scan aliases and generated result aliases."""

    replacements: dict[str, str]
    #: ``_col_N`` names the user wrote themselves (kept as they are)
    written: frozenset[str] = frozenset()

    @classmethod
    def of(cls, query: str, scans: Iterable[tuple[str, str, str]]) -> "ShownNames":
        """From ``(view, internal alias, table)`` per scan, in binding order."""
        replacements: dict[str, str] = {}
        seen: dict[str, int] = {}
        for view, alias, table in scans:
            user = user_alias(view, alias)
            seen[user] = seen.get(user, 0) + 1
            replacements[alias] = user if seen[user] == 1 else f"{user}#{seen[user]}"
            replacements[view] = table
        written = frozenset(name.lower() for name in re.findall(r"\b_col_\d+\b", query, flags=re.IGNORECASE))
        return cls(replacements, written)

    def alias(self, internal: str) -> str:
        """The name a scan is shown under (unique within the query)."""
        return self.replacements.get(internal, internal)

    def text(self, text: str) -> str:
        """``text`` (SQL, a reason, an error message) with every internal name replaced."""
        if not self.replacements:
            return text
        names = re.compile(r"(?<![\w$])(" + "|".join(re.escape(n) for n in sorted(self.replacements, key=len, reverse=True))
                           + r")(?![\w$])", flags=re.IGNORECASE)
        pieces, last = [], 0
        for literal in _LITERAL.finditer(text):
            pieces.append(self._outside(names, text[last:literal.start()]))
            pieces.append(literal.group())
            last = literal.end()
        pieces.append(self._outside(names, text[last:]))
        return "".join(pieces)

    def _outside(self, names: re.Pattern[str], text: str) -> str:
        text = names.sub(lambda match: self.replacements[_key(self.replacements, match.group(1))], text)
        return _GENERATED_ALIAS.sub(lambda match: match.group() if match.group(1).lower() in self.written else "", text)


def user_alias(view: str, alias: str) -> str:
    """The alias the user wrote (or the table's name): the binder appends ``__s<n>`` to it."""
    suffix = "__s" + view.rsplit("_s", 1)[-1]
    return alias[: -len(suffix)] if alias.endswith(suffix) else alias


def _key(replacements: dict[str, str], found: str) -> str:
    """The replacement key ``found`` matched (matching ignores case, as Spark's names do)."""
    return found if found in replacements else next(k for k in replacements if k.lower() == found.lower())
