"""The executor side of the data plane: where Connect tasks actually run.

Code in this module executes inside Spark's Python workers (one process per
running Spark task slot). Every micro-batch of a Connect task is one Spark job
with a single partition; its Python function looks up the task's *host* — the
live ``SourceTask``/``SinkTask`` instance — in a registry local to the Python
worker process.

A host is reused only when it served the batch just before this one (same
``incarnation``, ``seq - 1``). Otherwise — first batch, a restart, or Spark ran
the previous batch in another Python worker — any stale host is stopped and a
fresh one starts from the offsets the driver committed. Correctness therefore
never depends on which Python worker Spark picks; reuse only saves start-up cost.

Only :mod:`sluice.api`, pyarrow and the standard library are imported here, so
that the functions pickle small and import fast on executors.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import logging
import pickle
import queue
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pyarrow as pa

from sluice.api.converter import Converter, HeaderConverter
from sluice.api.data import Schema
from sluice.api.errors import RetriableError
from sluice.api.records import SinkRecord, SourceRecord, TopicPartition
from sluice.api.sink import ErrantRecordReporter, SinkTask, SinkTaskContext
from sluice.api.source import OffsetStorageReader, SourceTask, SourceTaskContext, partition_key
from sluice.spark.errors import ErrorPolicy, Stage
from sluice.spark.record_pipeline import SOURCE_OUTPUT_SCHEMA, DeadLetter, RecordPipeline
from sluice.spark.topic_creation import TopicCreationSpec, TopicCreator
from sluice.spark.typed_values import SINK_ADDED_HEADERS, SINK_KEY, SINK_VALUE, TypedOutputs, value_builder

log = logging.getLogger(__name__)

__all__ = [
    "SOURCE_OUTPUT_SCHEMA",
    "SINK_OUTPUT_SCHEMA",
    "PluginSpec",
    "SinkBatchSpec",
    "SourceBatchSpec",
    "TaskSpec",
    "run_sink_batch",
    "run_source_batch",
    "pause_host",
    "stop_host",
]

SOURCE_OUTPUT_DDL = (
    "key binary, value binary, topic string, partition int, headers array<struct<key: string, value: binary>>"
)

# One row per committed partition offset, rewind or paused partition, one per record
# for the dead letter queue, or one row carrying a failure.
SINK_OUTPUT_SCHEMA = pa.schema(
    [
        ("kind", pa.string()),  # "commit" | "rewind" | "paused" | "timeout" | "dlq" | "error"
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("trace", pa.string()),
        # "dlq" rows: the raw record for the dead letter queue
        ("key", pa.binary()),
        ("value", pa.binary()),
        ("headers_json", pa.string()),
        ("ts_ms", pa.int64()),
    ]
)
SINK_OUTPUT_DDL = (
    "kind string, topic string, partition int, offset long, trace string, "
    "key binary, value binary, headers_json string, ts_ms long"
)

ARROW_CHUNK_ROWS = 10_000
LINGER_S = 0.05


@dataclass(frozen=True)
class PluginSpec:
    """A plugin to instantiate on the executor: its Python class path and configs."""

    class_path: str
    configs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskSpec:
    """Everything an executor needs to (re)create one Connect task. Picklable."""

    connector: str
    task: int
    task_class: str
    task_config: dict[str, str]
    incarnation: str
    key_converter: PluginSpec
    value_converter: PluginSpec
    header_converter: PluginSpec
    errors: ErrorPolicy = field(default_factory=ErrorPolicy)
    # The transformation chain's class and the connector's transforms.*/predicates.* keys,
    # with plugin classes resolved to Python paths; None: no transforms.
    transforms: PluginSpec | None = None
    # Source connectors with topic.creation.* settings (and the worker allowing it).
    topic_creation: TopicCreationSpec | None = None
    # Whether a sink chain may run as Spark SQL expressions (sluice.spark.columnar).
    columnar_transforms: bool = True

    @property
    def host_key(self) -> tuple[str, int]:
        return (self.connector, self.task)


@dataclass(frozen=True)
class SourceBatchSpec:
    task: TaskSpec
    seq: int
    committed_offsets: list[tuple[dict[str, Any], dict[str, Any]]]
    max_records: int
    max_wait_ms: int
    # Carry each record's timestamp in a header for the producer interceptor to apply.
    write_timestamps: bool = False


@dataclass(frozen=True)
class SinkBatchSpec:
    task: TaskSpec
    seq: int
    assignment: list[tuple[str, int]]
    committed: dict[tuple[str, int], int]
    start: dict[tuple[str, int], int]
    # Spark ran the chain on the rows (sluice.spark.columnar): rows carry ``sink_topic``
    # (null: run the chain here) and maybe ``sink_headers_json``; filtered rows are gone.
    columnar: bool = False
    # Where each partition's range ends: rows Spark filtered out still count as consumed.
    end: dict[tuple[str, int], int] = field(default_factory=dict)
    # What the chain's typed columns (sink_key, sink_value, sink_added_headers) hold.
    typed: TypedOutputs | None = None
    # Start the task instance only (Kafka starts a sink task before its first poll):
    # no put(), no pre_commit().
    start_only: bool = False


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the length of one batch, back on after.

    A batch allocates millions of short-lived objects (records, structs, values) that hold
    no reference cycles, so reference counting frees them; with the collector on, those
    allocations trigger collections that walk every live object again and again. Measured
    on a JsonConverter → JDBC sink batch: 30% of the Python worker's CPU. Cyclic garbage a
    batch leaves is collected once the collector is back on.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def load_class(path: str) -> type[Any]:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _format_trace(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


# --------------------------------------------------------------------------- registry

_HOSTS: dict[tuple[str, int], _Host] = {}
_HOSTS_LOCK = threading.Lock()


class _Host:
    incarnation: str
    last_seq: int

    @property
    def retired(self) -> bool:
        """True once the host stopped itself (an orphan's idle timeout): never reuse it."""
        return False

    def stop(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


def _take_host(spec: TaskSpec, seq: int, kind: type[_H]) -> _H | None:
    """The live ``kind`` host for this task if it served batch ``seq - 1``; stale ones are stopped."""
    with _HOSTS_LOCK:
        host = _HOSTS.get(spec.host_key)
        if host is None:
            return None
        if (
            isinstance(host, kind)
            and host.incarnation == spec.incarnation
            and host.last_seq == seq - 1
            and not host.retired
        ):
            return host
        del _HOSTS[spec.host_key]
    _stop_quietly(host)
    return None


_H = TypeVar("_H", bound=_Host)


def _put_host(spec: TaskSpec, host: _Host) -> None:
    with _HOSTS_LOCK:
        old = _HOSTS.get(spec.host_key)
        _HOSTS[spec.host_key] = host
    if old is not None and old is not host:
        _stop_quietly(old)


def _drop_host(spec: TaskSpec, host: _Host) -> None:
    with _HOSTS_LOCK:
        if _HOSTS.get(spec.host_key) is host:
            del _HOSTS[spec.host_key]
    _stop_quietly(host)


def _stop_quietly(host: _Host) -> None:
    try:
        host.stop()
    except Exception:  # a task failing in stop() must not fail another task's batch
        log.warning("Error stopping a task instance", exc_info=True)


def pause_host(connector: str, task: int, incarnation: str, timeout_s: float) -> bool:
    """Stop a source task's polling (Kafka does not poll a paused task) and wait up to
    ``timeout_s`` for a ``poll()`` under way to return; the next batch resumes polling.
    False when the task's instance is not in this Python worker or its poll did not return."""
    with _HOSTS_LOCK:
        host = _HOSTS.get((connector, task))
    if not isinstance(host, _SourceHost) or host.incarnation != incarnation:
        return False
    return host.pause_polling(timeout_s)


def stop_host(connector: str, task: int, incarnation: str) -> bool:
    """Stop the host of a task if it lives in this Python worker (best effort)."""
    with _HOSTS_LOCK:
        host = _HOSTS.get((connector, task))
        if host is None or host.incarnation != incarnation:
            return False
        del _HOSTS[(connector, task)]
    _stop_quietly(host)
    return True


def _make_converter(spec: PluginSpec, is_key: bool) -> Converter:
    conv = load_class(spec.class_path)()
    conv.configure(dict(spec.configs), is_key)
    return conv


def _make_header_converter(spec: PluginSpec) -> HeaderConverter:
    conv = load_class(spec.class_path)()
    conv.configure(dict(spec.configs))
    return conv


def _make_pipeline(spec: TaskSpec) -> RecordPipeline:
    chain = None
    if spec.transforms is not None:
        chain = load_class(spec.transforms.class_path).from_connector_config(
            dict(spec.transforms.configs), lambda _kind, class_path: load_class(class_path)
        )
    return RecordPipeline(
        spec.connector,
        spec.task,
        (spec.key_converter.class_path, _make_converter(spec.key_converter, True)),
        (spec.value_converter.class_path, _make_converter(spec.value_converter, False)),
        (spec.header_converter.class_path, _make_header_converter(spec.header_converter)),
        chain,
        spec.errors,
    )


def _ensure_plugin_paths(config: dict[str, str]) -> None:
    # plugin.path directories are shipped in the task config so that executors can
    # import plugins from them too (they are on PYTHONPATH in local mode anyway).
    for entry in (config.get("__sluice.plugin.path") or "").split(","):
        entry = entry.strip()
        if entry and entry not in sys.path:
            sys.path.append(entry)


# --------------------------------------------------------------------------- source side


class _SnapshotOffsetReader(OffsetStorageReader):
    def __init__(self, committed: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
        self._offsets = {partition_key(p): o for p, o in committed}

    def offsets(self, partitions: list[dict[str, Any]]) -> dict[Any, dict[str, Any] | None]:
        return {partition_key(p): self._offsets.get(partition_key(p)) for p in partitions}


class _SourceContext(SourceTaskContext):
    def __init__(self, config: dict[str, str], reader: OffsetStorageReader) -> None:
        self._config = config
        self._reader = reader
        self.host: _SourceHost | None = None

    def configs(self) -> dict[str, str]:
        return dict(self._config)

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader

    @property
    def supports_split_reads(self) -> bool:
        return True

    def request_split_read(self, parts: Sequence[Any]) -> None:
        parts = list(parts)
        if not parts:
            return
        pickle.dumps(parts)  # fail in the task, with the task's trace, rather than in Spark
        if self.host is None:
            raise RuntimeError("request_split_read() called before the task started")
        self.host.offer_split_read(parts)


class _Failure:
    def __init__(self, trace: str) -> None:
        self.trace = trace


class _SplitRead:
    """A read the task asked to split across Spark partitions (in the poll queue, in order)."""

    def __init__(self, parts: list[Any]) -> None:
        self.parts = parts


class _SourceHost(_Host):
    """A running SourceTask plus the thread that polls it.

    Polling runs ahead of the Spark batches, like Kafka Connect's task thread: a
    bounded queue holds what was polled but not yet handed to Spark, so a slow
    poll (FileStreamSource sleeps a second when idle) never delays records that
    are already there. The queue bound is the backpressure.
    """

    QUEUE_POLLS = 64
    IDLE_STOP_S = 120.0  # an orphaned host (its task moved elsewhere) stops itself

    def __init__(self, spec: SourceBatchSpec) -> None:
        task_spec = spec.task
        _ensure_plugin_paths(task_spec.task_config)
        self.incarnation = task_spec.incarnation
        self.last_seq = spec.seq - 1
        self.pipeline = _make_pipeline(task_spec)
        self.write_timestamps = spec.write_timestamps
        self.topic_creator = TopicCreator(task_spec.topic_creation) if task_spec.topic_creation else None
        self.task: SourceTask = load_class(task_spec.task_class)()
        self.queue: queue.Queue[list[SourceRecord] | _Failure | _SplitRead] = queue.Queue(self.QUEUE_POLLS)
        context = _SourceContext(task_spec.task_config, _SnapshotOffsetReader(spec.committed_offsets))
        context.host = self
        self._stopping = threading.Event()
        self.task.initialize(context)
        self.task.start(dict(task_spec.task_config))
        self.carry: list[SourceRecord] = []
        self._stopped = False
        self.last_drain = time.monotonic()
        # Polling stops while the task is paused; ``_in_poll`` tells a pause when the
        # poll() under way has returned.
        self._gate = threading.Condition()
        self._paused = False
        self._in_poll = False
        self._thread = threading.Thread(
            target=self._poll_loop, name=f"sluice-source-{task_spec.connector}-{task_spec.task}", daemon=True
        )
        self._thread.start()

    def _poll_loop(self) -> None:
        while not self._stopping.is_set():
            with self._gate:
                while self._paused and not self._stopping.is_set():
                    self._gate.wait(0.5)
                if self._stopping.is_set():
                    return
                self._in_poll = True
            try:
                records = self.task.poll()
            except RetriableError:
                self._stopping.wait(0.1)
                continue
            except BaseException as exc:  # the task is FAILED with this trace
                self._offer(_Failure(_format_trace(exc)))
                return
            finally:
                with self._gate:
                    self._in_poll = False
                    self._gate.notify_all()
            if records:
                self._offer(records)
            if time.monotonic() - self.last_drain > self.IDLE_STOP_S:
                log.info("Stopping an orphaned source task instance")
                self._stopping.set()
                threading.Thread(target=self.stop, daemon=True).start()
                return

    def pause_polling(self, timeout_s: float) -> bool:
        """No poll() after this returns True (records already polled stay queued)."""
        deadline = time.monotonic() + timeout_s
        with self._gate:
            self._paused = True
            while self._in_poll:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._gate.wait(remaining)
        return True

    def resume_polling(self) -> None:
        with self._gate:
            self._paused = False
            self._gate.notify_all()

    def offer_split_read(self, parts: list[Any]) -> None:
        self._offer(_SplitRead(parts))

    def _offer(self, item: list[SourceRecord] | _Failure | _SplitRead) -> None:
        while not self._stopping.is_set():
            try:
                self.queue.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    @property
    def retired(self) -> bool:
        return self._stopping.is_set()

    def next_records(self, timeout: float) -> list[SourceRecord] | _Failure | _SplitRead | None:
        if self.carry:
            records, self.carry = self.carry, []
            return records
        try:
            return self.queue.get(timeout=timeout) if timeout > 0 else self.queue.get_nowait()
        except queue.Empty:
            return None

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._stopping.set()
        with self._gate:
            self._gate.notify_all()
        try:
            self.task.stop()
        finally:
            self._thread.join(timeout=5)
            self.pipeline.close()


def run_source_batch(spec: SourceBatchSpec, report: Any) -> Iterator[pa.RecordBatch]:
    """Poll one micro-batch of a source task and yield it as Arrow batches.

    ``report`` is a Spark accumulator: it receives one entry
    ``(task, seq, [(partition, offset)], count, trace_or_None, fresh, topics, split_parts)``
    that the driver sees only if the Spark task — including the Kafka write — succeeded.
    A split read the task requested ends the batch; its parts go to the driver, which
    reads them (:func:`run_split_part`) before the next batch.
    """
    with _collector_paused():
        yield from _run_source_batch(spec, report)


def _run_source_batch(spec: SourceBatchSpec, report: Any) -> Iterator[pa.RecordBatch]:
    task_spec = spec.task
    fresh = False
    host = _take_host(task_spec, spec.seq, _SourceHost)
    try:
        if host is None:
            fresh = True
            host = _SourceHost(spec)
            _put_host(task_spec, host)
        elif spec.seq > 0:
            host.task.commit()  # the previous batch's offsets were committed by the driver
    except BaseException as exc:
        if host is not None:
            _drop_host(task_spec, host)
        report.add([(task_spec.task, spec.seq, [], 0, _format_trace(exc), fresh, [], [])])
        return
    assert isinstance(host, _SourceHost)
    host.last_seq = spec.seq
    host.last_drain = time.monotonic()
    host.resume_polling()  # a batch runs only while the task is not paused

    last_offsets: dict[Any, tuple[dict[str, Any], dict[str, Any]]] = {}
    topics: set[str] = set()
    failure: str | None = None
    split_parts: list[Any] = []
    count = 0
    deadline = time.monotonic() + spec.max_wait_ms / 1000.0
    columns = _SourceColumns(host.pipeline, host.write_timestamps, host.topic_creator)
    while count < spec.max_records:
        # Wait for the first records up to the deadline; after that linger only briefly
        # for the next poll: a busy source keeps one batch (one Spark job) going up to
        # max_records while records flow, and a batch that has data never waits long on
        # a slow or idle poll (records are written as each chunk fills, not at the end).
        remaining = max(0.0, deadline - time.monotonic())
        wait = remaining if count == 0 else min(remaining, LINGER_S)
        item = host.next_records(wait)
        if item is None:
            break
        if isinstance(item, _Failure):
            failure = item.trace
            break
        if isinstance(item, _SplitRead):
            split_parts = item.parts
            break
        room = spec.max_records - count
        if len(item) > room:
            item, host.carry = item[:room], item[room:]
        columns.extend(item)
        count += len(item)
        if len(columns) >= ARROW_CHUNK_ROWS:
            pending = len(columns)
            chunk, delivered, error = columns.flush()
            _track_offsets(delivered, last_offsets, topics)
            if chunk is not None:
                yield chunk
            if error is not None:  # conversion failed: errors.tolerance=none fails the task
                failure, count = _format_trace(error), count - pending + len(delivered)
                break
    if len(columns):  # what was polled before a failed poll is still delivered
        pending = len(columns)
        chunk, delivered, error = columns.flush()
        _track_offsets(delivered, last_offsets, topics)
        if chunk is not None:
            yield chunk
        if error is not None and failure is None:
            failure = _format_trace(error)
        if error is not None:
            count = count - pending + len(delivered)
    if failure is not None:
        _drop_host(task_spec, host)
        split_parts = []
    report.add(
        [(task_spec.task, spec.seq, list(last_offsets.values()), count, failure, fresh, sorted(topics), split_parts)]
    )


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
    with _collector_paused():
        yield from _run_split_part(spec, report)


def _run_split_part(spec: SplitPartSpec, report: Any) -> Iterator[pa.RecordBatch]:
    task_spec = spec.task
    offsets: dict[Any, tuple[dict[str, Any], dict[str, Any]]] = {}
    topics: set[str] = set()
    count = 0
    failure: str | None = None
    pipeline: RecordPipeline | None = None
    try:
        _ensure_plugin_paths(task_spec.task_config)
        task_class = load_class(task_spec.task_class)
        pipeline = _make_pipeline(task_spec)
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
        failure = _format_trace(exc)
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


class _SinkContext(SinkTaskContext):
    def __init__(self, config: dict[str, str], assignment: list[tuple[str, int]]) -> None:
        self._config = config
        self._assignment = {TopicPartition(t, p) for t, p in assignment}
        self.rewinds: dict[TopicPartition, int] = {}
        self.reporter: ErrantRecordReporter | None = None
        self.timeout_ms = 0
        self.paused: set[TopicPartition] = set()
        self.commit_requested = False

    def configs(self) -> dict[str, str]:
        return dict(self._config)

    def offset(self, offsets: dict[TopicPartition, int] | TopicPartition, offset: int | None = None) -> None:
        if isinstance(offsets, TopicPartition):
            assert offset is not None
            self.rewinds[offsets] = offset
        else:
            self.rewinds.update(offsets)

    def timeout(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms

    def assignment(self) -> set[TopicPartition]:
        return set(self._assignment)

    def pause(self, *partitions: TopicPartition) -> None:
        self.paused.update(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        self.paused.difference_update(partitions)

    def request_commit(self) -> None:
        self.commit_requested = True

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        return self.reporter


class _ErrantRecordReporter(ErrantRecordReporter):
    """Reports a record the task could not handle: dead-lettered (raw, as consumed) and
    tolerated, or, with ``errors.tolerance=none``, the task fails (``put`` raises)."""

    def __init__(self, host: _SinkHost) -> None:
        self.host = host

    def report(self, record: SinkRecord, error: BaseException) -> None:
        host = self.host
        cols = host.batch_columns
        pipeline = host.pipeline
        pipeline.operator.execute(
            Stage.TASK_PUT,
            host.task_class,
            lambda: (_ for _ in ()).throw(error),
            lambda step: pipeline.dead_letter_for(cols, record, step.error, host.dead),
        )


class _SinkHost(_Host):
    def __init__(self, spec: SinkBatchSpec) -> None:
        task_spec = spec.task
        _ensure_plugin_paths(task_spec.task_config)
        self.incarnation = task_spec.incarnation
        self.last_seq = spec.seq - 1
        self.assignment = sorted(spec.assignment)
        self.pipeline = _make_pipeline(task_spec)
        self.task_class = task_spec.task_class
        self.batch_columns: dict[str, list[Any]] = {}
        self.dead: list[DeadLetter] = []
        self.context = _SinkContext(task_spec.task_config, spec.assignment)
        self.context.reporter = _ErrantRecordReporter(self)
        self.task: SinkTask = load_class(task_spec.task_class)()
        self.task.initialize(self.context)
        self.task.start(dict(task_spec.task_config))
        self.task.open([TopicPartition(t, p) for t, p in self.assignment])
        self.positions: dict[TopicPartition, int] = {}
        self._stopped = False

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        try:
            self.task.close([TopicPartition(t, p) for t, p in self.assignment])
        finally:
            try:
                self.task.stop()
            finally:
                self.pipeline.close()


def _sink_rows(
    kind: str, entries: list[tuple[str | None, int | None, int | None]], trace: str | None = None
) -> pa.RecordBatch:
    n = len(entries)
    return pa.RecordBatch.from_arrays(
        [
            pa.array([kind] * n, pa.string()),
            pa.array([e[0] for e in entries], pa.string()),
            pa.array([e[1] for e in entries], pa.int32()),
            pa.array([e[2] for e in entries], pa.int64()),
            pa.array([trace] * n, pa.string()),
            pa.nulls(n, pa.binary()),
            pa.nulls(n, pa.binary()),
            pa.nulls(n, pa.string()),
            pa.nulls(n, pa.int64()),
        ],
        schema=SINK_OUTPUT_SCHEMA,
    )


def _dead_letter_rows(dead: list[DeadLetter]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [
            pa.array(["dlq"] * len(dead), pa.string()),
            pa.array([d.topic for d in dead], pa.string()),
            pa.array([d.partition for d in dead], pa.int32()),
            pa.array([d.offset for d in dead], pa.int64()),
            pa.nulls(len(dead), pa.string()),
            pa.array([d.key for d in dead], pa.binary()),
            pa.array([d.value for d in dead], pa.binary()),
            pa.array([d.headers_json() if d.headers else None for d in dead], pa.string()),
            pa.array([d.timestamp for d in dead], pa.int64()),
        ],
        schema=SINK_OUTPUT_SCHEMA,
    )


def run_sink_batch(spec: SinkBatchSpec, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Deliver one micro-batch of Kafka records to a sink task.

    Yields ``commit`` rows (offsets safe to commit, from ``pre_commit``), ``rewind``
    rows (where the driver must read from next) or one ``error`` row whose trace
    fails the task. Input columns: key, value, topic, partition, offset, ts_ms,
    ts_type, headers_json (the headers as JSON text, values base64, null when none).
    """
    with _collector_paused():
        yield from _run_sink_batch(spec, batches)


def _run_sink_batch(spec: SinkBatchSpec, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    task_spec = spec.task
    host = _take_host(task_spec, spec.seq, _SinkHost)
    try:
        if host is not None and host.assignment != sorted(spec.assignment):
            _drop_host(task_spec, host)
            host = None
        if host is None:
            host = _SinkHost(spec)
            _put_host(task_spec, host)
            host.positions = {TopicPartition(t, p): o for (t, p), o in spec.committed.items()}
            # A fresh instance must see every record after the committed offsets; if the
            # driver's read position is ahead of them, ask it to read again from there.
            behind = [
                (t, p, spec.committed[(t, p)])
                for (t, p), start in spec.start.items()
                if (t, p) in spec.committed and start != spec.committed[(t, p)]
            ]
            if behind:
                host.last_seq = spec.seq
                for _ in batches:
                    pass
                yield _sink_rows("rewind", behind)  # type: ignore[arg-type]
                return
    except BaseException as exc:
        if host is not None:
            _drop_host(task_spec, host)
        for _ in batches:
            pass
        yield _sink_rows("error", [(None, None, None)], _format_trace(exc))
        return
    assert isinstance(host, _SinkHost)
    host.last_seq = spec.seq
    host.dead = []
    if spec.start_only:
        for _ in batches:
            pass
        yield from _requested_timeout(host)
        return
    try:
        delivered = False
        for batch in batches:
            delivered = True
            host.batch_columns = cols = batch.to_pydict()
            if spec.columnar:
                records = _columnar_sink_records(host, batch, cols, spec.typed)
            else:
                records = host.pipeline.sink_records(batch, host.dead, cols)
            _put_with_retries(host, records)
            # Every consumed record counts, also those filtered out or dead-lettered.
            last: dict[tuple[str, int], int] = {}
            for topic, partition, offset in zip(cols["topic"], cols["partition"], cols["offset"], strict=True):
                last[(topic, partition)] = offset
            for (topic, partition), offset in last.items():
                host.positions[TopicPartition(topic, partition)] = offset + 1
        if spec.columnar:
            for (topic, partition), end in spec.end.items():
                host.positions[TopicPartition(topic, partition)] = end
        if not delivered:
            # As Kafka Connect does when a poll returns nothing: a task that paused its
            # partitions gets the chance to resume them from put().
            _put_with_retries(host, [])
        committed = host.task.pre_commit(dict(host.positions)) or {}
    except BaseException as exc:
        _drop_host(task_spec, host)
        if host.dead:  # reported before the task fails, as Kafka Connect does
            yield _dead_letter_rows(host.dead)
        yield _sink_rows("error", [(None, None, None)], _format_trace(exc))
        return
    if host.dead:
        yield _dead_letter_rows(host.dead)
        host.dead = []
    rows = [(tp.topic, tp.partition, off) for tp, off in sorted(committed.items())]
    if rows:
        yield _sink_rows("commit", rows)  # type: ignore[arg-type]
    if host.context.paused:
        # Partitions the task paused through its context: the driver skips them until resumed.
        yield _sink_rows("paused", [(tp.topic, tp.partition, None) for tp in sorted(host.context.paused)])
    if host.context.rewinds:
        rewinds = [(tp.topic, tp.partition, off) for tp, off in sorted(host.context.rewinds.items())]
        host.context.rewinds.clear()
        for t, p, off in rewinds:
            host.positions[TopicPartition(t, p)] = off
        yield _sink_rows("rewind", rewinds)  # type: ignore[arg-type]
    yield from _requested_timeout(host)


def _requested_timeout(host: _SinkHost) -> Iterator[pa.RecordBatch]:
    """A ``timeout`` row when the task called ``context.timeout(ms)``: the driver calls
    ``put`` again within that time even if no record arrives (Kafka's next poll waits at
    most that long). As in Kafka, a timeout serves one wait only."""
    if host.context.timeout_ms > 0:
        yield _sink_rows("timeout", [(None, None, host.context.timeout_ms)])
        host.context.timeout_ms = 0


def _columnar_sink_records(
    host: _SinkHost, batch: pa.RecordBatch, cols: dict[str, list[Any]], typed_outputs: TypedOutputs | None = None
) -> list[SinkRecord]:
    """Rows Spark already ran the chain on: convert them as consumed (original topic and,
    for the dead letter queue, headers), then give each its ``sink_topic``; a row whose
    ``sink_topic`` is null goes through the chain here."""
    pipeline, dead = host.pipeline, host.dead
    converting = cols
    if "sink_headers_json" in cols:
        converting = dict(cols, headers_json=cols["sink_headers_json"])
    records = pipeline.sink_records(batch, dead, converting, transform=False)
    topics = cols.get("sink_topic")
    if topics is None:
        return records
    typed = _typed_columns(typed_outputs, cols) if typed_outputs is not None else None
    if len(records) == len(topics):
        rows: Any = range(len(topics))
    else:  # conversion left some out (tolerated errors)
        index = {
            (t, p, o): i
            for i, (t, p, o) in enumerate(zip(cols["topic"], cols["partition"], cols["offset"], strict=True))
        }
        rows = [index[(r.topic, r.kafka_partition, r.kafka_offset)] for r in records]
    out: list[SinkRecord] = []
    for record, i in zip(records, rows, strict=True):
        topic = topics[i]
        if topic is None:
            result = pipeline.transform_sink_record(record, cols, dead)
            if result is not None:
                out.append(result)
            continue
        if topic != record.topic:
            record.topic = topic
        if typed is not None:
            typed(record, i)
        out.append(record)
    return out


@functools.lru_cache(maxsize=32)
def _typed_builders(outputs: TypedOutputs) -> tuple[Any, Any, tuple[tuple[str, str, Schema, Any], ...]]:
    key = value_builder(outputs.key_schema) if outputs.key_schema is not None else None
    value = value_builder(outputs.value_schema) if outputs.value_schema is not None else None
    headers = tuple(
        (f"h{n}", name, schema, value_builder(schema)) for n, (name, schema) in enumerate(outputs.added_headers)
    )
    return key, value, headers


def _typed_columns(outputs: TypedOutputs, cols: dict[str, list[Any]]) -> Callable[[SinkRecord, int], None]:
    """Sets a record's key, value and added headers from the chain's typed columns."""
    build_key, build_value, headers = _typed_builders(outputs)
    keys, values = cols.get(SINK_KEY), cols.get(SINK_VALUE)
    added = cols.get(SINK_ADDED_HEADERS)
    key_schema, value_schema = outputs.key_schema, outputs.value_schema

    def apply(record: SinkRecord, i: int) -> None:
        if build_key is not None:
            record.key_schema, record.key = key_schema, build_key(keys[i])  # type: ignore[index]
        if build_value is not None:
            record.value_schema, record.value = value_schema, build_value(values[i])  # type: ignore[index]
        if headers:
            row = added[i]  # type: ignore[index]
            for column, name, schema, build in headers:
                record.headers.add(name, build(row[column]), schema)

    return apply


RETRIABLE_PUT_ATTEMPTS = 10


def _put_with_retries(host: _SinkHost, records: list[SinkRecord]) -> None:
    for attempt in range(RETRIABLE_PUT_ATTEMPTS):
        try:
            host.task.put(records)
            return
        except RetriableError:
            if attempt == RETRIABLE_PUT_ATTEMPTS - 1:
                raise
            time.sleep(max(host.context.timeout_ms, 100) / 1000.0)
