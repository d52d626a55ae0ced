"""What a launched task's supervisor hears, in one typed queue: the task's own messages
(:data:`~sluice.taskhost.protocol.TaskMessage`), the launch's events — its host connected,
its connection ended, its Spark job ended — and the supervisor's own wake-up."""

from __future__ import annotations

import queue
from dataclasses import dataclass

from sluice.taskhost.protocol import Hello, TaskMessage

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
Inbox = queue.Queue[InboxItem]
