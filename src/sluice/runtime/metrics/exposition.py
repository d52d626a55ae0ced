"""Kafka Connect's metrics from a :class:`~sluice.runtime.metrics.snapshot.WorkerSnapshot`,
and in Prometheus' text format (``GET /metrics``).

The groups and names are Kafka's (``connect-worker-metrics``, ``connector-metrics``,
``connector-task-metrics``, ``source-task-metrics``, ``sink-task-metrics``,
``task-error-metrics``, ``connect-worker-rebalance-metrics``) with the tags ``connector``
and ``task``, spelled as the Prometheus JMX exporter's usual Kafka Connect rules spell them
(Strimzi's, Confluent's examples): ``kafka_connect_<group>_<name>``, the group without
``-metrics`` (``connect-worker`` as ``worker``), dashes as underscores, and a string
attribute such as a task's ``status`` as a label of a gauge that is 1. ``docs/metrics.md``
lists every name.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from sluice.api.metrics import Metric
from sluice.runtime.herder.base import State
from sluice.runtime.metrics.recorders import RebalanceStats, TaskSeries
from sluice.runtime.metrics.snapshot import WorkerSnapshot

__all__ = ["MetricFamily", "as_metrics", "prometheus_text", "rebalance_metrics", "worker_metrics"]

Labels = tuple[tuple[str, str], ...]


@dataclass
class MetricFamily:
    name: str
    kind: str  # gauge or counter
    help: str
    samples: list[tuple[Labels, float]] = field(default_factory=list)
    group: str = ""  # Kafka's group and name
    kafka_name: str = ""
    string_label: str | None = None  # a string-valued metric: the label holding its value

    def add(self, value: float, **labels: str) -> None:
        self.samples.append((tuple(labels.items()), value))


class _Families:
    def __init__(self) -> None:
        self.by_name: dict[str, MetricFamily] = {}

    def __call__(self, group: str, name: str, help_text: str) -> MetricFamily:
        prometheus = "kafka_connect_" + _group(group) + "_" + name.replace("-", "_").replace(".", "_")
        family = self.by_name.get(prometheus)
        if family is None:
            kind = "counter" if prometheus.endswith("_total") else "gauge"
            family = self.by_name[prometheus] = MetricFamily(
                prometheus, kind, f"{help_text} (Kafka: {group} {name})", group=group, kafka_name=name
            )
        return family


def _group(group: str) -> str:
    short = group.removesuffix("-metrics").removeprefix("connect-")
    return short.replace("-", "_")


def rebalance_metrics(stats: RebalanceStats, now: float) -> list[MetricFamily]:
    families = _Families()
    group = "connect-worker-rebalance-metrics"
    families(group, "completed-rebalances-total", "Rebalances this worker completed").add(stats.completed)
    families(group, "epoch", "The group generation of the last completed rebalance").add(stats.epoch)
    families(group, "leader-name", "The group leader's URL (1 for it)").add(1, leader_name=stats.leader)
    families(group, "connect-protocol", "The group protocol").add(1, connect_protocol="sessioned")
    families(group, "rebalancing", "1 while a rebalance is under way").add(1 if stats.started_at is not None else 0)
    families(group, "rebalance-avg-time-ms", "Average milliseconds a rebalance took").add(
        stats.total_ms / stats.completed if stats.completed else math.nan
    )
    families(group, "rebalance-max-time-ms", "Most milliseconds a rebalance took").add(
        stats.max_ms if stats.completed else math.nan
    )
    since = (now - stats.last_completed_at) * 1000.0 if stats.last_completed_at is not None else -1.0
    families(group, "time-since-last-rebalance-ms", "Milliseconds since the last completed rebalance").add(since)
    return list(families.by_name.values())


_TASK_STATES = ("running", "paused", "failed", "unassigned", "restarting", "destroyed")


def worker_metrics(worker: WorkerSnapshot) -> list[MetricFamily]:
    """A worker's metrics: its connectors and the tasks it runs."""
    families = _Families()
    connectors = worker.connectors
    running_connectors = [c for c in connectors if c.instance_here]
    tasks = [(c.name, task) for c in connectors for task in sorted(c.tasks, key=lambda t: t.task)]
    group = "connect-worker-metrics"
    families(group, "connector-count", "Connectors run by this worker").add(len(running_connectors))
    families(group, "task-count", "Tasks run by this worker").add(len(tasks))
    counters = worker.counters
    for name, value, text in (
        ("connector-startup-attempts-total", counters.connector_startup_attempts, "Connector starts tried"),
        ("connector-startup-success-total", counters.connector_startup_successes, "Connector starts that succeeded"),
        ("connector-startup-failure-total", counters.connector_startup_failures, "Connector starts that failed"),
        ("task-startup-attempts-total", counters.task_startup_attempts, "Task starts tried"),
        ("task-startup-success-total", counters.task_startup_successes, "Task starts that succeeded"),
        ("task-startup-failure-total", counters.task_startup_failures, "Task starts that failed"),
    ):
        families(group, name, text).add(value)
    for kind in ("connector", "task"):
        for outcome, succeeded in (("success", True), ("failure", False)):
            families(
                group,
                f"{kind}-startup-{outcome}-percentage",
                f"Share of the {kind} starts of the last minute that {'succeeded' if succeeded else 'failed'}",
            ).add(counters.startup_share(kind, succeeded))
    for wc in connectors:
        by_state = {state: 0 for state in _TASK_STATES}
        for task in wc.tasks:
            if task.state is not None and task.state.value.lower() in by_state:
                by_state[task.state.value.lower()] += 1
        for state, count in by_state.items():
            families(group, f"connector-{state}-task-count", f"The connector's {state} tasks on this worker").add(
                count, connector=wc.name
            )
        families(group, "connector-total-task-count", "The connector's tasks on this worker").add(
            len(wc.tasks), connector=wc.name
        )
    for wc in running_connectors:
        labels = {"connector": wc.name}
        families("connector-metrics", "status", "The connector's state (1 for the state it is in)").add(
            1, **labels, status=wc.state.value.lower()
        )
        families("connector-metrics", "connector-type", "The connector's type").add(1, **labels, connector_type=wc.kind)
        families("connector-metrics", "connector-class", "The connector's class").add(
            1, **labels, connector_class=wc.connector_class
        )
        families("connector-metrics", "connector-version", "The connector's version").add(
            1, **labels, connector_version=wc.version or "unknown"
        )
    for connector, task in tasks:
        _task_metrics(families, connector, task.task, task.kind, task.state, task.series)
    return list(families.by_name.values())


