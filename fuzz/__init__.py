"""The differential fuzzer: random edge-value tables x random predicates x every source.

Pushdown is a pure optimisation (docs/architecture.md), so for any table, predicate and
source, ``fed.sql(q)`` and ``fed.sql(q, pushdown=False)`` must return the same multiset
of rows. The hand-written corpus (tests/corpus.py) checks the shapes we thought of; this
package generates the ones we did not, shrinks every disagreement to a small
reproduction and keeps it as a regression case (``fuzz/regressions.json``).

Modules, one job each: ``values`` (edge value pools), ``tables`` (random tables and their
JSON form), ``literals`` (Spark SQL spelling of typed constants), ``predicates`` (random
predicate trees), ``loaders`` (one module per source: DDL and rows as that source can
store them), ``runner`` (batched on/off comparison), ``shrink``, ``report``,
``regressions`` and the command line in ``__main__``. See docs/correctness.md.
"""
