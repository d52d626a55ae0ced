"""The task host's end of a task's control connection: what the worker asked, read by a
thread of its own; and the host's heartbeat, sent for all its tasks at once by one thread.

The task loop reads the flags between its calls to the task, and waits on
:meth:`TaskControl.reply` for the answer to an offsets or split-read message.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any, ClassVar

from sluice.taskhost.metering import TaskMeter
from sluice.taskhost.protocol import (
    Assign,
    Committed,
    Heartbeat,
    HostHeartbeat,
    HostTask,
    Pause,
    Resume,
    RunSinkTask,
    RunSourceTask,
    SplitReadDone,
    Stop,
    TaskLaunch,
    TaskMessage,
    WorkerMessage,
)
from sluice.taskhost.wire import ChannelClosed, ProtocolError, TaskChannel

log = logging.getLogger(__name__)

__all__ = ["Heartbeats", "TaskControl", "WorkerGone"]

Reply = Committed | SplitReadDone


class WorkerGone(Exception):
    """The connection to the worker broke: nobody supervises the task any more."""


class TaskControl:
    """What the worker asked, read from the channel by a thread of its own."""

    def __init__(self, channel: TaskChannel) -> None:
        self.channel = channel
        self.stop_requested = threading.Event()
        self.worker_gone = threading.Event()
        # The task to run: the worker's first message on this connection.
        self.launch: TaskLaunch | None = None
        # The worker's first Resume, Pause or Stop says this connection is the launch's one:
        # the task starts only then (a second attempt of the same launch never does).
        self.welcomed = threading.Event()
        self.paused = False
        self.meter = TaskMeter()  # the task's totals, sent with each heartbeat
        self._heartbeat_lock = threading.Lock()  # one heartbeat at a time, the last one last
        self._totals_sent: dict[str, float] | None = None  # as of the last heartbeat
        self._heartbeats_ended = False
        self.changed = threading.Condition()
        self._generation = 0  # how many times the worker's messages changed something
        self.assignments: queue.Queue[Assign] = queue.Queue()
        self._replies: queue.Queue[Reply | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, name="sluice-task-control", daemon=True)
        self._reader.start()

    # -- the reader thread ----------------------------------------------------------------

    def _read(self) -> None:
        while True:
            try:
                message = self.channel.recv()
            except ChannelClosed:
                self._lost()
                return
            except ProtocolError:
                log.exception("Unreadable message from the worker")
                self._lost()
                return
            self.HANDLERS[type(message)](self, message)
            self._notify()

    def _lost(self) -> None:
        self.worker_gone.set()
        self.stop_requested.set()
        self.welcomed.set()
        self._replies.put(None)
        self._notify()

    def _on_launch(self, message: WorkerMessage) -> None:
        assert isinstance(message, RunSourceTask | RunSinkTask)
        self.launch = message

    def _on_target(self, message: WorkerMessage) -> None:
        if isinstance(message, Stop):
            self.stop_requested.set()
        else:
            self.paused = isinstance(message, Pause)
        self.welcomed.set()

    def _on_assign(self, message: WorkerMessage) -> None:
        assert isinstance(message, Assign)
        self.assignments.put(message)

    def _on_misplaced(self, message: WorkerMessage) -> None:
        log.warning("A host's message on a task connection, ignored: %r", message)

    def _on_reply(self, message: WorkerMessage) -> None:
        assert isinstance(message, Committed | SplitReadDone)
        self._replies.put(message)

    #: Who handles each message of the worker (a table of the class: bound methods in the
    #: instance's own would tie it into a reference cycle).
    HANDLERS: ClassVar[dict[type, Callable[[TaskControl, Any], None]]] = {
        RunSourceTask: _on_launch,
        RunSinkTask: _on_launch,
        Resume: _on_target,
        Pause: _on_target,
        Stop: _on_target,
        Assign: _on_assign,
        Committed: _on_reply,
        SplitReadDone: _on_reply,
        HostTask: _on_misplaced,
    }

    def _notify(self) -> None:
        with self.changed:
            self._generation += 1
            self.changed.notify_all()

    # -- the task thread -------------------------------------------------------------------

    @property
    def stopping(self) -> bool:
        return self.stop_requested.is_set()

    @property
    def generation(self) -> int:
        """Goes up with each message from the worker: read it before looking at the flags,
        and hand it to :meth:`wait_for_change`, so that a message that came in between is
        not waited for."""
        return self._generation

    def wait_for_change(self, timeout_s: float, since: int | None = None) -> None:
        """Wait until the worker sent something after :attr:`generation` was ``since``
        (without it: from now), at most ``timeout_s``."""
        with self.changed:
            start = self._generation if since is None else since
            self.changed.wait_for(lambda: self._generation != start, timeout_s)

    def send(self, message: TaskMessage) -> None:
        try:
            self.channel.send(message)
        except ChannelClosed as exc:
            self.worker_gone.set()
            self.stop_requested.set()
            raise WorkerGone(str(exc)) from exc

    def heartbeat_totals(self) -> dict[str, float] | None:
        """For the host's heartbeat: the totals that changed since the last time (all of them
        the first time); None when none did, and once :meth:`last_heartbeat` was sent."""
        with self._heartbeat_lock:
            if self._heartbeats_ended:
                return None
            totals = self.meter.snapshot()
            sent = self._totals_sent
            self._totals_sent = totals
            if sent is None:
                return totals
            # only what changed: an idle task adds nothing to its host's heartbeat
            return {k: v for k, v in totals.items() if sent.get(k) != v} or None

    def last_heartbeat(self) -> None:
        """Send every total as the task ends, on the task's own connection (in order with
        its other messages); no heartbeat of its host carries it after this."""
        with self._heartbeat_lock:
            self._heartbeats_ended = True
            self.send(Heartbeat(self.meter.snapshot()))

    def reply(self, kind: type[Reply]) -> Reply:
        """The worker's next answer of ``kind`` (answers come in the order of the requests).
        Raises :class:`WorkerGone` when the worker went away first."""
        while True:
            message = self._replies.get()
            if message is None:
                self._replies.put(None)  # every later wait ends too
                raise WorkerGone("the worker closed the task's control connection")
            if isinstance(message, kind):
                return message

    def committed(self) -> Committed:
        reply = self.reply(Committed)
        assert isinstance(reply, Committed)
        return reply

    def split_read_done(self) -> SplitReadDone:
        reply = self.reply(SplitReadDone)
        assert isinstance(reply, SplitReadDone)
        return reply


class Heartbeats:
    """Sends the host's heartbeat (:class:`~sluice.taskhost.protocol.HostHeartbeat`) on the
    host connection every ``interval_s``, with the totals of every task of the host that
    changed, from one thread, until stopped or the connection closed."""

    def __init__(self, interval_s: float, channel: TaskChannel) -> None:
        self._interval_s = interval_s
        self._channel = channel
        self._controls: dict[str, TaskControl] = {}  # by the task's launch incarnation
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sluice-host-heartbeats", daemon=True)
        self._thread.start()

    def add(self, incarnation: str, control: TaskControl) -> None:
        with self._lock:
            self._controls[incarnation] = control

    def remove(self, incarnation: str) -> None:
        with self._lock:
            self._controls.pop(incarnation, None)

    def _run(self) -> None:
        while not self._done.wait(self._interval_s):
            with self._lock:
                controls = list(self._controls.items())
            metrics = {}
            for incarnation, control in controls:
                changed = control.heartbeat_totals()
                if changed is not None:
                    metrics[incarnation] = changed
            try:
                self._channel.send(HostHeartbeat(metrics))
            except ChannelClosed:
                return  # the worker let the host go: its tasks hear it on their own connections

    def stop(self) -> None:
        self._done.set()
