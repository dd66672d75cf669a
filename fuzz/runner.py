"""Run cases with pushdown on and off and compare the answers as multisets.

A case is (table, predicate, source). Cases run in batches of ~60, three queries each:

* plain Spark: every predicate as a column over the table read whole through the
  DataFrame API and cached (``SELECT id, (p0) AS c0, (p1) AS c1, ... FROM view``). It
  runs in the JVM only, so a predicate Spark itself fails on (ANSI overflow, a bad LIKE
  escape) is found by bisection in milliseconds; such cases leave the batch and are
  checked one by one. (A failing query that involves Python readers costs seconds:
  Spark restarts their workers.)
* pushdown off: the same columns over one whole-table scan, ``fed.sql(q, pushdown=False)``;
  with nothing pushed, a row is in ``WHERE p``'s answer exactly when ``p`` is TRUE on it;
* pushdown on: ``SELECT <index> AS q, id FROM t WHERE <p>`` for every case, joined with
  UNION ALL, so each branch is its own scan with its own pushdown (the technique of
  tests/integration/test_differential.py), through ``fed.sql(q)``.

Every case where the three do not agree is confirmed the literal way, ``fed.sql(q)``
against ``fed.sql(q, pushdown=False)`` for that one ``WHERE``, so a reported mismatch
never rests on the batching. Verdicts: the same rows, or both sides failing when Spark
itself fails too, is agreement; different rows, or only one side failing, is a
mismatch, except when that failure is an overflow or division by zero: whether one is
raised depends on the order AND/OR operands run in, which Spark leaves undefined. Two more kinds compare with plain Spark, since both ``fed.sql`` paths go
through Sluice's planner: both failing where Spark succeeds, and both agreeing on rows
Spark does not return.
"""

from __future__ import annotations

import collections
import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fuzz import shapes
from fuzz.loaders.base import Loader
from fuzz.predicates import Leaf, Pred, render
from fuzz.tables import Table

#: cases per Spark query: enough to amortise a query's fixed cost, few enough that the
#: pushed query (one scan per case) plans quickly and a failing batch bisects cheaply
BATCH = 60
#: the kind of a mismatch where the source cannot read the table at all
UNREADABLE = "the source cannot read the table"
#: a failing batch this small is rerun case by case instead of bisected
SINGLES = 8


@dataclass(frozen=True)
class Outcome:
    """One side's answer to one case: row ids with multiplicity, or the error."""

    ids: collections.Counter | None = None
    error: str | None = None


@dataclass(frozen=True)
class Mismatch:
    """A case where the paths disagree, with both answers: what a report shows."""

    source: str
    table: Table
    predicate: Pred
    kind: str  # see _verdict
    pushed: Outcome
    reference: Outcome
    origin: str  # where it was found: "seed S round R case I" or a regression's name


@dataclass(frozen=True)
class ShapeMismatch:
    """An aggregate or join shape whose answers differ with pushdown on and off."""

    source: str
    table: Table
    shape: shapes.Shape
    pushed: tuple[Any, str | None]  # (column types, rows) and the error
    reference: tuple[Any, str | None]
    origin: str

    def text(self, reference: str) -> str:
        return (
            f"{self.shape.kind} mismatch on {self.source} ({self.origin}):\n  {self.shape.sql(reference)}\n"
            f"  pushdown on:  {self.pushed}\n  pushdown off: {self.reference}"
        )


@dataclass
class Tally:
    """Per source: cases run, how they ended, and how much was pushed."""

    cases: int = 0
    both_failed: int = 0
    mismatches: int = 0
    scans: int = 0
    scans_pushed: int = 0  # scans with at least one conjunct pushed (EXACT or INEXACT)
    levels: collections.Counter = field(default_factory=collections.Counter)
    shapes: int = 0  # aggregate and join shapes among the cases (fuzz/shapes.py)
    shapes_pushed: int = 0  # those whose aggregate or join the source answered

    def add(self, other: Tally) -> None:
        self.shapes += other.shapes
        self.shapes_pushed += other.shapes_pushed
        self.cases += other.cases
        self.both_failed += other.both_failed
        self.mismatches += other.mismatches
        self.scans += other.scans
        self.scans_pushed += other.scans_pushed
        self.levels.update(other.levels)


