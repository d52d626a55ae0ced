"""Acceptance: Kafka Connect's own Java plugins on Sluice — jars on ``plugin.path``, found
by Kafka's plugin scan in the worker's JVM, their connectors in the worker and their tasks
in the JVM task host (a Spark task in the executors' JVM).

Kafka's ``connect-file`` 4.3.1 jar (from Maven Central) sits next to Sluice's built-in
FileStream connectors, which carry the same class names: ``connector.plugin.version``
picks the Java ones. Kafka's test connectors (``connect-test-plugins``) go on the worker's
``CLASSPATH``, as Kafka loads them only from its own class path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from sluice import __version__ as sluice_version
from sluice_devtools.jars import kafka_connect_classpath
from tests.helpers import wait_until
from tests.integration.workers import TEST_PLUGINS, StandaloneWorker

pytestmark = pytest.mark.integration

KAFKA_VERSION = "4.3.1"
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


def _java_worker(tmp: Path, bootstrap: str, name: str, extra: dict[str, str | None] | None = None) -> StandaloneWorker:
    classpath, file_plugin_dir = kafka_connect_classpath()
    test_plugins = next(p for p in classpath if p.name.startswith("connect-test-plugins-"))
    return StandaloneWorker(
        tmp,
        bootstrap,
        name,
        {"plugin.path": f"{TEST_PLUGINS},{file_plugin_dir}", **(extra or {})},
        env={"CLASSPATH": str(test_plugins)},
    )


@pytest.fixture(scope="module")
def java_worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneWorker]:
    worker = _java_worker(tmp_path_factory.mktemp("java-plugins"), kafka_bootstrap, "java")
    worker.start()
    try:
        yield worker
    finally:
        worker.stop()


def _put(worker: StandaloneWorker, name: str, config: dict[str, str]) -> httpx2.Response:
    return httpx2.put(f"{worker.url}/connectors/{name}/config", json=config, timeout=60)


def _status(worker: StandaloneWorker, name: str) -> dict[str, Any]:
    answer = worker.get(f"/connectors/{name}/status")
    return answer.json() if answer.status_code == 200 else {}


def _running_versions(worker: StandaloneWorker, name: str) -> tuple[str, ...] | None:
    status = _status(worker, name)
    tasks = status.get("tasks") or []
    states = [status.get("connector", {}).get("state"), *(t["state"] for t in tasks)]
    if not tasks or any(state != "RUNNING" for state in states):
        return None
    return (status["connector"]["version"], *(t["version"] for t in tasks))


def test_plugin_listing_shows_both_runtimes_of_one_class(java_worker: StandaloneWorker) -> None:
    plugins = java_worker.get("/connector-plugins?connectorsOnly=false").json()
    versions = {(p["class"], p.get("version")) for p in plugins}
    assert (FILE_SOURCE, sluice_version) in versions  # Sluice's built-in
    assert (FILE_SOURCE, KAFKA_VERSION) in versions  # Kafka's jar on plugin.path
    assert (FILE_SINK, KAFKA_VERSION) in versions
    # Kafka's test connectors are left out of the listing, as Kafka leaves them out.
    assert not [p for p in plugins if ".tools." in p["class"]]


def test_a_version_nobody_has_is_refused_naming_the_installed_ones(java_worker: StandaloneWorker) -> None:
    config = {"connector.class": FILE_SOURCE, "connector.plugin.version": "9.9.9", "topic": "t", "file": "/dev/null"}
    answer = httpx2.put(
        f"{java_worker.url}/connector-plugins/FileStreamSourceConnector/config/validate", json=config, timeout=60
    )
    assert answer.status_code == 200
    values = {c["value"]["name"]: c["value"] for c in answer.json()["configs"]}
    errors = values["connector.plugin.version"]["errors"]
    assert errors and "9.9.9" in errors[0]
    assert sluice_version in errors[0] and KAFKA_VERSION in errors[0]


def test_a_failing_java_task_is_failed_with_its_java_trace_and_restarts(java_worker: StandaloneWorker) -> None:
    name = "java-mock-failure"
    config = {
        "connector.class": "org.apache.kafka.connect.tools.MockSourceConnector",
        "connector.plugin.version": KAFKA_VERSION,
        "mock_mode": "task-failure",
        "delay_ms": "500",
        "tasks.max": "1",
    }
    assert _put(java_worker, name, config).status_code == 201

    def failed_trace() -> str | None:
        tasks = _status(java_worker, name).get("tasks") or []
        return tasks[0].get("trace") if tasks and tasks[0]["state"] == "FAILED" else None

    trace = wait_until(failed_trace, timeout=90, message="the Java mock task FAILED")
    assert "java.lang.RuntimeException" in trace
    assert "at sluice-connect-runtime//org.apache.kafka.connect.tools.MockSourceTask.poll" in trace
    restarted = httpx2.post(f"{java_worker.url}/connectors/{name}/tasks/0/restart", timeout=60)
    assert restarted.status_code == 204
    wait_until(lambda: java_worker.task_state(name) == "RUNNING", timeout=60, message="the task running again")
    wait_until(failed_trace, timeout=60, message="the restarted Java mock task FAILED again")
    assert httpx2.delete(f"{java_worker.url}/connectors/{name}", timeout=60).status_code == 204


def test_java_file_pipeline_is_byte_identical_across_a_restart(
    kafka_bootstrap: str, unique_name: str, tmp_path: Path
) -> None:
    """Kafka's FileStreamSource → topic → Kafka's FileStreamSink, both Java, both at
    4.3.1; lines added while the worker was down arrive after its restart, once each."""
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    # ASCII only: Kafka's FileStreamSourceTask counts its position in characters and skips
    # that many bytes on restart, so with multi-byte characters it repeats lines (as it does
    # on Kafka Connect: it is the connector's own code running here).
    source_file.write_text("".join(f"line {i}\n" for i in range(1, 2001)), encoding="utf-8")
    topic = f"{unique_name}-java-file"
    connectors = {
        "java-file-source": {
            "connector.class": FILE_SOURCE,
            "connector.plugin.version": KAFKA_VERSION,
            "file": str(source_file),
            "topic": topic,
        },
        "java-file-sink": {
            "connector.class": "FileStreamSink",  # Kafka's alias, at the Java plugin's version
            "connector.plugin.version": KAFKA_VERSION,
            "file": str(sink_file),
            "topics": topic,
        },
    }

    def same_bytes() -> bool:
        return sink_file.exists() and sink_file.read_bytes() == source_file.read_bytes()

    # Offsets committed every second: Kafka's offset committer in the task host follows it.
    worker = _java_worker(
        tmp_path / "worker", kafka_bootstrap, "java-file", {"offset.flush.interval.ms": "1000"}
    ).start()
    try:
        for name, config in connectors.items():
            assert _put(worker, name, config).status_code == 201, name
        for name in connectors:
            versions = wait_until(lambda n=name: _running_versions(worker, n), timeout=90, message=f"{name} running")
            assert set(versions) == {KAFKA_VERSION}
        wait_until(same_bytes, timeout=90, message="the sink file equal to the source file")
        assert "A JVM task host is ready" in worker.log()
        assert worker.stop() == 0
        with source_file.open("a", encoding="utf-8") as out:
            out.write("".join(f"after restart {i}\n" for i in range(500)))
        worker.start()
        wait_until(same_bytes, timeout=120, message="the lines added while down, once each, after the restart")
        expected = [{"partition": {"filename": str(source_file)}, "offset": {"position": source_file.stat().st_size}}]
        wait_until(
            lambda: worker.get("/connectors/java-file-source/offsets").json()["offsets"] == expected,
            timeout=30,
            message=lambda: f"the source's offset at the file's end: {json.dumps(expected)}",
        )
    finally:
        worker.stop()
