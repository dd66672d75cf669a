"""Run the demo: one federated query per pushdown level, each proven against a full read.

Every query runs with pushdown and with every table read whole; the two answers must be
the same rows or the demo stops with a :class:`PushdownError`, so the demo checks the
promise of DESIGN.md (pushdown is a pure optimisation) on every query it shows. Then it
shows EXPLAIN and how many rows each scan moved, pushed vs whole, and ends with a
summary table. Each mode runs twice (once to collect, once to measure transfer); the
faster run is the time shown, since first runs pay for JVM warm-up and code generation.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Column, Table
from rich.text import Text

from sluice.demo.world import DEFAULT_ORDERS, build_world
from sluice.errors import PushdownError
from sluice.render import rows_table

if TYPE_CHECKING:
    from pyspark.sql import Row, SparkSession

    from sluice.federation import Federation

T = TypeVar("T")
Transfer = dict[str, dict[str, int]]
SHOWN_ROWS = 10


@dataclass(frozen=True)
class DemoQuery:
    label: str  # short name for the summary
    title: str
    sql: str
    point: str  # what to look for in the EXPLAIN


QUERIES = (
    DemoQuery("EXACT", "EXACT: date range + LIKE prefix", """
SELECT o.status, count(*) AS orders, sum(CAST(o.amount AS DECIMAL(14, 2))) AS revenue
FROM sales.orders o
WHERE o.day >= DATE '2024-06-01' AND o.status LIKE 'ship%'
GROUP BY o.status
ORDER BY o.status""",
              "Both conjuncts run in SQLite and Spark drops them. LIKE goes as GLOB, which is case-sensitive like "
              "Spark: 'Shipped' and 'SHIPPED' stay out (SQLite's own LIKE would let them in)."),
    DemoQuery("INEXACT", "INEXACT: equality on a NOCASE column", """
SELECT c.id, c.name, c.email, c.region
FROM crm.customers c
WHERE c.email = 'ada.lovelace@example.com'
ORDER BY c.id""",
              "email is COLLATE NOCASE, so SQLite's = also matches 'Ada.Lovelace@example.com': the filter is "
              "pushed as a superset and Spark re-checks it (rows transferred > rows returned)."),
    DemoQuery("UNSUPPORTED", "UNSUPPORTED: upper() differs from Spark's", """
SELECT c.region, count(*) AS customers
FROM crm.customers c
WHERE upper(c.name) LIKE 'A%'
GROUP BY c.region
ORDER BY c.region""",
              "SQLite's upper() folds ASCII only, Spark's folds all of Unicode: the filter stays in Spark. The "
              "source still sends only the two columns needed, and only non-NULL names: Spark itself offers "
              "the implied name IS NOT NULL to the reader."),
    DemoQuery("OR", "OR of pushable branches", """
SELECT o.id, o.customer_id, o.status, o.amount, o.day
FROM sales.orders o
WHERE (o.status = 'returned' AND o.amount > 2000) OR o.customer_id = 42
ORDER BY o.id""",
              "Spark's Data Source API never offers an OR to a source; Sluice's planner pushes the whole "
              "disjunction because every branch is EXACT."),
    DemoQuery("top-N", "Top-N: ORDER BY ... LIMIT pushed", """
SELECT o.id, o.customer_id, o.amount, o.day
FROM sales.orders o
ORDER BY o.amount DESC, o.id
LIMIT 10""",
              "Numbers order the same in SQLite and Spark and NULL placement is spelled out, so SQLite sorts "
              "and sends 10 rows. (o.id breaks ties, so the answer is one set of rows.)"),
    DemoQuery("join", "Cross-file join + GROUP BY region", """
