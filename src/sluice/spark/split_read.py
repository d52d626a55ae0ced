"""Split reads, the worker's side: a source task's bulk read handed to Spark in parts
(Sluice's extension of the source API,
:meth:`~sluice.api.source.SourceTaskContext.request_split_read`).

This is the path where Spark's engine wins: the worker runs one Spark job, ``range(n)`` in
n partitions, each reading its part on an executor (:mod:`sluice.taskhost.split_part`) and
writing with Spark's Kafka sink. Offsets and counts come back through a Spark accumulator,
which Spark merges only from tasks that succeeded — after their Kafka writes were
acknowledged. PySpark is imported when :func:`run_split_read` is called.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from sluice.api.source import partition_key
from sluice.taskhost.protocol import TaskSpec
from sluice.taskhost.split_part import SOURCE_OUTPUT_DDL, SplitPartSpec, run_split_part

__all__ = ["SplitReadResult", "run_split_read"]


@dataclass
class SplitReadResult:
    """What a split read wrote: records, the last offset of each source partition, the
    topics, and the first failing part's trace."""

    count: int
    offsets: list[tuple[dict[str, Any], dict[str, Any]]]
    failure: str | None
    topics: list[str] = field(default_factory=list)


AFFINITY_ENV = "SLUICE_TASK_AFFINITY"
_ENVIRONMENT_LOCK = threading.Lock()


def _map_in_arrow(frame: Any, func: Callable[..., Any], schema: str, pool: str) -> Any:
    """``frame.mapInArrow`` in a Python worker pool of its own: Spark keeps one pool per
    distinct UDF environment, and the parts' workers must not join the pool the long-lived
    tasks take their Python workers from (a part's worker is busy for a short while only)."""
    environment = frame.sparkSession.sparkContext.environment
    with _ENVIRONMENT_LOCK:
        previous = environment.get(AFFINITY_ENV)
        environment[AFFINITY_ENV] = pool
        try:
            return frame.mapInArrow(func, schema)
        finally:
            if previous is None:
                environment.pop(AFFINITY_ENV, None)
            else:
                environment[AFFINITY_ENV] = previous


def run_split_read(spark: Any, task: TaskSpec, kafka_options: dict[str, str], parts: list[bytes]) -> SplitReadResult:
    """Read the parts of a split read (each as the task host pickled it) in one Spark job,
    one partition per part, and write
    them with Spark's Kafka sink (``kafka_options``: its ``kafka.*`` producer settings).
    Offsets and counts of the parts are merged; the first failing part's trace is the
    failure."""
    from pyspark.accumulators import AccumulatorParam

    from sluice.spark.session import TIMESTAMP_INTERCEPTOR_CONF

    class ListParam(AccumulatorParam):
        def zero(self, value: list[Any]) -> list[Any]:
            return []

        def addInPlace(self, a: list[Any], b: list[Any]) -> list[Any]:  # PySpark's name
            a.extend(b)
            return a

    options = dict(kafka_options)
    interceptor = spark.conf.get(TIMESTAMP_INTERCEPTOR_CONF, None)
    if interceptor:
        chained = [c for c in options.get("kafka.interceptor.classes", "").split(",") if c.strip()]
        options["kafka.interceptor.classes"] = ",".join([interceptor, *chained])
    specs = [SplitPartSpec(task, 0, i, part, bool(interceptor)) for i, part in enumerate(parts)]
    report = spark.sparkContext.accumulator([], ListParam())

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        indexes = [i for b in batches for i in b.column(0).to_pylist()]
        for index in indexes:  # one per partition: range(n) with n partitions
            yield from run_split_part(specs[index], report)

    spark.sparkContext.setJobGroup(
        f"sluice:{task.connector}:{task.task}:split", f"Split read of task {task.connector}-{task.task}"
    )
    frame = _map_in_arrow(
        spark.range(0, len(parts), 1, len(parts)), read, SOURCE_OUTPUT_DDL, f"{task.connector}/{task.task}/split"
    )
    writer = frame.write.format("kafka")
    for key, value in options.items():
        writer = writer.option(key, value)
    writer.save()
    entries = sorted(report.value, key=lambda e: e[2])
    offsets: dict[Any, tuple[dict[str, Any], dict[str, Any]]] = {}
    topics: set[str] = set()
    count, failure = 0, None
    for _, _, _, part_offsets, part_count, part_failure, part_topics in entries:
        count += part_count
        topics.update(part_topics)
        failure = failure or part_failure
        for partition, offset in part_offsets:
            offsets[partition_key(partition)] = (partition, offset)
    if len(entries) < len(parts) and failure is None:
        failure = f"{len(parts) - len(entries)} of {len(parts)} parts of a split read reported nothing"
    return SplitReadResult(count, list(offsets.values()), failure, sorted(topics))
