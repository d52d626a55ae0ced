"""Records and headers, mirroring ``org.apache.kafka.connect.connector.ConnectRecord``.

Records are plain picklable objects without locks: they are created and consumed inside
Spark executors (in the Python worker that runs a task), each by one thread at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sluice.api.data import Schema

__all__ = [
    "ConnectRecord",
    "Header",
    "Headers",
    "RecordMetadata",
    "SinkBatch",
    "SinkRecord",
    "SourceRecord",
    "TimestampType",
    "TopicPartition",
]


@dataclass(frozen=True, order=True)
class TopicPartition:
    """A Kafka topic and partition number."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class RecordMetadata:
    """Where Kafka stored a record a source task returned (the producer's ``RecordMetadata``),
    passed to :meth:`~sluice.api.source.SourceTask.commit_record`."""

    topic: str
    partition: int
    offset: int
    # the record's timestamp in the log (ms since the epoch), None when Kafka gave none
    timestamp: int | None = None


@dataclass(frozen=True)
class Header:
    """One record header: a key with a Connect value and optional schema."""

    key: str
    value: Any
    schema: Schema | None = None


class Headers:
    """An ordered, multi-valued collection of :class:`Header` (``ConnectHeaders``).

    The methods that change it return the same object, so calls chain. A copy made with
    :meth:`ConnectRecord.new_record` shares its headers object: call :meth:`duplicate`
    before changing the headers of a record you did not create.
    """

    __slots__ = ("_headers",)

    def __init__(self, headers: Iterable[Header] = ()) -> None:
        self._headers: list[Header] = list(headers)

    def add(self, key: str, value: Any, schema: Schema | None = None) -> Headers:
        """Append a header (keys may repeat)."""
        self._headers.append(Header(key, value, schema))
        return self

    def add_string(self, key: str, value: str | None) -> Headers:
        """Append a header with an optional string schema."""
        return self.add(key, value, Schema.OPTIONAL_STRING_SCHEMA)

    def last_with_name(self, key: str) -> Header | None:
        """The last header with this key, or ``None``."""
        for h in reversed(self._headers):
            if h.key == key:
                return h
        return None

    def all_with_name(self, key: str) -> list[Header]:
        """Every header with this key, in order."""
        return [h for h in self._headers if h.key == key]

    def remove(self, key: str) -> Headers:
        """Remove every header with this key."""
        self._headers = [h for h in self._headers if h.key != key]
        return self

    def clear(self) -> Headers:
        """Remove every header."""
        self._headers.clear()
        return self

    def duplicate(self) -> Headers:
        """A new collection holding the same headers."""
        return Headers(self._headers)

    def __iter__(self) -> Iterator[Header]:
        return iter(self._headers)

    def __len__(self) -> int:
        return len(self._headers)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Headers) and self._headers == other._headers

    def __repr__(self) -> str:
        return f"Headers({self._headers!r})"


class TimestampType:
    """The kind of a sink record's ``timestamp`` (``SinkRecord.timestamp_type``)."""

    NO_TIMESTAMP_TYPE = "NoTimestampType"
    CREATE_TIME = "CreateTime"
    LOG_APPEND_TIME = "LogAppendTime"


class ConnectRecord:
    """Base of :class:`SourceRecord` and :class:`SinkRecord`."""

    __slots__ = ("topic", "kafka_partition", "key_schema", "key", "value_schema", "value", "timestamp", "_headers")

    def __init__(
        self,
        topic: str,
        kafka_partition: int | None,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
        timestamp: int | None = None,
        headers: Headers | Iterable[Header] | None = None,
    ) -> None:
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key_schema = key_schema
        self.key = key
        self.value_schema = value_schema
        self.value = value
        self.timestamp = timestamp
        # Most records carry no headers: build the Headers object only when asked for.
        self._headers = headers if isinstance(headers, Headers) or headers is None else Headers(headers)

    @property
    def headers(self) -> Headers:
        """The record's headers (an empty collection is made on first access)."""
        if self._headers is None:
            self._headers = Headers()
        return self._headers

    @headers.setter
    def headers(self, value: Headers | None) -> None:
        self._headers = value  # None: no headers (made empty on first access)

    @property
    def headers_or_none(self) -> Headers | None:
        """The record's headers, or None when it never had any: unlike :attr:`headers`,
        makes no empty collection (the runtime's fast path for header-less records)."""
        return self._headers

    def new_record(self, **changes: Any) -> ConnectRecord:
        """A copy with some attributes replaced (what ``newRecord(...)`` does in Java),
        e.g. ``record.new_record(value=v, value_schema=s)``: what a transformation
        returns. The copy shares the unchanged values (and the headers object)."""
        raise NotImplementedError

    def _copy_common(self, copy: ConnectRecord) -> None:
        """Give ``copy`` this record's common attributes (the headers object shared)."""
        copy.topic = self.topic
        copy.kafka_partition = self.kafka_partition
        copy.key_schema = self.key_schema
        copy.key = self.key
        copy.value_schema = self.value_schema
        copy.value = self.value
        copy.timestamp = self.timestamp
        copy.headers = self._headers  # None stays None: no empty collection made

    def _fields(self) -> dict[str, Any]:
        return {
            name.lstrip("_"): getattr(self, name.lstrip("_"))
            for cls in type(self).__mro__
            for name in getattr(cls, "__slots__", ())
        }

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash((self.topic, self.kafka_partition))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._fields().items())
        return f"{type(self).__name__}({inner})"


