"""A snapshot of what a worker runs, for its metrics: the runtime builds it
(:meth:`sluice.runtime.worker.Worker.metrics_snapshot`), the exposition reads it, so the
exposition knows nothing of the worker's internals."""

from __future__ import annotations

from dataclasses import dataclass

from sluice.runtime.herder.base import State
from sluice.runtime.metrics.recorders import TaskSeries, WorkerCounters

__all__ = ["ConnectorSnapshot", "TaskSnapshot", "WorkerSnapshot"]


@dataclass(frozen=True)
class TaskSnapshot:
    """A task this worker runs: its kind (``source`` or ``sink``), state and recorded series."""

    task: int
    kind: str
    state: State | None
    series: TaskSeries


@dataclass(frozen=True)
class ConnectorSnapshot:
    """A connector this worker runs, or runs tasks of (``instance_here`` False)."""

    name: str
    kind: str
    instance_here: bool
    state: State
    connector_class: str
    version: str | None
    tasks: tuple[TaskSnapshot, ...] = ()


@dataclass(frozen=True)
class WorkerSnapshot:
    """What a worker runs, and its counters."""

    counters: WorkerCounters
    connectors: tuple[ConnectorSnapshot, ...] = ()
