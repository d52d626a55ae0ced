"""Acceptance: error tolerance and the dead letter queue on a real worker and broker.

1,000 lines, every other one malformed JSON, go through FileStreamSource (StringConverter)
into a topic, and from there into FileStreamSink with JsonConverter (schemas off). With
``errors.tolerance=all`` the sink file holds exactly the good records and the dead letter
queue exactly the bad raw values, in order, with Kafka Connect's context headers; with
``none`` the task is FAILED at the first bad record, which is in the dead letter queue.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition

from tests import http_client
from tests.helpers import read_topic, wait_until
from tests.integration.workers import StandaloneWorker

pytestmark = pytest.mark.integration

STRING = "org.apache.kafka.connect.storage.StringConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"
LINES = 1000


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory):
    w = StandaloneWorker(tmp_path_factory.mktemp("dlq"), kafka_bootstrap, "worker")
    w.start()
    yield w
    assert w.stop() == 0, w.log()


def _line(i: int) -> str:
    return f'{{"n": {i}}}' if i % 2 == 0 else f'{{"n": {i}'  # odd lines are cut short


def _create(worker: StandaloneWorker, name: str, config: dict[str, str]) -> None:
    r = http_client.post(f"{worker.url}/connectors", json={"name": name, "config": config}, timeout=30)
    assert r.status_code == 201, r.text


def _pipeline(worker: StandaloneWorker, tmp: Path, name: str, tolerance: str) -> tuple[str, Path, str]:
    topic, dlq = f"{name}-in", f"{name}-dlq"
    source_file, sink_file = tmp / f"{name}.in", tmp / f"{name}.out"
    source_file.write_text("".join(_line(i) + "\n" for i in range(LINES)))
    _create(
        worker,
        f"{name}-source",
        {
            "connector.class": "FileStreamSource",
            "file": str(source_file),
            "topic": topic,
            "value.converter": STRING,
            "key.converter": STRING,
        },
    )
    _create(
        worker,
        f"{name}-sink",
        {
            "connector.class": "FileStreamSink",
            "file": str(sink_file),
            "topics": topic,
            "value.converter": JSON,
            "value.converter.schemas.enable": "false",
            "key.converter": STRING,
            "errors.tolerance": tolerance,
            "errors.log.enable": "true",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        },
    )
    return topic, sink_file, dlq


def test_tolerance_all_sends_every_bad_record_to_the_dead_letter_queue(worker, kafka_bootstrap, unique_name, tmp_path):
    topic, sink_file, dlq = _pipeline(worker, tmp_path, unique_name, "all")
    good = [f"{{n={i}}}" for i in range(0, LINES, 2)]  # FileStreamSink writes the map as Java prints it

    def sink_lines() -> list[str]:
        return sink_file.read_text().splitlines() if sink_file.exists() else []

    wait_until(
        lambda: len(sink_lines()) >= len(good),
        timeout=120,
        message=lambda: f"{len(sink_lines())} sink lines; {worker.get(f'/connectors/{unique_name}-sink/status').text}",
    )
    assert sink_lines() == good

    dead = read_topic(kafka_bootstrap, dlq, LINES // 2)
    assert [m.value().decode() for m in dead] == [_line(i) for i in range(1, LINES, 2)]
    headers = dict(dead[0].headers())
    assert headers["__connect.errors.topic"] == topic.encode()
    assert headers["__connect.errors.partition"] == b"0"
    assert headers["__connect.errors.offset"] == b"1"
    assert headers["__connect.errors.connector.name"] == f"{unique_name}-sink".encode()
    assert headers["__connect.errors.task.id"] == b"0"
    assert headers["__connect.errors.stage"] == b"VALUE_CONVERTER"
    assert b"JsonConverter" in headers["__connect.errors.class.name"]
    assert headers["__connect.errors.exception.message"]
    assert [dict(m.headers())["__connect.errors.offset"] for m in dead] == [str(i).encode() for i in range(1, LINES, 2)]
    status = worker.get(f"/connectors/{unique_name}-sink/status").json()
    assert status["tasks"][0]["state"] == "RUNNING"
    # every consumed record counts as processed: the committed offset is past the last one
    wait_until(
        lambda: _committed(kafka_bootstrap, f"connect-{unique_name}-sink", topic) == LINES,
        timeout=60,
        message=lambda: f"committed {_committed(kafka_bootstrap, f'connect-{unique_name}-sink', topic)}",
    )


def test_tolerance_none_fails_the_task_at_the_first_bad_record_after_dead_lettering_it(
    worker, kafka_bootstrap, unique_name, tmp_path
):
    _, sink_file, dlq = _pipeline(worker, tmp_path, unique_name, "none")

    def task_state() -> dict[str, Any]:
        tasks = worker.get(f"/connectors/{unique_name}-sink/status").json()["tasks"]
        return tasks[0] if tasks else {}

    wait_until(lambda: task_state().get("state") == "FAILED", timeout=120, message=lambda: f"sink task {task_state()}")
    assert "Tolerance exceeded in error handler" in task_state()["trace"]
    dead = read_topic(kafka_bootstrap, dlq, 1)
    assert dead[0].value().decode() == _line(1)
    # The failed batch was not delivered: the sink wrote nothing after the bad record.
    assert "{n=2}" not in (sink_file.read_text() if sink_file.exists() else "")


def _committed(bootstrap: str, group: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        return consumer.committed([TopicPartition(topic, 0)], timeout=10)[0].offset
    finally:
        consumer.close()


def test_a_record_reported_one_put_later_reaches_the_dead_letter_queue(worker, kafka_bootstrap, unique_name, tmp_path):
    """A sink that writes asynchronously learns that a record was refused during the next
    put; the reporter still finds that record's raw bytes (those of the put before)."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    topic, dlq, record_file = f"{unique_name}-in", f"{unique_name}-dlq", tmp_path / "records.jsonl"
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    _create(
        worker,
        unique_name,
        {
            "connector.class": "sluice_test_plugins.RecordingSinkConnector",
            "topics": topic,
            "record.file": str(record_file),
            "report.late": "true",
            "value.converter": JSON,
            "value.converter.schemas.enable": "false",
            "key.converter": STRING,
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        },
    )
    producer = Producer({"bootstrap.servers": kafka_bootstrap})

    def put_so_far() -> int:
        return len(record_file.read_text().splitlines()) if record_file.exists() else 0

    producer.produce(topic, value=b'{"bad": true, "n": 0}')
    assert producer.flush(30) == 0
    wait_until(
        lambda: put_so_far() == 1, timeout=90, message=lambda: worker.get(f"/connectors/{unique_name}/status").text
    )
    producer.produce(topic, value=b'{"n": 1}')  # the next put, which reports the first record
    assert producer.flush(30) == 0
    dead = read_topic(kafka_bootstrap, dlq, 1)
    assert dead[0].value() == b'{"bad": true, "n": 0}'
    headers = dict(dead[0].headers())
    assert headers["__connect.errors.stage"] == b"TASK_PUT" and headers["__connect.errors.offset"] == b"0"
    assert b"refused late: offset 0" in headers["__connect.errors.exception.message"]
    assert worker.get(f"/connectors/{unique_name}/status").json()["tasks"][0]["state"] == "RUNNING"
