"""Exactly-once source delivery (issue 34, Kafka's KIP-618) on a distributed worker with
``exactly.once.source.support=enabled``, the behaviours of Kafka's
``ExactlyOnceSourceIntegrationTest``: with ``poll`` and ``interval`` boundaries, a
``read_committed`` consumer sees each task's seqnos once, with no gap and no duplicate,
across a SIGKILL of the worker; with the ``connector`` boundary, only the records of the
transactions the task committed are visible, and the stored offsets are those of the
last committed transaction."""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from sluice.kafka.offset_format import encode_offset_key, encode_offset_value
from sluice_devtools.kafka import KafkaBroker
from tests import http_client
from tests.helpers import wait_until, watermark_offsets
from tests.integration.group_servers import started
from tests.integration.kafka_connect_reference import ConnectDistributedWorker
from tests.integration.workers import QUICK_GROUP_SETTINGS, DistributedWorker, start_together

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


def _one_partition_topic(bootstrap: str, topic: str) -> str:
    """Create ``topic`` with one partition (a task's seqnos stay in order) and return its name."""
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept until the topic exists
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    return topic


def _put(worker: DistributedWorker, name: str, config: dict[str, str]) -> None:
    answer = http_client.put(f"{worker.url}/connectors/{name}/config", json=config, timeout=60)
    assert answer.status_code in (200, 201), answer.text


def _running(worker: DistributedWorker, name: str, tasks: int) -> bool:
    answer = worker.get(f"/connectors/{name}/status")
    if answer.status_code != 200:
        return False
    body = answer.json()
    return body["connector"]["state"] == "RUNNING" and [t["state"] for t in body["tasks"]] == ["RUNNING"] * tasks


def _java_test_plugins_env() -> dict[str, str]:
    """A worker's environment that puts Kafka's connect-test-plugins (its Java VerifiableSource)
    on the class path, where Kafka loads them from."""
    from sluice_devtools.jars import kafka_connect_test_plugins_classpath

    return {"CLASSPATH": os.pathsep.join(map(str, kafka_connect_test_plugins_classpath()))}


def _status_of(worker: DistributedWorker, name: str, awaited: str) -> str:
    """What a wait for ``awaited`` reports on timeout: the connector's status, traces included."""
    return f"{awaited}; status: {worker.get(f'/connectors/{name}/status').text[-3000:]}"


def _offsets(worker: DistributedWorker, name: str) -> list[dict[str, Any]]:
    answer = worker.get(f"/connectors/{name}/offsets")
    assert answer.status_code == 200, answer.text
    return answer.json()["offsets"]  # type: ignore[no-any-return]


def _stop(worker: DistributedWorker, *names: str) -> None:
    """``PUT /connectors/{c}/stop`` each of ``names``; wait until all are STOPPED."""
    for name in names:
        assert http_client.put(f"{worker.url}/connectors/{name}/stop", timeout=60).status_code == 204
    wait_until(
        lambda: all(
            worker.get(f"/connectors/{name}/status").json()["connector"]["state"] == "STOPPED" for name in names
        ),
        timeout=120,
        message="connectors STOPPED",
    )


def _assert_each_seqno_once(seen: dict[str, list[int]], tasks: int, label: str = "") -> None:
    """Tasks ``0…tasks-1`` each delivered its seqnos from 0 once, in order, with no gap."""
    assert sorted(seen) == [str(task) for task in range(tasks)], label
    for task, seqnos in seen.items():
        assert seqnos == list(range(len(seqnos))), f"{label}task {task}: gaps or duplicates"


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
        _stop(second, *(names[kind] for kind in tasks))

        for kind, count in tasks.items():
            seen = readers[kind].seqnos()
            _assert_each_seqno_once(seen, count, f"{kind} ")
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


