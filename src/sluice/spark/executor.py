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

import base64
import importlib
import json
import logging
import queue
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from sluice.api.converter import Converter, HeaderConverter
from sluice.api.errors import RetriableError
from sluice.api.records import Headers, SinkRecord, SourceRecord, TimestampType, TopicPartition
from sluice.api.sink import SinkTask, SinkTaskContext
from sluice.api.source import OffsetStorageReader, SourceTask, SourceTaskContext, partition_key

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
    "stop_host",
]

# Rows a source batch hands to Spark's Kafka sink.
SOURCE_OUTPUT_SCHEMA = pa.schema(
    [
        ("key", pa.binary()),
        ("value", pa.binary()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("headers", pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))),
    ]
)
SOURCE_OUTPUT_DDL = (
    "key binary, value binary, topic string, partition int, headers array<struct<key: string, value: binary>>"
)

# One row per committed partition offset, or one row carrying a failure or rewind.
SINK_OUTPUT_SCHEMA = pa.schema(
    [
        ("kind", pa.string()),  # "commit" | "rewind" | "paused" | "error"
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("trace", pa.string()),
    ]
)
SINK_OUTPUT_DDL = "kind string, topic string, partition int, offset long, trace string"

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


@dataclass(frozen=True)
class SinkBatchSpec:
    task: TaskSpec
    seq: int
    assignment: list[tuple[str, int]]
    committed: dict[tuple[str, int], int]
    start: dict[tuple[str, int], int]


def load_class(path: str) -> type:
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


def _take_host(spec: TaskSpec, seq: int) -> _Host | None:
    """The live host for this task if it served batch ``seq - 1``; stale ones are stopped."""
    with _HOSTS_LOCK:
        host = _HOSTS.get(spec.host_key)
        if host is None:
            return None
        if host.incarnation == spec.incarnation and host.last_seq == seq - 1 and not host.retired:
            return host
        del _HOSTS[spec.host_key]
    _stop_quietly(host)
    return None


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

    def configs(self) -> dict[str, str]:
        return dict(self._config)

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader


class _Failure:
    def __init__(self, trace: str) -> None:
        self.trace = trace


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
        self.key_converter = _make_converter(task_spec.key_converter, True)
        self.value_converter = _make_converter(task_spec.value_converter, False)
        self.header_converter = _make_header_converter(task_spec.header_converter)
        self.task: SourceTask = load_class(task_spec.task_class)()
        self.task.initialize(_SourceContext(task_spec.task_config, _SnapshotOffsetReader(spec.committed_offsets)))
        self.task.start(dict(task_spec.task_config))
        self.queue: queue.Queue[list[SourceRecord] | _Failure] = queue.Queue(self.QUEUE_POLLS)
        self.carry: list[SourceRecord] = []
        self._stopping = threading.Event()
        self._stopped = False
        self.last_drain = time.monotonic()
        self._thread = threading.Thread(
            target=self._poll_loop, name=f"sluice-source-{task_spec.connector}-{task_spec.task}", daemon=True
        )
        self._thread.start()

    def _poll_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                records = self.task.poll()
            except RetriableError:
                self._stopping.wait(0.1)
                continue
            except BaseException as exc:  # the task is FAILED with this trace
                self._offer(_Failure(_format_trace(exc)))
                return
            if records:
                self._offer(records)
            if time.monotonic() - self.last_drain > self.IDLE_STOP_S:
                log.info("Stopping an orphaned source task instance")
                self._stopping.set()
                threading.Thread(target=self.stop, daemon=True).start()
                return

    def _offer(self, item: list[SourceRecord] | _Failure) -> None:
        while not self._stopping.is_set():
            try:
                self.queue.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    @property
    def retired(self) -> bool:
        return self._stopping.is_set()

    def next_records(self, timeout: float) -> list[SourceRecord] | _Failure | None:
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
        try:
            self.task.stop()
        finally:
            self._thread.join(timeout=5)


