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
    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class OffsetStorageReader(ABC):
    """Reads committed source offsets. In a task it is served, inside the executor,
    from the snapshot of committed offsets the driver shipped with the task."""

    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        """The committed offset of one source partition, or ``None``."""
        return self.offsets([partition]).get(_partition_key(partition))

    @abstractmethod
    def offsets(self, partitions: list[dict[str, Any]]) -> dict[Any, dict[str, Any] | None]:
        """Committed offsets for several partitions, keyed by :func:`partition_key`."""


def _partition_key(partition: dict[str, Any]) -> Any:
    return tuple(sorted(partition.items()))


partition_key = _partition_key


class SourceTaskContext(ABC):
    """What the framework offers a running :class:`SourceTask` (executor side)."""

    @abstractmethod
    def configs(self) -> dict[str, str]:
        """The task's config."""

    @abstractmethod
    def offset_storage_reader(self) -> OffsetStorageReader:
        """Reader of this connector's committed source offsets."""

    # -- Sluice's extension: reads split across Spark partitions (not in Kafka Connect)

    @property
    def supports_split_reads(self) -> bool:
        """Whether :meth:`request_split_read` is served (it is when the task runs on Spark)."""
        return False

    def request_split_read(self, parts: Sequence[Any]) -> None:
        """Have the framework read ``parts`` in parallel, one Spark partition each.

        Each part is a picklable description the task class's
        :meth:`SourceTask.read_split` understands. The framework calls it for every part
        in a Spark partition of its own, with a fresh task instance, and writes what it
        yields like polled records (converters, transforms, error handling). The read
        runs after the records polled before this call are written and before those
        polled after it. For reads without offsets to keep (a bulk snapshot) or whose
        records carry their own offsets.
        """
        raise NotImplementedError("this context cannot split reads across Spark partitions")


class SourceTask(Task):
    """Reads from a source system. Every method runs in a Spark executor's Python
    worker, on the thread the framework uses to poll this task.

    Lifecycle: ``initialize(context)`` → ``start(props)`` → ``poll()`` repeatedly →
    ``commit()`` after offsets were stored → ``stop()``.
    """

    context: SourceTaskContext

    def initialize(self, context: SourceTaskContext) -> None:
        """Called by the framework before :meth:`start`."""
        self.context = context

    @abstractmethod
    def poll(self) -> list[SourceRecord] | None:
        """Return the records available now, or ``None``/``[]`` when there are none.
        May block briefly (about a second at most) waiting for data. Raise
        :class:`~sluice.api.errors.RetriableError` to be polled again later; any other
        exception fails the task."""

    def commit(self) -> None:
        """Called after the offsets of previously returned records were committed."""

    def commit_record(self, record: SourceRecord, metadata: Any) -> None:
        """Called for each record after Kafka acknowledged it (``metadata`` may be None
        when a transform dropped the record)."""

    @classmethod
    def read_split(cls, props: dict[str, str], part: Any) -> Iterator[list[SourceRecord]]:
        """Sluice's extension: read one part of a read the task asked to split
        (:meth:`SourceTaskContext.request_split_read`), in chunks of records. Runs in a
        Spark partition of its own with the task's config ``props``; no running
        instance of the task is at hand."""
        raise NotImplementedError(f"{cls.__name__} does not read splits")


class SourceConnector(Connector):
    """A connector that imports data from a source system into Kafka."""

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport | None:
        """Whether this connector can provide exactly-once delivery; ``None`` = unknown."""
        return None

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[Any, Any]) -> bool:
        """Called (driver side) before offsets are altered or reset through the REST API.

        ``offsets`` maps each partition (as :func:`partition_key`: a tuple of sorted
        ``(key, value)`` pairs) to its new offset dict, or ``None`` for a reset. Return
        True if the connector keeps no offsets outside the framework (the framework's
        offsets are then all there is); raise ``NotImplementedError`` to refuse any
        change. The default returns False, as Kafka Connect's does."""
        return False
