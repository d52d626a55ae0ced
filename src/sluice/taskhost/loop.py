"""What the source and sink loops share: a task instance's life on the task thread, how a
task fails, and the intervals both keep.

The loop runs on the Connect task's own thread in its task host:
``initialize``, ``start``, ``poll``/``put``, ``commit``/``pre_commit`` and ``stop`` all run
there. What the worker asks arrives through :class:`~sluice.taskhost.control.TaskControl`.
"""

from __future__ import annotations

import contextlib
import logging
import traceback
from typing import Any

from sluice.taskhost.control import TaskControl, WorkerGone
from sluice.taskhost.protocol import Failed, Started, TaskSpec

log = logging.getLogger(__name__)

__all__ = ["COMMIT_INTERVAL_MAX_MS", "FINAL_FLUSH_S", "Stopping", "TaskFailure", "TaskLoop", "format_trace"]

# Offsets are committed at least this often (and every offset.flush.interval.ms when that
# is shorter): Kafka's 60 s default would let a crash repeat a minute of records; an
# offset commit is one small write.
COMMIT_INTERVAL_MAX_MS = 1000
# How long a stopping task waits for Kafka to acknowledge what it produced.
FINAL_FLUSH_S = 30.0


def format_trace(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


class Stopping(Exception):
    """The worker asked the task to stop while the loop was waiting on Kafka: the loop ends
    as after any stop (what was acknowledged is committed, ``stop()`` is called)."""


class TaskFailure(Exception):
    """The task fails with ``trace`` (its status trace)."""

    def __init__(self, trace: str) -> None:
        super().__init__(trace)
        self.trace = trace


class TaskLoop:
    """A task instance's life on the task thread — :meth:`_before_start`, ``initialize``, ``start``,
    :meth:`_after_start`, :class:`Started`, :meth:`_loop` — then :meth:`_finish`, and a
    :class:`Failed` to the worker when the task failed."""

    spec: TaskSpec
    control: TaskControl
    task: Any  # the SourceTask or SinkTask instance
    context: Any  # its context
    # Set once initialize is called: from then on the instance's stop() is called as its
    # last call, even when initialize or start raised (as Kafka Connect does, so that a
    # task can release what a failed start took).
    initialized = False

    def run(self) -> None:
        failure: str | None = None
        started = False
        try:
            self._before_start()
            self.initialized = True
            self.task.initialize(self.context)
            self.task.start(dict(self.spec.task_config))
            started = True
            self._after_start()
            self.control.send(Started())
            self._loop()
        except Stopping:
            pass
        except WorkerGone:
            log.warning("Task %s-%s: the worker went away; stopping the task", self.spec.connector, self.spec.task)
        except TaskFailure as exc:
            failure = exc.trace
        except BaseException as exc:  # noqa: BLE001 - whatever the task raised fails it, with its trace
            failure = format_trace(exc)
        failure = self._finish(started, failure)
        try:
            with contextlib.suppress(WorkerGone):  # the final totals
                self.control.last_heartbeat()
            if failure is not None:
                with contextlib.suppress(WorkerGone):
                    self.control.send(Failed(failure))
        finally:
            self._release()

    def _before_start(self) -> None:
        """Before the task instance is initialized (a failure here fails it, unstarted)."""

    def _after_start(self) -> None:
        """After ``start`` returned, before the task counts as started."""

    def _loop(self) -> None:
        raise NotImplementedError

    def _finish(self, started: bool, failure: str | None) -> str | None:
        """Wind the instance down, :meth:`_stop_instance` included; returns the failure to
        report, if any."""
        raise NotImplementedError

    def _stop_instance(self) -> None:
        """The instance's ``stop()``, once ``initialize`` was called; what it raises is
        logged, as Kafka does."""
        if not self.initialized:
            return
        try:
            self.task.stop()
        except BaseException as exc:  # logged, the task's status stays
            log.error("Task %s-%s threw an error while stopping", self.spec.connector, self.spec.task, exc_info=exc)

    def _release(self) -> None:
        """Close the instance's Kafka clients, last: their threads would otherwise live on
        (and wake every second) until the garbage collector found the finished loop."""