def _await_progress(reader: TopicReader, delivered: dict[str, int], count: int, at_least: int = 50) -> None:
    """Wait until each of ``count`` tasks delivered ``at_least`` more seqnos than ``delivered``."""

    def progressed() -> bool:
        seen = reader.seqnos()
        return all(len(seen.get(str(task), [])) >= delivered.get(str(task), 0) + at_least for task in range(count))

    wait_until(progressed, timeout=180, message=lambda: f"progress with {count} tasks: {len(reader.records)} records")


def test_reconfiguration_fences_earlier_producers_and_keeps_exactly_once(kafka_bootstrap, unique_name, tmp_path):
    """3 → 5 → 1 → 5 → 3 tasks: each new generation starts after the previous one's
    producers were fenced (the task-count records say how many), a zombie producer with a
    task's transactional id cannot commit once that task started, and every task's seqnos
    arrive exactly once."""
    topic = _one_partition_topic(kafka_bootstrap, f"{unique_name}-t")
    name = f"{unique_name[:40]}-src"
    group = unique_name
    reader = TopicReader(kafka_bootstrap, topic)
    worker = DistributedWorker(tmp_path / "w", kafka_bootstrap, "w", group, extra=SETTINGS)
    zombie = Producer({"bootstrap.servers": kafka_bootstrap, "transactional.id": f"{group}-{name}-4"})
    try:
        worker.start(timeout=180)
        config = {"connector.class": VERIFIABLE, "throughput": "100", "topic": topic}
        delivered: dict[str, int] = {}

        def task_counts() -> list[int]:
            return [
                value["task-count"]
                for key, value in _config_records(kafka_bootstrap, f"{group}-configs")
                if key == f"tasks-fencing-{name}"
            ]

        for step, count in enumerate((3, 5, 1, 5, 3)):
            _put(worker, name, {**config, "tasks.max": str(count)})
            # The generation starts once the earlier one is fenced and its count recorded (a
            # restarted task's status says RUNNING from its previous generation meanwhile).
            wait_until(lambda step=step: len(task_counts()) > step, timeout=120, message=f"task count {count} recorded")
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
        _stop(worker, name)
        _assert_each_seqno_once(reader.seqnos(), 5)
        counts = task_counts()
        assert counts[:5] == [3, 5, 1, 5, 3], counts
        assert "Fenced the producers of 5 earlier tasks" in worker.log_path.read_text(errors="replace")
        assert worker.stop() == 0, worker.log()
    finally:
        reader.close()
        worker.kill()


def test_a_zombie_leader_is_fenced_and_the_retried_create_succeeds(kafka_bootstrap, unique_name, tmp_path):
    """Kafka's fenced-leader recovery: a producer that claims the leader's transactional id
    (``connect-cluster-<group.id>``) fences the leader, so the next create fails with a
    REST error saying it may be retried; the retry succeeds (the leader claims its id
    back) and the source delivers exactly once. A transaction the zombie wrote into the
    config topic and aborted is never applied (the worker reads it ``read_committed``)."""
    topic = _one_partition_topic(kafka_bootstrap, f"{unique_name}-t")
    name = f"{unique_name[:40]}-src"
    group = unique_name
    reader = TopicReader(kafka_bootstrap, topic)
    worker = DistributedWorker(tmp_path / "w", kafka_bootstrap, "w", group, extra=SETTINGS)
    zombie = Producer({"bootstrap.servers": kafka_bootstrap, "transactional.id": f"connect-cluster-{group}"})
    try:
        worker.start(timeout=180)
        # The worker claims the leader's id once it has joined as leader, after start():
        # a connector written and removed through it first makes sure the zombie's claim
        # comes after the leader's and fences it, not the other way round.
        stopped = {"connector.class": VERIFIABLE, "throughput": "100", "topic": topic, "tasks.max": "1"}
        created = http_client.post(
            f"{worker.url}/connectors",
            json={"name": f"{name}-first", "config": stopped, "initial_state": "STOPPED"},
            timeout=60,
        )
        assert created.status_code == 201, created.text
        assert http_client.delete(f"{worker.url}/connectors/{name}-first", timeout=60).status_code == 204
        zombie.init_transactions(30)
        zombie.begin_transaction()
        zombie.produce(
            f"{group}-configs",
            key=f"connector-{name}-ghost".encode(),
            value=json.dumps({"properties": {"connector.class": VERIFIABLE, "topic": topic}}).encode(),
        )
        zombie.flush(30)
        zombie.abort_transaction(30)

        config = {"connector.class": VERIFIABLE, "throughput": "100", "topic": topic, "tasks.max": "2"}
        first = http_client.put(f"{worker.url}/connectors/{name}/config", json=config, timeout=60)
        assert first.status_code == 500, first.text
        assert "can be safely retried" in first.json()["message"], first.text
        assert worker.get(f"/connectors/{name}").status_code == 404  # nothing of it was written

        _put(worker, name, config)
        wait_until(lambda: _running(worker, name, 2), timeout=120, message="2 tasks RUNNING")
        _await_progress(reader, {}, 2)
        assert worker.get("/connectors").json() == [name]  # not the aborted ghost
        _stop(worker, name)
        _assert_each_seqno_once(reader.seqnos(), 2)
        assert worker.stop() == 0, worker.log()
    finally:
        reader.close()
        worker.kill()


