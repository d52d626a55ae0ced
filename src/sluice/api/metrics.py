"""Metrics reporters: Kafka's ``metric.reporters`` for Python.

A worker setting ``metric.reporters=package.module.MyReporter`` (comma-separated, Python
paths; ``plugin.path`` is importable) makes the worker create each reporter once at start,
call :meth:`MetricsReporter.configure` with the worker's properties, then
:meth:`MetricsReporter.init` with a function that returns the worker's metrics as they are
at the moment it is called, and :meth:`MetricsReporter.close` when the worker stops. A
reporter reads the metrics whenever it likes (a thread of its own that pushes them
somewhere every so often, for instance), as Kafka's reporters read their ``KafkaMetric``\\ s.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Metric", "MetricsReporter"]


@dataclass(frozen=True)
class Metric:
    """One metric as Kafka names it: ``group`` (``sink-task-metrics``), ``name``
    (``sink-record-read-total``), ``tags`` (``connector``, ``task``) and its value: a number,
    or a string for the metrics Kafka gives as strings (a ``status``)."""

    group: str
    name: str
    tags: dict[str, str] = field(default_factory=dict)
    value: float | str = 0.0
    description: str = ""


class MetricsReporter(ABC):
    """Receives the worker's metrics. Every method is called on a worker thread and must not
    block for long; an exception from :meth:`init` or :meth:`configure` stops the worker from
    starting, one from :meth:`close` is logged."""

    def configure(self, configs: dict[str, str]) -> None:  # optional, as in Kafka
        """The worker's properties, before :meth:`init`."""

    @abstractmethod
    def init(self, metrics: Callable[[], list[Metric]]) -> None:
        """Called once the worker started; ``metrics()`` returns every metric of the worker
        as of that call (it computes rates and averages then: call it once per report)."""

    def close(self) -> None:  # optional, as in Kafka
        """The worker is stopping: flush and release what the reporter holds."""
