"""Acceptance: when a task host's Python worker dies, exactly the tasks it hosted are FAILED
with the reason, and a restart loses nothing and repeats nothing.

Connect tasks run in task hosts, long-lived Spark tasks that each run many Connect tasks in
one Python worker (the worker logs each task's pid). This worker spreads its tasks over one
shared host (``sluice.task.hosts=1``), and a connector that asks for it
(``sluice.task.host=dedicated``) runs in a host of its own. The shared host's process is
killed with SIGKILL — once with a FileStreamSource in it, once with a FileStreamSink, each at
a quiet moment after its offsets were committed. Every task of that host becomes FAILED with
a trace naming the lost Python worker; the dedicated connector keeps running; a sibling
that opted into automatic restarts is restarted by the worker; lines written meanwhile are
delivered after ``restart``, every line exactly once.
"""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests import http_client
from tests.helpers import wait_until
from tests.integration.workers import StandaloneWorker

pytestmark = pytest.mark.integration

STRING = "org.apache.kafka.connect.storage.StringConverter"
COORDINATOR_NOT_READY = {
    KafkaError.NOT_COORDINATOR,
    KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
    KafkaError.COORDINATOR_NOT_AVAILABLE,
}


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory):
    w = StandaloneWorker(
        tmp_path_factory.mktemp("task-host-death"),
        kafka_bootstrap,
        "worker",
        {
            "key.converter": STRING,
            "value.converter": STRING,
            "offset.flush.interval.ms": "500",
            "sluice.task.hosts": "1",
        },
    )
    w.start()
    yield w
    assert w.stop() == 0, w.log()


def _host_pid(worker: StandaloneWorker, connector: str) -> int:
    """The pid of the Python worker that hosts the connector's task 0 (from the worker's log)."""
    pattern = re.compile(rf"Task {re.escape(connector)}-0 runs in the task host of pid (\d+) ")
    found = wait_until(lambda: pattern.findall(worker.log()), timeout=60, message=f"{connector}'s host pid logged")
    return int(found[-1])


def _create(worker: StandaloneWorker, name: str, config: dict[str, str]) -> None:
    r = http_client.post(f"{worker.url}/connectors", json={"name": name, "config": config}, timeout=30)
    assert r.status_code == 201, r.text


def _restart_task(worker: StandaloneWorker, name: str) -> None:
    r = http_client.post(f"{worker.url}/connectors/{name}/tasks/0/restart", timeout=30)
    assert r.status_code == 204, r.text


def _topic_lines(bootstrap: str, topic: str) -> list[str]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{topic}", "enable.auto.commit": False})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        consumer.assign([TopicPartition(topic, 0, low)])
        lines: list[str] = []
        while len(lines) < high - low:
            message = consumer.poll(5)
            assert message is not None, f"read {len(lines)} of {high - low} records of {topic}"
            if message.error() is None:
                lines.append(message.value().decode())
        return lines
    finally:
        consumer.close()


def _source_offset(worker: StandaloneWorker, name: str) -> int | None:
    offsets = worker.get(f"/connectors/{name}/offsets").json().get("offsets", [])
    return offsets[0]["offset"]["position"] if offsets else None


def _failed_with_lost_host(worker: StandaloneWorker, name: str, pid: int) -> None:
    wait_until(lambda: worker.task_state(name) == "FAILED", timeout=60, message=f"{name} FAILED")
    trace = worker.get(f"/connectors/{name}/tasks/0/status").json()["trace"]
    assert f"pid {pid}" in trace and "ended unexpectedly" in trace, trace


def _sibling_restarted_by_policy(worker: StandaloneWorker, name: str, pid: int) -> None:
    """A connector with sluice.auto.restart.enable is FAILED by the host's death, then
    restarted by the worker into another Python worker."""
    restarted = re.compile(rf"Task {re.escape(name)}-0 runs in the task host of pid (\d+) ")
    wait_until(
        lambda: worker.task_state(name) == "RUNNING" and int(restarted.findall(worker.log())[-1]) != pid,
        timeout=90,
        message=f"{name} restarted by its policy",
    )
    trace = worker.get(f"/connectors/{name}/tasks/0/status").json().get("trace", "")
    assert "ended unexpectedly" in trace, trace  # the failure before the restart


