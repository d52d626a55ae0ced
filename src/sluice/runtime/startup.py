"""A worker's start-up: what it is waiting for, since when, and whether it is done.

A worker takes work only once its engine can run a task: the Spark session is up and a
task host is warm (:meth:`sluice.runtime.worker.Worker.start_engine`). Until then
``GET /health`` answers 503 ``starting`` with the stage it is in, in the words of Kafka
Connect's stage summary ("The worker is currently …, which began at …").
"""

from __future__ import annotations

import datetime
import threading
import time
from dataclasses import dataclass

__all__ = ["EngineFailed", "Stage", "Startup"]


class EngineFailed(Exception):
    """The worker's engine could not start: the worker cannot run tasks."""


@dataclass(frozen=True)
class Stage:
    """What the worker is doing, and since when (seconds since the epoch)."""

    description: str
    began: float

    def summary(self) -> str:
        instant = datetime.datetime.fromtimestamp(self.began, datetime.UTC)
        text = instant.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        return f"The worker is currently {self.description}, which began at {text}"


class Startup:
    """The engine's start-up, told by the thread that starts it, read by any thread."""

    def __init__(self) -> None:
        self._stage = Stage("starting", time.time())
        self._done = threading.Event()
        self._error: BaseException | None = None
        self._lock = threading.Lock()

    def begin(self, description: str) -> None:
        with self._lock:
            self._stage = Stage(description, time.time())

    def finish(self) -> None:
        self._done.set()

    def fail(self, error: BaseException) -> None:
        with self._lock:
            self._error = error
        self._done.set()

    @property
    def stage(self) -> Stage:
        with self._lock:
            return self._stage

    @property
    def ready(self) -> bool:
        return self._done.is_set() and self._error is None

    @property
    def error(self) -> BaseException | None:
        with self._lock:
            return self._error

    def wait_unless(self, give_up: threading.Event, poll_s: float = 0.5) -> bool:
        """Wait until the engine is ready (True) or ``give_up`` is set (False: the worker
        stops); raises :class:`EngineFailed` when it could not start."""
        while not give_up.is_set():
            if self.wait(poll_s):
                return True
        return False

    def wait(self, timeout_s: float | None = None) -> bool:
        """Wait until the engine is ready (True) or ``timeout_s`` passed (False); raises
        :class:`EngineFailed` when it could not start."""
        if not self._done.wait(timeout_s):
            return False
        error = self.error
        if error is not None:
            raise EngineFailed(f"The worker's engine could not start: {error}") from error
        return True
