"""What the console reads from a worker's ``GET /metrics`` (Prometheus' text format, as
Sluice serves it): each task's records per second in and out and a sink's lag. Kafka
Connect itself serves its metrics over JMX only; then there is nothing to show."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = ["TaskRates", "parse_samples", "task_rates"]

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}

# (records in, records out) per second, by the task's kind
_RATES = {
    "source": (
        "kafka_connect_source_task_source_record_poll_rate",
        "kafka_connect_source_task_source_record_write_rate",
    ),
    "sink": ("kafka_connect_sink_task_sink_record_read_rate", "kafka_connect_sink_task_sink_record_send_rate"),
}
_LAG = "kafka_connect_sink_task_sink_record_lag_max"


@dataclass
class TaskRates:
    task: int
    kind: str
    records_in: float
    records_out: float
    lag: float | None  # sinks only


def parse_samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    samples = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        if match is None:
            continue
        name, labels_text, raw = match.groups()
        labels = {
            key: re.sub(r"\\[\\\"n]", lambda m: _UNESCAPE[m.group()], value)
            for key, value in _LABEL.findall(labels_text or "")
        }
        try:
            number = float(raw)
        except ValueError:
            continue
        samples.append((name, labels, number))
    return samples


def task_rates(text: str, connector: str) -> list[TaskRates]:
    """The connector's tasks on the worker that served ``text``, by task id."""
    by_task: dict[int, dict[str, float]] = {}
    wanted = {name for pair in _RATES.values() for name in pair} | {_LAG}
    for name, labels, number in parse_samples(text):
        if name in wanted and labels.get("connector") == connector and labels.get("task", "").isdigit():
            by_task.setdefault(int(labels["task"]), {})[name] = 0.0 if math.isnan(number) else number
    rates = []
    for task, values in sorted(by_task.items()):
        kind = "source" if _RATES["source"][0] in values else "sink"
        records_in, records_out = _RATES[kind]
        rates.append(
            TaskRates(
                task,
                kind,
                values.get(records_in, 0.0),
                values.get(records_out, 0.0),
                values.get(_LAG) if kind == "sink" else None,
            )
        )
    return rates
