#!/usr/bin/env bash
# Prepare a development environment: Java (for Spark) and the project's .venv.
# Idempotent and cheap on repeat runs, so `make test` can always call it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
log() { echo "[setup] $*"; }
export DEBIAN_FRONTEND=noninteractive

# --- Java 17+: PySpark 4 launches a JVM and refuses anything older. ----------
java_major() {
    # "17.0.15" -> 17, "1.8.0_392" -> 8; prints 0 if java is missing.
    local v
    v=$(java -version 2>&1 | awk -F'"' '/version/ {print $2; exit}') || true
    [[ -z "$v" ]] && { echo 0; return; }
    [[ "$v" == 1.* ]] && v=${v#1.}
    echo "${v%%[.+_-]*}"
}
# javac too: Sluice's Spark catalog classes (java/) are compiled here, against pyspark's jars.
if (( $(java_major) >= 17 )) && command -v javac >/dev/null; then
    log "java $(java_major) and javac ok"
else
    log "installing openjdk-17-jdk-headless"
    apt-get update -qq
    apt-get install -y -qq openjdk-17-jdk-headless >/dev/null
    (( $(java_major) >= 17 )) && command -v javac >/dev/null || { log "ERROR: java 17+ with javac still not found"; exit 1; }
fi

# --- Python virtualenv ------------------------------------------------------
# Recreate if missing or broken (e.g. the interpreter it points to is gone).
if ! .venv/bin/python -c 'import sys' 2>/dev/null; then
    log "creating .venv"
    rm -rf .venv
    python3 -m venv .venv
fi

# The stamp is keyed on pyproject.toml's hash: dependencies only change when it
# changes, and the editable install picks up source edits on its own.
stamp=".venv/.installed-$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [[ -e "$stamp" ]]; then
    log "python deps up to date"
else
    log "installing python deps (pip install -e '.[dev]')"
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q -e '.[dev]'
    rm -f .venv/.installed-*   # drop stamps of older pyproject versions
    # The editable install maps the packages that existed when it ran (without
    # sluice/__init__.py it maps a namespace package): stamp only a complete
    # install that imports from outside the repo, else redo it next time.
    if [[ -f sluice/__init__.py ]] && (cd / && "$root/.venv/bin/python" -c 'import sluice') 2>/dev/null; then
        touch "$stamp"
    else
        log "WARNING: sluice not importable yet; will reinstall on next run"
    fi
fi
# --- Sluice's catalog classes: build/sluice-spark.jar, rebuilt when java/ changes ------
log "catalog jar: $(.venv/bin/python -m sluice.spark.jvm)"
log "done"
