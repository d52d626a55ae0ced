"""A sink task's life inside its long-lived Spark task (Kafka's ``WorkerSinkTask``).

One thread — the Spark task's — reads the task's partitions with a librdkafka consumer
(``assign``, from the offsets the worker gave: the connector's consumer group, never a
Spark checkpoint), converts and transforms each batch of records, and calls ``put``.
Every commit interval (or when the task asks) it calls ``pre_commit`` with the
positions of what was put and sends the offsets it returned to the worker, which
commits them to the group. What the task asks through its context — pause or resume
partitions, rewind, a ``put`` timeout — is applied between calls.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Mapping
from typing import Any

from sluice.api.errors import RetriableError
from sluice.api.records import SinkBatch, SinkRecord, TopicPartition
from sluice.api.sink import ErrantRecordReporter, SinkTask, SinkTaskContext
from sluice.kafka.clients import KafkaClients, close_producer
from sluice.kafka.errors import ends_task
from sluice.kafka.settings import consumer_settings, producer_settings
from sluice.taskhost.consumed import ConsumedBatch, last_offsets
from sluice.taskhost.control import TaskControl, WorkerGone
from sluice.taskhost.loop import COMMIT_INTERVAL_MAX_MS, FINAL_FLUSH_S, TaskFailure, TaskLoop, format_trace
from sluice.taskhost.pipeline import DeadLetter
from sluice.taskhost.plugins import ensure_plugin_paths, load_class, make_pipeline
from sluice.taskhost.protocol import PausedAck, RunSinkTask, SinkOffsets, TopicPartitionKey, TopicsSeen
from sluice.taskhost.tolerance import Stage

log = logging.getLogger(__name__)

__all__ = ["DeadLetterReporter", "SinkContext", "SinkLoop"]

# The longest an idle task's consumer waits for records at a time: how long the worker's
# stop or pause may wait for an idle task to hear it.
IDLE_POLL_MAX_S = 0.5
# Most records one consume() call may hand over (librdkafka's limit).
CONSUME_BATCH_MAX = 1_000_000


class SinkLoop(TaskLoop):
    """Runs one sink task instance until it is stopped or fails."""

    def __init__(self, launch: RunSinkTask, control: TaskControl, clients: KafkaClients) -> None:
        spec = launch.task
        ensure_plugin_paths(spec.task_config)
        self.launch = launch
        self.spec = spec
        self.control = control
        self.clients = clients
        self.pipeline = make_pipeline(spec)
        self.meter = control.meter
        self.pipeline.operator.meter = self.meter
        self.task_class = spec.task_class
        # what DeadLetterReporter reads: the columns of the batch being put and of the one
        # before (a sink writing asynchronously reports a record one put later), dead letters so far
        self.batch_columns: Mapping[str, list[Any]] = {}
        self.previous_batch_columns: Mapping[str, list[Any]] = {}
        self.dead: list[DeadLetter] = []
        self.positions: dict[TopicPartitionKey, int] = {}
        self.committed: dict[TopicPartitionKey, int] = dict(launch.assignment)
        self.context = SinkContext(spec.task_config, sorted(launch.assignment))
        self.context.reporter = DeadLetterReporter(self)
        self.task: SinkTask = load_class(spec.task_class)()
        self.topics_seen: set[str] = set()
        self.seq = 0
        self.interval_s = min(launch.offset_flush_interval_ms, COMMIT_INTERVAL_MAX_MS) / 1000.0
        self._task_paused: set[TopicPartitionKey] = set()
        self._dead_letter_producer: Any = None
        self._dead_letter_errors: list[str] = []
        settings = consumer_settings(spec.connector, spec.task, launch.consumer_config)
        self._client_failure: str | None = None  # set by the consumer's error callback
        settings["error_cb"] = self._consumer_error
        self.consumer = clients.consumer(settings)

    # -- the task thread ---------------------------------------------------------------

    def _after_start(self) -> None:
        self._assign_added(dict(self.launch.assignment))  # open() with the initial partitions

    def _loop(self) -> None:
        control = self.control
        poll_s = self.launch.poll_interval_ms / 1000.0
        max_records = min(self.launch.max_records, CONSUME_BATCH_MAX)
        now = time.monotonic()
        next_commit = now + self.interval_s
        # Kafka calls put() after every consumer poll, also an empty one; its poll waits at
        # most until the next commit or the task's context.timeout. An idle task here polls
        # more often (to hear the worker sooner) and calls put([]) when such a wait is over.
        next_idle_put = now
        # Each empty poll waits twice as long as the one before, up to IDLE_POLL_MAX_S:
        # an idle task wakes twice a second, not ten times (hundreds share a host).
        wait_s = poll_s
        while not control.stopping:
            seen = control.generation  # before the flags and the assignment: nothing sent after is missed
            if control.paused:
                self._pause()
                continue
            self._apply_new_assignment()
            self._apply_context()  # what the task asked in its last call, before the next read
            messages = self.consumer.consume(max_records, wait_s) if self.positions else []
            wait_s = poll_s if messages else min(2 * wait_s, max(poll_s, IDLE_POLL_MAX_S))
            if self._client_failure is not None:
                raise TaskFailure(self._client_failure)
            if not self.positions:
                control.wait_for_change(wait_s, since=seen)  # a change of the worker's ends it at once
            now = time.monotonic()
            if messages:
                self._deliver(messages)
                next_idle_put = now + self._idle_wait_s()
            elif now >= next_idle_put:
                self._put(SinkBatch.of([]))  # a new one each time: a task may keep it
                next_idle_put = now + self._idle_wait_s()
            now = time.monotonic()
            if now >= next_commit or self.context.commit_requested:
                self._commit()
                next_commit = now + self.interval_s

    def _consumer_error(self, error: Any) -> None:
        if ends_task(error):
            self._client_failure = self._client_failure or f"The task's Kafka consumer failed: {error}"
        else:
            log.debug("Task %s-%s consumer: %s", self.spec.connector, self.spec.task, error)

    def _idle_wait_s(self) -> float:
        timeout_ms = self.context.timeout_ms
        if timeout_ms > 0:
            self.context.timeout_ms = 0  # as in Kafka, a timeout serves one wait only
            return timeout_ms / 1000.0
        return self.interval_s

    def _readable(self, messages: list[Any]) -> list[Any]:
        """The messages that carry records: a consumer error among them fails the task or
        is logged and left out."""
        errors = [m for m in messages if m.error() is not None]
        if not errors:
            return messages
        for message in errors:
            error = message.error()
            if ends_task(error):
                raise TaskFailure(f"The task's Kafka consumer failed: {error}")
            log.warning("Task %s-%s consumer: %s", self.spec.connector, self.spec.task, error)
        return [m for m in messages if m.error() is None]

    def _deliver(self, messages: list[Any]) -> None:
        messages = self._readable(messages)
        if not messages:
            return
        last = last_offsets(messages, self.positions)
        new_topics = {topic for topic, _ in last} - self.topics_seen
        if new_topics:  # the task's topics, once a record of theirs is read (before put)
            self.topics_seen |= new_topics
            self.control.send(TopicsSeen(sorted(new_topics)))
        topics = {topic for topic, _ in self.positions}
        cols = ConsumedBatch(messages, next(iter(topics)) if len(topics) == 1 else None)
        self.previous_batch_columns = self.batch_columns
        self.batch_columns = cols
        self.meter.read_total += cols.rows
        try:
            batch = self.pipeline.sink_batch(cols, self.dead)
        except BaseException:
            self._send_dead_letters()  # the failing record's among them, before the task fails
            raise
        self.meter.send_total += len(batch)
        self._put(batch)
        for tp, offset in last.items():  # every record read counts: filtered, dead-lettered or put
            self.positions[tp] = offset + 1
        self._count_active()

    def _put(self, batch: SinkBatch) -> None:
        started = time.monotonic()
        try:
            put_with_retries(self, batch)
            if len(batch):
                self.meter.put(len(batch), (time.monotonic() - started) * 1000.0)
        except BaseException:
            self._send_dead_letters()  # reported before the task fails, as Kafka Connect does
            raise
        self._send_dead_letters()

    def _apply_context(self) -> None:
        """What the task asked through its context: pause or resume partitions, rewind."""
        context = self.context
        wanted = {(tp.topic, tp.partition) for tp in context.paused} & set(self.positions)
        if wanted != self._task_paused:
            from confluent_kafka import TopicPartition as KafkaPartition

            pause = sorted(wanted - self._task_paused)
            resume = sorted(self._task_paused - wanted)
            if pause:
                self.consumer.pause([KafkaPartition(t, p) for t, p in pause])
            if resume and not self.control.paused:
                self.consumer.resume([KafkaPartition(t, p) for t, p in resume])
            self._task_paused = wanted
        if context.rewinds:
            rewinds = {(tp.topic, tp.partition): offset for tp, offset in context.rewinds.items()}
            context.rewinds.clear()
            for tp, offset in sorted(rewinds.items()):
                if tp in self.positions:
                    self._seek(tp, offset)

    def _seek(self, tp: TopicPartitionKey, offset: int) -> None:
        from confluent_kafka import KafkaException
        from confluent_kafka import TopicPartition as KafkaPartition

        partition = KafkaPartition(tp[0], tp[1], offset)
        try:
            self.consumer.seek(partition)
        except KafkaException:  # not fetching yet: assign it again at that offset
            self.consumer.incremental_unassign([KafkaPartition(tp[0], tp[1])])
            self.consumer.incremental_assign([partition])
        self.positions[tp] = offset

    def _apply_new_assignment(self) -> None:
        latest = None
        while not self.control.assignments.empty():
            latest = self.control.assignments.get_nowait()
        if latest is None:
            return
        wanted = latest.assignment
        revoked = sorted(set(self.positions) - set(wanted))
        added = {tp: offset for tp, offset in wanted.items() if tp not in self.positions}
        if revoked:
            from confluent_kafka import TopicPartition as KafkaPartition

            self._commit()  # Kafka commits a revoked partition's offsets before closing it
            self.task.close([TopicPartition(t, p) for t, p in revoked])
            self.consumer.incremental_unassign([KafkaPartition(t, p) for t, p in revoked])
            for tp in revoked:
                self.positions.pop(tp, None)
                self._task_paused.discard(tp)
            self._assignment_changed()
        if added:
            self._assign_added(added)

    def _assign_added(self, added: dict[TopicPartitionKey, int]) -> None:
        from confluent_kafka import TopicPartition as KafkaPartition

        if not added:
            return
        self.consumer.incremental_assign([KafkaPartition(t, p, offset) for (t, p), offset in sorted(added.items())])
        self.positions.update(added)
        self.committed.update(added)
        self._assignment_changed()
        self.task.open([TopicPartition(t, p) for t, p in sorted(added)])

    def _assignment_changed(self) -> None:
        """What follows the partitions: the task's context, and (as Kafka records it on each
        assign and revoke) the partition-count gauge."""
        self.context.set_assignment(sorted(self.positions))
        self.meter.partition_count = len(self.positions)

    def _pause(self) -> None:
        """A paused connector's task reads and puts nothing until resumed."""
        from confluent_kafka import TopicPartition as KafkaPartition

        partitions = [KafkaPartition(t, p) for t, p in sorted(self.positions)]
        if partitions:
            self.consumer.pause(partitions)
        self._commit()
        self.control.send(PausedAck())
        while True:
            seen = self.control.generation  # before the flags: a Resume in between ends the wait
            if not self.control.paused or self.control.stopping:
                break
            self.control.wait_for_change(1.0, since=seen)
        resume = [KafkaPartition(t, p) for t, p in sorted(set(self.positions) - self._task_paused)]
        if resume and not self.control.stopping:
            self.consumer.resume(resume)

    def _commit(self) -> None:
        """``pre_commit`` with what was put, and the offsets it returned to the worker."""
        self.context.commit_requested = False
        self._count_active()  # also while nothing is read (about every second)
        if not self.positions:
            return
        self._measure_lag()
        self._send_dead_letters()
        commit_started = time.monotonic()  # Kafka times a sink's commit from before pre_commit
        returned = self.task.pre_commit({TopicPartition(t, p): o for (t, p), o in self.positions.items()}) or {}
        offsets = {
            (tp.topic, tp.partition): offset
            for tp, offset in returned.items()
            if (tp.topic, tp.partition) in self.positions and self.committed.get((tp.topic, tp.partition)) != offset
        }
        if not offsets:
            return
        self.seq += 1
        self.meter.commit_seq_no = self.seq
        self.control.send(SinkOffsets(self.seq, offsets))
        reply = self.control.committed()
        if reply.error is not None:
            self.meter.commit_failures += 1
            raise TaskFailure(reply.error)
        if not reply.fenced:
            self.meter.committed((time.monotonic() - commit_started) * 1000.0)
            self.committed.update(offsets)
            self._count_active()

    def _count_active(self) -> None:
        """sink-record-active-count: records read and not yet committed, over the task's
        partitions (once per batch or commit, never per record)."""
        committed = self.committed
        active = 0
        for tp, position in self.positions.items():
            done = committed.get(tp)
            if done is not None and position > done:
                active += position - done
        self.meter.active(active)

    def _measure_lag(self) -> None:
        """The most records any of the task's partitions has not read yet: its high watermark
        as the consumer last fetched it, less the task's position (no request to Kafka)."""
        from confluent_kafka import TopicPartition as KafkaPartition

        lag = 0
        for (topic, partition), position in self.positions.items():
            try:
                _, high = self.consumer.get_watermark_offsets(KafkaPartition(topic, partition), cached=True)
            except Exception:  # noqa: BLE001 - not fetched yet: no lag known
                continue
            if high is not None and high >= 0:
                lag = max(lag, high - position)
        self.meter.records_lag = lag

    def _send_dead_letters(self) -> None:
        """Write the batch's dead letters and wait until Kafka acknowledged them: before the
        task fails or the offsets past them are committed, so none is lost."""
        dead, self.dead = self.dead, []
        topic = self.spec.errors.dead_letter_topic
        if not dead or not topic:
            return
        if self._dead_letter_producer is None:
            settings = producer_settings(self.spec.connector, self.spec.task, self.launch.producer_config)
            settings["client.id"] = f"connector-dlq-producer-{self.spec.connector}-{self.spec.task}"
            self._dead_letter_producer = self.clients.producer(settings)
        producer = self._dead_letter_producer
        errors = self._dead_letter_errors

        def delivered(err: Any, _message: Any) -> None:
            if err is not None:
                errors.append(str(err))

        self.meter.dlq_requests += len(dead)
        for letter in dead:
            kwargs: dict[str, Any] = {"on_delivery": delivered}
            if letter.headers:
                kwargs["headers"] = list(letter.headers)
            if letter.timestamp is not None and letter.timestamp > 0:
                kwargs["timestamp"] = letter.timestamp
            while True:
                try:
                    producer.produce(topic, letter.value, letter.key, **kwargs)
                    break
                except BufferError:
                    producer.poll(0.05)
        remaining = producer.flush(FINAL_FLUSH_S)
        if remaining or errors:
            self.meter.dlq_failures += remaining or len(errors)
            raise TaskFailure(
                f"Writing to the dead letter queue {topic} failed: "
                + (errors[0] if errors else f"{remaining} records not acknowledged")
            )

    def _finish(self, started: bool, failure: str | None) -> str | None:
        """The final commit (a clean stop), then the instance's close(partitions) (once it
        started) and stop()."""
        if started and failure is None and not self.control.worker_gone.is_set():
            try:
                self._commit()
            except WorkerGone:
                pass
            except TaskFailure as exc:
                failure = exc.trace
            except BaseException as exc:  # noqa: BLE001 - reported as the task's failure
                failure = format_trace(exc)
        if started:
            try:
                self.task.close([TopicPartition(t, p) for t, p in sorted(self.positions)])
            except BaseException as exc:  # logged, as Kafka does
                log.error("Task %s-%s threw an error while closing", self.spec.connector, self.spec.task, exc_info=exc)
        self._stop_instance()
        self.pipeline.close()
        with contextlib.suppress(Exception):
            self.consumer.close()
        if self._dead_letter_producer is not None:
            self._dead_letter_producer.flush(5.0)
        return failure

    def _release(self) -> None:
        if self._dead_letter_producer is not None:
            # what it still holds failed the task already (_send_dead_letters waits for all)
            close_producer(self._dead_letter_producer)


