"""Results to disk: the JSON record of a run, and ``docs/benchmarks.md`` rendered from it.

The Markdown is rendered from the JSON alone, so ``--report-from`` can regenerate the
page from any saved run without measuring again.
"""

from __future__ import annotations

import json
import os
from typing import Any

from bench.cases import SHAPES

SCENARIOS = {
    "postgresql-raw": "PostgreSQL → Arrow: raw driver paths (one Python process, no Spark)",
    "sqlite-raw": "SQLite → Arrow: raw driver paths (one Python process, no Spark)",
    "postgresql-spark": "Spark end to end: PostgreSQL",
    "sqlite-spark": "Spark end to end: SQLite",
}
SHAPE_TITLES = {shape.key: shape.title for shape in SHAPES}


def write_json(result: dict[str, Any], path: str) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1)
        handle.write("\n")


def write_markdown(result: dict[str, Any], json_path: str, path: str) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(render(result, json_path))


def _n(rows: int) -> str:
    return f"{rows:,}"


def _s(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def _mb(nbytes: int) -> str:
    return f"{nbytes / 1e6:,.1f} MB"


def _fastest(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    timed = [r for r in records if r.get("median_s") is not None]
    return min(timed, key=lambda r: r["median_s"]) if timed else None


def _group(scale: dict[str, Any], scenario: str, shape: str) -> list[dict[str, Any]]:
    return [r for r in scale["results"] if r["scenario"] == scenario and r["shape"] == shape]


def _moved(scale: dict[str, Any], scenario: str, shape: str, baseline: bool) -> dict[str, int] | None:
    """Rows/bytes Sluice read from the source for a Spark case (summed over scans)."""
    kind = scenario.split("-")[0]
    found = scale.get("transferred", {}).get(kind, {}).get(shape)
    if not found:
        return None
    scans = found["pushdown" if baseline else "no_pushdown"].values()
    return {"rows": sum(s["rows"] for s in scans), "bytes": sum(s["bytes"] for s in scans)}


def in_short(result: dict[str, Any]) -> str:
    """One paragraph: the fastest path per engine for a full scan at the largest scale."""
    scale = max(result["scales"], key=lambda s: s["rows"])
    parts = []
    for scenario, engine in (("postgresql-raw", "PostgreSQL"), ("sqlite-raw", "SQLite")):
        group = _group(scale, scenario, "full")
        base, best = next((r for r in group if r["baseline"]), None), _fastest(group)
        single = _fastest([r for r in group if r["streams"] == 1])
        if base and best and single and base.get("median_s") is not None:
            text = (f"for {engine} the fastest path is **{best['path']}** ({_ratio(best.get('ratio'))} the time of "
                    f"Sluice's {base['path'].removeprefix('sluice ')})")
            if single is not best:
                text += f", the fastest single stream **{single['path']}** ({_ratio(single.get('ratio'))})"
            parts.append(text)
    for scenario, engine in (("postgresql-spark", "PostgreSQL"), ("sqlite-spark", "SQLite")):
        jdbc = next((r for r in _group(scale, scenario, "full") if r["path"].startswith("Spark JDBC")), None)
        if jdbc and jdbc.get("ratio"):
            parts.append(f"through Spark, Spark's JDBC source reads {engine} in {_ratio(jdbc['ratio'])} the time of Sluice")
    if not parts:
        return ""
    return f"Full scan of {_n(scale['rows'])} rows: " + "; ".join(parts) + "."


def findings(result: dict[str, Any]) -> list[str]:
    """Plain sentences drawn from the numbers of the largest scale (regenerated every run)."""
    scale = max(result["scales"], key=lambda s: s["rows"])
    rows = _n(scale["rows"])
    lines = []
    for scenario in ("postgresql-raw", "sqlite-raw"):
        engine = "PostgreSQL" if scenario.startswith("postgresql") else "SQLite"
        for shape in SHAPE_TITLES:
            group = _group(scale, scenario, shape)
            base = next((r for r in group if r["baseline"]), None)
            best = _fastest(group)
            if base is None or best is None or base.get("median_s") is None:
                continue
            single = _fastest([r for r in group if r["streams"] == 1 and not r["baseline"]])
            text = (f"{engine}, {rows} rows, {SHAPE_TITLES[shape]}: Sluice's reader ({base['path']}) takes "
                    f"{_s(base['median_s'])} s; ")
            if best is base:
                text += "no other path is faster."
            else:
                text += f"the fastest path is **{best['path']}** at {_ratio(best.get('ratio'))} of that ({_s(best['median_s'])} s)"
                if single is not None and single is not best:
                    text += f"; the fastest single stream is {single['path']} at {_ratio(single.get('ratio'))}"
                text += "."
            lines.append(text)
    for scenario in ("postgresql-spark", "sqlite-spark"):
        engine = "PostgreSQL" if scenario.startswith("postgresql") else "SQLite"
        for shape in SHAPE_TITLES:
            group = _group(scale, scenario, shape)
            base = next((r for r in group if r["baseline"]), None)
            if base is None or base.get("median_s") is None:
                continue
            others = "; ".join(f"{r['path']} {_ratio(r.get('ratio'))}" for r in group if not r["baseline"] and r.get("ratio"))
            on, off = _moved(scale, scenario, shape, True), _moved(scale, scenario, shape, False)
            moved = (f" Pushdown read {_n(on['rows'])} rows ({_mb(on['bytes'])}) instead of {_n(off['rows'])} "
                     f"({_mb(off['bytes'])}).") if on and off else ""
            lines.append(f"Spark over {engine}, {rows} rows, {SHAPE_TITLES[shape]}: Sluice with pushdown takes "
                         f"{_s(base['median_s'])} s; relative to it: {others}.{moved}")
    return lines


def _machine(result: dict[str, Any]) -> list[str]:
    m = result["machine"]
    packages = ", ".join(f"{k} {v}" for k, v in m["packages"].items() if v)
    jars = ", ".join(m["jdbc_jars"].values()) or "none"
    return [
        f"- Date: {m['date']}; repository commit {m['git_commit']}",
        f"- CPU: {m['cpu']}, {m['cores']} cores; memory {m['memory_gib']} GiB; {m['os']}",
        f"- Python {m['python']}; {packages}",
        f"- PostgreSQL {m['postgresql_server']} (shared_buffers {m['postgresql_shared_buffers']}) on loopback; "
        f"SQLite library {m['sqlite_library']}; {m['java']}; JDBC jars: {jars}",
        *(f"- Load average (1 min) after each timed round at {_n(s['rows'])} rows: "
          + ", ".join(f"{r['load_1min']:.1f}" for r in s["rounds"])
          + f" on {m['cores']} cores (the benchmark itself adds about 1-2; more means other work competed)"
          for s in result["scales"] if s.get("rounds")),
    ]


def _raw_table(result: dict[str, Any], scenario: str) -> list[str]:
    lines = ["| rows | shape | path | streams | median s | min–max s | × Sluice | rows out | rows vs Sluice's |",
             "|---:|---|---|---:|---:|---:|---:|---:|---|"]
    for scale in result["scales"]:
        for shape in SHAPE_TITLES:
            for r in _group(scale, scenario, shape):
                lines.append(_row(scale["rows"], shape, r, [_n(r["rows"]) if r["rows"] is not None else "—",
                                                             "reference" if r["baseline"] else (r["check"] or "—")]))
    return lines


def _spark_table(result: dict[str, Any], scenario: str) -> list[str]:
    lines = ["| rows | shape | path | partitions | median s | min–max s | × Sluice | rows read from source | bytes read |",
             "|---:|---|---|---:|---:|---:|---:|---:|---:|"]
    for scale in result["scales"]:
        for shape in SHAPE_TITLES:
            for r in _group(scale, scenario, shape):
                moved = _moved(scale, scenario, shape, r["baseline"]) if r["path"].startswith("sluice") else None
                extra = [_n(moved["rows"]), _mb(moved["bytes"])] if moved else ["—", "—"]
                lines.append(_row(scale["rows"], shape, r, extra))
    return lines


def _row(rows: int, shape: str, r: dict[str, Any], extra: list[str]) -> str:
    path = f"**{r['path']}**" if r["baseline"] else r["path"]
    if r.get("error"):
        return f"| {_n(rows)} | {shape} | {path} | {r['streams']} | failed: {r['error']} | | | | |"
    spread = f"{_s(r.get('min_s'))}–{_s(r.get('max_s'))}"
    return "| " + " | ".join([_n(rows), shape, path, str(r["streams"]), _s(r.get("median_s")), spread, _ratio(r.get("ratio")), *extra]) + " |"


def render(result: dict[str, Any], json_path: str) -> str:
    """The whole ``docs/benchmarks.md`` page for one run."""
    runs, minutes = result["runs"], result["wall_seconds"] / 60
    scales = ", ".join(_n(s["rows"]) for s in result["scales"])
    same = all(s["data"]["same_data"] for s in result["scales"])
    out = [
        "# Benchmarks: Arrow driver paths and Sluice end to end",
        "",
        "<!-- Generated by `python -m bench` from " + os.path.basename(json_path) + "; edit bench/report.py, not this file. -->",
        "",
        f"Command: `{result['command']}` (wall time {minutes:.1f} min). Regenerate with `make bench` "
        "(`BENCH_ARGS=--quick` for a two-minute smoke), or from a saved result with "
        f"`.venv/bin/python -m bench --report-from {json_path}`. Raw numbers: `{json_path}`.",
        "",
        "## Machine",
        "",
        *_machine(result),
        "",
        "## What is measured",
        "",
        f"- Table `bench_orders(id bigint primary key, customer_id int, status text, amount numeric(12,2), "
        f"placed_at timestamptz, score float8)` at {scales} rows, generated server-side in PostgreSQL "
        "(`sluice_bench.bench_orders`) and SQLite (a file; `amount REAL`, `placed_at` ISO text). "
        f"Both hold the same values: the aggregate fingerprints of the two engines {'match' if same else 'DO NOT match'}.",
        "- Shapes: " + "; ".join(f"`{k}` = {v}" for k, v in SHAPE_TITLES.items()) + ".",
        "- Raw paths run the exact SQL text Sluice pushes for the shape and must return the Arrow schema Sluice's "
        "reader returns (Spark's types: `decimal(12,2)`, `timestamp`), so casts a driver leaves undone "
        "(ADBC's numeric-as-text, connectorx's `decimal(38,10)`, SQLite timestamps as text) are inside the timing; "
        "connecting is too. *streams* counts parallel reads inside a path (connectorx partitions). The warm-up compares every path's rows with Sluice's (column *rows vs Sluice's*).",
        "- Spark paths write to the `noop` sink: `fed.sql(q)` (pushdown on, the baseline), `fed.sql(q, pushdown=False)` "
        "(whole table read, Spark filters), and Spark's JDBC source split on `id` into as many partitions as Sluice uses "
        "(Spark pushes the same filter and projection to the database).",
        "- Raw paths are one read in one process. Inside Spark every Sluice partition is one such read in a Python "
        "worker, so the single-stream (*streams* = 1) numbers are the ones a driver swap would carry into Spark; "
        "connectorx's own partitioning competes with Spark's for the same cores.",
        f"- Method: one warm-up run, then {runs} rounds; each round runs every case once in a freshly shuffled order, "
        "so noise hits all paths alike. Median, min and max of the rounds; `× Sluice` is median / median of the "
        "bold baseline (< 1 is faster than what Sluice does today).",
        "",
    ]
    if result["jdbc"]["skipped"]:
        out += [f"Spark JDBC paths were skipped: {result['jdbc']['skipped']}", ""]
    out += ["## What this shows", "", in_short(result), "", *[f"- {line}" for line in findings(result)], ""]
    for scenario, title in SCENARIOS.items():
        if not any(r["scenario"] == scenario for s in result["scales"] for r in s["results"]):
            continue
        out += [f"## {title}", ""]
        out += _raw_table(result, scenario) if scenario.endswith("-raw") else _spark_table(result, scenario)
        notes = sorted({f"{r['path']}: {r['note']}" for s in result["scales"] for r in s["results"]
                        if r["scenario"] == scenario and r["note"] and not r["path"].startswith("sluice fed.sql, pushdown on")})
        out += [""] + [f"- {note}" for note in notes] + ([""] if notes else [])
    return "\n".join(out).rstrip() + "\n"
