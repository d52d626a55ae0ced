"""A source task's life inside its long-lived Spark task (Kafka's ``WorkerSourceTask``).

One thread — the task's own in its host — polls the task, transforms and converts each
poll's records as a batch, and hands them to an idempotent librdkafka producer (acks=all,
ordered per partition), which it may share with other tasks of the host
(:mod:`sluice.taskhost.producers`). Kafka acknowledges records in the background; each
acknowledgement lets the offsets of its source partition advance (:class:`SubmittedRecords`:
never past a record Kafka has not acknowledged) and calls ``commit_record`` on the task's
thread.
The acknowledged offsets go to the worker, which stores them, then ``commit()`` is
called. Pause, stop and split reads are asked and answered over the control channel
(:mod:`sluice.taskhost.protocol`).
"""

from __future__ import annotations

import logging
import pickle
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from sluice.api.errors import RetriableError
from sluice.api.records import RecordMetadata, SourceRecord
from sluice.api.source import OffsetStorageReader, SourceTask, SourceTaskContext, TransactionContext, partition_key
from sluice.kafka.clients import KafkaClients
from sluice.kafka.errors import ends_task
from sluice.kafka.settings import producer_settings
from sluice.kafka.topics import TopicCreator
from sluice.taskhost.control import TaskControl, WorkerGone
from sluice.taskhost.loop import COMMIT_INTERVAL_MAX_MS, FINAL_FLUSH_S, Stopping, TaskFailure, TaskLoop, format_trace
from sluice.taskhost.plugins import ensure_plugin_paths, load_class, make_pipeline
from sluice.taskhost.producers import HostProducers, ProducerLease
from sluice.taskhost.protocol import (
    PausedAck,
    RunSourceTask,
    SourceOffset,
    SourceOffsets,
    SplitReadRequest,
    TopicsSeen,
)

log = logging.getLogger(__name__)

__all__ = ["SourceLoop", "SubmittedRecords"]

RETRIABLE_POLL_BACKOFF_S = 0.1
# How long one wait for delivery reports lasts while the loop waits for its own records'
# acknowledgements (a report ends it at once; another task may have served ours).
_ACK_WAIT_SLICE_S = 0.05

# The queue of the records without a source partition: waited for, never committed.
_NO_PARTITION = object()


class _Submitted:
    """One record handed to the producer; called with its delivery report, on whichever
    thread serves the producer's reports (with a shared producer, maybe another task's):
    an acknowledgement that needs nothing more only marks the record; anything else goes
    to the loop's queue of reports, which its own thread serves."""

    __slots__ = ("acked", "loop", "record")

    def __init__(self, record: SourceRecord, loop: SourceLoop | None = None) -> None:
        self.record = record
        self.acked = False
        self.loop = loop

    def __call__(self, err: Any, message: Any) -> None:
        loop = self.loop
        if err is None and (loop is None or loop.plain_acks):
            self.acked = True  # the common case, kept short: it runs once per record
        elif loop is not None:
            loop.reports.append((self, err, message))


