"""How each target's cases are made from its seeds (see :mod:`fuzz.parsers.mutate` for the
generic mutations): Spark's V2 predicates (mostly in the shape the catalog layer writes),
Flight requests in the JSON formats (most mutations land in the filter's expressions),
Substrait messages (structure-aware, then wrapped in a request) and catalog files."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from functools import lru_cache
from typing import Any, cast

from fuzz.parsers import mutate, seeds, wire
from fuzz.parsers.tables import TABLES
from sluice.flight import filter_json

# ---------------------------------------------------------------- Spark's V2 predicates
#: operators io.sluice.spark.Expressions writes: each one sluice.scan.v2 translates, then
#: Spark's that it does not (left to Spark), and names Spark never writes
V2_OPS = [
    "=",
    "<>",
    "<=>",
    "<",
    "<=",
    ">",
    ">=",
    "AND",
    "OR",
    "NOT",
    "IS_NULL",
    "IS_NOT_NULL",
    "IN",
    "STARTS_WITH",
    "ENDS_WITH",
    "CONTAINS",
    "CAST",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&",
    "|",
    "^",
    "ABS",
    "COALESCE",
    "UPPER",
    "LOWER",
    "CHAR_LENGTH",
    "SUBSTRING",
    "~",
    "CASE_WHEN",
    "GREATEST",
    "ROUND",
    "SQRT",
    "CONCAT",
    "TRIM",
    "DATE_ADD",
    "ALWAYS_TRUE",
    "ALWAYS_FALSE",
    "EXTRACT",
    "UDF",
    "UNKNOWN",
    "TOO_DEEP",
    "and",
    "",
    "__proto__",
]
#: catalogStrings: Spark's for the types Sluice reads, Spark's for others, then names Spark never writes
V2_TYPES = [
    "int",
    "bigint",
    "tinyint",
    "smallint",
    "double",
    "float",
    "decimal(10,2)",
    "decimal(11,1)",
    "decimal(38,18)",
    "decimal(38,0)",
    "string",
    "boolean",
    "date",
    "timestamp",
    "timestamp_ntz",
    "binary",
    "void",
    "char(3)",
    "varchar(5)",
    "string collate UTF8_LCASE",
    "interval day to second",
    "array<int>",
    "struct<a:int>",
    "map<string,int>",
    "variant",
    "byte",
    "short",
    "integer",
    "long",
    "null",
    "",
    *mutate.DECIMAL_TYPES,
]
#: text a Spark string can hold (UTF8String decodes invalid UTF-8 to U+FFFD: no lone surrogate reaches Java)
_SPARK_TEXT = [text for text in mutate.HOSTILE_TEXT if not any("\ud800" <= char <= "\udfff" for char in text)]
#: literal texts by type family, at and past the edges of Spark's ranges and of Python's
#: (Expressions writes days for a date, microseconds for timestamps, base64 for binary)
_EDGE_TEXTS: dict[str, list[str]] = {
    "integral": [
        "0",
        "-1",
        "127",
        "-128",
        "32768",
        "2147483647",
        "-2147483648",
        "2147483648",
        "9223372036854775807",
        "-9223372036854775808",
        "9223372036854775808",
        "9" * 400,
        "1.5",
        "1e3",
        " 1",
        "",
        "\u0661",
    ],
    "float": [
        "NaN",
        "Infinity",
        "-Infinity",
        "-0.0",
        "0.0",
        "1.0E308",
        "1.7976931348623157E308",
        "4.9E-324",
        "3.4028235E38",
        "3.4028236E38",
        "1.4E-45",
        "1.0E-46",
        "1e999",
        "nan",
        "0x1p3",
        "",
    ],
    "decimal": [
        "0",
        "-0.00",
        "1.25",
        "99999999.99",
        "100000000.00",
        "0.005",
        "9" * 38,
        "0." + "9" * 38,
        "9" * 39,
        "1E+5",
        "1E-400",
        "1e999999999",
        "NaN",
        "-Infinity",
        "sNaN",
        "1_0",
        "",
    ],
    "date": [
        "0",
        "-1",
        "19782",
        "-719162",
        "-719163",
        "2932896",
        "2932897",
        "1000000000",
        "-2147483648",
        "2147483647",
        "1.5",
    ],
    "timestamp": [
        "0",
        "-1",
        "1710055800000000",
        "1710052200000000",
        "253402300799999999",
        "253402300800000000",
        "-62135596800000000",
        "-62135596800000001",
        "9223372036854775807",
        "-9223372036854775808",
        "1e6",
    ],
    "boolean": ["true", "false", "TRUE", "1", ""],
    "binary": ["", "AA==", "/w==", "AAEC", "eCc7IC0t", "=", "!!!", "A"],
    "string": ["", "a", "%", "_", "\\", "a%_\\", "\x00", "\u00e9", "\U0001f600", "x'; DROP TABLE t; --"],
}
_FAMILIES = {
    "tinyint": "integral",
    "smallint": "integral",
    "int": "integral",
    "bigint": "integral",
    "byte": "integral",
    "short": "integral",
    "integer": "integral",
    "long": "integral",
    "double": "float",
    "float": "float",
    "date": "date",
    "timestamp": "timestamp",
    "timestamp_ntz": "timestamp",
    "boolean": "boolean",
    "binary": "binary",
    "string": "string",
}
V2_WORDS = ["ref", "lit", "type", "op", "args", "from", "to", "name", "text", "field", *V2_OPS]
#: how deep Expressions writes an expression (MAX_DEPTH): an operand deeper still arrives as TOO_DEEP
_MAX_DEPTH = 100
_TOO_DEEP = {"op": "TOO_DEEP", "text": f"a predicate nested more than {_MAX_DEPTH} levels deep"}
_COLUMNS = [(column.name, column.type.name) for column in TABLES["pg"].columns]
_COMPARISONS = ["=", "<>", "<=>", "<", "<=", ">", ">="]
#: the largest case, in bytes of JSON: repeated wide operands multiply, and classifying,
#: running and re-reading the pushed SQL takes time in proportion
_MAX_CASE = 250_000


def v2(rng: random.Random, pool: list[bytes]) -> bytes:
    """One scan's predicates mutated, mostly in the shape Expressions writes (what varies is
    what Spark puts in it: operators, arity, types, literal text, width, depth), one time in
    ten by the generic JSON mutations (wrong JSON types, keys dropped: what Expressions does
    not write today, and a change on the Java side could); deep operands are then cut at
    TOO_DEEP as Expressions cuts them. A mutation that would take the case past
    :data:`_MAX_CASE` is dropped."""
    data = rng.choice(pool)
    for _ in range(rng.randint(1, 3)):
        predicates: Any = json.loads(data)
        if rng.random() < 0.1:
            predicates = mutate.mutate_json_tree(rng, predicates, V2_WORDS, nested_v2, list(_v2_donors()))
        else:
            _mutate_v2(rng, predicates)
        if not isinstance(predicates, list):  # the catalog layer always sends a list
            predicates = [predicates]
        if _written_size(predicates, _MAX_CASE) <= _MAX_CASE:
            data = json.dumps(_as_sent(predicates), separators=(",", ":")).encode()
    return data


@lru_cache(maxsize=1)
def _v2_donors() -> tuple[Any, ...]:
    return tuple(mutate.subtrees(seeds.V2_PREDICATES))


def _mutate_v2(rng: random.Random, predicates: list[Any]) -> None:
    """One change in place that keeps Expressions' shape (an object per expression, text in literals)."""
    places = _places(predicates)
    if not places or rng.random() < 0.1:
        choice = rng.randrange(3)
        if choice == 0 and predicates:
            del predicates[rng.randrange(len(predicates))]
        elif choice == 1 and predicates:
            predicates.extend([rng.choice(predicates)] * rng.choice([1, 2, 300]))
        else:
            predicates.append(_comparison(rng))
        return
    container, index = rng.choice(places)
    node = container[index]
    args = node.get("args")
    kind = rng.randrange(10)
    if kind == 0:
        container[index] = _shaped(rng, rng.choice(V2_OPS), list(args) if isinstance(args, list) else [])
    elif kind == 1 and isinstance(args, list) and node.get("op") not in ("CAST", "EXTRACT"):  # wrong arity
        choice = rng.randrange(4)
        if choice == 0 and args:
            del args[rng.randrange(len(args))]
        elif choice == 1 and args:
            args.insert(rng.randrange(len(args) + 1), rng.choice(args))
        elif choice == 2:
            args.insert(rng.randrange(len(args) + 1), _literal(rng) if rng.random() < 0.5 else _reference(rng))
        else:
            args.clear()
    elif kind == 2 and "lit" in node:  # the same literal under another type, or other text of its type
        if rng.random() < 0.5:
            node["type"] = rng.choice(V2_TYPES)
        else:
            node["lit"] = _literal(rng, node.get("type") if isinstance(node.get("type"), str) else None)["lit"]
    elif kind in (2, 3):
        container[index] = _literal(rng)
    elif kind == 4:
        container[index] = _reference(rng)
    elif kind == 5:
        container[index] = _wrapped(rng, node)
    elif kind == 6:
        container[index] = _nested(rng, node)
    elif kind == 7:
        container[index] = _wide(rng, node)
    elif kind == 8:
        container[index] = _comparison(rng)
    else:  # an expression of a seed, in a new place
        container[index] = json.loads(json.dumps(rng.choice([d for d in _v2_donors() if isinstance(d, dict)])))


