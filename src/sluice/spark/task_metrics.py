"""What a running task counts where its work happens (on the executor), for the worker's
metrics: plain integer and float attributes bumped on the task thread, read as one snapshot
by the heartbeat thread and sent to the worker with each heartbeat. Totals only; the worker
turns them into Kafka Connect's rates, averages and ratios (:mod:`sluice.runtime.metrics`).
"""

from __future__ import annotations

__all__ = ["TaskMeter"]


class TaskMeter:
    """One task instance's running totals since it started."""

    __slots__ = (
        "poll_total",
        "poll_batches",
        "poll_time_ms",
        "write_total",
        "read_total",
        "send_total",
        "put_batches",
        "put_time_ms",
        "partition_count",
        "records_lag",
        "batch_size_max",
        "commit_successes",
        "commit_failures",
        "record_failures",
        "record_errors",
        "records_skipped",
        "retries",
        "errors_logged",
        "dlq_requests",
        "dlq_failures",
        "last_error_ms",
    )

    def __init__(self) -> None:
        # source-task-metrics
        self.poll_total = 0
        self.poll_batches = 0
        self.poll_time_ms = 0.0
        self.write_total = 0
        # sink-task-metrics (gauges: partition_count, records_lag as of the last commit)
        self.read_total = 0
        self.send_total = 0
        self.put_batches = 0
        self.put_time_ms = 0.0
        self.partition_count = 0
        self.records_lag = 0
        # connector-task-metrics
        self.batch_size_max = 0
        self.commit_successes = 0
        self.commit_failures = 0
        # task-error-metrics
        self.record_failures = 0
        self.record_errors = 0
        self.records_skipped = 0
        self.retries = 0
        self.errors_logged = 0
        self.dlq_requests = 0
        self.dlq_failures = 0
        self.last_error_ms = 0

    def batch(self, size: int) -> None:
        if size > self.batch_size_max:
            self.batch_size_max = size

    def snapshot(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in self.__slots__}