def _task_metrics(
    families: _Families, connector: str, task_id: int, kind: str, state: State | None, series: TaskSeries
) -> None:
    labels = {"connector": connector, "task": str(task_id)}
    totals = series.latest()
    group = "connector-task-metrics"
    families(group, "status", "The task's state (1 for the state it is in)").add(
        1, **labels, status=(state.value if state is not None else "unassigned").lower()
    )
    families(group, "running-ratio", "The share of its time the task instance has been running").add(
        series.states.ratio(State.RUNNING), **labels
    )
    families(group, "pause-ratio", "The share of its time the task instance has been paused").add(
        series.states.ratio(State.PAUSED), **labels
    )
    if kind == "source":
        records, batches = "poll_total", "poll_batches"
    else:
        records, batches = "send_total", "put_batches"
    families(group, "batch-size-avg", "Records per batch, over the window").add(
        series.ratio(records, batches), **labels
    )
    families(group, "batch-size-max", "Most records in one batch, over the window").add(
        series.window_max("batch_size_max", batches), **labels
    )
    families(group, "offset-commit-avg-time-ms", "Milliseconds per successful offset commit, over the window").add(
        series.ratio("commit_time_ms", "commit_successes"), **labels
    )
    families(group, "offset-commit-max-time-ms", "Most milliseconds a successful offset commit took").add(
        series.window_max("commit_time_max_ms", "commit_successes"), **labels
    )
    successes, failures = series.change("commit_successes"), series.change("commit_failures")
    commits = successes + failures
    families(group, "offset-commit-success-percentage", "Share of the window's offset commits that succeeded").add(
        successes / commits if commits else 0.0, **labels
    )
    families(group, "offset-commit-failure-percentage", "Share of the window's offset commits that failed").add(
        failures / commits if commits else 0.0, **labels
    )
    if kind == "source":
        group = "source-task-metrics"
        families(group, "source-record-poll-total", "Records polled by the task").add(
            totals.get("poll_total", 0), **labels
        )
        families(group, "source-record-poll-rate", "Records polled per second").add(series.rate("poll_total"), **labels)
        families(group, "source-record-write-total", "Records written to Kafka after transforms").add(
            totals.get("write_total", 0), **labels
        )
        families(group, "source-record-write-rate", "Records written to Kafka per second").add(
            series.rate("write_total"), **labels
        )
        families(group, "poll-batch-avg-time-ms", "Milliseconds per poll() that returned records").add(
            series.ratio("poll_time_ms", "poll_batches"), **labels
        )
        families(group, "poll-batch-max-time-ms", "Most milliseconds a poll() that returned records took").add(
            series.window_max("poll_time_max_ms", "poll_batches"), **labels
        )
        active = "Records handed to the producer and not yet acknowledged by Kafka"
    else:
        group = "sink-task-metrics"
        families(group, "sink-record-read-total", "Records read from Kafka").add(totals.get("read_total", 0), **labels)
        families(group, "sink-record-read-rate", "Records read per second").add(series.rate("read_total"), **labels)
        families(group, "sink-record-send-total", "Records put to the task after transforms").add(
            totals.get("send_total", 0), **labels
        )
        families(group, "sink-record-send-rate", "Records put per second").add(series.rate("send_total"), **labels)
        families(group, "put-batch-avg-time-ms", "Milliseconds per put()").add(
            series.ratio("put_time_ms", "put_batches"), **labels
        )
        families(group, "put-batch-max-time-ms", "Most milliseconds a put() took").add(
            series.window_max("put_time_max_ms", "put_batches"), **labels
        )
        families(group, "offset-commit-seq-no", "The sequence number of the last offset commit").add(
            totals.get("commit_seq_no", 0), **labels
        )
        families(group, "offset-commit-completion-total", "Offset commits completed").add(
            totals.get("commit_successes", 0), **labels
        )
        families(group, "offset-commit-completion-rate", "Offset commits completed per second").add(
            series.rate("commit_successes"), **labels
        )
        # Commits wait for their answer before the next one starts: no answer ever comes
        # too late to count, so none is skipped.
        families(group, "offset-commit-skip-total", "Offset commit answers that came too late (none here)").add(
            0, **labels
        )
        families(group, "offset-commit-skip-rate", "Offset commit answers per second that came too late").add(
            0.0, **labels
        )
        families(group, "partition-count", "Topic partitions the task reads").add(
            totals.get("partition_count", 0), **labels
        )
        families(group, "sink-record-lag-max", "Most records any of its partitions is behind (at the last commit)").add(
            totals.get("records_lag", 0), **labels
        )
        active = "Records read from Kafka and not yet committed"
    prefix = "source" if kind == "source" else "sink"
    families(group, f"{prefix}-record-active-count", f"{active}, as last measured").add(
        totals.get("active_count", 0), **labels
    )
    families(group, f"{prefix}-record-active-count-max", f"{active}: the most measured over the window").add(
        series.window_max("active_count_max", "active_count_samples"), **labels
    )
    families(group, f"{prefix}-record-active-count-avg", f"{active}: the average measurement over the window").add(
        series.ratio("active_count_sum", "active_count_samples"), **labels
    )
    group = "task-error-metrics"
    for name, key, text in (
        ("total-record-failures", "record_failures", "Record processing failures, retries included"),
        ("total-record-errors", "record_errors", "Records that failed after retries"),
        ("total-records-skipped", "records_skipped", "Records skipped because of errors (errors.tolerance=all)"),
        ("total-retries", "retries", "Retried operations"),
        ("total-errors-logged", "errors_logged", "Errors logged (errors.log.enable)"),
        ("deadletterqueue-produce-requests", "dlq_requests", "Records written to the dead letter queue"),
        ("deadletterqueue-produce-failures", "dlq_failures", "Failed writes to the dead letter queue"),
        ("last-error-timestamp", "last_error_ms", "Epoch milliseconds of the last error"),
    ):
        families(group, name, text).add(totals.get(key, 0), **labels)


