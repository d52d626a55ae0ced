"""A sink task's share of its connector's partitions, worked out by its supervisor: range
assignment per topic, read from the group's committed offsets or else the earliest, and
a new topic that matches ``topics.regex`` picked up at the next refresh; the supervisor's
Kafka clients let go of when it stops."""

from __future__ import annotations

import gc
import threading
import weakref
from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any

from confluent_kafka import TopicPartition

from sluice.runtime.herder.base import State, TargetState
from sluice.runtime.tasks import SinkPartitions, TaskHooks, TaskSettings, WorkerSinkTask
from sluice.runtime.tasks.sink import TopicListing
from sluice.spark.inbox import Connected, JobEnded
from sluice.taskhost.protocol import Hello, PluginSpec, Started, Stop, Stopped, TaskSpec
from tests.helpers import wait_until
from tests.unit.runtime.launcher_fakes import FakeLauncher

STRING = PluginSpec("sluice.converters.string.StringConverter", {})


class FakeAdmin:
    def __init__(self, topics: dict[str, int], earliest: int = 0) -> None:
        self.topics = topics
        self.earliest = earliest

    def list_topics(self, timeout: float) -> Any:
        return SimpleNamespace(
            topics={t: SimpleNamespace(partitions={p: None for p in range(n)}) for t, n in self.topics.items()}
        )

    def list_offsets(self, requests: dict[TopicPartition, Any], request_timeout: float) -> dict[TopicPartition, Any]:
        answers = {}
        for tp in requests:
            future: Future[Any] = Future()
            future.set_result(SimpleNamespace(offset=self.earliest))
            answers[tp] = future
        return answers


class FakeConsumer:
    """The group's committed offsets."""

    def __init__(self, committed: dict[tuple[str, int], int]) -> None:
        self.group = dict(committed)

    def committed(self, partitions: list[TopicPartition], timeout: float) -> list[TopicPartition]:
        return [
            TopicPartition(tp.topic, tp.partition, self.group.get((tp.topic, tp.partition), -1001)) for tp in partitions
        ]

    def commit(self, offsets: list[TopicPartition], asynchronous: bool) -> None:
        for tp in offsets:
            self.group[(tp.topic, tp.partition)] = tp.offset


def _partitions(admin: FakeAdmin, consumer: FakeConsumer, task: int, count: int, **topics: Any) -> SinkPartitions:
    return SinkPartitions(
        TopicListing(admin),
        consumer,
        topics=topics.get("topics", []),
        topics_regex=topics.get("regex"),
        task=task,
        task_count=count,
        group_id="connect-c",
        stopping=threading.Event(),
    )


def test_partitions_are_shared_by_range_per_topic() -> None:
    admin = FakeAdmin({"a": 5, "b": 2, "other": 3})
    shares = []
    for task in range(2):
        partitions = _partitions(admin, FakeConsumer({}), task, 2, topics=["a", "b", "missing"])
        assert partitions.refresh(force=True)
        shares.append(partitions.assignment)
    assert shares == [[("a", 0), ("a", 1), ("a", 2), ("b", 0)], [("a", 3), ("a", 4), ("b", 1)]]


def test_reading_starts_at_the_committed_offset_or_else_the_earliest() -> None:
    partitions = _partitions(FakeAdmin({"a": 2}, earliest=7), FakeConsumer({("a", 0): 40}), 0, 1, topics=["a"])
    partitions.refresh(force=True)
    assert partitions.start_offsets() == {("a", 0): 40, ("a", 1): 7}


def test_a_new_matching_topic_is_picked_up_at_the_next_refresh_and_commits_reach_the_group() -> None:
    admin = FakeAdmin({"orders-eu": 1, "__internal": 1, "payments": 1})
    consumer = FakeConsumer({})
    partitions = _partitions(admin, consumer, 0, 1, regex="orders-.*|__.*")
    partitions.refresh(force=True)
    assert partitions.assignment == [("orders-eu", 0)]  # internal topics never match
    assert not partitions.refresh()  # not again within REFRESH_S
    admin.topics["orders-us"] = 1
    assert partitions.refresh(force=True)
    assert partitions.assignment == [("orders-eu", 0), ("orders-us", 0)]
    partitions.commit({("orders-eu", 0): 12})
    assert consumer.group == {("orders-eu", 0): 12}
    assert partitions.start_offsets()[("orders-eu", 0)] == 12


class FakeClients:
    def __init__(self, admin: FakeAdmin, consumer: FakeConsumer) -> None:
        self.made: list[Any] = [admin, consumer]

    def admin(self, settings: dict[str, Any]) -> FakeAdmin:
        return self.made[0]

    def consumer(self, settings: dict[str, Any]) -> FakeConsumer:
        return self.made[1]

    def producer(self, settings: dict[str, Any]) -> Any:
        raise AssertionError("a sink supervisor makes no producer")


def test_a_stopped_sink_supervisor_lets_go_of_its_kafka_clients_at_once() -> None:
    """librdkafka's clients close when their last reference goes: a supervisor that kept
    them until the garbage collector ran would leave them connecting to brokers that the
    worker's owner stops next (and logging each refused connection). The admin client the
    worker's sink tasks share goes with the worker's topic listings (here the supervisor's
    own)."""
    consumer = FakeConsumer({})
    consumer.close = lambda: None  # type: ignore[attr-defined]
    clients = FakeClients(FakeAdmin({"t": 1}), consumer)
    launcher = FakeLauncher()
    reports: list[State] = []
    spec = TaskSpec("c", 0, "x.Task", {}, "i", STRING, STRING, STRING)
    gc.disable()  # whatever is freed below is freed by reference counting alone
    try:
        task = WorkerSinkTask(
            spec, TargetState.STARTED, lambda: launcher,
            TaskHooks(report=lambda state, trace: reports.append(state)), TaskSettings(),
            bootstrap_servers="fake:9092", consumer_overrides={}, topics=["t"], topics_regex=None, task_count=1,
            clients=clients,
        )  # fmt: skip
        task.start()
        launch = wait_until(lambda: launcher.launches and launcher.launches[0], timeout=10, message="launched")
        assert launch.task.assignment == {("t", 0): 0}
        launch.inbox.put(Connected(Hello("i", "secret", 1, "host")))
        launch.inbox.put(Started())
        wait_until(lambda: State.RUNNING in reports, timeout=10, message="RUNNING")
        task.stop()
        wait_until(lambda: launcher.launches[0].connection.of(Stop), timeout=10, message="told to stop")
        launch.inbox.put(Stopped())
        launch.inbox.put(JobEnded(None))
        assert task.join(10)
        admin, own = (weakref.ref(client) for client in clients.made)
        supervisor = weakref.ref(task)
        clients.made.clear()
        del consumer, launch
        assert own() is None  # its own consumer: at once
        launcher.launches.clear()
        del task
        assert supervisor() is None
        assert admin() is None  # the admin client of its topic listings (the worker's): with them
    finally:
        gc.enable()
