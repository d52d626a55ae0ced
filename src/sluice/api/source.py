"""Source connectors and tasks, mirroring ``org.apache.kafka.connect.source``."""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any

from sluice.api.connector import Connector, Task
from sluice.api.records import SourceRecord

__all__ = [
    "ConnectorTransactionBoundaries",
    "ExactlyOnceSupport",
    "OffsetStorageReader",
    "SourceConnector",
    "SourceTask",
    "SourceTaskContext",
    "TransactionContext",
]


class ExactlyOnceSupport(enum.Enum):
    """What :meth:`SourceConnector.exactly_once_support` answers."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class ConnectorTransactionBoundaries(enum.Enum):
    """What :meth:`SourceConnector.can_define_transaction_boundaries` answers."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class OffsetStorageReader(ABC):
    """Reads committed source offsets.

    A running task's reader (:meth:`SourceTaskContext.offset_storage_reader`) serves,
    inside the executor, the connector's offsets (all its source partitions, whichever
    task wrote them) as the worker read them before it launched the task, updated with
    the offsets this instance committed since — not with those of its split reads
    (:meth:`SourceTaskContext.request_split_read`), which the worker stores itself.
    Lookups are local (no I/O) and safe from any thread.
    """

    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        """The committed offset of one source partition (a dict equal to the records'
        ``source_partition``), or ``None`` when none was committed or it was reset."""
        return self.offsets([partition]).get(_partition_key(partition))

    @abstractmethod
    def offsets(self, partitions: list[dict[str, Any]]) -> dict[Any, dict[str, Any] | None]:
        """Committed offsets for several partitions, keyed by :func:`partition_key`
        (``None`` for a partition without one)."""


def _partition_key(partition: dict[str, Any]) -> Any:
    """The hashable key of a source partition: the tuple of its sorted ``(key, value)``
    pairs. Offsets are keyed this way by :meth:`OffsetStorageReader.offsets` and in
    ``alter_offsets``."""
    return tuple(sorted(partition.items()))


partition_key = _partition_key


class TransactionContext(ABC):
    """How a task of a connector with ``transaction.boundary=connector`` ends its
    transactions (Kafka's ``TransactionContext``), given by
    :meth:`SourceTaskContext.transaction_context`.

    Each request is acted on by the task's thread after :meth:`SourceTask.poll` returned:
    a request naming a record ends the transaction right after that record (one of the
    batch ``poll`` returned, or of a later one) was handed to the producer; a request
    naming none ends it after the whole batch. When both are asked for one record, or
    several for one batch, the abort wins. A committed transaction's records become
    visible to ``read_committed`` consumers at once, and the offsets of its records are
    committed with them; an aborted transaction's records are never visible and its
    offsets are never committed (the task itself decides whether to send them again).
    Records of a transaction that was not ended when the task stops cleanly are
    committed; when the task fails, they are aborted."""

    @abstractmethod
    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        """End the transaction with a commit after ``record`` (or, with none, after the
        current batch)."""

    @abstractmethod
    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        """End the transaction with an abort after ``record`` (or, with none, after the
        current batch): its records are discarded."""


class SourceTaskContext(ABC):
    """What the framework offers a running :class:`SourceTask`. It lives with the task
    instance in the executor; its methods do no I/O and may be called from any thread
    (the task thread, threads the task started)."""

    @abstractmethod
    def configs(self) -> dict[str, str]:
        """A copy of the task config :meth:`SourceTask.start` received."""

    @abstractmethod
    def offset_storage_reader(self) -> OffsetStorageReader:
        """Reader of this connector's committed source offsets: those stored when the
        task was launched, plus what this instance committed since (see
        :class:`OffsetStorageReader`)."""

    def transaction_context(self) -> TransactionContext | None:
        """The task's :class:`TransactionContext` when its connector defines its own
        transaction boundaries (exactly-once delivery enabled on the worker and
        ``transaction.boundary=connector``); ``None`` otherwise."""
        return None

    # -- Sluice's extension: reads split across Spark partitions (not in Kafka Connect)

    @property
    def supports_split_reads(self) -> bool:
        """Whether :meth:`request_split_read` is served (it is when the task runs on Spark)."""
        return False

    def request_split_read(self, parts: Sequence[Any]) -> None:
        """Have the framework read ``parts`` in parallel, one Spark partition each.

        Each part is a picklable description the task class's
        :meth:`SourceTask.read_split` understands. The framework calls that class method
        for every part in a Spark partition of its own (no task instance is made), and
        writes what it yields like polled records (converters, transforms, error
        handling). For reads without offsets to keep (a bulk snapshot) or whose records
        carry their own offsets.

        Call it from :meth:`SourceTask.poll` (the task thread); it is acted on when that
        ``poll()`` has returned. Then the records of that poll are produced, Kafka's
        acknowledgements awaited and the acknowledged offsets stored (with ``commit()``);
        then the worker reads the parts — those of every call since the last split read
        — in one Spark job and stores the offsets their records carry. ``poll`` is called
        again only after that job ended. A part that raises, or offsets of the parts
        that cannot be stored, fail the task.

        Raises: what pickling raises when ``parts`` do not pickle; ``NotImplementedError``
        where :attr:`supports_split_reads` is False.
        """
        raise NotImplementedError("this context cannot split reads across Spark partitions")


