"""Acceptance: a real standalone worker process — Python-path plugins on Spark, task
failure and restart, REST errors, and pause surviving a restart."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx2
import pytest
from confluent_kafka import Consumer, TopicPartition

from tests import http_client
from tests.helpers import wait_until
from tests.integration.workers import StandaloneWorker

pytestmark = pytest.mark.integration

SEQUENCE = "sluice_test_plugins.SequenceSourceConnector"


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory):
    w = StandaloneWorker(tmp_path_factory.mktemp("standalone"), kafka_bootstrap, "worker")
    w.start()
    yield w
    assert w.stop() == 0, w.log()


def _payloads(bootstrap: str, topic: str, count: int) -> list[str]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{topic}", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[str] = []

    def more() -> bool:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            values.append(json.loads(msg.value())["payload"])
        return len(values) >= count

    try:
        wait_until(more, timeout=90, message=f"{count} records on {topic}")
    finally:
        consumer.close()
    return values


def _create(worker: StandaloneWorker, name: str, config: dict[str, str]) -> httpx2.Response:
    return http_client.post(f"{worker.url}/connectors", json={"name": name, "config": config}, timeout=30)


def test_python_path_connector_from_outside_the_package_runs_on_spark(worker, kafka_bootstrap, unique_name):
    topic = f"{unique_name}-t"
    r = _create(
        worker, unique_name, {"connector.class": SEQUENCE, "topic": topic, "count": "25", "report.spark": "true"}
    )
    assert r.status_code == 201, r.text
    assert r.headers["location"].endswith(f"/connectors/{unique_name}")
    assert r.json()["type"] == "source"
    assert r.json()["tasks"] == [{"connector": unique_name, "task": 0}]
    # a Python plugin's task keeps its Python path (built-ins' tasks have Kafka's names)
    tasks = worker.get(f"/connectors/{unique_name}/tasks").json()
    assert tasks[0]["config"]["task.class"] == "sluice_test_plugins.SequenceSourceTask"
    values = _payloads(kafka_bootstrap, topic, 25)
    assert [v.split("@")[0] for v in values] == [f"seq-{i}" for i in range(25)]
    assert all(re.fullmatch(r"seq-\d+@spark-stage-\d+", v) for v in values), values[:3]
    assert len({v.split("@")[1] for v in values}) == 1, "one long-lived Spark task ran every poll()"


def test_failing_poll_fails_only_that_task_and_task_restart_recovers(worker, kafka_bootstrap, unique_name, tmp_path):
    marker = tmp_path / "fail-once"
    marker.write_text("fail the first poll")
    topic = f"{unique_name}-t"
    healthy = f"{unique_name}-healthy"
    assert (
        _create(worker, healthy, {"connector.class": SEQUENCE, "topic": f"{topic}-2", "count": "5"}).status_code == 201
    )
    r = _create(
        worker, unique_name, {"connector.class": SEQUENCE, "topic": topic, "count": "10", "fail.marker": str(marker)}
    )
    assert r.status_code == 201, r.text

    wait_until(lambda: worker.task_state(unique_name) == "FAILED", timeout=90, message="task FAILED")
    status = worker.get(f"/connectors/{unique_name}/status").json()
    assert status["connector"]["state"] == "RUNNING"
    # the version() of the plugin's connector and task (neither overrides the API's default)
    assert status["connector"]["version"] == status["tasks"][0]["version"] == "unknown"
    trace = status["tasks"][0]["trace"]
    assert "Traceback (most recent call last)" in trace and "poll failed on purpose" in trace
    assert "sluice_test_plugins.py" in trace
    # the worker keeps serving, and the sibling connector keeps running
    assert worker.get("/").status_code == 200
    wait_until(lambda: worker.task_state(healthy) == "RUNNING", timeout=60, message="sibling RUNNING")
    assert _payloads(kafka_bootstrap, f"{topic}-2", 5) == [f"seq-{i}" for i in range(5)]

    r = http_client.post(f"{worker.url}/connectors/{unique_name}/tasks/0/restart", timeout=30)
    assert r.status_code == 204, r.text
    wait_until(lambda: worker.task_state(unique_name) == "RUNNING", timeout=90, message="task RUNNING again")
    assert "trace" not in worker.get(f"/connectors/{unique_name}/tasks/0/status").json()
    assert _payloads(kafka_bootstrap, topic, 10) == [f"seq-{i}" for i in range(10)]


def test_rest_errors_use_the_connect_error_body(worker, unique_name):
    config = {"connector.class": SEQUENCE, "topic": f"{unique_name}-t", "count": "1"}
    assert _create(worker, unique_name, config).status_code == 201

    duplicate = _create(worker, unique_name, config)
    assert duplicate.status_code == 409
    assert duplicate.json() == {"error_code": 409, "message": f"Connector {unique_name} already exists"}

    missing = worker.get("/connectors/no-such-connector")
    assert missing.status_code == 404
    assert missing.json() == {"error_code": 404, "message": "Connector no-such-connector not found"}
    for path in ("/status", "/config", "/tasks"):
        r = worker.get(f"/connectors/no-such-connector{path}")
        assert r.status_code == 404 and r.json()["error_code"] == 404

    malformed = http_client.post(
        f"{worker.url}/connectors",
        content=b'{"name": "x", "config": {',
        headers={"content-type": "application/json"},
        timeout=10,
    )
    assert 400 <= malformed.status_code < 500
    assert malformed.json()["error_code"] == malformed.status_code and malformed.json()["message"]

    no_class = _create(worker, f"{unique_name}-nc", {"topic": "t"})
    assert no_class.status_code == 400
    body = no_class.json()
    assert body["error_code"] == 400 and "contains no connector type" in body["message"]


def test_pause_survives_a_worker_restart(kafka_bootstrap, unique_name, tmp_path: Path):
    w = StandaloneWorker(tmp_path / "w", kafka_bootstrap, "pausing")
    try:
        w.start()
        assert (
            _create(
                w, unique_name, {"connector.class": SEQUENCE, "topic": f"{unique_name}-t", "count": "3"}
            ).status_code
            == 201
        )
        wait_until(lambda: w.task_state(unique_name) == "RUNNING", timeout=90, message="RUNNING")
        assert http_client.put(f"{w.url}/connectors/{unique_name}/pause", timeout=10).status_code == 202
        wait_until(lambda: w.task_state(unique_name) == "PAUSED", timeout=60, message="PAUSED")
        assert w.stop() == 0
        w.start()
        wait_until(lambda: w.task_state(unique_name) == "PAUSED", timeout=90, message="PAUSED after restart")
        assert w.get(f"/connectors/{unique_name}/status").json()["connector"]["state"] == "PAUSED"
        assert http_client.put(f"{w.url}/connectors/{unique_name}/resume", timeout=10).status_code == 202
        wait_until(lambda: w.task_state(unique_name) == "RUNNING", timeout=60, message="RUNNING after resume")
    finally:
        w.kill()


def _task_starts(worker: StandaloneWorker) -> int:
    """The worker's ``task-startup-attempts-total`` (counted as the herder starts a task)."""
    text = http_client.get(f"{worker.url}/metrics", timeout=10).text
    found = re.search(r"^kafka_connect_worker_task_startup_attempts_total(?:\{[^}]*\})? (\S+)$", text, re.M)
    assert found, text[-2000:]
    return int(float(found.group(1)))