# --------------------------------------------------------------------------- the task's context


class SinkContext(SinkTaskContext):
    """A sink task's context: what the task asked (rewinds, pauses, a timeout, a commit)
    is kept here for the loop that runs the task to act on."""

    def __init__(self, config: dict[str, str], assignment: list[tuple[str, int]]) -> None:
        self._config = config
        self._assignment = {TopicPartition(t, p) for t, p in assignment}
        self.rewinds: dict[TopicPartition, int] = {}
        self.reporter: ErrantRecordReporter | None = None
        self.timeout_ms = 0
        self.paused: set[TopicPartition] = set()
        self.commit_requested = False

    def configs(self) -> dict[str, str]:
        return dict(self._config)

    def offset(self, offsets: dict[TopicPartition, int] | TopicPartition, offset: int | None = None) -> None:
        if isinstance(offsets, TopicPartition):
            assert offset is not None
            self.rewinds[offsets] = offset
        else:
            self.rewinds.update(offsets)

    def timeout(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms

    def assignment(self) -> set[TopicPartition]:
        return set(self._assignment)

    def set_assignment(self, assignment: list[tuple[str, int]]) -> None:
        """The partitions changed (the connector's topics did): what the task sees from now on."""
        self._assignment = {TopicPartition(t, p) for t, p in assignment}
        self.paused &= self._assignment

    def pause(self, *partitions: TopicPartition) -> None:
        self.paused.update(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        self.paused.difference_update(partitions)

    def request_commit(self) -> None:
        self.commit_requested = True

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        return self.reporter


class DeadLetterReporter(ErrantRecordReporter):
    """Reports a record the task could not handle: dead-lettered (raw, as consumed) and
    tolerated, or, with ``errors.tolerance=none``, the task fails (``put`` raises). The record
    is looked up among the raw rows of the current put and of the one before."""

    def __init__(self, host: SinkLoop) -> None:
        self.host = host
        # the rows of the current and the previous put by (topic, partition, offset), built
        # on a first report
        self._rows: list[tuple[Mapping[str, list[Any]], dict[tuple[str, int, int], int]]] = []

    def report(self, record: SinkRecord, error: BaseException) -> None:
        host = self.host
        where = (record.original_topic, record.original_kafka_partition, record.original_kafka_offset)
        found = None
        for cols in (host.batch_columns, host.previous_batch_columns):
            row = self._rows_of(cols).get(where)
            if row is not None:
                found = (cols, row)
                break
        pipeline = host.pipeline

        def dead_letter(step: Any) -> None:
            if found is not None:
                pipeline.dead_letter_row(found[0], found[1], step.error, host.dead)

        pipeline.operator.execute(Stage.TASK_PUT, host.task_class, lambda: (_ for _ in ()).throw(error), dead_letter)

    def _rows_of(self, cols: Mapping[str, list[Any]]) -> dict[tuple[str, int, int], int]:
        for known, rows in self._rows:
            if known is cols:
                return rows
        rows = {
            where: i
            for i, where in enumerate(
                zip(cols.get("topic") or [], cols.get("partition") or [], cols.get("offset") or [], strict=False)
            )
        }
        live = (self.host.batch_columns, self.host.previous_batch_columns)
        self._rows = [(known, r) for known, r in self._rows if any(known is c for c in live)] + [(cols, rows)]
        return rows


RETRIABLE_PUT_ATTEMPTS = 10


def put_with_retries(host: SinkLoop, batch: SinkBatch) -> None:
    for attempt in range(RETRIABLE_PUT_ATTEMPTS):
        try:
            host.task.put_batch(batch)
            return
        except RetriableError:
            if attempt == RETRIABLE_PUT_ATTEMPTS - 1:
                raise
            time.sleep(max(host.context.timeout_ms, 100) / 1000.0)
