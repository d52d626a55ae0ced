"""The worker's metrics: recorded by the runtime (:mod:`.recorders`), taken as a snapshot
(:mod:`.snapshot`), exposed under Kafka Connect's names and in Prometheus' text format
(:mod:`.exposition`), and handed to metrics reporters (:mod:`.reporters`)."""

from sluice.runtime.metrics.exposition import (
    MetricFamily,
    as_metrics,
    prometheus_text,
    rebalance_metrics,
    worker_metrics,
)
from sluice.runtime.metrics.recorders import RebalanceStats, StateTimes, TaskSeries, WorkerCounters
from sluice.runtime.metrics.reporters import load_reporters
from sluice.runtime.metrics.snapshot import ConnectorSnapshot, TaskSnapshot, WorkerSnapshot

__all__ = [
    "ConnectorSnapshot",
    "MetricFamily",
    "RebalanceStats",
    "StateTimes",
    "TaskSeries",
    "TaskSnapshot",
    "WorkerCounters",
    "WorkerSnapshot",
    "as_metrics",
    "load_reporters",
    "prometheus_text",
    "rebalance_metrics",
    "worker_metrics",
]
