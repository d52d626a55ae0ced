"""A source task that delivers exactly once (Kafka's ``ExactlyOnceWorkerSourceTask``, KIP-618).

The task writes through a transactional producer of its own (``transactional.id``
``<group.id>-<connector>-<task>``, never shared with other tasks of the host). Its records,
and the offsets of those records in Kafka Connect's format, go to Kafka in one
transaction: a ``read_committed`` consumer sees a transaction's records exactly when the
offsets topic holds their offsets, so a task that dies mid-transaction repeats nothing
once its successor resumes from those offsets.

Before the task instance is initialized the producer's ``init_transactions`` fences every
earlier producer with the same transactional id (a zombie instance of the task on a worker
that lost its work) and aborts the transaction it left open.

Where transactions end (``transaction.boundary``): after each batch ``poll`` returned
(``poll``), every ``transaction.boundary.interval.ms`` (``interval``), or where the task
asks through its :class:`~sluice.api.source.TransactionContext` (``connector``). An open
transaction is committed when the task pauses or stops cleanly, aborted when it fails.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from sluice.api.records import RecordMetadata, SourceRecord
from sluice.api.source import TransactionContext
from sluice.kafka.clients import KafkaClients, close_producer
from sluice.kafka.offset_format import encode_offset_key, encode_offset_value
from sluice.kafka.transactions import transactional_settings
from sluice.taskhost.control import TaskControl
from sluice.taskhost.loop import FINAL_FLUSH_S, TaskFailure, format_trace
from sluice.taskhost.producers import HostProducers, ProducerLease
from sluice.taskhost.protocol import RunSourceTask, SourceOffsets, Transactions
from sluice.taskhost.source import SourceLoop

log = logging.getLogger(__name__)

__all__ = ["TransactionalSourceLoop"]

#: How long ``init_transactions`` may take (it waits for the earlier producer's open
#: transaction to be aborted).
INIT_TIMEOUT_S = 60.0


class _BoundaryRequests(TransactionContext):
    """What the task asked through its transaction context, until the loop acts on it.
    Called from any of the task's threads; the loop takes the requests on its own."""

    def __init__(self) -> None:
        # by the id of the record after which the transaction ends: (record, commit?)
        self.after_record: dict[int, tuple[SourceRecord, bool]] = {}
        self.after_batch: bool | None = None  # None: nothing asked; else commit?

    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        self._ask(record, True)

    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        self._ask(record, False)

    def _ask(self, record: SourceRecord | None, commit: bool) -> None:
        if record is None:
            self.after_batch = commit if self.after_batch is None else self.after_batch and commit
            return
        earlier = self.after_record.get(id(record))
        self.after_record[id(record)] = (record, commit if earlier is None else earlier[1] and commit)

    def take_after_record(self, record: SourceRecord) -> bool | None:
        asked = self.after_record.pop(id(record), None)
        return None if asked is None else asked[1]

    def take_after_batch(self) -> bool | None:
        asked, self.after_batch = self.after_batch, None
        return asked


