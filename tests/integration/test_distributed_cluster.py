"""Acceptance of issue 5 on three ``sluice distributed`` workers (distinct REST ports, one
broker): any worker manages connectors, pause and resume are seen by every worker and stop
the verifiable source, and failed connectors and tasks come back through the restart
endpoints."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from sluice.connectors.testing import read_report
from tests import http_client
from tests.helpers import wait_until
from tests.integration.workers import DistributedWorker, distributed_cluster
from tests.integration.workers import connector_states as _states
from tests.integration.workers import connector_status as _status

pytestmark = pytest.mark.integration

STRING = "org.apache.kafka.connect.storage.StringConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"
NARROW_FILE_SOURCE = "sluice_test_plugins.NarrowFileSourceConnector"


@pytest.fixture(scope="module")
def cluster(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("cluster")
    with distributed_cluster(base, kafka_bootstrap, f"cluster-{base.name}") as workers:
        yield workers


def _everywhere(cluster: list[DistributedWorker], name: str, state: str, tasks: int) -> bool:
    return all(_states(w, name) == (state, [state] * tasks) for w in cluster)


def test_any_worker_creates_lists_inspects_reconfigures_and_deletes(cluster, unique_name, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a\nb\n")
    name = unique_name
    config = {"connector.class": "FileStreamSource", "file": str(source), "topic": f"{name}-t"}
    r = http_client.post(f"{cluster[1].url}/connectors", json={"name": name, "config": config}, timeout=60)
    assert r.status_code == 201, r.text
    assert r.headers["location"].endswith(f"/connectors/{name}")
    wait_until(
        lambda: _everywhere(cluster, name, "RUNNING", 1),
        timeout=120,
        message=lambda: f"RUNNING on every worker's view: {[_states(w, name) for w in cluster]}",
    )
    for worker in cluster:
        assert name in worker.get("/connectors").json()
        assert worker.get(f"/connectors/{name}").json()["config"] == {**config, "name": name}
        assert worker.get(f"/connectors/{name}/tasks").json()[0]["id"] == {"connector": name, "task": 0}

    # Reconfigure through another worker: every worker sees the new config, tasks follow it.
    r = http_client.put(
        f"{cluster[2].url}/connectors/{name}/config", json={**config, "topic": f"{name}-t2"}, timeout=60
    )
    assert r.status_code == 200, r.text
    wait_until(
        lambda: all(
            w.get(f"/connectors/{name}/tasks").json()[0]["config"].get("topic") == f"{name}-t2" for w in cluster
        ),
        timeout=90,
        message="new task configs on every worker",
    )

    r = http_client.delete(f"{cluster[0].url}/connectors/{name}", timeout=60)
    assert r.status_code == 204, r.text
    wait_until(
        lambda: all(name not in w.get("/connectors").json() for w in cluster), timeout=60, message="deleted everywhere"
    )
    assert cluster[1].get(f"/connectors/{name}").status_code == 404


def test_a_changed_converter_reaches_tasks_whose_task_configs_stay_the_same(
    cluster, kafka_bootstrap, unique_name, tmp_path
):
    """Kafka Connect restarts a connector's tasks when its config changed, even when the task
    configs it generates did not (this connector's carry only file, topic and batch size):
    the tasks take their converters and transforms from the connector config."""
    source = tmp_path / "in.txt"
    source.write_text("plain\n")
    name, topic = unique_name, f"{unique_name}-t"
    config = {"connector.class": NARROW_FILE_SOURCE, "file": str(source), "topic": topic, "value.converter": STRING}
    r = http_client.post(f"{cluster[0].url}/connectors", json={"name": name, "config": config}, timeout=60)
    assert r.status_code == 201, r.text
    consumer = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": f"check-{name}"})
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[bytes] = []

    def read() -> list[bytes]:
        """Every value read so far, after one more poll."""
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            values.append(message.value())
        return values

    try:
        wait_until(lambda: b"plain" in read(), timeout=120, message=lambda: f"the first line: {values}")
        json_config = {**config, "value.converter": JSON, "value.converter.schemas.enable": "true"}
        r = http_client.put(f"{cluster[1].url}/connectors/{name}/config", json=json_config, timeout=60)
        assert r.status_code == 200, r.text
        appended = 0

        def json_arrived() -> bool:
            # Lines keep coming until one reaches Kafka through the new converter: those the
            # task read before it restarted are plain strings
            nonlocal appended
            appended += 1
            with source.open("a") as out:
                out.write(f"line-{appended}\n")
            return any(v.startswith(b'{"schema":') for v in read())

        wait_until(json_arrived, timeout=120, message=lambda: f"a JsonConverter envelope on {topic}: {values[-5:]}")
    finally:
        consumer.close()
    enveloped = [v for v in values if v.startswith(b'{"schema":')]
    assert b'"payload":"line-' in enveloped[0]


def _sent(report: Path, name: str) -> dict[int, int]:
    """Per task, how many records the verifiable source has sent so far."""
    counts: dict[int, int] = defaultdict(int)
    for entry in read_report(report):
        if entry.get("name") == name and not entry.get("committed"):
            counts[entry["task"]] += 1
    return counts


def test_pause_through_one_worker_is_seen_by_all_and_stops_the_source(cluster, unique_name, tmp_path):
    report = tmp_path / "source.jsonl"
    name = unique_name
    config = {
        "connector.class": "org.apache.kafka.connect.tools.VerifiableSourceConnector",
        "tasks.max": "3",
        "topic": f"{name}-t",
        "throughput": "20",
        "report.file": str(report),
    }
    assert http_client.put(f"{cluster[0].url}/connectors/{name}/config", json=config, timeout=60).status_code == 201
    wait_until(
        lambda: _everywhere(cluster, name, "RUNNING", 3),
        timeout=150,
        message=lambda: f"3 tasks RUNNING: {[_states(w, name) for w in cluster]}",
    )
    wait_until(lambda: len(_sent(report, name)) == 3, timeout=90, message="all three tasks sending")

    assert http_client.put(f"{cluster[1].url}/connectors/{name}/pause", timeout=30).status_code == 202
    wait_until(
        lambda: _everywhere(cluster, name, "PAUSED", 3),
        timeout=60,
        message=lambda: f"PAUSED everywhere: {[_states(w, name) for w in cluster]}",
    )
    # Paused tasks send nothing: the count stops moving (a batch under way may finish first).
    settled = wait_until(
        lambda: (lambda a: a if a == _sent(report, name) else None)(_sent(report, name)),
        timeout=30,
        message="sending stopped",
    )
    stable = wait_until(lambda: _sent(report, name) == settled and settled, timeout=5, message="sending still stopped")
    assert stable == settled

    assert http_client.put(f"{cluster[2].url}/connectors/{name}/resume", timeout=30).status_code == 202
    wait_until(lambda: _everywhere(cluster, name, "RUNNING", 3), timeout=60, message="RUNNING again")
    wait_until(
        lambda: all(_sent(report, name)[t] > settled[t] for t in range(3)), timeout=60, message="every task sends again"
    )
    assert http_client.delete(f"{cluster[0].url}/connectors/{name}", timeout=60).status_code == 204


def test_failed_connector_and_task_come_back_through_the_restart_endpoints(cluster, unique_name):
    failing_task, failing_connector = f"{unique_name}-task", f"{unique_name}-conn"
    mock = "org.apache.kafka.connect.tools.MockSourceConnector"
    assert (
        http_client.put(
            f"{cluster[0].url}/connectors/{failing_task}/config",
            timeout=60,
            json={"connector.class": mock, "mock_mode": "task-failure", "delay_ms": "3000"},
        ).status_code
        == 201
    )
    assert (
        http_client.put(
            f"{cluster[1].url}/connectors/{failing_connector}/config",
            timeout=60,
            json={"connector.class": mock, "mock_mode": "connector-failure", "delay_ms": "3000"},
        ).status_code
        == 201
    )
    wait_until(
        lambda: _states(cluster[2], failing_task) == ("RUNNING", ["FAILED"]),
        timeout=150,
        message=lambda: f"task FAILED: {_states(cluster[2], failing_task)}",
    )
    wait_until(
        lambda: _states(cluster[2], failing_connector)[0] == "FAILED",
        timeout=150,
        message=lambda: f"connector FAILED: {_states(cluster[2], failing_connector)}",
    )
    trace = _status(cluster[2], failing_task)["tasks"][0]["trace"]
    assert "Traceback" in trace

    # Only failed, tasks included, through a worker that may not own them.
    r = http_client.post(
        f"{cluster[2].url}/connectors/{failing_task}/restart?includeTasks=true&onlyFailed=true", timeout=60
    )
    assert r.status_code == 202, r.text
    assert r.json()["connector"]["state"] == "RUNNING" and [t["state"] for t in r.json()["tasks"]] == ["RESTARTING"]
    # It runs again (then fails again after its delay, as the mock is told to).
    wait_until(
        lambda: _states(cluster[0], failing_task)[1] == ["RUNNING"],
        timeout=60,
        message=lambda: f"task restarted: {_states(cluster[0], failing_task)}",
    )

    r = http_client.post(f"{cluster[0].url}/connectors/{failing_connector}/restart", timeout=60)
    assert r.status_code == 204, r.text
    wait_until(
        lambda: _states(cluster[1], failing_connector)[0] == "RUNNING",
        timeout=60,
        message=lambda: f"connector restarted: {_states(cluster[1], failing_connector)}",
    )
    for name in (failing_task, failing_connector):
        assert http_client.delete(f"{cluster[1].url}/connectors/{name}", timeout=60).status_code == 204