def run_source_batch(spec: SourceBatchSpec, report: Any) -> Iterator[pa.RecordBatch]:
    """Poll one micro-batch of a source task and yield it as Arrow batches.

    ``report`` is a Spark accumulator: it receives one entry
    ``(task, seq, [(partition, offset)], count, trace_or_None, fresh, topics)`` that the
    driver sees only if the Spark task — including the Kafka write — succeeded.
    """
    task_spec = spec.task
    fresh = False
    host = _take_host(task_spec, spec.seq)
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
        report.add([(task_spec.task, spec.seq, [], 0, _format_trace(exc), fresh, [])])
        return
    assert isinstance(host, _SourceHost)
    host.last_seq = spec.seq
    host.last_drain = time.monotonic()

    last_offsets: dict[Any, tuple[dict[str, Any], dict[str, Any]]] = {}
    topics: set[str] = set()
    failure: str | None = None
    count = 0
    deadline = time.monotonic() + spec.max_wait_ms / 1000.0
    columns = _SourceColumns(host)
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
    report.add([(task_spec.task, spec.seq, list(last_offsets.values()), count, failure, fresh, sorted(topics))])


class _SourceColumns:
    """Collects polled records and converts them, a chunk at a time, into one Arrow batch."""

    def __init__(self, host: _SourceHost) -> None:
        self.host = host
        self.records: list[SourceRecord] = []

    def __len__(self) -> int:
        return len(self.records)

    def extend(self, records: list[SourceRecord]) -> None:
        self.records.extend(records)

    def flush(self) -> tuple[pa.RecordBatch | None, list[SourceRecord], BaseException | None]:
        """Convert what was collected: ``(batch, records in it, conversion error)``.

        When the chunk fails to convert, the batch holds the records before the first
        bad one, so they are delivered (and their offsets committed) before the task fails.
        """
        records, self.records = self.records, []
        try:
            return self._to_batch(records, batched=True), records, None
        except BaseException:
            pass
        good: list[SourceRecord] = []
        error: BaseException | None = None
        for record in records:
            try:
                self._to_batch([record], batched=False)
            except BaseException as exc:
                error = exc
                break
            good.append(record)
        return (self._to_batch(good, batched=False) if good else None), good, error

    def _to_batch(self, records: list[SourceRecord], batched: bool) -> pa.RecordBatch:
        host = self.host
        topics = [r.topic for r in records]
        headers = [r._headers for r in records]  # None for the common header-less record
        key_schemas, keys = [r.key_schema for r in records], [r.key for r in records]
        value_schemas, values = [r.value_schema for r in records], [r.value for r in records]
        hc = host.header_converter
        return pa.RecordBatch.from_arrays(
            [
                pa.array(_from_connect_column(host.key_converter, topics, key_schemas, keys, headers, batched), pa.binary()),
                pa.array(
                    _from_connect_column(host.value_converter, topics, value_schemas, values, headers, batched), pa.binary()
                ),
                pa.array(topics, pa.string()),
                pa.array([r.kafka_partition for r in records], pa.int32()),
                pa.array(
                    [
                        [{"key": h.key, "value": hc.from_connect_header(t, h.key, h.schema, h.value)} for h in hs]
                        if hs
                        else None
                        for t, hs in zip(topics, headers, strict=True)
                    ],
                    SOURCE_OUTPUT_SCHEMA.field("headers").type,
                ),
            ],
            schema=SOURCE_OUTPUT_SCHEMA,
        )


def _from_connect_column(
    converter: Converter,
    topics: list[str],
    schemas: list[Any],
    values: list[Any],
    headers: list[Headers | None],
    batched: bool,
) -> list[bytes | None]:
    """Serialise one column: in one call when the converter has a batch form and the
    records share a topic, else record by record with their headers."""
    n = len(values)
    if batched and n and topics.count(topics[0]) == n:
        converted = converter.from_connect_batch(topics[0], schemas, values)
        if converted is not None:
            return converted
    return [converter.from_connect_data(topics[i], schemas[i], values[i], headers[i]) for i in range(n)]


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


class _SinkHost(_Host):
    def __init__(self, spec: SinkBatchSpec) -> None:
        task_spec = spec.task
        _ensure_plugin_paths(task_spec.task_config)
        self.incarnation = task_spec.incarnation
        self.last_seq = spec.seq - 1
        self.assignment = sorted(spec.assignment)
        self.key_converter = _make_converter(task_spec.key_converter, True)
        self.value_converter = _make_converter(task_spec.value_converter, False)
        self.header_converter = _make_header_converter(task_spec.header_converter)
        self.context = _SinkContext(task_spec.task_config, spec.assignment)
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
            self.task.stop()


