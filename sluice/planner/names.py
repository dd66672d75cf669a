"""Result column names Spark gives a query, when they can be read off the query's text.

``Federation.sql`` renames its result to the names Spark gives the *reference* query, so
that no rewrite can rename a column. Asking Spark means analysing the reference query over
empty stand-in frames: about 65 ms, most of a small query's driver time. For the common
shapes Spark's rule is simple (checked by ``tests/integration/test_result_names.py``):

* an unaliased column reference is named as written (``SELECT ID`` over column ``id``
  gives ``ID``; ``t.ID`` gives ``ID``);
* an aliased expression is named by its alias;
* ``*`` gives the tables' columns, in FROM order (the binder does not take ``t.*``).

:func:`known_names` applies it only to a single SELECT whose FROM and joins are attached
tables (no CTE, subquery, set operation, USING/NATURAL/semi/anti join, lateral view or
pivot), and only to references that name exactly one column of those tables. Anything
else returns None and Spark decides, as before. Result *types* always come from Spark's
analysis of the query it runs; only the names are taken from here.
"""

from __future__ import annotations

from typing import Mapping

from sqlglot import exp

from sluice.types import TableSchema

#: join kinds whose output holds both sides' columns (semi and anti joins drop the right side)
_KEEPING_BOTH_SIDES = {"", "INNER", "OUTER", "CROSS"}


def known_names(reference: exp.Expression, tables: Mapping[str, TableSchema]) -> list[str] | None:
    """The result names Spark gives ``reference``, or None when only Spark's analysis can tell.

    ``tables`` maps each scan's placeholder table name (its scan id) to the table it reads.
    Assumes a case-insensitive session (Spark's default); callers check that.
    """
    if not isinstance(reference, exp.Select) or reference.args.get("with_") or reference.args.get("with"):
        return None
    if any(reference.args.get(key) for key in ("kind", "exclude", "into", "laterals", "pivots")):
        return None
    scans = _scans(reference, tables)
    if scans is None:
        return None
    names: list[str] = []
    for projection in reference.expressions:
        found = _names_of(projection, scans)
        if found is None:
            return None
        names.extend(found)
    return names


def _scans(select: exp.Select, tables: Mapping[str, TableSchema]) -> list[tuple[str, TableSchema]] | None:
    """(alias, table) of FROM and every join, in order; None unless all are plain attached tables."""
    source = select.args.get("from_") or select.args.get("from")
    if source is None:
        return None
    relations = [source.this]
    for join in select.args.get("joins") or []:
        if join.args.get("using") or join.args.get("method") or (join.args.get("kind") or "").upper() not in _KEEPING_BOTH_SIDES:
            return None
        relations.append(join.this)
    found = []
    for relation in relations:
        if not isinstance(relation, exp.Table) or relation.args.get("pivots") or relation.args.get("joins"):
            return None
        table = tables.get(relation.name)
        if table is None or relation.db or relation.catalog:
            return None
        found.append(((relation.alias or relation.name).lower(), table))
    return found


def _names_of(projection: exp.Expression, scans: list[tuple[str, TableSchema]]) -> list[str] | None:
    if isinstance(projection, exp.Alias):
        return [projection.alias]
    if isinstance(projection, exp.Star):
        return None if any(projection.args.values()) else [c.name for _, table in scans for c in table.columns]
    if not isinstance(projection, exp.Column) or projection.args.get("db") or projection.args.get("catalog"):
        return None
    qualifier = projection.table.lower()
    visible = [table for alias, table in scans if not qualifier or alias == qualifier]
    if not isinstance(projection.this, exp.Identifier):
        return None
    written = projection.this.this
    matches = sum(1 for table in visible for c in table.columns if c.name.lower() == written.lower())
    return [written] if matches == 1 else None
