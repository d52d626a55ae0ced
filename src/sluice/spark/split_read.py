"""Split reads: a source task's bulk read handed to Spark in parts (Sluice's extension of
the source API, :meth:`~sluice.api.source.SourceTaskContext.request_split_read`).

This is the path where Spark's engine wins: the worker runs one Spark job, ``range(n)`` in
n partitions, each calling the task class's ``read_split`` for its part with the task's
converters, transforms and error handling, and writing with Spark's Kafka sink. Offsets
and counts come back through a Spark accumulator, which Spark merges only from tasks that
succeeded — after their Kafka writes were acknowledged.

:func:`run_split_part` runs on the executors; :func:`run_split_read` on the worker (it
imports PySpark when called).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from sluice.api.records import SourceRecord
from sluice.api.source import partition_key
from sluice.spark.protocol import TaskSpec
from sluice.spark.record_pipeline import RecordPipeline
from sluice.spark.task_host import format_trace
from sluice.spark.task_plugins import collector_paused, ensure_plugin_paths, load_class, make_pipeline
from sluice.spark.topic_creation import TopicCreator

__all__ = ["SOURCE_OUTPUT_DDL", "SplitPartSpec", "SplitReadResult", "run_split_part", "run_split_read"]

SOURCE_OUTPUT_DDL = (
    "key binary, value binary, topic string, partition int, headers array<struct<key: string, value: binary>>"
)
ARROW_CHUNK_ROWS = 10_000


@dataclass(frozen=True)
class SplitPartSpec:
    """One part of a split read: the task (for its class, config and record pipeline) and
    the part's description, as the task gave it."""

    task: TaskSpec
    seq: int
    index: int
    part: Any
    write_timestamps: bool = False


def run_split_part(spec: SplitPartSpec, report: Any) -> Iterator[pa.RecordBatch]:
    """Read one part of a split read (``SourceTask.read_split``) and yield it as Arrow
    batches, converted and transformed as polled records are.

    ``report`` receives ``(task, seq, index, [(partition, offset)], count, trace_or_None,
    topics)``, seen by the driver only if the Spark task (with its Kafka write) succeeded.
    """
    with collector_paused():
        yield from _run_split_part(spec, report)


def _run_split_part(spec: SplitPartSpec, report: Any) -> Iterator[pa.RecordBatch]:
    task_spec = spec.task
    offsets: dict[Any, tuple[dict[str, Any], dict[str, Any]]] = {}
    topics: set[str] = set()
    count = 0
    failure: str | None = None
    pipeline: RecordPipeline | None = None
    try:
        ensure_plugin_paths(task_spec.task_config)
        task_class = load_class(task_spec.task_class)
        pipeline = make_pipeline(task_spec)
        creator = TopicCreator(task_spec.topic_creation) if task_spec.topic_creation else None
        columns = _SourceColumns(pipeline, spec.write_timestamps, creator)
        for records in task_class.read_split(dict(task_spec.task_config), spec.part):
            for start in range(0, len(records), ARROW_CHUNK_ROWS):
                columns.extend(records[start : start + ARROW_CHUNK_ROWS])
                batch, processed, error = columns.flush()
                _track_offsets(processed, offsets, topics)
                count += len(processed)
                if batch is not None:
                    yield batch
                if error is not None:
                    raise error
    except BaseException as exc:  # the task is FAILED with this trace
        failure = format_trace(exc)
    finally:
        if pipeline is not None:
            pipeline.close()
    report.add([(task_spec.task, spec.seq, spec.index, list(offsets.values()), count, failure, sorted(topics))])


class _SourceColumns:
    """Collects polled records and converts them, a chunk at a time, into one Arrow batch."""

    def __init__(self, pipeline: RecordPipeline, write_timestamps: bool, topic_creator: TopicCreator | None) -> None:
        self.pipeline = pipeline
        self.write_timestamps = write_timestamps
        self.topic_creator = topic_creator
        self.records: list[SourceRecord] = []

    def __len__(self) -> int:
        return len(self.records)

    def extend(self, records: list[SourceRecord]) -> None:
        self.records.extend(records)

    def flush(self) -> tuple[pa.RecordBatch | None, list[SourceRecord], BaseException | None]:
        """Transform and convert what was collected: ``(batch, records processed, error)``.

        When a record fails beyond the error policy, the batch holds the records before
        it, so they are delivered (and their offsets committed) before the task fails.
        """
        records, self.records = self.records, []
        batch, processed, error = self.pipeline.source_batch(records, self.write_timestamps)
        creator = self.topic_creator
        if batch is not None and creator is not None:
            try:  # before Spark's producer writes to them
                creator.ensure(self.pipeline.written_topics)
            except Exception as exc:  # noqa: BLE001 - nothing of this chunk is delivered
                return None, [], exc
        return batch, processed, error


def _track_offsets(
    records: list[SourceRecord], offsets: dict[Any, tuple[dict[str, Any], dict[str, Any]]], topics: set[str]
) -> None:
    """The last offset of each source partition among ``records``, and their topics."""
    topics.update({r.topic for r in records})
    previous: Any = None
    key: Any = None
    for record in records:
        source_partition = record.source_partition
        if source_partition is not None:
            # Consecutive records mostly share their partition: build its key once.
            if source_partition is not previous and source_partition != previous:
                key, previous = partition_key(source_partition), source_partition
            offsets[key] = (source_partition, record.source_offset)  # type: ignore[assignment]


# --------------------------------------------------------------------------- sink side


# --------------------------------------------------------------------------- the worker's side


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


def run_split_read(spark: Any, task: TaskSpec, kafka_options: dict[str, str], parts: list[Any]) -> SplitReadResult:
    """Read the parts of a split read in one Spark job, one partition per part, and write
    them with Spark's Kafka sink (``kafka_options``: its ``kafka.*`` producer settings).
    Offsets and counts of the parts are merged; the first failing part's trace is the
    failure."""
    from pyspark.accumulators import AccumulatorParam

    from sluice.spark.session import TIMESTAMP_INTERCEPTOR_CONF

    class ListParam(AccumulatorParam):
        def zero(self, value: list[Any]) -> list[Any]:
            return []

        def addInPlace(self, a: list[Any], b: list[Any]) -> list[Any]:  # noqa: N802 - PySpark's name
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