def test_a_task_writing_to_its_own_offsets_topic_fails_instead_of_deadlocking(kafka_bootstrap, unique_name, tmp_path):
    """Kafka's potential-deadlock check: an exactly-once source whose records go to the
    offsets topic its transactions write to (the connector's own ``offsets.storage.topic``
    here) fails its tasks with a trace that says so, the connector still RUNNING, and
    nothing is written there."""
    offsets_topic = f"{unique_name}-whoops"
    name = f"{unique_name[:40]}-own"
    worker = DistributedWorker(tmp_path / "w", kafka_bootstrap, "w", unique_name, extra=SETTINGS)
    try:
        worker.start(timeout=180)
        config = {
            "connector.class": VERIFIABLE,
            "throughput": "100",
            "topic": offsets_topic,
            "offsets.storage.topic": offsets_topic,
            "transaction.boundary": "interval",
        }
        _put(worker, name, config)

        def failed_trace() -> str | None:
            body = worker.get(f"/connectors/{name}/status").json()
            tasks = body.get("tasks", [])
            if body.get("connector", {}).get("state") == "RUNNING" and tasks and tasks[0]["state"] == "FAILED":
                return str(tasks[0].get("trace"))
            return None

        trace = wait_until(failed_trace, timeout=120, message=lambda: worker.log()[-3000:])
        assert f"'{offsets_topic}', its own offsets topic" in trace, trace
        probe = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": f"check-{offsets_topic}"})
        try:  # not a record, not an offset, not even an aborted transaction's marker
            partitions = probe.list_topics(offsets_topic, timeout=10).topics[offsets_topic].partitions
            assert [watermark_offsets(probe, offsets_topic, p)[1] for p in partitions] == [0] * len(partitions)
        finally:
            probe.close()
        assert worker.stop() == 0, worker.log()
    finally:
        worker.kill()


def _connect_worker(work_dir: Path, bootstrap: str, group: str) -> ConnectDistributedWorker:
    """Kafka Connect 4.3.1 with exactly-once enabled in the group of the Sluice workers of
    ``group`` (their internal topics)."""
    return ConnectDistributedWorker(
        work_dir,
        bootstrap,
        group_id=group,
        config_topic=f"{group}-configs",
        offset_topic=f"{group}-offsets",
        status_topic=f"{group}-status",
        extra={"exactly.once.source.support": "enabled", "offset.storage.partitions": "3"},
    )