def test_putting_the_same_config_again_leaves_the_tasks_running(worker, unique_name):
    """Kafka restarts the connector, and its tasks only when their configs or the connector's
    changed; a standalone worker restarted with its command-line connectors relies on it."""
    config = {"connector.class": SEQUENCE, "topic": f"{unique_name}-t", "count": "3", "tasks.max": "1"}
    assert _create(worker, unique_name, config).status_code == 201
    wait_until(lambda: worker.task_state(unique_name) == "RUNNING", timeout=90, message="task RUNNING")
    starts = _task_starts(worker)

    again = http_client.put(f"{worker.url}/connectors/{unique_name}/config", json=config, timeout=30)
    assert again.status_code == 200, again.text  # 200: an update, not a creation
    assert _task_starts(worker) == starts
    assert worker.task_state(unique_name) == "RUNNING"

    changed = http_client.put(
        f"{worker.url}/connectors/{unique_name}/config", json={**config, "count": "4"}, timeout=30
    )
    assert changed.status_code == 200, changed.text
    assert _task_starts(worker) == starts + 1
    wait_until(lambda: worker.task_state(unique_name) == "RUNNING", timeout=90, message="task RUNNING again")


def test_connector_restart_variants(worker, kafka_bootstrap, unique_name, tmp_path):
    marker = tmp_path / "fail-once"
    marker.write_text("fail the first poll")
    config = {"connector.class": SEQUENCE, "topic": f"{unique_name}-t", "count": "4", "fail.marker": str(marker)}
    assert _create(worker, unique_name, config).status_code == 201
    wait_until(lambda: worker.task_state(unique_name) == "FAILED", timeout=90, message="task FAILED")

    r = http_client.post(f"{worker.url}/connectors/{unique_name}/restart?includeTasks=true&onlyFailed=true", timeout=30)
    assert r.status_code == 202, r.text
    plan = r.json()
    assert plan["name"] == unique_name and plan["type"] == "source"
    assert plan["connector"]["state"] == "RUNNING"  # not failed: not restarted
    assert [t["state"] for t in plan["tasks"]] == ["RESTARTING"]
    wait_until(lambda: worker.task_state(unique_name) == "RUNNING", timeout=90, message="task RUNNING")
    assert _payloads(kafka_bootstrap, f"{unique_name}-t", 4) == [f"seq-{i}" for i in range(4)]

    r = http_client.post(f"{worker.url}/connectors/{unique_name}/restart", timeout=30)
    assert r.status_code == 204 and r.content == b""
    assert worker.get(f"/connectors/{unique_name}/status").json()["connector"]["state"] == "RUNNING"
    assert worker.task_state(unique_name) == "RUNNING"  # the plain restart leaves tasks alone

    unknown = http_client.post(f"{worker.url}/connectors/nope/restart?includeTasks=true", timeout=30)
    assert unknown.status_code == 404 and unknown.json() == {"error_code": 404, "message": "Unknown connector: nope"}
    unknown_task = http_client.post(f"{worker.url}/connectors/{unique_name}/tasks/7/restart", timeout=30)
    assert unknown_task.status_code == 404
    assert unknown_task.json()["message"] == f"Task {unique_name}-7 not found"


