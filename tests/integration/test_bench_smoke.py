"""Smoke runs of the benchmarks in bench/, so they cannot rot.

``test_compare_smoke`` runs in ``./dev test`` (so in CI): bench/compare.py with tiny numbers
— a few thousand lines, a 3-second latency run — on a subset of workloads that exercises
both systems, the Kafka bounds, the warm-up and idle measurement, a source-only workload
and the latency path, writing into a temporary directory; every run passed its
correctness check and the page shows figures for Kafka Connect and for Sluice. It covers
the harness every benchmark shares (bench/harness).

The others, one per benchmark, are marked ``bench_check``: ``./dev bench-check`` runs them.
Each starts its own brokers, servers and workers of both systems and together they took a
quarter of the suite's time on two cores, which CI's budget does not allow; run them after
changing a benchmark or what it drives.
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
bench_check = pytest.mark.bench_check

REPO = Path(__file__).resolve().parents[2]


def _run_bench(command: list[str], cwd: Path) -> None:
    """Run a benchmark's command (``[python, bench/<name>.py, *args]``) to its end; it must succeed."""
    proc = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=840, env={**os.environ, "PYTHONUNBUFFERED": "1"}
    )
    script = Path(command[1]).relative_to(REPO)
    assert proc.returncode == 0, f"{script} failed ({proc.returncode}):\n{proc.stderr[-8000:]}"


def test_compare_smoke(tmp_path: Path) -> None:
    output = tmp_path / "out" / "benchmarks.md"
    command = [
        sys.executable,
        str(REPO / "bench" / "compare.py"),
        "--lines",
        "2000",
        "--latency-seconds",
        "3",
        "--workloads",
        "a,d",
        "--converters",
        "string",
        "--warmup-lines",
        "500",
        "--idle-seconds",
        "1",
        "--settle-seconds",
        "0.5",
        "--output",
        str(output),
        "--work-dir",
        str(tmp_path / "work"),
    ]
    chart = importlib.util.find_spec("matplotlib") is not None
    if not chart:
        command.append("--no-chart")
    started = time.monotonic()
    proc = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=840, env={**os.environ, "PYTHONUNBUFFERED": "1"}
    )
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, f"bench/compare.py failed ({proc.returncode}):\n{proc.stderr[-8000:]}"

    results = json.loads(output.with_suffix(".json").read_text())
    runs = results["runs"]
    assert {(r["workload"], r["system"]) for r in runs} == {
        ("a-string", "connect"),
        ("a-string", "sluice"),
        ("d", "connect"),
        ("d", "sluice"),
    }
    for r in runs + results["warmup"]:
        assert r["ok"], f"{r['workload']} on {r['system']}: {r.get('error')}"
        for key in ("records_per_s", "mb_per_s", "cpu_s_per_million", "peak_rss_mb", "rest_ready_s", "first_record_s"):
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
    table = page[page.index("#### (a)") :]
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


@bench_check
def test_rebalance_smoke(tmp_path: Path) -> None:
    """bench/rebalance.py with three connectors (the fewest for which a fourth worker gets a
    share of a balanced cluster): failover and join figures are written."""
    output = tmp_path / "benchmarks.md"
    output.write_text("# Benchmarks\n\n## What the figures say\n\nkept as is\n")
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "rebalance.py"), "--connectors", "3", "--output", str(output)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=840,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.returncode == 0, f"bench/rebalance.py failed ({proc.returncode}):\n{proc.stderr[-8000:]}"
    page = output.read_text()
    assert "## A cluster moving work" in page and "kept as is" in page
    rows = [line for line in page.splitlines() if line.startswith(("| SIGKILL", "| a fourth"))]
    assert len(rows) == 2 and all(float(row.rsplit("|", 2)[1]) > 0 for row in rows), rows


