"""The worker's metrics module: windowed rates and averages from a task's reported totals,
and the Prometheus text it serves (read back with Prometheus' own parser)."""

from __future__ import annotations

import math

from prometheus_client.parser import text_string_to_metric_families

from sluice.runtime.herder.base import State
from sluice.runtime.metrics import MetricFamily, TaskSeries, WorkerCounters, prometheus_text


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_rates_count_from_the_instances_start_over_the_window() -> None:
    clock = Clock()
    series = TaskSeries(window_s=60.0, clock=clock)
    series.begin()
    clock.now += 2
    series.record({"poll_total": 500, "poll_batches": 2, "poll_time_ms": 30.0})
    assert series.rate("poll_total") == 250.0
    assert series.ratio("poll_time_ms", "poll_batches") == 15.0
    clock.now += 2
    series.record({"poll_total": 500, "poll_batches": 2, "poll_time_ms": 30.0})
    assert series.rate("poll_total") == 125.0
    # once the window has passed, what happened before it no longer counts
    for _ in range(40):
        clock.now += 2
        series.record({"poll_total": 500, "poll_batches": 2, "poll_time_ms": 30.0})
    assert series.rate("poll_total") == 0.0
    assert math.isnan(series.ratio("poll_time_ms", "poll_batches"))


def test_a_new_instance_starts_its_totals_again() -> None:
    clock = Clock()
    series = TaskSeries(clock=clock)
    series.record({"read_total": 1000})
    clock.now += 1
    series.record({"read_total": 10})  # restarted without a begin() seen
    assert series.latest() == {"read_total": 10}
    assert series.rate("read_total") == 0.0


def test_the_text_parses_with_prometheus_own_parser() -> None:
    family = MetricFamily("kafka_connect_connector_task_status", "gauge", 'A "task" state\nsecond line')
    family.add(1, connector='with "quotes" \\ and\nnewline ✓', task="0", status="running")
    counter = MetricFamily("kafka_connect_sink_task_sink_record_read_total", "counter", "Records read")
    counter.add(12345, connector="c", task="1")
    average = MetricFamily("kafka_connect_sink_task_put_batch_avg_time_ms", "gauge", "ms")
    average.add(math.nan, connector="c", task="1")
    average.add(2.5, connector="c", task="2")
    parsed = {f.name: f for f in text_string_to_metric_families(prometheus_text([family, counter, average]))}
    status = parsed["kafka_connect_connector_task_status"].samples[0]
    assert status.labels["connector"] == 'with "quotes" \\ and\nnewline ✓' and status.value == 1
    read = parsed["kafka_connect_sink_task_sink_record_read"]  # the parser drops a counter's _total
    assert read.type == "counter" and read.samples[0].value == 12345
    values = [s.value for s in parsed["kafka_connect_sink_task_put_batch_avg_time_ms"].samples]
    assert math.isnan(values[0]) and values[1] == 2.5


def test_running_and_pause_ratios_follow_pause_and_resume() -> None:
    clock = Clock()
    series = TaskSeries(clock=clock)
    states = series.states
    assert states.ratio(State.RUNNING) == 0.0  # no state yet, as Kafka's StateTracker
    states.change(State.RUNNING)
    clock.now += 10
    assert states.ratio(State.RUNNING) == 1.0 and states.ratio(State.PAUSED) == 0.0
    states.change(State.PAUSED)
    clock.now += 10
    assert states.ratio(State.RUNNING) == 0.5 and states.ratio(State.PAUSED) == 0.5
    states.change(State.PAUSED)  # the same state again changes nothing
    clock.now += 10
    assert states.ratio(State.PAUSED) == 20 / 30
    states.change(State.RUNNING)
    clock.now += 10
    assert states.ratio(State.RUNNING) == 0.5 and states.ratio(State.PAUSED) == 0.5
    states.change(State.FAILED)
    clock.now += 40
    assert states.ratio(State.RUNNING) == 0.25 and states.ratio(State.PAUSED) == 0.25
    # the ratios cover the instance's whole life: a new report window does not start them again
    series.begin()
    assert states.ratio(State.FAILED) == 0.5


def test_a_window_maximum_is_the_largest_reported_within_it() -> None:
    clock = Clock()
    series = TaskSeries(window_s=60.0, clock=clock)
    series.begin()
    assert math.isnan(series.window_max("put_time_max_ms", "put_batches"))  # no put yet: Kafka's NaN
    clock.now += 2
    series.record({"put_batches": 3, "put_time_max_ms": 40.0})
    clock.now += 2
    series.record({"put_batches": 5, "put_time_max_ms": 7.0})  # the largest since the report before
    assert series.window_max("put_time_max_ms", "put_batches") == 40.0
    for _ in range(40):  # a minute and more of puts that took 7 ms at most
        clock.now += 2
        series.record({"put_batches": series.latest()["put_batches"] + 1, "put_time_max_ms": 7.0})
    assert series.window_max("put_time_max_ms", "put_batches") == 7.0
    for _ in range(40):  # then no put at all
        clock.now += 2
        series.record({"put_batches": series.latest()["put_batches"], "put_time_max_ms": 0.0})
    assert math.isnan(series.window_max("put_time_max_ms", "put_batches"))


def test_changes_over_the_window_count_from_the_instances_start() -> None:
    clock = Clock()
    series = TaskSeries(clock=clock)
    series.record({"commit_successes": 3, "commit_failures": 1})  # one report only: all of it
    assert series.change("commit_successes") == 3 and series.change("commit_failures") == 1
    series.begin()  # the instance started: what it reports next counts from zero
    clock.now += 2
    series.record({"commit_successes": 5, "commit_failures": 1})
    assert series.change("commit_successes") == 5 and series.change("commit_failures") == 1
    clock.now += 2
    series.record({"commit_successes": 6, "commit_failures": 1})
    assert series.change("commit_successes") == 6


def test_startup_percentages_are_over_the_last_minute() -> None:
    clock = Clock()
    counters = WorkerCounters(clock=clock)
    assert counters.startup_share("task", True) == 0.0  # no start: 0, as Kafka's Frequencies
    counters.task_startup_attempts += 4
    for _ in range(3):
        counters.start_ended("task", True)
    counters.start_ended("task", False)
    counters.start_ended("connector", True)
    assert counters.startup_share("task", True) == 0.75 and counters.startup_share("task", False) == 0.25
    assert counters.startup_share("connector", True) == 1.0
    clock.now += 40
    counters.start_ended("task", False)
    assert counters.startup_share("task", False) == 2 / 5
    clock.now += 30  # the first four starts are over a minute old
    assert counters.startup_share("task", False) == 1.0 and counters.startup_share("task", True) == 0.0
    assert counters.task_startup_successes == 3 and counters.task_startup_failures == 2  # totals stay


def test_heartbeats_totals_are_merged_also_when_one_comes_before_the_instance_began() -> None:
    clock = Clock()
    series = TaskSeries(window_s=60.0, clock=clock)
    series.report({"poll_total": 0.0, "poll_batches": 0.0})  # the instance's first: every total
    series.begin()  # the supervisor hears that it started after that
    clock.now += 2
    series.report({"poll_total": 4.0})
    clock.now += 2
    series.report(None)
    assert series.latest() == {"poll_total": 4.0, "poll_batches": 0.0}
    assert series.rate("poll_total") == 1.0  # 4 over the 4 s since it began