def test_a_sluice_cluster_and_kafka_connect_take_over_each_others_exactly_once_source(
    kafka_bootstrap, unique_name, tmp_path
):
    """Interoperability: one group's config, offset and status topics used in turn by a
    Sluice worker, by Kafka Connect 4.3.1 and by Sluice again, all with exactly-once
    enabled: each reads the task configs, task-count records and transactional offsets
    the other wrote, and the file's lines reach the topic once each, in order."""
    topic = _one_partition_topic(kafka_bootstrap, f"{unique_name}-lines")
    group = unique_name
    name = f"{unique_name[:40]}-file"
    source_file = tmp_path / "input.txt"
    reader = TopicReader(kafka_bootstrap, topic)
    string = "org.apache.kafka.connect.storage.StringConverter"
    config = {
        "connector.class": "FileStreamSource",
        "file": str(source_file),
        "topic": topic,
        "tasks.max": "1",
        "key.converter": string,
        "value.converter": string,
        "exactly.once.support": "required",
    }

    def append(first: int, count: int) -> None:
        with source_file.open("a") as out:
            out.writelines(f"line-{n}\n" for n in range(first, first + count))

    def lines() -> list[str]:
        return [value for _, value in reader.read()]

    def await_lines(count: int, log: Callable[[], str]) -> None:
        wait_until(
            lambda: len(lines()) >= count,
            timeout=120,
            message=lambda: f"{len(reader.records)} of {count} lines\n{log()[-5000:]}",
        )

    sluice = DistributedWorker(tmp_path / "s1", kafka_bootstrap, "s1", group, extra=SETTINGS)
    connect = _connect_worker(tmp_path / "connect", kafka_bootstrap, group)
    again = DistributedWorker(tmp_path / "s2", kafka_bootstrap, "s2", group, extra=SETTINGS)
    try:
        append(0, 1000)
        sluice.start(timeout=180)
        _put(sluice, name, config)
        await_lines(1000, sluice.log)
        assert sluice.stop() == 0, sluice.log()

        append(1000, 1000)
        connect.start(timeout=120)
        await_lines(2000, connect.log_tail)
        connect.stop()

        append(2000, 1000)
        again.start(timeout=180)
        await_lines(3000, again.log)
        assert again.stop() == 0, again.log()

        assert lines() == [f"line-{n}" for n in range(3000)]
        counts = [
            value["task-count"]
            for key, value in _config_records(kafka_bootstrap, f"{group}-configs")
            if key == f"tasks-fencing-{name}"
        ]
        assert counts and all(count == 1 for count in counts), counts
    finally:
        reader.close()
        sluice.kill()
        again.kill()
        with contextlib.suppress(Exception):
            connect.stop()


