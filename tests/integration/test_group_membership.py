"""Group membership and leadership through a real broker's group coordinator.

Workers here are :class:`WorkerGroupMember` instances in one process, each polled by its
own thread as a herder's tick thread would, with a fixed config snapshot (2 connectors ×
3 tasks) or, next to Kafka Connect, the config topic as Sluice's config store reads it.
They check, against Kafka's own coordination:

* every connector and task is run by exactly one worker, balanced, and every worker knows
  the leader's URL;
* a worker that leaves the group: its work moves only once
  ``scheduled.rebalance.max.delay.ms`` is over, to the others, and nothing else moves;
* a joining worker gets its share while the rest stays put;
* a worker that dies without leaving: the group notices after ``session.timeout.ms``,
  then its work moves after the delay;
* a mixed group with Apache Kafka Connect 4.3.1's own ``ConnectDistributed``: each side
  reads the other's metadata and assignments, whichever leads; work assigned to the
  Java worker runs there (seen through its REST API).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from sluice.runtime.distributed import Assignment, WorkerGroupMember
from sluice.storage.base import TaskStatus
from sluice.storage.kafka_config import KafkaConfigBackingStore
from sluice.storage.kafka_status import KafkaStatusBackingStore
from tests.helpers import wait_until
from tests.integration.kafka_connect_reference import ConnectDistributedWorker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

CONFIG = {"c1": 3, "c2": 3}
ALL_WORK: set[Any] = set(CONFIG) | {(c, i) for c, n in CONFIG.items() for i in range(n)}
DELAY_MS = 2000
SESSION_MS = 6000  # the broker's group.min.session.timeout.ms
HEARTBEAT_MS = 1000


class Worker:
    """A member polled by its own thread, recording what its listener is told."""

    def __init__(
        self,
        name: str,
        bootstrap: str,
        group: str,
        *,
        config_snapshot: Callable[[], tuple[int, dict[str, int]]] = lambda: (10, dict(CONFIG)),
        on_failed_assignment: Callable[[], None] | None = None,
    ) -> None:
        self.name = name
        self.url = f"http://{name}:8083/"
        self._on_failed = on_failed_assignment
        self._lock = threading.Lock()
        self.running: set[Any] = set()
        self.events: list[tuple[float, str, Any]] = []  # (time, "assigned"/"revoked", data)
        self.error: BaseException | None = None
        self.member = WorkerGroupMember(
            bootstrap_servers=bootstrap,
            group_id=group,
            worker_url=self.url,
            listener=self,
            config_snapshot=config_snapshot,
            session_timeout_ms=SESSION_MS,
            heartbeat_interval_ms=HEARTBEAT_MS,
            rebalance_timeout_ms=10_000,
            scheduled_rebalance_max_delay_ms=DELAY_MS,
        )
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"tick-{name}", daemon=True)
        self._thread.start()

    # RebalanceListener
    def on_assigned(self, assignment: Assignment, generation: int) -> None:
        if assignment.failed and self._on_failed is not None:
            self._on_failed()  # as the herder does: catch up on the config topic
        with self._lock:
            gained = (set(assignment.connectors) | set(assignment.tasks)) - self.running
            self.running = set(assignment.connectors) | set(assignment.tasks)
            self.events.append((time.monotonic(), "assigned", (assignment, gained)))

    def on_revoked(self, leader: str | None, connectors: list[str], tasks: list[tuple[str, int]]) -> None:
        with self._lock:
            self.running -= set(connectors) | set(tasks)
            self.events.append((time.monotonic(), "revoked", (connectors, tasks)))

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self.member.poll(200)
        except BaseException as exc:  # surfaced by the test
            self.error = exc
            raise

    def work(self) -> set[Any]:
        with self._lock:
            return set(self.running)

    def first_gain_after(self, since: float, items: set[Any]) -> float | None:
        with self._lock:
            times = [t for t, kind, data in self.events if kind == "assigned" and t >= since and data[1] & items]
        return min(times) if times else None

    def delays_after(self, since: float) -> list[tuple[float, int]]:
        with self._lock:
            return [(t, data[0].delay_ms) for t, kind, data in self.events if kind == "assigned" and t >= since]

    def stop(self, *, leave_group: bool = True) -> None:
        self._stop.set()
        self.member.wakeup()
        self._thread.join(timeout=30)
        self.member.stop(leave_group=leave_group)


class Cluster:
    def __init__(self, bootstrap: str, group: str) -> None:
        self.bootstrap = bootstrap
        self.group = group
        self.workers: dict[str, Worker] = {}

    def add(self, name: str) -> Worker:
        worker = Worker(name, self.bootstrap, self.group)
        self.workers[name] = worker
        return worker

    def remove(self, name: str, *, leave_group: bool = True) -> Worker:
        worker = self.workers.pop(name)
        worker.stop(leave_group=leave_group)
        return worker

    def check_threads(self) -> None:
        for worker in self.workers.values():
            if worker.error is not None:
                raise AssertionError(f"{worker.name}'s poll failed") from worker.error

    def ownership(self) -> dict[str, set[Any]]:
        self.check_threads()
        return {name: w.work() for name, w in self.workers.items()}

    def converged(self) -> dict[str, set[Any]] | None:
        """The ownership, once every item runs exactly once, balanced, and every member
        agrees on the leader; else None."""
        owned = self.ownership()
        items = [x for work in owned.values() for x in work]
        if len(items) != len(ALL_WORK) or set(items) != ALL_WORK:
            return None
        connectors = [sum(1 for x in w if isinstance(x, str)) for w in owned.values()]
        tasks = [sum(1 for x in w if isinstance(x, tuple)) for w in owned.values()]
        if max(connectors) - min(connectors) > 1 or max(tasks) - min(tasks) > 1:
            return None
        members = [w.member for w in self.workers.values()]
        leaders = [m for m in members if m.is_leader]
        if len(leaders) != 1 or any(m.rebalance_pending for m in members):
            return None
        leader_url = next(w.url for w in self.workers.values() if w.member.is_leader)
        if {m.leader_url for m in members} != {leader_url}:
            return None
        return owned

    def wait_converged(self, timeout: float = 30) -> dict[str, set[Any]]:
        return wait_until(self.converged, timeout=timeout, message=lambda: f"not converged: {self.ownership()}")

    def a_follower(self) -> str:
        return next(name for name, w in self.workers.items() if not w.member.is_leader)

    def stop_all(self) -> None:
        for name in list(self.workers):
            self.remove(name)


@pytest.fixture
def cluster(kafka_bootstrap: str, unique_name: str) -> Iterator[Cluster]:
    cluster = Cluster(kafka_bootstrap, f"connect-{unique_name}")
    try:
        yield cluster
    finally:
        cluster.stop_all()


def test_membership_balance_leave_and_join(cluster: Cluster) -> None:
    for name in ("w1", "w2", "w3"):
        cluster.add(name)
    owned = cluster.wait_converged()
    assert all(owned.values()), owned  # 8 items over 3 workers: everybody runs something
    leader = next(w for w in cluster.workers.values() if w.member.is_leader)
    assert {w.member.leader_id for w in cluster.workers.values()} == {leader.member.member_id}
    assert len({w.member.generation for w in cluster.workers.values()}) == 1

    # A follower leaves: its work is held back for the delay, then moves; nothing else moves.
    name = cluster.a_follower()
    lost = owned[name]
    left_at = time.monotonic()
    cluster.remove(name)
    after_leave = cluster.wait_converged()
    moved_at = min(t for t in (w.first_gain_after(left_at, lost) for w in cluster.workers.values()) if t)
    assert moved_at - left_at >= DELAY_MS / 1000 - 0.05, "the departed worker's work moved before the delay"
    assert any(
        delay == DELAY_MS or 0 < delay <= DELAY_MS
        for w in cluster.workers.values()
        for _, delay in w.delays_after(left_at)
    )
    for other, work in after_leave.items():
        assert owned[other] <= work, f"{other} lost work it had when {name} left"

    # A new worker joins: it gets a share; whatever moved, moved to it.
    cluster.add("w4")
    after_join = cluster.wait_converged()
    assert after_join["w4"]
    for other in after_leave:
        moved_away = after_leave[other] - after_join[other]
        assert moved_away <= after_join["w4"], f"{other}'s {moved_away} went elsewhere than the new worker"
        assert not after_join[other] - after_leave[other], f"{other} gained work when a worker joined"
    kept = sum(len(after_leave[o] & after_join[o]) for o in after_leave)
    assert kept == len(ALL_WORK) - len(after_join["w4"])


def test_a_worker_that_dies_is_noticed_after_the_session_timeout(cluster: Cluster) -> None:
    for name in ("w1", "w2", "w3"):
        cluster.add(name)
    owned = cluster.wait_converged()
    name = cluster.a_follower()
    lost = owned[name]
    killed_at = time.monotonic()
    cluster.remove(name, leave_group=False)  # no LeaveGroup: the process "crashed"

    wait_until(
        lambda: cluster.converged() and not any(w.member.rebalance_pending for w in cluster.workers.values()),
        timeout=SESSION_MS / 1000 + DELAY_MS / 1000 + 20,
        message="lost work was not reassigned",
    )
    survivors = cluster.workers.values()
    noticed = [t for w in survivors for t, delay in w.delays_after(killed_at) if delay > 0]
    assert noticed, "no delayed rebalance after the worker died"
    # The coordinator noticed no earlier than a session timeout after the last heartbeat.
    assert min(noticed) - killed_at >= (SESSION_MS - HEARTBEAT_MS) / 1000 - 0.05
    moved_at = min(t for t in (w.first_gain_after(killed_at, lost) for w in survivors) if t)
    assert moved_at - min(noticed) >= DELAY_MS / 1000 - 0.05
    for other, work in cluster.ownership().items():
        assert owned[other] <= work


SLUICE_WORKER_ID = "sluice:8083"


class StatusWritingWorker(Worker):
    """A worker that reports its tasks RUNNING / UNASSIGNED on the status topic, as the
    herder would, so that Apache Kafka Connect's REST API shows who runs what."""

    def __init__(self, *args: Any, status_store: KafkaStatusBackingStore, **kwargs: Any) -> None:
        self._status = status_store
        super().__init__(*args, **kwargs)

    def on_assigned(self, assignment: Assignment, generation: int) -> None:
        before = self.work()
        super().on_assigned(assignment, generation)
        for connector, task in sorted(set(assignment.tasks) - before):
            self._status.put_task(TaskStatus(connector, task, "RUNNING", SLUICE_WORKER_ID, generation=generation))

    def on_revoked(self, leader: str | None, connectors: list[str], tasks: list[tuple[str, int]]) -> None:
        super().on_revoked(leader, connectors, tasks)
        for connector, task in tasks:
            self._status.put_task_safe(
                TaskStatus(connector, task, "UNASSIGNED", SLUICE_WORKER_ID, generation=self.member.generation)
            )


