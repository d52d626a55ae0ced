"""Worker tasks: the driver-side supervisor of one Connect task (Kafka's ``WorkerTask``).

A task runs as one long-lived Spark task (:mod:`sluice.spark.launcher`); the
supervisor here, one thread per task, launches it once the task is to run, then
serves its control connection: it stores the offsets the task sends (source offsets in
the offset store, sink offsets in the connector's consumer group — not while the task
no longer owns its work: zombie fencing), records the topics it uses, passes on
pause, resume and stop, and reports RUNNING / PAUSED / FAILED / UNASSIGNED. A task
whose Spark task or Python worker dies, or that stops sending heartbeats, is FAILED
with the reason. A failing task never affects its siblings.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import re
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from typing import Any, Protocol

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from sluice.api.source import partition_key
from sluice.runtime.herder.base import State, TargetState
from sluice.runtime.kafka_security import check_authentication
from sluice.runtime.metrics import TaskSeries
from sluice.spark.control import Disconnected
from sluice.spark.launcher import Connected, JobEnded
from sluice.spark.protocol import (
    Assign,
    Committed,
    Failed,
    Heartbeat,
    LaunchSpec,
    Pause,
    PausedAck,
    Resume,
    SinkOffsets,
    SourceOffsets,
    SplitReadDone,
    SplitReadRequest,
    Started,
    Stop,
    Stopped,
    TaskSpec,
    TopicsSeen,
)
from sluice.storage.base import OffsetBackingStore
from sluice.storage.kafka_log import LOCAL_ALL_BROKERS_DOWN, LOCAL_TIMED_OUT, LOCAL_TRANSPORT
from sluice.storage.offset_codec import connector_offsets, encode_offset_key, encode_offset_value

log = logging.getLogger(__name__)

__all__ = ["TaskLauncher", "WorkerSinkTask", "WorkerSourceTask", "WorkerTask", "new_incarnation"]

StatusListener = Callable[[State, str | None], None]

#: A task that sends nothing for this long (its heartbeats come every 2 s) is lost.
HEARTBEAT_TIMEOUT_S = 30.0
#: A launched task that has not connected back after this long is reported UNASSIGNED,
#: with the reason (no free Spark task slot, most likely).
SLOT_WAIT_REPORT_S = 20.0
#: After the connection of a task ends unexpectedly, how long to wait for its Spark job's
#: error, for the FAILED trace.
JOB_ERROR_WAIT_S = 5.0
#: After a task stopped, how long to wait for its Spark job to end.
JOB_END_WAIT_S = 10.0


def new_incarnation() -> str:
    return uuid.uuid4().hex


class LaunchHandle(Protocol):
    """A launched task (:class:`sluice.spark.launcher.Launch`)."""

    spec: LaunchSpec

    def cancel(self) -> None: ...

    @property
    def connection(self) -> Any: ...


class TaskLauncher(Protocol):
    """Launches a task where it runs (:class:`sluice.spark.launcher.SparkTaskLauncher`)."""

    @property
    def slots(self) -> int: ...

    @property
    def master(self) -> str: ...

    def launch(
        self, make_spec: Callable[[tuple[str, int], str], LaunchSpec], inbox: queue.Queue[Any]
    ) -> LaunchHandle: ...

    def run_split_read(self, task: TaskSpec, kafka_options: dict[str, str], parts: list[Any]) -> Any: ...


class _Wake:
    """In the inbox: the target state changed or the task is to stop."""


class _TaskFailed(Exception):
    def __init__(self, trace: str) -> None:
        super().__init__("task failed")
        self.trace = trace


def _trace(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


class WorkerTask:
    """Base: the supervisor thread, target state, status reporting."""

    kind = "task"

    def __init__(
        self,
        spec: TaskSpec,
        target_state: TargetState,
        launcher_provider: Callable[[], TaskLauncher],
        report: StatusListener,
        settings: dict[str, Any],
    ) -> None:
        self.spec = spec
        self.id = (spec.connector, spec.task)
        self._target = target_state
        self._launcher_provider = launcher_provider
        self._report = report
        self.settings = settings
        self._inbox: queue.Queue[Any] = queue.Queue()
        self._stopping = threading.Event()
        self._cancelled = threading.Event()
        self.state: State | None = None
        self.trace: str | None = None
        self.launch: LaunchHandle | None = None
        self.launcher: TaskLauncher | None = None
        #: the process that hosts the running task (its Python worker), once it connected
        self.host_pid: int | None = None
        self.host_name: str | None = None
        self.series = TaskSeries()  # the totals the running instance reported (its metrics)
        self._reached_running = False
        self._thread = threading.Thread(target=self._run, name=f"sluice-task-{spec.connector}-{spec.task}", daemon=True)

    # -- control (any thread) -----------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def transition_to(self, target: TargetState) -> None:
        self._target = target
        self._inbox.put(_Wake())

    def stop(self) -> None:
        self._stopping.set()
        self._inbox.put(_Wake())

    def cancel(self) -> None:
        """Abandon a task that did not stop in time (Kafka's ``WorkerTask.cancel``): it
        reports no status and commits no offsets any more, and its Spark task is killed."""
        self._cancelled.set()
        self.stop()
        launch = self.launch
        if launch is not None:
            launch.cancel()

    def join(self, timeout: float | None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    # -- the supervisor thread ------------------------------------------------------

    def _set_state(self, state: State, trace: str | None = None) -> None:
        if self.state is state and trace is None and self.trace is None:
            return
        counters = self.settings.get("worker_counters")
        if counters is not None and not self._reached_running:
            if state is State.RUNNING:
                self._reached_running = True
                counters.start_ended("task", True)
            elif state is State.FAILED:
                self._reached_running = True  # counted once: a failure before it ever ran
                counters.start_ended("task", False)
        self.state, self.trace = state, trace
        if self._cancelled.is_set():
            log.debug("Task %s-%s was abandoned: not reporting %s", *self.id, state.value)
            return
        self._report(state, trace)

    def _wait_until_started(self) -> bool:
        """Before the launch: wait while the connector is paused; False when stopping."""
        while self._target is not TargetState.STARTED and not self._stopping.is_set():
            if self.state is not State.PAUSED:
                self._set_state(State.PAUSED)
            with contextlib.suppress(queue.Empty):  # woken by a change, or look again in a second
                self._inbox.get(timeout=1.0)
        return not self._stopping.is_set()

    def _run(self) -> None:
        try:
            if self._target is TargetState.PAUSED:
                self._set_state(State.PAUSED)
            self.launcher = self._launcher_provider()
            if self._stopping.is_set():
                return
            self._prepare()
            if not self._wait_until_started():
                return
            self.launch = self.launcher.launch(self._launch_spec, self._inbox)
            log.debug("Task %s-%s submitted as a long-lived Spark job", *self.id)
            self._supervise()
        except _TaskFailed as failed:
            self._set_state(State.FAILED, failed.trace)
        except BaseException as exc:  # noqa: BLE001 - any error fails only this task
            log.error("Task %s-%s failed", *self.id, exc_info=True)
            self._set_state(State.FAILED, _trace(exc))
        finally:
            try:
                self._close()
            except Exception:
                log.warning("Error closing task %s-%s", *self.id, exc_info=True)
        if self._stopping.is_set() and self.state is not State.FAILED:
            self._set_state(State.UNASSIGNED)

    def _supervise(self) -> None:
        """Serve the launched task until it stopped (returns) or failed (raises)."""
        assert self.launch is not None
        launch = self.launch
        launched_at = last_heard = time.monotonic()
        connected = stop_sent = stopped = False
        sent_target: TargetState | None = None
        failure: str | None = None
        slot_reported = False
        while True:
            try:
                message = self._inbox.get(timeout=1.0)
            except queue.Empty:
                message = None
            now = time.monotonic()
            if isinstance(message, Connected):
                connected, last_heard = True, now
                self.host_pid, self.host_name = message.hello.pid, message.hello.host
                log.info(
                    "Task %s-%s runs in Python worker pid %d on %s", *self.id, message.hello.pid, message.hello.host
                )
            elif isinstance(message, JobEnded):
                if stopped or (self._stopping.is_set() and not connected):
                    return
                if failure is not None:
                    raise _TaskFailed(failure)
                raise _TaskFailed(
                    "The Spark task hosting the task ended before the task stopped"
                    + (f": {message.error}" if message.error else "")
                )
            elif isinstance(message, Disconnected):
                if stopped:
                    continue  # the job ends next
                if failure is not None:
                    raise _TaskFailed(failure)
                raise _TaskFailed(self._lost_reason(message.reason))
            elif message is not None and not isinstance(message, _Wake):
                last_heard = now
                if isinstance(message, Started):
                    self.series.begin()  # the instance's totals count from zero, from now
                elif isinstance(message, Stopped):
                    stopped = True
                    self._await_job_end()
                    if failure is not None:
                        raise _TaskFailed(failure)
                    if self._stopping.is_set():
                        return
                    raise _TaskFailed("The task stopped without being asked to (it lost its control connection)")
                elif isinstance(message, Failed):
                    failure = message.trace
                else:
                    self._handle(message, launch)
                if isinstance(message, Started) and self._target is TargetState.STARTED:
                    self._set_state(State.RUNNING)
                elif isinstance(message, PausedAck) and self._target is not TargetState.STARTED:
                    self._set_state(State.PAUSED)
            # what the worker wants of the task
            if self._stopping.is_set():
                if not connected:
                    launch.cancel()
                    return
                if not stop_sent:
                    stop_sent = True
                    launch.connection.send(Stop())
            elif connected and failure is None:
                target = TargetState.STARTED if self._target is TargetState.STARTED else TargetState.PAUSED
                if target is not sent_target:
                    launch.connection.send(Resume() if target is TargetState.STARTED else Pause())
                    if sent_target is TargetState.PAUSED and target is TargetState.STARTED:
                        self._set_state(State.RUNNING)
                    sent_target = target
                self._tick(launch)
            if connected and now - last_heard > HEARTBEAT_TIMEOUT_S:
                launch.cancel()
                raise _TaskFailed(
                    f"The task's Python worker (pid {self.host_pid} on {self.host_name}) sent nothing for "
                    f"{HEARTBEAT_TIMEOUT_S:.0f} s: the executor is lost or unreachable"
                )
            if not connected and not slot_reported and now - launched_at > SLOT_WAIT_REPORT_S:
                slot_reported = True
                self._set_state(State.UNASSIGNED, self._slot_wait_reason())

    def _job_end(self, timeout_s: float) -> JobEnded | None:
        """Wait up to ``timeout_s`` for the Spark job's end (other messages are dropped:
        the task has stopped or is gone)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                message = self._inbox.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if isinstance(message, JobEnded):
                return message
        return None

    def _await_job_end(self) -> None:
        """The task instance stopped: let its Spark job finish (the worker may stop Spark next)."""
        if self._job_end(JOB_END_WAIT_S) is None:
            log.debug("Task %s-%s: its Spark job did not end within %.0f s of it stopping", *self.id, JOB_END_WAIT_S)

    def _lost_reason(self, reason: str) -> str:
        """Why the task is FAILED when its connection ended without a stop: with the
        Spark job's error when it comes soon (the job fails once its Python worker died)."""
        launch = self.launch
        assert launch is not None
        ended = self._job_end(JOB_ERROR_WAIT_S)
        error = ended.error if ended is not None else None
        launch.cancel()
        where = f"pid {self.host_pid} on {self.host_name}" if self.host_pid else "unknown"
        text = (
            f"The Python worker hosting task {self.id[0]}-{self.id[1]} ({where}) ended unexpectedly "
            f"(its control connection: {reason})"
        )
        return text + (f"\nSpark reported: {error}" if error else "")

    def _slot_wait_reason(self) -> str:
        launcher = self.launcher
        assert launcher is not None
        return (
            f"Waiting for a Spark task slot: the task was launched {SLOT_WAIT_REPORT_S:.0f} s ago and has not "
            f"started. Each running Connect task holds one Spark task slot for its life; spark.master "
            f"{launcher.master} has {launcher.slots}. Give Spark more slots (local[N], or spark.cores.max on a "
            "cluster) or run fewer tasks."
        )

    def _prepare(self) -> None:
        """Before the launch: what the task's launch needs from the Connect stores."""

    def _launch_spec(self, address: tuple[str, int], secret: str) -> LaunchSpec:
        raise NotImplementedError

    def _handle(self, message: Any, launch: LaunchHandle) -> None:
        if isinstance(message, TopicsSeen):
            for topic in message.topics:
                self.settings["record_topic"](topic)
        elif isinstance(message, Heartbeat):
            if message.metrics is not None:
                self.series.record(message.metrics)
        elif isinstance(message, PausedAck):
            pass
        else:
            log.warning("Task %s-%s sent an unexpected message: %r", *self.id, message)

    def _tick(self, launch: LaunchHandle) -> None:
        """Called about once a second while the task runs."""

    def _may_commit(self) -> bool:
        """Zombie fencing: a task whose work was given to another worker, or that was
        abandoned after it did not stop in time, commits nothing."""
        if self._cancelled.is_set():
            return False
        check = self.settings.get("may_commit")
        return True if check is None else bool(check())

    def _close(self) -> None:
        launch = self.launch
        if launch is not None:
            launch.connection.close()


