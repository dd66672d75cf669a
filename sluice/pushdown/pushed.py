"""A conjunct a source evaluates, as it crosses from planning to reading: a typed tree, not text.

The same carrier holds a pushed join's ON keys (:class:`sluice.scan.join.JoinRead`) and a
pushed aggregate's grouping keys and arguments (:class:`sluice.scan.aggregation.Output`).

The classifier (:mod:`sluice.pushdown.translator`, or a Flight server's answer) decides what a
source evaluates and builds the tree; the source writes it out only when it reads
(:meth:`sluice.scan.spec.ScanSpec.where_sql`), through the very function EXPLAIN and the golden
files call (:meth:`sluice.dialects.base.Dialect.render`), so what EXPLAIN shows is by
construction what runs. The tree travels as JSON (the scan spec is a Spark option read by
Python workers) in sqlglot's own serialised form (:mod:`sqlglot.serde`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot import exp, serde

#: a serialised node's class key in :mod:`sqlglot.serde` (its meta key is dropped, see :func:`_dumped`)
_CLASS, _META = "c", "m"


@dataclass(frozen=True)
class Pushed:
    """One pushed conjunct: ``tree`` for a source written in SQL (its dialect renders it), or
    ``flight`` for a Flight server (the filter expression of :mod:`sluice.flight.filter_json`
    with the level the server gave it and the session time zone it was encoded in)."""

    tree: exp.Expression | None = None
    flight: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if (self.tree is None) == (self.flight is None):
            raise ValueError("a pushed conjunct is either a SQL tree or a Flight filter expression")

    def sql_tree(self) -> exp.Expression:
        """The SQL tree; a Flight conjunct handed to a SQL source is a planning error, named."""
        if self.tree is None:
            raise ValueError("a Flight filter expression was handed to a source that reads SQL")
        return self.tree

    def flight_expression(self) -> dict[str, Any]:
        if self.flight is None:
            raise ValueError("a SQL tree was handed to a Flight source")
        return self.flight

    def to_dict(self) -> dict[str, Any]:
        if self.tree is not None:
            return {"tree": _dumped(self.tree)}
        return {"flight": self.flight}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Pushed:
        if "tree" in data:
            return cls(tree=_loaded(data["tree"]))
        return cls(flight=data["flight"])


def _dumped(tree: exp.Expression) -> list[dict[str, Any]]:
    """sqlglot's serialised form, each class by its short name (sqlglot's loader finds those
    in :mod:`sqlglot.expressions`), without node meta: the classifier's typed constants sit
    there (:data:`sluice.pushdown.constants.TYPED`), and rendering never reads them."""
    payloads = []
    for payload in serde.dump(tree):
        kept = {key: value for key, value in payload.items() if key != _META}
        if _CLASS in kept and kept[_CLASS] != serde.DATA_TYPE:
            kept[_CLASS] = kept[_CLASS].rpartition(".")[2]
        payloads.append(kept)
    return payloads


def _loaded(payloads: list[dict[str, Any]]) -> exp.Expression:
    """The tree back; only sqlglot's own node classes are built (given a module, sqlglot's
    loader would import it)."""
    for payload in payloads:
        name = payload.get(_CLASS)
        if name is None or name == serde.DATA_TYPE:
            continue
        node_class = getattr(exp, name, None)
        if "." in name or not (isinstance(node_class, type) and issubclass(node_class, exp.Expression)):
            raise ValueError(f"a pushed tree names {name!r}, which is not a sqlglot expression")
    tree = serde.load(payloads)
    if not isinstance(tree, exp.Expression):
        raise ValueError("a pushed tree is empty")
    return tree