SELECT c.region, count(*) AS orders, sum(CAST(o.amount AS DECIMAL(14, 2))) AS revenue
FROM sales.orders o
JOIN crm.customers c ON c.id = o.customer_id
WHERE o.day BETWEEN DATE '2024-01-01' AND DATE '2024-03-31' AND c.score >= 50
GROUP BY c.region
ORDER BY c.region""",
              "Each file gets its own filter (BETWEEN becomes two EXACT range conjuncts); Spark joins the "
              "two reduced scans and aggregates."),
)
#: The first queries pay for Python worker start-up, including the planner-side worker that
#: takes Spark's own filters (a residual filter makes Spark offer one): run them untimed.
WARM_UP = ("SELECT count(*) FROM crm.customers c WHERE c.id = 1 AND upper(c.name) = 'X'",
           "SELECT count(*) FROM sales.orders o WHERE o.customer_id = 1 AND upper(o.note) = 'X'")


@dataclass(frozen=True)
class Outcome:
    query: DemoQuery
    rows: int  # rows in the answer
    pushed: Transfer
    whole: Transfer
    pushed_s: float
    whole_s: float


def run_demo(data_dir: str | os.PathLike[str] = "demo-data", orders: int = DEFAULT_ORDERS, rebuild: bool = False,
             spark: SparkSession | None = None, console: Console | None = None) -> list[Outcome]:
    """Build (or reuse) the demo files, run every demo query, print everything; returns the outcomes."""
    console = console or Console()
    started = time.perf_counter()
    console.rule("[bold]Sluice demo: the embedded world")
    world = build_world(data_dir, orders=orders, rebuild=rebuild, console=console)
    from sluice.federation import Federation

    with console.status("Starting Spark (about 10 s) and attaching crm.db and sales.db..."):
        fed = Federation(spark=spark)
        fed.attach("crm", "sqlite:///" + str(world.crm))  # absolute path: sqlite:////...
        fed.attach("sales", "sqlite:///" + str(world.sales))
    for name, url in fed.sources.items():
        console.print(f"attached [bold]{name}[/] = {escape(url)}", highlight=False)
    with console.status("Warming up Spark's Python workers (so the first timing is fair)..."):
        for query in WARM_UP:
            fed.sql(query).collect()
    outcomes = [_show(fed, number, query, console) for number, query in enumerate(QUERIES, 1)]
    console.rule("[bold]Summary")
    console.print(_summary(outcomes))
    console.print(f"Every answer matched the whole-table answer. Demo time: {time.perf_counter() - started:.1f} s")
    return outcomes


def _show(fed: Federation, number: int, query: DemoQuery, console: Console) -> Outcome:
    console.rule(f"[bold]({number}) {query.title}")
    console.print(Syntax(query.sql.strip(), "sql", word_wrap=True))
    with console.status("running with pushdown..."):
        (columns, rows), pushed_s = _timed(lambda: _collect(fed, query.sql, pushdown=True))
    with console.status("running without pushdown (every table read whole)..."):
        (_, reference), whole_s = _timed(lambda: _collect(fed, query.sql, pushdown=False))
    _check_same(query, rows, reference)
    caption = f"{len(rows):,} row(s)" + (f", first {SHOWN_ROWS} shown" if len(rows) > SHOWN_ROWS else "")
    console.print(rows_table(columns, rows[:SHOWN_ROWS], caption=caption))
    console.print(Text(query.point, style="italic"))
    console.print(Panel(Text(fed.explain(query.sql)), title="EXPLAIN", title_align="left"))
    with console.status("measuring rows transferred, with and without pushdown..."):
        pushed, pushed_again_s = _timed(lambda: fed.transferred(query.sql))
        whole, whole_again_s = _timed(lambda: fed.transferred(query.sql, pushdown=False))
    pushed_s, whole_s = min(pushed_s, pushed_again_s), min(whole_s, whole_again_s)
    console.print(_transfer_table(pushed, whole, pushed_s, whole_s))
    return Outcome(query, len(rows), pushed, whole, pushed_s, whole_s)


def _collect(fed: Federation, sql: str, pushdown: bool) -> tuple[list[str], list[Row]]:
    frame = fed.sql(sql, pushdown=pushdown)
    return frame.columns, frame.collect()


def _timed(action: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    result = action()
    return result, time.perf_counter() - started


def _sort_key(row: Row) -> tuple[tuple[bool, Any], ...]:
    """Rows sort with NULLs first in every column (None does not compare with values)."""
    return tuple((value is not None, value) for value in row)


def _check_same(query: DemoQuery, rows: list[Row], reference: list[Row]) -> None:
    """Raise when pushdown changed the answer: the one thing Sluice must never do."""
    if sorted(rows, key=_sort_key) == sorted(reference, key=_sort_key):
        return
    extra = list((Counter(map(tuple, rows)) - Counter(map(tuple, reference))).elements())[:3]
    lost = list((Counter(map(tuple, reference)) - Counter(map(tuple, rows))).elements())[:3]
    raise PushdownError(f"demo query {query.label!r}: pushdown returned {len(rows)} rows, the whole-table "
                        f"read {len(reference)}; only with pushdown: {extra}; lost by pushdown: {lost}")


def _rows(transfer: Transfer) -> int:
    return sum(scan["rows"] for scan in transfer.values())


def _ratio(pushed: int, whole: int) -> str:
    if not whole:
        return "-"
    percent = pushed / whole * 100
    return f"{percent:.3g}%" if percent >= 0.01 else f"{percent:.2g}%"


def _transfer_table(pushed: Transfer, whole: Transfer, pushed_s: float, whole_s: float) -> Table:
    table = Table("scan", "rows pushed", "rows whole", "bytes pushed", "bytes whole", "ratio (rows)",
                  title="Transferred from the sources", title_justify="left",
                  caption=f"query time (best of 2 runs): {pushed_s:.2f} s with pushdown, "
                          f"{whole_s:.2f} s reading whole tables",
                  caption_justify="left")
    for alias in pushed:
        moved, full = pushed[alias], whole.get(alias, {"rows": 0, "bytes": 0})
        table.add_row(alias, f"{moved['rows']:,}", f"{full['rows']:,}", f"{moved['bytes']:,}", f"{full['bytes']:,}",
                      _ratio(moved["rows"], full["rows"]))
    return table


def _summary(outcomes: list[Outcome]) -> Table:
    numbers = [Column(name, justify="right", no_wrap=True)
               for name in ("answer\nrows", "rows\npushed", "rows\nwhole", "ratio", "time\npushed", "time\nwhole")]
    table = Table(Column("query", no_wrap=True), *numbers,
                  caption="rows transferred from the sources, summed over scans; ratio = pushed / whole; "
                          "times: best of 2 runs", caption_justify="left")
    for outcome in outcomes:
        pushed_rows, whole_rows = _rows(outcome.pushed), _rows(outcome.whole)
        table.add_row(outcome.query.label, f"{outcome.rows:,}", f"{pushed_rows:,}", f"{whole_rows:,}",
                      _ratio(pushed_rows, whole_rows), f"{outcome.pushed_s:.1f} s", f"{outcome.whole_s:.1f} s")
    return table
