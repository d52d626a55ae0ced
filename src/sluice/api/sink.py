"""Sink connectors and tasks, mirroring ``org.apache.kafka.connect.sink``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from sluice.api.connector import Connector, Task
from sluice.api.records import SinkRecord, TopicPartition

__all__ = ["ErrantRecordReporter", "SinkConnector", "SinkTask", "SinkTaskContext"]


class ErrantRecordReporter(ABC):
    """Reports records a sink task could not write, under the connector's ``errors.*``
    settings (the dead letter queue among them). See :meth:`report`."""

    @abstractmethod
    def report(self, record: SinkRecord, error: BaseException) -> None:
        """Report ``record``, which :meth:`SinkTask.put` could not write, and why.

        Call it from ``put`` (the batch thread) with a record of that very call: the
        runtime finds the record's bytes as consumed by its original topic, partition
        and offset among the records of the current ``put``. Then, as for a record that
        fails to convert: the error is logged (``errors.log.enable``); with
        ``errors.deadletterqueue.topic.name`` the raw record (with the error context
        headers if enabled) goes to the dead letter queue — written by the worker after
        the micro-batch, before its offsets are committed or the task fails; then, with
        ``errors.tolerance=all``, ``report`` returns and the record counts as written
        (its offset is committed), while with ``errors.tolerance=none`` (the default) it
        raises ``ConnectError("Tolerance exceeded in error handler")`` — let that
        propagate out of ``put`` to fail the task.

        Returns nothing (Kafka's returns a ``Future``): the dead letter queue write is
        done once the batch's offsets are committed. Not guaranteed: a dead letter queue
        record for a record of an earlier ``put`` call (the tolerance still applies).
        """


class SinkTaskContext(ABC):
    """What the framework offers a running :class:`SinkTask`. It lives with the task
    instance in the executor; call its methods from the task's own calls, on the batch
    thread. Requests (offsets, pauses, timeouts) are reported to the worker with the
    result of the micro-batch, so they take effect when the batch ends; offsets and
    pauses requested in ``start`` or ``open`` at the end of the instance's first batch
    that calls ``put``."""

    @abstractmethod
    def configs(self) -> dict[str, str]:
        """A copy of the task config :meth:`SinkTask.start` received."""

    @abstractmethod
    def offset(self, offsets: dict[TopicPartition, int] | TopicPartition, offset: int | None = None) -> None:
        """Rewind or skip: consume the given partitions (of :meth:`assignment`) from
        these offsets next — ``offset({tp: n, …})`` or ``offset(tp, n)``.

        Takes effect at the end of the current micro-batch: its remaining ``put`` calls
        and its ``pre_commit`` still come (the offsets ``pre_commit`` returns are
        committed first), then the worker reads from the new offsets, which the next
        ``pre_commit`` receives as current. Called from ``start`` or ``open``, it takes
        effect only after the instance's first batch that calls ``put``, whose records
        still come from the committed offsets (Kafka Connect applies it before the first
        records).
        """

    @abstractmethod
    def timeout(self, timeout_ms: int) -> None:
        """After a :class:`~sluice.api.errors.RetriableError` from ``put``, wait this long
        (at least 100 ms) before passing the same records to ``put`` again. Reported to
        the worker with the batch, it also bounds the wait for the next ``put``: the
        worker calls ``put`` again within ``timeout_ms``, with no records if none
        arrived. A request serves one wait, as in Kafka."""

    @abstractmethod
    def assignment(self) -> set[TopicPartition]:
        """The topic partitions of this instance, fixed for its life: when the
        connector's partitions change (a topic gains partitions, ``topics.regex`` matches
        a new topic), the worker closes and stops the instance and starts a new one with
        the new assignment."""

    @abstractmethod
    def pause(self, *partitions: TopicPartition) -> None:
        """Stop delivering records from these partitions until :meth:`resume`, from the
        next micro-batch on (their records already in the current batch still come).
        While only paused partitions have new records the worker calls ``put([])`` about
        once a second, so the task can resume them. Not guaranteed: pauses survive the
        instance — a new instance starts with nothing paused."""

    @abstractmethod
    def resume(self, *partitions: TopicPartition) -> None:
        """Deliver records from these partitions again, from the next micro-batch on."""

    @abstractmethod
    def request_commit(self) -> None:
        """Ask for an offset commit as soon as possible. Has no effect in Sluice: the
        offsets ``pre_commit`` returns are committed at the end of every micro-batch
        anyway, and an idle task gets ``put([])`` and ``pre_commit`` every
        ``offset.flush.interval.ms``. Kafka Connect commits at its next poll."""

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        """The reporter for records ``put`` cannot write (:class:`ErrantRecordReporter`).

        In a running Sluice task it is never ``None``, with or without a dead letter
        queue (without one, ``report`` logs and applies ``errors.tolerance``). This base
        implementation returns ``None``, as a context without a reporter does: handle
        ``None`` if the task must run under such a context (a test double, say)."""
        return None


class SinkTask(Task):
    """Writes Kafka records to a sink system, in a Spark executor's Python worker. Every
    method runs on the batch thread (see :mod:`sluice.api.connector`), one call at a time.

    Each micro-batch reads an exact offset range of every assigned partition that has
    new records (at most ``sluice.sink.batch.max.records`` per partition). Lifecycle of
    an instance: ``initialize(context)`` → ``start(props)`` → ``open(assignment)``, in the
    batch that creates the instance (with nothing to read yet, a task's first batch does
    only that, as Kafka starts a task before its first poll) → per
    micro-batch: ``put(records)`` once per chunk, or ``put([])``, then
    ``pre_commit(current_offsets)`` (the default calls ``flush``), whose result the
    worker commits to the consumer group before the next batch → ``close(assignment)`` →
    ``stop()`` when the runtime discards the instance (not when the task or the worker
    stops: see :meth:`close`). While the connector is paused no batch runs and the
    instance gets no calls.
    """

    TOPICS_CONFIG = "topics"
    TOPICS_REGEX_CONFIG = "topics.regex"

    context: SinkTaskContext

    def initialize(self, context: SinkTaskContext) -> None:
        """Called once per instance, on the batch thread, before :meth:`start`; keeps
        ``context``. Call ``super().initialize(context)`` if you override it."""
        self.context = context

    def open(self, partitions: list[TopicPartition]) -> None:
        """Called once per instance, right after :meth:`start`, with its whole
        assignment (sorted; the same partitions as ``context.assignment()``, possibly
        none). Not called again when the assignment changes: the instance is closed and
        stopped, and a new one started and opened (Kafka Connect opens and closes
        partitions incrementally).

        Raises: the task is FAILED; neither :meth:`close` nor :meth:`stop` is called on
        this instance.
        """

    @abstractmethod
    def put(self, records: list[SinkRecord]) -> None:
        """Write (or buffer) records.

        Called on the batch thread once per chunk of a micro-batch (Spark's Arrow
        batches, up to 10,000 records by default), records in offset order within each
        partition. They are converted and transformed already; records a transformation
        dropped or that failed within ``errors.tolerance`` are left out (their offsets
        still count as consumed). ``records`` is empty when no record arrived for
        ``offset.flush.interval.ms`` (or the time asked with ``context.timeout``), and
        about once a second while only paused partitions have new records.

        Raises: :class:`~sluice.api.errors.RetriableError` — the same records are passed
        again after ``context.timeout`` (at least 100 ms), up to 10 attempts in all; the
        10th fails the task (Kafka Connect retries without limit). Any other exception
        fails the task, and nothing of this micro-batch is committed (its earlier ``put``
        calls included): a restarted task receives those records again.

        Not guaranteed: that ``pre_commit`` follows (the task may fail or the worker
        die first). A record counts as written only once ``pre_commit`` returned its
        offset.
        """

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        """Make everything passed to :meth:`put` durable. ``current_offsets`` are the
        next offsets to consume per assigned partition (last delivered offset + 1,
        counting records left out).

        Sluice calls it only from the default :meth:`pre_commit`: override
        ``pre_commit`` without calling ``flush`` and ``flush`` is never called. Raises:
        as :meth:`pre_commit`.
        """

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Called on the batch thread at the end of every micro-batch that called
        ``put`` (``put([])`` included), with the next offset to consume for every
        assigned partition. Return the offsets that are safe to commit; the worker
        commits those that changed to the consumer group (``connect-<name>``, or
        ``consumer.override.group.id``), synchronously, before the next batch. Return
        ``{}`` (or ``None``) to commit nothing. The default calls :meth:`flush` and
        returns ``current_offsets``.

        Raises: the task is FAILED and nothing of this micro-batch is committed.

        Not guaranteed: that the returned offsets are committed — not when the task has
        lost its partitions in a rebalance, or the commit fails (the task then fails).
        """
        self.flush(current_offsets)
        return current_offsets

    def close(self, partitions: list[TopicPartition]) -> None:
        """Called right before :meth:`stop`, on the same thread, with the instance's
        whole assignment, when the runtime discards the instance: the worker stops the
        task (stopping, restarting or deleting the task or its connector, a rebalance,
        worker shutdown), a failure in ``put``, ``pre_commit`` or conversion, a changed
        assignment, or a new instance of the task starting in the same Python worker (see
        :meth:`Task.stop <sluice.api.connector.Task.stop>`).

        Raises: logged and ignored; ``stop`` is still called. Not guaranteed: a call when
        the executor or worker process dies, or when the stop job cannot reach the
        instance. Write nothing here that must reach the sink: offsets are committed only
        through ``pre_commit``.
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
