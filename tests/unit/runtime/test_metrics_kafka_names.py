"""Every metric Kafka Connect defines in the groups Sluice serves is served, with Kafka's
group, name and tags, and its value computed as Kafka computes it (from a task's reports
over the window, its state times, the worker's counters); and the herder times each task
state the worker reports."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from sluice.runtime.herder.base import State
from sluice.runtime.herder.worker_herder import WorkerHerder
from sluice.runtime.metrics import (
    ConnectorSnapshot,
    TaskSeries,
    TaskSnapshot,
    WorkerCounters,
    WorkerSnapshot,
    as_metrics,
    prometheus_text,
    worker_metrics,
)

WORKER = {
    "connector-count",
    "task-count",
    "connector-startup-attempts-total",
    "connector-startup-success-total",
    "connector-startup-success-percentage",
    "connector-startup-failure-total",
    "connector-startup-failure-percentage",
    "task-startup-attempts-total",
    "task-startup-success-total",
    "task-startup-success-percentage",
    "task-startup-failure-total",
    "task-startup-failure-percentage",
}
WORKER_PER_CONNECTOR = {
    f"connector-{s}-task-count"
    for s in ("total", "running", "paused", "failed", "unassigned", "destroyed", "restarting")
}
CONNECTOR = {"status", "connector-type", "connector-class", "connector-version"}
TASK = {
    "status",
    "running-ratio",
    "pause-ratio",
    "offset-commit-max-time-ms",
    "offset-commit-avg-time-ms",
    "batch-size-max",
    "batch-size-avg",
    "offset-commit-failure-percentage",
    "offset-commit-success-percentage",
}
SOURCE_TASK = {
    "source-record-poll-rate",
    "source-record-poll-total",
    "source-record-write-rate",
    "source-record-write-total",
    "poll-batch-max-time-ms",
    "poll-batch-avg-time-ms",
    "source-record-active-count",
    "source-record-active-count-max",
    "source-record-active-count-avg",
}
SINK_TASK = {
    "sink-record-read-rate",
    "sink-record-read-total",
    "sink-record-send-rate",
    "sink-record-send-total",
    "sink-record-lag-max",
    "partition-count",
    "offset-commit-seq-no",
    "offset-commit-completion-rate",
    "offset-commit-completion-total",
    "offset-commit-skip-rate",
    "offset-commit-skip-total",
    "put-batch-max-time-ms",
    "put-batch-avg-time-ms",
    "sink-record-active-count",
    "sink-record-active-count-max",
    "sink-record-active-count-avg",
}
TASK_ERRORS = {
    "total-record-failures",
    "total-record-errors",
    "total-records-skipped",
    "total-retries",
    "total-errors-logged",
    "deadletterqueue-produce-requests",
    "deadletterqueue-produce-failures",
    "last-error-timestamp",
}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _task(kind: str, clock: Clock) -> Any:
    return SimpleNamespace(kind=kind, state=State.RUNNING, series=TaskSeries(clock=clock))


def _worker(clock: Clock) -> Any:
    source, sink = _task("source", clock), _task("sink", clock)

    def connector(name: str, kind: str, task: Any) -> Any:
        return SimpleNamespace(
            name=name,
            connector=object(),
            tasks={0: task},
            state=State.RUNNING,
            kind=kind,
            config={"connector.class": f"{kind.title()}Connector"},
            version="1.0",
        )

    connectors = [connector("src", "source", source), connector("snk", "sink", sink)]
    return SimpleNamespace(
        hosted_connectors=lambda: connectors,
        counters=WorkerCounters(clock=clock),
        source=source,
        sink=sink,
        task_states=lambda name: {c.name: c.tasks for c in connectors}.get(name, {}),
        admin_client=lambda: None,
        status_hook=None,
    )


def _snapshot(worker: Any) -> WorkerSnapshot:
    """What the worker's metrics_snapshot() gives, from the stand-in worker."""
    connectors = tuple(
        ConnectorSnapshot(
            c.name,
            c.kind,
            c.connector is not None,
            c.state,
            c.config["connector.class"],
            c.version,
            tuple(TaskSnapshot(i, t.kind, t.state, t.series) for i, t in c.tasks.items()),
        )
        for c in worker.hosted_connectors()
    )
    return WorkerSnapshot(worker.counters, connectors)


def _served(worker: Any) -> dict[tuple[str, str, str], Any]:
    return {(m.group, m.name, m.tags.get("connector", "")): m for m in as_metrics(worker_metrics(_snapshot(worker)))}


def test_every_kafka_metric_of_the_groups_is_served_with_its_tags() -> None:
    served = _served(_worker(Clock()))
    names = {(group, name) for group, name, _ in served}
    assert {("connect-worker-metrics", n) for n in WORKER | WORKER_PER_CONNECTOR} <= names
    assert {("connector-metrics", n) for n in CONNECTOR} <= names
    assert {("connector-task-metrics", n) for n in TASK} <= names
    assert {("source-task-metrics", n) for n in SOURCE_TASK} <= names
    assert {("sink-task-metrics", n) for n in SINK_TASK} <= names
    assert {("task-error-metrics", n) for n in TASK_ERRORS} <= names
    for (group, name, connector), metric in served.items():
        if group in ("connector-task-metrics", "source-task-metrics", "sink-task-metrics", "task-error-metrics"):
            assert metric.tags == {"connector": connector, "task": "0"}, (group, name)
    assert served[("connect-worker-metrics", "connector-running-task-count", "src")].tags == {"connector": "src"}
    # a source task serves no sink metrics and the other way round
    assert ("sink-task-metrics", "partition-count", "src") not in served
    assert ("source-task-metrics", "poll-batch-max-time-ms", "snk") not in served


