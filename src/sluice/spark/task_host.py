"""The executor side of a long-lived task: what runs inside the Spark task that hosts one
Connect task for its whole life.

:func:`run_task` is the Python function of the task's one-partition Spark job. It
connects to the worker's control server, says who it is, then runs the source or sink
loop (:mod:`sluice.spark.source_loop`, :mod:`sluice.spark.sink_loop`) until the worker
says stop, the task fails, or the worker goes away. The loop runs on the Spark task's
own thread — the task thread of the Connect task: ``initialize``, ``start``,
``poll``/``put``, ``commit``/``pre_commit`` and ``stop`` all run there. A second thread
reads the worker's messages (:class:`TaskControl`), a third sends heartbeats.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import socket
import threading
import traceback
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from sluice.spark.protocol import (
    Assign,
    Channel,
    ChannelClosed,
    Committed,
    Failed,
    Heartbeat,
    Hello,
    LaunchSpec,
    Pause,
    Resume,
    SplitReadDone,
    Started,
    Stop,
    Stopped,
)
from sluice.spark.task_metrics import TaskMeter

log = logging.getLogger(__name__)

__all__ = ["TASK_OUTPUT_DDL", "TaskControl", "TaskFailure", "TaskLoop", "WorkerGone", "format_trace", "run_task"]

WELCOME_TIMEOUT_S = 60.0
# The one row the Spark job returns when the task ended as the worker asked.
TASK_OUTPUT_DDL = "done boolean"


def format_trace(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


class WorkerGone(Exception):
    """The connection to the worker broke: nobody supervises the task any more."""


class TaskFailure(Exception):
    """The task fails with ``trace`` (its status trace)."""

    def __init__(self, trace: str) -> None:
        super().__init__(trace)
        self.trace = trace


class TaskControl:
    """What the worker asked, read from the channel by a thread of its own.

    The task loop reads the flags between its calls to the task, and waits on
    :meth:`reply` for the answer to an offsets or split-read message."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.stop_requested = threading.Event()
        self.worker_gone = threading.Event()
        # The worker's first message (Resume) says this connection is the launch's one:
        # the task starts only then (a second attempt of the same launch never does).
        self.welcomed = threading.Event()
        self.paused = False
        self.meter = TaskMeter()  # the task's totals, sent with each heartbeat
        self.changed = threading.Condition()
        self.assignments: queue.Queue[Assign] = queue.Queue()
        self._replies: queue.Queue[Any] = queue.Queue()
        self._reader = threading.Thread(target=self._read, name="sluice-task-control", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                message = self.channel.recv()
            except ChannelClosed:
                self.worker_gone.set()
                self.stop_requested.set()
                self.welcomed.set()
                self._replies.put(None)
                self._notify()
                return
            except Exception:  # noqa: BLE001 - a frame we cannot read: the channel is unusable
                log.exception("Unreadable message from the worker")
                self.welcomed.set()
                self.worker_gone.set()
                self.stop_requested.set()
                self._replies.put(None)
                self._notify()
                return
            self.welcomed.set()
            if isinstance(message, Stop):
                self.stop_requested.set()
            elif isinstance(message, Pause):
                self.paused = True
            elif isinstance(message, Resume):
                self.paused = False
            elif isinstance(message, Assign):
                self.assignments.put(message)
            elif isinstance(message, Committed | SplitReadDone):
                self._replies.put(message)
            self._notify()

    def _notify(self) -> None:
        with self.changed:
            self.changed.notify_all()

    @property
    def stopping(self) -> bool:
        return self.stop_requested.is_set()

    def wait_for_change(self, timeout_s: float) -> None:
        """Wait until the worker sent something, at most ``timeout_s``."""
        with self.changed:
            self.changed.wait(timeout_s)

    def send(self, message: Any) -> None:
        try:
            self.channel.send(message)
        except ChannelClosed as exc:
            self.worker_gone.set()
            self.stop_requested.set()
            raise WorkerGone(str(exc)) from exc

    def reply(self, kind: type[Any]) -> Any:
        """The worker's next answer of ``kind`` (answers come in the order of the requests).
        Raises :class:`WorkerGone` when the worker went away first."""
        while True:
            message = self._replies.get()
            if message is None:
                self._replies.put(None)  # every later wait ends too
                raise WorkerGone("the worker closed the task's control connection")
            if isinstance(message, kind):
                return message


class TaskLoop:
    """What the source and sink loops share: a task instance's life on the task thread —
    ``initialize``, ``start``, :meth:`_after_start`, :class:`Started`, :meth:`_loop` —
    then :meth:`_finish`, and a :class:`Failed` to the worker when the task failed."""

    spec: Any
    control: TaskControl
    task: Any
    context: Any

    def run(self) -> None:
        failure: str | None = None
        started = False
        try:
            self.task.initialize(self.context)
            self.task.start(dict(self.spec.task_config))
            started = True
            self._after_start()
            self.control.send(Started())
            self._loop()
        except WorkerGone:
            log.warning("Task %s-%s: the worker went away; stopping the task", self.spec.connector, self.spec.task)
        except TaskFailure as exc:
            failure = exc.trace
        except BaseException as exc:  # noqa: BLE001 - any error fails the task, with its trace
            failure = format_trace(exc)
        failure = self._finish(started, failure)
        with contextlib.suppress(WorkerGone):  # the final totals
            self.control.send(Heartbeat(self.control.meter.snapshot()))
        if failure is not None:
            with contextlib.suppress(WorkerGone):
                self.control.send(Failed(failure))

    def _after_start(self) -> None:
        """After ``start`` returned, before the task counts as started."""

    def _loop(self) -> None:
        raise NotImplementedError

    def _finish(self, started: bool, failure: str | None) -> str | None:
        """Wind the instance down; returns the failure to report, if any."""
        raise NotImplementedError


class _Heartbeats:
    def __init__(self, control: TaskControl, interval_s: float) -> None:
        self._control = control
        self._interval_s = interval_s
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sluice-task-heartbeat", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(self._interval_s):
            try:
                self._control.send(Heartbeat(self._control.meter.snapshot()))
            except WorkerGone:
                return

    def stop(self) -> None:
        self._done.set()


def run_task(launch: LaunchSpec) -> Iterator[pa.RecordBatch]:
    """Host one Connect task until it stops; the Spark job's only partition runs this.

    Raises when the worker cannot be reached: the Spark job fails and the worker reports
    the task FAILED with that error."""
    channel = Channel.connect(launch.address)
    channel.send_raw(Hello(launch.task.incarnation, launch.secret, os.getpid(), socket.gethostname()).to_json())
    control = TaskControl(channel)
    heartbeats = _Heartbeats(control, launch.heartbeat_interval_ms / 1000.0)
    try:
        if not control.welcomed.wait(WELCOME_TIMEOUT_S) or control.stopping:
            log.warning("Task %s-%s: the worker did not take this launch; not starting it", *launch.task.host_key)
        elif launch.kind == "source":
            from sluice.spark.source_loop import SourceLoop

            SourceLoop(launch, control).run()
        else:
            from sluice.spark.sink_loop import SinkLoop

            SinkLoop(launch, control).run()
        with contextlib.suppress(WorkerGone):
            control.send(Stopped())
    finally:
        heartbeats.stop()
        channel.close()
    yield pa.RecordBatch.from_pydict({"done": [not control.worker_gone.is_set()]})
