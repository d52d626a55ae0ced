"""The test connectors (``org.apache.kafka.connect.tools.*``) on a real standalone worker:
verifiable source → Kafka → verifiable sink with every seqno accounted for, and the mock
connectors failing on demand and coming back through the restart endpoints."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from sluice.connectors.testing import read_report
from sluice.connectors.testing.report import plugin_version
from tests import http_client
from tests.helpers import wait_until
from tests.integration.workers import StandaloneWorker

pytestmark = pytest.mark.integration

VERIFIABLE_SOURCE = "org.apache.kafka.connect.tools.VerifiableSourceConnector"
VERIFIABLE_SINK = "org.apache.kafka.connect.tools.VerifiableSinkConnector"
MOCK_SOURCE = "org.apache.kafka.connect.tools.MockSourceConnector"
MOCK_SINK = "org.apache.kafka.connect.tools.MockSinkConnector"


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory):
    w = StandaloneWorker(tmp_path_factory.mktemp("testing-connectors"), kafka_bootstrap, "worker")
    w.start()
    yield w
    assert w.stop() == 0, w.log()


def _create(worker: StandaloneWorker, name: str, config: dict[str, str]) -> None:
    r = http_client.post(f"{worker.url}/connectors", json={"name": name, "config": config}, timeout=30)
    assert r.status_code == 201, r.text


def _delete(worker: StandaloneWorker, *names: str) -> None:
    for name in names:
        assert http_client.delete(f"{worker.url}/connectors/{name}", timeout=60).status_code == 204


def _status(worker: StandaloneWorker, name: str) -> dict[str, Any]:
    return worker.get(f"/connectors/{name}/status").json()


def _seqnos(report: Path | list[dict[str, Any]], name: str, flag: str | None) -> dict[int, list[int]]:
    """Per (source) task, the seqnos of the report lines of connector ``name`` that carry
    ``flag`` (``committed``/``flushed``; ``None``: lines carrying neither), in file order.
    ``report``: the file, or lines read from it before."""
    by_task: dict[int, list[int]] = defaultdict(list)
    for entry in read_report(report) if isinstance(report, Path) else report:
        if entry.get("name") != name:
            continue
        if (flag is None and not entry.get("committed") and not entry.get("flushed")) or (flag and entry.get(flag)):
            by_task[entry["task"]].append(entry["seqno"])
    return by_task


def _covers(report: Path, name: str, flag: str, tasks: list[int], upto: int) -> bool:
    seen = _seqnos(report, name, flag)
    return all(set(range(upto + 1)) <= set(seen.get(t, [])) for t in tasks)


def test_verifiable_source_to_sink_accounts_for_every_seqno(worker, unique_name, tmp_path):
    topic = f"{unique_name}-t"
    source, sink = f"{unique_name}-src", f"{unique_name}-sink"
    source_report, sink_report = tmp_path / "source.jsonl", tmp_path / "sink.jsonl"
    _create(
        worker,
        source,
        {
            "connector.class": VERIFIABLE_SOURCE,
            "tasks.max": "2",
            "topic": topic,
            "throughput": "50",
            "report.file": str(source_report),
        },
    )
    _create(
        worker,
        sink,
        {"connector.class": "VerifiableSink", "tasks.max": "2", "topics": topic, "report.file": str(sink_report)},
    )
    n = 100  # two seconds of records per task

    wait_until(
        lambda: _covers(sink_report, sink, "flushed", [0, 1], n),
        timeout=120,
        message=lambda: f"sink flushed seqnos 0..{n} of both source tasks; {_status(worker, sink)}",
    )
    wait_until(
        lambda: _covers(source_report, source, "committed", [0, 1], n),
        timeout=60,
        message=lambda: f"source reported 0..{n} committed; {_status(worker, source)}",
    )

    # one reading of each file: the tasks write on, and a later reading has more lines
    source_lines, sink_lines = read_report(source_report), read_report(sink_report)
    sent = _seqnos(source_lines, source, None)
    committed = _seqnos(source_lines, source, "committed")
    flushed = _seqnos(sink_lines, sink, "flushed")
    received = _seqnos(sink_lines, sink, None)
    for task in (0, 1):
        # one instance per task, running all along: no gaps, no duplicates anywhere
        assert sent[task] == list(range(len(sent[task])))
        assert committed[task] == list(range(len(committed[task])))
        assert len(committed[task]) <= len(sent[task])
        assert flushed[task] == list(range(len(flushed[task])))  # the topic's one partition keeps task order
        assert flushed[task] == received[task][: len(flushed[task])]
    assert {e["sinkTask"] for e in sink_lines} == {0}  # one partition: one sink task has it
    offsets = [e["offset"] for e in sink_lines if not e.get("flushed")]
    assert offsets == list(range(len(offsets)))
    source_line = source_lines[0]
    assert set(source_line) == {"name", "task", "topic", "time_ms", "seqno"} and source_line["topic"] == topic

    # A clean restart of one source task: it resumes after its committed seqno, and its
    # committed report stays consecutive with no duplicates (the old instance's producer
    # delivered and its offsets were stored before it stopped).
    before = len(_seqnos(source_report, source, "committed")[0])
    r = http_client.post(f"{worker.url}/connectors/{source}/tasks/0/restart", timeout=60)
    assert r.status_code == 204, r.text
    wait_until(lambda: worker.task_state(source, 0) == "RUNNING", timeout=90, message="task 0 RUNNING again")
    wait_until(
        lambda: len(_seqnos(source_report, source, "committed")[0]) >= before + 50,
        timeout=90,
        message="task 0 commits again after its restart",
    )
    committed = _seqnos(source_report, source, "committed")[0]
    assert committed == list(range(len(committed)))
    sent = _seqnos(source_report, source, None)[0]
    assert sorted(set(sent)) == list(range(max(sent) + 1))  # re-sent, maybe, but nothing skipped
    top = max(committed)
    wait_until(
        lambda: _covers(sink_report, sink, "flushed", [0], top),
        timeout=60,
        message=f"sink flushed task 0's seqnos up to {top}",
    )
    _delete(worker, source, sink)


def test_mock_source_task_failure_and_restart_of_only_failed_tasks(worker, unique_name):
    _create(
        worker,
        unique_name,
        {"connector.class": MOCK_SOURCE, "mock_mode": "task-failure", "delay_ms": "4000", "tasks.max": "3"},
    )
    assert worker.get(f"/connectors/{unique_name}/tasks").json() == [
        {
            "id": {"connector": unique_name, "task": 0},
            "config": {
                "connector.class": MOCK_SOURCE,
                "mock_mode": "task-failure",
                "delay_ms": "4000",
                "tasks.max": "3",
                "name": unique_name,
                "task.class": "org.apache.kafka.connect.tools.MockSourceTask",
            },
        }
    ]  # one task, with the connector's config and Kafka's task class name, as in Kafka

    wait_until(lambda: worker.task_state(unique_name) == "FAILED", timeout=90, message="task FAILED")
    status = _status(worker, unique_name)
    assert status["connector"]["state"] == "RUNNING"
    # the plugin version on both statuses, the failed task's too (Kafka 4.x)
    assert status["connector"]["version"] == status["tasks"][0]["version"] == plugin_version()
    trace = status["tasks"][0]["trace"]
    assert "Traceback (most recent call last)" in trace
    assert "RuntimeError: MockSourceTask failed on purpose 4000 ms after it started (mock_mode=task-failure)" in trace

    r = http_client.post(f"{worker.url}/connectors/{unique_name}/restart?includeTasks=true&onlyFailed=true", timeout=60)
    assert r.status_code == 202, r.text
    plan = r.json()
    assert plan["connector"]["state"] == "RUNNING"  # not failed: left alone
    assert [(t["id"], t["state"], t["version"]) for t in plan["tasks"]] == [(0, "RESTARTING", plugin_version())]
    # it runs again, and fails again once the delay has passed since its new start
    wait_until(lambda: worker.task_state(unique_name) == "RUNNING", timeout=90, message="task RUNNING again")
    wait_until(lambda: worker.task_state(unique_name) == "FAILED", timeout=90, message="task FAILED again")
    assert "MockSourceTask failed on purpose" in _status(worker, unique_name)["tasks"][0]["trace"]
    _delete(worker, unique_name)


def test_mock_connector_failure_and_restart(worker, unique_name):
    _create(
        worker, unique_name, {"connector.class": "MockSource", "mock_mode": "connector-failure", "delay_ms": "3000"}
    )
    wait_until(
        lambda: _status(worker, unique_name)["connector"]["state"] == "FAILED", timeout=60, message="connector FAILED"
    )
    status = _status(worker, unique_name)
    assert "RuntimeError: MockConnector failed on purpose 3000 ms after it started" in status["connector"]["trace"]
    assert status["tasks"][0]["state"] == "RUNNING"  # its task idles on

    r = http_client.post(f"{worker.url}/connectors/{unique_name}/restart?onlyFailed=true", timeout=60)
    assert r.status_code == 202, r.text
    assert r.json()["connector"]["state"] == "RESTARTING"
    assert [t["state"] for t in r.json()["tasks"]] == ["RUNNING"]
    wait_until(
        lambda: _status(worker, unique_name)["connector"]["state"] == "RUNNING",
        timeout=60,
        message="connector RUNNING again",
    )
    wait_until(
        lambda: _status(worker, unique_name)["connector"]["state"] == "FAILED",
        timeout=60,
        message="connector FAILED again",
    )
    _delete(worker, unique_name)


def test_mock_sink_task_failure_without_any_record(worker, unique_name):
    # Kafka calls put() after every consumer poll, records or not, and the mock asks through
    # context.timeout to be called every 250 ms: it fails after its delay with no data at all.
    _create(
        worker,
        unique_name,
        {
            "connector.class": MOCK_SINK,
            "topics": f"{unique_name}-empty",
            "mock_mode": "task-failure",
            "delay_ms": "3000",
        },
    )
    wait_until(lambda: worker.task_state(unique_name) == "FAILED", timeout=90, message="sink task FAILED")
    trace = _status(worker, unique_name)["tasks"][0]["trace"]
    assert "RuntimeError: MockSinkTask failed on purpose 3000 ms after it started (mock_mode=task-failure)" in trace
    _delete(worker, unique_name)