@pytest.mark.parametrize("leader", ["sluice", "kafka-connect"])
def test_a_mixed_groups_follower_sends_task_configs_and_fencing_to_its_leader(
    kafka_bootstrap, unique_name, tmp_path, leader
):
    """Kafka's internal endpoints between a Sluice worker and a Kafka Connect 4.3.1 worker
    of one group with exactly-once enabled, signed with the leader's session key (KIP-507):
    whichever leads, the follower owns one of the two connectors and sends the leader its
    task configs (``POST /connectors/{c}/tasks``), and its exactly-once task asks the
    leader to fence earlier producers (``PUT /connectors/{c}/fence``) before it starts.
    Every line of both files arrives once, and the leader wrote both task-count records."""
    group = unique_name
    sluice = DistributedWorker(tmp_path / "sluice", kafka_bootstrap, "sluice", group, extra=SETTINGS)
    connect = _connect_worker(tmp_path / "connect", kafka_bootstrap, group)
    names = [f"{group[:30]}-{leader}-{n}" for n in ("a", "b")]
    readers = {name: TopicReader(kafka_bootstrap, _one_partition_topic(kafka_bootstrap, name)) for name in names}
    string = "org.apache.kafka.connect.storage.StringConverter"
    try:
        if leader == "sluice":
            sluice.start(timeout=180)
            connect.start(timeout=120)
        else:
            connect.start(timeout=120)
            sluice.start(timeout=180)
        for name in names:
            source = tmp_path / f"{name}.txt"
            source.write_text("".join(f"{name}-{n}\n" for n in range(500)))
            _put(
                sluice,
                name,
                {
                    "connector.class": "FileStreamSource",
                    "file": str(source),
                    "topic": name,
                    "key.converter": string,
                    "value.converter": string,
                    "exactly.once.support": "required",
                },
            )

        def delivered() -> bool:
            return all(len(readers[name].read()) >= 500 for name in names)

        wait_until(
            delivered,
            timeout=180,
            message=lambda: (
                f"lines: { {n: len(r.records) for n, r in readers.items()} }\n"
                f"statuses: {[sluice.get(f'/connectors/{n}/status').text for n in names]}\n"
                f"Sluice: {sluice.log()[-4000:]}\nKafka Connect: {connect.log_tail(4000)}"
            ),
        )
        for name in names:
            assert [value for _, value in readers[name].read()] == [f"{name}-{n}" for n in range(500)], name
        owners = {sluice.get(f"/connectors/{name}/status").json()["connector"]["worker_id"] for name in names}
        assert len(owners) == 2, f"one worker owns both connectors: {owners}"  # the follower owned one
        recorded = {key for key, _ in _config_records(kafka_bootstrap, f"{group}-configs")}
        assert {f"tasks-fencing-{name}" for name in names} <= recorded
        assert "session-key" in recorded
    finally:
        for reader in readers.values():
            reader.close()
        sluice.kill()
        with contextlib.suppress(Exception):
            connect.stop()


def test_kafkas_java_verifiable_source_delivers_exactly_once_across_a_sigkill(kafka_bootstrap, unique_name, tmp_path):
    """Kafka's own Java VerifiableSource (connect-test-plugins 4.3.1) through the JVM task
    host, run by Kafka's ExactlyOnceWorkerSourceTask: two tasks, the worker SIGKILLed and
    replaced, and a read_committed consumer sees each task's seqnos once, with no gap."""
    topic = _one_partition_topic(kafka_bootstrap, f"{unique_name}-t")
    name = f"{unique_name[:40]}-java"
    group = unique_name
    env = _java_test_plugins_env()
    reader = TopicReader(kafka_bootstrap, topic)
    first = DistributedWorker(tmp_path / "w1", kafka_bootstrap, "w1", group, extra=SETTINGS, env=env)
    second = DistributedWorker(tmp_path / "w2", kafka_bootstrap, "w2", group, extra=SETTINGS, env=env)
    try:
        first.start(timeout=180)
        _put(
            first,
            name,
            {
                "connector.class": VERIFIABLE,
                "connector.plugin.version": "4.3.1",
                "tasks.max": "2",
                "throughput": "200",
                "topic": topic,
            },
        )
        _await_progress(reader, {}, 2, at_least=300)
        before = {task: len(seqnos) for task, seqnos in reader.seqnos().items()}
        first.kill()
        second.start(timeout=180)
        _await_progress(reader, before, 2, at_least=300)
        _stop(second, name)
        seen = reader.seqnos()
        _assert_each_seqno_once(seen, 2)
        stored = {o["partition"]["id"]: o["offset"]["seqno"] for o in _offsets(second, name)}
        assert stored == {task: len(seen[str(task)]) - 1 for task in range(2)}
        assert second.stop() == 0, second.log()
    finally:
        reader.close()
        for worker in (first, second):
            worker.kill()


