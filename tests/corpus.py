"""The differential predicate corpus over the edge tables: hand-written plus generated.

Every predicate here must be valid Spark SQL over ``tests/edge_data.py``'s columns and
must not raise in Spark (no overflow, no failing casts), so a mismatch always means a
pushdown bug. The generated part is seeded: the same seed gives the same corpus.
"""

from __future__ import annotations

import random

OPS = ["=", "<>", "<", "<=", ">", ">=", "<=>"]
LITERALS = {
    "i": [
        "0",
        "1",
        "-1",
        "42",
        "2147483647",
        "2147483648",
        "-2147483648",
        "1.5",
        "1.0",
        "0.1",
        "1.5D",
        "1e3",
        "NULL",
        "9007199254740993",
        "-0.5",
    ],
    "b": [
        "0",
        "-1",
        "42",
        "9223372036854775807",
        "-9223372036854775808",
        "9007199254740993",
        "9007199254740992.5",
        "9.007199254740993E15",
        "3000000000",
        "2.5",
        "NULL",
    ],
    "f": [
        "0.0",
        "-0.0",
        "0.1",
        "1.5",
        "1e308",
        "double('NaN')",
        "double('inf')",
        "double('-inf')",
        "1",
        "3",
        "0.30000000000000004",
        "5e-324",
        "NULL",
        "1.5BD",
    ],
    "r": [
        "0.1",
        "1.5",
        "-2.25",
        "3.4e38",
        "double('NaN')",
        "0",
        "CAST(0.1 AS FLOAT)",
        "16777217",
        "16777216",
        "16777217L",
    ],
    "d": ["0", "1.5", "100", "-0.0001", "12345678901234.5678", "1.5D", "-99.99", "1"],
    "t": [
        "''",
        "' '",
        "'a'",
        "'a '",
        "'A'",
        "'ab'",
        "'ß'",
        "'SS'",
        "'é'",
        "'zebra'",
        "'日本'",
        "'%'",
        "'\\\\'",
        "'o''brien'",
        "'MiXeD'",
        "'mixed'",
        "'10'",
        "NULL",
        "'Ab'",
        "'b'",
    ],
    "dt": ["DATE '2024-02-29'", "DATE '0001-01-01'", "'2024-03-10'", "DATE '9999-12-31'", "DATE '1970-01-01'"],
    "ts": [
        "TIMESTAMP '2024-03-10 02:30:00'",
        "TIMESTAMP '2024-03-10 01:59:59.999999'",
        "TIMESTAMP '2024-11-03 01:30:00'",
        "TIMESTAMP_NTZ '2024-11-03 01:30:00'",
        "TIMESTAMP '1970-01-01 00:00:00'",
        "'2024-03-10 03:00:00'",
        "TIMESTAMP '2024-03-10 07:00:00Z'",
    ],
    "flag": ["TRUE", "FALSE", "NULL"],
}
LITERALS["tc"] = LITERALS["t"]
LITERALS["ch"] = LITERALS["t"] + ["'a       '", "'ab      '"]
LITERALS["tn"] = LITERALS["ts"]
LIKE_PATTERNS = [
    "'a%'",
    "'%b'",
    "'%a_b%'",
    "'a\\\\%b'",
    "'_'",
    "'%'",
    "''",
    "'A%'",
    "'ab'",
    "'%\\\\_%'",
    "'%ß%'",
    "'%é'",
    "'a%b'",
    "'__'",
    "'%o''%'",
    "'%\\\\\\\\%'",
]
FUNCTIONS = [
    "length(t) > 2",
    "length(ch) = 20",
    "length(tc) <= 1",
    "substr(t, 1, 2) = 'ab'",
    "substr(t, 2) = 'b'",
    "substr(tc, 1, 1) = 'a'",
    "substr(t, 0, 2) = 'a'",
    "substr(t, -2) = 'ra'",
    "coalesce(i, 0) = 0",
    "coalesce(t, 'x') = 'x'",
    "coalesce(tc, t) < 'b'",
    "abs(id - 40) > 10",
    "abs(f) < 1",
    "abs(d) >= 1.5",
    "upper(t) = 'AB'",
    "lower(tc) = 'ab'",
    "upper(t) LIKE 'A%'",
    "id + 1 > 5",
    "id * 2 < 100",
    "id - 3 = i",
    "i ^ 3 = 1",
    "i & 1 = 1",
    "i | 1 = 1",
    "i % 2 = 0",
    "i / 2 > 1",
    "f + 1 > 2",
    "f * 2 = 3",
    "flag",
    "NOT flag",
    "flag = TRUE",
    "flag <=> NULL",
    "t = tc",
    "i < b",
    "f = r",
    "t < tc",
    "dt < '2000-01-01'",
    "ts < tn",
    "length(t) = length(tc)",
    "startswith(t, 'a')",
    "endswith(t, 'b')",
    "contains(t, '_')",
    "t ILIKE 'a%'",
    "i IN (1, 2, NULL)",
    "i NOT IN (1, 2, NULL)",
    "i NOT IN (1, 2)",
    "t IN ('a', 'A', NULL)",
    "t NOT IN ('a', 'ab')",
    "tc IN ('a', 'ab')",
    "tc NOT IN ('a', 'ab')",
    "ch IN ('a', 'ab')",
    "ch NOT IN ('a')",
    "f IN (double('NaN'), 1.5)",
    "f NOT IN (0.0, 1.0)",
    "dt IN (DATE '2024-02-29')",
    "b IN (9223372036854775807, -1)",
    "d IN (1.5, 100)",
    "i IN (1, 2.5)",
    "i IN (1.0D, 2)",
    "i BETWEEN -1 AND 42",
    "i NOT BETWEEN -1 AND 42",
    "t BETWEEN 'a' AND 'b'",
    "tc BETWEEN 'a' AND 'b'",
    "ch BETWEEN 'a' AND 'b'",
    "dt BETWEEN DATE '1970-01-01' AND DATE '2024-12-31'",
    "f BETWEEN 0.0 AND 2.0",
    "NOT (f BETWEEN 0.0 AND 2.0)",
    "t IS NULL",
    "t IS NOT NULL",
    "f IS NULL",
    "ts IS NULL",
    "NOT (t IS NULL)",
    "1 = 1",
    "1 = 0",
    "NOT (i = 1)",
    "NOT (t = 'a')",
    "NOT (tc = 'a')",
    "NOT (ch = 'a')",
    "NOT (i = 1 OR t = 'a')",
    "NOT (i = 1 AND upper(t) = 'A')",
    "NOT (i = 1 OR upper(t) = 'A')",
    "(i = 1 OR f > 2) AND t = 'x'",
    "i = 1 OR upper(t) = 'X'",
    "i = 1 OR tc = 'a'",
    "NOT (i = 1 OR tc = 'a')",
    "i > 0 AND (t LIKE 'a%' OR tc LIKE 'a%')",
    "t = 'a' 'b'",
    "TRUE AND i = 1",
    "FALSE OR t = 'a'",
    "NOT NOT (i = 1)",
    "t LIKE 'a%' ESCAPE '!'",
    "t LIKE 'a!%%' ESCAPE '!'",
    "tc LIKE 'A%'",
    "ch LIKE 'a%'",
    "ch LIKE '%a'",
    "ch = 'a'",
    "ch <> 'a'",
    "ch < 'b'",
]