@bench_check
def test_transforms_smoke(tmp_path: Path) -> None:
    """bench/transforms.py with a tiny topic and one round: every configuration passes its
    correctness check, the page shows figures for each, and the block lands after
    bench/rebalance.py's."""
    output = tmp_path / "benchmarks.md"
    output.write_text(
        "# Benchmarks\n\n<!-- BEGIN generated by bench/rebalance.py: x -->\nrebalance\n"
        "<!-- END generated by bench/rebalance.py -->\n\n## What the figures say\n\nkept as is\n"
    )
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "transforms.py"),
            "--lines",
            "2000",
            "--repeats",
            "1",
            "--warmup-lines",
            "0",  # the compare smoke runs the warm-up path; here, no time for it
            "--settle-seconds",
            "0.5",
            "--output",
            str(output),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=840,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.returncode == 0, f"bench/transforms.py failed ({proc.returncode}):\n{proc.stderr[-8000:]}"
    page = output.read_text()
    begin = page.index("<!-- BEGIN generated by bench/transforms.py")
    end = page.index("<!-- END generated by bench/transforms.py -->")
    assert page.index("<!-- END generated by bench/rebalance.py -->") < begin < end < page.index("kept as is")
    block = page[begin:end]
    assert "FAILED" not in block
    assert ".venv/bin/python bench/transforms.py --lines 2000" in block
    rows = [ln for ln in block.splitlines() if ln.startswith(("| Kafka Connect", "| Sluice"))]
    assert len(rows) == 5, rows
    cells: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        row_cells = [c.strip() for c in row.strip("|").split("|")]
        assert float(row_cells[2].replace(",", "")) > 0 and float(row_cells[3].replace(",", "")) > 0, row
        cells[(row_cells[0].split()[0], row_cells[1])] = row_cells
    assert set(cells) == {
        ("Kafka", "no transforms"),
        ("Kafka", "3-transform chain"),
        ("Sluice", "no transforms"),
        ("Sluice", "3-transform chain, over each batch"),
        ("Sluice", "3-transform chain, per record"),
    }, rows
    for (_system, label), row_cells in cells.items():
        if label != "no transforms":  # vs. the same system without transforms
            assert row_cells[4].endswith("×") and row_cells[5].endswith("×"), row_cells
    assert "Kafka Connect keeps" in block and "With the chain, Sluice reaches" in block
    assert "Over batches the chain runs at" in block


@bench_check
def test_jdbc_sink_smoke(tmp_path: Path) -> None:
    """bench/jdbc_sink.py with 3,000 records, one round: Debezium's JDBC sink on Kafka Connect
    and Sluice's both write every row into PostgreSQL, and the page shows both figures."""
    output = tmp_path / "benchmarks.md"
    output.write_text("# Benchmarks\n\nkept as is\n")
    command = [
        sys.executable,
        str(REPO / "bench" / "jdbc_sink.py"),
        "--records",
        "3000",
        "--repeats",
        "1",
        "--warmup-records",
        "500",
        "--output",
        str(output),
    ]
    _run_bench(command, tmp_path)
    page = output.read_text()
    assert page.startswith("# Benchmarks\n\nkept as is\n") and "FAILED" not in page
    rows = [ln for ln in page.splitlines() if ln.startswith(("| Debezium", "| Sluice"))]
    assert len(rows) == 2, page
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1][0].isdigit() and cells[-1][0].isdigit(), row  # records/s, the run's figure
    assert "Debezium's rows per second" in page
    assert ".venv/bin/python bench/jdbc_sink.py --records 3000" in page


