"""Valid inputs every mutation starts from: the predicates Spark offers a scan (V2
expressions as the catalog layer sends them), Flight requests in the three filter
encodings, and catalog files. Each seed is accepted as it is (a test checks that), so a
mutant that fails to parse is refused by the code under test, not by a broken seed."""

from __future__ import annotations

import base64
import json
from typing import Any

from fuzz.parsers.tables import HOSTILE_NAMES


# ---------------------------------------------------------------- Spark's V2 predicates
def _reference(*parts: str) -> dict[str, Any]:
    return {"ref": list(parts)}


def _value(text: str | None, catalog_string: str) -> dict[str, Any]:
    """A literal as Expressions writes it: Spark's internal value as text (days, microseconds, base64)."""
    return {"lit": text, "type": catalog_string}


def _call(op: str, *args: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"op": op, **extra, "args": list(args)}


def _cast(child: dict[str, Any], source: str, target: str) -> dict[str, Any]:
    return _call("CAST", child, **{"from": source, "to": target})


#: what Spark offers one scan of the fuzz tables, conjunct by conjunct: its optimizer has made
#: implicit casts explicit, folded constants and flattened chains of one connective
V2_PREDICATES: list[list[dict[str, Any]]] = [
    [_call("IS_NOT_NULL", _reference("i")), _call("=", _reference("i"), _value("1", "int"))],
    [
        _call(">", _reference("f"), _value("1.5", "double")),
        _call("<", _reference("r"), _value("0.1", "float")),
        _call("<>", _reference("d"), _value("1.25", "decimal(10,2)")),
    ],
    [
        _call(
            "OR",
            _call("IS_NULL", _reference("s")),
            _call("STARTS_WITH", _reference("s"), _value("a%_", "string")),
            _call("ENDS_WITH", _reference("c"), _value("z\\", "string")),
        )
    ],
    [
        _call(
            "IN",
            _reference("id"),
            _value("1", "bigint"),
            _value(None, "bigint"),
            _value("9223372036854775807", "bigint"),
        )
    ],
    [_call("NOT", _call("CONTAINS", _reference("c"), _value("x'; DROP TABLE t; --", "string")))],
    [
        _call("<", _reference("ts"), _value("1710055800000000", "timestamp")),
        _call(">=", _reference("dt"), _value("19782", "date")),
        _call("=", _reference("tn"), _value("1704067200000000", "timestamp_ntz")),
    ],
    [
        _call("=", _call("CHAR_LENGTH", _reference("s")), _value("3", "int")),
        _call(">", _call("+", _reference("i"), _value("1", "int")), _value("5", "int")),
    ],
    [
        _call(
            "=",
            _call("SUBSTRING", _reference("s"), _value("2", "int"), _value("3", "int")),
            _value("\u2019\uff07\u02bc", "string"),
        )
    ],
    [
        _call("<=>", _call("COALESCE", _reference("i"), _value("0", "int")), _value("0", "int")),
        _call("UDF", _reference("s"), name="my_catalog.my_udf"),
    ],
    [_call("=", _reference(name), _value("a\"b'c`d\\e", "string")) for name in HOSTILE_NAMES],
    [
        _call("<>", _reference("f"), _value("NaN", "double")),
        _call("=", _reference("r"), _value("-0.0", "float")),
        _call("=", _reference("b"), _value("true", "boolean")),
    ],
    [
        _call(">", _cast(_reference("i"), "int", "decimal(11,1)"), _value("1.5", "decimal(11,1)")),
        _call("=", _cast(_reference("i"), "int", "bigint"), _reference("id")),
    ],
    [
        _call("=", _call("%", _call("ABS", _reference("id")), _value("7", "bigint")), _value("3", "bigint")),
        _call("=", _call("&", _reference("i"), _value("3", "int")), _value("1", "int")),
        _call("<>", _call("-", _reference("i")), _call("-", _reference("i"), _value("1", "int"))),
    ],
    [
        _call("=", _call("UPPER", _reference("s")), _value("A", "string")),
        _call("=", _call("LOWER", _reference("c")), _value("a", "string")),
    ],
    [_call("OR", *(_call("=", _reference("i"), _value(str(k), "int")) for k in range(40)))],
    [
        _call(
            "OR",
            _call(
                "AND",
                _call(">", _reference("id"), _value("5", "bigint")),
                _call("<", _reference("id"), _value("9", "bigint")),
            ),
            _call(
                "NOT", _call("OR", _call("=", _reference("s"), _value("", "string")), _call("IS_NULL", _reference("c")))
            ),
        )
    ],
    [
        _call("<=>", _reference("s"), _value(None, "string")),
        _call(">", _call("/", _reference("f"), _value("2.0", "double")), _call("*", _reference("f"), _reference("f"))),
    ],
    [
        _call(
            "=",
            _call("^", _reference("id"), _value("1", "bigint")),
            _call("|", _reference("id"), _value("2", "bigint")),
        )
    ],
    [
        _call(">=", _reference("dt"), _value("-719162", "date")),
        _call("<", _reference("dt"), _value("2932896", "date")),
        _call("IN", _reference("c"), _value("\x00", "string"), _value("", "string")),
    ],
    # what Sluice has no translation of: left to Spark, never an error
    [
        {"op": "TOO_DEEP", "text": "a predicate nested more than 100 levels deep"},
        {"op": "UNKNOWN", "text": "st.x > 1"},
        _call("=", _call("EXTRACT", _reference("dt"), field="YEAR"), _value("2024", "int")),
        _call("IS_NOT_NULL", _reference("st", "x")),
        _call("=", _reference("s"), _cast(_value("YWJj", "binary"), "binary", "string")),
        _call("ALWAYS_TRUE"),
    ],
]


