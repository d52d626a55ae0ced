"""What a launched task's supervisor hears, in one typed queue: the task's own messages
(:data:`~sluice.taskhost.protocol.TaskMessage`), the launch's events — its host connected,
its connection ended, its Spark job ended — and the supervisor's own wake-up.

The inbox notes when the task last sent anything (:attr:`Inbox.heard_at`), as it arrives.
Heartbeats are the one message that never wakes the supervisor: the host's, which carry
the totals of all its tasks (:meth:`Inbox.host_heartbeat`, on the host connection's reader
thread), and the task's last one (on its own connection's, in order with the rest) are
handed to ``on_heartbeat``. A worker with hundreds of tasks would otherwise wake hundreds
of threads every interval only to record their totals.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from dataclasses import dataclass

from sluice.taskhost.protocol import Heartbeat, Hello, TaskMessage

__all__ = ["Connected", "Disconnected", "Inbox", "InboxItem", "JobEnded", "Wake"]


@dataclass(frozen=True)
class Connected:
    """The task's host connected back and proved it is this launch's (``hello``)."""

    hello: Hello


@dataclass(frozen=True)
class Disconnected:
    """The task's connection ended; ``reason`` says how."""

    reason: str


@dataclass(frozen=True)
class JobEnded:
    """The task's Spark job ended; ``error`` is Spark's error, if any."""

    error: str | None


@dataclass(frozen=True)
class Wake:
    """The supervisor's own: the target state changed or the task is to stop."""


InboxItem = TaskMessage | Connected | Disconnected | JobEnded | Wake


class Inbox(queue.Queue[InboxItem]):
    """A launch's queue; ``on_heartbeat`` is called (on the connection's reader thread) with
    each heartbeat's changed totals (None: none changed), which are not queued."""

    def __init__(self, on_heartbeat: Callable[[dict[str, float] | None], None] | None = None) -> None:
        super().__init__()
        self._on_heartbeat = on_heartbeat
        #: when the task (or its host, for it) last sent anything (``time.monotonic()``; 0: nothing yet)
        self.heard_at = 0.0
        # the task's own (last) heartbeat came: a host heartbeat read after it carries older totals
        self._own_heartbeat_heard = False

    def deliver(self, message: TaskMessage) -> None:
        """What the task sent: noted, and queued for the supervisor unless it is a heartbeat."""
        self.heard_at = time.monotonic()
        if isinstance(message, Heartbeat):
            self._own_heartbeat_heard = True
            if self._on_heartbeat is not None:
                self._on_heartbeat(message.metrics)
            return
        self.put(message)

    def host_heartbeat(self, metrics: dict[str, float] | None) -> None:
        """The task's host is alive and sent the task's changed totals (None: none changed)."""
        if self._own_heartbeat_heard:
            return
        self.heard_at = time.monotonic()
        if metrics is not None and self._on_heartbeat is not None:
            self._on_heartbeat(metrics)