@bench_check
def test_startup_smoke(tmp_path: Path) -> None:
    """bench/startup.py with one round of 20 lines: on a 3-worker Kafka Connect cluster and a
    3-worker Sluice cluster the file pipeline delivered its first line, the figures and the
    breakdown are measured, and the block lands after bench/jdbc_sink.py's. Measures, does
    not judge: no figure is compared with a limit."""
    output = tmp_path / "benchmarks.md"
    output.write_text(
        "# Benchmarks\n\n<!-- BEGIN generated by bench/jdbc_sink.py: x -->\njdbc\n"
        "<!-- END generated by bench/jdbc_sink.py -->\n\n## What the figures say\n\nkept as is\n"
    )
    raw = tmp_path / "startup.json"
    command = [
        sys.executable,
        str(REPO / "bench" / "startup.py"),
        "--rounds",
        "1",
        "--lines",
        "20",
        "--pause-seconds",
        "1",
        "--output",
        str(output),
        "--json",
        str(raw),
    ]
    _run_bench(command, tmp_path)

    results = json.loads(raw.read_text())
    for system in ("connect", "sluice"):
        [run] = results["runs"][system]
        assert run["ok"], f"{system}: {run.get('error')}"
        for key in ("source_tasks_listed", "source_tasks_running", "sink_tasks_running", "first_line", "all_lines"):
            assert run[key] > 0, (system, key, run[key])
        moments = run["moments"]
        for key in (
            "source_config",
            "source_assigned",
            "source_task_configs",
            "source_task_assigned",
            "source_task_running",
            "first_record",
            "sink_task_running",
        ):
            assert moments.get(key) is not None, (system, key, moments)
        assert moments["source_config"] < moments["source_task_running"] < moments["first_line"]
        assert results["clusters"][system]["stable_s"] > 0
    sluice = results["runs"]["sluice"][0]["moments"]
    assert 0 < sluice["source_launched"] <= sluice["source_connected"]  # from the DEBUG log (a standby: at once)
    assert len(results["clusters"]["sluice"]["spark_ready_s"]) == 3

    page = output.read_text()
    begin = page.index("<!-- BEGIN generated by bench/startup.py")
    end = page.index("<!-- END generated by bench/startup.py -->")
    assert page.index("<!-- END generated by bench/jdbc_sink.py -->") < begin < end < page.index("kept as is")
    block = page[begin:end]
    assert "FAILED" not in block
    assert ".venv/bin/python bench/startup.py --rounds 1 --lines 20" in block
    row = next(ln for ln in block.splitlines() if ln.startswith("| **(b)**"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1][0].isdigit() and cells[2][0].isdigit() and cells[3].endswith("×"), row  # Connect, Sluice
    assert "| source: task RUNNING in the status topic |" in block and "Load average (1 min)" in block


@bench_check
def test_elasticsearch_sink_smoke(tmp_path: Path) -> None:
    """bench/elasticsearch_sink.py with 3,000 records, one round: Sluice's Elasticsearch sink,
    the reference sink on Kafka Connect and the bare bulk loader each index every record into
    OpenSearch (the index checked after each run), and the block lands after
    bench/storage_sink.py's with a figure for each."""
    output = tmp_path / "benchmarks.md"
    output.write_text(
        "# Benchmarks\n\n<!-- BEGIN generated by bench/storage_sink.py: x -->\nstorage\n"
        "<!-- END generated by bench/storage_sink.py -->\n\n## What the figures say\n\nkept as is\n"
    )
    command = [
        sys.executable,
        str(REPO / "bench" / "elasticsearch_sink.py"),
        "--records",
        "3000",
        "--repeats",
        "1",
        "--warmup-records",
        "500",
        "--opensearch-heap",
        "512m",
        "--pin",
        "--output",
        str(output),
    ]
    _run_bench(command, tmp_path)
    page = output.read_text()
    begin = page.index("<!-- BEGIN generated by bench/elasticsearch_sink.py")
    end = page.index("<!-- END generated by bench/elasticsearch_sink.py -->")
    assert page.index("<!-- END generated by bench/storage_sink.py -->") < begin < end < page.index("kept as is")
    block = page[begin:end]
    assert "FAILED" not in block
    assert ".venv/bin/python bench/elasticsearch_sink.py --records 3000" in block
    rows = [ln for ln in block.splitlines() if ln.startswith(("| Sluice", "| reference sink", "| bare bulk loader"))]
    assert len(rows) == 3, block
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1][0].isdigit() and cells[-1][0].isdigit(), row  # records/s, the run's figure
        assert cells[4][0].isdigit(), row  # OpenSearch CPU: the server's pid is known
    assert "minimal Kafka Connect sink with Confluent's request shape" in block and "do not resolve" in block
    assert "Sluice indexes" in block and "of the bare bulk loader's records per second" in block
    assert "Pinned (`--pin`): OpenSearch, the broker and the benchmark's driver run on one CPU" in block