@pytest.mark.parametrize("plugin", ["python", "java"])
def test_a_three_worker_bounce_delivers_exactly_once(kafka_bootstrap, unique_name, tmp_path, plugin):
    """Kafka's ducktape ``test_exactly_once_source`` in the suite's time: a three-task
    Verifiable source — Sluice's, or Kafka's own Java one through the JVM task host — on
    three exactly-once workers, bounced one at a time — one cleanly, then another with
    SIGKILL — its tasks moving between workers and fencing their earlier instances; a
    read_committed consumer sees each task's seqnos once, with no gap. (Kafka's test
    bounces every worker three times; one bounce of each kind keeps it in CI's budget.)"""
    java = plugin == "java"
    env = _java_test_plugins_env() if java else {}
    version = {"connector.plugin.version": "4.3.1"} if java else {}
    topic = _one_partition_topic(kafka_bootstrap, f"{unique_name}-t")
    name = f"{unique_name[:40]}-src"
    group = unique_name
    reader = TopicReader(kafka_bootstrap, topic)
    generation = [0]
    everyone: list[DistributedWorker] = []

    def new_worker(slot: int) -> DistributedWorker:
        generation[0] += 1
        label = f"w{slot}-{generation[0]}"
        worker = DistributedWorker(tmp_path / label, kafka_bootstrap, label, group, extra=SETTINGS, env=env)
        everyone.append(worker)
        return worker

    workers = [new_worker(slot) for slot in range(3)]
    try:
        start_together(workers)
        config = {"connector.class": VERIFIABLE, "tasks.max": "3", "throughput": "50", "topic": topic, **version}
        _put(workers[0], name, config)
        wait_until(lambda: _running(workers[0], name, 3), timeout=180, message="3 tasks RUNNING")
        _await_progress(reader, {}, 3)
        for slot, kill in ((0, False), (1, True)):
            delivered = {task: len(seqnos) for task, seqnos in reader.seqnos().items()}
            if kill:
                workers[slot].kill()
            else:
                assert workers[slot].stop() == 0, workers[slot].log()
            workers[slot] = new_worker(slot)
            workers[slot].start(timeout=180)
            witness = workers[(slot + 1) % 3]
            wait_until(
                functools.partial(_running, witness, name, 3),
                timeout=180,
                message=functools.partial(_status_of, witness, name, f"3 tasks RUNNING after bouncing slot {slot}"),
            )
            _await_progress(reader, delivered, 3)
        _stop(workers[1], name)
        _assert_each_seqno_once(reader.seqnos(), 3)
        codes = [worker.stop() for worker in workers]
        assert codes == [0, 0, 0], "\n".join(w.log()[-3000:] for w in workers)
    finally:
        reader.close()
        for worker in everyone:
            worker.kill()


@pytest.mark.parametrize("plugin", ["python", "java"])
def test_a_transaction_a_dead_instance_left_open_is_aborted_not_waited_out(
    kafka_bootstrap, unique_name, tmp_path, plugin
):
    """A task instance that died mid-transaction leaves it open on the offsets topic (here
    for ten minutes: only fencing ends it sooner). A worker starts all the same, and the
    task's next instance fences it before reading its offsets: RUNNING and delivering in
    well under the transaction's timeout, its seqnos from 0 once, the dead instance's
    records never visible and its producer fenced."""
    java = plugin == "java"
    env = _java_test_plugins_env() if java else {}
    version = {"connector.plugin.version": "4.3.1"} if java else {}
    group = unique_name
    name = f"{unique_name[:40]}-src"
    topic = _one_partition_topic(kafka_bootstrap, f"{unique_name}-t")
    offsets_topic = f"{group}-offsets"
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})  # kept until the topic exists
    created = admin.create_topics([NewTopic(offsets_topic, 3, 1, config={"cleanup.policy": "compact"})])
    created[offsets_topic].result(30)
    dead = Producer(
        {
            "bootstrap.servers": kafka_bootstrap,
            "transactional.id": f"{group}-{name}-0",  # the task's, as Kafka names it
            "transaction.timeout.ms": "600000",
        }
    )
    dead.init_transactions(30)
    dead.begin_transaction()
    dead.produce(topic, key=b"0", value=b"written by the dead instance")
    for partition in range(3):
        dead.produce(
            offsets_topic,
            key=encode_offset_key(name, {"id": 0}),
            value=encode_offset_value({"seqno": 99}),
            partition=partition,
        )
    assert dead.flush(30) == 0
    reader = TopicReader(kafka_bootstrap, topic)
    worker = DistributedWorker(tmp_path / "w", kafka_bootstrap, "w", group, extra=SETTINGS, env=env)
    try:
        worker.start(timeout=180)
        _put(
            worker,
            name,
            {"connector.class": VERIFIABLE, "tasks.max": "1", "throughput": "100", "topic": topic, **version},
        )
        wait_until(
            functools.partial(_running, worker, name, 1),
            timeout=60,
            message=functools.partial(_status_of, worker, name, "the task RUNNING"),
        )
        _await_progress(reader, {}, 1)
        with pytest.raises(KafkaException):
            dead.commit_transaction(30)
        _stop(worker, name)
        seen = reader.seqnos()
        _assert_each_seqno_once(seen, 1)
        assert [o["offset"]["seqno"] for o in _offsets(worker, name)] == [len(seen["0"]) - 1]
        assert worker.stop() == 0, worker.log()
    finally:
        reader.close()
        worker.kill()


