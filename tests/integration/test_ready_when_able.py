"""Ready means ready (issue 29), on three ``sluice distributed`` workers started together on
a real broker, as Kafka's own Connect system tests start a cluster:

* a worker joins its group only once its engine can run a task: ``GET /health`` answers
  503 ``starting``, with what the worker waits for, until then, and 200 after;
* connectors created the moment the workers answer REST run their tasks at once: Kafka's
  ``MockSinkConnector`` and ``MockSourceConnector`` in ``task-failure`` mode show FAILED,
  and a FileStreamSource's first records arrive, within deadlines near Kafka's (the
  system tests give 20 s and 15 s; ours are larger so that a busy machine stays green —
  ``bench/startup.py`` carries the figures);
* writes sent back to back, each starting a rebalance, through the leader and through
  followers, get the answers Kafka Connect gives once the rebalance is over — never the
  immediate "no known leader" 409 — and leave no connector behind.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests import http_client
from tests.helpers import read_topic, wait_until
from tests.integration.workers import QUICK_GROUP_SETTINGS, DistributedWorker

pytestmark = pytest.mark.integration

log = logging.getLogger(__name__)

MOCK_SINK = "org.apache.kafka.connect.tools.MockSinkConnector"
MOCK_SOURCE = "org.apache.kafka.connect.tools.MockSourceConnector"
FAILURE_DELAY_MS = 5000  # Kafka's system tests fail their mock tasks 5 s after they start
FAILED_DEADLINE_S = 40.0  # Kafka's: 20 s from creation
FIRST_RECORDS_DEADLINE_S = 30.0  # Kafka's: 15 s
NO_LEADER = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."


@pytest.fixture(scope="module")
def cluster(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[DistributedWorker]]:
    """Three workers spawned at once; yielded as soon as each answers REST, with what
    each one's ``/health`` said at that moment."""
    base = tmp_path_factory.mktemp("ready")
    group = f"ready-{base.name}"
    workers = [
        DistributedWorker(base / f"w{i}", kafka_bootstrap, f"w{i}", group, extra=QUICK_GROUP_SETTINGS) for i in range(3)
    ]
    try:
        for worker in workers:
            worker.spawn()
        for worker in workers:
            worker.wait_for("/", 200, timeout=120)
        yield workers
    finally:
        codes = [worker.stop() for worker in workers]
        assert codes == [0, 0, 0], "\n".join(w.log()[-3000:] for w in workers)


def _post(worker: DistributedWorker, path: str, body: dict | None = None) -> httpx2.Response:
    return http_client.post(worker.url + path, json=body, timeout=120)


def _put(worker: DistributedWorker, path: str, body: dict | None = None) -> httpx2.Response:
    return http_client.put(worker.url + path, json=body, timeout=120)


def _task_state(worker: DistributedWorker, name: str) -> str | None:
    r = worker.get(f"/connectors/{name}/status")
    tasks = r.json().get("tasks", []) if r.status_code == 200 else []
    return tasks[0]["state"] if tasks else None


def test_tasks_of_connectors_created_as_the_workers_start_run_at_once(
    cluster: list[DistributedWorker], kafka_bootstrap: str, unique_name: str, tmp_path: Path
) -> None:
    # Right after the REST API answers, no worker can run a task yet: each says why.
    health = [w.get("/health") for w in cluster]
    assert [h.status_code for h in health] == [503, 503, 503], [h.text for h in health]
    for answer in health:
        body = answer.json()
        assert body["status"] == "starting"
        assert body["message"].startswith("Worker is still starting up. The worker is currently "), body

    source_file = tmp_path / "in.txt"
    source_file.write_text("".join(f"line {i}\n" for i in range(5)))
    connectors = {
        f"{unique_name}-sink": {
            "connector.class": MOCK_SINK,
            "mock_mode": "task-failure",
            "delay_ms": str(FAILURE_DELAY_MS),
            "topics": f"{unique_name}-in",
        },
        f"{unique_name}-mock-source": {
            "connector.class": MOCK_SOURCE,
            "mock_mode": "task-failure",
            "delay_ms": str(FAILURE_DELAY_MS),
        },
        f"{unique_name}-file": {
            "connector.class": "FileStreamSource",
            "file": str(source_file),
            "topic": f"{unique_name}-out",
        },
    }
    created: dict[str, float] = {}
    for i, (name, config) in enumerate(connectors.items()):
        # A request made while the worker starts waits for it, as Kafka's herder queue does.
        r = _post(cluster[i % 3], "/connectors", {"name": name, "config": config})
        assert r.status_code == 201, r.text
        created[name] = time.monotonic()

    for name in list(connectors)[:2]:
        wait_until(
            lambda name=name: _task_state(cluster[0], name) == "FAILED",
            timeout=FAILED_DEADLINE_S,
            message=f"{name}'s task FAILED",
        )
        log.info("%s: task FAILED %.1f s after its creation", name, time.monotonic() - created[name])
    file_name = list(connectors)[2]
    records = read_topic(kafka_bootstrap, f"{unique_name}-out", 5, timeout=FIRST_RECORDS_DEADLINE_S)
    assert len(records) == 5
    log.info("%s: first records %.1f s after its creation", file_name, time.monotonic() - created[file_name])

    for worker in cluster:
        worker.wait_for("/health", 200, timeout=30)
    trace = cluster[1].get(f"/connectors/{unique_name}-sink/tasks/0/status").json()["trace"]
    assert "failed on purpose" in trace, trace


def test_writes_that_each_start_a_rebalance_wait_it_out_through_leader_and_followers(
    cluster: list[DistributedWorker], unique_name: str
) -> None:
    for worker in cluster:
        worker.wait_for("/health", 200, timeout=120)
    refusals: list[str] = []

    def expect(answer: httpx2.Response, status: int, what: str) -> None:
        if answer.status_code == 409 and answer.json().get("message") == NO_LEADER:
            refusals.append(what)
        assert answer.status_code == status, f"{what}: {answer.status_code} {answer.text}"

    names = [f"{unique_name}-{i}" for i in range(6)]
    for i, name in enumerate(names):
        # Each write goes through another worker than the one before: the leader is one of
        # the three, so every kind of write goes through the leader and through followers.
        a, b, c = cluster[i % 3], cluster[(i + 1) % 3], cluster[(i + 2) % 3]
        config = {"connector.class": MOCK_SOURCE, "tasks.max": "1"}
        expect(_post(a, "/connectors", {"name": name, "config": config}), 201, f"create {name}")
        expect(_put(b, f"/connectors/{name}/pause"), 202, f"pause {name}")
        expect(_put(c, f"/connectors/{name}/resume"), 202, f"resume {name}")
        expect(_post(a, f"/connectors/{name}/restart"), 204, f"restart {name}")
        expect(_put(b, f"/connectors/{name}/config", {**config, "tasks.max": "2"}), 200, f"reconfigure {name}")
        if i % 2:
            expect(_put(c, f"/connectors/{name}/stop"), 204, f"stop {name}")
        expect(http_client.delete(f"{c.url}/connectors/{name}", timeout=120), 204, f"delete {name}")
    assert refusals == []

    def none_left() -> bool:
        return all(not set(names) & set(worker.get("/connectors").json()) for worker in cluster)

    wait_until(none_left, timeout=60, message="no connector of the loop left on any worker")
