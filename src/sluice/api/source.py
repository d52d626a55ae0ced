"""Source connectors and tasks, mirroring ``org.apache.kafka.connect.source``."""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any

from sluice.api.connector import Connector, Task
from sluice.api.records import SourceRecord

__all__ = [
    "ExactlyOnceSupport",
    "OffsetStorageReader",
    "SourceConnector",
    "SourceTask",
    "SourceTaskContext",
]


class ExactlyOnceSupport(enum.Enum):
    """What :meth:`SourceConnector.exactly_once_support` answers."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class OffsetStorageReader(ABC):
    """Reads committed source offsets.

    A running task's reader (:meth:`SourceTaskContext.offset_storage_reader`) serves,
    inside the executor, a snapshot shipped with the micro-batch that created the task
    instance: the connector's offsets (all its source partitions, whichever task wrote
    them) as the worker read them when the task started, plus what this task committed
    since. It never changes afterwards — read it in ``start`` (or the first ``poll``).
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


class SourceTaskContext(ABC):
    """What the framework offers a running :class:`SourceTask`. It lives with the task
    instance in the executor; its methods do no I/O and may be called from any of the
    task's threads (the batch thread, the poll thread, threads the task started)."""

    @abstractmethod
    def configs(self) -> dict[str, str]:
        """A copy of the task config :meth:`SourceTask.start` received."""

    @abstractmethod
    def offset_storage_reader(self) -> OffsetStorageReader:
        """Reader of this connector's committed source offsets: a snapshot taken when
        this instance was created (see :class:`OffsetStorageReader`)."""

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
        handling). The read runs after the records polled before this call are written
        and before those polled after it. For reads without offsets to keep (a bulk
        snapshot) or whose records carry their own offsets.

        Call it from :meth:`SourceTask.poll` (the poll thread). It ends the micro-batch in
        flight; the parts are read by one more Spark job before the next batch, while the
        poll thread keeps polling ahead. The offsets the parts' records carry are stored
        once that job succeeded; a part that raises fails the task.

        Raises: what pickling raises when ``parts`` do not pickle; ``NotImplementedError``
        where :attr:`supports_split_reads` is False.
        """
        raise NotImplementedError("this context cannot split reads across Spark partitions")


class SourceTask(Task):
    """Reads from a source system, in a Spark executor's Python worker.

    Threads: ``initialize``, ``start``, ``commit`` and ``stop`` run on the batch thread
    (see :mod:`sluice.api.connector`); ``poll`` runs on a poll thread the instance owns
    (``sluice-source-<connector>-<task>``), started after ``start``. So ``commit`` and
    ``stop`` may run while a ``poll()`` is under way: guard state they share.

    Lifecycle of an instance: ``initialize(context)`` → ``start(props)`` → ``poll()`` in a
    loop on the poll thread, ahead of the micro-batches → ``commit()`` at the start of
    every micro-batch after the instance's first → ``stop()``. Each micro-batch writes
    what was polled to Kafka (converters, transforms, error policy), and the worker stores
    the last ``source_offset`` of each source partition among its records once Kafka
    acknowledged all of them. A new instance starts from those stored offsets.
    """

    context: SourceTaskContext

    def initialize(self, context: SourceTaskContext) -> None:
        """Called once per instance, on the batch thread, before :meth:`start`; keeps
        ``context``. Call ``super().initialize(context)`` if you override it."""
        self.context = context

    @abstractmethod
    def poll(self) -> list[SourceRecord] | None:
        """Return the records available now, or ``None``/``[]`` when there are none.

        Called on the instance's poll thread, in a loop with no pause between calls, from
        after :meth:`start` until :meth:`stop`: when there is nothing to return, wait a
        little inside ``poll`` (about a second at most; wake early when ``stop`` is
        called), or an idle task spins. Polling runs ahead of the micro-batches: results
        wait in a queue (at most 64) for the next batch to write them, so ``poll`` is
        also called while no batch runs; it waits only while the queue is full or the
        connector is paused (a ``poll()`` under way finishes, and no other starts until
        the connector is resumed).

        Raises: :class:`~sluice.api.errors.RetriableError` — ``poll`` is called again
        after 0.1 s, without limit. Any other exception: the records of earlier polls are
        still written and their offsets stored, then the task is FAILED with the
        traceback and the instance stopped.

        Not guaranteed: that returned records reach Kafka. If the instance is lost
        (task restarted or failed, Python worker gone), what it polled but was not yet
        written is dropped, and the next instance starts from the stored offsets: derive
        what to read next from offsets, not from memory (delivery is at least once).
        """

    def commit(self) -> None:
        """Called on the batch thread at the start of each micro-batch after the
        instance's first, once the worker stored the offsets of the batch before (whose
        records Kafka acknowledged). A ``poll()`` may be running at the same time.
        Acknowledge data in the source system here — up to the records written so far,
        which is less than everything ``poll`` returned, since polling runs ahead.

        Raises: the task is FAILED with the traceback and the instance stopped.

        Not guaranteed: one call per offset commit — no call follows the instance's last
        batch, and calls also follow batches that had nothing to commit.
        """

    def commit_record(self, record: SourceRecord, metadata: Any) -> None:
        """Not called by Sluice today: Spark's Kafka sink, which writes the records, does
        not report per-record acknowledgements. Kafka Connect calls it after Kafka
        acknowledged each record (``metadata`` None when a transformation dropped it).
        Reserved for compatibility; use :meth:`commit`."""

    @classmethod
    def read_split(cls, props: dict[str, str], part: Any) -> Iterator[list[SourceRecord]]:
        """Sluice's extension: read one part of a read the task asked to split
        (:meth:`SourceTaskContext.request_split_read`), in chunks of records.

        Called once per part, in an executor's Python worker (any executor, not
        necessarily the task instance's), on its main thread, with the task's config
        ``props``. No instance of the task is at hand: nothing is initialized, started or
        stopped, so open and close what the read needs here.

        Raises: the chunks yielded before are written and their offsets stored, then
        the task is FAILED with the traceback.
        """
        raise NotImplementedError(f"{cls.__name__} does not read splits")


class SourceConnector(Connector):
    """A connector that imports data from a source system into Kafka."""

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport | None:
        """Whether this connector can provide exactly-once delivery; ``None`` = unknown.

        Not called by Sluice today: it has no exactly-once source delivery. Kafka Connect
        calls it, in the worker process, when validating a connector config on a worker
        with exactly-once source support enabled. Reserved for compatibility."""
        return None

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
