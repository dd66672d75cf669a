"""Every kind of source meets every harness: one registry, checked.

``sluice.sources.SCHEMES`` says which kinds of source Sluice has; ``tests.sources.ALL`` gives
each kind its test name, edge table and URL scheme, and every harness keys its own piece by
those: the edge-table loaders (``tests.edge_data.LOADERS``, by ``kind``), the fuzz loaders
(``fuzz.loaders.LOADERS``, by ``name``), and, for SQL sources, the raw-driver benchmarks
(``bench.drivers.BY_ENGINE``, by URL scheme), the golden SQL files, the pushdown matrix
(``tools.matrix.PROFILES``, by dialect) and the write targets (``sluice.write.TARGETS``). A new
kind of source that misses one fails here with the list of what to add, which is the checklist
of docs/architecture.md, "Adding a source"; an entry left behind by a removed kind fails too.
"""

from __future__ import annotations

from bench.drivers import BY_ENGINE
from fuzz.loaders import LOADERS as FUZZ_LOADERS
from sluice.sources import SCHEMES
from sluice.sources.base import Source, SqlSource
from sluice.sources.flight import FlightSource
from sluice.write import TARGETS
from tests.edge_data import LOADERS as EDGE_LOADERS
from tests.sources import ALL, TestSource
from tests.unit.test_golden_sql import DIALECTS as GOLDEN_DIALECTS
from tools.matrix import PROFILES

#: kinds of source kept out of the shared suites, each with where its claims are tested instead
OWN_SUITES: dict[type[Source], str] = {
    FlightSource: (
        "a Flight service has no SQL tables to load edge values into: tests/integration/test_flight_*.py "
        "run a real Flight server (sluice.serve) over the shared sources, and test_faults_flight.py its failures"
    ),
}


def _class(source: TestSource) -> type[Source]:
    return SCHEMES[source.scheme]


def _missing(source: TestSource) -> list[str]:
    """What ``source``'s kind lacks, one line a harness."""
    cls = _class(source)
    missing = []
    if source.kind not in EDGE_LOADERS:
        missing.append(f"an edge-table loader tests.edge_data.LOADERS[{source.kind!r}]")
    if source.name not in FUZZ_LOADERS:
        missing.append(f"a fuzz loader fuzz.loaders.LOADERS[{source.name!r}]")
    if issubclass(cls, SqlSource):
        dialect = type(cls.dialect)
        if cls not in {SCHEMES[engine] for engine in BY_ENGINE}:
            missing.append(f"a raw-driver benchmark module in bench.drivers.BY_ENGINE for {cls.__name__}")
        if dialect not in {type(d) for d, _ in GOLDEN_DIALECTS.values()}:
            missing.append(f"golden SQL: tests/unit/test_golden_sql.py DIALECTS for {dialect.__name__}")
        if dialect not in {type(profile.dialect) for profile in PROFILES}:
            missing.append(f"a pushdown-matrix column: tools.matrix.PROFILES for {dialect.__name__}")
        if cls not in TARGETS:
            missing.append(f"a write target: sluice.write.TARGETS[{cls.__name__}]")
    return missing


def test_every_scheme_names_a_source_kind() -> None:
    unknown = [s.scheme for s in ALL if s.scheme not in SCHEMES]
    assert not unknown, f"tests.sources.ALL names URL schemes sluice.sources.SCHEMES lacks: {unknown}"


def test_every_kind_of_source_is_in_the_shared_suites_or_says_where_it_is_tested() -> None:
    covered = {_class(s) for s in ALL} | set(OWN_SUITES)
    absent = sorted(cls.__name__ for cls in set(SCHEMES.values()) - covered)
    assert not absent, (
        f"kinds of source in no suite: {absent}: add each to tests.sources.ALL (or OWN_SUITES, saying why)"
    )
    both = sorted(cls.__name__ for cls in {_class(s) for s in ALL} & set(OWN_SUITES))
    assert not both, f"{both} are in the shared suites: drop them from OWN_SUITES"


def test_every_source_in_the_shared_suites_has_every_harness_piece() -> None:
    missing = {source.name: found for source in ALL if (found := _missing(source))}
    assert not missing, "pieces to add (docs/architecture.md, 'Adding a source'): " + "; ".join(
        f"{name}: {', '.join(found)}" for name, found in missing.items()
    )


def test_no_harness_keeps_an_entry_for_a_source_that_is_gone() -> None:
    names, kinds = {s.name for s in ALL}, {s.kind for s in ALL}
    sql = {_class(s) for s in ALL if issubclass(_class(s), SqlSource)}
    stale = {
        "fuzz.loaders.LOADERS": sorted(set(FUZZ_LOADERS) - names),
        "tests.edge_data.LOADERS": sorted(set(EDGE_LOADERS) - kinds),
        "bench.drivers.BY_ENGINE": sorted(e for e in BY_ENGINE if SCHEMES.get(e) not in sql),
        "sluice.write.TARGETS": sorted(cls.__name__ for cls in set(TARGETS) - sql),
    }
    assert not any(stale.values()), f"entries for no source of tests.sources.ALL: {stale}"