def _places(predicates: list[Any]) -> list[tuple[list[Any], int]]:
    """Every (list, index) holding an expression object: the conjuncts and their operands."""
    places, pending = [], [predicates]
    while pending:
        items = pending.pop()
        for index, item in enumerate(items):
            if isinstance(item, dict):
                places.append((items, index))
                if isinstance(item.get("args"), list):
                    pending.append(item["args"])
    return places


def _shaped(rng: random.Random, op: str, args: list[Any]) -> dict[str, Any]:
    """Operator ``op`` over ``args`` with the keys Expressions writes for it."""
    if op == "CAST":
        return {"op": op, "from": rng.choice(V2_TYPES), "to": rng.choice(V2_TYPES), "args": args[:1] or [_literal(rng)]}
    if op == "EXTRACT":
        return {
            "op": op,
            "field": rng.choice(["YEAR", "DAY_OF_WEEK", "SECOND", ""]),
            "args": args[:1] or [_reference(rng)],
        }
    if op == "UDF":
        return {"op": op, "name": rng.choice(["my_catalog.f", "", "x'; --"]), "args": args}
    if op in ("TOO_DEEP", "UNKNOWN"):
        return {"op": op, "text": rng.choice(_SPARK_TEXT)}
    return {"op": op, "args": args}