def v2_seeds() -> list[bytes]:
    return [json.dumps(predicates, separators=(",", ":")).encode() for predicates in V2_PREDICATES]


# ---------------------------------------------------------------- Flight requests
def _request(table: list[str], body: dict[str, Any] | None, **extra: Any) -> bytes:
    data: dict[str, Any] = {"protocol": "sluice-flight", "version": 1, "table": table, "session_zone": "UTC", **extra}
    if body is not None:
        data["filter"] = body
    return json.dumps(data, separators=(",", ":")).encode()


def _col(name: str) -> dict[str, Any]:
    return {"column": name}


def _lit(value: Any, type_name: str) -> dict[str, Any]:
    return {"literal": value, "type": type_name}


def _op(name: str, *args: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"op": name, "args": list(args), **extra}


SLUICE_FILTERS: list[list[dict[str, Any]]] = [
    [_op("=", _col("i"), _lit(1, "int"))],
    [
        _op(
            "and",
            _op(">", _col("f"), _lit(1.5, "double")),
            _op("<", _col("r"), _lit(0.10000000149011612, "float")),
            _op("<>", _col("d"), _lit("1.25", "decimal(10,2)")),
        )
    ],
    [_op("or", _op("is_null", _col("s")), _op("like", _col("s"), _lit("a!%%", "string"), escape=_lit("!", "string")))],
    [_op("in", _col("id"), _lit(1, "bigint"), _lit(None, "bigint"), _lit(9223372036854775807, "bigint"))],
    [_op("not", _op("starts_with", _col("c"), _lit("x'; DROP TABLE t; --", "string")))],
    [
        _op("<", _col("ts"), _lit("2024-03-10T07:30:00.000000Z", "timestamp")),
        _op(">=", _col("dt"), _lit("2024-02-29", "date")),
    ],
    [_op("=", _op("length", _col("s")), _lit(3, "int")), _op(">", _op("+", _col("i"), _lit(1, "int")), _lit(5, "int"))],
    [_op("=", _op("substring", _col("s"), _lit(2, "int"), _lit(3, "int")), _lit("\u2019\uff07\u02bc", "string"))],
    [
        _op("<=>", _op("coalesce", _col("i"), _lit(0, "int")), _lit(0, "int")),
        _op("opaque", sql="upper(s) = 'A'", reason="no spelling"),
    ],
    [_op("=", _col(name), _lit("a\"b'c`d\\e", "string")) for name in HOSTILE_NAMES[:4]],
    [
        _op("<>", _col("f"), _lit("NaN", "double")),
        _op("=", _col("tn"), _lit("2024-01-01T00:00:00", "timestamp_ntz")),
        _op("=", _col("b"), _lit(True, "boolean")),
    ],
]