@pytest.fixture(scope="module")
def second_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    with started(KafkaBroker(tmp_path_factory.mktemp("kafka-second")), 120) as broker:
        yield broker


def _offset_records(bootstrap: str, topic: str) -> list[tuple[Any, Any]]:
    """The (key, value) JSON of every committed record of an offsets topic."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check-{topic}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
        records = []
        while batch := consumer.consume(1000, 1.0):
            records += [(json.loads(m.key()), json.loads(m.value())) for m in batch if m.error() is None and m.value()]
        return records
    finally:
        consumer.close()


def test_a_connectors_own_offsets_topic_on_its_producers_cluster(
    kafka_bootstrap, second_cluster, unique_name, tmp_path
):
    """``offsets.storage.topic`` with the producer on a second cluster: the topic is created
    there, the task's transactions write its offsets there (and the worker backs them up to
    its own topic), the offsets API reads them, and a new worker resumes from them: every
    line once, in order."""
    other = second_cluster.bootstrap
    topic, own_offsets = f"{unique_name}-lines", f"{unique_name}-offsets"
    admin = AdminClient({"bootstrap.servers": other})  # kept: a collected client ends its requests
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    group = unique_name
    name = f"{unique_name[:40]}-file"
    source_file = tmp_path / "input.txt"
    source_file.write_text("".join(f"line-{n}\n" for n in range(500)))
    reader = TopicReader(other, topic)
    config = {
        "connector.class": "FileStreamSource",
        "file": str(source_file),
        "topic": topic,
        "exactly.once.support": "required",
        "offsets.storage.topic": own_offsets,
        "producer.override.bootstrap.servers": other,
    }
    first = DistributedWorker(tmp_path / "w1", kafka_bootstrap, "w1", group, extra=SETTINGS)
    second = DistributedWorker(tmp_path / "w2", kafka_bootstrap, "w2", group, extra=SETTINGS)
    expected = [([name, {"filename": str(source_file)}], {"position": source_file.stat().st_size})]
    try:
        first.start(timeout=180)
        _put(first, name, config)
        wait_until(lambda: len(reader.read()) >= 500, timeout=120, message=lambda: f"{len(reader.records)} lines")
        wait_until(
            lambda: _offset_records(other, own_offsets)[-1:] == expected,
            timeout=60,
            message=lambda: f"offsets on the second cluster: {_offset_records(other, own_offsets)[-3:]}",
        )
        wait_until(
            lambda: _offset_records(kafka_bootstrap, f"{group}-offsets")[-1:] == expected,
            timeout=60,
            message="the backup in the worker's offsets topic",
        )
        assert _offsets(first, name) == [
            {"partition": {"filename": str(source_file)}, "offset": {"position": source_file.stat().st_size}}
        ]
        assert first.stop() == 0, first.log()

        with source_file.open("a") as out:
            out.writelines(f"line-{n}\n" for n in range(500, 1000))
        second.start(timeout=180)
        wait_until(lambda: len(reader.read()) >= 1000, timeout=120, message=lambda: f"{len(reader.records)} lines")
        assert second.stop() == 0, second.log()
        assert [value for _, value in reader.read()] == [f"line-{n}" for n in range(1000)]
    finally:
        reader.close()
        first.kill()
        second.kill()


@pytest.fixture(scope="module")
def authorizing_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """A broker with a SASL_SSL listener (user alice) and Kafka's authorizer: everything is
    allowed until an ACL says otherwise (its own PLAINTEXT clients are super users)."""
    authorizing = {
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "allow.everyone.if.no.acl.found": "true",
        "super.users": "User:ANONYMOUS",
    }
    broker = KafkaBroker(tmp_path_factory.mktemp("kafka-acls"), sasl_ssl=True, server_properties=authorizing)
    with started(broker, 180) as running:
        yield running


def test_a_task_that_cannot_fence_fails_visibly_and_recovers_once_allowed(authorizing_cluster, unique_name, tmp_path):
    """The task's producer (user alice) may not use its transactional id (a DENY ACL): the
    task is FAILED with the authorization error, naming the id; once the ACL is removed, a
    restart of the task runs it, and its lines arrive once each."""
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    broker = authorizing_cluster
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    topic = f"{unique_name}-lines"
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    group = unique_name
    name = f"{unique_name[:40]}-file"
    deny = AclBinding(
        ResourceType.TRANSACTIONAL_ID,
        f"{group}-{name}-",
        ResourcePatternType.PREFIXED,
        "User:alice",
        "*",
        AclOperation.ALL,
        AclPermissionType.DENY,
    )
    for future in admin.create_acls([deny]).values():
        future.result(30)
    source_file = tmp_path / "input.txt"
    source_file.write_text("".join(f"line-{n}\n" for n in range(300)))
    reader = TopicReader(broker.bootstrap, topic)
    producer = {f"producer.override.{k}": v for k, v in broker.client_properties(mechanism="PLAIN").items()}
    worker = DistributedWorker(tmp_path / "w", broker.bootstrap, "w", group, extra=SETTINGS)
    try:
        worker.start(timeout=180)
        _put(
            worker, name, {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic, **producer}
        )

        def task_status() -> dict[str, Any] | None:
            answer = worker.get(f"/connectors/{name}/tasks/0/status")
            return answer.json() if answer.status_code == 200 else None

        failed = wait_until(
            lambda: (s := task_status()) is not None and s["state"] == "FAILED" and s,
            timeout=120,
            message=lambda: f"task 0 FAILED: {task_status()}",
        )
        assert f"transactional.id '{group}-{name}-0'" in failed["trace"]
        assert "authoriz" in failed["trace"].lower(), failed["trace"]
        assert reader.read() == []

        filter_ = AclBindingFilter(
            ResourceType.TRANSACTIONAL_ID,
            f"{group}-{name}-",
            ResourcePatternType.PREFIXED,
            "User:alice",
            "*",
            AclOperation.ALL,
            AclPermissionType.DENY,
        )
        for future in admin.delete_acls([filter_]).values():
            future.result(30)
        assert http_client.post(f"{worker.url}/connectors/{name}/tasks/0/restart", timeout=60).status_code == 204
        wait_until(lambda: len(reader.read()) >= 300, timeout=120, message=lambda: f"{len(reader.records)} lines")
        assert [value for _, value in reader.read()] == [f"line-{n}" for n in range(300)]
        assert worker.stop() == 0, worker.log()
    finally:
        reader.close()
        worker.kill()
