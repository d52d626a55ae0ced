"""Kafka Connect's metrics, in Prometheus' text format (``GET /metrics``).

The groups and names are Kafka's (``connect-worker-metrics``, ``connector-metrics``,
``connector-task-metrics``, ``source-task-metrics``, ``sink-task-metrics``,
``task-error-metrics``) with the tags ``connector`` and ``task``, spelled as the Prometheus
JMX exporter's usual Kafka Connect rules spell them (Strimzi's, Confluent's examples):
``kafka_connect_<group>_<name>``, the group without ``-metrics`` (``connect-worker`` as
``worker``), dashes as underscores, and a string attribute such as a task's ``status`` as a
label of a gauge that is 1. ``docs/metrics.md`` lists every name.

Tasks count where they run (:class:`sluice.spark.task_metrics.TaskMeter`, on the executor)
and send their totals with each heartbeat; :class:`TaskSeries` keeps those of the last
window here and turns them into rates, averages and maxima, as Kafka's windowed ``Rate``,
``Avg`` and ``Max`` do over Kafka's default window (``metrics.sample.window.ms`` ×
``metrics.num.samples``, 30 s × 2). A task's states are timed here, on the worker, as the
worker reports them (:class:`StateTimes`, Kafka's ``StateTracker``).
"""

from __future__ import annotations

import importlib
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sluice.api.errors import ConfigError
from sluice.api.metrics import Metric, MetricsReporter
from sluice.runtime.herder.base import State

if TYPE_CHECKING:
    from sluice.runtime.worker import Worker

__all__ = [
    "MetricFamily",
    "RebalanceStats",
    "StateTimes",
    "TaskSeries",
    "WorkerCounters",
    "prometheus_text",
    "rebalance_metrics",
    "worker_metrics",
]

WINDOW_S = 60.0

Labels = tuple[tuple[str, str], ...]

log = logging.getLogger(__name__)


class StateTimes:
    """How long one task instance has been in each state since its first one (Kafka's
    ``StateTracker``, behind ``running-ratio`` and ``pause-ratio``): not windowed, as in
    Kafka, the ratios cover the instance's whole life."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._state: State | None = None
        self._since = 0.0
        self._spent: dict[State, float] = {}

    def change(self, state: State) -> None:
        now = self._clock()
        with self._lock:
            if state is self._state:
                return
            if self._state is not None:
                self._spent[self._state] = self._spent.get(self._state, 0.0) + (now - self._since)
            self._state, self._since = state, now

    @property
    def state(self) -> State | None:
        return self._state

    def ratio(self, state: State) -> float:
        """The share of the instance's time spent in ``state``: 0 before its first state,
        NaN at the very instant of it (no time spent yet), as Kafka."""
        now = self._clock()
        with self._lock:
            if self._state is None:
                return 0.0
            current = now - self._since
            total = current + sum(self._spent.values())
            spent = self._spent.get(state, 0.0) + (current if state is self._state else 0.0)
        return spent / total if total > 0 else math.nan


class TaskSeries:
    """A running task's reported totals over the last window, and its instance's state times."""

    def __init__(self, window_s: float = WINDOW_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.window_s = window_s
        self._clock = clock
        self._samples: deque[tuple[float, dict[str, float]]] = deque()
        self._lock = threading.Lock()
        self.states = StateTimes(clock)

    def begin(self) -> None:
        """A task instance started: its totals are all zero now (so what it does before its
        first report counts in the window's rates)."""
        with self._lock:
            self._samples.clear()
            self._samples.append((self._clock(), {}))

    def record(self, totals: dict[str, float]) -> None:
        now = self._clock()
        with self._lock:
            if self._samples and any(
                totals.get(k, 0) < v for k, v in self._samples[-1][1].items() if k.endswith("total")
            ):
                self._samples.clear()  # a new instance of the task: its totals start again
            self._samples.append((now, dict(totals)))
            while len(self._samples) > 2 and now - self._samples[1][0] >= self.window_s:
                self._samples.popleft()

    def latest(self) -> dict[str, float]:
        with self._lock:
            return dict(self._samples[-1][1]) if self._samples else {}

    def _ends(self) -> tuple[tuple[float, dict[str, float]], tuple[float, dict[str, float]]] | None:
        with self._lock:
            if not self._samples:
                return None
            return self._samples[0], self._samples[-1]

    def change(self, name: str) -> float:
        """How much a total grew over the window (since the instance started, while the
        window holds one report only)."""
        ends = self._ends()
        if ends is None:
            return 0.0
        (_, first), (_, last) = ends
        if first is last:
            first = {}
        return last.get(name, 0) - first.get(name, 0)

    def rate(self, name: str) -> float:
        """Per second over the window (0 before two reports)."""
        ends = self._ends()
        if ends is None:
            return 0.0
        (t0, first), (t1, last) = ends
        if t1 <= t0:
            return 0.0
        return (last.get(name, 0) - first.get(name, 0)) / (t1 - t0)

    def ratio(self, numerator: str, denominator: str) -> float:
        """The window's increase of one total over another's; NaN when the second did not
        move (Kafka's ``Avg`` of no event)."""
        change = self.change(denominator)
        if change <= 0:
            return math.nan
        return self.change(numerator) / change

    def window_max(self, name: str, events: str) -> float:
        """The largest of the ``name`` maxima the reports of the window carry (each report's is
        the largest since the one before); NaN when the total ``events`` did not move (Kafka's
        ``Max`` of no event)."""
        if self.change(events) <= 0:
            return math.nan
        with self._lock:
            samples = list(self._samples)
        # the oldest report is the window's starting point: its maximum is from before it
        recent = samples[1:] if len(samples) > 1 else samples
        return float(max(totals.get(name, 0) for _, totals in recent))


@dataclass
class WorkerCounters:
    """The worker's own totals (``connect-worker-metrics``), and the results of the
    connector and task starts of the last window, for the startup percentages (Kafka's
    ``Frequencies``)."""

    connector_startup_attempts: int = 0
    connector_startup_successes: int = 0
    connector_startup_failures: int = 0
    task_startup_attempts: int = 0
    task_startup_successes: int = 0
    task_startup_failures: int = 0
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)
    window_s: float = field(default=WINDOW_S, repr=False, compare=False)
    _results: dict[str, deque[tuple[float, bool]]] = field(
        default_factory=lambda: {"connector": deque(), "task": deque()}, init=False, repr=False, compare=False
    )
    _results_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def start_ended(self, kind: str, succeeded: bool) -> None:
        """A ``kind`` (``connector`` or ``task``) start succeeded or failed: counted in its
        total, and noted with its time for the window's percentages."""
        outcome = "successes" if succeeded else "failures"
        now = self.clock()
        with self._results_lock:
            name = f"{kind}_startup_{outcome}"
            setattr(self, name, getattr(self, name) + 1)
            self._results[kind].append((now, succeeded))
            self._forget(self._results[kind], now)

    def _forget(self, results: deque[tuple[float, bool]], now: float) -> None:
        while results and now - results[0][0] > self.window_s:
            results.popleft()

    def startup_share(self, kind: str, succeeded: bool) -> float:
        """The share of the ``kind`` (``connector`` or ``task``) starts of the window that
        succeeded (or failed); 0 when there was none, as Kafka's ``Frequencies``."""
        with self._results_lock:
            results = self._results[kind]
            self._forget(results, self.clock())
            if not results:
                return 0.0
            return sum(1 for _, ok in results if ok is succeeded) / len(results)