@bench_check
def test_scale_smoke(tmp_path: Path) -> None:
    """bench/scale.py with idle steps of 1 and 2 sink tasks and a busy step of 1, 2-second
    windows: on Kafka Connect and on Sluice every step reaches RUNNING and is measured
    (memory, processes, CPU; per-task records fed and delivered when busy), and the block
    lands after bench/startup.py's. Sinks only: each kind and phase starts a fresh worker of
    each system, and four are what the suite's time allows (the source kind shares all but
    its feeder and connector configs). Measures, does not judge: no figure is compared with
    a limit."""
    output = tmp_path / "benchmarks.md"
    output.write_text(
        "# Benchmarks\n\n<!-- BEGIN generated by bench/startup.py: x -->\nstartup\n"
        "<!-- END generated by bench/startup.py -->\n\n## What the figures say\n\nkept as is\n"
    )
    raw = tmp_path / "scale.json"
    command = [
        sys.executable,
        str(REPO / "bench" / "scale.py"),
        "--steps",
        "1,2",
        "--busy-steps",
        "1",
        "--rate",
        "200",
        "--settle",
        "2",
        "--sample",
        "2",
        "--kinds",
        "sink",
        "--output",
        str(output),
        "--json",
        str(raw),
    ]
    _run_bench(command, tmp_path)

    results = json.loads(raw.read_text())
    runs = {(r["system"], r["kind"], r["phase"]): r for r in results["runs"]}
    assert set(runs) == {(s, "sink", p) for s in ("connect", "sluice") for p in ("idle", "busy")}
    for key, run in runs.items():
        assert run["ok"], f"{key}: {run.get('error')}"
        assert [s["tasks"] for s in run["steps"]] == ([1, 2] if key[2] == "idle" else [1]), key
        for step in run["steps"]:
            assert step["running_s"] > 0 and step["cpu_pct"] >= 0, (key, step)
            assert 0 < step["pss_mb"] <= step["rss_mb"], (key, step)
            assert step["processes"] >= (2 if key[0] == "sluice" else 1), (key, step)  # Sluice: driver and JVM
            if key[2] == "busy":
                assert step["fed_per_task"] > 0 and step["delivered_per_task"] > 0, (key, step)

    page = output.read_text()
    begin = page.index("<!-- BEGIN generated by bench/scale.py")
    end = page.index("<!-- END generated by bench/scale.py -->")
    assert page.index("<!-- END generated by bench/startup.py -->") < begin < end < page.index("kept as is")
    block = page[begin:end]
    assert "FAILED" not in block
    assert ".venv/bin/python bench/scale.py --steps 1,2 --busy-steps 1" in block
    for title in ("FileStreamSink, idle", "FileStreamSink, busy"):
        assert f"#### {title}" in block, title
    rows = [ln for ln in block.splitlines() if ln.startswith("| 2 |")]
    assert len(rows) == 1, block  # the 2-task step of the idle table
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1][0].isdigit() and cells[5][0].isdigit(), row  # PSS: Kafka Connect, Sluice
        assert cells[-2].endswith("×"), row  # PSS: Sluice / KC


@bench_check
def test_debezium_smoke(tmp_path: Path) -> None:
    """bench/debezium.py with 3,000 changes, one round, no warm-up run: Debezium's PostgresConnector streamed
    the backlog on Kafka Connect and on Sluice, each change once, with every figure."""
    output = tmp_path / "debezium.json"
    command = [
        sys.executable,
        str(REPO / "bench" / "debezium.py"),
        "--changes",
        "3000",
        "--warmup",
        "500",
        "--warmup-runs",
        "0",
    ]
    _run_bench([*command, "--txn-rows", "500", "--rounds", "1", "--output", str(output)], tmp_path)
    runs = json.loads(output.read_text())["runs"]
    assert sorted(r["system"] for r in runs) == ["connect", "sluice"]
    for r in runs:
        assert r["ok"] and r["changes"] == 3000, r
        for key in ("changes_per_s", "cpu_s_per_million", "peak_rss_mb"):
            assert r[key] > 0, (r["system"], key, r[key])


@bench_check
def test_replication_smoke(tmp_path: Path) -> None:
    """bench/replication.py with 5,000 records, one round, no warm-up run: the replicator and MirrorMaker 2's
    source connector on Sluice and on Kafka Connect each copied every record."""
    output = tmp_path / "replication.json"
    command = [
        sys.executable,
        str(REPO / "bench" / "replication.py"),
        "--records",
        "5000",
        "--rounds",
        "1",
        "--warmup-runs",
        "0",
    ]
    _run_bench([*command, "--output", str(output)], tmp_path)
    runs = json.loads(output.read_text())["runs"]
    assert sorted(r["system"] for r in runs) == ["connect-mirror", "sluice-mirror", "sluice-replicator"]
    for r in runs:
        assert r["ok"] and r["copied"] == r["records"] == 5000, r
        for key in ("records_per_s", "cpu_s_per_million", "peak_rss_mb"):
            assert r[key] > 0, (r["system"], key, r[key])


@bench_check
def test_exactly_once_smoke(tmp_path: Path) -> None:
    """bench/exactly_once.py with 5,000 lines, one round, no warm-up run, exactly once on each system: the
    FileStreamSource delivered every line once to a read_committed consumer."""
    output = tmp_path / "exactly_once.json"
    command = [
        sys.executable,
        str(REPO / "bench" / "exactly_once.py"),
        "--lines",
        "5000",
        "--rounds",
        "1",
        "--warmup-runs",
        "0",
    ]
    _run_bench([*command, "--systems", "connect-eos,sluice-eos", "--output", str(output)], tmp_path)
    runs = json.loads(output.read_text())["runs"]
    assert sorted(r["system"] for r in runs) == ["connect-eos", "sluice-eos"]
    for r in runs:
        assert r["ok"] and r["lines"] == 5000, r
        for key in ("lines_per_s", "cpu_s_per_million", "peak_rss_mb"):
            assert r[key] > 0, (r["system"], key, r[key])