def flight_json_seeds() -> list[bytes]:
    seeds = [
        _request(["pg", "public", "t"], {"format": "sluice", "version": 1, "conjuncts": f}) for f in SLUICE_FILTERS
    ]
    seeds += [
        _request(
            ["lite", "t"],
            {"format": "sluice", "conjuncts": SLUICE_FILTERS[1]},
            columns=["id", "s"],
            limit=10,
            partitions=2,
        ),
        _request(["duck", "main", "t"], None, session_zone="America/New_York"),
    ]
    return seeds


_NOWHERE = 18446744073709552000


def _duck_type(type_id: str, **info: Any) -> dict[str, Any]:
    return {"id": type_id, "type_info": ({"type": "DECIMAL_TYPE_INFO", "alias": "", **info} if info else None)}


def _ref(index: int, type_id: str = "VARCHAR") -> dict[str, Any]:
    return {
        "expression_class": "BOUND_COLUMN_REF",
        "type": "BOUND_COLUMN_REF",
        "alias": "",
        "query_location": _NOWHERE,
        "return_type": _duck_type(type_id),
        "binding": {"table_index": 0, "column_index": index},
        "depth": 0,
    }


def _const(value: Any, type_id: str = "VARCHAR", **info: Any) -> dict[str, Any]:
    return {
        "expression_class": "BOUND_CONSTANT",
        "type": "VALUE_CONSTANT",
        "alias": "",
        "query_location": _NOWHERE,
        "value": {"type": _duck_type(type_id, **info), "is_null": value is None, "value": value},
    }