def _literal(rng: random.Random, catalog_string: str | None = None) -> dict[str, Any]:
    """A literal of ``catalog_string`` (else any type): null, edge text of its type, or anything."""
    kind = catalog_string or rng.choice(V2_TYPES)
    family = "decimal" if kind.startswith("decimal") else "string" if "char(" in kind else _FAMILIES.get(kind)
    choice = rng.random()
    text: str | None
    if choice < 0.1:
        text = None
    elif choice < 0.75 and family is not None:
        text = rng.choice(_EDGE_TEXTS[family])
        if family == "string" and rng.random() < 0.5:
            text = "".join(rng.choice(_SPARK_TEXT) for _ in range(rng.randint(1, 6)))
            text *= rng.choice([1000, 20_000]) if rng.random() < 0.05 else 1
    else:
        text = rng.choice(mutate.NUMBERS + _SPARK_TEXT + rng.choice(list(_EDGE_TEXTS.values())))
    return {"lit": text, "type": kind}


def _reference(rng: random.Random) -> dict[str, Any]:
    """A column of the fuzz tables; now and then in other case, nested, or unknown."""
    name = rng.choice(_COLUMNS)[0]
    choice = rng.random()
    if choice < 0.8:
        return {"ref": [name]}
    if choice < 0.9:
        return {"ref": [name.upper()]}
    return {"ref": rng.choice([["st", "x"], ["nope"], [""], [name, name]])}


def _comparison(rng: random.Random) -> dict[str, Any]:
    """A column compared with a literal of its own type: what Spark offers once its casts are explicit."""
    name, catalog_string = rng.choice(_COLUMNS)
    operands = [{"ref": [name]}, _literal(rng, catalog_string)]
    return {"op": rng.choice(_COMPARISONS), "args": operands if rng.random() < 0.8 else operands[::-1]}


