"""Run the demo: federated queries over SQLite, an Iceberg lake and an Arrow Flight service,
each proven against a full read.

Every query runs with pushdown and with every table read whole; the two answers must be
the same rows or the demo stops with a :class:`PushdownError`, so the demo checks the
promise of DESIGN.md (pushdown is a pure optimisation) on every query it shows. Then it
shows EXPLAIN and how many rows each scan moved, pushed vs whole, and ends with a
summary table. Each mode runs twice (once to collect, once to measure transfer); the
faster run is the time shown, since first runs pay for JVM warm-up and code generation.
"""

from __future__ import annotations

import math
import os
import secrets
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Column, Table
from rich.text import Text

from sluice.errors import PushdownError
from sluice.render import rows_table
from sluice.serve.server import serve_in_background
from tools.demo.lake import DEFAULT_READINGS, FLIGHT_QUERY, LAKE_QUERIES, build_lake, build_space
from tools.demo.queries import QUERIES, WARM_UP, DemoQuery
from tools.demo.world import DEFAULT_ORDERS, build_world

if TYPE_CHECKING:
    from pyspark.sql import Row, SparkSession

    from sluice.federation import Federation

T = TypeVar("T")
Transfer = dict[str, dict[str, int]]
SHOWN_ROWS = 10
#: what the transfer tables' bytes are: each scan's pushed and whole reads count the same thing
BYTES_COUNTED = (
    "bytes: the Arrow bytes a source's reader decoded; a lake scan's: the compressed Parquet bytes "
    "of the row groups it read (Spark's Parquet reader and Sluice's count alike)"
)


@dataclass(frozen=True)
class Outcome:
    query: DemoQuery
    rows: int  # rows in the answer
    pushed: Transfer
    whole: Transfer
    pushed_s: float
    whole_s: float


def run_demo(
    data_dir: str | os.PathLike[str] = "demo-data",
    orders: int = DEFAULT_ORDERS,
    rebuild: bool = False,
    spark: SparkSession | None = None,
    console: Console | None = None,
    readings: int = DEFAULT_READINGS,
) -> list[Outcome]:
    """Build (or reuse) the demo files and the lake, run every demo query, print everything.

    ``readings`` is the number of telemetry rows in the lake (0 leaves the lake out).
    Returns the outcomes.
    """
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
    if readings:
        outcomes += _lake_part(fed, Path(world.crm).parent, readings, rebuild, console, first=len(outcomes) + 1)
    console.rule("[bold]Summary")
    console.print(_summary(outcomes))
    console.print(f"Every answer matched the whole-table answer. Demo time: {time.perf_counter() - started:.1f} s")
    return outcomes


def _lake_part(
    fed: Federation, directory: Path, readings: int, rebuild: bool, console: Console, first: int
) -> list[Outcome]:
    """Ingest (or reuse) the lake, attach it with the missions, run the lake queries."""
    console.rule("[bold]The lake: Iceberg telemetry, written by Spark, read through the pruning pyramid")
    build_space(directory / "space.db")
    lake_url = build_lake(fed.spark, directory, readings, rebuild, console)
    space_url = "sqlite:///" + str(directory / "space.db")
    fed.attach("space", space_url)
    fed.attach("lake", lake_url)
    outcomes = [_show(fed, number, query, console) for number, query in enumerate(LAKE_QUERIES, first)]
    token = secrets.token_urlsafe(24)
    location, stop = serve_in_background({"space": space_url}, token=token)
    try:
        console.print(f"Flight server listening on {location} (bearer token required), publishing space.db")
        fed.attach("fl", location, password=token)
        outcomes.append(_show(fed, first + len(outcomes), FLIGHT_QUERY, console))
    finally:
        fed.detach("fl")
        stop()
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


def _comparable(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """The row with NaN spelled as a marker: NaN != NaN, but Spark's NaN equals NaN."""
    return tuple("<NaN>" if isinstance(value, float) and math.isnan(value) else value for value in row)


def _check_same(query: DemoQuery, rows: Sequence[tuple[Any, ...]], reference: Sequence[tuple[Any, ...]]) -> None:
    """Raise when pushdown changed the answer: the one thing Sluice must never do."""
    pushed, whole = Counter(map(_comparable, rows)), Counter(map(_comparable, reference))
    if pushed == whole:
        return
    extra = list((pushed - whole).elements())[:3]
    lost = list((whole - pushed).elements())[:3]
    raise PushdownError(
        f"demo query {query.label!r}: pushdown returned {len(rows)} rows, the whole-table "
        f"read {len(reference)}; only with pushdown: {extra}; lost by pushdown: {lost}"
    )


def _rows(transfer: Transfer) -> int:
    return sum(scan["rows"] for scan in transfer.values())


def _ratio(pushed: int, whole: int) -> str:
    if not whole:
        return "-"
    percent = pushed / whole * 100
    return f"{percent:.3g}%" if percent >= 0.01 else f"{percent:.2g}%"


def _transfer_table(pushed: Transfer, whole: Transfer, pushed_s: float, whole_s: float) -> Table:
    table = Table(
        "scan",
        "rows pushed",
        "rows whole",
        "bytes pushed",
        "bytes whole",
        "ratio (rows)",
        "ratio (bytes)",
        title="Transferred from the sources",
        title_justify="left",
        caption=f"{BYTES_COUNTED}\nquery time (best of 2 runs): {pushed_s:.2f} s with pushdown, "
        f"{whole_s:.2f} s reading whole tables",
        caption_justify="left",
    )
    for alias in pushed:
        moved, full = pushed[alias], whole.get(alias, {"rows": 0, "bytes": 0})
        table.add_row(
            alias,
            f"{moved['rows']:,}",
            f"{full['rows']:,}",
            f"{moved['bytes']:,}",
            f"{full['bytes']:,}",
            _ratio(moved["rows"], full["rows"]),
            _ratio(moved["bytes"], full["bytes"]),
        )
    return table


def _summary(outcomes: list[Outcome]) -> Table:
    numbers = [
        Column(name, justify="right", no_wrap=True)
        for name in ("answer\nrows", "rows\npushed", "rows\nwhole", "ratio", "time\npushed", "time\nwhole")
    ]
    table = Table(
        Column("query", no_wrap=True),
        *numbers,
        caption="rows transferred from the sources, summed over scans; ratio = pushed / whole; times: best of 2 runs",
        caption_justify="left",
    )
    for outcome in outcomes:
        pushed_rows, whole_rows = _rows(outcome.pushed), _rows(outcome.whole)
        table.add_row(
            outcome.query.label,
            f"{outcome.rows:,}",
            f"{pushed_rows:,}",
            f"{whole_rows:,}",
            _ratio(pushed_rows, whole_rows),
            f"{outcome.pushed_s:.1f} s",
            f"{outcome.whole_s:.1f} s",
        )
    return table
