"""The pushdown contract, checked predicate by predicate against the real sources.

For every predicate of the corpus, the source runs the scan's remote query itself
(straight through its driver) and Spark evaluates the predicate over the whole table
(the reference read). EXACT scans must return exactly Spark's rows, and for EXACT
predicates ``NOT (remote)`` must return exactly Spark's ``NOT (p)`` rows (three-valued
logic is part of EXACT); every scan must return a superset. One Spark job evaluates
a whole batch of predicates as columns, so the full corpus runs in seconds.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlglot import exp

from sluice.pushdown.levels import Level
from sluice.pushdown.pushed import Pushed
from sluice.pushdown.terms import paren
from tests import corpus
from tests.plans import planned, stated
from tests.sources import EDGE_TABLES

pytestmark = pytest.mark.integration

BATCH = 150


def _spark_truth(fed, table: str, predicates: list[str]) -> list[dict[int, object]]:
    """For each predicate: id -> TRUE/FALSE/NULL as Spark evaluates it on the whole table."""
    columns = ", ".join(f"({p}) AS c{i}" for i, p in enumerate(predicates))
    try:
        rows = fed.sql(f"SELECT id, {columns} FROM {table}", pushdown=False).collect()
    except Exception:  # name the predicate Spark itself rejects
        for predicate in predicates:
            try:
                fed.sql(f"SELECT id, ({predicate}) AS c FROM {table}", pushdown=False).collect()
            except Exception as error:  # noqa: BLE001
                raise AssertionError(
                    f"corpus predicate fails in Spark itself: {predicate}: {str(error)[:200]}"
                ) from None
        raise
    return [{row["id"]: row[f"c{i}"] for row in rows} for i in range(len(predicates))]


def _remote_ids(fed, source: str, spec) -> set[int]:
    """Run the scan's read tasks through the source's own reader, outside Spark."""
    reader = fed._sources[source]
    return {i for task in reader.tasks(spec) for batch in reader.read(task) for i in batch.column(0).to_pylist()}


@pytest.mark.parametrize("source", sorted(EDGE_TABLES))
def test_every_scan_keeps_the_contract(fed, source: str) -> None:
    """The main tier's half of the corpus: every (column, operator) and (column, literal) pair,
    every LIKE and function shape, half the generated trees (tests/corpus.py)."""
    check_contract(fed, source, corpus.corpus(half=True), min_exact=150)


@pytest.mark.slow  # the whole corpus: the half above keeps every pair of the same classes in make test
@pytest.mark.parametrize("source", sorted(EDGE_TABLES))
def test_every_scan_of_the_whole_corpus_keeps_the_contract(fed, source: str) -> None:
    check_contract(fed, source, corpus.corpus(), min_exact=300)


def check_contract(fed, source: str, predicates: list[str], min_exact: int) -> None:
    """Each predicate's scan against Spark's truth: no row lost, EXACT exactly Spark's rows, and
    an EXACT predicate's negation exactly Spark's FALSE rows; at least ``min_exact`` EXACT verdicts."""
    table = EDGE_TABLES[source]
    failures: list[str] = []
    checked = {level: 0 for level in Level}
    for start in range(0, len(predicates), BATCH):
        batch = predicates[start : start + BATCH]
        truths = _spark_truth(fed, table, batch)
        for predicate, truth in zip(batch, truths):
            plan = planned(fed, f"SELECT id FROM {table} WHERE {predicate}")
            if not plan.scans:  # Spark's optimiser folded the predicate to FALSE or NULL: nothing to read
                assert not any(v is True for v in truth.values()), predicate
                continue
            scan = plan.scans[0]
            source_obj = fed._sources[source]
            try:
                remote = _remote_ids(fed, source, scan.spec)
            except Exception as error:  # noqa: BLE001
                failures.append(f"REMOTE ERROR {predicate}: {str(error)[:200]} [{source_obj.request_text(scan.spec)}]")
                continue
            spark_true = {i for i, v in truth.items() if v is True}
            spark_false = {i for i, v in truth.items() if v is False}
            # exact: every conjunct was offered to the scan and pushed EXACT (no Filter left in Spark's plan)
            exact = all(v.level is Level.EXACT for v in scan.verdicts) and "Filter" not in plan.spark_plan
            explain = "; ".join(f"{v.level.value} {v.remote_sql} ({v.reason})" for v in scan.verdicts)
            for verdict in scan.verdicts:
                checked[verdict.level] += 1
            if not spark_true <= remote:
                failures.append(f"DATA LOSS {predicate}: source dropped {sorted(spark_true - remote)} [{explain}]")
            elif exact and remote != spark_true:
                failures.append(f"NOT EXACT {predicate}: source kept extra {sorted(remote - spark_true)} [{explain}]")
            own = stated(scan.verdicts)
            # a NULL literal in a filter is replaced by FALSE by Spark's optimiser (equal for filtering,
            # not under NOT): the offered conjunct is no longer the text's, so its negation is not compared
            if (
                exact
                and len(own) == 1
                and own[0].pushed is not None
                and own[0].pushed.tree is not None
                and "NULL" not in predicate.upper().replace("IS NULL", "").replace("IS NOT NULL", "")
            ):
                negated = replace(scan.spec, where=(Pushed(tree=exp.Not(this=paren(own[0].pushed.tree))),))
                if _remote_ids(fed, source, negated) != spark_false:
                    failures.append(f"3VL {predicate}: NOT differs [{explain}]")
    assert not failures, f"{len(failures)} contract violation(s) on {source}:\n" + "\n".join(failures[:30])
    assert checked[Level.EXACT] > min_exact, checked
