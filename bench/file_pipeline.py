"""Benchmark: file → Kafka → file through one standalone Sluice worker.

    .venv/bin/python bench/file_pipeline.py [--lines 1000000] [--converter string|json]

Starts a broker with the project's tooling and one ``sluice standalone`` worker
process (local[2] Spark), warms it up with a small pipeline, then creates a
FileStreamSource and a FileStreamSink over an input file of N lines of 100 bytes
(99 characters plus ``\\n``) and measures, until the sink file equals the input:

* records per second end to end (connector creation → last line in the sink file);
* peak RSS of the worker process tree (Python driver, Spark's JVM, Python workers).

A run whose sink file differs from its input fails instead of reporting a figure.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.harness.procs import PeakRss  # noqa: E402
from sluice_devtools.kafka import KafkaBroker  # noqa: E402
from tests import http_client  # noqa: E402
from tests.integration.workers import StandaloneWorker  # noqa: E402

CONVERTERS = {
    "string": {"value.converter": "org.apache.kafka.connect.storage.StringConverter"},
    "json": {
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
    },
}


def count_lines(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


def run_pipeline(
    worker: StandaloneWorker, work: Path, name: str, lines: int, converter: dict[str, str], timeout: float
) -> float:
    source_file, sink_file = work / f"{name}.in", work / f"{name}.out"
    with source_file.open("wb") as out:
        for i in range(lines):
            out.write(f"{i:012d}-".encode() + b"x" * 86 + b"\n")
    topic = f"bench-{name}"
    common = {"tasks.max": "1", **converter}
    start = time.monotonic()
    for cfg in (
        {"name": f"{name}-source", "connector.class": "FileStreamSource", "file": str(source_file), "topic": topic},
        {"name": f"{name}-sink", "connector.class": "FileStreamSink", "file": str(sink_file), "topics": topic},
    ):
        r = http_client.post(
            f"{worker.url}/connectors", json={"name": cfg["name"], "config": {**cfg, **common}}, timeout=60
        )
        r.raise_for_status()
    deadline = start + timeout
    while count_lines(sink_file) < lines:
        if time.monotonic() > deadline:
            raise SystemExit(f"{name}: only {count_lines(sink_file)} of {lines} lines after {timeout} s")
        time.sleep(0.05)
    elapsed = time.monotonic() - start
    digest = lambda p: hashlib.sha256(p.read_bytes()).hexdigest()  # noqa: E731
    if digest(sink_file) != digest(source_file):
        raise SystemExit(f"{name}: the sink file differs from the input (lost, repeated or reordered lines)")
    for suffix in ("source", "sink"):
        http_client.delete(f"{worker.url}/connectors/{name}-{suffix}", timeout=60)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--converter", choices=list(CONVERTERS), action="append")
    parser.add_argument("--json", action="store_true", help="print results as JSON")
    args = parser.parse_args()
    converters = args.converter or ["string", "json"]
    results = []
    with tempfile.TemporaryDirectory(prefix="sluice-bench-") as tmp:
        work = Path(tmp)
        broker = KafkaBroker(work / "kafka")
        bootstrap = broker.start()
        try:
            for conv in converters:
                worker = StandaloneWorker(work / f"worker-{conv}", bootstrap, f"bench-{conv}")
                worker.start()
                try:
                    run_pipeline(worker, work, f"warmup-{conv}", 1000, CONVERTERS[conv], 180)
                    sampler = PeakRss(worker.process.pid)  # type: ignore[union-attr]
                    sampler.start()
                    elapsed = run_pipeline(worker, work, f"run-{conv}", args.lines, CONVERTERS[conv], 1800)
                    peak = sampler.stop()
                finally:
                    worker.stop()
                results.append(
                    {
                        "converter": conv,
                        "lines": args.lines,
                        "seconds": round(elapsed, 2),
                        "records_per_s": round(args.lines / elapsed),
                        "mb_per_s": round(args.lines * 100 / elapsed / 1e6, 2),
                        "peak_rss_mb": round(peak / 2**20),
                    }
                )
        finally:
            broker.stop()
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    if args.json:
        print(json.dumps({"machine": machine, "results": results}, indent=2))
        return
    print(f"machine: {machine}")
    print("| value converter | lines | seconds | records/s | MB/s | peak worker RSS (MB) |")
    print("|---|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['converter']} | {r['lines']:,} | {r['seconds']} | {r['records_per_s']:,} | {r['mb_per_s']} | "
            f"{r['peak_rss_mb']} |"
        )


if __name__ == "__main__":
    main()