def test_sink_tasks_receive_record_headers(worker, kafka_bootstrap, unique_name, tmp_path):
    from confluent_kafka import Producer

    topic = f"{unique_name}-t"
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    producer.produce(topic, b'"plain"')
    producer.produce(topic, b'"with headers"', headers=[("trace", b"abc"), ("empty", None), ("trace", b"\xff\x00")])
    producer.produce(topic, b'"last"', headers=[("n", b"42")])
    assert producer.flush(30) == 0
    del producer
    out = tmp_path / "recorded.jsonl"
    config = {
        "connector.class": "sluice_test_plugins.RecordingSinkConnector",
        "topics": topic,
        "record.file": str(out),
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
    }
    assert _create(worker, unique_name, config).status_code == 201

    def recorded() -> list[dict]:
        return [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []

    wait_until(
        lambda: len(recorded()) >= 3,
        timeout=90,
        message=lambda: f"3 records at the sink task; status {worker.get(f'/connectors/{unique_name}/status').json()}",
    )
    records = recorded()
    assert [r["value"] for r in records] == ["plain", "with headers", "last"]
    assert records[0]["headers"] == []
    # SimpleHeaderConverter reads header bytes as UTF-8 text (invalid bytes become U+FFFD,
    # as Java's String does) and parses scalars out of it; a null value stays null.
    assert records[1]["headers"] == [
        ["trace", "abc", "string"],
        ["empty", None, None],
        ["trace", "\ufffd\x00", "string"],
    ]
    assert records[2]["headers"] == [["n", 42, "int8"]]


def test_deleting_a_sink_connector_closes_and_stops_its_task_instance(worker, kafka_bootstrap, unique_name, tmp_path):
    """As Kafka does when a sink task stops: the task instance's close(partitions), then its
    stop(), run where the instance lives, so it can release what it holds."""
    from confluent_kafka import Producer

    topic = f"{unique_name}-t"
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    producer.produce(topic, b'"one"')
    assert producer.flush(30) == 0
    del producer
    out, lifecycle = tmp_path / "recorded.jsonl", tmp_path / "lifecycle.txt"
    config = {
        "connector.class": "sluice_test_plugins.RecordingSinkConnector",
        "topics": topic,
        "record.file": str(out),
        "lifecycle.file": str(lifecycle),
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
    }
    assert _create(worker, unique_name, config).status_code == 201
    wait_until(lambda: out.exists() and out.read_text().strip() != "", timeout=90, message="the record at the sink")
    assert not lifecycle.exists()  # a running task is neither closed nor stopped
    assert http_client.delete(f"{worker.url}/connectors/{unique_name}", timeout=60).status_code == 204

    def events() -> list[str]:
        return lifecycle.read_text().splitlines() if lifecycle.exists() else []

    wait_until(lambda: "stop" in events(), timeout=60, message=lambda: f"close and stop; seen {events()}")
    assert events() == [f"close {topic}-0", "stop"]
