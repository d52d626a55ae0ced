"""The driver-side supervisor of one Connect task (Kafka's ``WorkerTask``).

A task runs in a task host: a long-lived Spark task that runs many Connect tasks
(:mod:`sluice.spark.launcher`). The supervisor here, one thread per task, launches it once
the task is to run, then serves its control connection until the instance stopped: it passes on the target state (pause,
resume) and the stop, keeps the instance's metrics, records the topics it uses, and
reports RUNNING / PAUSED / FAILED / UNASSIGNED. A task whose host dies, or that stops
sending heartbeats, is FAILED with the reason. A failing task never affects its siblings.

Supervision goes through explicit :class:`Phase`\\ s; what the task and its launch say is
handled by a table of handlers, one per message type (:attr:`WorkerTask.HANDLERS`), which the source and sink
supervisors (:mod:`sluice.runtime.tasks.source`, :mod:`sluice.runtime.tasks.sink`) extend
with what their offsets need.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import queue
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

from sluice.runtime.herder.base import State, TargetState
from sluice.runtime.metrics.recorders import TaskSeries
from sluice.runtime.tasks.settings import TaskHooks, TaskSettings
from sluice.spark.inbox import Connected, Disconnected, Inbox, InboxItem, JobEnded, Wake
from sluice.spark.split_read import SplitReadResult
from sluice.taskhost.protocol import (
    Failed,
    Pause,
    PausedAck,
    Resume,
    Started,
    Stop,
    Stopped,
    TaskLaunch,
    TaskSpec,
    TopicsSeen,
    WorkerMessage,
)

log = logging.getLogger(__name__)

__all__ = ["LaunchHandle", "Phase", "TaskLauncher", "WorkerTask", "new_incarnation"]

#: A task that sends nothing for this long (its heartbeats come every 2 s) is lost.
HEARTBEAT_TIMEOUT_S = 30.0
#: A launched task that has not connected back after this long is reported UNASSIGNED,
#: with the reason (no free Spark task slot, most likely).
SLOT_WAIT_REPORT_S = 20.0
#: After the connection of a task ends unexpectedly, how long to wait for its Spark job's
#: error, for the FAILED trace.
JOB_ERROR_WAIT_S = 5.0
#: After a task stopped, how long to wait for it to leave its host (its connection closed).
LEAVE_WAIT_S = 10.0


def new_incarnation() -> str:
    return uuid.uuid4().hex


def format_trace(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


class TaskConnectionHandle(Protocol):
    """A launched task's control connection (:class:`sluice.spark.control.TaskConnection`)."""

    def send(self, message: WorkerMessage) -> bool: ...

    def close(self) -> None: ...


class LaunchHandle(Protocol):
    """A launched task (:class:`sluice.spark.launcher.Launch`)."""

    @property
    def connection(self) -> TaskConnectionHandle: ...

    def cancel(self) -> None: ...


class TaskLauncher(Protocol):
    """Launches a task where it runs (:class:`sluice.spark.launcher.SparkTaskLauncher`)."""

    @property
    def slots(self) -> int: ...

    @property
    def master(self) -> str: ...

    def warm_up(self, timeout_s: float, hosts: int = 1) -> float:
        """Make ready to start a task at once (task hosts waiting for tasks; as many as the
        ``hosts`` tasks about to come spread over); the seconds it took."""
        ...

    def launch(self, task: TaskLaunch, inbox: Inbox, dedicated: bool = False) -> LaunchHandle:
        """Start ``task`` in a task host (``dedicated``: one of its own); what it says
        arrives in ``inbox``."""
        ...

    def close(self) -> None:
        """Let go of what :meth:`warm_up` keeps ready."""
        ...

    def run_split_read(self, task: TaskSpec, kafka_options: dict[str, str], parts: list[bytes]) -> SplitReadResult: ...


class Phase(enum.Enum):
    """Where the supervision of a launched task is."""

    LAUNCHED = "launched"  # its Spark job is submitted; its host has not connected yet
    WAITING_FOR_SLOT = "waiting for a slot"  # still not connected: reported UNASSIGNED, with why
    CONNECTED = "connected"  # its host runs it: target states are passed on, messages served
    STOPPING = "stopping"  # told to stop; waiting for it to say it stopped
    DONE = "done"  # supervision is over


