"""Acceptance: with ``sluice.auto.restart.enable``, a task that keeps failing comes back
after each failure, each time after a longer wait, then stays FAILED past
``sluice.auto.restart.max.restarts``; its statuses say so in Kafka's status format."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests import http_client
from tests.helpers import wait_until
from tests.integration.workers import StandaloneWorker

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneWorker]:
    w = StandaloneWorker(tmp_path_factory.mktemp("auto-restart"), kafka_bootstrap, "auto-restart")
    w.start()
    yield w
    assert w.stop() == 0, w.log()


def _task(worker: StandaloneWorker, name: str) -> dict:
    r = worker.get(f"/connectors/{name}/status")
    tasks = r.json().get("tasks") if r.status_code == 200 else None
    return tasks[0] if tasks else {}


def test_a_failing_task_is_restarted_with_growing_waits_then_left_failed(
    worker: StandaloneWorker, unique_name: str
) -> None:
    config = {
        "connector.class": "org.apache.kafka.connect.tools.MockSourceConnector",
        "mock_mode": "task-failure",
        # each instance fails 1.5 s after it started: long enough for the loop below to see
        # it RUNNING on a loaded machine (at 0.3 s a run fell between two looks at load 10)
        "delay_ms": "1500",
        "sluice.auto.restart.enable": "true",
        "sluice.auto.restart.max.restarts": "3",
        "sluice.auto.restart.backoff.initial.ms": "1000",
    }
    r = http_client.put(f"{worker.url}/connectors/{unique_name}/config", json=config, timeout=60)
    assert r.status_code == 201, r.text
    # Watch the task's state: note when each failure and each restarted run is first seen.
    failed_at: list[float] = []
    restarted: list[tuple[float, str]] = []
    last = None
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        task = _task(worker, unique_name)
        state, trace = task.get("state"), task.get("trace") or ""
        now = time.monotonic()
        if state != last:
            if state == "FAILED":
                failed_at.append(now)
            elif state == "RUNNING" and failed_at:
                restarted.append((now, trace))
            last = state
        if state == "FAILED" and "Not restarted again" in trace:
            break
        time.sleep(0.05)  # sampling the status, not waiting for a condition
    assert len(restarted) == 3, (failed_at, restarted, worker.log()[-3000:])
    assert len(failed_at) == 4
    waits = [run - failure for (run, _), failure in zip(restarted, failed_at, strict=False)]
    # 1 s, 2 s, 4 s before each restart (plus the task's start-up, a moment in a running
    # task host). The worker times each wait from the failure itself; this loop sees the
    # FAILED status a REST round trip or a sampling interval later, so a wait it measures
    # can be that much shorter.
    for wait, backoff in zip(waits, (1.0, 2.0, 4.0), strict=True):
        assert wait >= backoff - 0.3, waits
    assert waits[0] < waits[1] < waits[2], waits
    for i, (_, trace) in enumerate(restarted, start=1):
        assert f"Restarted automatically {i} time(s) of at most 3" in trace
        assert "MockSourceTask failed on purpose" in trace  # the failure before it
    final = _task(worker, unique_name)
    assert final["state"] == "FAILED"
    assert "sluice.auto.restart.max.restarts=3 restarts reached" in final["trace"]
    http_client.delete(f"{worker.url}/connectors/{unique_name}", timeout=30)


def test_without_the_setting_a_failed_task_stays_failed(worker: StandaloneWorker, unique_name: str) -> None:
    config = {
        "connector.class": "org.apache.kafka.connect.tools.MockSourceConnector",
        "mock_mode": "task-failure",
        "delay_ms": "300",
    }
    assert http_client.put(f"{worker.url}/connectors/{unique_name}/config", json=config, timeout=60).status_code == 201
    wait_until(lambda: _task(worker, unique_name).get("state") == "FAILED", timeout=120)
    trace = _task(worker, unique_name)["trace"]
    assert "Restarting automatically" not in trace and "Not restarted again" not in trace
    http_client.delete(f"{worker.url}/connectors/{unique_name}", timeout=30)
