"""A sink task's share of its connector's partitions, worked out by its supervisor: range
assignment per topic, read from the group's committed offsets or else the earliest, and
a new topic that matches ``topics.regex`` picked up at the next refresh."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any

from confluent_kafka import TopicPartition

from sluice.runtime.tasks import SinkPartitions


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
        admin,
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
