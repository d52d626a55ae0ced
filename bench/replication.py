"""Copying a topic between two Kafka clusters: Sluice's bundled ``replicator`` and
MirrorMaker 2's ``MirrorSourceConnector`` on Sluice, against ``MirrorSourceConnector`` on
Apache Kafka Connect 4.3.1 — same brokers, same machine, one run, alternating order.

    .venv/bin/python bench/replication.py [--records 1000000] [--rounds 3] [--warmup-runs 1]
        [--systems connect-mirror,sluice-replicator,sluice-mirror] [--output /tmp/replication.json]

Starts two Kafka brokers with the project's tooling (source and destination), fills one
topic of the source with ``--records`` records of 100 random bytes (no key), then in each
round runs each system once on a fresh worker process whose cluster is the destination
(which system goes first turns every round), after ``--warmup-runs`` unmeasured copies by each
system (one by default). A run warms its worker with a small copy first (1,000 records through the same
connector class, then deleted), then measures from
the creation of the connector until the destination topic holds every record: records/s,
CPU seconds per million records of the worker's process tree, and its peak RSS. Each run
checks that the copy holds exactly the source's records, in order (a digest of every
value); a run that does not is FAILED. Prints a table of the medians and writes every run
to ``--output``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.harness.page import add_warmup_runs, alternating, chosen_systems  # noqa: E402
from bench.harness.procs import PeakRss, sample_tree  # noqa: E402
from bench.harness.workers import BenchWorker, ConnectWorker, SluiceWorker, java_task_settings  # noqa: E402
from sluice_devtools import jars  # noqa: E402
from sluice_devtools.kafka import KafkaBroker  # noqa: E402
from tests.integration.workers import TEST_PLUGINS  # noqa: E402

SOURCE_TOPIC = "bench-source"
WARM_TOPIC = "bench-warm"
WARM_RECORDS = 1_000
RECORD_BYTES = 100
BYTES_CONVERTER = "org.apache.kafka.connect.converters.ByteArrayConverter"
REPLICATOR_BYTES = "io.confluent.connect.replicator.util.ByteArrayConverter"
SYSTEMS = ("connect-mirror", "sluice-replicator", "sluice-mirror")
LABELS = {
    "connect-mirror": "MirrorSourceConnector on Kafka Connect 4.3.1",
    "sluice-replicator": "replicator on Sluice",
    "sluice-mirror": "MirrorSourceConnector on Sluice",
}


def _log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def _fill(bootstrap: str, topic: str, count: int) -> str:
    """``count`` records of random bytes into partition 0 of ``topic``; their digest."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1 << 20})
    digest = hashlib.sha256()
    block = os.urandom(RECORD_BYTES * 10_000)
    for i in range(count):
        start = (i % 10_000) * RECORD_BYTES
        value = block[start : start + RECORD_BYTES - 8] + i.to_bytes(8, "big")
        digest.update(value)
        while True:
            try:
                producer.produce(topic, value, partition=0)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0
    return digest.hexdigest()


class _EndOffsets:
    """The end offset of partition 0 of topics on one cluster, through one consumer for a
    whole run (asked every 50 ms while a copy is measured)."""

    def __init__(self, bootstrap: str) -> None:
        from confluent_kafka import Consumer

        self._consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-replication-watch"})

    def __call__(self, topic: str) -> int:
        from confluent_kafka import TopicPartition

        try:
            metadata = self._consumer.list_topics(topic, timeout=10).topics.get(topic)
            if metadata is None or metadata.error is not None:  # librdkafka answers for missing topics too
                return 0
            return int(self._consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1])
        except Exception:  # noqa: BLE001 - not created yet
            return 0

    def close(self) -> None:
        self._consumer.close()