# Metrics whose Kafka value is a string, served as a label of a gauge of 1.
_STRING_LABELS = {"status", "connector_type", "connector_class", "connector_version", "leader_name", "connect_protocol"}


def as_metrics(families: Iterable[MetricFamily]) -> list[Metric]:
    r"""The families as :class:`~sluice.api.metrics.Metric`\ s, for metrics reporters: Kafka's
    group, name and tags, and a string value where Kafka has one."""
    metrics = []
    for family in families:
        for labels, value in family.samples:
            tags = {k: v for k, v in labels if k not in _STRING_LABELS}
            strings = [v for k, v in labels if k in _STRING_LABELS]
            metrics.append(Metric(family.group, family.kafka_name, tags, strings[0] if strings else value, family.help))
    return metrics


def prometheus_text(families: Iterable[MetricFamily]) -> str:
    """The families in Prometheus' text exposition format (version 0.0.4)."""
    lines: list[str] = []
    for family in families:
        lines.append(f"# HELP {family.name} {_escape_help(family.help)}")
        lines.append(f"# TYPE {family.name} {family.kind}")
        for labels, value in family.samples:
            rendered = ",".join(f'{key}="{_escape_label(val)}"' for key, val in labels)
            lines.append(
                f"{family.name}{{{rendered}}} {_number(value)}" if rendered else f"{family.name} {_number(value)}"
            )
    return "\n".join(lines) + "\n"


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _escape_label(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "+Inf" if value > 0 else "-Inf"
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    return str(value)