class SourceRecord(ConnectRecord):
    """A record produced by a :class:`~sluice.api.source.SourceTask`.

    ``source_partition`` and ``source_offset`` are JSON-able dicts of primitives. The
    worker stores, for each ``source_partition``, the ``source_offset`` of its last
    record that Kafka acknowledged along with every record of the partition polled
    before it (records a transformation dropped or that failed within
    ``errors.tolerance`` count as acknowledged; records whose ``source_partition`` is
    ``None`` are not tracked). A new task instance reads the
    stored offsets through its ``OffsetStorageReader`` and should resume *after* them.
    ``kafka_partition=None`` lets the producer pick the partition (by key).
    """

    __slots__ = ("source_partition", "source_offset")

    def __init__(
        self,
        source_partition: dict[str, Any] | None,
        source_offset: dict[str, Any] | None,
        topic: str,
        kafka_partition: int | None = None,
        key_schema: Schema | None = None,
        key: Any = None,
        value_schema: Schema | None = None,
        value: Any = None,
        timestamp: int | None = None,
        headers: Headers | Iterable[Header] | None = None,
    ) -> None:
        super().__init__(topic, kafka_partition, key_schema, key, value_schema, value, timestamp, headers)
        self.source_partition = source_partition
        self.source_offset = source_offset

    def new_record(self, **changes: Any) -> SourceRecord:
        # Attribute by attribute: a transformation makes one copy per record, and the
        # generic form (a dict of every field, then the constructor) cost ~5 µs of it.
        copy = object.__new__(SourceRecord)
        copy.source_partition = self.source_partition
        copy.source_offset = self.source_offset
        self._copy_common(copy)
        _apply_changes(copy, changes, _SOURCE_FIELDS)
        return copy


class SinkRecord(ConnectRecord):
    """A record delivered to a :class:`~sluice.api.sink.SinkTask`, read from Kafka."""

    __slots__ = (
        "kafka_offset",
        "timestamp_type",
        "original_topic",
        "original_kafka_partition",
        "original_kafka_offset",
    )

    def __init__(
        self,
        topic: str,
        kafka_partition: int,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
        kafka_offset: int,
        timestamp: int | None = None,
        timestamp_type: str = TimestampType.NO_TIMESTAMP_TYPE,
        headers: Headers | Iterable[Header] | None = None,
        original_topic: str | None = None,
        original_kafka_partition: int | None = None,
        original_kafka_offset: int | None = None,
    ) -> None:
        """``original_*`` (Kafka's ``originalTopic()``, …): where the record was consumed,
        kept by :meth:`new_record` when a transformation routes it; default: this record's."""
        super().__init__(topic, kafka_partition, key_schema, key, value_schema, value, timestamp, headers)
        self.kafka_offset = kafka_offset
        self.timestamp_type = timestamp_type
        self.original_topic = topic if original_topic is None else original_topic
        self.original_kafka_partition = (
            kafka_partition if original_kafka_partition is None else original_kafka_partition
        )
        self.original_kafka_offset = kafka_offset if original_kafka_offset is None else original_kafka_offset

    def new_record(self, **changes: Any) -> SinkRecord:
        # Attribute by attribute, as SourceRecord.new_record (one copy per record and step).
        copy = object.__new__(SinkRecord)
        copy.kafka_offset = self.kafka_offset
        copy.timestamp_type = self.timestamp_type
        copy.original_topic = self.original_topic
        copy.original_kafka_partition = self.original_kafka_partition
        copy.original_kafka_offset = self.original_kafka_offset
        self._copy_common(copy)
        _apply_changes(copy, changes, _SINK_FIELDS)
        return copy


