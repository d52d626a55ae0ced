"""What a task supervisor is given besides its task: the worker settings its launch needs,
and the hooks through which it reports back to the worker."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sluice.api.errors import ConfigError
from sluice.runtime.herder.base import State
from sluice.runtime.metrics.recorders import WorkerCounters

__all__ = ["TASK_HOST_CONFIG", "StatusListener", "TaskHooks", "TaskSettings", "wants_dedicated_host"]

#: A connector's choice of task host: ``shared`` (the default: its tasks run in task hosts
#: with other connectors' tasks, at a few threads each) or ``dedicated`` (each task in a
#: Python process of its own, for isolation: a crash, a CPU-heavy or untrusted plugin).
TASK_HOST_CONFIG = "sluice.task.host"
TASK_HOST_CHOICES = ("shared", "dedicated")


def wants_dedicated_host(connector_config: dict[str, str]) -> bool:
    """Whether the connector's tasks each get a task host of their own; raises
    :class:`ConfigError` for a value that is neither ``shared`` nor ``dedicated``."""
    value = connector_config.get(TASK_HOST_CONFIG, "shared").strip().lower()
    if value not in TASK_HOST_CHOICES:
        raise ConfigError(
            f"Invalid value {connector_config[TASK_HOST_CONFIG]!r} for configuration {TASK_HOST_CONFIG}: "
            f"expected one of {', '.join(TASK_HOST_CHOICES)}"
        )
    return value == "dedicated"


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
    #: the connector's ``sluice.task.host`` is ``dedicated``: each task in a task host of its own
    dedicated_host: bool = False


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