def _sink_rows(kind: str, entries: list[tuple[str | None, int | None, int | None]], trace: str | None = None) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [
            pa.array([kind] * len(entries), pa.string()),
            pa.array([e[0] for e in entries], pa.string()),
            pa.array([e[1] for e in entries], pa.int32()),
            pa.array([e[2] for e in entries], pa.int64()),
            pa.array([trace] * len(entries), pa.string()),
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
    task_spec = spec.task
    host = _take_host(task_spec, spec.seq)
    try:
        if host is not None and isinstance(host, _SinkHost) and host.assignment != sorted(spec.assignment):
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
    try:
        delivered = False
        for batch in batches:
            delivered = True
            records = _to_sink_records(batch, host)
            _put_with_retries(host, records)
            last: dict[tuple[str, int], int] = {}
            for r in records:
                last[(r.topic, r.kafka_partition)] = r.kafka_offset
            for (topic, partition), offset in last.items():
                host.positions[TopicPartition(topic, partition)] = offset + 1
        if not delivered:
            # As Kafka Connect does when a poll returns nothing: a task that paused its
            # partitions gets the chance to resume them from put().
            _put_with_retries(host, [])
        committed = host.task.pre_commit(dict(host.positions)) or {}
    except BaseException as exc:
        _drop_host(task_spec, host)
        yield _sink_rows("error", [(None, None, None)], _format_trace(exc))
        return
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


def _to_sink_records(batch: pa.RecordBatch, host: _SinkHost) -> list[SinkRecord]:
    cols = batch.to_pydict()
    n = batch.num_rows
    topics, partitions, offsets = cols["topic"], cols["partition"], cols["offset"]
    ts, ts_types, headers_col = cols["ts_ms"], cols["ts_type"], cols["headers_json"]
    headers = [_sink_headers(topics[i], raw, host.header_converter) if raw else None for i, raw in enumerate(headers_col)]
    key_schemas, keys = _to_connect_column(host.key_converter, topics, cols["key"], headers, batch.column("key").null_count == n)
    value_schemas, values = _to_connect_column(host.value_converter, topics, cols["value"], headers, False)
    types = [_TIMESTAMP_TYPES.get(t, TimestampType.NO_TIMESTAMP_TYPE) for t in ts_types]
    return [
        SinkRecord(topics[i], partitions[i], key_schemas[i], keys[i], value_schemas[i], values[i], offsets[i], ts[i],
                   types[i], headers[i])
        for i in range(n)
    ]


def _sink_headers(topic: str, raw: str, converter: HeaderConverter) -> Headers:
    headers = Headers()
    for h in json.loads(raw):
        raw_value = h.get("value")
        sv = converter.to_connect_header(topic, h["key"], None if raw_value is None else base64.b64decode(raw_value))
        headers.add(h["key"], sv.value, sv.schema)
    return headers


def _to_connect_column(
    converter: Converter, topics: list[str], raw: list[bytes | None], headers: list[Headers | None], all_null: bool
) -> tuple[list[Any], list[Any]]:
    """Convert one column of a batch: in one call per topic when the converter has a batch
    form (it then never looks at headers), else record by record with headers."""
    n = len(raw)
    first_topic = topics[0] if n else ""
    if n and (topics.count(first_topic) == n):
        if all_null:
            one = converter.to_connect_batch(first_topic, [None])
            if one is not None:
                return one[0] * n, one[1] * n
        else:
            both = converter.to_connect_batch(first_topic, raw)
            if both is not None:
                return both
    schemas: list[Any] = []
    values: list[Any] = []
    for i in range(n):
        sv = converter.to_connect_data(topics[i], raw[i], headers[i] if headers[i] is not None else Headers())
        schemas.append(sv.schema)
        values.append(sv.value)
    return schemas, values


_TIMESTAMP_TYPES = {0: TimestampType.CREATE_TIME, 1: TimestampType.LOG_APPEND_TIME}