def _wrapped(rng: random.Random, node: dict[str, Any]) -> dict[str, Any]:
    """``node`` as the operand of a unary operator, of a binary one beside a literal, or of a cast."""
    choice = rng.randrange(3)
    if choice == 0:
        return {
            "op": rng.choice(["NOT", "IS_NULL", "IS_NOT_NULL", "ABS", "UPPER", "LOWER", "CHAR_LENGTH", "-"]),
            "args": [node],
        }
    if choice == 1:
        op = rng.choice(
            [
                *_COMPARISONS,
                "+",
                "-",
                "*",
                "/",
                "%",
                "&",
                "|",
                "^",
                "STARTS_WITH",
                "ENDS_WITH",
                "CONTAINS",
                "COALESCE",
                "IN",
                "SUBSTRING",
                "AND",
                "OR",
            ]
        )
        return {"op": op, "args": [node, _literal(rng)] if rng.random() < 0.8 else [_literal(rng), node]}
    return {"op": "CAST", "from": rng.choice(V2_TYPES), "to": rng.choice(V2_TYPES), "args": [node]}


def _nested(rng: random.Random, node: dict[str, Any]) -> dict[str, Any]:
    """``node`` under operators up to and past Expressions' depth (cut at TOO_DEEP later)."""
    depth = rng.choice([31, 33, 63, 64, 65, 99, 100, 101, 129, 1000])
    leaf = _comparison(rng)
    wrap = rng.choice(
        [  # AND and OR alternate: Expressions flattens a chain of one connective
            lambda value, level: {"op": "NOT", "args": [value]},
            lambda value, level: {"op": "AND" if level % 2 else "OR", "args": [value, leaf]},
            lambda value, level: {"op": "+", "args": [value, {"lit": "1", "type": "int"}]},
            lambda value, level: {"op": "CAST", "from": "int", "to": "int", "args": [value]},
            lambda value, level: {"op": "COALESCE", "args": [value, {"ref": ["i"]}]},
            lambda value, level: {"op": "-", "args": [value]},
        ]
    )
    for level in range(depth):
        node = cast(dict[str, Any], wrap(node, level))  # the lambdas' dicts differ: their join is object
    return node


def _wide(rng: random.Random, node: dict[str, Any]) -> dict[str, Any]:
    """Thousands of operands in one node: a flat AND/OR chain as Expressions sends one, an IN list, a COALESCE."""
    count = rng.choice([2, 33, 100, 1000, 2000])
    choice = rng.randrange(4)
    if choice == 0:
        return {"op": rng.choice(["AND", "OR"]), "args": [node] * count}
    if choice == 1:
        return {"op": rng.choice(["AND", "OR"]), "args": [_comparison(rng) for _ in range(count)]}
    if choice == 2:
        name, catalog_string = rng.choice(_COLUMNS)
        return {"op": "IN", "args": [{"ref": [name]}, *(_literal(rng, catalog_string) for _ in range(count))]}
    return {"op": "=", "args": [{"op": "COALESCE", "args": [node] * count}, _literal(rng)]}


def nested_v2(rng: random.Random) -> Any:
    """A deep or wide predicate for the generic JSON mutations."""
    leaf = _comparison(rng)
    return _nested(rng, leaf) if rng.random() < 0.5 else _wide(rng, leaf)


def _as_sent(tree: Any) -> Any:
    """A copy of ``tree`` as Expressions writes it: an operand more than :data:`_MAX_DEPTH`
    levels down is TOO_DEEP (an expression at depth d sits 2d + 1 JSON levels down)."""
    root: list[Any] = [None]
    pending: list[tuple[Any, Any, Any, int]] = [(tree, root, 0, 0)]
    while pending:
        value, container, key, level = pending.pop()
        if isinstance(value, (dict, list)) and level > 2 * _MAX_DEPTH + 1:
            container[key] = dict(_TOO_DEEP)
        elif isinstance(value, dict):
            container[key] = members = dict.fromkeys(value)
            pending += [(item, members, name, level + 1) for name, item in value.items()]
        elif isinstance(value, list):
            container[key] = items = [None] * len(value)
            pending += [(item, items, index, level + 1) for index, item in enumerate(value)]
        else:
            container[key] = value
    return root[0]


def _written_size(tree: Any, limit: int) -> int:
    """About how many bytes ``tree`` takes as JSON (an operand repeated by reference is
    written each time), counted only until past ``limit``: a mutation may repeat a wide
    operand thousands of times."""
    size, pending = 0, [tree]
    while pending and size <= limit:
        node = pending.pop()
        if isinstance(node, dict):
            size += 2 + sum(len(key) + 4 for key in node)
            pending.extend(node.values())
        elif isinstance(node, list):
            size += 2 + len(node)
            if size <= limit:
                pending.extend(node)
        else:
            size += len(node) + 2 if isinstance(node, str) else 8
    return size


