# Developer entry points. Everything runs through .venv/bin/python, so no
# activated virtualenv is needed.
PY := .venv/bin/python

# Where the integration tests find their servers; override from the environment.
SLUICE_PG_URL ?= postgresql://root@127.0.0.1:5432/test
SLUICE_MYSQL_URL ?= mysql://root@127.0.0.1:3306/test
export SLUICE_PG_URL SLUICE_MYSQL_URL

PYTEST_ARGS ?=
DEMO_ARGS ?=
BENCH_ARGS ?=
N ?= 2000
FUZZ_ARGS ?=

.PHONY: setup services lint test test-all unit demo bench bench-quick bench-lake jdbc-drivers docs fuzz clean

setup:
	bash scripts/setup.sh

services:
	bash scripts/services.sh

# Lint, types and formatting first: seconds, and any finding fails the build (configured in pyproject.toml).
LINT_PATHS := sluice tools tests bench fuzz
lint: setup
	$(PY) -m ruff check $(LINT_PATHS)
	$(PY) -m mypy
	$(PY) -m ruff format --check $(LINT_PATHS)

# Two tiers (docs/correctness.md, "Test tiers"): `make test` (CI, README) leaves out the
# tests marked slow and stays under 35 minutes on a quiet 2-core machine; `make test-all`
# runs everything. Both print the 30 slowest tests, so a test that grows the suite is seen.
# pytest exits 5 when it collects no tests (e.g. a -k that matches nothing, or
# an early tree); report that plainly instead of failing the build.
PYTEST := $(PY) -m pytest -q -ra --durations=30
test: lint services
	@echo '$(PYTEST) -m "not slow" $(PYTEST_ARGS)'
	@$(PYTEST) -m "not slow" $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "[test] pytest collected no tests"; rc=0; fi; \
	exit $$rc

test-all: lint services
	@echo '$(PYTEST) $(PYTEST_ARGS)'
	@$(PYTEST) $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "[test] pytest collected no tests"; rc=0; fi; \
	exit $$rc

unit: setup
	@echo '$(PY) -m pytest -q -m "not integration" $(PYTEST_ARGS)'
	@$(PY) -m pytest -q -m "not integration" $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "[test] pytest collected no tests"; rc=0; fi; \
	exit $$rc

# The demo is embedded (SQLite only), so it needs no services.
demo: setup
	$(PY) -m tools.demo $(DEMO_ARGS)

# Spark's JDBC source is one of the compared paths; Debian ships its drivers.
JDBC_JARS := /usr/share/java/postgresql.jar /usr/share/java/mariadb-java-client.jar /usr/share/java/sqlite-jdbc.jar
jdbc-drivers:
	@for jar in $(JDBC_JARS); do [ -f $$jar ] || missing=1; done; [ -z "$$missing" ] || \
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libpostgresql-jdbc-java \
		libmariadb-java libxerial-sqlite-jdbc-java >/dev/null; } || \
		echo "[bench] JDBC drivers not installed: the Spark JDBC paths will be skipped"

# Every scenario (SQL sources, lake, Flight, planning) -> bench/results/<date>.json + docs/benchmarks.md
bench: setup services jdbc-drivers
	$(PY) -m bench $(BENCH_ARGS)

# The same suite at 100k rows, 3 rounds: a smoke run of every path (about five minutes)
bench-quick: setup services jdbc-drivers
	$(PY) -m bench --quick $(BENCH_ARGS)

# One scenario alone, e.g. the lake: Sluice vs spark.read.parquet, PyIceberg and DuckDB on the same files
bench-lake: setup
	$(PY) -m bench --only lake $(BENCH_ARGS)

# The differential fuzzer (docs/correctness.md): make fuzz N=10000 FUZZ_ARGS="--seed 7 --sources pg,lite"
fuzz: setup services
	$(PY) -m fuzz --cases $(N) $(FUZZ_ARGS)

# The parsers of outside input (V2 expressions, Flight filters, catalog) under hostile input, no services: make fuzz-parsers N=20000 FUZZ_ARGS="--seed 7"
.PHONY: fuzz-parsers
fuzz-parsers: setup
	$(PY) -m fuzz.parsers --target all --cases $(N) $(FUZZ_ARGS)

# docs/pushdown-matrix.md is generated from the dialect code, sluice/protocol/schema.json and
# java/io/sluice/spark/Protocol.java from sluice/protocol; a unit test fails when one is stale.
docs: setup
	$(PY) -m tools.matrix --write docs/pushdown-matrix.md
	$(PY) -m tools.protocol_schema

clean:
	rm -rf .venv build *.egg-info demo-data .pytest_cache
