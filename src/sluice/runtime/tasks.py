"""Worker tasks: the driver-side state machine of one Connect task.

Each task owns one driver thread that loops over micro-batches — each one Spark
job — and commits what the job reports (``WorkerTask`` in Kafka). The thread
honours the target state (a paused task runs no batches), reports RUNNING /
PAUSED / FAILED / UNASSIGNED, and on failure records the task's Python traceback
as the status ``trace``. A failing task never affects its siblings: each has
its own thread and its own Spark jobs.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from sluice.api.source import partition_key
from sluice.runtime.herder.base import State, TargetState
from sluice.spark.executor import TaskSpec
from sluice.spark.runner import SparkSinkTaskRunner, SparkSourceTaskRunner
from sluice.storage.base import OffsetBackingStore
from sluice.storage.kafka_log import LOCAL_ALL_BROKERS_DOWN, LOCAL_TIMED_OUT, LOCAL_TRANSPORT
from sluice.storage.offset_codec import connector_offsets, encode_offset_key, encode_offset_value

log = logging.getLogger(__name__)

__all__ = ["WorkerSinkTask", "WorkerSourceTask", "WorkerTask", "new_incarnation"]

StatusListener = Callable[[State, str | None], None]
IDLE_SOURCE_MAX_WAIT_MS = 3000
IDLE_SOURCE_MAX_BACKOFF_S = 4.0


def new_incarnation() -> str:
    return uuid.uuid4().hex


class WorkerTask:
    """Base: thread, target state, status reporting."""

    kind = "task"

    def __init__(
        self,
        spec: TaskSpec,
        target_state: TargetState,
        spark_provider: Callable[[], Any],
        report: StatusListener,
        settings: dict[str, Any],
    ) -> None:
        self.spec = spec
        self.id = (spec.connector, spec.task)
        self._target = target_state
        self._spark_provider = spark_provider
        self._report = report
        self.settings = settings
        self._wakeup = threading.Condition()
        self._stopping = threading.Event()
        self._cancelled = threading.Event()
        self.state: State | None = None
        self.trace: str | None = None
        self._thread = threading.Thread(target=self._run, name=f"sluice-task-{spec.connector}-{spec.task}", daemon=True)

    # -- control (any thread) -----------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def transition_to(self, target: TargetState) -> None:
        with self._wakeup:
            self._target = target
            self._wakeup.notify_all()

    def stop(self) -> None:
        self._stopping.set()
        with self._wakeup:
            self._wakeup.notify_all()

    def cancel(self) -> None:
        """Abandon a task that did not stop in time (Kafka's ``WorkerTask.cancel``): it
        reports no status and commits no offsets any more, since its work may already run
        elsewhere. Its thread ends when the call under way returns."""
        self._cancelled.set()
        self.stop()

    def join(self, timeout: float | None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    # -- thread ---------------------------------------------------------------------

    def _set_state(self, state: State, trace: str | None = None) -> None:
        if self.state is state and trace is None:
            return
        self.state, self.trace = state, trace
        if self._cancelled.is_set():
            log.debug("Task %s-%s was abandoned: not reporting %s", *self.id, state.value)
            return
        self._report(state, trace)

    def _wait(self, seconds: float) -> None:
        with self._wakeup:
            if not self._stopping.is_set():
                self._wakeup.wait(seconds)

    def _wait_while_paused(self) -> bool:
        """Block while paused; False when the task is stopping."""
        with self._wakeup:
            while self._target is not TargetState.STARTED and not self._stopping.is_set():
                if self.state is not State.PAUSED:
                    self._wakeup.release()
                    try:
                        self._quiesce()
                        self._set_state(State.PAUSED)
                    finally:
                        self._wakeup.acquire()
                self._wakeup.wait(1.0)
        return not self._stopping.is_set()

    def _run(self) -> None:
        try:
            if self._target is TargetState.PAUSED:
                self._set_state(State.PAUSED)
            spark = self._spark_provider()
            if self._stopping.is_set():
                return
            self._prepare(spark)
            while self._wait_while_paused():
                if self.state is not State.RUNNING:
                    self._set_state(State.RUNNING)
                self._batch()
        except _TaskFailed as failed:
            self._set_state(State.FAILED, failed.trace)
        except BaseException as exc:  # noqa: BLE001 - any error fails only this task
            log.error("Task %s-%s failed", *self.id, exc_info=True)
            self._set_state(State.FAILED, "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
        finally:
            try:
                self._close()
            except Exception:
                log.warning("Error closing task %s-%s", *self.id, exc_info=True)
        if self._stopping.is_set() and self.state is not State.FAILED:
            self._set_state(State.UNASSIGNED)

    def _prepare(self, spark: Any) -> None:
        raise NotImplementedError

    def _quiesce(self) -> None:
        """Before PAUSED is reported, with no batch under way: make sure the task does no
        more work until it is resumed."""

    def _may_commit(self) -> bool:
        """Zombie fencing: a task whose work was given to another worker, or that was
        abandoned after it did not stop in time, commits nothing."""
        if self._cancelled.is_set():
            return False
        check = self.settings.get("may_commit")
        return True if check is None else bool(check())

    def _batch(self) -> None:
        raise NotImplementedError

    def _close(self) -> None:
        pass


class _TaskFailed(Exception):
    def __init__(self, trace: str) -> None:
        super().__init__("task failed")
        self.trace = trace


class WorkerSourceTask(WorkerTask):
    """Polls a source task on Spark and commits its offsets after Kafka acknowledged them."""

    kind = "source"

    def __init__(
        self,
        *args: Any,
        offset_store: OffsetBackingStore,
        kafka_options: dict[str, str],
        dead_letter_queue: Any = None,
        **kw: Any,
    ) -> None:
        super().__init__(*args, **kw)
        self.dead_letter_queue = dead_letter_queue  # written by the executors, created here
        self.offset_store = offset_store
        self.kafka_options = kafka_options
        self.runner: SparkSourceTaskRunner | None = None
        self.seq = 0
        self._wait_ms = self.settings["source_max_wait_ms"]
        self._idle_batches = 0

    def _prepare(self, spark: Any) -> None:
        self.runner = SparkSourceTaskRunner(spark, self.spec, self.kafka_options)
        if self.dead_letter_queue is not None:
            _with_kafka_retries(
                self.dead_letter_queue.ensure_topic, "Creating the dead letter queue topic", self._stopping
            )
        self.committed = {
            partition_key(p): (p, o) for p, o in connector_offsets(self.offset_store, self.spec.connector)
        }

    def _batch(self) -> None:
        assert self.runner is not None
        started = time.monotonic()
        result = self.runner.run_batch(
            self.seq,
            list(self.committed.values()),
            self.settings["source_max_records"],
            self._wait_ms,
        )
        self._commit(result)
        log.debug(
            "Source task %s-%s batch %d: %d records in %.3f s (fresh instance: %s)",
            *self.id,
            self.seq,
            result.count,
            time.monotonic() - started,
            result.fresh,
        )
        self.seq += 1
        if result.failure:
            raise _TaskFailed(result.failure)
        if result.split_parts:
            split_started = time.monotonic()
            # under the requesting batch's number: the next batch must find the task's
            # instance as the one that served the batch before it
            split = self.runner.run_split_read(self.seq - 1, result.split_parts)
            self._commit(split)
            log.info(
                "Source task %s-%s read %d records in %d Spark partitions in %.1f s",
                *self.id,
                split.count,
                len(result.split_parts),
                time.monotonic() - split_started,
            )
            if split.failure:
                raise _TaskFailed(split.failure)
            result.count += split.count
        # An idle source long-polls: each empty batch waits longer inside the executor
        # (no CPU, the poll thread keeps polling) so an idle task runs few Spark jobs,
        # while a record that arrives during the wait ends the batch at once.
        # Long-polling holds a Spark task slot, so it is used only while the worker runs
        # fewer tasks than Spark has slots; otherwise an idle source waits on the driver.
        # Without a spare slot the task waits on the driver instead, longer the longer it
        # has been idle (each empty batch is a Spark job), up to IDLE_SOURCE_MAX_BACKOFF_S.
        base = self.settings["source_max_wait_ms"]
        if result.count > 0:
            self._wait_ms = base
            self._idle_batches = 0
        elif self.settings["slots_to_spare"]():
            self._wait_ms = min(IDLE_SOURCE_MAX_WAIT_MS, self._wait_ms * 2)
        else:
            self._wait_ms = base
            self._idle_batches += 1
            self._wait(min(IDLE_SOURCE_MAX_BACKOFF_S, base / 1000.0 * 2 ** (self._idle_batches - 1)))

    PAUSE_POLL_WAIT_S = 10.0

    def _quiesce(self) -> None:
        # The instance's poll thread runs ahead of the batches; Kafka does not poll a
        # paused task, so stop it, after the poll() under way, before reporting PAUSED.
        if self.runner is None or self.seq == 0:
            return  # no instance started yet
        try:
            paused = self.runner.pause(self.PAUSE_POLL_WAIT_S)
        except Exception as exc:  # noqa: BLE001 - the next batch restarts the instance if it is gone
            log.warning("Task %s-%s: could not pause the polling of its instance: %s", *self.id, exc)
            return
        if not paused:
            log.info(
                "Task %s-%s: could not confirm within %.0f s that its instance stopped polling (a poll() "
                "still running, or the instance is not where its batches ran)",
                *self.id,
                self.PAUSE_POLL_WAIT_S,
            )

    def _commit(self, result: Any) -> None:
        """Store the offsets of a batch Kafka acknowledged (unless the task was moved)."""
        if result.offsets and not self._may_commit():
            log.warning(
                "Task %s-%s no longer owns its work here (a rebalance moved it): not committing "
                "the offsets of batch %d; its new owner resumes from the last committed ones",
                *self.id,
                self.seq,
            )
        elif result.offsets:
            updates = {}
            for partition, offset in result.offsets:
                updates[encode_offset_key(self.spec.connector, partition)] = encode_offset_value(offset)
                self.committed[partition_key(partition)] = (partition, offset)
            self.offset_store.set(updates)
        for topic in result.topics:
            self.settings["record_topic"](topic)

    def _close(self) -> None:
        if self.runner is not None:
            self.runner.close()


RETRIABLE_KAFKA_ERRORS = {
    KafkaError.NOT_COORDINATOR,
    KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
    KafkaError.COORDINATOR_NOT_AVAILABLE,
    KafkaError.REQUEST_TIMED_OUT,
    KafkaError.LEADER_NOT_AVAILABLE,
    KafkaError.NOT_LEADER_FOR_PARTITION,
    KafkaError.UNKNOWN_TOPIC_OR_PART,
    LOCAL_TIMED_OUT,
    LOCAL_TRANSPORT,
    LOCAL_ALL_BROKERS_DOWN,
}


#: How long transient Kafka errors are retried quietly (DEBUG) before the worker says, once, that they persist.
KAFKA_RETRY_QUIET_S = 10.0


def _with_kafka_retries(call: Callable[[], Any], what: str, stopping: threading.Event, timeout_s: float = 120.0) -> Any:
    """Run a Kafka client call, retrying transient errors (a coordinator still loading on a
    fresh broker, a leader election) with backoff until ``timeout_s``. Retries are logged at
    DEBUG; errors that last beyond ``KAFKA_RETRY_QUIET_S`` are reported once at WARN."""
    started = time.monotonic()
    deadline = started + timeout_s
    delay = 0.1
    reported = False
    while True:
        try:
            return call()
        except KafkaException as exc:
            error = exc.args[0] if exc.args and isinstance(exc.args[0], KafkaError) else None
            retriable = error is not None and (error.retriable() or error.code() in RETRIABLE_KAFKA_ERRORS)
            if not retriable or time.monotonic() + delay > deadline or stopping.is_set():
                raise
            elapsed = time.monotonic() - started
            if not reported and elapsed >= KAFKA_RETRY_QUIET_S:
                reported = True
                log.warning(
                    "%s still fails after %.0f s: %s; retrying for up to %.0f s", what, elapsed, error, timeout_s
                )
            else:
                log.debug("%s: %s; retrying", what, error)
            stopping.wait(delay)
            delay = min(delay * 2, 2.0)


class WorkerSinkTask(WorkerTask):
    """Reads exact offset ranges with Spark, delivers them to a sink task on Spark and
    commits the offsets its ``pre_commit`` returned to the group ``connect-<name>``."""

    kind = "sink"
    METADATA_REFRESH_S = 5.0

    def __init__(
        self,
        *args: Any,
        bootstrap_servers: str,
        consumer_overrides: dict[str, str],
        kafka_options: dict[str, str],
        topics: list[str],
        topics_regex: str | None,
        task_count: int,
        dead_letter_queue: Any = None,
        **kw: Any,
    ) -> None:
        super().__init__(*args, **kw)
        self.dead_letter_queue = dead_letter_queue
        self.bootstrap_servers = bootstrap_servers
        self.consumer_overrides = consumer_overrides
        self.kafka_options = kafka_options
        self.topics = topics
        self.topics_regex = topics_regex
        self.task_count = task_count
        self.group_id = consumer_overrides.get("group.id", f"connect-{self.spec.connector}")
        self.runner: SparkSinkTaskRunner | None = None
        self.seq = 0
        self.assignment: list[tuple[str, int]] = []
        self.positions: dict[tuple[str, int], int] = {}
        self.committed: dict[tuple[str, int], int] = {}
        self.paused_partitions: set[tuple[str, int]] = set()
        self._last_batch_at = 0.0
        self._metadata_at = 0.0
        # When put() is due even without records (Kafka calls it after every consumer poll,
        # which waits at most until the next offset commit or the task's context.timeout).
        # The first batch starts the task's instance at once, as Kafka starts a task.
        self._idle_put_due = 0.0

    def _prepare(self, spark: Any) -> None:
        self.runner = SparkSinkTaskRunner(spark, self.spec, self.kafka_options)
        client_conf: dict[str, str | int | float | bool] = {"bootstrap.servers": self.bootstrap_servers, "log_level": 3}
        self.admin = AdminClient(dict(client_conf))
        consumer_conf = dict(client_conf)
        consumer_conf.update({k: v for k, v in self.consumer_overrides.items() if k not in ("group.id",)})
        consumer_conf.update({"group.id": self.group_id, "enable.auto.commit": False})
        self.consumer = Consumer(consumer_conf)
        if self.dead_letter_queue is not None:
            _with_kafka_retries(
                self.dead_letter_queue.ensure_topic, "Creating the dead letter queue topic", self._stopping
            )
        self._pattern = re.compile(self.topics_regex) if self.topics_regex else None
        self._refresh_assignment(force=True)

    def _refresh_assignment(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._metadata_at < self.METADATA_REFRESH_S:
            return
        self._metadata_at = now
        metadata = _with_kafka_retries(lambda: self.admin.list_topics(timeout=10), "Listing topics", self._stopping)
        if self._pattern is not None:
            topics = sorted(t for t in metadata.topics if self._pattern.fullmatch(t) and not t.startswith("__"))
        else:
            topics = [t for t in self.topics if t in metadata.topics]
        assignment: list[tuple[str, int]] = []
        for topic in topics:
            partitions = sorted(metadata.topics[topic].partitions)
            # Range assignment per topic, like the consumer's default RangeAssignor.
            per, extra = divmod(len(partitions), self.task_count)
            i = self.spec.task
            start = i * per + min(i, extra)
            count = per + (1 if i < extra else 0)
            assignment.extend((topic, p) for p in partitions[start : start + count])
        if assignment == self.assignment:
            return
        new = [tp for tp in assignment if tp not in self.positions]
        self.assignment = assignment
        if new:
            committed = _with_kafka_retries(
                lambda: self.consumer.committed([TopicPartition(t, p) for t, p in new], timeout=10),
                f"Reading committed offsets of group {self.group_id}",
                self._stopping,
            )
            missing = []
            for tp in committed:
                if tp.offset >= 0:
                    self.committed[(tp.topic, tp.partition)] = tp.offset
                    self.positions[(tp.topic, tp.partition)] = tp.offset
                else:
                    missing.append((tp.topic, tp.partition))
            if missing:  # auto.offset.reset=earliest, as Connect configures its consumers
                for tp, off in self._list_offsets(missing, OffsetSpec.earliest()).items():
                    self.committed[tp] = off
                    self.positions[tp] = off

    def _list_offsets(self, tps: list[tuple[str, int]], spec: Any) -> dict[tuple[str, int], int]:
        def call() -> dict[tuple[str, int], int]:
            futures = self.admin.list_offsets({TopicPartition(t, p): spec for t, p in tps}, request_timeout=10)
            return {(tp.topic, tp.partition): f.result().offset for tp, f in futures.items()}

        return _with_kafka_retries(call, "Listing offsets", self._stopping)

    def _batch(self) -> None:
        assert self.runner is not None
        self._refresh_assignment()
        ranges = self._ranges() if self.assignment else {}
        if ranges:
            # The topics count as the task's once their records are read, before put()
            # (Kafka records them as it converts each consumed record).
            for (topic, _), (start, end) in ranges.items():
                if end > start:
                    self.settings["record_topic"](topic)
            started = self._last_batch_at = time.monotonic()
            result = self.runner.run_batch(self.seq, self.assignment, dict(self.committed), ranges)
            log.debug(
                "Sink task %s-%s batch %d: %d records in %.3f s",
                *self.id,
                self.seq,
                sum(end - start for start, end in ranges.values()),
                time.monotonic() - started,
            )
        else:
            now = time.monotonic()
            if now < self._idle_put_due:
                self._wait(min(self.settings["sink_poll_interval_ms"] / 1000.0, self._idle_put_due - now))
                return
            result = self.runner.run_without_records(
                self.seq, self.assignment, dict(self.committed), start_only=self.seq == 0
            )
        self.seq += 1
        wait_ms = result.timeout_ms or self.settings["offset_flush_interval_ms"]
        self._idle_put_due = time.monotonic() + wait_ms / 1000.0
        if result.dead_letters and self.dead_letter_queue is not None:
            # Before the task fails or the batch's offsets are committed: never lost.
            try:
                self.dead_letter_queue.send(result.dead_letters)
            except KafkaException as exc:
                raise _TaskFailed(
                    f"Writing to the dead letter queue {self.dead_letter_queue.topic} failed: {exc}"
                ) from exc
        if result.failure:
            raise _TaskFailed(result.failure)
        for tp, (_, end) in ranges.items():
            self.positions[tp] = end
        if result.commits:
            self._commit(result.commits)
        for tp, offset in result.rewinds.items():
            self.positions[tp] = offset
        self.paused_partitions = result.paused

    def _ranges(self) -> dict[tuple[str, int], tuple[int, int]]:
        """The offset ranges to read next: new records of partitions the task has not paused."""
        ends = self._list_offsets(self.assignment, OffsetSpec.latest())
        limit = self.settings["sink_max_records"]
        ranges = {
            tp: (self.positions[tp], min(end, self.positions[tp] + limit))
            for tp, end in ends.items()
            if end > self.positions.get(tp, end) and tp not in self.paused_partitions
        }
        if not ranges and self.paused_partitions and time.monotonic() - self._last_batch_at >= 1.0:
            # Only paused partitions have data: an empty batch lets the task resume them.
            tp = next(iter(sorted(self.paused_partitions)))
            ranges = {tp: (self.positions[tp], self.positions[tp])}
        return ranges

    def _commit(self, offsets: dict[tuple[str, int], int]) -> None:
        changed = {tp: o for tp, o in offsets.items() if self.committed.get(tp) != o}
        if not changed:
            return
        if not self._may_commit():
            log.warning(
                "Task %s-%s no longer owns its partitions here (a rebalance moved it): not committing its offsets",
                *self.id,
            )
            return
        try:
            _with_kafka_retries(
                lambda: self.consumer.commit(
                    offsets=[TopicPartition(t, p, o) for (t, p), o in sorted(changed.items())], asynchronous=False
                ),
                f"Committing offsets of group {self.group_id}",
                self._stopping,
            )
        except KafkaException as exc:
            raise _TaskFailed(f"Offset commit for group {self.group_id} failed: {exc}") from exc
        self.committed.update(changed)

    def _close(self) -> None:
        if self.runner is not None:
            self.runner.close()  # the instance's close(partitions) and stop(), before the consumer goes
        if self.dead_letter_queue is not None:
            self.dead_letter_queue.close()
        consumer = getattr(self, "consumer", None)
        if consumer is not None:
            consumer.close()
