"""The part of a storage sink that decides what goes into which file and when files are
committed: one :class:`TopicPartitionWriter` per assigned topic partition, as in
Confluent's S3 and HDFS sinks.

A topic partition's records go to one open file per encoded partition (the directory the
partitioner chose). All of them are committed together — handed to the
:class:`FileStore`, which makes them visible under their final names — when

- ``flush.size`` records of the topic partition have been written;
- the record times (``rotate.interval.ms``) of the records written span the interval, or
  (time-based partitioner) a record belongs to another time partition;
- the wall clock reaches the next multiple of ``rotate.schedule.interval.ms``;
- a record's value schema changes as ``schema.compatibility`` says it must.

The offset to commit to Kafka moves only when files are committed: past the last record
in them (and past records skipped or reported since). After a crash the records are read
again from there and, the rules above being deterministic (with record time, not wall
clock), land in files with the same names and contents.

Files are written locally (in the task's work directory, on the Spark executor the task
runs on) and handed to the store only when complete.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sluice.api import ConnectError, DataError, Schema, SchemaProjector, SinkRecord, TopicPartition
from sluice.api.errors import SchemaProjectorError
from sluice.connectors.storage.config import StorageSettings
from sluice.connectors.storage.formats import Format, FormatError, RecordFileWriter
from sluice.connectors.storage.partitioner import (
    Partitioner,
    TimeBasedPartitioner,
    TimestampExtractor,
    next_scheduled_rotation,
    wallclock_timestamp,
    zone,
)

__all__ = ["FileStore", "ReadyFile", "SchemaCompatibility", "TopicPartitionWriter"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReadyFile:
    """A complete local file, ready to be committed."""

    directory: str  # the partitioned path, ``<topic><delim><encoded partition>``
    encoded_partition: str
    local_path: Path
    start_offset: int
    end_offset: int
    records: int


class FileStore(ABC):
    """Where a sink's committed files go (S3, HDFS)."""

    @abstractmethod
    def commit(self, tp: TopicPartition, files: list[ReadyFile], next_offset: int) -> None:
        """Makes ``files`` visible under their final names, all of them or (after a crash,
        once :meth:`recover` ran) none. ``next_offset`` is the offset the topic partition
        continues from once they are committed. Raises :class:`ConnectError` on failure."""

    def recover(self, tp: TopicPartition) -> int | None:
        """Called when the task gets ``tp``: finishes or discards what a crash left half
        done and returns the offset to continue from, when the store knows it (None: the
        offset committed to Kafka)."""
        return None

    def close(self) -> None:
        """Releases the store's connections."""


class SchemaCompatibility:
    """``schema.compatibility``: when a value schema change starts a new file, and how
    records of an older (or newer) schema are projected to the file's schema."""

    def __init__(self, mode: str) -> None:
        self.mode = mode.upper()

    def should_change(self, schema: Schema | None, current: Schema | None) -> bool:
        if schema is current:  # the common case: converters hand out one Schema object per schema
            return False
        if schema is None or current is None:
            raise SchemaProjectorError("Switch between schema-based and schema-less data is not supported")
        if self.mode == "NONE":
            return schema != current
        if schema.version is None or current.version is None:
            raise SchemaProjectorError(f"Schema version required for {self.mode} compatibility")
        if self.mode == "FORWARD":
            return schema.version < current.version
        return schema.version > current.version

    def project(self, record: SinkRecord, current: Schema | None) -> SinkRecord:
        schema = record.value_schema
        if schema is current or self.mode == "NONE" or schema is None or current is None or schema == current:
            return record
        value = SchemaProjector.project(schema, record.value, current)
        return record.new_record(value_schema=current, value=value)


@dataclass
class _OpenFile:
    encoded: str
    directory: str
    path: Path
    writer: RecordFileWriter
    start_offset: int
    end_offset: int
    records: int = 0


Reporter = Callable[[SinkRecord, BaseException], None]
_NO_SCHEMA_YET = object()  # an encoded partition's schema before its first record (no value has it)
# Commits of a topic partition under way at once (each holds its local files until done).
MAX_PENDING_COMMITS = 2