class SourceTask(Task):
    """Reads from a source system, in a Spark executor's Python worker.

    Threads: every call — ``initialize``, ``start``, ``poll``, ``commit_record``,
    ``commit``, ``stop`` — is made on the task thread (see :mod:`sluice.api.connector`),
    one at a time: none of them runs while another does. Guard only what the task
    shares with threads it started itself.

    Lifecycle of an instance: ``initialize(context)`` → ``start(props)`` → a loop on the
    task thread: ``poll()``; the records it returned are transformed and converted as a
    batch and handed to an idempotent producer (``acks=all``, in order); Kafka's
    acknowledgements, served between polls, call ``commit_record``; about every
    ``offset.flush.interval.ms`` (capped at 1 s) the offsets of acknowledged records go
    to the worker, which stores them, then ``commit()`` is called → ``stop()``. The
    offset stored for a source partition is the ``source_offset`` of the last of its
    records that Kafka acknowledged along with every record of the partition polled
    before it (records a transformation dropped or that failed within
    ``errors.tolerance`` count as acknowledged). A new instance starts from the stored
    offsets.
    """

    context: SourceTaskContext

    def initialize(self, context: SourceTaskContext) -> None:
        """Called once per instance, on the task thread, before :meth:`start`; keeps
        ``context``. Call ``super().initialize(context)`` if you override it."""
        self.context = context

    @abstractmethod
    def poll(self) -> list[SourceRecord] | None:
        """Return the records available now, or ``None``/``[]`` when there are none.

        Called on the task thread, in a loop, from after :meth:`start` until the task
        stops or fails. Between two calls the runtime transforms, converts and produces
        what the previous call returned (blocking while the producer's queue is full:
        the backpressure), serves Kafka's acknowledgements (``commit_record``) and, when
        due, commits offsets (``commit()``); nothing else paces the loop. So when there
        is nothing to return, wait a little inside ``poll`` — about a second at most —
        or an idle task spins; and return promptly: a stop, a pause or a split read
        takes effect only once the ``poll()`` under way returned. While the connector is
        paused ``poll`` is not called (what was produced is delivered and its offsets
        committed before PAUSED is reported).

        Raises: :class:`~sluice.api.errors.RetriableError` — ``poll`` is called again
        after about 0.1 s, without limit. Any other exception: the records of earlier
        polls are still delivered and their acknowledged offsets stored, then the task
        is FAILED with the traceback; :meth:`stop` is still called.

        Not guaranteed: that returned records reach Kafka, or reach it once. If the
        instance is lost (Python worker or worker gone, task abandoned), what it
        produced but Kafka did not acknowledge may or may not be written, and the next
        instance starts from the stored offsets, which lag the acknowledgements by up to
        a commit interval: derive what to read next from offsets, not from memory
        (delivery is at least once).
        """

    def commit(self) -> None:
        """Called on the task thread each time the worker stored offsets this instance
        sent: about every ``offset.flush.interval.ms`` (capped at 1 s) when records were
        acknowledged since the last store, when the connector is paused, before a split
        read, and when the instance stops (also after a failure). Acknowledge data in the
        source system here — up to the records whose offsets were stored, which may be
        fewer than ``poll`` returned (Kafka acknowledges in the background, and a
        partition's offset never passes a record not yet acknowledged).

        Raises: logged, and the task goes on (as in Kafka Connect).

        Not guaranteed: one call per interval — there is none when nothing new was
        acknowledged, after a store that failed (the offsets are sent again with the
        next commit) or that was refused because the task no longer owns its work
        (zombie fencing), nor at the stop when the worker is gone.
        """

    def commit_record(self, record: SourceRecord, metadata: Any) -> None:
        """Called on the task thread once per record ``poll`` returned, when the
        runtime is done with it: with ``metadata`` (a
        :class:`~sluice.api.records.RecordMetadata`: topic, partition, offset,
        timestamp) once Kafka acknowledged the record, with ``metadata`` ``None`` when a
        transformation dropped it or it failed within ``errors.tolerance=all``
        (transformation, conversion, or its write to Kafka). With a dead letter queue
        (``errors.deadletterqueue.topic.name``, a Sluice extension for sources), a record
        that failed in a transformation or conversion goes there, and ``metadata`` is
        that of its dead letter record. Only called when a subclass overrides it.

        For a record dropped, or failed in a transformation or conversion (without a
        dead letter queue), the call comes right after its ``poll()`` returned; the
        others come from the producer's delivery reports, served between polls and
        while the runtime waits for acknowledgements — before the record's offset is
        stored, in produce order within a Kafka partition and in no set order across
        partitions.

        Raises: logged, and the task goes on (as in Kafka Connect).

        Not guaranteed: a call for every record — none for the records of a split read
        (:meth:`read_split`), for records not acknowledged before the instance stopped
        or was lost, or for records after one that failed beyond ``errors.tolerance``.
        """

    @classmethod
    def read_split(cls, props: dict[str, str], part: Any) -> Iterator[list[SourceRecord]]:
        """Sluice's extension: read one part of a read the task asked to split
        (:meth:`SourceTaskContext.request_split_read`), in chunks of records.

        Called once per part, in a Spark job of its own, in an executor's Python worker
        other than the task's (any executor), on the thread of the Spark task that reads
        the part, with the task's config ``props``. No instance of the task is at hand:
        nothing is initialized, started or stopped, so open and close what the read
        needs here. The part gets converters and transformations of its own, and its
        records are written with Spark's Kafka sink: ``commit_record`` is not called for
        them.

        Raises: the chunks yielded before are written and their offsets stored, then
        the task is FAILED with the traceback.
        """
        raise NotImplementedError(f"{cls.__name__} does not read splits")


