"""The executor's per-batch counting (:class:`TaskMeter`): totals that only grow, and maxima
that each snapshot (each heartbeat) starts again, so the worker can take a window's maximum."""

from __future__ import annotations

import threading

from sluice.taskhost.metering import TaskMeter


def test_a_poll_counts_its_records_time_and_batch_size() -> None:
    meter = TaskMeter()
    meter.polled(500, 12.5)
    meter.polled(20, 40.0)
    snap = meter.snapshot()
    assert snap["poll_total"] == 520 and snap["poll_batches"] == 2
    assert snap["poll_time_ms"] == 52.5 and snap["poll_time_max_ms"] == 40.0
    assert snap["batch_size_max"] == 500


def test_a_snapshot_starts_the_maxima_again_but_not_the_totals() -> None:
    meter = TaskMeter()
    meter.put(300, 9.0)
    meter.committed(4.0)
    meter.active(300)
    first = meter.snapshot()
    assert first["put_time_max_ms"] == 9.0 and first["commit_time_max_ms"] == 4.0 and first["active_count_max"] == 300
    meter.put(10, 1.0)
    meter.active(0)
    second = meter.snapshot()
    assert second["batch_size_max"] == 10 and second["put_time_max_ms"] == 1.0 and second["active_count_max"] == 0
    assert second["commit_time_max_ms"] == 0  # no commit since the last snapshot
    assert second["put_batches"] == 2 and second["put_time_ms"] == 10.0
    assert second["commit_successes"] == 1 and second["commit_time_ms"] == 4.0
    assert second["active_count"] == 0 and second["active_count_sum"] == 300 and second["active_count_samples"] == 2


def test_the_snapshot_holds_plain_values_only() -> None:
    snap = TaskMeter().snapshot()
    assert not any(name.startswith("_") for name in snap)
    assert all(isinstance(v, int | float) for v in snap.values())


def test_no_maximum_is_lost_to_a_concurrent_snapshot() -> None:
    """The heartbeat thread snapshots while the task thread counts: every batch's size is
    in exactly one snapshot's maximum or in the final one."""
    meter = TaskMeter()
    sizes = range(1, 20001)
    seen: list[float] = []
    done = threading.Event()

    def heartbeats() -> None:
        while not done.is_set():
            seen.append(meter.snapshot()["batch_size_max"])

    thread = threading.Thread(target=heartbeats)
    thread.start()
    try:
        for size in sizes:
            meter.polled(size, 0.0)
    finally:
        done.set()
        thread.join()
    seen.append(meter.snapshot()["batch_size_max"])
    assert max(seen) == max(sizes)
    assert meter.snapshot()["poll_total"] == sum(sizes)
