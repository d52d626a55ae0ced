"""The supervisor of a source task (Kafka's ``WorkerSourceTask``, its worker side): stores
the offsets of records Kafka acknowledged, and runs the split reads the task asks for."""

from __future__ import annotations

import logging
import time
from typing import Any, ClassVar

from confluent_kafka import KafkaException

from sluice.api.errors import ConnectError
from sluice.api.source import partition_key
from sluice.kafka.offset_format import encode_offset_key, encode_offset_value
from sluice.kafka.retries import with_kafka_retries
from sluice.kafka.transactions import fence_transactional_ids
from sluice.runtime.config import WorkerConfig
from sluice.runtime.config.keys import TRANSACTION_BOUNDARY_CONFIG, TRANSACTION_BOUNDARY_INTERVAL_CONFIG
from sluice.runtime.connector_offsets import ConnectorOffsetStore
from sluice.runtime.data_path import DeadLetterTopic
from sluice.runtime.tasks.base import Handler, WorkerTask, format_trace
from sluice.storage.base import OffsetBackingStore
from sluice.storage.offset_codec import connector_offsets
from sluice.taskhost.protocol import (
    Committed,
    RunSourceTask,
    SourceOffset,
    SourceOffsets,
    SplitReadDone,
    SplitReadRequest,
    Transactions,
)

log = logging.getLogger(__name__)

__all__ = ["WorkerSourceTask", "source_transactions", "transactional_id"]


def transactional_id(group_id: str, connector: str, task: int) -> str:
    """A source task's transactional id on an exactly-once worker (Kafka's)."""
    return f"{group_id}-{connector}-{task}"


def source_transactions(
    worker_config: WorkerConfig, connector: str, task: int, connector_config: dict[str, str], offsets_topic: str
) -> Transactions | None:
    """How a source task delivers exactly once on this worker (``None``: at least once).

    Kafka's transactional id, ``<group.id>-<connector>-<task>``; the connector's
    ``transaction.boundary`` (and its interval: ``transaction.boundary.interval.ms``, else
    the worker's ``offset.flush.interval.ms``); its offsets written to ``offsets_topic``
    on its producer's cluster."""
    if not worker_config.exactly_once_source:
        return None
    boundary = (connector_config.get(TRANSACTION_BOUNDARY_CONFIG) or "poll").strip().lower()
    interval = connector_config.get(TRANSACTION_BOUNDARY_INTERVAL_CONFIG)
    interval_ms = int(interval) if interval not in (None, "") else int(worker_config.get("offset.flush.interval.ms"))
    group = str(worker_config.get("group.id"))
    return Transactions(transactional_id(group, connector, task), boundary, interval_ms, offsets_topic)