class TopicPartitionWriter:
    """Writes one topic partition's records into files and commits them."""

    def __init__(
        self,
        tp: TopicPartition,
        settings: StorageSettings,
        fmt: Format,
        partitioner: Partitioner,
        store: FileStore,
        work_dir: Path,
        report: Reporter,
        extractor: TimestampExtractor | None,
        clock_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
        uploads: Executor | None = None,
    ) -> None:
        self.tp = tp
        self.uploads = uploads  # None: each commit completes before commit() returns
        self.settings = settings
        self.format = fmt
        self.partitioner = partitioner
        self.store = store
        self.work_dir = work_dir
        self.report = report
        self.clock_ms = clock_ms
        self.compatibility = SchemaCompatibility(settings.schema_compatibility)
        self.time_based = isinstance(partitioner, TimeBasedPartitioner)
        self.extractor = extractor  # record time for rotate.interval.ms (None: no such rotation)
        self.schedule_tz = zone(settings.timezone) if settings.rotate_schedule_interval_ms > 0 else None
        self.files: dict[str, _OpenFile] = {}
        self.schemas: dict[str, Schema | None] = {}
        self.record_count = 0
        self.base_timestamp: int | None = None
        self.current_timestamp: int | None = None
        self.current_encoded: str | None = None
        self.processed_offset = -1  # the last offset written, skipped or reported
        self.committed_next: int | None = None  # what the last commit makes safe once done
        self.offset_to_commit: int | None = None
        self.pending: deque[tuple[Future[None], int]] = deque()  # commits under way, oldest first
        self.next_scheduled = self._next_scheduled()

    # -- records -----------------------------------------------------------------------

    def write(self, record: SinkRecord) -> None:
        """Adds a record to its file, committing files first or after when a rule says so.
        A record that cannot be written goes to ``report`` (the errant record reporter,
        which fails the task unless ``errors.tolerance=all``)."""
        now = self.clock_ms() if self.settings.rotate_schedule_interval_ms > 0 else 0
        if record.value is None and self.settings.behavior_on_null_values == "ignore":
            log.debug("Null valued record %s-%s@%s skipped", record.topic, record.kafka_partition, record.kafka_offset)
            self.processed_offset = record.kafka_offset
            return
        try:
            if record.value is None and self.settings.behavior_on_null_values == "fail":
                raise DataError(
                    f"Null valued record from topic {record.topic}, partition {record.kafka_partition} and offset "
                    f"{record.kafka_offset} was not written (behavior.on.null.values=fail)"
                )
            timestamp = self.extractor(record) if self.extractor is not None else None
            encoded = self.partitioner.encode_partition(record)
            schema = record.value_schema
            current = self.schemas.setdefault(encoded, schema)
            if self.compatibility.should_change(schema, current):
                self.schemas[encoded] = current = schema
                if self.record_count > 0:
                    self.commit()
            elif self.record_count > 0 and self._rotate_on_time(encoded, timestamp, now):
                self.commit()
            projected = self.compatibility.project(record, current)
            self._append(projected.value, projected.value_schema, record.kafka_offset, encoded)
        except SchemaProjectorError as exc:
            raise ConnectError(f"Topic partition {self.tp}: {exc}") from exc
        except DataError as exc:
            self.report(record, exc)
            self.processed_offset = record.kafka_offset
            return
        if self.extractor is not None and timestamp is not None:
            self.current_timestamp = timestamp
            if self.base_timestamp is None:
                self.base_timestamp = timestamp
        self._appended(encoded)

    def write_values(
        self,
        encoded: str,
        values: Sequence[Any],
        schemas: Sequence[Schema | None],
        offsets: Sequence[int],
        record_at: Callable[[int], SinkRecord],
    ) -> None:
        """What :meth:`write` does for each record of a run of this topic partition's
        records, given as columns, in offset order — for a task whose partitioner encodes
        all of them as ``encoded`` and that rotates files on no clock (the caller checks
        both). A record the common case does not cover (a null value, another schema than
        its file's) goes through :meth:`write`, as ``record_at(i)``."""
        current = self.schemas.get(encoded, _NO_SCHEMA_YET)
        for i, value in enumerate(values):
            schema = schemas[i]
            if value is None or schema is not current:
                self.write(record_at(i))
                current = self.schemas.get(encoded, _NO_SCHEMA_YET)
                continue
            try:
                self._append(value, schema, offsets[i], encoded)
            except FormatError as e:
                self.report(record_at(i), e)
                self.processed_offset = offsets[i]
                continue
            self._appended(encoded)

    def _append(self, value: Any, schema: Schema | None, offset: int, encoded: str) -> None:
        """Adds a value to its file (opened on the first value). A :class:`FormatError` names
        the record's place."""
        opened = self.files.get(encoded)
        if opened is None:
            directory = self.partitioner.partitioned_path(self.tp.topic, encoded)
            path = self.work_dir / f"{uuid.uuid4().hex}{self.format.extension}"
            writer = self.format.open(path, schema)
            opened = _OpenFile(encoded, directory, path, writer, offset, offset)
        try:
            opened.writer.write_value(value)
        except BaseException as e:
            if not opened.records:
                opened.writer.abort()
            if isinstance(e, FormatError):
                raise e.at(self.tp.topic, self.tp.partition, offset) from e.__cause__
            raise
        self.files[encoded] = opened
        opened.end_offset = offset
        opened.records += 1
        self.record_count += 1
        self.processed_offset = offset

    def _appended(self, encoded: str) -> None:
        """After a value was added: commits once ``flush.size`` records are in the files."""
        self.current_encoded = encoded
        if self.record_count >= self.settings.flush_size:
            log.info("Committing files of %s after %s records (flush.size)", self.tp, self.record_count)
            self.commit()

    def _rotate_on_time(self, encoded: str, timestamp: int | None, now: int) -> bool:
        interval = self.settings.rotate_interval_ms
        periodic = False
        if interval > 0 and timestamp is not None and self.base_timestamp is not None:
            periodic = timestamp - self.base_timestamp >= interval
            if self.time_based and encoded != self.current_encoded:
                periodic = True  # the record belongs to another time partition
        scheduled = self.settings.rotate_schedule_interval_ms > 0 and now >= self.next_scheduled
        return periodic or scheduled

    def tick(self) -> None:
        """Called after each batch, also an empty one: commits on wall-clock rules."""
        now = self.clock_ms()
        if self.record_count > 0:
            timestamp = now if self.extractor is wallclock_timestamp else self.current_timestamp
            if self.current_encoded is not None and self._rotate_on_time(self.current_encoded, timestamp, now):
                log.info("Committing files of %s on time, with %s records", self.tp, self.record_count)
                self.commit()
        elif not self.pending and self.processed_offset >= 0 and (self.committed_next or 0) <= self.processed_offset:
            # Only skipped or reported records since the last commit: nothing to wait for.
            self.committed_next = self.offset_to_commit = self.processed_offset + 1
        self._collect()
        if self.settings.rotate_schedule_interval_ms > 0 and now >= self.next_scheduled:
            self.next_scheduled = self._next_scheduled()

    # -- commits -----------------------------------------------------------------------

    def commit(self) -> None:
        """Closes the open files and commits them together: in the background when the
        writer has an upload executor (the offset moves once the commit is done), else
        before returning."""
        ready = []
        for opened in self.files.values():
            opened.writer.close()
            ready.append(
                ReadyFile(
                    opened.directory,
                    opened.encoded,
                    opened.path,
                    opened.start_offset,
                    opened.end_offset,
                    opened.records,
                )
            )
        self.files.clear()
        next_offset = self.processed_offset + 1
        self.committed_next = next_offset
        self.record_count = 0
        self.base_timestamp = None
        self.next_scheduled = self._next_scheduled()
        if self.uploads is None:
            self._store(ready, next_offset)
            self.offset_to_commit = next_offset
            return
        while len(self.pending) >= MAX_PENDING_COMMITS:  # bounds local disk: wait for the oldest
            self.pending[0][0].result()
            self._collect()
        self.pending.append((self.uploads.submit(self._store, ready, next_offset), next_offset))

    def _store(self, ready: list[ReadyFile], next_offset: int) -> None:
        try:
            self.store.commit(self.tp, ready, next_offset)
        finally:
            for file in ready:
                with contextlib.suppress(OSError):
                    file.local_path.unlink()

    def _collect(self) -> None:
        """Takes in the commits that are done, in order; raises the failure of one."""
        while self.pending and self.pending[0][0].done():
            future, next_offset = self.pending.popleft()
            error = future.exception()
            if error is not None:
                self.pending.clear()
                raise error
            self.offset_to_commit = next_offset

    def drain(self) -> None:
        """Waits until every commit under way is done (raises the failure of one)."""
        while self.pending:
            self.pending[0][0].exception()  # waits
            self._collect()

    def pop_offset_to_commit(self) -> int | None:
        """The offset to commit to Kafka since the last call, if files were committed."""
        self._collect()
        offset, self.offset_to_commit = self.offset_to_commit, None
        return offset

    def abort(self) -> None:
        """Drops the open files (their records are read again from the committed offset).
        Commits under way are finished first, so that nothing of this writer reaches the
        store after it let the partition go."""
        try:
            self.drain()
        finally:
            for opened in self.files.values():
                with contextlib.suppress(Exception):
                    opened.writer.abort()
            self.files.clear()
            self.record_count = 0

    def _next_scheduled(self) -> int:
        if self.schedule_tz is None:
            return 0
        return next_scheduled_rotation(self.clock_ms(), self.settings.rotate_schedule_interval_ms, self.schedule_tz)
