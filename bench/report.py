"""Results to disk: the JSON record of a run, and ``docs/benchmarks.md`` rendered from it.

The Markdown (and its plots) are rendered from the JSON alone, so ``--report-from`` can
regenerate the page from any saved run without measuring again. Every scenario has the
same shape (see :func:`bench.context.scenario_result`), so one renderer serves them all.
"""

from __future__ import annotations

import json
import os
from typing import Any

from bench.plots import plot_scenario

#: titles of the result groups (record["scenario"]); unknown groups show their key
GROUP_TITLES = {
    "postgresql-raw": "PostgreSQL → Arrow: raw driver paths (one Python process, no Spark)",
    "mariadb-raw": "MariaDB → Arrow: raw driver paths (one Python process, no Spark)",
    "sqlite-raw": "SQLite → Arrow: raw driver paths (one Python process, no Spark)",
    "duckdb-raw": "DuckDB → Arrow: raw driver paths (one Python process, no Spark)",
    "postgresql-spark": "Spark end to end: PostgreSQL",
    "mariadb-spark": "Spark end to end: MariaDB",
    "sqlite-spark": "Spark end to end: SQLite",
    "duckdb-spark": "Spark end to end: DuckDB",
    "join-spark": "Spark end to end: cross-source join",
    "postgresql-catalog": "A 10-row query through the catalog: PostgreSQL (Sluice vs Spark's JDBCTableCatalog)",
    "mariadb-catalog": "A 10-row query through the catalog: MariaDB (Sluice vs Spark's JDBCTableCatalog)",
    "catalog-floor": "The floor: spark.range(10).collect()",
    "postgresql-aggregates": "Aggregates: PostgreSQL (raw psycopg is the baseline)",
    "mariadb-aggregates": "Aggregates: MariaDB (raw pymysql is the baseline)",
    "sqlite-aggregates": "Aggregates: SQLite, the bench table (not STRICT; raw sqlite3 is the baseline)",
    "sqlite-strict-aggregates": "Aggregates: SQLite, a STRICT copy of the bench table (raw sqlite3 is the baseline)",
    "duckdb-aggregates": "Aggregates: DuckDB (raw duckdb is the baseline)",
    "postgresql-joins": "Joins: PostgreSQL (raw psycopg is the baseline)",
    "mariadb-joins": "Joins: MariaDB (raw pymysql is the baseline)",
    "sqlite-joins": "Joins: SQLite, a STRICT copy of the bench table (raw sqlite3 is the baseline)",
    "duckdb-joins": "Joins: DuckDB (raw duckdb is the baseline)",
    "postgresql-insert": "INSERT: PostgreSQL (the raw driver is the baseline)",
    "mariadb-insert": "INSERT: MariaDB (the raw driver is the baseline)",
    "sqlite-insert": "INSERT: SQLite (the raw driver is the baseline)",
    "duckdb-insert": "INSERT: DuckDB (the raw driver is the baseline)",
    "postgresql-merge": "MERGE into PostgreSQL (Sluice is the baseline)",
    "mariadb-merge": "MERGE into MariaDB (Sluice is the baseline)",
}


def write_json(result: dict[str, Any], path: str) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1)
        handle.write("\n")


def write_markdown(result: dict[str, Any], json_path: str, path: str) -> None:
    """The page at ``path`` and one PNG per scenario in ``<page>-plots/`` next to it."""
    folder = os.path.splitext(path)[0] + "-plots"
    plots = {}
    for scenario in result["scenarios"]:
        image = plot_scenario(scenario, os.path.join(folder, f"{scenario['key']}.png"))
        if image:
            plots[scenario["key"]] = os.path.relpath(image, os.path.dirname(path) or ".")
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(render(result, json_path, plots))


def _n(rows: int | None) -> str:
    return "—" if rows is None else f"{rows:,}"