def _digest(bootstrap: str, topic: str, count: int) -> str:
    """The digest of the first ``count`` values of partition 0 of ``topic``."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "bench-replication-check", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    digest = hashlib.sha256()
    seen = 0
    deadline = time.monotonic() + 300
    try:
        while seen < count and time.monotonic() < deadline:
            for message in consumer.consume(10_000, 1.0):
                if message.error() is None:
                    digest.update(message.value() or b"")
                    seen += 1
                    if seen == count:
                        break
    finally:
        consumer.close()
    return digest.hexdigest()


def _connector(
    system: str, name: str, topic: str, run: str, source: str, destination: str
) -> tuple[dict[str, str], str]:
    """The connector config of ``system`` copying ``topic``, and the topic it writes."""
    if system == "sluice-replicator":
        return {
            "name": name,
            "connector.class": "io.confluent.connect.replicator.ReplicatorSourceConnector",
            "tasks.max": "1",
            "key.converter": REPLICATOR_BYTES,
            "value.converter": REPLICATOR_BYTES,
            "header.converter": REPLICATOR_BYTES,
            "src.kafka.bootstrap.servers": source,
            "dest.kafka.bootstrap.servers": destination,
            "topic.whitelist": topic,
            "topic.rename.format": f"{run}.${{topic}}",
            "topic.config.sync": "false",
        }, f"{run}.{topic}"
    # MirrorMaker 2's DefaultReplicationPolicy names the copy "<source alias>.<topic>"
    return {
        "name": name,
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "tasks.max": "1",
        "key.converter": BYTES_CONVERTER,
        "value.converter": BYTES_CONVERTER,
        "header.converter": BYTES_CONVERTER,
        "source.cluster.alias": run,
        "target.cluster.alias": "destination",
        "source.cluster.bootstrap.servers": source,
        "target.cluster.bootstrap.servers": destination,
        "topics": topic,
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "sync.topic.acls.enabled": "false",
        "sync.topic.configs.enabled": "false",
    }, f"{run}.{topic}"


def _worker(system: str, run_dir: Path, destination: str, mirror_dir: Path) -> BenchWorker:
    if system == "connect-mirror":
        return ConnectWorker(run_dir, destination, "connect", plugin_dirs=[mirror_dir])
    extra: dict[str, str | None]
    if system == "sluice-mirror":
        extra = {"plugin.path": f"{TEST_PLUGINS},{mirror_dir}", **java_task_settings()}
    else:
        # the replicator's tasks are Python: only the JIT setting, as the Java runs have it
        extra = {"spark.driver.extraJavaOptions": None}
    return SluiceWorker(run_dir, destination, "sluice", extra=extra)


def _wait(what: str, condition: Any, deadline: float, worker: BenchWorker, name: str) -> None:
    while not condition():
        worker.check_alive()
        trace = worker.failure_trace(name)
        if trace:
            raise RuntimeError(f"{what}: {name} FAILED:\n{trace}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not done in time\n{worker.log_tail()}")
        time.sleep(0.05)


def run_once(
    system: str, run: str, work: Path, source: KafkaBroker, destination: KafkaBroker, records: int, digest: str
) -> dict[str, Any]:
    run_dir = work / run
    run_dir.mkdir()
    mirror_dir = work / "plugins"  # a plugin.path entry holding MirrorMaker 2 alone
    result: dict[str, Any] = {"system": system, "run": run, "records": records, "ok": False}
    worker = _worker(system, run_dir, destination.bootstrap, mirror_dir)
    sampler: PeakRss | None = None
    end_offset = _EndOffsets(destination.bootstrap)
    try:
        worker.launch()
        sampler = PeakRss(worker.pid)
        sampler.start()
        worker.wait_rest_ready()
        warm, warm_topic = _connector(system, "warm", WARM_TOPIC, f"{run}w", source.bootstrap, destination.bootstrap)
        worker.create_connector(warm)
        _wait(
            "warm-up",
            lambda: end_offset(warm_topic) >= WARM_RECORDS,
            time.monotonic() + 300,
            worker,
            "warm",
        )
        worker.delete_connector("warm")
        config, topic = _connector(system, "copy", SOURCE_TOPIC, run, source.bootstrap, destination.bootstrap)
        started = time.monotonic()
        cpu_before = sample_tree(worker.pid).cpu_seconds
        worker.create_connector(config)
        _wait(
            "copy",
            lambda: end_offset(topic) >= records,
            started + max(300.0, records / 2_000),
            worker,
            "copy",
        )
        elapsed = time.monotonic() - started
        cpu = sample_tree(worker.pid).cpu_seconds - cpu_before
        peak = sampler.stop()
        sampler = None
        copied = end_offset(topic)
        result.update(
            {
                "seconds": elapsed,
                "records_per_s": records / elapsed,
                "cpu_s_per_million": cpu / records * 1e6,
                "peak_rss_mb": peak / 2**20,
                "copied": copied,
            }
        )
        if copied != records:
            raise RuntimeError(f"{copied:,} records copied, not {records:,}")
        if _digest(destination.bootstrap, topic, records) != digest:
            raise RuntimeError("the copy's values differ from the source's")
        result["ok"] = True
    except Exception as exc:  # noqa: BLE001 - reported as a FAILED run
        result["error"] = str(exc)[-3000:]
    finally:
        if sampler is not None:
            sampler.stop()
        end_offset.close()
        worker.stop()
    figures = (
        f"{result['records_per_s']:,.0f} records/s, {result['cpu_s_per_million']:.1f} CPU s/M, "
        f"peak RSS {result['peak_rss_mb']:,.0f} MB"
        if "records_per_s" in result
        else ""
    )
    _log(f"{run}: {LABELS[system]}: {'ok' if result['ok'] else 'FAILED ' + result['error'][:300]} {figures}")
    return result


def table(runs: list[dict[str, Any]], systems: list[str]) -> str:
    """Markdown: the medians of the successful runs of each system, and the ratios of
    throughput to Kafka Connect's."""

    def median(system: str, key: str) -> float | None:
        values = [r[key] for r in runs if r["system"] == system and r["ok"]]
        return statistics.median(values) if values else None

    base = median("connect-mirror", "records_per_s")
    lines = [
        "| system | runs ok | records/s | vs Kafka Connect | CPU s per M records | peak RSS MB |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for system in systems:
        rate = median(system, "records_per_s")
        ok = sum(1 for r in runs if r["system"] == system and r["ok"])
        total = sum(1 for r in runs if r["system"] == system)
        ratio = f"{rate / base:.2f}×" if rate and base else "–"
        cpu, rss = median(system, "cpu_s_per_million"), median(system, "peak_rss_mb")
        lines.append(
            f"| {LABELS[system]} | {ok}/{total} | {rate or 0:,.0f} | {ratio} | {cpu or 0:.1f} | {rss or 0:,.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    add_warmup_runs(parser)
    parser.add_argument("--output", type=Path, default=Path("/tmp/sluice-replication.json"))
    args = parser.parse_args(argv)
    systems = chosen_systems(parser, args.systems, SYSTEMS)
    _log("fetching Kafka Connect and MirrorMaker 2 (first use only)")
    jars.kafka_connect_classpath()
    jars.fetch_all()
    work = Path(tempfile.mkdtemp(prefix="sluice-replication-"))
    source, destination = KafkaBroker(work / "source", heap="1g"), KafkaBroker(work / "destination", heap="1g")
    runs: list[dict[str, Any]] = []
    try:
        source.start(timeout=120)
        destination.start(timeout=120)
        (work / "plugins").mkdir()
        (work / "plugins" / "connect-mirror").symlink_to(jars.mirror_maker_plugin(), target_is_directory=True)
        source.create_topic(SOURCE_TOPIC)
        source.create_topic(WARM_TOPIC)
        _log(f"filling {SOURCE_TOPIC} with {args.records:,} records of {RECORD_BYTES} bytes")
        digest = _fill(source.bootstrap, SOURCE_TOPIC, args.records)
        _fill(source.bootstrap, WARM_TOPIC, WARM_RECORDS)
        # Both brokers are fresh JVMs: the first copy would also pay for their JIT. One write
        # of as many records into the destination and one read of the source warm them.
        destination.create_topic(WARM_TOPIC)
        _fill(destination.bootstrap, WARM_TOPIC, args.records)
        _digest(source.bootstrap, SOURCE_TOPIC, args.records)
        # unmeasured copies: first runs are slower, whoever goes first
        for warmup, system in alternating(systems, args.warmup_runs):
            run_once(system, f"warmup{warmup}-{system}", work, source, destination, args.records, digest)
        for round_, system in alternating(systems, args.rounds):
            run = f"r{round_}-{system}"
            runs.append({**run_once(system, run, work, source, destination, args.records, digest), "round": round_})
    finally:
        destination.stop()
        source.stop()
        shutil.rmtree(work, ignore_errors=True)
    args.output.write_text(json.dumps({"command": " ".join(sys.argv), "runs": runs}, indent=2))
    print(table(runs, systems))
    return 0 if all(r["ok"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