def _running_tasks(java: ConnectDistributedWorker, connector: str) -> dict[str, set[tuple[str, int]]]:
    """Worker id → the tasks Kafka Connect's REST API shows RUNNING there."""
    response = java.request("GET", f"/connectors/{connector}/status")
    running: dict[str, set[tuple[str, int]]] = {}
    if response.status_code == 200:
        for task in response.json()["tasks"]:
            if task["state"] == "RUNNING":
                running.setdefault(task["worker_id"], set()).add((connector, task["id"]))
    return running


def test_mixed_group_with_apache_kafka_connect(kafka_bootstrap: str, unique_name: str, tmp_path: Path) -> None:
    group = f"connect-{unique_name}"
    topics = {kind: f"{unique_name}-{kind}" for kind in ("configs", "offsets", "status", "data")}
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    for future in admin.create_topics([NewTopic(topics["data"], 1, 1)]).values():
        future.result(30)

    def java_worker(name: str) -> ConnectDistributedWorker:
        return ConnectDistributedWorker(
            tmp_path / name,
            kafka_bootstrap,
            group_id=group,
            config_topic=topics["configs"],
            offset_topic=topics["offsets"],
            status_topic=topics["status"],
            extra={"scheduled.rebalance.max.delay.ms": str(DELAY_MS), "heartbeat.interval.ms": str(HEARTBEAT_MS)},
        )

    connector = "sink"
    all_tasks = {(connector, i) for i in range(4)}
    java = java_worker("java-1").start()
    stores: list[KafkaConfigBackingStore | KafkaStatusBackingStore] = []
    sluice: Worker | None = None
    try:
        # Java leads; the connector is created through its REST API.
        response = java.request(
            "PUT",
            f"/connectors/{connector}/config",
            json={
                "connector.class": "FileStreamSink",
                "tasks.max": "4",
                "topics": topics["data"],
                "file": str(tmp_path / "sink.txt"),
            },
        )
        assert response.status_code == 201, response.text
        wait_until(
            lambda: _running_tasks(java, connector).get(java.worker_id) == all_tasks,
            timeout=60,
            message=lambda: f"Java did not start the tasks\n{java.log_tail()}",
        )

        config_store = KafkaConfigBackingStore(topics["configs"], {"bootstrap.servers": kafka_bootstrap})
        stores.append(config_store)
        config_store.start()
        status_store = KafkaStatusBackingStore(topics["status"], {"bootstrap.servers": kafka_bootstrap})
        stores.append(status_store)
        status_store.start()

        def snapshot() -> tuple[int, dict[str, int]]:
            state = config_store.snapshot()
            return state.offset, {c: state.task_count(c) for c in state.connectors()}

        sluice = StatusWritingWorker(
            "sluice",
            kafka_bootstrap,
            group,
            config_snapshot=snapshot,
            on_failed_assignment=config_store.refresh,
            status_store=status_store,
        )

        def shared() -> set[tuple[str, int]] | None:
            ours = {t for t in sluice.work() if isinstance(t, tuple)}
            running = _running_tasks(java, connector)
            if (
                ours
                and not sluice.member.rebalance_pending
                and running.get(SLUICE_WORKER_ID) == ours
                and running.get(java.worker_id) == all_tasks - ours
            ):
                return ours
            return None

        def not_shared() -> str:
            return (
                f"Sluice runs {sluice.work()}; Kafka Connect's status: {_running_tasks(java, connector)}"
                f"\n{java.log_tail()}"
            )

        ours = wait_until(shared, timeout=60, message=not_shared)
        assert len(ours) == 2  # balanced: 4 tasks over 2 workers
        assert not sluice.member.is_leader
        assert sluice.member.leader_url == f"{java.url}/"

        # Java leaves; Sluice leads alone and takes everything.
        java.stop()
        wait_until(
            lambda: sluice.work() == all_tasks | {connector} and sluice.member.is_leader,
            timeout=60,
            message=lambda: f"Sluice did not take over: {sluice.work()}",
        )
        assert sluice.member.leader_url == sluice.url

        # A new Java worker joins the group Sluice leads: Sluice's assignment makes it run tasks.
        java = java_worker("java-2").start()
        ours = wait_until(shared, timeout=60, message=not_shared)
        assert len(ours) == 2
        assert sluice.member.is_leader
        java_task = next(iter(all_tasks - ours))
        assert sluice.member.owner_url(java_task) == f"{java.url}/"
        assert sluice.member.owner_url(next(iter(ours))) == sluice.url
    finally:
        if sluice is not None:
            sluice.stop()
        java.stop()
        for store in stores:
            store.stop()
