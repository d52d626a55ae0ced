"""Exactly-once sources (KIP-618): a FileStreamSource on a distributed worker with
``exactly.once.source.support=enabled`` — Sluice's built-in, and Kafka's own connect-file
jar run by Sluice's JVM task host, against Kafka's on Apache Kafka Connect 4.3.1 — and the
same at least once on each, to show what exactly once costs. Same broker, same machine, one
run, alternating order.

    .venv/bin/python bench/exactly_once.py [--lines 1000000] [--rounds 3] [--warmup-runs 1]
        [--systems connect-eos,sluice-eos,sluice-java-eos,connect-alo,sluice-alo]
        [--output /tmp/sluice-exactly-once.json]

Starts one Kafka broker with the project's tooling and writes one input file of
``--lines`` lines. Each run starts a fresh distributed worker (its own group and internal
topics), warms it with a 10,000-line copy through the same connector class (then deleted),
and measures from the creation of a one-task FileStreamSource (``transaction.boundary=poll``,
Kafka's default, with exactly once) until a ``read_committed`` consumer has read every line
from the run's topic: lines/s, CPU seconds per million lines of the worker's process tree,
and its peak RSS. Each run checks that the topic holds every line exactly once, in order
(a digest); a run that does not is FAILED. Prints a table of the medians and writes every
run to ``--output``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.harness.data import write_input  # noqa: E402
from bench.harness.page import add_warmup_runs, alternating, chosen_systems, log, median, ratio, runs_ok  # noqa: E402
from bench.harness.procs import PeakRss, sample_tree  # noqa: E402
from bench.harness.runs import JAVA_FILE_VERSION  # noqa: E402
from bench.harness.workers import (  # noqa: E402
    BenchWorker,
    ConnectDistributedWorker,
    SluiceDistributedWorker,
    java_task_settings,
)
from sluice_devtools import jars  # noqa: E402
from sluice_devtools.kafka import KafkaBroker  # noqa: E402
from tests.integration.workers import TEST_PLUGINS  # noqa: E402

STRING = "org.apache.kafka.connect.storage.StringConverter"
WARM_LINES = 10_000
SYSTEMS = ("connect-eos", "sluice-eos", "sluice-java-eos", "connect-alo", "sluice-alo")
LABELS = {
    "connect-eos": "Kafka Connect 4.3.1, exactly once",
    "sluice-eos": "Sluice, exactly once",
    "sluice-java-eos": "Kafka's FileStreamSource on Sluice, exactly once",
    "connect-alo": "Kafka Connect 4.3.1, at least once",
    "sluice-alo": "Sluice, at least once",
}


class _CommittedReader:
    """Reads partition 0 of a topic ``read_committed`` as it fills, keeping a digest of the
    values in order."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        from confluent_kafka import Consumer, TopicPartition

        self._consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"bench-eos-{topic}",
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
                "topic.metadata.refresh.interval.ms": 500,
            }
        )
        self._consumer.assign([TopicPartition(topic, 0, 0)])
        self.digest = hashlib.sha256()
        self.count = 0

    def read(self) -> int:
        for message in self._consumer.consume(10_000, 0.05):
            if message.error() is None:
                self.digest.update((message.value() or b"") + b"\n")
                self.count += 1
        return self.count

    def close(self) -> None:
        self._consumer.close()


def _source(name: str, file: Path, topic: str, exactly_once: bool, java: bool = False) -> dict[str, str]:
    config = {
        "name": name,
        "connector.class": "FileStreamSource",
        "tasks.max": "1",
        "file": str(file),
        "topic": topic,
        "key.converter": STRING,
        "value.converter": STRING,
    }
    if exactly_once:
        config["exactly.once.support"] = "required"
    if java:  # Kafka's Java connector of the same name, from connect-file on plugin.path
        config["connector.plugin.version"] = JAVA_FILE_VERSION
    return config


def _worker(system: str, run_dir: Path, bootstrap: str, group: str) -> BenchWorker:
    exactly_once = {"exactly.once.source.support": "enabled" if system.endswith("-eos") else "disabled"}
    if system.startswith("connect"):
        return ConnectDistributedWorker(run_dir, bootstrap, "connect", group, extra=exactly_once)
    if system == "sluice-java-eos":
        plugins = {"plugin.path": f"{TEST_PLUGINS},{jars.kafka_connect_classpath()[1]}", **java_task_settings()}
        return SluiceDistributedWorker(run_dir, bootstrap, "sluice", group, extra={**exactly_once, **plugins})
    # the file source's task is Python: only the JIT setting, as in the other benchmarks
    return SluiceDistributedWorker(
        run_dir, bootstrap, "sluice", group, extra={**exactly_once, "spark.driver.extraJavaOptions": None}
    )


def _wait(what: str, condition: Any, deadline: float, worker: BenchWorker, name: str) -> None:
    next_check = 0.0
    while not condition():
        now = time.monotonic()
        if now >= next_check:
            worker.check_alive()
            trace = worker.failure_trace(name)
            if trace:
                raise RuntimeError(f"{what}: {name} FAILED:\n{trace}")
            next_check = now + 1.0
        if now > deadline:
            raise RuntimeError(f"{what}: not done in time\n{worker.log_tail()}")


