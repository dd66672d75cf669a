"""The demo's queries over the SQLite world: one per pushdown level, plus OR, top-N and a join."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DemoQuery:
    label: str  # short name for the summary
    title: str
    sql: str
    point: str  # what to look for in the EXPLAIN


QUERIES = (
    DemoQuery(
        "EXACT",
        "EXACT: date range + LIKE prefix",
        """
SELECT o.status, count(*) AS orders, sum(CAST(o.amount AS DECIMAL(14, 2))) AS revenue
FROM sales.orders o
WHERE o.day >= DATE '2024-06-01' AND o.status LIKE 'ship%'
GROUP BY o.status
ORDER BY o.status""",
        "Both conjuncts run in SQLite and Spark drops them. LIKE goes as GLOB, which is case-sensitive like "
        "Spark: 'Shipped' and 'SHIPPED' stay out (SQLite's own LIKE would let them in).",
    ),
    DemoQuery(
        "INEXACT",
        "INEXACT: equality on a NOCASE column",
        """
SELECT c.id, c.name, c.email, c.region
FROM crm.customers c
WHERE c.email = 'ada.lovelace@example.com'
ORDER BY c.id""",
        "email is COLLATE NOCASE, so SQLite's = also matches 'Ada.Lovelace@example.com': the filter is "
        "pushed as a superset and Spark re-checks it (rows transferred > rows returned).",
    ),
    DemoQuery(
        "UNSUPPORTED",
        "UNSUPPORTED: upper() differs from Spark's",
        """
SELECT c.region, count(*) AS customers
FROM crm.customers c
WHERE upper(c.name) LIKE 'A%'
GROUP BY c.region
ORDER BY c.region""",
        "SQLite's upper() folds ASCII only, Spark's folds all of Unicode: the filter stays in Spark. The "
        "source still sends only the two columns needed, and only non-NULL names: Spark itself offers "
        "the implied name IS NOT NULL to the reader.",
    ),
    DemoQuery(
        "OR",
        "OR of pushable branches",
        """
SELECT o.id, o.customer_id, o.status, o.amount, o.day
FROM sales.orders o
WHERE (o.status = 'returned' AND o.amount > 2000) OR o.customer_id = 42
ORDER BY o.id""",
        "Spark offers the OR to the scan whole; Sluice's planner pushes the whole disjunction because "
        "every branch is EXACT.",
    ),
    DemoQuery(
        "top-N",
        "Top-N: ORDER BY ... LIMIT pushed",
        """
SELECT o.id, o.customer_id, o.amount, o.day
FROM sales.orders o
ORDER BY o.amount DESC, o.id
LIMIT 10""",
        "Numbers order the same in SQLite and Spark and NULL placement is spelled out, so SQLite sorts "
        "and sends 10 rows. (o.id breaks ties, so the answer is one set of rows.)",
    ),
    DemoQuery(
        "join",
        "Cross-file join + GROUP BY region",
        """
SELECT c.region, count(*) AS orders, sum(CAST(o.amount AS DECIMAL(14, 2))) AS revenue
FROM sales.orders o
JOIN crm.customers c ON c.id = o.customer_id
WHERE o.day BETWEEN DATE '2024-01-01' AND DATE '2024-03-31' AND c.score >= 50
GROUP BY c.region
ORDER BY c.region""",
        "Each file gets its own filter (BETWEEN becomes two EXACT range conjuncts); Spark joins the "
        "two reduced scans and aggregates.",
    ),
)
#: The first queries pay for Python worker start-up (the reader's planning worker and the
#: executors' readers): run them untimed.
WARM_UP = (
    "SELECT count(*) FROM crm.customers c WHERE c.id = 1 AND upper(c.name) = 'X'",
    "SELECT count(*) FROM sales.orders o WHERE o.customer_id = 1 AND upper(o.note) = 'X'",
)
