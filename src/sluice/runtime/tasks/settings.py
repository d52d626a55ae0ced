"""What a task supervisor is given besides its task: the worker settings its launch needs,
and the hooks through which it reports back to the worker."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sluice.runtime.herder.base import State
from sluice.runtime.metrics.recorders import WorkerCounters

__all__ = ["StatusListener", "TaskHooks", "TaskSettings"]

#: Told each state the task reaches, with the trace of a failure.
StatusListener = Callable[[State, str | None], None]


@dataclass(frozen=True)
class TaskSettings:
    """The worker's settings a task's launch needs."""

    #: ``offset.flush.interval.ms``: how often a task sends its offsets (capped at 1 s by the task)
    offset_flush_interval_ms: int = 60_000
    #: ``sluice.sink.batch.max.records``: most records one ``put()`` receives
    sink_max_records: int = 10_000
    #: ``sluice.sink.poll.interval.ms``: how long an idle sink task waits for records at a time
    sink_poll_interval_ms: int = 100


def _ignore_topic(_topic: str) -> None:
    pass


@dataclass(frozen=True)
class TaskHooks:
    """How the supervisor reports to the worker that owns it."""

    #: the task's status, as it changes
    report: StatusListener
    #: a topic the task used (the connector's active topics)
    record_topic: Callable[[str], None] = _ignore_topic
    #: zombie fencing (distributed mode): whether the task still owns its work; None: always
    may_commit: Callable[[], bool] | None = None
    #: the worker's start counters (``connect-worker-metrics``)
    counters: WorkerCounters | None = None