class SourceConnector(Connector):
    """A connector that imports data from a source system into Kafka."""

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport | None:
        """Whether this connector can deliver exactly once with ``connector_config``;
        ``None`` (the default): it does not say.

        Called by a distributed worker's validation of a config with
        ``exactly.once.support=required`` (``PUT …/config/validate``, and before a
        connector is created or reconfigured), in the worker process, on a throwaway
        instance (never started), with the config as given (placeholders resolved).
        Anything but SUPPORTED — ``None`` included — is an error on
        ``exactly.once.support``; so is an exception, with its message. A worker without
        ``exactly.once.source.support=enabled`` refuses a ``required`` connector in any
        case, with its own error on the same key."""
        return None

    def can_define_transaction_boundaries(self, connector_config: dict[str, str]) -> ConnectorTransactionBoundaries:
        """Whether this connector's tasks can define their own transaction boundaries with
        ``connector_config``; the default is UNSUPPORTED.

        Called, as :meth:`exactly_once_support` is, by a distributed worker's validation
        of a config with ``transaction.boundary=connector``: anything but SUPPORTED
        (``None`` included) is an error on ``transaction.boundary``; so is an exception,
        with its message."""
        return ConnectorTransactionBoundaries.UNSUPPORTED

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[Any, Any]) -> bool:
        """Called before the connector's offsets are altered (``PATCH``) or reset
        (``DELETE /connectors/{name}/offsets``), which the REST API allows only while the
        connector is STOPPED.

        Called in the worker process, on a REST request thread, on a throwaway instance
        (never started), with the connector's config (placeholders resolved). ``offsets``
        maps each partition (as :func:`partition_key`: a tuple of sorted ``(key, value)``
        pairs) to its new offset dict, or ``None`` for a reset. Return True if the
        connector keeps no offsets outside the framework (the framework's offsets are
        then all there is; only the answer's message differs). The default returns
        False, as Kafka Connect's does.

        Raises: ``NotImplementedError`` refuses any change (HTTP 500); a
        :class:`~sluice.api.errors.ConnectError` refuses this one (HTTP 400, with its
        message); any other exception fails the request (HTTP 500). The offsets are left
        as they were.
        """
        return False
