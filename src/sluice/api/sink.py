"""Sink connectors and tasks, mirroring ``org.apache.kafka.connect.sink``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from sluice.api.connector import Connector, Task
from sluice.api.records import SinkBatch, SinkRecord, TopicPartition

__all__ = ["ErrantRecordReporter", "SinkConnector", "SinkTask", "SinkTaskContext"]


class ErrantRecordReporter(ABC):
    """Reports records a sink task could not write, under the connector's ``errors.*``
    settings (the dead letter queue among them). See :meth:`report`."""

    @abstractmethod
    def report(self, record: SinkRecord, error: BaseException) -> None:
        """Report ``record``, which :meth:`SinkTask.put` could not write, and why.

        Call it from ``put`` (the task thread) with a record of that very call or of the
        call before it (a sink that writes asynchronously learns of a refused record one
        ``put`` later): the runtime finds the record's bytes, by its original topic,
        partition and offset, among the records of the reads from Kafka that these two
        calls deliver.
        Then, as for a record that fails to convert: the error is logged
        (``errors.log.enable``); with ``errors.deadletterqueue.topic.name`` the raw record
        (with the error context headers if enabled) goes to the dead letter queue —
        written by the task's own producer right after ``put`` returns or raises, and
        acknowledged by Kafka before any later offset commit and before the task fails
        (a failed write fails the task); then, with ``errors.tolerance=all``, ``report``
        returns and the record counts as written (its offset is committed), while with
        ``errors.tolerance=none`` (the default) it raises ``ConnectError("Tolerance
        exceeded in error handler")`` — let that propagate out of ``put`` to fail the
        task.

        Returns nothing (Kafka's returns a ``Future``): the dead letter queue write is
        done once ``put`` returned. Not guaranteed: a dead letter queue record for a
        record of a ``put`` call before those two (the tolerance still applies).
        """


class SinkTaskContext(ABC):
    """What the framework offers a running :class:`SinkTask`. It lives with the task
    instance in the executor; call its methods from the task's own calls, on the task
    thread. Requests (offsets, pauses, commits, timeouts) are kept and acted on by the
    task's loop once the call under way returns, before the next read from Kafka —
    whichever call made them (``start``, ``open``, ``put``, ``pre_commit``)."""

    @abstractmethod
    def configs(self) -> dict[str, str]:
        """A copy of the task config :meth:`SinkTask.start` received."""

    @abstractmethod
    def offset(self, offsets: dict[TopicPartition, int] | TopicPartition, offset: int | None = None) -> None:
        """Rewind or skip: consume the given partitions (of :meth:`assignment`) from
        these offsets next — ``offset({tp: n, …})`` or ``offset(tp, n)``.

        It takes effect when the call under way returns, before the next read: the
        consumer seeks, the next records of those partitions come from the new offsets,
        and the next ``pre_commit`` receives them as current. Offsets for partitions the
        task does not have are ignored.
        """

    @abstractmethod
    def timeout(self, timeout_ms: int) -> None:
        """After a :class:`~sluice.api.errors.RetriableError` from ``put``, wait this long
        (at least 100 ms) before passing the same records to ``put`` again. It also
        sets the wait for the next ``put([])``: when no record arrives within
        ``timeout_ms`` after the current ``put``, ``put([])`` is called then (instead of
        after the usual ``offset.flush.interval.ms``, capped at 1 s). A request serves
        one wait, as in Kafka."""

    @abstractmethod
    def assignment(self) -> set[TopicPartition]:
        """The topic partitions the task reads now. The worker assigns them — the
        partitions of the connector's topics, split between its tasks in ranges per
        topic — and looks for changes about every 5 s: when a topic gains partitions,
        ``topics.regex`` matches a new topic or a topic is deleted, the set changes
        right before :meth:`SinkTask.open` of the added partitions and right after
        :meth:`SinkTask.close` of the removed ones."""

    @abstractmethod
    def pause(self, *partitions: TopicPartition) -> None:
        """Stop delivering records from these partitions until :meth:`resume`, from the
        next read from Kafka on (called from ``put``: once it returns; the records it
        was given still count). While only paused partitions have new records, the task
        gets ``put([])`` about every ``offset.flush.interval.ms`` (capped at 1 s), so it
        can resume them. Pauses of partitions the task loses are dropped. Not
        guaranteed: pauses survive the instance — a new instance starts with nothing
        paused."""

    @abstractmethod
    def resume(self, *partitions: TopicPartition) -> None:
        """Deliver records from these partitions again, from the next read from Kafka on
        (called from ``put``: once it returns; while the connector is paused, once it is
        resumed)."""

    @abstractmethod
    def request_commit(self) -> None:
        """Ask for an offset commit as soon as possible: ``pre_commit`` is called, and
        the offsets it returns committed, once the call under way returns (from ``put``:
        right after it), before the next read, as Kafka Connect does at its next poll.
        Without partitions there is nothing to commit and no ``pre_commit`` comes."""

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        """The reporter for records ``put`` cannot write (:class:`ErrantRecordReporter`).

        In a running Sluice task it is never ``None``, with or without a dead letter
        queue (without one, ``report`` logs and applies ``errors.tolerance``). This base
        implementation returns ``None``, as a context without a reporter does: handle
        ``None`` if the task must run under such a context (a test double, say)."""
        return None


class SinkTask(Task):
    """Writes Kafka records to a sink system, in a Spark executor's Python worker. Every
    method runs on the task thread (see :mod:`sluice.api.connector`), one call at a time.

    The task's own consumer reads its partitions (by assignment, without joining the
    group) from the offsets the worker gives: the committed offsets of the connector's
    consumer group, else the earliest. Lifecycle of an instance:
    ``initialize(context)`` → ``start(props)`` → ``open(partitions)`` with the initial
    partitions (not when there are none) → a loop: ``put(records)`` per read from
    Kafka, or ``put([])`` when nothing arrived for a while;
    ``pre_commit(current_offsets)`` (the default calls ``flush``) about every
    ``offset.flush.interval.ms`` (capped at 1 s) and on request, whose result the
    worker commits to the consumer group; ``open(added)``, or ``pre_commit`` then
    ``close(removed)``, when the partitions change → on stop: ``pre_commit`` (a clean
    stop only) → ``close(all partitions)`` → ``stop()``, also after a failure. While the
    connector is paused nothing is read and the task gets no calls, except one
    ``pre_commit`` as it pauses.
    """

    TOPICS_CONFIG = "topics"
    TOPICS_REGEX_CONFIG = "topics.regex"

    context: SinkTaskContext

    def initialize(self, context: SinkTaskContext) -> None:
        """Called once per instance, on the task thread, before :meth:`start`; keeps
        ``context``. Call ``super().initialize(context)`` if you override it."""
        self.context = context

    def open(self, partitions: list[TopicPartition]) -> None:
        """Called on the task thread with partitions the task starts reading (sorted),
        before any record of theirs: right after :meth:`start` with the initial
        partitions (not called when there are none), and later with each set of
        partitions added to the assignment (a topic gained partitions, ``topics.regex``
        matches a new topic). ``context.assignment()`` includes them already.

        Raises: the task is FAILED; :meth:`close` (with all the task's partitions, these
        included) and :meth:`stop` are still called.
        """

    @abstractmethod
    def put(self, records: list[SinkRecord]) -> None:
        """Write (or buffer) records.

        Called on the task thread once per read from Kafka, with its records: up to
        ``sluice.sink.batch.max.records`` (10,000 by default), from any of the task's
        partitions, in offset order within each partition. They are converted and
        transformed already; records a transformation dropped or that failed within
        ``errors.tolerance`` are left out (their offsets still count as consumed), so
        ``records`` may be empty. ``put([])`` also comes when no record arrived for
        ``offset.flush.interval.ms`` (capped at 1 s) or the time asked with
        ``context.timeout`` — as long as the task has partitions, also while they are
        all paused.

        Raises: :class:`~sluice.api.errors.RetriableError` — the same records are passed
        again after ``context.timeout`` (at least 100 ms), up to 10 attempts in all; the
        10th fails the task (Kafka Connect retries without limit). Any other exception
        fails the task: no offset past what ``pre_commit`` last returned is committed (a
        restarted task receives those records again), no ``pre_commit`` follows, and
        :meth:`close` and :meth:`stop` are called.

        Not guaranteed: that ``pre_commit`` follows (the task may fail or the worker
        die first). A record counts as written only once ``pre_commit`` returned its
        offset.

        The runtime calls :meth:`put_batch`, whose default calls ``put`` with the
        batch's records: a task that overrides ``put_batch`` without calling this
        method never gets ``put`` calls.
        """

    def put_batch(self, batch: SinkBatch) -> None:
        """Write (or buffer) a batch of records, given column by column
        (:class:`~sluice.api.records.SinkBatch`).

        The runtime calls this method, never :meth:`put` directly: whenever ``put`` is
        described as called, ``put_batch`` is, with the same records as a batch (an
        empty batch for ``put([])``), under the same rules — when, how often, what
        raising :class:`~sluice.api.errors.RetriableError` or anything else does. After
        a ``RetriableError`` the same batch is passed again.

        The default calls ``put(batch.records())``. Override it to write whole columns
        (``batch.values``, ``batch.offsets``, …) without a :class:`SinkRecord` per
        record; an override must handle every record of the batch as ``put`` would. To
        report a record through :meth:`SinkTaskContext.errant_record_reporter`, pass
        ``batch.records()[i]``.
        """
        self.put(batch.records())

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        """Make everything passed to :meth:`put` durable. ``current_offsets`` are the
        next offsets to consume per partition of the task (last delivered offset + 1,
        counting records left out, or where a rewind put it).

        Sluice calls it only from the default :meth:`pre_commit`: override
        ``pre_commit`` without calling ``flush`` and ``flush`` is never called. Raises:
        as :meth:`pre_commit`.
        """

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Called on the task thread while the task has partitions: about every
        ``offset.flush.interval.ms`` (capped at 1 s), after the ``put`` under way, even
        when nothing was put since the last call; right after a call that asked
        ``context.request_commit()``; before partitions are removed (they are still
        included); when the connector is paused; and on a clean stop, before
        :meth:`close`. ``current_offsets`` holds the next offset to consume for every
        partition of the task; the dead letter records of earlier ``put`` calls are
        acknowledged already. Return the offsets that are safe to commit; the worker
        commits those that changed, for partitions the task still has, to the consumer
        group (``connect-<name>``, or ``consumer.override.group.id``), synchronously:
        the task waits for it. Return ``{}`` (or ``None``) to commit nothing. The
        default calls :meth:`flush` and returns ``current_offsets``.

        Raises: the task is FAILED; nothing more is committed; :meth:`close` and
        :meth:`stop` are still called.

        Not guaranteed: that the returned offsets are committed — not when the task no
        longer owns its work (a rebalance moved it: zombie fencing skips the commit), or
        the commit fails (the task then fails).
        """
        self.flush(current_offsets)
        return current_offsets

    def close(self, partitions: list[TopicPartition]) -> None:
        """Called on the task thread with partitions the task stops reading: those
        removed from its assignment (their topic was deleted), right after a
        ``pre_commit`` that included them; and, when the instance stops, all its
        partitions (possibly none), right before :meth:`stop` — after the final
        ``pre_commit`` of a clean stop, and also after a failure or when the worker went
        away.

        Raises: when the instance stops, logged and ignored (``stop`` is still called);
        for removed partitions, the task fails. Not guaranteed: a call when the Python
        worker, its executor or the worker process dies, or the task is abandoned (see
        :meth:`Task.stop <sluice.api.connector.Task.stop>`). Write nothing here that
        must reach the sink: offsets are committed only through ``pre_commit``.
        """


class SinkConnector(Connector):
    """A connector that exports data from Kafka to a sink system."""

    TOPICS_CONFIG = "topics"

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[Any, Any]) -> bool:
        """Called before the consumer group's offsets are altered (``PATCH``) or reset
        (``DELETE /connectors/{name}/offsets``), which the REST API allows only while the
        connector is STOPPED.

        Called in the worker process, on a REST request thread, on a throwaway instance
        (never started), with the connector's config (placeholders resolved). ``offsets``
        maps each :class:`~sluice.api.records.TopicPartition` to its new offset, or
        ``None`` for a reset. Return True if the connector keeps no offsets of its own
        (only the answer's message differs). The default returns False.

        Raises: as :meth:`SourceConnector.alter_offsets
        <sluice.api.source.SourceConnector.alter_offsets>`; the offsets are left as they were.
        """
        return False
