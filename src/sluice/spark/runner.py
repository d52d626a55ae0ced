"""The driver side of the data plane: one Spark job per micro-batch of a task.

Source batch::

    range(1) ──mapInArrow(poll + convert)──▶ Spark's Kafka sink (JVM producer)
                   │
                   └─ accumulator: offsets of the rows, merged only if the job succeeded

Sink batch::

    Spark's Kafka source (JVM consumer, exact offset ranges)
        ──[transform chain as Spark SQL expressions, when it has a columnar form]
        ──coalesce(1)──mapInArrow(convert + put + pre_commit)──▶ collect(): offsets to commit

The runtime calls these from one thread per task and commits the offsets they
return: source offsets to the offset store after Kafka acknowledged the records,
sink offsets to the consumer group after the task's ``pre_commit``.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pyspark.accumulators import AccumulatorParam
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sluice.api.source import partition_key
from sluice.spark.columnar import SINK_HEADERS, SINK_TOPIC, ColumnarChain, compile_sink_chain
from sluice.spark.executor import (
    SINK_OUTPUT_DDL,
    SOURCE_OUTPUT_DDL,
    SinkBatchSpec,
    SourceBatchSpec,
    SplitPartSpec,
    TaskSpec,
    pause_host,
    run_sink_batch,
    run_source_batch,
    run_split_part,
    stop_host,
)
from sluice.spark.session import TIMESTAMP_INTERCEPTOR_CONF, jvm_view
from sluice.spark.typed_values import SINK_ADDED_HEADERS, SINK_KEY, SINK_VALUE

log = logging.getLogger(__name__)

__all__ = ["SinkBatchResult", "SourceBatchResult", "SparkSinkTaskRunner", "SparkSourceTaskRunner", "sink_rows"]


class _ListParam(AccumulatorParam):
    def zero(self, value: list[Any]) -> list[Any]:
        return []

    def addInPlace(self, a: list[Any], b: list[Any]) -> list[Any]:  # noqa: N802 - PySpark's name
        a.extend(b)
        return a


@dataclass
class SourceBatchResult:
    count: int
    offsets: list[tuple[dict[str, Any], dict[str, Any]]]
    failure: str | None
    fresh: bool
    topics: list[str] = field(default_factory=list)
    # parts of a read the task asked to split across Spark partitions (run_split_read)
    split_parts: list[Any] = field(default_factory=list)


@dataclass
class SinkBatchResult:
    commits: dict[tuple[str, int], int] = field(default_factory=dict)
    rewinds: dict[tuple[str, int], int] = field(default_factory=dict)
    paused: set[tuple[str, int]] = field(default_factory=set)
    failure: str | None = None
    # rows for the dead letter queue (key, value, headers_json, ts_ms), in consumed order
    dead_letters: list[Any] = field(default_factory=list)
    # the task called context.timeout(ms): call put() again within this time
    timeout_ms: int | None = None


AFFINITY_ENV = "SLUICE_TASK_AFFINITY"
_ENVIRONMENT_LOCK = threading.Lock()


def _map_in_arrow(frame: Any, func: Callable[..., Any], schema: str, task: TaskSpec, pool: str = "") -> Any:
    """``frame.mapInArrow`` with a per-task marker in the Python UDF's environment.

    Spark keeps one pool of Python workers per distinct UDF environment and hands idle
    workers out first-in first-out. With one shared pool, consecutive batches of a task
    alternate between workers and each would restart the task; with its own pool, a
    task's batches (one at a time) always find the worker that holds its instance.
    ``pool`` names another pool of the task: a job of several partitions (a split read)
    must not add workers to the pool of the task's batches.
    """
    environment = frame.sparkSession.sparkContext.environment
    with _ENVIRONMENT_LOCK:
        previous = environment.get(AFFINITY_ENV)
        environment[AFFINITY_ENV] = f"{task.connector}/{task.task}" + (f"/{pool}" if pool else "")
        try:
            return frame.mapInArrow(func, schema)
        finally:
            if previous is None:
                environment.pop(AFFINITY_ENV, None)
            else:
                environment[AFFINITY_ENV] = previous


def _job_group(spark: SparkSession, task: TaskSpec) -> None:
    spark.sparkContext.setJobGroup(
        f"sluice:{task.connector}:{task.task}", f"Connect task {task.connector}-{task.task}", interruptOnCancel=True
    )


class SparkSourceTaskRunner:
    """Runs micro-batches of one source task and writes them with Spark's Kafka sink."""

    def __init__(self, spark: SparkSession, task: TaskSpec, kafka_options: dict[str, str]) -> None:
        self.spark = spark
        self.task = task
        self.kafka_options = dict(kafka_options)
        interceptor = spark.conf.get(TIMESTAMP_INTERCEPTOR_CONF, None)
        self.write_timestamps = bool(interceptor)
        if interceptor:
            chained = [c for c in self.kafka_options.get("kafka.interceptor.classes", "").split(",") if c.strip()]
            self.kafka_options["kafka.interceptor.classes"] = ",".join([interceptor, *chained])

    def run_batch(
        self,
        seq: int,
        committed_offsets: list[tuple[dict[str, Any], dict[str, Any]]],
        max_records: int,
        max_wait_ms: int,
    ) -> SourceBatchResult:
        spec = SourceBatchSpec(self.task, seq, committed_offsets, max_records, max_wait_ms, self.write_timestamps)
        report = self.spark.sparkContext.accumulator([], _ListParam())

        def poll(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for _ in batches:  # the single driving row of range(1)
                pass
            yield from run_source_batch(spec, report)

        _job_group(self.spark, self.task)
        self._write_to_kafka(_map_in_arrow(self.spark.range(0, 1, 1, 1), poll, SOURCE_OUTPUT_DDL, self.task))
        entries = [e for e in report.value if e[1] == seq]
        if not entries:
            # The job succeeded but reported nothing: the partition never ran.
            return SourceBatchResult(0, [], None, False)
        _, _, offsets, count, failure, fresh, topics, split_parts = entries[-1]
        return SourceBatchResult(count, offsets, failure, fresh, topics, split_parts)

    def run_split_read(self, seq: int, parts: list[Any]) -> SourceBatchResult:
        """Read the parts of a split read in one Spark job, one partition per part, and
        write them with Spark's Kafka sink. Offsets and counts of the parts are merged;
        the first failing part's trace is the failure."""
        specs = [SplitPartSpec(self.task, seq, i, part, self.write_timestamps) for i, part in enumerate(parts)]
        report = self.spark.sparkContext.accumulator([], _ListParam())

        def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            indexes = [i for b in batches for i in b.column(0).to_pylist()]
            for index in indexes:  # one per partition: range(n) with n partitions
                yield from run_split_part(specs[index], report)

        _job_group(self.spark, self.task)
        self._write_to_kafka(
            _map_in_arrow(
                self.spark.range(0, len(parts), 1, len(parts)), read, SOURCE_OUTPUT_DDL, self.task, pool="split"
            )
        )
        entries = sorted((e for e in report.value if e[1] == seq), key=lambda e: e[2])
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
        return SourceBatchResult(count, list(offsets.values()), failure, False, sorted(topics))

    def pause(self, timeout_s: float) -> bool:
        """Stop the task's polling in the Python worker that holds its instance, once the
        poll() under way returned (the next batch resumes it). False if that could not be
        confirmed: the instance is elsewhere or gone, or its poll() is still running."""
        task = self.task
        return _in_task_worker(
            self.spark, task, lambda: pause_host(task.connector, task.task, task.incarnation, timeout_s)
        )

    def _write_to_kafka(self, frame: DataFrame) -> None:
        """Run the job that makes ``frame`` with Spark's Kafka sink as its writer."""
        writer = frame.write.format("kafka")
        for key, value in self.kafka_options.items():
            writer = writer.option(key, value)
        writer.save()

    def close(self) -> None:
        """Best effort: stop the task instance in the Python worker that holds it."""
        task = self.task
        try:
            _in_task_worker(self.spark, task, lambda: stop_host(task.connector, task.task, task.incarnation))
        except Exception:
            log.debug("Could not stop task instance %s-%s", task.connector, task.task, exc_info=True)


def _in_task_worker(spark: SparkSession, task: TaskSpec, action: Callable[[], bool]) -> bool:
    """Run ``action`` in the Python worker that runs the task's batches (a one-row job in
    the task's worker pool) and return what it returned."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for _ in batches:  # the single driving row of range(1)
            pass
        yield pa.RecordBatch.from_pydict({"done": [action()]})

    _job_group(spark, task)
    rows = _map_in_arrow(spark.range(0, 1, 1, 1), run, "done boolean", task).collect()
    return bool(rows and rows[0].done)


def _headers_json(column: str) -> Any:
    # Spark's Arrow writer is slow for array<struct> columns, even all-null ones (about
    # 6 s of JVM CPU per million records); JSON text of the headers, only where there are
    # any, costs next to nothing.
    return F.when(F.size(column) > 0, F.to_json(column))


def sink_rows(kafka: DataFrame, chain: ColumnarChain | None = None) -> DataFrame:
    """The rows a sink batch hands to Python, from the rows of Spark's Kafka source
    (``includeHeaders``): with a columnar chain, after it ran (rows a Filter dropped are
    gone; ``sink_topic``, ``sink_headers_json`` carry its results)."""
    frame = kafka.select(
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        F.expr("unix_millis(timestamp)").alias("ts_ms"),
        F.col("timestampType").alias("ts_type"),
        "headers",
    )
    if chain is not None:
        frame = chain.apply(frame, "ts_ms")
    columns = [
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        "ts_ms",
        "ts_type",
        _headers_json("headers").alias("headers_json"),
    ]
    if chain is not None and chain.routes:
        columns.append(SINK_TOPIC)
    if chain is not None and chain.header_ops:
        columns.append(_headers_json(SINK_HEADERS).alias("sink_headers_json"))
    if chain is not None and chain.typed is not None:
        columns.extend(c for c in (SINK_KEY, SINK_VALUE, SINK_ADDED_HEADERS) if c in frame.columns)
    return frame.select(*columns)


class SparkSinkTaskRunner:
    """Runs micro-batches of one sink task over exact Kafka offset ranges."""

    def __init__(self, spark: SparkSession, task: TaskSpec, kafka_options: dict[str, str]) -> None:
        self.spark = spark
        self.task = task
        self.kafka_options = dict(kafka_options)
        self.chain: ColumnarChain | None = None
        if task.transforms is not None:
            try:
                if task.columnar_transforms:
                    self.chain, how = compile_sink_chain(task, jvm_view(spark))
                else:
                    how = "sluice.transforms.columnar.enable=false"
            except Exception as exc:  # noqa: BLE001 - the per-record path always works
                how = f"compiling failed: {exc}"
            log.debug(
                "Task %s-%s runs its transformation chain %s (%s)",
                task.connector,
                task.task,
                "as Spark SQL expressions" if self.chain is not None else "per record in Python",
                how,
            )

    def close(self) -> None:
        """Best effort: close and stop the task instance in the Python worker that holds
        it (its ``close(partitions)``, then ``stop()``)."""
        task = self.task
        try:
            _in_task_worker(self.spark, task, lambda: stop_host(task.connector, task.task, task.incarnation))
        except Exception:
            log.debug("Could not stop task instance %s-%s", task.connector, task.task, exc_info=True)

    def run_batch(
        self,
        seq: int,
        assignment: list[tuple[str, int]],
        committed: dict[tuple[str, int], int],
        ranges: dict[tuple[str, int], tuple[int, int]],
    ) -> SinkBatchResult:
        spec = SinkBatchSpec(
            self.task,
            seq,
            assignment,
            dict(committed),
            {tp: r[0] for tp, r in ranges.items()},
            columnar=self.chain is not None,
            end={tp: r[1] for tp, r in ranges.items()},
            typed=self.chain.typed if self.chain is not None else None,
        )
        topics: dict[str, list[int]] = {}
        starting: dict[str, dict[str, int]] = {}
        ending: dict[str, dict[str, int]] = {}
        for (topic, partition), (start, end) in sorted(ranges.items()):
            topics.setdefault(topic, []).append(partition)
            starting.setdefault(topic, {})[str(partition)] = start
            ending.setdefault(topic, {})[str(partition)] = end

        def deliver(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            yield from run_sink_batch(spec, batches)

        _job_group(self.spark, self.task)
        reader = (
            self.spark.read.format("kafka")
            .option("assign", json.dumps(topics))
            .option("startingOffsets", json.dumps(starting))
            .option("endingOffsets", json.dumps(ending))
            .option("includeHeaders", "true")
            .option("failOnDataLoss", "false")
        )
        for key, value in self.kafka_options.items():
            reader = reader.option(key, value)
        frame = sink_rows(reader.load(), self.chain)
        return self._result(_map_in_arrow(frame.coalesce(1), deliver, SINK_OUTPUT_DDL, self.task).collect())

    def run_without_records(
        self, seq: int, assignment: list[tuple[str, int]], committed: dict[tuple[str, int], int], start_only: bool
    ) -> SinkBatchResult:
        """A batch with no records: ``put([])`` and ``pre_commit`` as after a consumer poll
        that returned nothing, or, with ``start_only``, only the start of the task's
        instance (what Kafka does before its first poll)."""
        spec = SinkBatchSpec(self.task, seq, assignment, dict(committed), {}, start_only=start_only)

        def deliver(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for _ in batches:  # the single driving row of range(1)
                pass
            yield from run_sink_batch(spec, iter(()))

        _job_group(self.spark, self.task)
        return self._result(_map_in_arrow(self.spark.range(0, 1, 1, 1), deliver, SINK_OUTPUT_DDL, self.task).collect())

    @staticmethod
    def _result(rows: list[Any]) -> SinkBatchResult:
        result = SinkBatchResult()
        for row in rows:
            if row.kind == "commit":
                result.commits[(row.topic, row.partition)] = row.offset
            elif row.kind == "rewind":
                result.rewinds[(row.topic, row.partition)] = row.offset
            elif row.kind == "paused":
                result.paused.add((row.topic, row.partition))
            elif row.kind == "dlq":
                result.dead_letters.append(row)
            elif row.kind == "timeout":
                result.timeout_ms = row.offset
            elif row.kind == "error":
                result.failure = row.trace
        return result