class SubmittedRecords:
    """Records handed to the producer, in poll order per source partition (Kafka's
    ``SubmittedRecords``): a partition's committable offset is that of the last record
    before its first unacknowledged one. Records without a source partition are kept too
    (in a queue of their own), so that :attr:`outstanding` counts them until acknowledged."""

    def __init__(self, loop: SourceLoop | None = None) -> None:
        self._loop = loop
        self._partitions: dict[Any, deque[_Submitted]] = {}
        self._last_partition: Any = None
        self._last_key: Any = _NO_PARTITION
        #: records submitted and not yet taken out by :meth:`committable`: those Kafka has
        #: not acknowledged, and those acknowledged behind one it has not
        self.outstanding = 0

    def submit(self, record: SourceRecord, offsets: bool = True) -> _Submitted:
        """Hand ``record`` over; with ``offsets`` false its acknowledgement is waited for
        (:attr:`outstanding`) but never lets its source partition's offset advance."""
        entry = _Submitted(record, self._loop)
        source_partition = record.source_partition if offsets else None
        # consecutive records mostly share their partition: build its key once
        if source_partition is not self._last_partition and source_partition != self._last_partition:
            self._last_partition = source_partition
            self._last_key = _NO_PARTITION if source_partition is None else partition_key(source_partition)
        queue = self._partitions.get(self._last_key)
        if queue is None:
            queue = self._partitions[self._last_key] = deque()
        queue.append(entry)
        self.outstanding += 1
        return entry

    def withdraw(self, unsent: Sequence[_Submitted]) -> None:
        """Take back records submitted but never handed to the producer, and every record
        submitted after one of them in its source partition (their offsets cannot be
        committed past an unsent record): they are no longer :attr:`outstanding`."""
        ids = {id(entry) for entry in unsent}
        if not ids:
            return
        for queue in self._partitions.values():
            for position, entry in enumerate(queue):
                if id(entry) in ids:
                    dropped = len(queue) - position
                    for _ in range(dropped):
                        queue.pop()
                    self.outstanding -= dropped
                    break

    def take_all(self) -> tuple[dict[Any, SourceOffset], list[_Submitted]]:
        """Every record submitted, acknowledged or not, taken out: the offset of each source
        partition's last record (the offsets of a transaction, which Kafka makes visible
        all at once or never), and the records' entries."""
        offsets: dict[Any, SourceOffset] = {}
        entries: list[_Submitted] = []
        for key, queue in self._partitions.items():
            if queue and key is not _NO_PARTITION:
                last = queue[-1].record
                offsets[key] = (last.source_partition, last.source_offset)  # type: ignore[assignment]
            entries.extend(queue)
            queue.clear()
        self.outstanding = 0
        return offsets, entries

    def committable(self) -> dict[Any, SourceOffset]:
        """The offsets that may be committed now, by partition key; takes them out."""
        out: dict[Any, SourceOffset] = {}
        for key, queue in self._partitions.items():
            last = None
            taken = 0
            while queue and queue[0].acked:
                last = queue.popleft()
                taken += 1
            if last is not None:
                self.outstanding -= taken
                if key is not _NO_PARTITION:
                    out[key] = (last.record.source_partition, last.record.source_offset)  # type: ignore[assignment]
        return out


class _LiveOffsetReader(OffsetStorageReader):
    """The offsets stored when the task was launched, and those committed since."""

    def __init__(self, offsets: dict[Any, SourceOffset]) -> None:
        self._offsets = offsets

    def offsets(self, partitions: list[dict[str, Any]]) -> dict[Any, dict[str, Any] | None]:
        found = {}
        for partition in partitions:
            stored = self._offsets.get(partition_key(partition))
            found[partition_key(partition)] = None if stored is None else stored[1]
        return found


class _SourceContext(SourceTaskContext):
    def __init__(self, config: dict[str, str], reader: OffsetStorageReader, loop: SourceLoop) -> None:
        self._config = config
        self._reader = reader
        self._loop = loop

    def configs(self) -> dict[str, str]:
        return dict(self._config)

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader

    def transaction_context(self) -> TransactionContext | None:
        return self._loop.transaction_context

    @property
    def supports_split_reads(self) -> bool:
        # a split read's records are written by a Spark job of their own, outside the
        # task's transactions
        return self._loop.launch.transactions is None

    def request_split_read(self, parts: Sequence[Any]) -> None:
        if not self.supports_split_reads:
            raise NotImplementedError("a task that delivers exactly once cannot split its reads")
        parts = list(parts)
        if not parts:
            return
        # serialised here: a part that does not pickle fails the task, with the task's trace
        self._loop.split_parts.extend(pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL) for part in parts)


