"""Sink connectors and tasks, mirroring ``org.apache.kafka.connect.sink``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from sluice.api.connector import Connector, Task
from sluice.api.records import SinkRecord, TopicPartition

__all__ = ["ErrantRecordReporter", "SinkConnector", "SinkTask", "SinkTaskContext"]


class ErrantRecordReporter(ABC):
    """Reports a record the task could not process (to the dead letter queue)."""

    @abstractmethod
    def report(self, record: SinkRecord, error: BaseException) -> None: ...


class SinkTaskContext(ABC):
    """What the framework offers a running :class:`SinkTask` (executor side)."""

    @abstractmethod
    def configs(self) -> dict[str, str]:
        """The task's config."""

    @abstractmethod
    def offset(self, offsets: dict[TopicPartition, int] | TopicPartition, offset: int | None = None) -> None:
        """Rewind or skip: consume the given partitions from these offsets next."""

    @abstractmethod
    def timeout(self, timeout_ms: int) -> None:
        """After a :class:`~sluice.api.errors.RetriableError` from ``put``, wait this long
        before redelivering the same records."""

    @abstractmethod
    def assignment(self) -> set[TopicPartition]:
        """The topic partitions currently assigned to this task."""

    @abstractmethod
    def pause(self, *partitions: TopicPartition) -> None:
        """Stop delivering records from these partitions until :meth:`resume`."""

    @abstractmethod
    def resume(self, *partitions: TopicPartition) -> None:
        """Deliver records from these partitions again."""

    @abstractmethod
    def request_commit(self) -> None:
        """Ask for an offset commit as soon as possible."""

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        """The reporter for bad records, or None when no dead letter queue is set."""
        return None


class SinkTask(Task):
    """Writes Kafka records to a sink system. Every method runs in a Spark executor's
    Python worker.

    Lifecycle: ``initialize(context)`` → ``start(props)`` → ``open(partitions)`` →
    ``put(records)`` repeatedly, ``pre_commit(offsets)`` (which calls ``flush``) before
    each offset commit → ``close(partitions)`` → ``stop()``.
    """

    TOPICS_CONFIG = "topics"
    TOPICS_REGEX_CONFIG = "topics.regex"

    context: SinkTaskContext

    def initialize(self, context: SinkTaskContext) -> None:
        """Called by the framework before :meth:`start`."""
        self.context = context

    def open(self, partitions: list[TopicPartition]) -> None:
        """Called when partitions are assigned to this task, before their records."""

    @abstractmethod
    def put(self, records: list[SinkRecord]) -> None:
        """Write (or buffer) records. Raise :class:`~sluice.api.errors.RetriableError`
        to have the same records delivered again after ``context.timeout``."""

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        """Make everything passed to :meth:`put` durable. ``current_offsets`` are the
        next offsets to consume per partition."""

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Called before the framework commits offsets; returns the offsets safe to
        commit. The default flushes and returns ``current_offsets``."""
        self.flush(current_offsets)
        return current_offsets

    def close(self, partitions: list[TopicPartition]) -> None:
        """Called when partitions are taken away from this task."""


class SinkConnector(Connector):
    """A connector that exports data from Kafka to a sink system."""

    TOPICS_CONFIG = "topics"

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[Any, Any]) -> bool:
        """Called before the consumer-group offsets are altered or reset through the
        REST API. Return True if the connector keeps no offsets of its own."""
        return False
