"""Exactly-once source delivery (issue 34, Kafka's KIP-618) on a distributed worker with
``exactly.once.source.support=enabled``, the behaviours of Kafka's
``ExactlyOnceSourceIntegrationTest``: with ``poll`` and ``interval`` boundaries, a
``read_committed`` consumer sees each task's seqnos once, with no gap and no duplicate,
across a SIGKILL of the worker; with the ``connector`` boundary, only the records of the
transactions the task committed are visible, and the stored offsets are those of the
last committed transaction."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import httpx2
import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.helpers import wait_until
from tests.integration.workers import QUICK_GROUP_SETTINGS, DistributedWorker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

SETTINGS: dict[str, str | None] = {
    **QUICK_GROUP_SETTINGS,
    "exactly.once.source.support": "enabled",
    "offset.flush.interval.ms": "1000",
}
VERIFIABLE = "org.apache.kafka.connect.tools.VerifiableSourceConnector"
BOUNDARIES = "sluice_test_plugins.TransactionBoundarySourceConnector"


class TopicReader:
    """Everything a ``read_committed`` consumer sees on partition 0 of a topic:
    ``(key, value)`` strings in order."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"check-{topic}",
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
            }
        )
        self.consumer.assign([TopicPartition(topic, 0, 0)])
        self.records: list[tuple[str, str]] = []

    def read(self) -> list[tuple[str, str]]:
        """Everything read so far, after reading what is there now."""
        while True:
            batch = self.consumer.consume(1000, 0.5)
            self.records.extend(
                ((m.key() or b"").decode(), (m.value() or b"").decode()) for m in batch if m.error() is None
            )
            if len(batch) < 1000:  # caught up (records keep coming while sources run)
                return self.records

    def seqnos(self) -> dict[str, list[int]]:
        by_key: dict[str, list[int]] = defaultdict(list)
        for key, value in self.read():
            by_key[key].append(int(value))
        return by_key

    def close(self) -> None:
        self.consumer.close()


def _put(worker: DistributedWorker, name: str, config: dict[str, str]) -> None:
    answer = httpx2.put(f"{worker.url}/connectors/{name}/config", json=config, timeout=60)
    assert answer.status_code in (200, 201), answer.text


def _running(worker: DistributedWorker, name: str, tasks: int) -> bool:
    answer = worker.get(f"/connectors/{name}/status")
    if answer.status_code != 200:
        return False
    body = answer.json()
    return body["connector"]["state"] == "RUNNING" and [t["state"] for t in body["tasks"]] == ["RUNNING"] * tasks


def _offsets(worker: DistributedWorker, name: str) -> list[dict[str, Any]]:
    answer = worker.get(f"/connectors/{name}/offsets")
    assert answer.status_code == 200, answer.text
    return answer.json()["offsets"]  # type: ignore[no-any-return]


def _counts(readers: dict[str, TopicReader], tasks: dict[str, int]) -> dict[str, dict[str, int]]:
    return {kind: {task: len(seqnos) for task, seqnos in readers[kind].seqnos().items()} for kind in tasks}


