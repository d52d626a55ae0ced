"""Acceptance: many Connect tasks share a task host, and each still lives and fails alone.

A standalone worker spreads its tasks over two shared task hosts (``sluice.task.hosts=2``):
six FileStreamSource connectors run in at most two Python workers (the worker logs each
task's pid; how they spread depends on when the second host connects, see the launcher's
unit tests). A MockSource in ``task-failure`` mode joins one of them and fails: only it
is FAILED, with its trace, and no other task is touched (none is started again, each keeps
its Python worker). Restarting one FileStreamSource task restarts only it: it runs again,
in a shared host, and the lines written meanwhile reach Kafka after the ones before, each
exactly once.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from tests import http_client
from tests.helpers import read_topic, wait_until
from tests.integration.workers import StandaloneWorker

pytestmark = pytest.mark.integration

STRING = "org.apache.kafka.connect.storage.StringConverter"


def _runs_in(worker: StandaloneWorker) -> list[tuple[str, int]]:
    """Every "Task c-0 runs in the task host of pid N" the worker logged, in order."""
    found = re.findall(r"Task (\S+)-0 runs in the task host of pid (\d+) ", worker.log())
    return [(name, int(pid)) for name, pid in found]


def _create(worker: StandaloneWorker, name: str, config: dict[str, str]) -> None:
    r = http_client.post(f"{worker.url}/connectors", json={"name": name, "config": config}, timeout=30)
    assert r.status_code == 201, r.text


def test_tasks_share_hosts_and_fail_and_restart_alone(kafka_bootstrap: str, unique_name: str, tmp_path: Path) -> None:
    worker = StandaloneWorker(
        tmp_path / "worker",
        kafka_bootstrap,
        "worker",
        {
            "key.converter": STRING,
            "value.converter": STRING,
            "offset.flush.interval.ms": "500",
            "sluice.task.hosts": "2",
        },
    )
    worker.start()
    try:
        names = [f"{unique_name}-{i}" for i in range(6)]
        files = {name: tmp_path / f"{name}.txt" for name in names}
        for name in names:
            files[name].write_text(f"{name} first\n")
            _create(worker, name, {"connector.class": "FileStreamSource", "file": str(files[name]), "topic": name})
        for name in names:
            wait_until(lambda name=name: worker.task_state(name) == "RUNNING", timeout=90, message=f"{name} RUNNING")
        hosts = dict(_runs_in(worker))
        per_process = Counter(hosts.values())
        assert len(per_process) <= 2 and max(per_process.values()) >= 3, hosts  # six tasks, two processes at most

        failing = f"{unique_name}-failing"
        _create(worker, failing, {"connector.class": "MockSource", "mock_mode": "task-failure", "delay_ms": "500"})
        wait_until(lambda: worker.task_state(failing) == "FAILED", timeout=90, message="the mock task FAILED")
        trace = worker.get(f"/connectors/{failing}/tasks/0/status").json()["trace"]
        assert "failed on purpose" in trace, trace
        # It joined one of the two shared hosts (the six may all be in one of them): no
        # third process was made for it.
        runs = dict(_runs_in(worker))
        assert failing in runs and len(set(runs.values())) <= 2, runs
        assert all(worker.task_state(name) == "RUNNING" for name in names)
        started_before = len(_runs_in(worker))

        restarted = names[0]
        with files[restarted].open("a") as f:
            f.write(f"{restarted} second\n")
        r = http_client.post(f"{worker.url}/connectors/{restarted}/tasks/0/restart", timeout=30)
        assert r.status_code == 204, r.text
        wait_until(
            lambda: len(_runs_in(worker)) == started_before + 1, timeout=60, message="the restarted task runs again"
        )
        assert _runs_in(worker)[-1][0] == restarted  # only it started again
        wait_until(lambda: worker.task_state(restarted) == "RUNNING", timeout=60, message="RUNNING again")
        assert all(worker.task_state(name) == "RUNNING" for name in names[1:])

        with files[restarted].open("a") as f:
            f.write(f"{restarted} third\n")
        lines = [m.value().decode() for m in read_topic(kafka_bootstrap, restarted, 3)]
        assert lines == [f"{restarted} first", f"{restarted} second", f"{restarted} third"]
        for name in names[1:]:
            assert [m.value().decode() for m in read_topic(kafka_bootstrap, name, 1)] == [f"{name} first"]
    finally:
        assert worker.stop() == 0, worker.log()
