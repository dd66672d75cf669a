"""The rows of an ``UPDATE`` or ``MERGE INTO`` as Spark computes them, and how a target applies them.

Spark rewrites both statements on a SQL table with a primary key into a row delta
(``WriteDelta``, java RowLevelWrites): a query whose rows are ``op, c0..cN-1, k0..kM-1``, with
``op`` Spark's operation code, ``c`` the new row in the table's column order (NULL for a
delete) and ``k`` the key of the row changed (its values before the statement; NULL for an
insert). Spark evaluated every condition and SET expression, and a MERGE whose target row
two source rows match has failed in Spark before any row reaches a target. The target then
applies the delta in one transaction: deletes, then updates (each by the key, each row
required to change exactly one table row), then inserts, and commits, or rolls back so the
table is as it was.
"""

from __future__ import annotations

#: Spark's operation codes (org.apache.spark.sql.catalyst.util.RowDeltaUtils)
DELETE = 1
UPDATE = 2
INSERT = 3
REINSERT = 4
#: the codes of rows a target inserts (a reinsert is an update Spark split into delete and insert)
INSERTS = (INSERT, REINSERT)


def statement(schema: str, name: str) -> str:
    """How a delta's errors name it."""
    return f"UPDATE/MERGE of {schema}.{name}"


def no_key(schema: str, name: str) -> str:
    """Why a table without a primary key takes no UPDATE or MERGE."""
    return (
        f"table {schema}.{name} has no primary key of NOT NULL columns: Sluice changes the rows UPDATE and "
        "MERGE select by their key, and this table has no row identity"
    )


class Miscounted(Exception):
    """A delete or update by key changed another number of rows than the delta has (the row
    is gone, or the key is not unique): the transaction is rolled back."""
