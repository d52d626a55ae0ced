"""What the S3 and HDFS sinks share: the connector (one config for every task) and the
task, which keeps a :class:`~sluice.connectors.storage.writer.TopicPartitionWriter` per
assigned topic partition and reports to Kafka only the offsets of committed files.

A sink task runs as one long-lived Spark task (Sluice's data plane): the files are
encoded, compressed and uploaded by the Python worker of the executor the task runs on,
so ``tasks.max`` tasks write in parallel on as many executors as the cluster gives.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from sluice import __version__
from sluice.api import ConfigDef, SinkConnector, SinkRecord, SinkTask, Task, TopicPartition
from sluice.api.records import SinkBatch
from sluice.connectors.storage.config import FORMAT_CLASS, ROTATE_INTERVAL_MS, StorageSettings
from sluice.connectors.storage.formats import Format, format_for
from sluice.connectors.storage.partitioner import (
    TimeBasedPartitioner,
    TimestampExtractor,
    make_partitioner,
    make_timestamp_extractor,
)
from sluice.connectors.storage.writer import FileStore, TopicPartitionWriter

__all__ = ["StorageSinkConnector", "StorageSinkTask"]

log = logging.getLogger(__name__)


class StorageSinkConnector(SinkConnector):
    """A storage sink connector: checks the config at start, gives every task the same."""

    store_kind = ""  # "s3" or "hdfs": which formats and file names

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return __version__

    @abstractmethod
    def config(self) -> ConfigDef: ...

    @abstractmethod
    def task_class(self) -> type[Task]: ...

    def start(self, props: dict[str, str]) -> None:
        values = self.config().parse(props)
        make_partitioner(values)  # a bad partitioner config fails the connector, not only its tasks
        format_for(values[FORMAT_CLASS], props, store=self.store_kind)
        self._props = dict(props)

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass


class StorageSinkTask(SinkTask):
    """A storage sink task; subclasses say which config and which :class:`FileStore`."""

    store_kind = ""

    def __init__(self) -> None:
        # by (topic, partition): put() looks a writer up per record without building a TopicPartition
        self.writers: dict[tuple[str, int | None], TopicPartitionWriter] = {}
        self.store: FileStore | None = None
        self.work_dir: Path | None = None
        self.uploads: ThreadPoolExecutor | None = None

    def version(self) -> str:
        return __version__

    @abstractmethod
    def config_def(self) -> ConfigDef: ...

    @abstractmethod
    def make_store(self, values: dict[str, Any], fmt: Format) -> FileStore:
        """The store for this config; checks it can be reached (a missing bucket, refused
        credentials or an unreachable server raise :class:`~sluice.api.ConnectError`)."""

    def start(self, props: dict[str, str]) -> None:
        values = self.config_def().parse(props)
        self.values = values
        self.settings = StorageSettings(values)
        self.partitioner = make_partitioner(values)
        self.extractor = self._rotation_extractor(values)
        self.format = format_for(self.settings.format_class, props, store=self.store_kind)
        self.store = self.make_store(values, self.format)
        # Made after the store, so that a start that cannot reach it leaves nothing behind.
        self.work_dir = Path(tempfile.mkdtemp(prefix=f"sluice-{self.store_kind}-sink-"))
        # Uploads and renames run on this thread while the task goes on writing the next
        # files (one thread: a topic partition's commits stay in order).
        self.uploads = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{self.store_kind}-sink-commits")

    def _rotation_extractor(self, values: dict[str, Any]) -> TimestampExtractor | None:
        if isinstance(self.partitioner, TimeBasedPartitioner):
            return self.partitioner.timestamp_extractor
        if values[ROTATE_INTERVAL_MS] > 0:  # Confluent's HDFS sink: the configured extractor's time
            return make_timestamp_extractor(values["timestamp.extractor"], values["timestamp.field"])
        return None

    def open(self, partitions: list[TopicPartition]) -> None:
        assert self.store is not None and self.work_dir is not None
        reporter = self.context.errant_record_reporter()

        def report(record: SinkRecord, error: BaseException) -> None:
            if reporter is None:
                raise error
            reporter.report(record, error)

        for tp in partitions:
            resume_at = self.store.recover(tp)
            writer = TopicPartitionWriter(
                tp,
                self.settings,
                self.format,
                self.partitioner,
                self.store,
                self.work_dir,
                report,
                self.extractor,
                uploads=self.uploads,
            )
            self.writers[(tp.topic, tp.partition)] = writer
            if resume_at is not None:
                log.info("%s: continuing from offset %s, after the last committed file", tp, resume_at)
                self.context.offset(tp, resume_at)

    def put(self, records: list[SinkRecord]) -> None:
        writers = self.writers
        for record in records:
            writer = writers.get((record.topic, record.kafka_partition))
            if writer is None:
                continue  # a partition closed since (its records come again to its new owner)
            writer.write(record)
        for writer in self.writers.values():
            writer.tick()

    def put_batch(self, batch: SinkBatch) -> None:
        """As :meth:`put`, reading the batch's columns when the partitioner encodes a
        record by its Kafka partition alone and no rule rotates files by a clock: each
        topic partition's values then go to its writer as one run, without a
        :class:`SinkRecord` per record. Otherwise, record by record."""
        encode = self.partitioner.kafka_partition_encoder()
        if encode is None or self.extractor is not None or self.settings.rotate_schedule_interval_ms > 0:
            self.put(batch.records())
            return
        values, schemas, offsets = batch.values, batch.value_schemas, batch.offsets
        for (topic, partition), rows in _runs(batch.topics, batch.partitions).items():
            writer = self.writers.get((topic, partition))
            if writer is None:
                continue  # a partition closed since (its records come again to its new owner)
            writer.write_values(
                encode(partition),
                [values[i] for i in rows],
                [schemas[i] for i in rows],
                [offsets[i] for i in rows],
                _record_at(batch, rows),
            )
        for writer in self.writers.values():
            writer.tick()

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        offsets = {}
        for writer in self.writers.values():
            offset = writer.pop_offset_to_commit()
            if offset is not None:
                offsets[writer.tp] = offset
        return offsets

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        """Nothing: files are committed by the rotation rules, not at Kafka commits."""

    def close(self, partitions: list[TopicPartition]) -> None:
        for tp in partitions:
            writer = self.writers.pop((tp.topic, tp.partition), None)
            if writer is not None:
                writer.abort()

    def stop(self) -> None:
        for writer in self.writers.values():
            try:
                writer.abort()  # waits for its commits under way
            except Exception:  # stopping anyway; the records are read again after a restart
                log.exception("A commit of %s failed while the task stopped", writer.tp)
        self.writers.clear()
        if self.uploads is not None:
            self.uploads.shutdown(wait=True)
        if self.store is not None:
            self.store.close()
        if self.work_dir is not None:
            shutil.rmtree(self.work_dir, ignore_errors=True)


def _runs(topics: list[str], partitions: list[int]) -> Mapping[tuple[str, int], Sequence[int]]:
    """The positions of each topic partition's records, in order."""
    if topics and len(set(partitions)) == 1 and len(set(topics)) == 1:
        return {(topics[0], partitions[0]): range(len(topics))}
    runs: dict[tuple[str, int], list[int]] = {}
    for i, key in enumerate(zip(topics, partitions, strict=True)):
        runs.setdefault(key, []).append(i)
    return runs


def _record_at(batch: SinkBatch, rows: Sequence[int]) -> Callable[[int], SinkRecord]:
    """The record at a position of a run (``rows``: the run's positions in the batch)."""
    return lambda j: batch.records()[rows[j]]
