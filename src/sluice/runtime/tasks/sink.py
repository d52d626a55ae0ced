"""The supervisor of a sink task (Kafka's ``WorkerSinkTask``, its worker side): works out
the task's partitions and where to read them from, tells the task when they change, and
commits the offsets its ``pre_commit`` returned to the group ``connect-<name>``."""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections.abc import Callable
from typing import Any, ClassVar

from confluent_kafka import KafkaException, TopicPartition
from confluent_kafka.admin import OffsetSpec

from sluice.kafka.clients import LIBRDKAFKA, KafkaClients
from sluice.kafka.retries import with_kafka_retries
from sluice.kafka.security import check_authentication
from sluice.runtime.data_path import DeadLetterTopic
from sluice.runtime.tasks.base import Handler, WorkerTask
from sluice.taskhost.protocol import Assign, Committed, RunSinkTask, SinkOffsets, TopicPartitionKey

log = logging.getLogger(__name__)

__all__ = ["SinkPartitions", "TopicListing", "TopicListings", "WorkerSinkTask"]


class TopicListing:
    """The cluster's topics and their partitions, listed at most every ``max_age_s`` for
    every sink task of the worker that reads the same cluster, and the admin client that
    lists them and looks up offsets: one metadata request per period and one client, not
    one per task (an idle worker with hundreds of sink tasks would otherwise spend its time
    parsing the same metadata, and keep hundreds of clients' threads). Tasks share a listing
    only when their clients' settings are the same (a principal sees the topics its ACLs
    allow)."""

    def __init__(self, admin: Any) -> None:
        self.admin = admin
        self._lock = threading.Lock()
        self._listed_at = -1e9
        self._topics: dict[str, list[int]] = {}

    def topics(self, stopping: threading.Event, max_age_s: float) -> dict[str, list[int]]:
        """Each topic's partitions, listed again unless a listing is younger than
        ``max_age_s``."""
        with self._lock:
            if time.monotonic() - self._listed_at >= max_age_s:
                metadata = with_kafka_retries(lambda: self.admin.list_topics(timeout=10), "Listing topics", stopping)
                self._topics = {name: sorted(topic.partitions) for name, topic in metadata.topics.items()}
                self._listed_at = time.monotonic()
            return self._topics


class TopicListings:
    """A worker's :class:`TopicListing`\\ s, one per distinct client settings."""

    def __init__(self) -> None:
        self._listings: dict[str, TopicListing] = {}
        self._lock = threading.Lock()

    def of(self, client_conf: dict[str, Any], make_admin: Callable[[], Any]) -> TopicListing:
        """The listing shared by the tasks whose clients have these settings (its admin
        client made with ``make_admin`` the first time)."""
        key = repr(sorted((str(k), str(v)) for k, v in client_conf.items()))
        with self._lock:
            listing = self._listings.get(key)
            if listing is None:
                listing = self._listings[key] = TopicListing(make_admin())
            return listing

    def clear(self) -> None:
        """Let go of the listings and their admin clients (librdkafka's close with their
        last reference): the worker's tasks have stopped."""
        with self._lock:
            self._listings.clear()