def test_sources_deliver_exactly_once_across_a_sigkill(kafka_bootstrap, unique_name, tmp_path):
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    topics = {kind: f"{unique_name}-{kind}" for kind in ("poll", "interval", "connector")}
    for future in admin.create_topics([NewTopic(t, 1, 1) for t in topics.values()]).values():
        future.result(30)
    names = {kind: f"{unique_name[:40]}-{kind}" for kind in topics}
    tasks = {"poll": 2, "interval": 1}
    readers = {kind: TopicReader(kafka_bootstrap, topic) for kind, topic in topics.items()}
    group = unique_name
    first = DistributedWorker(tmp_path / "w1", kafka_bootstrap, "w1", group, extra=SETTINGS)
    second = DistributedWorker(tmp_path / "w2", kafka_bootstrap, "w2", group, extra=SETTINGS)
    try:
        first.start(timeout=180)
        verifiable = {"connector.class": VERIFIABLE, "throughput": "200", "exactly.once.support": "required"}
        _put(first, names["poll"], {**verifiable, "tasks.max": "2", "topic": topics["poll"]})
        _put(
            first,
            names["interval"],
            {
                **verifiable,
                "tasks.max": "1",
                "topic": topics["interval"],
                "transaction.boundary": "interval",
                "transaction.boundary.interval.ms": "500",
            },
        )
        _put(
            first,
            names["connector"],
            {
                "connector.class": BOUNDARIES,
                "topic": topics["connector"],
                "batches": "30",
                "transaction.boundary": "connector",
                "exactly.once.support": "required",
            },
        )

        def progress(at_least: dict[str, int]) -> bool:
            for kind, count in tasks.items():
                seen = readers[kind].seqnos()
                if any(len(seen.get(str(task), [])) < at_least[kind] for task in range(count)):
                    return False
            return True

        wait_until(
            lambda: progress({"poll": 300, "interval": 300}),
            timeout=240,
            message=lambda: f"seqnos before the kill: {_counts(readers, tasks)}\n{first.log()[-5000:]}",
        )

        # Connector-defined boundaries: batch b of ten seqnos is aborted when b % 3 == 2.
        expected = [n for n in range(300) if (n // 10) % 3 != 2]
        wait_until(
            lambda: len(readers["connector"].read()) >= len(expected),
            timeout=120,
            message=lambda: f"{len(readers['connector'].records)} of {len(expected)} committed records",
        )
        assert [int(value) for _, value in readers["connector"].read()] == expected
        # the last batch (29) was aborted: the offset is that of batch 28's last record
        wait_until(
            lambda: (
                _offsets(first, names["connector"])
                == [{"partition": {"source": "boundaries"}, "offset": {"seqno": 289}}]
            ),
            timeout=30,
            message=lambda: f"offsets {_offsets(first, names['connector'])}",
        )

        before = {kind: {t: max(s) for t, s in readers[kind].seqnos().items()} for kind in tasks}
        first.kill()
        second.start(timeout=180)
        wait_until(
            lambda: all(_running(second, names[kind], count) for kind, count in tasks.items()),
            timeout=180,
            message=lambda: f"tasks RUNNING on the second worker\n{second.log()[-5000:]}",
        )
        wait_until(
            lambda: all(
                max(readers[kind].seqnos().get(str(task), [-1])) > before[kind].get(str(task), -1) + 300
                for kind, count in tasks.items()
                for task in range(count)
            ),
            timeout=180,
            message=lambda: f"progress after the kill from {before}\n{second.log()[-5000:]}",
        )
        for kind in tasks:
            assert httpx2.put(f"{second.url}/connectors/{names[kind]}/stop", timeout=60).status_code == 204
        wait_until(
            lambda: all(
                second.get(f"/connectors/{names[kind]}/status").json()["connector"]["state"] == "STOPPED"
                for kind in tasks
            ),
            timeout=120,
            message="connectors STOPPED",
        )

        for kind, count in tasks.items():
            seen = readers[kind].seqnos()
            assert sorted(seen) == [str(task) for task in range(count)], kind
            for task, seqnos in seen.items():
                assert seqnos == list(range(len(seqnos))), f"{kind} task {task}: gaps or duplicates"
                # what a read_committed consumer saw is what the offsets say was delivered
            stored = {o["partition"]["id"]: o["offset"]["seqno"] for o in _offsets(second, names[kind])}
            assert stored == {task: len(seen[str(task)]) - 1 for task in range(count)}, kind
        # the connector-defined boundaries resumed after offset 289: nothing more was committed
        assert [int(value) for _, value in readers["connector"].read()] == expected
        assert second.stop() == 0, second.log()
    finally:
        for reader in readers.values():
            reader.close()
        for worker in (first, second):
            worker.kill()


def _config_records(bootstrap: str, topic: str) -> list[tuple[str, Any]]:
    """The ``(key, JSON value)`` records of a config topic, in order."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{topic}", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    records: list[tuple[str, Any]] = []
    try:
        while batch := consumer.consume(1000, 1.0):
            for m in batch:
                if m.error() is None:
                    records.append(((m.key() or b"").decode(), json.loads(m.value()) if m.value() else None))
    finally:
        consumer.close()
    return records


def _await_progress(reader: TopicReader, delivered: dict[str, int], count: int) -> None:
    """Wait until each of ``count`` tasks delivered 50 more seqnos than ``delivered``."""

    def progressed() -> bool:
        seen = reader.seqnos()
        return all(len(seen.get(str(task), [])) >= delivered.get(str(task), 0) + 50 for task in range(count))

    wait_until(progressed, timeout=120, message=lambda: f"progress with {count} tasks: {len(reader.records)} records")


def test_reconfiguration_fences_earlier_producers_and_keeps_exactly_once(kafka_bootstrap, unique_name, tmp_path):
    """3 → 5 → 1 → 5 → 3 tasks: each new generation starts after the previous one's
    producers were fenced (the task-count records say how many), a zombie producer with a
    task's transactional id cannot commit once that task started, and every task's seqnos
    arrive exactly once."""
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    topic = f"{unique_name}-t"
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    name = f"{unique_name[:40]}-src"
    group = unique_name
    reader = TopicReader(kafka_bootstrap, topic)
    worker = DistributedWorker(tmp_path / "w", kafka_bootstrap, "w", group, extra=SETTINGS)
    zombie = Producer({"bootstrap.servers": kafka_bootstrap, "transactional.id": f"{group}-{name}-4"})
    try:
        worker.start(timeout=180)
        config = {"connector.class": VERIFIABLE, "throughput": "100", "topic": topic}
        delivered: dict[str, int] = {}
        for step, count in enumerate((3, 5, 1, 5, 3)):
            _put(worker, name, {**config, "tasks.max": str(count)})
            wait_until(lambda count=count: _running(worker, name, count), timeout=120, message=f"{count} tasks RUNNING")
            if step == 0:
                # A zombie with the transactional id of task 4 (not running yet) opens a
                # transaction; task 4's start in the next step fences it.
                zombie.init_transactions(30)
                zombie.begin_transaction()
                zombie.produce(topic, b"zombie", b"4")
                zombie.flush(30)
            _await_progress(reader, delivered, count)
            delivered = {task: len(seqnos) for task, seqnos in reader.seqnos().items()}
            if step == 1:
                with pytest.raises(KafkaException) as fenced:
                    zombie.commit_transaction(30)
                assert "fenced" in str(fenced.value).lower() or "epoch" in str(fenced.value).lower(), fenced.value
        assert httpx2.put(f"{worker.url}/connectors/{name}/stop", timeout=60).status_code == 204
        wait_until(
            lambda: worker.get(f"/connectors/{name}/status").json()["connector"]["state"] == "STOPPED",
            timeout=120,
            message="connector STOPPED",
        )
        seen = reader.seqnos()
        assert sorted(seen) == ["0", "1", "2", "3", "4"]
        for task, seqnos in seen.items():
            assert seqnos == list(range(len(seqnos))), f"task {task}: gaps or duplicates"
        counts = [
            value["task-count"]
            for key, value in _config_records(kafka_bootstrap, f"{group}-configs")
            if key == f"tasks-fencing-{name}"
        ]
        assert counts[:5] == [3, 5, 1, 5, 3], counts
        assert "Fenced the producers of 5 earlier tasks" in worker.log_path.read_text(errors="replace")
        assert worker.stop() == 0, worker.log()
    finally:
        reader.close()
        worker.kill()
