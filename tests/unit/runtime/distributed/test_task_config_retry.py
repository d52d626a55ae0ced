"""A connector owner's task-config write that fails (the brokers away, the leader's
transactional id claimed by another worker) is retried after a growing backoff, as
Kafka's herder retries ``reconfigureConnectorTasksWithRetry``, until it is written."""

from __future__ import annotations

import pytest

from sluice.api.errors import ConnectError
from sluice.runtime.herder import distributed
from sluice.runtime.herder.distributed import DistributedHerder
from sluice.storage.memory import MemoryConfigBackingStore, MemoryStatusBackingStore
from tests.helpers import wait_until
from tests.unit.runtime.distributed.test_request_routing import FakeMember, FakeWorker

NEW_TASKS = [{"task.class": "x.Task", "n": "0"}, {"task.class": "x.Task", "n": "1"}]


class FailingConfigStore(MemoryConfigBackingStore):
    """Refuses the first ``failures`` task-config writes."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures
        self.attempts = 0

    def put_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        self.attempts += 1
        if self.attempts <= self.failures:
            raise ConnectError("Error writing the task configurations of connector c to Kafka: brokers away")
        super().put_task_configs(name, configs)


class GeneratingWorker(FakeWorker):
    def runs_connector(self, name: str) -> bool:
        return True

    def connector_task_configs(self, name: str, max_tasks: int) -> list[dict[str, str]]:
        return [dict(config) for config in NEW_TASKS]


def test_a_failed_task_config_write_is_retried_with_a_growing_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(distributed, "_TASK_CONFIG_RETRY_S", 0.01)
    store = FailingConfigStore(failures=3)
    store.put_connector_config("c", {"connector.class": "x.Source", "tasks.max": "2"})
    herder = DistributedHerder(
        GeneratingWorker(), store, MemoryStatusBackingStore(), lambda: "cluster", member_factory=None
    )  # type: ignore[arg-type]
    herder.member = FakeMember("http://me:8083", is_leader=True)  # type: ignore[assignment]
    herder._owned_connectors.add("c")

    herder._generate_task_configs("c")
    waits: list[float] = []
    while store.attempts <= store.failures:
        waits.append(herder._task_config_backoff["c"])

        def retry_queued() -> bool:
            return not herder._events.empty()

        wait_until(retry_queued, timeout=10, message="the retry queued")
        herder._drain_events()
    assert store.attempts == 4
    assert store.snapshot().task_configs["c"] == NEW_TASKS
    assert waits == [0.02, 0.04, 0.08]  # each wait doubles the one before
    assert "c" not in herder._task_config_backoff  # written: the next failure starts over
