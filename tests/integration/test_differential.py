"""Pushdown on equals pushdown off, for every predicate of the corpus, on real sources.

Predicates run in batches: one UNION ALL query per batch, each branch its own scan with
its own pushdown, tagged with the predicate's index. A batch that fails is rerun one
predicate at a time so the failing predicate is named. A mismatch prints the predicate,
its classification and the remote SQL, and the rows only one side returned.
"""

from __future__ import annotations

import collections

import pytest

from tests import corpus
from tests.plans import planned
from tests.sources import BY_NAME, EDGE_TABLES

pytestmark = pytest.mark.integration

BATCH = 60


def _query(table: str, batch: list[tuple[int, str]]) -> str:
    return " UNION ALL ".join(f"SELECT {index} AS q, id FROM {table} WHERE {predicate}" for index, predicate in batch)


def _rows(fed, query: str, pushdown: bool) -> collections.Counter:
    return collections.Counter(tuple(r) for r in fed.sql(query, pushdown=pushdown).collect())


def _explain_predicate(fed, table: str, predicate: str) -> str:
    plan = fed.plan(f"SELECT id FROM {table} WHERE {predicate}")
    return "\n".join(
        f"  {v.level.value}: {v.sql} -> {v.remote_sql}  ({v.reason})" for s in plan.scans for v in s.verdicts
    )


def _check_one(fed, table: str, index: int, predicate: str, failures: list[str]) -> None:
    query = _query(table, [(index, predicate)])
    try:
        expected = _rows(fed, query, pushdown=False)
    except Exception as error:  # noqa: BLE001 - Spark itself rejects the predicate
        failures.append(f"[{index}] {predicate}: the reference path fails ({type(error).__name__}); fix the corpus")
        return
    try:
        actual = _rows(fed, query, pushdown=True)
    except Exception as error:  # noqa: BLE001
        failures.append(
            f"[{index}] {predicate}: pushdown path fails: {str(error)[:300]}\n{_explain_predicate(fed, table, predicate)}"
        )
        return
    if actual != expected:
        failures.append(
            f"[{index}] {predicate}\n  only with pushdown: {sorted((actual - expected).elements())}\n"
            f"  only without: {sorted((expected - actual).elements())}\n{_explain_predicate(fed, table, predicate)}"
        )


@pytest.mark.parametrize("source", sorted(EDGE_TABLES))
def test_pushdown_equals_reference(fed, source: str) -> None:
    predicates = list(enumerate(corpus.differential()))
    assert len(predicates) >= 200
    failures = differential_failures(fed, EDGE_TABLES[source], predicates)
    assert not failures, f"{len(failures)} predicate(s) differ on {source}:\n" + "\n".join(failures[:25])


def differential_failures(fed, table: str, predicates: list[tuple[int, str]]) -> list[str]:
    """Predicates whose rows differ with pushdown on and off, a batch per query; a batch
    that differs (or fails) is rerun predicate by predicate to name the culprits."""
    failures: list[str] = []
    for start in range(0, len(predicates), BATCH):
        batch = predicates[start : start + BATCH]
        query = _query(table, batch)
        try:
            same = _rows(fed, query, pushdown=True) == _rows(fed, query, pushdown=False)
        except Exception:  # noqa: BLE001 - find the predicate that fails
            same = False
        if not same:
            for index, predicate in batch:
                _check_one(fed, table, index, predicate, failures)
    return failures


@pytest.mark.parametrize("source", sorted(EDGE_TABLES))
def test_corpus_is_mostly_pushed(fed, source: str) -> None:
    """The differential test proves nothing if nothing is pushed: count the levels (over the
    main tier's half of the leaves, whose plans test_contract.py has made already)."""
    table = EDGE_TABLES[source]
    levels: collections.Counter = collections.Counter()
    for predicate in corpus.leaves(half=True):
        plan = planned(fed, f"SELECT id FROM {table} WHERE {predicate}")
        for scan in plan.scans:
            levels.update(v.level.value for v in scan.verdicts)
    pushed = levels["EXACT"] + levels["INEXACT"]
    assert (
        levels["EXACT"] > 0.5 * sum(levels.values()) if source in ("pg", "my") else pushed > 0.4 * sum(levels.values())
    ), levels
    assert levels["UNSUPPORTED"] > 0, levels
    assert (levels["INEXACT"] > 0) is BY_NAME[source].has_inexact, levels


@pytest.mark.parametrize("source", sorted(EDGE_TABLES))
def test_whole_table_reads_agree(fed, source: str) -> None:
    query = f"SELECT * FROM {EDGE_TABLES[source]}"
    pushed, whole = fed.sql(query).collect(), fed.sql(query, pushdown=False).collect()
    assert len(pushed) == 80
    assert sorted(map(repr, pushed)) == sorted(map(repr, whole))