class SinkPartitions:
    """A sink task's share of its connector's partitions (range assignment per topic, like
    the consumer's ``RangeAssignor``) and where to read each: its group's committed offset,
    or the earliest one (``auto.offset.reset=earliest``, as Connect configures its
    consumers). Topics are listed again every :attr:`REFRESH_S`."""

    REFRESH_S = 5.0

    def __init__(
        self,
        listing: TopicListing,
        consumer: Any,
        *,
        topics: list[str],
        topics_regex: str | None,
        task: int,
        task_count: int,
        group_id: str,
        stopping: threading.Event,
    ) -> None:
        self._listing = listing  # the topics, and the admin client that looks up offsets
        self._consumer = consumer
        self._topics = topics
        self._pattern = re.compile(topics_regex) if topics_regex else None
        self._task = task
        self._task_count = task_count
        self._group_id = group_id
        self._stopping = stopping
        self._listed_at = -math.inf  # never: due at once, however young the monotonic clock
        self.assignment: list[TopicPartitionKey] = []
        self.positions: dict[TopicPartitionKey, int] = {}
        self.committed: dict[TopicPartitionKey, int] = {}

    def start_offsets(self) -> dict[TopicPartitionKey, int]:
        """Where to read each of the task's partitions from."""
        return {tp: self.positions[tp] for tp in self.assignment}

    def refresh(self, force: bool = False) -> bool:
        """List the topics again (at most every :attr:`REFRESH_S` unless ``force``); True
        when the task's partitions changed."""
        now = time.monotonic()
        if not force and now - self._listed_at < self.REFRESH_S:
            return False
        self._listed_at = now
        listed = self._listing.topics(self._stopping, 0.0 if force else self.REFRESH_S)
        if self._pattern is not None:
            topics = sorted(t for t in listed if self._pattern.fullmatch(t) and not t.startswith("__"))
        else:
            topics = [t for t in self._topics if t in listed]
        assignment: list[TopicPartitionKey] = []
        for topic in topics:
            partitions = listed[topic]
            per, extra = divmod(len(partitions), self._task_count)
            i = self._task
            start = i * per + min(i, extra)
            count = per + (1 if i < extra else 0)
            assignment.extend((topic, p) for p in partitions[start : start + count])
        if assignment == self.assignment:
            return False
        new = [tp for tp in assignment if tp not in self.positions]
        self.assignment = assignment
        if new:
            self._look_up(new)
        return True

    def _look_up(self, new: list[TopicPartitionKey]) -> None:
        committed = with_kafka_retries(
            lambda: self._consumer.committed([TopicPartition(t, p) for t, p in new], timeout=10),
            f"Reading committed offsets of group {self._group_id}",
            self._stopping,
        )
        missing = []
        for tp in committed:
            if tp.offset >= 0:
                self.committed[(tp.topic, tp.partition)] = tp.offset
                self.positions[(tp.topic, tp.partition)] = tp.offset
            else:
                missing.append((tp.topic, tp.partition))
        if missing:
            for tp, offset in self._earliest(missing).items():
                self.committed[tp] = offset
                self.positions[tp] = offset

    def _earliest(self, tps: list[TopicPartitionKey]) -> dict[TopicPartitionKey, int]:
        def call() -> dict[TopicPartitionKey, int]:
            futures = self._listing.admin.list_offsets(
                {TopicPartition(t, p): OffsetSpec.earliest() for t, p in tps}, request_timeout=10
            )
            return {(tp.topic, tp.partition): f.result().offset for tp, f in futures.items()}

        return with_kafka_retries(call, "Listing offsets", self._stopping)

    def commit(self, offsets: dict[TopicPartitionKey, int]) -> None:
        """Commit ``offsets`` to the group (those that changed); raises ``KafkaException``."""
        changed = {tp: o for tp, o in offsets.items() if self.committed.get(tp) != o}
        if not changed:
            return
        with_kafka_retries(
            lambda: self._consumer.commit(
                offsets=[TopicPartition(t, p, o) for (t, p), o in sorted(changed.items())], asynchronous=False
            ),
            f"Committing offsets of group {self._group_id}",
            self._stopping,
        )
        self.committed.update(changed)
        self.positions.update(changed)


