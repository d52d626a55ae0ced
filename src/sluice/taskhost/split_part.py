"""A part of a split read, on the executor that reads it (Sluice's extension of the source
API, :meth:`~sluice.api.source.SourceTaskContext.request_split_read`).

The worker runs a split read as one Spark job of many partitions
(:mod:`sluice.spark.split_read`); each partition calls :func:`run_split_part` for its part:
the task class's ``read_split`` with the task's converters, transforms and error handling,
yielding Arrow batches for Spark's Kafka sink to write. Offsets and counts go back
through a Spark accumulator, which Spark merges only from tasks that succeeded — after
their Kafka writes were acknowledged.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from sluice.api.records import SourceRecord
from sluice.api.source import partition_key
from sluice.kafka.topics import TopicCreator
from sluice.taskhost.loop import format_trace
from sluice.taskhost.pipeline import RecordPipeline
from sluice.taskhost.plugins import collect_less_often, ensure_plugin_paths, load_class, make_pipeline
from sluice.taskhost.protocol import TaskSpec

__all__ = ["SOURCE_OUTPUT_DDL", "SplitPartSpec", "run_split_part"]

SOURCE_OUTPUT_DDL = (
    "key binary, value binary, topic string, partition int, headers array<struct<key: string, value: binary>>"
)
ARROW_CHUNK_ROWS = 10_000


@dataclass(frozen=True)
class SplitPartSpec:
    """One part of a split read: the task (for its class, config and record pipeline) and
    the part's description as the task gave it, pickled by the task host (the worker
    passes it on without reading it)."""

    task: TaskSpec
    seq: int
    index: int
    part: bytes
    write_timestamps: bool = False


def run_split_part(spec: SplitPartSpec, report: Any) -> Iterator[pa.RecordBatch]:
    """Read one part of a split read (``SourceTask.read_split``) and yield it as Arrow
    batches, converted and transformed as polled records are.

    ``report`` receives ``(task, seq, index, [(partition, offset)], count, trace_or_None,
    topics)``, seen by the driver only if the Spark task (with its Kafka write) succeeded.
    """
    collect_less_often()
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
        for records in task_class.read_split(dict(task_spec.task_config), pickle.loads(spec.part)):
            for start in range(0, len(records), ARROW_CHUNK_ROWS):
                columns.extend(records[start : start + ARROW_CHUNK_ROWS])
                batch, processed, error = columns.flush()
                _track_offsets(processed, offsets, topics)
                count += len(processed)
                if batch is not None:
                    yield batch
                if error is not None:
                    raise error
    except BaseException as exc:  # noqa: BLE001 - whatever the part raised fails the task, with this trace
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
