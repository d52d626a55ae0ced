"""A Kafka Connect REST client we did not write, against a real standalone worker.

The client is kafka-connect-py (``from kafka_connect import KafkaConnect``, pinned in the
``test`` extra), written for Apache Kafka Connect and Confluent Platform. Everything here
goes through its API only: create, list (plain and with ``expand``), inspect (info, config,
status, tasks, task status, topics), validate, update, pause, resume, stop, restart
(connector, with tasks, one task) and delete, with the observable results: states reach
PAUSED, RUNNING and STOPPED, configs round-trip, records flow from a file source through
Kafka into a file sink, and the list empties at the end.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from kafka_connect import KafkaConnect

from tests.helpers import wait_until
from tests.integration.workers import StandaloneWorker

pytestmark = pytest.mark.integration

STRING = "org.apache.kafka.connect.storage.StringConverter"
TIMEOUT = 90.0


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneWorker]:
    w = StandaloneWorker(
        tmp_path_factory.mktemp("third-party-client"),
        kafka_bootstrap,
        "client",
        extra={"key.converter": STRING, "value.converter": STRING},
    )
    w.start()
    try:
        yield w
    finally:
        code = w.stop()
        assert code == 0, f"worker exited with {code}:\n{w.log()}"


@pytest.fixture
def client(worker: StandaloneWorker) -> KafkaConnect:
    return KafkaConnect(url=worker.url)


def _states(client: KafkaConnect, name: str) -> tuple[str, list[str]]:
    status = client.get_connector_status(name)
    return status["connector"]["state"], [t["state"] for t in status["tasks"]]


def _wait_for_state(client: KafkaConnect, name: str, connector: str, tasks: list[str]) -> None:
    wait_until(
        lambda: _states(client, name) == (connector, tasks),
        timeout=TIMEOUT,
        message=lambda: f"{name}: want {connector} {tasks}, have {_states(client, name)}",
        ignore=(requests.HTTPError,),
    )


def test_connector_lifecycle_through_kafka_connect_py(
    client: KafkaConnect, worker: StandaloneWorker, unique_name: str, tmp_path: Path
) -> None:
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    source_file.write_text("alpha\nbeta\n")
    topic = f"{unique_name}-topic"
    source, sink = f"{unique_name}-source", f"{unique_name}-sink"
    source_config = {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic, "tasks.max": "1"}
    sink_config = {
        "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
        "file": str(sink_file),
        "topics": topic,
        "tasks.max": "1",
    }

    # -- the worker and its plugins
    info = client.get_cluster_info()
    assert set(info) == {"version", "commit", "kafka_cluster_id"} and info["kafka_cluster_id"]
    plugins = {p["class"]: p["type"] for p in client.list_connector_plugins()}
    assert plugins["org.apache.kafka.connect.file.FileStreamSourceConnector"] == "source"
    assert plugins["org.apache.kafka.connect.file.FileStreamSinkConnector"] == "sink"
    validation = client.validate_connector_config("FileStreamSource", {**source_config, "name": source})
    assert validation["name"] == "FileStreamSource" and validation["error_count"] == 0
    invalid = client.validate_connector_config(
        "FileStreamSource", {"connector.class": "FileStreamSource", "tasks.max": "0"}
    )
    assert invalid["error_count"] >= 1

    # -- create
    assert client.list_connectors() == []
    created = client.create_connector({"name": source, "config": source_config})
    assert created["name"] == source and created["type"] == "source"
    assert created["config"] == {**source_config, "name": source}
    assert created["tasks"] == [{"connector": source, "task": 0}]
    created = client.create_connector({"name": sink, "config": sink_config})
    assert created["type"] == "sink" and created["config"] == {**sink_config, "name": sink}
    with pytest.raises(requests.HTTPError) as conflict:
        client.create_connector({"name": source, "config": source_config})
    assert conflict.value.response.status_code == 409
    assert conflict.value.response.json() == {"error_code": 409, "message": f"Connector {source} already exists"}

    # -- list, plain and expanded
    assert sorted(client.list_connectors()) == sorted([source, sink])
    assert client.list_connectors(pattern=r".*-source$") == [source]
    _wait_for_state(client, source, "RUNNING", ["RUNNING"])
    _wait_for_state(client, sink, "RUNNING", ["RUNNING"])
    expanded = client.list_connectors(expand="status")
    assert set(expanded) == {source, sink}
    assert expanded[source]["status"]["connector"]["state"] == "RUNNING"
    assert expanded[sink]["status"]["type"] == "sink"
    expanded = client.list_connectors(expand="info")
    assert expanded[source]["info"]["config"] == {**source_config, "name": source}
    assert set(client.list_connectors(state="running")) == {source, sink}

    # -- inspect
    got = client.get_connector(source)
    assert got == {
        "name": source,
        "config": {**source_config, "name": source},
        "tasks": [{"connector": source, "task": 0}],
        "type": "source",
    }
    assert client.get_connector_config(sink) == {**sink_config, "name": sink}
    tasks = client.list_connector_tasks(source)
    assert [t["id"] for t in tasks] == [{"connector": source, "task": 0}]
    assert tasks[0]["config"]["file"] == str(source_file)
    task_status = client.get_connector_task_status(source, 0)
    assert task_status["id"] == 0 and task_status["state"] == "RUNNING" and task_status["worker_id"]

    # -- records flow from the source file through Kafka into the sink file
    wait_until(
        lambda: sink_file.exists() and sink_file.read_text().splitlines() == ["alpha", "beta"],
        timeout=TIMEOUT,
        message="the sink wrote what the source read",
    )
    for name in (source, sink):
        wait_until(
            lambda n=name: client.list_connector_topics(n) == {n: {"topics": [topic]}},
            timeout=TIMEOUT,
            message=f"the active topics of {name}",
        )
    client.reset_connector_topics(sink)
    assert client.list_connector_topics(sink) == {sink: {"topics": []}}

    # -- pause and resume
    client.pause_connector(source)
    _wait_for_state(client, source, "PAUSED", ["PAUSED"])
    client.resume_connector(source)
    _wait_for_state(client, source, "RUNNING", ["RUNNING"])
    client.pause_all_connectors(pattern=f"^{unique_name}-")
    _wait_for_state(client, source, "PAUSED", ["PAUSED"])
    _wait_for_state(client, sink, "PAUSED", ["PAUSED"])
    client.resume_all_connectors(pattern=f"^{unique_name}-", state="paused")
    _wait_for_state(client, source, "RUNNING", ["RUNNING"])
    _wait_for_state(client, sink, "RUNNING", ["RUNNING"])

    # -- stop (no tasks while STOPPED) and resume
    client.stop_connector(source)
    _wait_for_state(client, source, "STOPPED", [])
    assert client.get_connector(source)["tasks"] == []
    client.resume_connector(source)
    _wait_for_state(client, source, "RUNNING", ["RUNNING"])

    # -- restart: the connector alone (204), with its tasks (202 and the plan), one task
    assert client.restart_connector(source) is None
    _wait_for_state(client, source, "RUNNING", ["RUNNING"])
    plan = client.restart_connector(sink, include_tasks=True)
    assert plan["name"] == sink and plan["connector"]["state"] == "RESTARTING"
    assert [t["state"] for t in plan["tasks"]] == ["RESTARTING"]
    _wait_for_state(client, sink, "RUNNING", ["RUNNING"])
    assert client.restart_connector(sink, include_tasks=True, only_failed=True)["tasks"][0]["state"] == "RUNNING"
    client.restart_connector_task(source, 0)
    _wait_for_state(client, source, "RUNNING", ["RUNNING"])

    # -- update: the new config round-trips and takes effect (the sink writes to its new
    # file, from where its committed offsets left off)
    new_sink_file = tmp_path / "out2.txt"
    updated = client.update_connector(sink, {**sink_config, "file": str(new_sink_file)})
    assert updated["config"] == {**sink_config, "file": str(new_sink_file), "name": sink}
    assert client.get_connector_config(sink)["file"] == str(new_sink_file)
    _wait_for_state(client, sink, "RUNNING", ["RUNNING"])
    with source_file.open("a") as out:
        out.write("gamma\n")
    wait_until(
        lambda: new_sink_file.exists() and new_sink_file.read_text().splitlines() == ["gamma"],
        timeout=TIMEOUT,
        message="gamma, alone, in the new sink file",
    )

    # -- errors come back as Kafka's error body
    with pytest.raises(requests.HTTPError) as missing:
        client.get_connector(f"{unique_name}-nope")
    assert missing.value.response.status_code == 404
    assert missing.value.response.json() == {"error_code": 404, "message": f"Connector {unique_name}-nope not found"}

    # -- delete: the list empties
    client.delete_connector(source)
    client.delete_connector(sink)
    assert client.list_connectors() == []
    assert client.list_connectors(expand="status") == {}