class WorkerSourceTask(WorkerTask):
    """Supervises a source task: stores the offsets of records Kafka acknowledged."""

    kind = "source"

    def __init__(
        self,
        *args: Any,
        offset_store: OffsetBackingStore,
        kafka_options: dict[str, str],
        producer_config: dict[str, str] | None = None,
        dead_letter_queue: Any = None,
        **kw: Any,
    ) -> None:
        super().__init__(*args, **kw)
        self.dead_letter_queue = dead_letter_queue  # written by the task's producer, created here
        self.offset_store = offset_store
        self.kafka_options = kafka_options  # Spark's Kafka writer, for split reads
        self.producer_config = dict(producer_config or {})
        self.committed: dict[Any, tuple[dict[str, Any], dict[str, Any]]] = {}

    def _prepare(self) -> None:
        if self.dead_letter_queue is not None:
            _with_kafka_retries(
                self.dead_letter_queue.ensure_topic, "Creating the dead letter queue topic", self._stopping
            )
        self.committed = {
            partition_key(p): (p, o) for p, o in connector_offsets(self.offset_store, self.spec.connector)
        }

    def _launch_spec(self, address: tuple[str, int], secret: str) -> LaunchSpec:
        return LaunchSpec(
            task=self.spec,
            kind="source",
            address=address,
            secret=secret,
            producer_config=self.producer_config,
            committed_offsets=list(self.committed.values()),
            max_records=self.settings["source_max_records"],
            offset_flush_interval_ms=self.settings["offset_flush_interval_ms"],
        )

    def _handle(self, message: Any, launch: LaunchHandle) -> None:
        if isinstance(message, SourceOffsets):
            launch.connection.send(self._commit_offsets(message))
        elif isinstance(message, SplitReadRequest):
            launch.connection.send(self._split_read(message.parts))
        else:
            super()._handle(message, launch)

    def _commit_offsets(self, message: SourceOffsets) -> Committed:
        """Store the offsets of records Kafka acknowledged (unless the task was moved)."""
        return self._store(message.seq, message.offsets)

    def _store(self, seq: int, offsets: list[tuple[dict[str, Any], dict[str, Any]]]) -> Committed:
        if not offsets:
            return Committed(seq)
        if not self._may_commit():
            log.warning(
                "Task %s-%s no longer owns its work here (a rebalance moved it): not committing its "
                "offsets; its new owner resumes from the last committed ones",
                *self.id,
            )
            return Committed(seq, fenced=True)
        updates = {}
        for partition, offset in offsets:
            updates[encode_offset_key(self.spec.connector, partition)] = encode_offset_value(offset)
        try:
            self.offset_store.set(updates)
        except Exception as exc:  # noqa: BLE001 - the task retries with its next commit
            log.warning("Task %s-%s: storing offsets failed: %s", *self.id, exc)
            return Committed(seq, error=str(exc))
        for partition, offset in offsets:
            self.committed[partition_key(partition)] = (partition, offset)
        return Committed(seq)

    def _split_read(self, parts: list[Any]) -> SplitReadDone:
        """Read the parts the task asked to split, as a Spark job of their own, and store
        their offsets; the task polls again after the answer."""
        assert self.launcher is not None
        started = time.monotonic()
        try:
            result = self.launcher.run_split_read(self.spec, self.kafka_options, parts)
        except Exception as exc:  # noqa: BLE001 - the task is FAILED with this trace
            return SplitReadDone(_trace(exc))
        stored = self._store(0, result.offsets)
        for topic in result.topics:
            self.settings["record_topic"](topic)
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
    """Supervises a sink task: works out its partitions and where to read them from, and
    commits the offsets its ``pre_commit`` returned to the group ``connect-<name>``."""

    kind = "sink"
    METADATA_REFRESH_S = 5.0

    def __init__(
        self,
        *args: Any,
        bootstrap_servers: str,
        consumer_overrides: dict[str, str],
        consumer_config: dict[str, str] | None = None,
        producer_config: dict[str, str] | None = None,
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
        self.consumer_config = dict(consumer_config or {})
        self.producer_config = dict(producer_config or {})
        self.topics = topics
        self.topics_regex = topics_regex
        self.task_count = task_count
        self.group_id = consumer_overrides.get("group.id", f"connect-{self.spec.connector}")
        self.assignment: list[tuple[str, int]] = []
        self.positions: dict[tuple[str, int], int] = {}
        self.committed: dict[tuple[str, int], int] = {}
        self._metadata_at = 0.0

    def _prepare(self) -> None:
        # The task's consumer settings (librdkafka's, security translated) serve the
        # worker's metadata and committed-offset lookups for it too.
        client_conf: dict[str, str | int | float | bool] = {
            **self.consumer_config,
            "bootstrap.servers": self.bootstrap_servers,
            "log_level": 3,
        }
        client_conf.pop("group.id", None)
        if str(client_conf.get("security.protocol", "plaintext")).lower() != "plaintext":
            # a refused login fails the task now, naming itself; the admin that asked goes on
            self.admin = check_authentication(client_conf)
        else:
            self.admin = AdminClient(dict(client_conf))
        consumer_conf = dict(client_conf)
        consumer_conf.update({"group.id": self.group_id, "enable.auto.commit": False})
        self.consumer = Consumer(consumer_conf)
        if self.dead_letter_queue is not None:
            _with_kafka_retries(
                self.dead_letter_queue.ensure_topic, "Creating the dead letter queue topic", self._stopping
            )
        self._pattern = re.compile(self.topics_regex) if self.topics_regex else None
        self._refresh_assignment(force=True)

    def _launch_spec(self, address: tuple[str, int], secret: str) -> LaunchSpec:
        consumer_config = dict(self.consumer_config)
        consumer_config["group.id"] = self.group_id
        return LaunchSpec(
            task=self.spec,
            kind="sink",
            address=address,
            secret=secret,
            producer_config=self.producer_config,
            consumer_config=consumer_config,
            assignment={tp: self.positions[tp] for tp in self.assignment},
            max_records=self.settings["sink_max_records"],
            poll_interval_ms=self.settings["sink_poll_interval_ms"],
            offset_flush_interval_ms=self.settings["offset_flush_interval_ms"],
        )

    def _handle(self, message: Any, launch: LaunchHandle) -> None:
        if isinstance(message, SinkOffsets):
            launch.connection.send(self._commit(message))
        else:
            super()._handle(message, launch)

    def _tick(self, launch: LaunchHandle) -> None:
        before = list(self.assignment)
        try:
            self._refresh_assignment()
        except KafkaException as exc:
            log.warning("Task %s-%s: could not refresh the topics' partitions: %s", *self.id, exc)
            return
        if self.assignment != before:
            log.info("Task %s-%s now reads %s", *self.id, ", ".join(f"{t}-{p}" for t, p in self.assignment))
            launch.connection.send(Assign({tp: self.positions[tp] for tp in self.assignment}))

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

    def _commit(self, message: SinkOffsets) -> Committed:
        changed = {tp: o for tp, o in message.offsets.items() if self.committed.get(tp) != o}
        if not changed:
            return Committed(message.seq)
        if not self._may_commit():
            log.warning(
                "Task %s-%s no longer owns its partitions here (a rebalance moved it): not committing its offsets",
                *self.id,
            )
            return Committed(message.seq, fenced=True)
        try:
            _with_kafka_retries(
                lambda: self.consumer.commit(
                    offsets=[TopicPartition(t, p, o) for (t, p), o in sorted(changed.items())], asynchronous=False
                ),
                f"Committing offsets of group {self.group_id}",
                self._stopping,
            )
        except KafkaException as exc:
            return Committed(message.seq, error=f"Offset commit for group {self.group_id} failed: {exc}")
        self.committed.update(changed)
        for tp, offset in changed.items():
            self.positions[tp] = offset
        return Committed(message.seq)

    def _close(self) -> None:
        super()._close()
        if self.dead_letter_queue is not None:
            self.dead_letter_queue.close()
        consumer = getattr(self, "consumer", None)
        if consumer is not None:
            consumer.close()