class TransactionalSourceLoop(SourceLoop):
    """Runs one source task instance that delivers exactly once."""

    def __init__(
        self,
        launch: RunSourceTask,
        control: TaskControl,
        clients: KafkaClients,
        producers: HostProducers | None = None,
    ) -> None:
        assert launch.transactions is not None
        self.transactions: Transactions = launch.transactions
        self.boundary = self.transactions.boundary.lower()
        self.in_transaction = False
        # commit_record calls wait for their transaction's commit (Kafka calls it only for
        # records in committed transactions)
        self.committed_records: list[tuple[SourceRecord, RecordMetadata | None]] = []
        super().__init__(launch, control, clients, producers)
        self.requests = _BoundaryRequests() if self.boundary == "connector" else None
        self.transaction_context = self.requests
        if self.boundary == "interval":
            self.interval_s = max(self.transactions.interval_ms, 1) / 1000.0

    def _lease_producer(
        self, clients: KafkaClients, producers: HostProducers | None, settings: dict[str, Any], own_client_id: str
    ) -> ProducerLease:
        """A transactional producer of the task's own."""
        made = transactional_settings(settings, self.transactions.transactional_id)
        made.setdefault("client.id", own_client_id)
        made["error_cb"] = self._producer_error
        producer = clients.producer(made)
        return ProducerLease(producer, lambda: close_producer(producer))

    def _before_start(self) -> None:
        """Fence the task's earlier instances (their producers' transactions are aborted)."""
        try:
            self.producer.init_transactions(INIT_TIMEOUT_S)
        except Exception as exc:
            raise TaskFailure(
                f"Could not initialize the transactional producer of task {self.spec.connector}-{self.spec.task} "
                f"(transactional.id {self.transactions.transactional_id!r}; it needs the WRITE and DESCRIBE "
                f"permissions on that transactional id): {exc}\n{format_trace(exc)}"
            ) from exc

    # -- transactions --------------------------------------------------------------------

    def _send(self, records: list[SourceRecord]) -> None:
        requests = self.requests
        if requests is None:
            self._begin()
            super()._send(records)
            if self.boundary == "poll":
                self._end(commit=True)
            return
        start = 0
        for i, record in enumerate(records):
            commit = requests.take_after_record(record)
            if commit is not None:
                self._begin()
                super()._send(records[start : i + 1])
                start = i + 1
                self._end(commit)
        if start < len(records):
            self._begin()
            super()._send(records[start:])
        commit = requests.take_after_batch()
        if commit is not None:
            self._end(commit)

    def _check_destinations(self, topics: set[str]) -> None:
        """A task must not write records to the offsets topic its transactions write to, as
        Kafka's exactly-once tasks must not: it fails instead (in Kafka reading its offsets
        would wait for its own open transaction)."""
        offsets_topic = self.transactions.offsets_topic
        if offsets_topic in topics:
            raise TaskFailure(
                f"Task {self.spec.connector}-{self.spec.task} tried to write records to topic "
                f"'{offsets_topic}', its own offsets topic (where its transactions store its source "
                f"offsets). An exactly-once source task must not write to its own offsets topic: send "
                f"the records to another topic, or give the connector another offsets.storage.topic."
            )

    def _begin(self) -> None:
        if not self.in_transaction:
            self.producer.begin_transaction()
            self.in_transaction = True

    def _end(self, commit: bool) -> None:
        """Commit (with the offsets of its records) or abort the open transaction."""
        if not self.in_transaction:
            return
        offsets, entries = self.submitted.take_all()
        if not commit:
            for entry in entries:
                entry.loop = None  # the abort's reports are not the task's concern
            self.committed_records.clear()
            self.in_transaction = False
            self._call(self.producer.abort_transaction, "abort")
            return
        started = time.monotonic()
        topic, connector = self.transactions.offsets_topic, self.spec.connector
        for partition, offset in offsets.values():
            self.producer.produce(topic, encode_offset_value(offset), encode_offset_key(connector, partition))
        self.in_transaction = False
        self._call(self.producer.commit_transaction, "commit")
        self.producer.poll(0)
        if self.reports:
            self._serve_reports()
        self._check_failure()
        self.meter.committed((time.monotonic() - started) * 1000.0)
        records, self.committed_records = self.committed_records, []
        for record, metadata in records:
            super()._commit_record(record, metadata)
        if offsets:
            self.stored.update(offsets)
            self.seq += 1
            self.control.send(SourceOffsets(self.seq, list(offsets.values()), written=True))
            self.control.committed()
        self._task_commit()

    def _call(self, action: Any, what: str) -> None:
        try:
            action(FINAL_FLUSH_S)
        except Exception as exc:
            self.producer_broken = True
            raise TaskFailure(
                f"Could not {what} the transaction of task {self.spec.connector}-{self.spec.task}: {exc}\n"
                f"{format_trace(exc)}"
            ) from exc

    # -- the SourceLoop's steps, transactional -----------------------------------------------

    def _commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        self.committed_records.append((record, metadata))

    def _settle(self) -> int:
        # the records of the open transaction are taken out when it ends, not as acknowledged
        if self.reports:
            self._serve_reports()
        return self.submitted.outstanding

    def _await_acks(self, timeout_s: float) -> int:
        return self._settle()

    def _periodic_commit(self) -> None:
        if self.boundary == "interval":
            self._end(commit=True)

    def _commit_offsets(self) -> None:
        """On pause and stop: the open transaction is committed. A commit that fails as the
        task stops (a newer instance fenced it) does not fail the task: its records are not
        delivered, and whichever instance runs next resumes from the committed offsets."""
        try:
            self._end(commit=True)
        except TaskFailure as exc:
            if not self.control.stopping:
                raise
            log.warning(
                "Task %s-%s stopped with a transaction it could not commit (its records are not delivered; "
                "the next instance resumes from the committed offsets): %s",
                self.spec.connector,
                self.spec.task,
                exc.trace.splitlines()[0],
            )

    def _finish(self, started: bool, failure: str | None) -> str | None:
        if self.in_transaction and (failure is not None or self.failure is not None or self.producer_broken):
            try:
                self._end(commit=False)
            except TaskFailure as exc:
                log.warning("Task %s-%s: %s", self.spec.connector, self.spec.task, exc.trace)
        return super()._finish(started, failure)
