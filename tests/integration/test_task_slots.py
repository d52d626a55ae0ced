"""Acceptance: a task that cannot get a Spark task slot is visible, never silently stalled.

Each task host holds one Spark task slot for its life; a connector with
``sluice.task.host=dedicated`` gets a host of its own for each task. A worker whose Spark
has one slot (``spark.master=local[1]``) runs a first such connector's task; a second
one's task waits for a slot and is reported UNASSIGNED with the reason in its trace. Once
the first connector is deleted, the slot frees up and the second task runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import http_client
from tests.helpers import wait_until
from tests.integration.workers import StandaloneWorker

pytestmark = pytest.mark.integration


def test_a_task_without_a_spark_slot_is_unassigned_with_the_reason_then_runs(
    kafka_bootstrap: str, unique_name: str, tmp_path: Path
) -> None:
    worker = StandaloneWorker(tmp_path / "worker", kafka_bootstrap, "worker", {"spark.master": "local[1]"})
    worker.start()
    try:
        first, second = f"{unique_name}-first", f"{unique_name}-second"
        for name in (first, second):
            source = tmp_path / f"{name}.txt"
            source.write_text("a line\n")
            config = {
                "connector.class": "FileStreamSource",
                "file": str(source),
                "topic": f"{name}-t",
                "sluice.task.host": "dedicated",
            }
            r = http_client.post(f"{worker.url}/connectors", json={"name": name, "config": config}, timeout=30)
            assert r.status_code == 201, r.text
            if name == first:
                wait_until(lambda: worker.task_state(first) == "RUNNING", timeout=90, message="first RUNNING")

        def waiting_with_reason() -> dict | None:
            status = worker.get(f"/connectors/{second}/tasks/0/status").json()
            return status if status.get("state") == "UNASSIGNED" and status.get("trace") else None

        status = wait_until(waiting_with_reason, timeout=90, message="second task UNASSIGNED with a reason")
        assert "Waiting for a Spark task slot" in status["trace"] and "local[1]" in status["trace"], status
        assert worker.task_state(first) == "RUNNING"

        assert http_client.delete(f"{worker.url}/connectors/{first}", timeout=30).status_code == 204
        wait_until(lambda: worker.task_state(second) == "RUNNING", timeout=90, message="second RUNNING")
        assert "trace" not in worker.get(f"/connectors/{second}/tasks/0/status").json()
    finally:
        assert worker.stop() == 0, worker.log()