class WorkerSinkTask(WorkerTask):
    """Supervises a sink task: its partitions, and the offsets its ``pre_commit`` returned,
    committed to the group ``connect-<name>``."""

    kind = "sink"

    def __init__(
        self,
        *args: Any,
        bootstrap_servers: str,
        consumer_overrides: dict[str, str],
        consumer_config: dict[str, str] | None = None,
        producer_config: dict[str, str] | None = None,
        topics: list[str],
        topics_regex: str | None,
        task_count: int,
        dead_letter_topic: DeadLetterTopic | None = None,
        clients: KafkaClients = LIBRDKAFKA,
        listings: TopicListings | None = None,
        **kw: Any,
    ) -> None:
        """``listings``: the worker's, shared by its sink tasks (one of their own without)."""
        super().__init__(*args, **kw)
        self._listings = listings if listings is not None else TopicListings()
        self.dead_letter_topic = dead_letter_topic
        self.bootstrap_servers = bootstrap_servers
        self.consumer_config = dict(consumer_config or {})
        self.producer_config = dict(producer_config or {})
        self.topics = topics
        self.topics_regex = topics_regex
        self.task_count = task_count
        self.group_id = consumer_overrides.get("group.id", f"connect-{self.spec.connector}")
        self.partitions: SinkPartitions | None = None
        self._clients = clients
        self._consumer: Any = None

    def _prepare(self) -> None:
        # The task's consumer settings (librdkafka's, security translated) serve the
        # worker's metadata and committed-offset lookups for it too.
        client_conf: dict[str, Any] = {
            **self.consumer_config,
            "bootstrap.servers": self.bootstrap_servers,
            "log_level": 3,
        }
        client_conf.pop("group.id", None)
        if str(client_conf.get("security.protocol", "plaintext")).lower() != "plaintext":
            # a refused login fails the task now, naming itself; the admin that asked goes on
            listing = TopicListing(check_authentication(client_conf))
        else:
            listing = self._listings.of(client_conf, lambda: self._clients.admin(dict(client_conf)))
        self._consumer = self._clients.consumer({**client_conf, "group.id": self.group_id, "enable.auto.commit": False})
        if self.dead_letter_topic is not None:
            with_kafka_retries(self.dead_letter_topic.ensure, "Creating the dead letter queue topic", self._stopping)
        self.partitions = SinkPartitions(
            listing,
            self._consumer,
            topics=self.topics,
            topics_regex=self.topics_regex,
            task=self.spec.task,
            task_count=self.task_count,
            group_id=self.group_id,
            stopping=self._stopping,
        )
        self.partitions.refresh(force=True)

    def _launch_message(self) -> RunSinkTask:
        assert self.partitions is not None
        return RunSinkTask(
            task=self.spec,
            consumer_config={**self.consumer_config, "group.id": self.group_id},
            producer_config=self.producer_config,
            assignment=self.partitions.start_offsets(),
            max_records=self.settings.sink_max_records,
            poll_interval_ms=self.settings.sink_poll_interval_ms,
            offset_flush_interval_ms=self.settings.offset_flush_interval_ms,
        )

    TICK_S = SinkPartitions.REFRESH_S  # the partitions' refresh: the one periodic work

    def _tick(self) -> None:
        partitions = self.partitions
        assert partitions is not None
        try:
            changed = partitions.refresh()
        except KafkaException as exc:
            log.warning("Task %s-%s: could not refresh the topics' partitions: %s", *self.id, exc)
            return
        if changed:
            log.info("Task %s-%s now reads %s", *self.id, ", ".join(f"{t}-{p}" for t, p in partitions.assignment))
            self._answer(Assign(partitions.start_offsets()))

    def _on_offsets(self, message: SinkOffsets) -> None:
        self._answer(self._commit(message))

    HANDLERS: ClassVar[dict[type, Handler]] = {**WorkerTask.HANDLERS, SinkOffsets: _on_offsets}

    def _commit(self, message: SinkOffsets) -> Committed:
        partitions = self.partitions
        assert partitions is not None
        if all(partitions.committed.get(tp) == o for tp, o in message.offsets.items()):
            return Committed(message.seq)
        if not self._may_commit():
            log.warning(
                "Task %s-%s no longer owns its partitions here (a rebalance moved it): not committing its offsets",
                *self.id,
            )
            return Committed(message.seq, fenced=True)
        try:
            partitions.commit(message.offsets)
        except KafkaException as exc:
            return Committed(message.seq, error=f"Offset commit for group {self.group_id} failed: {exc}")
        return Committed(message.seq)

    def _close(self) -> None:
        super()._close()
        if self._consumer is not None:
            self._consumer.close()
        # librdkafka's admin client has no close(): it goes with its last reference, now,
        # not whenever this supervisor is collected (after the brokers may be gone)
        self.partitions = None
        self._consumer = None
