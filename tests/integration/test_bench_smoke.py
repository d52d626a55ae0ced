"""Smoke test of the side-by-side benchmark harness (bench/compare.py), so it cannot rot.

Runs the one command with tiny numbers — a few thousand lines, a 3-second latency run —
on a subset of workloads that exercises both systems, the Kafka bounds, the warm-up and
idle measurement, a source-only workload and the latency path, writing into a temporary
directory. Checks that every run passed its correctness check and that the page shows
figures for Kafka Connect and for Sluice.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]


def test_compare_smoke(tmp_path: Path) -> None:
    output = tmp_path / "out" / "benchmarks.md"
    command = [
        sys.executable, str(REPO / "bench" / "compare.py"),
        "--lines", "2000", "--latency-seconds", "3", "--workloads", "a,d", "--converters", "string",
        "--warmup-lines", "500", "--idle-seconds", "1", "--settle-seconds", "0.5",
        "--output", str(output), "--work-dir", str(tmp_path / "work"),
    ]
    chart = importlib.util.find_spec("matplotlib") is not None
    if not chart:
        command.append("--no-chart")
    started = time.monotonic()
    proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=840,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, f"bench/compare.py failed ({proc.returncode}):\n{proc.stderr[-8000:]}"

    results = json.loads(output.with_suffix(".json").read_text())
    runs = results["runs"]
    assert {(r["workload"], r["system"]) for r in runs} == {
        ("a-string", "connect"), ("a-string", "sluice"), ("d", "connect"), ("d", "sluice")}
    for r in runs + results["warmup"]:
        assert r["ok"], f"{r['workload']} on {r['system']}: {r.get('error')}"
        for key in ("records_per_s", "mb_per_s", "cpu_s_per_million", "peak_rss_mb", "rest_ready_s",
                    "first_record_s"):
            assert r[key] > 0, (r["workload"], r["system"], key, r[key])
    for r in runs:
        if r["workload"] == "d":
            assert 0 < r["latency_p50_ms"] <= r["latency_p99_ms"] <= r["latency_max_ms"]
    assert {"connect", "sluice"} == {r["system"] for r in results["warmup"]}
    assert all("idle_cpu_pct" in r for r in results["warmup"])
    assert results["bounds"]["producer"]["records_per_s"] > 0
    assert results["bounds"]["consumer"]["records_per_s"] > 0

    page = output.read_text()
    assert "FAILED" not in page
    table = page[page.index("#### (a)"):]
    row = next(ln for ln in table.splitlines() if ln.startswith("| records/s |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1][0].isdigit() and cells[2][0].isdigit(), row  # Kafka Connect, Sluice
    assert "of bound" in cells[1] and "of bound" in cells[2]
    assert cells[3].endswith("×")
    assert "latency p99, ms" in page
    assert ".venv/bin/python bench/compare.py --lines 2000" in page
    if chart:
        assert output.with_suffix(".png").stat().st_size > 10_000
    print(f"bench/compare.py smoke run took {elapsed:.0f} s")


def test_rebalance_smoke(tmp_path: Path) -> None:
    """bench/rebalance.py with three connectors (the fewest for which a fourth worker gets a
    share of a balanced cluster): failover and join figures are written."""
    output = tmp_path / "benchmarks.md"
    output.write_text("# Benchmarks\n\n## What the figures say\n\nkept as is\n")
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "rebalance.py"), "--connectors", "3", "--output", str(output)],
        cwd=tmp_path, capture_output=True, text=True, timeout=840, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.returncode == 0, f"bench/rebalance.py failed ({proc.returncode}):\n{proc.stderr[-8000:]}"
    page = output.read_text()
    assert "## A cluster moving work" in page and "kept as is" in page
    rows = [line for line in page.splitlines() if line.startswith("| SIGKILL") or line.startswith("| a fourth")]
    assert len(rows) == 2 and all(float(row.rsplit("|", 2)[1]) > 0 for row in rows), rows