@contextmanager
def quiet(spark: Any) -> Iterator[None]:
    """Silence the error logs of the errors the fuzzer provokes on purpose.

    PySpark logs every failing SQL query with its JVM stack trace (loggers below), and
    Spark's own log4j does too; the runner catches and classifies every one of them.
    """
    loggers = [logging.getLogger(name) for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger")]
    before = [logger.disabled for logger in loggers]
    for logger in loggers:
        logger.disabled = True
    spark.sparkContext.setLogLevel("OFF")
    try:
        yield
    finally:
        spark.sparkContext.setLogLevel("ERROR")  # what sluice.spark.session.build_session sets
        for logger, disabled in zip(loggers, before):
            logger.disabled = disabled


def _message(error: BaseException) -> str:
    """The line that says what went wrong: for an error raised in a Python worker (a read,
    or a data source's planning), the worker's own exception line (the first line only says
    that the worker failed); for a read the driver made (small reads), Sluice's own line
    (the first only names the py4j call)."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    raised = [line for line in lines if re.match(r"^[\w.]+(Error|Exception): ", line)]
    first = lines[0] if lines else ""
    in_worker = "Python worker" in first or "PYTHON_DATA_SOURCE_ERROR" in first
    sluice = [line for line in lines if "io.sluice.spark.SluiceException" in line]
    line = raised[-1] if raised and in_worker else sluice[0] if sluice else first
    return f"{type(error).__name__}: {line[:400]}"


def union_query(reference: str, cases: list[tuple[int, str]]) -> str:
    """One scan per case, each with its own WHERE: what pushdown works on."""
    return " UNION ALL ".join(f"SELECT {index} AS q, id FROM {reference} WHERE {sql}" for index, sql in cases)


def columns_query(reference: str, cases: list[tuple[int, str]]) -> str:
    """One scan, every case's predicate a column: rows where it is TRUE are its answer."""
    return f"SELECT id, {', '.join(f'({sql}) AS c{index}' for index, sql in cases)} FROM {reference}"


class Runner:
    """Compares both paths of a Federation over tables that ``loaders`` put in place."""

    def __init__(self, fed: Any, loaders: dict[str, Loader], batch: int = BATCH) -> None:
        self.fed = fed
        self.loaders = loaders
        self.batch = batch
        self._views: dict[str, Any] = {}  # view name -> its cached DataFrame

    def attach(self) -> None:
        for name, loader in self.loaders.items():
            loader.prepare()
            self.fed.attach(name, loader.url)

    # ------------------------------------------------------------- one side
    def _outcomes(self, query_of: Any, cases: list[tuple[int, str]], run: Any) -> dict[int, Outcome]:
        """Run ``cases`` as one query; on failure bisect, then run case by case, until each
        failing case is alone.

        ``query_of`` builds either query shape (see :func:`union_query`, :func:`columns_query`).
        """
        if not cases:
            return {}
        try:
            frame = run(query_of(cases))
            rows = frame.collect()
        except Exception as error:  # noqa: BLE001 - Spark, Sluice and driver errors all count
            if len(cases) == 1:
                return {cases[0][0]: Outcome(error=_message(error))}
            # A failing query costs more than a passing one (Spark restarts the Python
            # workers), so small batches run case by case rather than halving again.
            parts = (
                [cases[: len(cases) // 2], cases[len(cases) // 2 :]]
                if len(cases) > SINGLES
                else [[case] for case in cases]
            )
            return {index: outcome for part in parts for index, outcome in self._outcomes(query_of, part, run).items()}
        grouped: dict[int, collections.Counter] = {index: collections.Counter() for index, _ in cases}
        if frame.columns[0] == "q":
            for q, row_id in rows:
                grouped[q][row_id] += 1
        else:
            for row in rows:
                for (index, _), truth in zip(cases, row[1:]):
                    if truth is True:
                        grouped[index][row[0]] += 1
        return {index: Outcome(ids=ids) for index, ids in grouped.items()}

    def _view(self, source: str, table: Table, cache: bool = True) -> str:
        """The whole table as a plain Spark view (DataFrame API: nothing pushed); cached
        when many predicates will read it, so they run in the JVM alone."""
        view = f"fuzz_plain_{source}_{table.name}"
        if view not in self._views:
            loader = self.loaders[source]
            frame = (
                self.fed.spark.read.format("sluice")
                .option("url", loader.url)
                .option("table", loader.qualified(table.name))
                .load()
            )
            if cache:
                frame = frame.cache()
                frame.count()
            frame.createOrReplaceTempView(view)
            self._views[view] = frame
        return view

    def forget(self, source: str, table: Table) -> None:
        """Drop the cached view of a table that is about to be dropped."""
        frame = self._views.pop(f"fuzz_plain_{source}_{table.name}", None)
        if frame is not None:
            self.fed.spark.catalog.dropTempView(f"fuzz_plain_{source}_{table.name}")
            frame.unpersist()

    # ------------------------------------------------------------- both sides
    def compare(self, source: str, table: Table, predicates: list[Pred], origin: str) -> tuple[Tally, list[Mismatch]]:
        """Every predicate over ``table`` (already loaded in ``source``), pushdown on vs off."""
        reference = self.loaders[source].reference(table.name)
        unreadable = self._unreadable(source, table, origin)
        if unreadable is not None:
            return Tally(cases=1, mismatches=1), [unreadable]
        view = self._view(source, table)
        tally, mismatches = Tally(), []
        cases = [(index, render(p)) for index, p in enumerate(predicates)]
        for start in range(0, len(cases), self.batch):
            batch = cases[start : start + self.batch]
            self._count_levels(reference, batch, tally)
            plain = self._outcomes(lambda b: columns_query(view, b), batch, self.fed.spark.sql)
            runnable = [case for case in batch if plain[case[0]].error is None]
            off = self._outcomes(
                lambda b: columns_query(reference, b), runnable, lambda q: self.fed.sql(q, pushdown=False)
            )
            on = self._outcomes(lambda b: union_query(reference, b), runnable, self.fed.sql)
            for case in batch:
                index = case[0]
                tally.cases += 1
                if index in on and on[index].error is None and on[index].ids == off[index].ids == plain[index].ids:
                    continue
                mismatch = self._confirm(source, table, predicates[index], f"{origin} case {index}")
                if mismatch is None:
                    tally.both_failed += index not in on or on[index].error is not None
                    continue
                tally.mismatches += 1
                mismatches.append(mismatch)
        return tally, mismatches

    def compare_tables(self, source: str, cases: list[tuple[Table, Pred, str]]) -> tuple[Tally, list[Mismatch]]:
        """Cases on tables of their own (already loaded in ``source``), e.g. regressions.

        Three UNION ALL queries for all of them (pushdown on, off, plain Spark), then the
        literal check of every case where they disagree.
        """
        loader = self.loaders[source]
        texts = [(index, render(predicate)) for index, (_, predicate, _) in enumerate(cases)]
        references = {index: loader.reference(table.name) for index, (table, _, _) in enumerate(cases)}
        tally, mismatches = Tally(), []
        try:
            views = {index: self._view(source, table, cache=False) for index, (table, _, _) in enumerate(cases)}
        except Exception:  # noqa: BLE001 - a table no reader can describe: confirm every case alone
            views = {}

        def where(tables: dict[int, str]) -> Callable[[list[tuple[int, str]]], str]:
            return lambda batch: " UNION ALL ".join(
                f"SELECT {i} AS q, id FROM {tables[i]} WHERE {sql}" for i, sql in batch
            )

        on = self._outcomes(where(references), texts, self.fed.sql)
        off = self._outcomes(where(references), texts, lambda q: self.fed.sql(q, pushdown=False))
        plain = self._outcomes(where(views), texts, self.fed.spark.sql) if views else {}
        for index, (table, predicate, origin) in enumerate(cases):
            tally.cases += 1
            if index in plain and on[index].error is None and on[index].ids == off[index].ids == plain[index].ids:
                continue
            mismatch = self._confirm(source, table, predicate, origin)
            if mismatch is None:
                tally.both_failed += on[index].error is not None
                continue
            tally.mismatches += 1
            mismatches.append(mismatch)
        return tally, mismatches

    def compare_shapes(
        self, source: str, table: Table, found: list[shapes.Shape], origin: str
    ) -> tuple[Tally, list[ShapeMismatch]]:
        """Each aggregate / join shape over ``table`` (loaded in ``source``), pushdown on vs off:
        the same column types and rows, or both failing."""
        reference = self.loaders[source].reference(table.name)
        tally, mismatches = Tally(), []
        for index, shape in enumerate(found):
            query = shape.sql(reference)
            on, off = self._shape_outcome(query, self.fed.sql), self._shape_outcome(query, self._off)
            tally.cases += 1
            tally.shapes += 1
            try:
                tally.shapes_pushed += any(s.spec.aggregate or s.spec.join for s in self.fed.plan(query).scans)
            except Exception:  # noqa: BLE001 - an unplannable query is in the outcomes already
                pass
            if on == off and on[1] is None:
                continue
            if on[1] is not None and off[1] is not None:
                tally.both_failed += 1
                continue
            if (on[1] or off[1]) and _ORDER_DEPENDENT.search(on[1] or off[1] or ""):
                continue
            tally.mismatches += 1
            mismatches.append(ShapeMismatch(source, table, shape, on, off, f"{origin} shape {index}"))
        return tally, mismatches

    def _off(self, query: str) -> Any:
        return self.fed.sql(query, pushdown=False)

    @staticmethod
    def _shape_outcome(query: str, run: Callable[[str], Any]) -> tuple[Any, str | None]:
        """(column types, rows as a multiset) or (None, the error)."""
        try:
            frame = run(query)
            return (tuple(frame.dtypes), shapes.normal(frame.collect())), None
        except Exception as error:  # noqa: BLE001 - Spark, Sluice and driver errors all count
            return None, _message(error)

    def _unreadable(self, source: str, table: Table, origin: str) -> Mismatch | None:
        """A table the source cannot even read whole: one finding, not a mismatch per case.

        (Every reference read would fail, so every predicate that happens to filter the
        bad value out remotely would count as a mismatch of its own.)
        """
        try:
            self._views[self._view(source, table)].count()  # every column: Python sources do not prune
        except Exception as error:  # noqa: BLE001 - the reader's error is the finding
            failed = Outcome(error=_message(error))
            return Mismatch(source, table, Leaf("TRUE", frozenset()), UNREADABLE, failed, failed, origin)
        return None

    def _confirm(self, source: str, table: Table, predicate: Pred, origin: str) -> Mismatch | None:
        """The one case, the literal way: ``fed.sql(q)`` vs ``fed.sql(q, pushdown=False)``."""
        unreadable = self._unreadable(source, table, origin)
        if unreadable is not None:
            return unreadable
        reference, view, case = (
            self.loaders[source].reference(table.name),
            self._view(source, table),
            (0, render(predicate)),
        )
        on = self._outcomes(lambda b: union_query(reference, b), [case], self.fed.sql)[0]
        off = self._outcomes(lambda b: union_query(reference, b), [case], lambda q: self.fed.sql(q, pushdown=False))[0]
        plain = self._outcomes(lambda b: union_query(view, b), [case], self.fed.spark.sql)[0]
        kind = _verdict(on, off, plain)
        return None if kind is None else Mismatch(source, table, predicate, kind, on, off, origin)

    def _count_levels(self, reference: str, batch: list[tuple[int, str]], tally: Tally) -> None:
        try:
            plans = [self.fed.plan(union_query(reference, batch))]
        except Exception:  # noqa: BLE001 - one case Sluice cannot plan; plan the others alone
            plans = []
            for case in batch:
                try:
                    plans.append(self.fed.plan(union_query(reference, [case])))
                except Exception:  # noqa: BLE001
                    continue
        for plan in plans:
            for scan in plan.scans:
                levels = [v.level.value for v in scan.verdicts]
                tally.scans += 1
                tally.scans_pushed += any(level != "UNSUPPORTED" for level in levels)
                tally.levels.update(levels)

    def reproduce(self, source: str, table: Table, predicate: Pred, origin: str) -> Mismatch | None:
        """Load ``table`` afresh and confirm the one case: the mismatch, if it persists."""
        loader = self.loaders[source]
        loader.load(table)
        try:
            return self._confirm(source, table, predicate, origin)
        finally:
            self.forget(source, table)
            loader.drop(table.name)


#: runtime errors whose occurrence depends on evaluation order: Spark does not define the
#: order in which AND/OR operands run, so `x * 2 > 0 AND x < 5` may raise on one path and
#: skip the overflowing row on the other. Loud, never silent: not counted as a mismatch.
_ORDER_DEPENDENT = re.compile(r"ARITHMETIC_OVERFLOW|DIVIDE_BY_ZERO|CAST_OVERFLOW|out of range|Overflow", re.I)


def _verdict(on: Outcome, off: Outcome, plain: Outcome) -> str | None:
    """The kind of mismatch, or ``None`` when pushdown on, off and plain Spark agree."""
    if on.error is None and off.error is None:
        if on.ids != off.ids:
            return "rows differ"
        return "both differ from plain Spark" if plain.error is None and plain.ids != off.ids else None
    if on.error is not None and off.error is not None:
        return "Sluice rejects what Spark runs" if plain.error is None else None
    if _ORDER_DEPENDENT.search(on.error or off.error or ""):
        return None
    return "only pushdown fails" if on.error is not None else "only the reference fails"
