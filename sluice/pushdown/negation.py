"""One spelling of negation, ``NOT (p)``, and of ``BETWEEN``, a range.

sqlglot parses ``x NOT LIKE p`` and ``x NOT ILIKE p`` as the positive node with a
``negate`` flag (also under ``ESCAPE``). Any code that looks only at the node type would
read them as the positive predicate: silent data loss. Every entry point unfolds the flag.
"""

from __future__ import annotations

from sqlglot import exp


def unfold_between(node: exp.Expression) -> exp.Expression:
    """``x BETWEEN lo AND hi`` as ``x >= lo AND x <= hi`` (Spark defines it so, in three-valued
    logic too), so each bound is classified on its own; any other node as it is."""
    if not isinstance(node, exp.Between):
        return node
    low = exp.GTE(this=node.this.copy(), expression=node.args["low"].copy())
    high = exp.LTE(this=node.this.copy(), expression=node.args["high"].copy())
    return exp.And(this=low, expression=high)


def unfold_negate(node: exp.Expression) -> exp.Expression:
    """``Like(negate=True)`` -> ``Not(Like)``; anything else unchanged (same object)."""
    target = node.this if isinstance(node, exp.Escape) else node
    if not target.args.get("negate"):
        return node
    positive = node.copy()
    (positive.this if isinstance(positive, exp.Escape) else positive).set("negate", None)
    return exp.Not(this=exp.Paren(this=positive))