# ---------------------------------------------------------------- flight JSON
def json_generator(
    seed_list: Callable[[], list[bytes]], vocabulary: list[str], nested: Callable[[random.Random], Any]
) -> Callable[[random.Random, list[bytes]], bytes]:
    donors = [subtree for seed in seed_list() for subtree in mutate.subtrees(json.loads(seed).get("filter") or {})]

    def generate(rng: random.Random, pool: list[bytes]) -> bytes:
        data = rng.choice(pool)
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.1:
                data = mutate.mutate_bytes(rng, data, pool)
                continue
            try:
                tree = json.loads(data)
            except (ValueError, RecursionError):
                data = mutate.mutate_bytes(rng, data, pool)
                continue
            inside = _expressions(tree) if rng.random() < 0.85 else None
            if isinstance(inside, (dict, list)) and inside:
                mutate.mutate_json_tree(rng, inside, vocabulary, nested, donors)
            else:
                tree = mutate.mutate_json_tree(rng, tree, vocabulary, nested, donors)
            data = mutate.dump_json(tree)
        if rng.random() < 0.05:
            data = b"path:" + b"\x00".join(
                rng.choice([b"pg", b"public", b"t", b"\xff", b"", b"lite", b"x" * 300])
                for _ in range(rng.randint(0, 4))
            )
        return data

    return generate


def _expressions(request: Any) -> Any:
    """The expression list of a request's filter (where most mutations should land), if any."""
    body = request.get("filter") if isinstance(request, dict) else None
    return body.get("conjuncts", body.get("filters", body)) if isinstance(body, dict) else None


SLUICE_WORDS = [
    "op",
    "args",
    "column",
    "literal",
    "type",
    "escape",
    "sql",
    "reason",
    "format",
    "version",
    "conjuncts",
    "table",
    "columns",
    "filter",
    "limit",
    "partitions",
    "session_zone",
    "protocol",
    "sluice",
    "airport",
    "substrait",
    "base64",
    *filter_json.OPS,
    "i",
    "s",
    "f",
    "ts",
    "dt",
    "d",
    "id",
    'we"ird',
]
AIRPORT_WORDS = [
    "expression_class",
    "type",
    "children",
    "left",
    "right",
    "input",
    "lower",
    "upper",
    "child",
    "binding",
    "column_index",
    "value",
    "is_null",
    "id",
    "type_info",
    "width",
    "scale",
    "name",
    "return_type",
    "upper",
    "lower",
    "base64",
    "filters",
    "column_binding_names_by_index",
    "BOUND_COMPARISON",
    "BOUND_CONJUNCTION",
    "BOUND_OPERATOR",
    "BOUND_BETWEEN",
    "BOUND_FUNCTION",
    "BOUND_CONSTANT",
    "BOUND_COLUMN_REF",
    "BOUND_CAST",
    "COMPARE_EQUAL",
    "COMPARE_IN",
    "COMPARE_NOT_IN",
    "CONJUNCTION_AND",
    "CONJUNCTION_OR",
    "OPERATOR_NOT",
    "OPERATOR_IS_NULL",
    "OPERATOR_COALESCE",
    "DECIMAL",
    "HUGEINT",
    "VARCHAR",
    "DATE",
    "TIMESTAMP_NS",
    "DOUBLE",
    "BIGINT",
    "SQLNULL",
    "list_value",
    "like_escape",
    "~~",
    "prefix",
    "length",
    "+",
]


def nested_sluice(rng: random.Random) -> Any:
    leaf = {"op": "=", "args": [{"column": "i"}, {"literal": 1, "type": "int"}]}
    kind = rng.randrange(3)
    if kind == 0:
        return _wrap(rng, leaf, lambda v: {"op": "not", "args": [v]})
    if kind == 1:
        return {"op": rng.choice(["and", "or", "in", "coalesce"]), "args": [leaf] * rng.choice([2, 33, 1000, 5000])}
    return _wrap(rng, leaf, lambda v: {"op": "and", "args": [v, leaf]})


def nested_airport(rng: random.Random) -> Any:
    leaf = {"expression_class": "BOUND_COLUMN_REF", "binding": {"column_index": 7}}
    compare = {
        "expression_class": "BOUND_COMPARISON",
        "type": "COMPARE_EQUAL",
        "left": leaf,
        "right": {
            "expression_class": "BOUND_CONSTANT",
            "value": {"type": {"id": "INTEGER"}, "is_null": False, "value": 1},
        },
    }
    if rng.random() < 0.5:
        return {
            "expression_class": "BOUND_CONJUNCTION",
            "type": rng.choice(["CONJUNCTION_AND", "CONJUNCTION_OR"]),
            "children": [compare] * rng.choice([2, 33, 1000, 5000]),
        }
    return _wrap(
        rng, compare, lambda v: {"expression_class": "BOUND_OPERATOR", "type": "OPERATOR_NOT", "children": [v]}
    )