def leaves(half: bool = False) -> list[str]:
    """Every column/operator/literal combination plus LIKE, IN and function shapes.

    ``half``: the main tier's sample (the slow tier runs them all). Each operator meets every
    other literal of a column, and the next operator the other half, so every (column,
    operator) and every (column, literal) pair is still checked in half the predicates.
    """
    out = []
    for column, literals in LITERALS.items():
        for o, op in enumerate(OPS):
            out += [f"{column} {op} {literal}" for j, literal in enumerate(literals) if not half or (j + o) % 2 == 0]
        out += [f"{column} IS NULL", f"{column} IS NOT NULL"]
    for column in ("t", "tc", "ch"):
        out += [f"{column} LIKE {p}" for p in LIKE_PATTERNS]
        out += [f"{column} NOT LIKE {p}" for p in LIKE_PATTERNS[:6]]
    return out + FUNCTIONS


def generated(seed: int, count: int) -> list[str]:
    """Random AND/OR/NOT trees over the leaves, up to depth 3."""
    rng = random.Random(seed)
    pool = leaves()

    def tree(depth: int) -> str:
        roll = rng.random()
        if depth == 0 or roll < 0.35:
            return rng.choice(pool)
        if roll < 0.55:
            return f"NOT ({tree(depth - 1)})"
        joiner = "AND" if roll < 0.8 else "OR"
        return f"({tree(depth - 1)} {joiner} {tree(depth - 1)})"

    return [tree(3) for _ in range(count)]


def corpus(seed: int = 20261122, extra: int = 150, half: bool = False) -> list[str]:
    """The leaves and ``extra`` generated trees; ``half``: the main tier's sample of both (the
    first half of the same trees, which draw from every leaf)."""
    return leaves(half) + generated(seed, extra // 2 if half else extra)


def differential(seed: int = 20261122) -> list[str]:
    """The end-to-end subset (each predicate is a Spark scan): shapes plus random trees."""
    return FUNCTIONS + generated(seed, 150)