class SinkBatch:
    """The records of one ``put``, column by column: what
    :meth:`SinkTask.put_batch <sluice.api.sink.SinkTask.put_batch>` receives.

    Column ``i`` of every list describes record ``i`` — as the attributes of the same name
    of :class:`SinkRecord` (``topics[i]`` is ``record.topic``, ``partitions[i]`` its
    ``kafka_partition``, ``offsets[i]`` its ``kafka_offset``, ``headers[i]`` its headers or
    ``None`` when it has none, and so on). The records are converted and transformed
    already, in the order :meth:`SinkTask.put <sluice.api.sink.SinkTask.put>` would get
    them. Treat the lists as read-only: the runtime may share them between batches and
    with the records :meth:`records` returns.

    A sink that writes whole columns (values to a file, rows to a table) reads them
    directly and never pays for a :class:`SinkRecord` per record; :meth:`records` builds
    those on first use, once.
    """

    __slots__ = ("_columns", "_records")

    #: The columns, by the names of the attributes that read them.
    COLUMNS = (
        "topics",
        "partitions",
        "key_schemas",
        "keys",
        "value_schemas",
        "values",
        "offsets",
        "timestamps",
        "timestamp_types",
        "headers",
        "original_topics",
        "original_partitions",
        "original_offsets",
    )

    def __init__(
        self,
        topics: list[str],
        partitions: list[int],
        key_schemas: list[Schema | None],
        keys: list[Any],
        value_schemas: list[Schema | None],
        values: list[Any],
        offsets: list[int],
        timestamps: list[int | None],
        timestamp_types: list[str],
        headers: list[Headers | None],
        original_topics: list[str] | None = None,
        original_partitions: list[int] | None = None,
        original_offsets: list[int] | None = None,
    ) -> None:
        """Every list holds one entry per record; ``original_*`` (where each record was
        consumed) default to ``topics``, ``partitions`` and ``offsets``."""
        n = len(offsets)
        columns = (topics, partitions, key_schemas, keys, value_schemas, values, timestamps, timestamp_types, headers)
        if any(len(column) != n for column in columns):
            raise ValueError("A SinkBatch's columns must all hold one entry per record")
        self._columns: Mapping[str, list[Any]] = {
            "topics": topics,
            "partitions": partitions,
            "key_schemas": key_schemas,
            "keys": keys,
            "value_schemas": value_schemas,
            "values": values,
            "offsets": offsets,
            "timestamps": timestamps,
            "timestamp_types": timestamp_types,
            "headers": headers,
            "original_topics": topics if original_topics is None else original_topics,
            "original_partitions": partitions if original_partitions is None else original_partitions,
            "original_offsets": offsets if original_offsets is None else original_offsets,
        }
        self._records: list[SinkRecord] | None = None

    @classmethod
    def from_columns(cls, columns: Mapping[str, list[Any]]) -> SinkBatch:
        """A batch over a mapping that gives each of :data:`COLUMNS` by name, as equally
        long lists: the runtime's, which makes a column (the offsets, the timestamps) only
        when a sink reads it."""
        batch = object.__new__(cls)
        batch._columns = columns
        batch._records = None
        return batch

    @property
    def topics(self) -> list[str]:
        return self._columns["topics"]

    @property
    def partitions(self) -> list[int]:
        return self._columns["partitions"]

    @property
    def key_schemas(self) -> list[Schema | None]:
        return self._columns["key_schemas"]

    @property
    def keys(self) -> list[Any]:
        return self._columns["keys"]

    @property
    def value_schemas(self) -> list[Schema | None]:
        return self._columns["value_schemas"]

    @property
    def values(self) -> list[Any]:
        return self._columns["values"]

    @property
    def offsets(self) -> list[int]:
        return self._columns["offsets"]

    @property
    def timestamps(self) -> list[int | None]:
        return self._columns["timestamps"]

    @property
    def timestamp_types(self) -> list[str]:
        return self._columns["timestamp_types"]

    @property
    def headers(self) -> list[Headers | None]:
        return self._columns["headers"]

    @property
    def original_topics(self) -> list[str]:
        return self._columns["original_topics"]

    @property
    def original_partitions(self) -> list[int]:
        return self._columns["original_partitions"]

    @property
    def original_offsets(self) -> list[int]:
        return self._columns["original_offsets"]

    @classmethod
    def of(cls, records: list[SinkRecord]) -> SinkBatch:
        """A batch of these records; its :meth:`records` returns this very list."""
        batch = cls(
            [r.topic for r in records],
            [r.kafka_partition for r in records],  # type: ignore[misc]  # a SinkRecord's is set
            [r.key_schema for r in records],
            [r.key for r in records],
            [r.value_schema for r in records],
            [r.value for r in records],
            [r.kafka_offset for r in records],
            [r.timestamp for r in records],
            [r.timestamp_type for r in records],
            [r.headers_or_none for r in records],
            [r.original_topic for r in records],
            [r.original_kafka_partition for r in records],
            [r.original_kafka_offset for r in records],
        )
        batch._records = records
        return batch

    def with_columns(self, **columns: list[Any]) -> SinkBatch:
        """A batch of the same records with some columns replaced, e.g.
        ``batch.with_columns(topics=new_topics)`` (what a transformation's
        ``apply_batch`` returns); the others are shared. Replacing ``topics``,
        ``partitions`` or ``offsets`` leaves the ``original_*`` columns as they were."""
        unknown = set(columns) - set(self.COLUMNS)
        if unknown:
            raise TypeError(f"with_columns() got unexpected columns: {', '.join(sorted(unknown))}")
        n = len(self)
        if any(len(column) != n for column in columns.values()):
            raise ValueError("A SinkBatch's columns must all hold one entry per record")
        return SinkBatch.from_columns(_ReplacedColumns(self._columns, columns))

    def take(self, rows: list[int]) -> SinkBatch:
        """A batch of the records at these positions, in the order given."""
        if not rows:
            return SinkBatch.of([])  # reads no column (a lazily made one would be made for nothing)
        return SinkBatch.from_columns(
            {name: [column[i] for i in rows] for name, column in ((n, getattr(self, n)) for n in self.COLUMNS)}
        )

    def records(self) -> list[SinkRecord]:
        """The batch as :class:`SinkRecord` objects, made on the first call; later calls
        return the same list."""
        if self._records is None:
            self._records = [
                SinkRecord(t, p, ks, k, vs, v, o, ts, tt, h, ot, op, oo)
                for t, p, ks, k, vs, v, o, ts, tt, h, ot, op, oo in zip(
                    self.topics,
                    self.partitions,
                    self.key_schemas,
                    self.keys,
                    self.value_schemas,
                    self.values,
                    self.offsets,
                    self.timestamps,
                    self.timestamp_types,
                    self.headers,
                    self.original_topics,
                    self.original_partitions,
                    self.original_offsets,
                    strict=True,
                )
            ]
        return self._records

    def __len__(self) -> int:
        return len(self._columns["values"])

    def __repr__(self) -> str:
        return f"SinkBatch({len(self)} records)"


