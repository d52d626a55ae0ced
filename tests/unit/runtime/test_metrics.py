"""The worker's metrics module: windowed rates and averages from a task's reported totals,
and the Prometheus text it serves (read back with Prometheus' own parser)."""

from __future__ import annotations

import math

from prometheus_client.parser import text_string_to_metric_families

from sluice.runtime.metrics import MetricFamily, TaskSeries, prometheus_text


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