def test_killing_a_source_tasks_host_fails_exactly_its_tasks_and_restart_repeats_nothing(
    worker, kafka_bootstrap, unique_name, tmp_path: Path
):
    source_file = tmp_path / "in.txt"
    first = [f"line {i}" for i in range(200)]
    source_file.write_text("".join(f"{line}\n" for line in first))
    topic = f"{unique_name}-t"
    sibling, loner = f"{unique_name}-sibling", f"{unique_name}-loner"
    (tmp_path / "other.txt").write_text("a\n")
    other = {"connector.class": "FileStreamSource", "file": str(tmp_path / "other.txt"), "topic": f"{topic}-other"}
    _create(worker, sibling, {**other, "sluice.auto.restart.enable": "true"})
    _create(worker, loner, {**other, "sluice.task.host": "dedicated"})
    _create(worker, unique_name, {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic})

    # a quiet moment: every line in Kafka and its offset stored
    size = source_file.stat().st_size
    wait_until(lambda: _source_offset(worker, unique_name) == size, timeout=90, message="source offsets stored")
    assert _topic_lines(kafka_bootstrap, topic) == first

    pid = _host_pid(worker, unique_name)
    assert _host_pid(worker, sibling) == pid  # one shared host
    loner_pid = _host_pid(worker, loner)
    assert loner_pid != pid  # a host of its own
    os.kill(pid, signal.SIGKILL)
    _failed_with_lost_host(worker, unique_name, pid)
    _sibling_restarted_by_policy(worker, sibling, pid)
    assert worker.task_state(loner) == "RUNNING"
    assert _host_pid(worker, loner) == loner_pid  # untouched

    more = [f"line {i}" for i in range(200, 300)]
    with source_file.open("a") as f:
        f.write("".join(f"{line}\n" for line in more))
    _restart_task(worker, unique_name)
    wait_until(lambda: worker.task_state(unique_name) == "RUNNING", timeout=60, message="RUNNING again")
    wait_until(
        lambda: _source_offset(worker, unique_name) == source_file.stat().st_size,
        timeout=90,
        message="the new lines' offsets stored",
    )
    assert _topic_lines(kafka_bootstrap, topic) == first + more


def test_killing_a_sink_tasks_host_fails_it_and_restart_repeats_nothing(
    worker, kafka_bootstrap, unique_name, tmp_path: Path
):
    topic = f"{unique_name}-t"
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        future.result(30)
    producer = Producer({"bootstrap.servers": kafka_bootstrap})

    def produce(lines: list[str]) -> None:
        for line in lines:
            producer.produce(topic, value=line.encode())
        assert producer.flush(30) == 0

    sink_file = tmp_path / "out.txt"
    first = [f"record {i}" for i in range(150)]
    produce(first)
    _create(worker, unique_name, {"connector.class": "FileStreamSink", "file": str(sink_file), "topics": topic})

    group = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": f"connect-{unique_name}"})
    try:

        def committed() -> int | None:
            try:
                return group.committed([TopicPartition(topic, 0)], timeout=10)[0].offset
            except KafkaException as exc:  # the group's coordinator still loading or moving: ask again
                if not exc.args[0].retriable() and exc.args[0].code() not in COORDINATOR_NOT_READY:
                    raise
                return None

        wait_until(lambda: committed() == len(first), timeout=90, message="sink offsets committed")
        assert sink_file.read_text().splitlines() == first

        pid = _host_pid(worker, unique_name)
        os.kill(pid, signal.SIGKILL)
        _failed_with_lost_host(worker, unique_name, pid)

        more = [f"record {i}" for i in range(150, 250)]
        produce(more)
        _restart_task(worker, unique_name)
        wait_until(lambda: committed() == len(first) + len(more), timeout=90, message="new offsets committed")
        assert sink_file.read_text().splitlines() == first + more
    finally:
        group.close()