def _compare(kind: str, left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    return {
        "expression_class": "BOUND_COMPARISON",
        "type": kind,
        "alias": "",
        "query_location": _NOWHERE,
        "left": left,
        "right": right,
    }


def _function(name: str, *children: dict[str, Any]) -> dict[str, Any]:
    return {
        "expression_class": "BOUND_FUNCTION",
        "type": "BOUND_FUNCTION",
        "alias": "",
        "query_location": _NOWHERE,
        "return_type": _duck_type("BOOLEAN"),
        "children": list(children),
        "name": name,
        "arguments": [],
        "original_arguments": [],
        "catalog_name": "system",
        "schema_name": "main",
        "has_serialize": False,
        "is_operator": False,
    }


def _operator(kind: str, *children: dict[str, Any]) -> dict[str, Any]:
    return {
        "expression_class": "BOUND_OPERATOR",
        "type": kind,
        "alias": "",
        "query_location": 81,
        "return_type": _duck_type("BOOLEAN"),
        "children": list(children),
    }


def _conjunction(kind: str, *children: dict[str, Any]) -> dict[str, Any]:
    return {
        "expression_class": "BOUND_CONJUNCTION",
        "type": kind,
        "alias": "",
        "query_location": _NOWHERE,
        "children": list(children),
    }


#: binding names: index -> column of the fuzz tables
_NAMES = ["id", "s", "c", "dt", "f", "ts", "d", "i", "rowid"]
AIRPORT_FILTERS: list[list[dict[str, Any]]] = [
    [_compare("COMPARE_EQUAL", _ref(1), _const("Ada"))],
    [
        _conjunction(
            "CONJUNCTION_OR",
            _operator("COMPARE_IN", _ref(1), _const("Ada"), _const("it's")),
            _compare("COMPARE_GREATERTHAN", _ref(0, "BIGINT"), _const(5, "BIGINT")),
        )
    ],
    [
        _function("prefix", _ref(2), _const("x'; --")),
        _compare("COMPARE_LESSTHAN", _function("length", _ref(1)), _const(10, "BIGINT")),
    ],
    [
        _operator("OPERATOR_NOT", _operator("OPERATOR_IS_NULL", _ref(3, "DATE"))),
        _compare("COMPARE_EQUAL", _ref(3, "DATE"), _const(19782, "DATE")),
    ],
    [
        {
            "expression_class": "BOUND_BETWEEN",
            "type": "COMPARE_BETWEEN",
            "alias": "",
            "query_location": _NOWHERE,
            "input": _ref(7, "INTEGER"),
            "lower": _const(1, "INTEGER"),
            "upper": _const(9, "INTEGER"),
            "lower_inclusive": True,
            "upper_inclusive": False,
        }
    ],
    [
        _compare("COMPARE_GREATERTHANOREQUALTO", _ref(6, "DECIMAL"), _const(125, "DECIMAL", width=10, scale=2)),
        _compare(
            "COMPARE_LESSTHAN",
            _ref(5, "TIMESTAMP WITH TIME ZONE"),
            _const(1710055800000000, "TIMESTAMP WITH TIME ZONE"),
        ),
    ],
    [
        _function("~~", _ref(1), _const("a%b_")),
        _function("!~~", _ref(2), _const("%\\%")),
        _function("like_escape", _ref(1), _const("a!%"), _const("!")),
    ],
    [
        _compare("COMPARE_NOT_DISTINCT_FROM", _ref(4, "DOUBLE"), _const("nan", "DOUBLE")),
        _compare(
            "COMPARE_EQUAL",
            _ref(0, "BIGINT"),
            {"expression_class": "BOUND_CAST", "child": _const(7, "INTEGER"), "return_type": _duck_type("BIGINT")},
        ),
    ],
    [
        _compare("COMPARE_EQUAL", _ref(0, "HUGEINT"), _const({"upper": 0, "lower": 5}, "HUGEINT")),
        _compare("COMPARE_EQUAL", _ref(1), _const({"base64": base64.b64encode("é".encode()).decode()})),
    ],
]


def airport_seeds() -> list[bytes]:
    return [
        _request(["pg", "public", "t"], {"format": "airport", "filters": f, "column_binding_names_by_index": _NAMES})
        for f in AIRPORT_FILTERS
    ]


def substrait_messages() -> list[bytes]:
    """ExtendedExpression messages as pyarrow writes them (a Substrait producer)."""
    import datetime as dt
    from decimal import Decimal

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.substrait as ps

    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("s", pa.string()),
            ("d", pa.decimal128(10, 2)),
            ("ts", pa.timestamp("us", tz="UTC")),
            ("dt", pa.date32()),
            ("f", pa.float64()),
            ("i", pa.int32()),
        ]
    )
    groups = [
        [pc.field("id") == 5, pc.field("s").isin(["a", "it's"])],
        [~(pc.field("id") > 3), (pc.field("id") > 1) & (pc.field("s") == "x'; DROP TABLE t; --")],
        [(pc.field("i") < 0) | pc.field("s").is_null(), pc.starts_with(pc.field("s"), pattern="ab")],
        [
            pc.field("d") >= pa.scalar(Decimal("1.50"), pa.decimal128(10, 2)),
            pc.field("dt") == pa.scalar(dt.date(2024, 2, 29)),
        ],
        [pc.field("ts") < pa.scalar(dt.datetime(2024, 3, 10, 7, tzinfo=dt.timezone.utc), pa.timestamp("us", tz="UTC"))],
        [pc.add(pc.field("id"), 1) > 3, pc.field("f") == 0.5, pc.is_valid(pc.field("s"))],
    ]
    return [bytes(ps.serialize_expressions(group, [f"e{i}" for i in range(len(group))], schema)) for group in groups]


def substrait_request(message: bytes) -> bytes:
    return _request(["pg", "public", "t"], {"format": "substrait", "base64": base64.b64encode(message).decode()})


CATALOGS = [
    '[sources.pg]\nurl = "postgresql://root@127.0.0.1:5432/test"\npassword_env = "SLUICE_PG_PASSWORD"\npartitions = 4\n'
    'statement_timeout_s = 30\n[sources.lite]\nurl = "sqlite:///demo-data/crm.db"\n',
    '# a comment\n[sources]\nmy = { url = "mysql://root@127.0.0.1:3306/test", statement_timeout_s = 1.5 }\n',
    '[sources.duck]\nurl = \'duckdb:///tmp/x.duckdb\'\n[sources.lake]\nurl = """iceberg+sqlite:///tmp/c.db?warehouse=/tmp/w"""\n',
    '[sources."fl"]\nurl = "grpc://127.0.0.1:8815"\npassword_env = "TOKEN"\n',
]


def catalog_seeds() -> list[bytes]:
    return [catalog.encode() for catalog in CATALOGS]