def _s(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def _machine(result: dict[str, Any]) -> list[str]:
    m = result["machine"]
    packages = ", ".join(f"{k} {v}" for k, v in m["packages"].items() if v)
    jars = ", ".join(m["jdbc_jars"].values()) or "none"
    return [
        f"- Date: {m['date']}; repository commit {m['git_commit']}",
        f"- CPU: {m['cpu']}, {m['cores']} cores; memory {m['memory_gib']} GiB; {m['os']}",
        f"- Python {m['python']}; {packages}",
        f"- PostgreSQL {m['postgresql_server']} (shared_buffers {m['postgresql_shared_buffers']}) and MariaDB "
        f"{m.get('mariadb_server')} on loopback; SQLite library {m['sqlite_library']}; {m['java']}; JDBC jars: {jars}",
    ]


def _targets(result: dict[str, Any]) -> list[str]:
    found = [t for s in result["scenarios"] for t in s.get("targets", [])]
    if not found:
        return []
    lines = ["## Targets", "", "| target | measured | met | command |", "|---|---|---|---|"]
    for t in found:
        met = {True: "yes", False: "**no**", None: "—"}[t.get("met")]
        lines.append(f"| {t['target']} | {t['measured']} | {met} | `{t.get('command', '')}` |")
    return lines + [""]


def _row(rows: int, r: dict[str, Any], extra_keys: list[str]) -> str:
    path = f"**{r['path']}**" if r["baseline"] else r["path"]
    if r.get("error"):
        cells = [_n(rows), r["shape"], path, str(r["streams"]), f"failed: {r['error']}", "", "", "", ""]
        return "| " + " | ".join(cells + ["" for _ in extra_keys]) + " |"
    spread = f"{_s(r.get('min_s'))}–{_s(r.get('max_s'))}"
    check = "reference" if r["baseline"] else (r.get("check") or "—")
    extra = [r.get("extra", {}).get(key, "—") for key in extra_keys]
    return (
        "| "
        + " | ".join(
            [
                _n(rows),
                r["shape"],
                path,
                str(r["streams"]),
                _s(r.get("median_s")),
                spread,
                _ratio(r.get("ratio")),
                _n(r.get("rows")),
                check,
                *extra,
            ]
        )
        + " |"
    )


def _group_table(scenario: dict[str, Any], group: str) -> list[str]:
    records = [(s["rows"], r) for s in scenario["scales"] for r in s["results"] if r["scenario"] == group]
    extra_keys = list(dict.fromkeys(k for _, r in records for k in r.get("extra", {})))
    header = [
        "rows",
        "shape",
        "path",
        "streams",
        "median s",
        "min–max s",
        "× baseline",
        "rows out",
        "check",
        *extra_keys,
    ]
    lines = [
        "| " + " | ".join(header) + " |",
        "|"
        + "|".join(
            "---:" if h in ("rows", "streams", "median s", "min–max s", "× baseline", "rows out") else "---"
            for h in header
        )
        + "|",
    ]
    lines += [_row(rows, r, extra_keys) for rows, r in records]
    notes = sorted({f"{r['path']}: {r['note']}" for _, r in records if r.get("note") and not r["baseline"]})
    return lines + ([""] + [f"- {note}" for note in notes] if notes else [])


def _scenario(scenario: dict[str, Any], plot: str | None) -> list[str]:
    out = [f"## {scenario['title']}", "", *scenario["about"], ""]
    loads = [
        f"{_n(s['rows'])} rows: " + ", ".join(f"{r['load_1min']:.1f}" for r in s["rounds"])
        for s in scenario["scales"]
        if s.get("rounds")
    ]
    if loads:
        out += [
            "Load average (1 min) after each timed round — "
            + "; ".join(loads)
            + " (the benchmark itself adds about 1-2 on this 2-core machine; more means other work competed).",
            "",
        ]
    if plot:
        out += [f"![{scenario['title']}]({plot})", ""]
    groups = list(dict.fromkeys(r["scenario"] for s in scenario["scales"] for r in s["results"]))
    for group in groups:
        out += [f"### {GROUP_TITLES.get(group, group)}", "", *_group_table(scenario, group), ""]
    return out


def render(result: dict[str, Any], json_path: str, plots: dict[str, str] | None = None) -> str:
    """The whole ``docs/benchmarks.md`` page for one run."""
    minutes = result["wall_seconds"] / 60
    out = [
        "# Benchmarks",
        "",
        "<!-- Generated by `python -m bench` from "
        + os.path.basename(json_path)
        + "; edit bench/report.py, not this file. -->",
        "",
        f"Command: `{result['command']}` (wall time {minutes:.1f} min). Regenerate with `make bench` "
        "(`make bench-quick` for a five-minute smoke), or re-render from a saved result with "
        f"`.venv/bin/python -m bench --report-from {json_path}`. Raw numbers: `{json_path}`.",
        "",
        f"Method: one warm-up run, then {result['runs']} rounds; each round runs every case of a scenario once in a "
        "freshly shuffled order, so machine noise hits all paths alike. Tables give the median, min and max of the "
        "rounds; `× baseline` is the median over the median of the group's bold baseline (< 1 is faster than it).",
        "",
        *_targets(result),
        "## Machine",
        "",
        *_machine(result),
        "",
    ]
    for scenario in result["scenarios"]:
        out += _scenario(scenario, (plots or {}).get(scenario["key"]))
    return "\n".join(out).rstrip() + "\n"
