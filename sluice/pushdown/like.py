"""Spark's LIKE patterns as tokens, so each dialect can re-spell them faithfully.

Spark's LIKE: ``_`` matches one character, ``%`` any run, and the escape character
(default backslash) makes the next ``_``, ``%`` or escape literal; any other escaped
character is an error in Spark, so such a pattern is never pushed.
"""

from __future__ import annotations

from dataclasses import dataclass


class ANY:
    """``%``"""


class ONE:
    """``_``"""


Token = str | type[ANY] | type[ONE]


@dataclass(frozen=True)
class LikePattern:
    tokens: tuple[Token, ...]

    @classmethod
    def parse(cls, pattern: str, escape: str = "\\") -> LikePattern | None:
        """Tokens of a Spark LIKE pattern, or None if Spark would reject it."""
        tokens: list[Token] = []
        chars = iter(pattern)
        for char in chars:
            if char == escape:
                following = next(chars, None)
                if following is None or following not in ("_", "%", escape):
                    return None
                tokens.append(following)
            elif char == "%":
                tokens.append(ANY)
            elif char == "_":
                tokens.append(ONE)
            else:
                tokens.append(char)
        return cls(tuple(tokens))

    @classmethod
    def starts_with(cls, prefix: str) -> LikePattern:
        return cls((*prefix, ANY))

    @classmethod
    def ends_with(cls, suffix: str) -> LikePattern:
        return cls((ANY, *suffix))

    @classmethod
    def contains(cls, infix: str) -> LikePattern:
        return cls((ANY, *infix, ANY))

    def render(self, any_: str, one: str, literal) -> str:
        """Spell the pattern with a dialect's wildcards and literal-escaping function."""
        return "".join(any_ if t is ANY else one if t is ONE else literal(t) for t in self.tokens)

    def literal_prefix(self) -> str:
        """The characters every match starts with (up to the first wildcard)."""
        prefix = []
        for token in self.tokens:
            if not isinstance(token, str):
                break
            prefix.append(token)
        return "".join(prefix)

    def is_prefix_match(self) -> bool:
        """Whether the pattern is exactly ``<literal prefix>%``: a starts-with test."""
        return len(self.tokens) > 1 and self.tokens[-1] is ANY and len(self.literal_prefix()) == len(self.tokens) - 1