class WorkerSourceTask(WorkerTask):
    """Supervises a source task: stores the offsets of records Kafka acknowledged.

    On an exactly-once worker (``fenced_transactional_id``: the task's transactional id,
    Kafka's ``<group.id>-<connector>-<task>``) the task's earlier instances are fenced
    before its offsets are read: the offsets topic is read ``read_committed``, so a
    transaction an earlier instance left open when it died would hold the read up until
    it timed out; fencing aborts it (Kafka's task calls ``initTransactions`` before it
    reads its offsets, for the same reason)."""

    kind = "source"

    def __init__(
        self,
        *args: Any,
        offset_store: OffsetBackingStore,
        kafka_options: dict[str, str],
        producer_config: dict[str, str] | None = None,
        dead_letter_topic: DeadLetterTopic | None = None,
        transactions: Transactions | None = None,
        fenced_transactional_id: str | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(*args, **kw)
        self.transactions = transactions
        if fenced_transactional_id is None and transactions is not None:
            fenced_transactional_id = transactions.transactional_id
        self.fenced_transactional_id = fenced_transactional_id
        self.dead_letter_topic = dead_letter_topic  # written by the task's producer, created here
        self.offset_store = offset_store
        self.kafka_options = kafka_options  # Spark's Kafka writer, for split reads
        self.producer_config = dict(producer_config or {})
        self.committed: dict[Any, SourceOffset] = {}

    def _prepare(self) -> None:
        if self.dead_letter_topic is not None:
            with_kafka_retries(self.dead_letter_topic.ensure, "Creating the dead letter queue topic", self._stopping)
        if self.fenced_transactional_id is not None:
            self._fence_earlier_instances(self.fenced_transactional_id)
        self.committed = {
            partition_key(p): (p, o) for p, o in connector_offsets(self.offset_store, self.spec.connector)
        }

    def _fence_earlier_instances(self, fenced: str) -> None:
        try:
            with_kafka_retries(
                lambda: fence_transactional_ids(self.producer_config, [fenced]),
                f"Fencing the earlier instances of task {self.spec.connector}-{self.spec.task}",
                self._stopping,
            )
        except KafkaException as exc:
            raise ConnectError(
                f"Could not fence the earlier instances of task {self.spec.connector}-{self.spec.task} "
                f"(transactional.id {fenced!r}; the task's producer needs the WRITE and DESCRIBE "
                f"permissions on that transactional id): {exc}"
            ) from exc

    def _launch_message(self) -> RunSourceTask:
        return RunSourceTask(
            task=self.spec,
            producer_config=self.producer_config,
            committed_offsets=list(self.committed.values()),
            offset_flush_interval_ms=self.settings.offset_flush_interval_ms,
            transactions=self.transactions,
        )

    def _on_offsets(self, message: SourceOffsets) -> None:
        """Store the offsets of records Kafka acknowledged (unless the task was moved); take
        note of those an exactly-once task wrote in its transaction."""
        if message.written:
            for partition, offset in message.offsets:
                self.committed[partition_key(partition)] = (partition, offset)
            if isinstance(self.offset_store, ConnectorOffsetStore):  # a topic of its own: back them up
                self.offset_store.back_up(_encoded(self.spec.connector, message.offsets))
            self._answer(Committed(message.seq))
            return
        self._answer(self._store(message.seq, message.offsets))

    def _on_split_read(self, message: SplitReadRequest) -> None:
        self._answer(self._split_read(message.parts))

    HANDLERS: ClassVar[dict[type, Handler]] = {
        **WorkerTask.HANDLERS,
        SourceOffsets: _on_offsets,
        SplitReadRequest: _on_split_read,
    }

    def _store(self, seq: int, offsets: list[SourceOffset]) -> Committed:
        if not offsets:
            return Committed(seq)
        if not self._may_commit():
            log.warning(
                "Task %s-%s no longer owns its work here (a rebalance moved it): not committing its "
                "offsets; its new owner resumes from the last committed ones",
                *self.id,
            )
            return Committed(seq, fenced=True)
        try:
            self.offset_store.set(_encoded(self.spec.connector, offsets))
        except Exception as exc:  # noqa: BLE001 - any store failure: the task retries with its next commit
            log.warning("Task %s-%s: storing offsets failed: %s", *self.id, exc)
            return Committed(seq, error=str(exc))
        for partition, offset in offsets:
            self.committed[partition_key(partition)] = (partition, offset)
        return Committed(seq)

    def _split_read(self, parts: list[bytes]) -> SplitReadDone:
        """Read the parts the task asked to split, as a Spark job of their own, and store
        their offsets; the task polls again after the answer."""
        assert self.launcher is not None
        started = time.monotonic()
        try:
            result = self.launcher.run_split_read(self.spec, self.kafka_options, parts)
        except Exception as exc:  # noqa: BLE001 - whatever the Spark job raised fails the task, with this trace
            return SplitReadDone(format_trace(exc))
        stored = self._store(0, result.offsets)
        for topic in result.topics:
            self.hooks.record_topic(topic)
        log.info(
            "Source task %s-%s read %d records in %d Spark partitions in %.1f s",
            *self.id,
            result.count,
            len(parts),
            time.monotonic() - started,
        )
        if result.failure:
            return SplitReadDone(result.failure)
        if stored.error is not None:
            return SplitReadDone(f"Storing the offsets of a split read failed: {stored.error}")
        return SplitReadDone()


def _encoded(connector: str, offsets: list[SourceOffset]) -> dict[bytes, bytes | None]:
    return {encode_offset_key(connector, partition): encode_offset_value(offset) for partition, offset in offsets}