class SourceLoop(TaskLoop):
    """Runs one source task instance until it is stopped or fails."""

    def __init__(
        self,
        launch: RunSourceTask,
        control: TaskControl,
        clients: KafkaClients,
        producers: HostProducers | None = None,
    ) -> None:
        spec = launch.task
        ensure_plugin_paths(spec.task_config)
        self.launch = launch
        self.spec = spec
        self.control = control
        self.pipeline = make_pipeline(spec)
        self.meter = control.meter
        self.pipeline.operator.meter = self.meter
        self.creator = TopicCreator(spec.topic_creation, clients) if spec.topic_creation else None
        self.submitted = SubmittedRecords(self)
        self.stored: dict[Any, SourceOffset] = {partition_key(p): (p, o) for p, o in launch.committed_offsets}
        self.uncommitted: dict[Any, SourceOffset] = {}
        self.transaction_context: TransactionContext | None = None
        self.context = _SourceContext(spec.task_config, _LiveOffsetReader(self.stored), self)
        self.split_parts: list[bytes] = []  # each part pickled, as SplitReadRequest carries them
        self.topics_seen: set[str] = set()
        self.new_topics: list[str] = []
        # topics written to whose first acknowledgement has not come yet (active topics are
        # recorded on acknowledgement, as in Kafka)
        self.unconfirmed_topics: set[str] = set()
        self.failure: str | None = None  # set by a delivery report or a fatal producer error
        # the producer can deliver nothing more (a fatal error, a refused login): the final
        # flush does not wait for it, as a Java producer fails its pending records at once
        self.producer_broken = False
        self.released = False  # once the producer is let go, as the task ended
        # delivery reports that need the task's thread: (entry, error, message)
        self.reports: deque[tuple[_Submitted, Any, Any]] = deque()
        self.seq = 0
        self.interval_s = min(launch.offset_flush_interval_ms, COMMIT_INTERVAL_MAX_MS) / 1000.0
        self.task: SourceTask = load_class(spec.task_class)()
        self._commit_record_overridden = type(self.task).commit_record is not SourceTask.commit_record
        # whether a successful delivery report needs nothing but marking its record acknowledged
        self.plain_acks = not self._commit_record_overridden
        # last: nothing after it may raise, or the lease would never be released
        settings = producer_settings(spec.connector, spec.task, launch.producer_config)
        own_client_id = f"connector-producer-{spec.connector}-{spec.task}"
        self.lease = self._lease_producer(clients, producers, settings, own_client_id)
        self.producer = self.lease.producer

    def _lease_producer(
        self, clients: KafkaClients, producers: HostProducers | None, settings: dict[str, Any], own_client_id: str
    ) -> ProducerLease:
        """The task's producer: one of the host's, shared with tasks of equal settings."""
        pool = producers if producers is not None else HostProducers(clients)
        return pool.lease(settings, own_client_id, self._producer_error)

    # -- the task thread ---------------------------------------------------------------

    def _loop(self) -> None:
        control = self.control
        next_commit = time.monotonic() + self.interval_s
        while not control.stopping:
            if control.paused:
                self._pause()
                continue
            polled_at = time.monotonic()
            try:
                records = self.task.poll()
            except RetriableError:
                control.wait_for_change(RETRIABLE_POLL_BACKOFF_S)
                records = None
            if records:
                self.meter.polled(len(records), (time.monotonic() - polled_at) * 1000.0)
                self._send(records)
            self.producer.poll(0)
            if self.reports:
                self._serve_reports()
            if records:  # once per batch, its delivery reports served: what Kafka has not acknowledged
                self.meter.active(self._settle())
            self._check_failure()
            if self.split_parts:
                self._split_read()
            if self.new_topics:
                topics, self.new_topics = self.new_topics, []
                control.send(TopicsSeen(topics))
            now = time.monotonic()
            if now >= next_commit:
                self._periodic_commit()
                next_commit = now + self.interval_s

    def _periodic_commit(self) -> None:
        """What the loop does every commit interval."""
        self._commit_offsets()

    def _check_failure(self) -> None:
        if self.failure is not None:
            raise TaskFailure(self.failure)

    def _send(self, records: list[SourceRecord]) -> None:
        """Transform, convert and produce one poll's records. The records before one that
        fails beyond the error policy are still produced; then the task fails."""
        out = self.pipeline.source_rows(records)
        rows = out.rows
        topics = rows["topic"]
        new = set(topics) - self.topics_seen - self.unconfirmed_topics
        if new:
            self._check_destinations(new)  # before any record of the batch counts as sent
            self.unconfirmed_topics |= new
            self.plain_acks = False
        submit = self.submitted.submit
        submitted = [submit(record) for record in out.processed]
        entries: dict[int, _Submitted] = {}
        if out.owners is not out.processed:
            entries = {id(done.record): done for done in submitted}
            written = {id(owner) for owner in out.owners}
            for done in submitted:
                if id(done.record) not in written:  # filtered out, or failed and tolerated: done with it
                    done.acked = True
                    if self._commit_record_overridden:
                        self._commit_record(done.record, None)
        self.meter.write_total += len(topics) - out.dead_letters
        self.meter.dlq_requests += out.dead_letters
        if topics and self.creator is not None:
            self.creator.ensure(self.pipeline.written_topics)  # before the producer writes to them
        keys, values, partitions = rows["key"], rows["value"], rows["partition"]
        headers, timestamps = rows["headers"], rows["timestamp"]
        produce = self.producer.produce
        owners = out.owners
        i = 0
        entry: _Submitted | None = None
        try:
            for i, owner in enumerate(owners):
                if owners is out.processed:  # no record left out (no transforms, no failure)
                    entry = submitted[i]
                else:
                    # A dead letter of the record that failed beyond the error policy is written,
                    # but that record is not processed: its offset must never be committed (the
                    # task still waits for its acknowledgement before it stops).
                    entry = entries.get(id(owner)) or self.submitted.submit(owner, offsets=False)
                partition, timestamp, record_headers = partitions[i], timestamps[i], headers[i]
                if partition is None and (timestamp is None or timestamp <= 0) and not record_headers:
                    try:
                        produce(topics[i], values[i], keys[i], on_delivery=entry)
                        continue
                    except BufferError:
                        pass  # the slow path below waits for room
                kwargs: dict[str, Any] = {}
                if partition is not None:
                    kwargs["partition"] = partition
                if timestamp is not None and timestamp > 0:
                    kwargs["timestamp"] = timestamp
                if record_headers:
                    kwargs["headers"] = [(h["key"], h["value"]) for h in record_headers]
                self._produce(topics[i], keys[i], values[i], kwargs, entry)
        except BaseException:
            # owners[i] on were never handed to the producer: not waited for, never committed
            if owners is out.processed:
                unsent = submitted[i:]
            else:
                later = (entries.get(id(owner)) for owner in owners[i + 1 :])
                unsent = [e for e in (entry, *later) if e is not None]
            self.submitted.withdraw(unsent)
            raise
        if out.error is not None:
            raise TaskFailure(format_trace(out.error))

    def _check_destinations(self, topics: set[str]) -> None:
        """Called with the topics a batch writes to that the task has not written to before,
        before anything of the batch is produced; raising ``TaskFailure`` fails the task.
        Any topic will do here."""

    def _produce(self, topic: str, key: Any, value: Any, kwargs: dict[str, Any], entry: _Submitted) -> None:
        while True:
            try:
                self.producer.produce(topic, value, key, on_delivery=entry, **kwargs)
                return
            except BufferError:  # the producer's queue is full: wait for acknowledgements
                self.producer.poll(0.05)
                if self.reports:
                    self._serve_reports()
                self._check_failure()
                if self.control.stopping:
                    # not produced: not acknowledged, so its offset is never committed
                    raise Stopping("stopped while the producer's queue was full") from None

    def _serve_reports(self) -> None:
        """Act on the delivery reports queued for the task's thread."""
        reports = self.reports
        while reports:
            entry, err, message = reports.popleft()
            self._delivered(entry, err, message)

    def _delivered(self, entry: _Submitted, err: Any, message: Any) -> None:
        """A delivery report that needs more than marking the record acknowledged."""
        if self.released:
            return
        record = entry.record
        if err is not None:
            if not self.spec.errors.tolerate_all:
                if self.failure is None:
                    self.failure = (
                        f"Unrecoverable exception from producer send callback: {err} "
                        f"(topic {message.topic() if message is not None else record.topic})"
                    )
                return
            log.warning(
                "Task %s-%s: could not write a record to %s (%s); skipping it, as errors.tolerance=all",
                self.spec.connector,
                self.spec.task,
                record.topic,
                err,
            )
            entry.acked = True
            if self._commit_record_overridden:
                self._commit_record(record, None)
            return
        entry.acked = True
        topic = message.topic()
        if topic in self.unconfirmed_topics:
            self.unconfirmed_topics.discard(topic)
            self.topics_seen.add(topic)
            if topic != self.spec.errors.dead_letter_topic:
                self.new_topics.append(topic)
            self.plain_acks = not self._commit_record_overridden and not self.unconfirmed_topics
        if self._commit_record_overridden:
            _, stamp = message.timestamp()
            metadata = RecordMetadata(topic, message.partition(), message.offset(), stamp if stamp > 0 else None)
            self._commit_record(record, metadata)

    def _commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        try:
            self.task.commit_record(record, metadata)
        except Exception:  # as in Kafka: logged, the task goes on
            log.exception("Task %s-%s: commit_record() raised", self.spec.connector, self.spec.task)

    def _settle(self) -> int:
        """Act on the queued delivery reports and take the offsets of what Kafka
        acknowledged into those to commit; returns how many of the task's records are
        still outstanding."""
        if self.reports:
            self._serve_reports()
        self.uncommitted.update(self.submitted.committable())
        return self.submitted.outstanding

    def _await_acks(self, timeout_s: float) -> int:
        """Wait up to ``timeout_s`` for Kafka to acknowledge (or fail) every record the task
        produced — only the task's: a shared producer's ``flush()`` would wait for its
        siblings' too. Returns how many are still outstanding."""
        deadline = time.monotonic() + timeout_s
        self.producer.poll(0)
        while True:
            outstanding = self._settle()
            remaining = deadline - time.monotonic()
            if not outstanding or remaining <= 0 or self.producer_broken:
                return outstanding
            self.producer.poll(min(remaining, _ACK_WAIT_SLICE_S))

    def _producer_error(self, err: Any) -> None:
        if ends_task(err):
            self.producer_broken = True
            self.failure = self.failure or f"The task's Kafka producer failed: {err}"
        else:
            log.debug("Task %s-%s producer: %s", self.spec.connector, self.spec.task, err)

    def _commit_offsets(self) -> None:
        """Send the offsets of acknowledged records to the worker; once stored, ``commit()``."""
        self.meter.active(self._settle())  # also while no record is polled (about every second)
        if not self.uncommitted:
            return
        offsets, self.uncommitted = self.uncommitted, {}
        self.seq += 1
        commit_started = time.monotonic()
        self.control.send(SourceOffsets(self.seq, list(offsets.values())))
        reply = self.control.committed()
        if reply.fenced:
            return  # another worker owns the task now: this instance is about to stop
        if reply.error is not None:
            self.meter.commit_failures += 1
            log.warning("Task %s-%s: offset commit failed: %s", self.spec.connector, self.spec.task, reply.error)
            offsets.update(self.uncommitted)
            self.uncommitted = offsets  # retried with the next commit
            return
        self.stored.update(offsets)
        self.meter.committed((time.monotonic() - commit_started) * 1000.0)
        self._task_commit()

    def _task_commit(self) -> None:
        """The task's ``commit()``, once its offsets are stored."""
        try:
            self.task.commit()
        except Exception:  # as in Kafka: logged, the task goes on
            log.exception("Task %s-%s: commit() raised", self.spec.connector, self.spec.task)

    def _pause(self) -> None:
        """Kafka does not poll a paused task: deliver what was produced, commit, and wait."""
        self._await_acks(FINAL_FLUSH_S)
        self._check_failure()
        self._commit_offsets()
        self.control.send(PausedAck())
        while True:
            seen = self.control.generation  # before the flags: a Resume in between ends the wait
            if not self.control.paused or self.control.stopping:
                return
            self.producer.poll(0)
            if self.reports:
                self._serve_reports()
            self.control.wait_for_change(1.0, since=seen)

    def _split_read(self) -> None:
        """The task asked to split a read: what came before it is delivered and committed,
        then the worker reads the parts as a Spark job of their own (and commits their
        offsets) before the task polls again."""
        parts, self.split_parts = self.split_parts, []
        self._await_acks(FINAL_FLUSH_S)
        self._check_failure()
        self._commit_offsets()
        self.control.send(SplitReadRequest(parts))
        done = self.control.split_read_done()
        if done.failure is not None:
            raise TaskFailure(done.failure)

    def _finish(self, started: bool, failure: str | None) -> str | None:
        """Deliver and commit what was acknowledged, then stop the instance."""
        worker_gone = self.control.worker_gone.is_set()
        try:
            wait_s = 0.0 if self.producer_broken else 5.0 if worker_gone else FINAL_FLUSH_S
            remaining = self._await_acks(wait_s)
            if remaining:
                log.warning(
                    "Task %s-%s: %d records were not acknowledged by Kafka before the task stopped; "
                    "their offsets are not committed",
                    self.spec.connector,
                    self.spec.task,
                    remaining,
                )
            if not worker_gone:
                self._commit_offsets()
        except WorkerGone:
            pass
        except BaseException as exc:  # noqa: BLE001 - the first failure is the one reported
            failure = failure or format_trace(exc)
        self._stop_instance()
        self.pipeline.close()
        return failure if failure is not None else self.failure

    def _release(self) -> None:
        self.released = True  # reports that still come are not the task's to act on
        self.lease.release()  # closes the producer if no other task uses it
        if self.creator is not None:
            self.creator.close()