class _ReplacedColumns(Mapping[str, list[Any]]):
    """Columns of another batch, some replaced (read lazily, as the other batch's are)."""

    __slots__ = ("_base", "_changes")

    def __init__(self, base: Mapping[str, list[Any]], changes: dict[str, list[Any]]) -> None:
        self._base = base
        self._changes = changes

    def __getitem__(self, name: str) -> list[Any]:
        column = self._changes.get(name)
        return self._base[name] if column is None else column

    def __iter__(self) -> Iterator[str]:
        return iter(SinkBatch.COLUMNS)

    def __len__(self) -> int:
        return len(SinkBatch.COLUMNS)


_COMMON_FIELDS = frozenset(ConnectRecord.__slots__) - {"_headers"} | {"headers"}
_SOURCE_FIELDS = _COMMON_FIELDS | frozenset(SourceRecord.__slots__)
_SINK_FIELDS = _COMMON_FIELDS | frozenset(SinkRecord.__slots__)


def _apply_changes(copy: ConnectRecord, changes: dict[str, Any], allowed: frozenset[str]) -> None:
    """``new_record``'s keyword arguments, checked as the constructor would check them."""
    for name, value in changes.items():
        if name not in allowed:
            raise TypeError(f"new_record() got an unexpected keyword argument '{name}'")
        if name == "headers":
            copy.headers = value if isinstance(value, Headers) or value is None else Headers(value)
        else:
            setattr(copy, name, value)