@dataclass
class RebalanceStats:
    """A distributed worker's rebalances (``connect-worker-rebalance-metrics``)."""

    completed: int = 0
    epoch: int = -1
    leader: str = ""
    started_at: float | None = None  # monotonic; set while a rebalance is under way
    last_completed_at: float | None = None
    total_ms: float = 0.0
    max_ms: float = 0.0

    def begin(self, now: float) -> None:
        if self.started_at is None:
            self.started_at = now

    def complete(self, now: float, epoch: int, leader: str | None) -> None:
        if self.started_at is not None:
            took = (now - self.started_at) * 1000.0
            self.total_ms += took
            self.max_ms = max(self.max_ms, took)
        self.started_at = None
        self.completed += 1
        self.epoch = epoch
        self.leader = leader or ""
        self.last_completed_at = now


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


_TASK_STATES = ("running", "paused", "failed", "unassigned", "restarting", "destroyed")


def worker_metrics(worker: Worker) -> list[MetricFamily]:
    """This worker's metrics: its connectors and the tasks it runs."""
    families = _Families()
    connectors = worker.hosted_connectors()
    running_connectors = [c for c in connectors if c.connector is not None]
    tasks = [(c.name, task_id, task) for c in connectors for task_id, task in sorted(c.tasks.items())]
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
        for task in wc.tasks.values():
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
            1, **labels, connector_class=wc.config.get("connector.class", "")
        )
        families("connector-metrics", "connector-version", "The connector's version").add(
            1, **labels, connector_version=wc.version or "unknown"
        )
    for connector, task_id, task in tasks:
        _task_metrics(families, connector, task_id, task.kind, task.state, task.series)
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


def load_reporters(
    names: str | None, configs: dict[str, str], metrics: Callable[[], list[Metric]]
) -> list[MetricsReporter]:
    """The ``metric.reporters`` (Python paths), configured and initialised. Kafka's own
    reporters (``org.apache.kafka…``, JMX) have no Python form: they are skipped, logged.
    Raises :class:`~sluice.api.errors.ConfigError` naming a reporter that cannot be made."""
    reporters: list[MetricsReporter] = []
    for name in [n.strip() for n in (names or "").split(",") if n.strip()]:
        if name.startswith("org.apache.kafka."):
            log.info("metric.reporters: %s is Kafka's (JMX); Sluice serves its metrics at GET /metrics", name)
            continue
        module, _, attribute = name.rpartition(".")
        try:
            cls = getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError, ValueError) as exc:
            raise ConfigError(f"metric.reporters: cannot load {name}: {exc}") from None
        if not (isinstance(cls, type) and issubclass(cls, MetricsReporter)):
            raise ConfigError(f"metric.reporters: {name} is not a sluice.api.metrics.MetricsReporter")
        reporter = cls()
        reporter.configure(dict(configs))
        reporter.init(metrics)
        reporters.append(reporter)
    return reporters


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
