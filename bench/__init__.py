"""Sluice benchmarks: which Arrow-native driver path reads fastest, and what Spark adds.

Run ``python -m bench`` (full: 1M and 4M rows) or ``python -m bench --quick`` (200k rows,
about two minutes). Results go to ``bench/results/<date>.json`` and ``docs/benchmarks.md``.
Benchmarks report; they never fail on numbers.
"""