def _wrap(rng: random.Random, leaf: Any, wrap: Callable[[Any], Any]) -> Any:
    value = leaf
    for _ in range(rng.choice(mutate.DEPTHS[:6])):
        value = wrap(value)
    return value


# ---------------------------------------------------------------- substrait
@lru_cache(maxsize=1)
def _substrait_messages() -> tuple[bytes, ...]:
    return tuple(seeds.substrait_messages())


def substrait_seeds() -> list[bytes]:
    return [seeds.substrait_request(message) for message in _substrait_messages()]


def substrait(rng: random.Random, pool: list[bytes]) -> bytes:
    """Mutate the protobuf bytes themselves (flips, truncation, splicing, nesting), then wrap
    them in a request; now and then mutate the request's JSON instead."""
    messages = list(_substrait_messages())
    message = rng.choice(messages)
    for _ in range(rng.randint(1, 3)):
        choice = rng.random()
        if choice < 0.1:
            message = _nest_message(rng, message)
        elif choice < 0.15:
            message = _varint_bomb(rng, message)
        elif choice < 0.35:
            message = mutate.mutate_bytes(rng, message, messages)
        else:
            message = wire.mutate(rng, message, messages)
    data = seeds.substrait_request(message)
    if rng.random() < 0.1:
        data = json_generator(substrait_seeds, SLUICE_WORDS, nested_sluice)(rng, [data])
    return data


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return wire.varint(number << 3 | 2) + wire.varint(len(payload)) + payload


def _nest_message(rng: random.Random, message: bytes) -> bytes:
    """Expressions nested deeply: ``not(not(...))`` scalar functions, or a message in itself."""
    depth = rng.choice(mutate.DEPTHS[:5])
    expression = _field(1, _field(5, b"\x08\x01"))  # a literal i32 = 1
    for _ in range(depth):
        call = (
            _field(4, _field(3, expression)) + b"\x08" + wire.varint(rng.choice([0, 1, 2, 99]))
        )  # args, function anchor
        expression = _field(3, call)
    reference = _field(3, _field(1, expression))
    return message + reference


def _varint_bomb(rng: random.Random, message: bytes) -> bytes:
    position = rng.randrange(len(message) + 1)
    bomb = rng.choice([b"\xff" * 11, b"\x80" * 10 + b"\x01", wire.varint(2**63), b"\x0a\xff\xff\xff\xff\x0f"])
    return message[:position] + bomb + message[position:]


# ---------------------------------------------------------------- catalog
_TOML_PIECES = [
    "[sources.x]\n",
    'url = "sqlite:///a.db"\n',
    "partitions = ",
    "statement_timeout_s = ",
    "password_env = ",
    "= ",
    '"',
    "'",
    "'''",
    '"""',
    "\\u0000",
    "\\uD800",
    "\\x",
    "[[sources]]\n",
    "[sources]\n",
    "inf",
    "nan",
    "-0.0",
    "1e999",
    "0x7f",
    "9" * 5000,
    "1979-05-27T07:32:00Z",
    "{ url = 1 }",
    "[",
    "]",
    "{",
    "}",
    ".",
    "\n",
    "\r",
    "\x00",
    "#",
    "true",
]


def catalog(rng: random.Random, pool: list[bytes]) -> bytes:
    data = rng.choice(pool)
    for _ in range(rng.randint(1, 3)):
        choice = rng.random()
        if choice < 0.4:
            data = mutate.mutate_bytes(rng, data, pool)
        elif choice < 0.8:
            position = rng.randrange(len(data) + 1)
            data = data[:position] + rng.choice(_TOML_PIECES).encode("utf-8", "surrogatepass") + data[position:]
        else:
            depth = rng.choice(mutate.DEPTHS[:6])
            opener, closer = rng.choice([("[", "]"), ("{ a = ", " }"), ("[{ a = ", " }]")])
            data += f'\n[sources.deep]\nurl = "sqlite:///d.db"\nx = {opener * depth}1{closer * depth}\n'.encode()
    return data
