"""What a running task counts where its work happens (on the executor), for the worker's
metrics: plain integer and float attributes bumped on the task thread, read as one snapshot
by the heartbeat thread and sent to the worker with each heartbeat. The worker turns them
into Kafka Connect's rates, averages, maxima and ratios (:mod:`sluice.runtime.metrics`).

Everything is counted per batch (a ``poll()``, a ``put()``, an offset commit), never per
record. Most values are totals since the task instance started. The ``*_max`` values are
the largest seen since the previous snapshot (each snapshot starts them again), so that the
worker can take the largest over its window as Kafka's windowed ``Max`` does; they and the
totals they go with are updated under a lock, once per batch, so that a snapshot never
loses one.
"""

from __future__ import annotations

import threading

__all__ = ["TaskMeter"]

# The largest values since the previous snapshot; every snapshot starts them again at 0.
_INTERVAL_MAXIMA = (
    "batch_size_max",
    "poll_time_max_ms",
    "put_time_max_ms",
    "commit_time_max_ms",
    "active_count_max",
)


class TaskMeter:
    """One task instance's running totals since it started."""

    __slots__ = (
        "poll_total",
        "poll_batches",
        "poll_time_ms",
        "poll_time_max_ms",
        "write_total",
        "read_total",
        "send_total",
        "put_batches",
        "put_time_ms",
        "put_time_max_ms",
        "partition_count",
        "records_lag",
        "active_count",
        "active_count_sum",
        "active_count_samples",
        "active_count_max",
        "batch_size_max",
        "commit_successes",
        "commit_failures",
        "commit_time_ms",
        "commit_time_max_ms",
        "commit_seq_no",
        "record_failures",
        "record_errors",
        "records_skipped",
        "retries",
        "errors_logged",
        "dlq_requests",
        "dlq_failures",
        "last_error_ms",
        "_lock",
    )

    def __init__(self) -> None:
        # source-task-metrics
        self.poll_total = 0
        self.poll_batches = 0
        self.poll_time_ms = 0.0
        self.poll_time_max_ms = 0.0
        self.write_total = 0
        # sink-task-metrics (gauges: partition_count, records_lag as of the last commit;
        # commit_seq_no the last commit's sequence number)
        self.read_total = 0
        self.send_total = 0
        self.put_batches = 0
        self.put_time_ms = 0.0
        self.put_time_max_ms = 0.0
        self.partition_count = 0
        self.records_lag = 0
        self.commit_seq_no = 0
        # source- and sink-record-active-count: the last value measured, and the sum and
        # number of the measurements (for the window's average)
        self.active_count = 0
        self.active_count_sum = 0
        self.active_count_samples = 0
        self.active_count_max = 0
        # connector-task-metrics
        self.batch_size_max = 0
        self.commit_successes = 0
        self.commit_failures = 0
        self.commit_time_ms = 0.0  # of the successful commits, as Kafka times them
        self.commit_time_max_ms = 0.0
        # task-error-metrics
        self.record_failures = 0
        self.record_errors = 0
        self.records_skipped = 0
        self.retries = 0
        self.errors_logged = 0
        self.dlq_requests = 0
        self.dlq_failures = 0
        self.last_error_ms = 0
        self._lock = threading.Lock()

    def polled(self, size: int, took_ms: float) -> None:
        """A source task's ``poll()`` returned ``size`` records (``size`` > 0) in ``took_ms``."""
        with self._lock:
            self.poll_total += size
            self.poll_batches += 1
            self.poll_time_ms += took_ms
            if took_ms > self.poll_time_max_ms:
                self.poll_time_max_ms = took_ms
            if size > self.batch_size_max:
                self.batch_size_max = size

    def put(self, size: int, took_ms: float) -> None:
        """A sink task's ``put()`` of ``size`` records (``size`` > 0) returned after ``took_ms``."""
        with self._lock:
            self.put_batches += 1
            self.put_time_ms += took_ms
            if took_ms > self.put_time_max_ms:
                self.put_time_max_ms = took_ms
            if size > self.batch_size_max:
                self.batch_size_max = size

    def committed(self, took_ms: float) -> None:
        """An offset commit succeeded after ``took_ms``."""
        with self._lock:
            self.commit_successes += 1
            self.commit_time_ms += took_ms
            if took_ms > self.commit_time_max_ms:
                self.commit_time_max_ms = took_ms

    def active(self, count: int) -> None:
        """The records the task has in hand now (source: handed to the producer and not yet
        acknowledged by Kafka; sink: read and not yet committed)."""
        with self._lock:
            self.active_count = count
            self.active_count_sum += count
            self.active_count_samples += 1
            if count > self.active_count_max:
                self.active_count_max = count

    def snapshot(self) -> dict[str, float]:
        """Every value, as of now; the ``*_max`` ones start again."""
        with self._lock:
            values: dict[str, float] = {name: getattr(self, name) for name in self.__slots__ if name[0] != "_"}
            for name in _INTERVAL_MAXIMA:
                setattr(self, name, 0)
        return values