def test_task_values_as_a_dashboard_reads_them() -> None:
    clock = Clock()
    worker = _worker(clock)
    sink = worker.sink.series
    sink.begin()
    sink.states.change(State.RUNNING)
    clock.now += 2
    sink.record(
        {
            "read_total": 1000,
            "send_total": 1000,
            "put_batches": 4,
            "put_time_ms": 20.0,
            "put_time_max_ms": 8.0,
            "batch_size_max": 400,
            "commit_successes": 3,
            "commit_failures": 1,
            "commit_time_ms": 9.0,
            "commit_time_max_ms": 5.0,
            "commit_seq_no": 4,
            "active_count": 0,
            "active_count_sum": 1500,
            "active_count_samples": 5,
            "active_count_max": 1000,
        }
    )
    worker.sink.state = State.PAUSED
    sink.states.change(State.PAUSED)
    clock.now += 2
    served = _served(worker)

    def value(group: str, name: str) -> Any:
        return served[(group, name, "snk")].value

    assert value("connector-task-metrics", "status") == "paused"
    assert value("connector-task-metrics", "running-ratio") == 0.5
    assert value("connector-task-metrics", "pause-ratio") == 0.5
    assert value("connector-task-metrics", "batch-size-avg") == 250.0
    assert value("connector-task-metrics", "batch-size-max") == 400
    assert value("connector-task-metrics", "offset-commit-avg-time-ms") == 3.0
    assert value("connector-task-metrics", "offset-commit-max-time-ms") == 5.0
    assert value("connector-task-metrics", "offset-commit-success-percentage") == 0.75
    assert value("connector-task-metrics", "offset-commit-failure-percentage") == 0.25
    assert value("sink-task-metrics", "put-batch-avg-time-ms") == 5.0
    assert value("sink-task-metrics", "put-batch-max-time-ms") == 8.0
    assert value("sink-task-metrics", "offset-commit-seq-no") == 4
    assert value("sink-task-metrics", "offset-commit-completion-total") == 3
    assert value("sink-task-metrics", "offset-commit-skip-total") == 0
    assert value("sink-task-metrics", "sink-record-active-count") == 0
    assert value("sink-task-metrics", "sink-record-active-count-max") == 1000
    assert value("sink-task-metrics", "sink-record-active-count-avg") == 300.0
    # a task that has reported nothing yet: no average or maximum (Kafka's NaN), no commit share
    assert math.isnan(served[("source-task-metrics", "poll-batch-max-time-ms", "src")].value)
    assert math.isnan(served[("source-task-metrics", "source-record-active-count-avg", "src")].value)
    assert served[("connector-task-metrics", "offset-commit-success-percentage", "src")].value == 0.0
    assert served[("connector-task-metrics", "running-ratio", "src")].value == 0.0


def test_the_new_names_in_prometheus_text() -> None:
    clock = Clock()
    worker = _worker(clock)
    worker.counters.start_ended("task", True)
    text = prometheus_text(worker_metrics(_snapshot(worker)))
    families = {f.name: f for f in text_string_to_metric_families(text)}
    for name in (
        "kafka_connect_connector_task_running_ratio",
        "kafka_connect_connector_task_pause_ratio",
        "kafka_connect_connector_task_offset_commit_avg_time_ms",
        "kafka_connect_source_task_source_record_active_count",
        "kafka_connect_source_task_poll_batch_max_time_ms",
        "kafka_connect_sink_task_put_batch_max_time_ms",
        "kafka_connect_sink_task_offset_commit_seq_no",
        "kafka_connect_sink_task_sink_record_active_count_avg",
        "kafka_connect_worker_task_startup_success_percentage",
    ):
        assert families[name].type == "gauge", name
    assert families["kafka_connect_sink_task_offset_commit_skip"].type == "counter"  # _total: a counter
    [share] = families["kafka_connect_worker_task_startup_success_percentage"].samples
    assert share.value == 1.0


def test_the_herder_times_the_states_the_worker_reports_for_a_task() -> None:
    clock = Clock()
    worker = _worker(clock)
    snapshot = SimpleNamespace(connector_config=lambda name: {})

    class Herder(WorkerHerder):  # the writes (abstract here) play no part
        pass

    Herder.__abstractmethods__ = frozenset()
    make: Any = Herder
    herder = make(worker, SimpleNamespace(snapshot=lambda: snapshot), SimpleNamespace(), lambda: None)
    hook = worker.status_hook
    assert hook == herder._on_status  # what the worker calls
    assert hook("src", 0, State.RUNNING, None) is None
    clock.now += 30
    hook("src", 0, State.PAUSED, None)
    clock.now += 10
    hook("src", None, State.PAUSED, None)  # the connector's own status: no task's
    hook("src", 7, State.FAILED, "trace")  # a task not (or no longer) among the worker's: ignored
    states = worker.source.series.states
    assert states.state is State.PAUSED
    assert states.ratio(State.RUNNING) == 0.75 and states.ratio(State.PAUSED) == 0.25