def run_once(
    system: str, run: str, work: Path, broker: KafkaBroker, inputs: dict[str, Any], lines: int
) -> dict[str, Any]:
    run_dir = work / run
    run_dir.mkdir()
    exactly_once = system.endswith("-eos")
    java = system == "sluice-java-eos"
    result: dict[str, Any] = {"system": system, "run": run, "lines": lines, "ok": False}
    worker = _worker(system, run_dir, broker.bootstrap, f"bench-eos-{run}")
    sampler: PeakRss | None = None
    readers: list[_CommittedReader] = []
    try:
        worker.launch()
        sampler = PeakRss(worker.pid)
        sampler.start()
        worker.wait_rest_ready()
        for topic in (f"{run}-warm", f"{run}-copy"):
            broker.create_topic(topic)
        warm = _CommittedReader(broker.bootstrap, f"{run}-warm")
        copy = _CommittedReader(broker.bootstrap, f"{run}-copy")
        readers = [warm, copy]
        worker.create_connector(_source("warm", inputs["warm"].path, f"{run}-warm", exactly_once, java))
        _wait("warm-up", lambda: warm.read() >= WARM_LINES, time.monotonic() + 300, worker, "warm")
        worker.delete_connector("warm")
        started = time.monotonic()
        cpu_before = sample_tree(worker.pid).cpu_seconds
        worker.create_connector(_source("copy", inputs["copy"].path, f"{run}-copy", exactly_once, java))
        _wait("copy", lambda: copy.read() >= lines, started + max(300.0, lines / 2_000), worker, "copy")
        elapsed = time.monotonic() - started
        cpu = sample_tree(worker.pid).cpu_seconds - cpu_before
        peak = sampler.stop()
        sampler = None
        result.update(
            {
                "seconds": elapsed,
                "lines_per_s": lines / elapsed,
                "cpu_s_per_million": cpu / lines * 1e6,
                "peak_rss_mb": peak / 2**20,
            }
        )
        time.sleep(1.0)  # nothing more may come: a duplicate would show in the count
        copy.read()
        if copy.count != lines:
            raise RuntimeError(f"{copy.count:,} lines read, not {lines:,}")
        if copy.digest.hexdigest() != inputs["copy"].sha256:
            raise RuntimeError("the topic's lines differ from the file's")
        result["ok"] = True
    except Exception as exc:  # noqa: BLE001 - reported as a FAILED run
        result["error"] = str(exc)[-3000:]
    finally:
        if sampler is not None:
            sampler.stop()
        for reader in readers:
            reader.close()
        worker.stop()
    figures = (
        f"{result['lines_per_s']:,.0f} lines/s, {result['cpu_s_per_million']:.1f} CPU s/M, "
        f"peak RSS {result['peak_rss_mb']:,.0f} MB"
        if "lines_per_s" in result
        else ""
    )
    log(f"{run}: {LABELS[system]}: {'ok' if result['ok'] else 'FAILED ' + result['error'][:300]} {figures}")
    return result


def table(runs: list[dict[str, Any]], systems: list[str]) -> str:
    """Markdown: the medians of the successful runs of each system; each Sluice figure
    against Kafka Connect's in the same mode, and exactly once against at least once."""

    def of(system: str, key: str) -> float | None:
        return median([r for r in runs if r["system"] == system], key)

    lines = [
        "| system | runs ok | lines/s | vs Kafka Connect | vs at least once | CPU s per M lines | peak RSS MB |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for system in systems:
        rate = of(system, "lines_per_s")
        mode = system.rsplit("-", 1)[1]
        versus = ratio(rate, of(f"connect-{mode}", "lines_per_s")) if system.startswith("sluice") else "–"
        # exactly once against at least once on the same system (none for Java on Sluice)
        cost = ratio(rate, of(system.replace("-eos", "-alo"), "lines_per_s")) if mode == "eos" else "–"
        cpu, rss = of(system, "cpu_s_per_million"), of(system, "peak_rss_mb")
        lines.append(
            f"| {LABELS[system]} | {runs_ok(runs, system)} | {rate or 0:,.0f} | {versus} | {cost} "
            f"| {cpu or 0:.1f} | {rss or 0:,.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    add_warmup_runs(parser)
    parser.add_argument("--output", type=Path, default=Path("/tmp/sluice-exactly-once.json"))
    args = parser.parse_args(argv)
    systems = chosen_systems(parser, args.systems, SYSTEMS)
    log("fetching Kafka Connect (first use only)")
    jars.kafka_connect_classpath()
    work = Path(tempfile.mkdtemp(prefix="sluice-exactly-once-"))
    broker = KafkaBroker(work / "kafka", heap="1g")
    runs: list[dict[str, Any]] = []
    try:
        broker.start(timeout=120)
        inputs = {
            "warm": write_input(work / "warm.txt", WARM_LINES),
            "copy": write_input(work / "copy.txt", args.lines),
        }
        # unmeasured runs: first runs are slower, whoever goes first
        for warmup, system in alternating(systems, args.warmup_runs):
            run_once(system, f"warmup{warmup}-{system}", work, broker, inputs, args.lines)
        for round_, system in alternating(systems, args.rounds):
            runs.append({**run_once(system, f"r{round_}-{system}", work, broker, inputs, args.lines), "round": round_})
    finally:
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)
    args.output.write_text(json.dumps({"command": " ".join(sys.argv), "runs": runs}, indent=2))
    print(table(runs, systems))
    return 0 if all(r["ok"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