class TaskFailed(Exception):
    """The task is FAILED with ``trace``."""

    def __init__(self, trace: str) -> None:
        super().__init__("task failed")
        self.trace = trace


#: Handles one message or event: a function of the supervisor and the item.
Handler = Callable[[Any, Any], None]


class WorkerTask:
    """Base: the supervisor thread, target state, status reporting."""

    kind = "task"
    #: What hosts the task, as its failure reports name it.
    HOST_KIND: ClassVar[str] = "Python worker"

    def __init__(
        self,
        spec: TaskSpec,
        target_state: TargetState,
        launcher_provider: Callable[[], TaskLauncher],
        hooks: TaskHooks,
        settings: TaskSettings,
    ) -> None:
        self.spec = spec
        self.id = (spec.connector, spec.task)
        self._target = target_state
        self._launcher_provider = launcher_provider
        self.hooks = hooks
        self.settings = settings
        self.series = TaskSeries()  # the totals the running instance reported (its metrics)
        self._inbox = Inbox(on_heartbeat=self.series.report)
        self._stopping = threading.Event()
        self._cancelled = threading.Event()
        self.state: State | None = None
        self.trace: str | None = None
        self.launch: LaunchHandle | None = None
        self.launcher: TaskLauncher | None = None
        #: the process that hosts the running task (its Python worker), once it connected
        self.host_pid: int | None = None
        self.host_name: str | None = None
        self.phase = Phase.LAUNCHED
        self._failure: str | None = None  # what the instance reported with Failed
        self._sent_target: TargetState | None = None
        self._launched_at = self._connected_at = self._ticked_at = 0.0
        self._reached_running = False
        self._thread = threading.Thread(target=self._run, name=f"sluice-task-{spec.connector}-{spec.task}", daemon=True)

    # -- control (any thread) -----------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def transition_to(self, target: TargetState) -> None:
        self._target = target
        self._inbox.put(Wake())

    def stop(self) -> None:
        self._stopping.set()
        self._inbox.put(Wake())

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

    # -- the supervisor thread: life ---------------------------------------------------

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
            self.launch = self.launcher.launch(self._launch_message(), self._inbox, self.settings.dedicated_host)
            log.debug("Task %s-%s launched", *self.id)
            self._supervise()
        except TaskFailed as failed:
            self._set_state(State.FAILED, failed.trace)
        except BaseException as exc:  # any error fails only this task, with its trace
            log.error("Task %s-%s failed", *self.id, exc_info=True)
            self._set_state(State.FAILED, format_trace(exc))
        finally:
            try:
                self._close()
            except Exception:  # closing clients must not hide how the task ended
                log.warning("Error closing task %s-%s", *self.id, exc_info=True)
        if self._stopping.is_set() and self.state is not State.FAILED:
            self._set_state(State.UNASSIGNED)

    def _wait_until_started(self) -> bool:
        """Before the launch: wait while the connector is paused; False when stopping."""
        while self._target is not TargetState.STARTED and not self._stopping.is_set():
            if self.state is not State.PAUSED:
                self._set_state(State.PAUSED)
            with contextlib.suppress(queue.Empty):  # woken by a change, or look again in a second
                self._inbox.get(timeout=1.0)
        return not self._stopping.is_set()

    def _supervise(self) -> None:
        """Serve the launched task until it stopped (returns) or failed (raises
        :class:`TaskFailed`): handle what arrives, then steer the task toward what the
        worker wants of it."""
        self.phase = Phase.LAUNCHED
        self._launched_at = self._ticked_at = time.monotonic()
        while not self._done():
            try:
                item: InboxItem | None = self._inbox.get(timeout=self._until_due(time.monotonic()))
            except queue.Empty:
                item = None
            if item is not None:
                self.HANDLERS.get(type(item), WorkerTask._on_unexpected)(self, item)
            if not self._done():
                self._steer(time.monotonic())

    def _done(self) -> bool:
        return self.phase is Phase.DONE

    def _heard_last(self) -> float:
        """When the task last sent anything (its inbox notes it as it arrives), or its
        connection came, if later."""
        return max(self._connected_at, self._inbox.heard_at)

    def _until_due(self, now: float) -> float:
        """How long the supervisor may wait for the inbox before something is due: the next
        :meth:`_tick`, the task's silence becoming too long, the report of a launch that
        waits for a slot. Anything the worker asks of the task wakes it sooner."""
        due = [now + HEARTBEAT_TIMEOUT_S]
        if self.phase in (Phase.CONNECTED, Phase.STOPPING):
            due.append(self._heard_last() + HEARTBEAT_TIMEOUT_S)
        elif self.phase is Phase.LAUNCHED:
            due.append(self._launched_at + SLOT_WAIT_REPORT_S)
        if self.TICK_S is not None and self.phase is Phase.CONNECTED:
            due.append(self._ticked_at + self.TICK_S)
        # a little past the moment: the check that follows sees it due
        return max(0.0, min(due) - now) + 0.01

    def _steer(self, now: float) -> None:
        """What the worker wants of the task now, and what silence means."""
        assert self.launch is not None
        connection = self.launch.connection
        if self._stopping.is_set():
            if self.phase in (Phase.LAUNCHED, Phase.WAITING_FOR_SLOT):
                self.launch.cancel()  # never connected: nothing to stop but its job
                self.phase = Phase.DONE
                return
            if self.phase is Phase.CONNECTED:
                self.phase = Phase.STOPPING
                connection.send(Stop())
        elif self.phase is Phase.CONNECTED and self._failure is None:
            target = TargetState.STARTED if self._target is TargetState.STARTED else TargetState.PAUSED
            if target is not self._sent_target:
                connection.send(Resume() if target is TargetState.STARTED else Pause())
                if self._sent_target is TargetState.PAUSED and target is TargetState.STARTED:
                    self._set_state(State.RUNNING)
                self._sent_target = target
            if self.TICK_S is not None and now - self._ticked_at >= self.TICK_S:
                self._ticked_at = now
                self._tick()
        if self.phase in (Phase.CONNECTED, Phase.STOPPING) and now - self._heard_last() > HEARTBEAT_TIMEOUT_S:
            self.launch.cancel()
            raise TaskFailed(
                f"The task's Python worker (pid {self.host_pid} on {self.host_name}) sent nothing for "
                f"{HEARTBEAT_TIMEOUT_S:.0f} s: the executor is lost or unreachable"
            )
        if self.phase is Phase.LAUNCHED and now - self._launched_at > SLOT_WAIT_REPORT_S:
            self.phase = Phase.WAITING_FOR_SLOT
            self._set_state(State.UNASSIGNED, self._slot_wait_reason())

    # -- the supervisor thread: what the launch says ----------------------------------

    def _on_connected(self, item: Connected) -> None:
        self.phase = Phase.CONNECTED
        self._connected_at = time.monotonic()
        self.host_pid, self.host_name = item.hello.pid, item.hello.host
        log.info("Task %s-%s runs in the task host of pid %d on %s", *self.id, item.hello.pid, item.hello.host)

    def _on_job_ended(self, item: JobEnded) -> None:
        if self._stopping.is_set() and self.phase in (Phase.LAUNCHED, Phase.WAITING_FOR_SLOT):
            self.phase = Phase.DONE
            return
        if self._failure is not None:
            raise TaskFailed(self._failure)
        raise TaskFailed(
            "The Spark task hosting the task ended before the task stopped" + (f": {item.error}" if item.error else "")
        )

    def _on_disconnected(self, item: Disconnected) -> None:
        if self._failure is not None:
            raise TaskFailed(self._failure)
        raise TaskFailed(self._lost_reason(item.reason))

    # -- the supervisor thread: what the task says ---------------------------------------

    def _on_started(self, _message: Started) -> None:
        self.series.begin()  # the instance's totals count from zero, from now
        if self._target is TargetState.STARTED:
            self._set_state(State.RUNNING)

    def _on_stopped(self, _message: Stopped) -> None:
        self._await_leave()
        if self._failure is not None:
            raise TaskFailed(self._failure)
        if not self._stopping.is_set():
            raise TaskFailed("The task stopped without being asked to (it lost its control connection)")
        self.phase = Phase.DONE

    def _on_failed(self, message: Failed) -> None:
        self._failure = message.trace

    def _on_paused(self, _message: PausedAck) -> None:
        if self._target is not TargetState.STARTED:
            self._set_state(State.PAUSED)

    def _on_topics_seen(self, message: TopicsSeen) -> None:
        for topic in message.topics:
            self.hooks.record_topic(topic)

    def _on_unexpected(self, item: InboxItem) -> None:
        log.warning("Task %s-%s sent an unexpected message: %r", *self.id, item)

    def _on_wake(self, _item: Wake) -> None:
        """Nothing to handle: the steering that follows looks at the target state again."""

    #: Who handles what arrives in the inbox, by its type (the source and sink supervisors
    #: add their offsets). A table of the class, not of each instance: bound methods in
    #: an instance's own table would tie it into a reference cycle, and its Kafka clients
    #: would outlive it until the garbage collector ran.
    HANDLERS: ClassVar[dict[type, Handler]] = {
        Connected: _on_connected,
        Disconnected: _on_disconnected,
        JobEnded: _on_job_ended,
        Wake: _on_wake,
        Started: _on_started,
        Stopped: _on_stopped,
        Failed: _on_failed,
        PausedAck: _on_paused,
        TopicsSeen: _on_topics_seen,
    }

    def _answer(self, answer: WorkerMessage) -> None:
        assert self.launch is not None
        self.launch.connection.send(answer)

    # -- the supervisor thread: helpers ------------------------------------------------

    def _set_state(self, state: State, trace: str | None = None) -> None:
        if self.state is state and trace is None and self.trace is None:
            return
        counters = self.hooks.counters
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
        self.hooks.report(state, trace)

    def _wait_for(self, kinds: tuple[type, ...], timeout_s: float) -> InboxItem | None:
        """Wait up to ``timeout_s`` for an item of one of ``kinds`` (other messages are
        dropped: the task has stopped or is gone)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                item = self._inbox.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if isinstance(item, kinds):
                return item
        return None

    def _await_leave(self) -> None:
        """The task instance stopped: let it leave its host, which closes its connection
        (or ends, for a host of its own) — the worker may stop Spark next."""
        if self._wait_for((Disconnected, JobEnded), LEAVE_WAIT_S) is None:
            log.debug("Task %s-%s: it did not leave its host within %.0f s of stopping", *self.id, LEAVE_WAIT_S)

    def _lost_reason(self, reason: str) -> str:
        """Why the task is FAILED when its connection ended without a stop: with the
        Spark job's error when it comes soon (the job fails once its Python worker died)."""
        launch = self.launch
        assert launch is not None
        ended = self._wait_for((JobEnded,), JOB_ERROR_WAIT_S)
        error = ended.error if isinstance(ended, JobEnded) else None
        launch.cancel()
        where = f"pid {self.host_pid} on {self.host_name}" if self.host_pid else "unknown"
        text = (
            f"The {self.HOST_KIND} hosting task {self.id[0]}-{self.id[1]} ({where}) ended unexpectedly "
            f"(its control connection: {reason})"
        )
        return text + (f"\nSpark reported: {error}" if error else "")

    def _slot_wait_reason(self) -> str:
        launcher = self.launcher
        assert launcher is not None
        return (
            f"Waiting for a Spark task slot: the task was launched {SLOT_WAIT_REPORT_S:.0f} s ago and has not "
            f"started. Each task host holds one Spark task slot for its life (a dedicated host runs one "
            f"Connect task, a shared one many); spark.master {launcher.master} has {launcher.slots}. Give "
            "Spark more slots (local[N], or spark.cores.max on a cluster) or run fewer dedicated tasks."
        )

    def _may_commit(self) -> bool:
        """Zombie fencing: a task whose work was given to another worker, or that was
        abandoned after it did not stop in time, commits nothing."""
        if self._cancelled.is_set():
            return False
        check = self.hooks.may_commit
        return True if check is None else bool(check())

    # -- what the source and sink supervisors add ----------------------------------------

    def _prepare(self) -> None:
        """Before the launch: what the task's launch needs from the Connect stores."""

    def _launch_message(self) -> TaskLaunch:
        """The task to run, as its host gets it."""
        raise NotImplementedError

    #: How often :meth:`_tick` is called while the task runs (None: never, no periodic work).
    TICK_S: ClassVar[float | None] = None

    def _tick(self) -> None:
        """Called about every :attr:`TICK_S` while the task runs."""

    def _close(self) -> None:
        launch = self.launch
        if launch is not None:
            launch.connection.close()
