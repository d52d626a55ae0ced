"""Records and headers, mirroring ``org.apache.kafka.connect.connector.ConnectRecord``.

Records are plain picklable objects: they are created and consumed inside Spark
executors (in the Python worker that runs a task).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from sluice.api.data import Schema

__all__ = ["ConnectRecord", "Header", "Headers", "SinkRecord", "SourceRecord", "TimestampType", "TopicPartition"]


@dataclass(frozen=True, order=True)
class TopicPartition:
    """A Kafka topic and partition number."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class Header:
    """One record header: a key with a Connect value and optional schema."""

    key: str
    value: Any
    schema: Schema | None = None


class Headers:
    """An ordered, multi-valued collection of :class:`Header` (``ConnectHeaders``)."""

    __slots__ = ("_headers",)

    def __init__(self, headers: Iterable[Header] = ()) -> None:
        self._headers: list[Header] = list(headers)

    def add(self, key: str, value: Any, schema: Schema | None = None) -> Headers:
        self._headers.append(Header(key, value, schema))
        return self

    def add_string(self, key: str, value: str | None) -> Headers:
        return self.add(key, value, Schema.OPTIONAL_STRING_SCHEMA)

    def last_with_name(self, key: str) -> Header | None:
        for h in reversed(self._headers):
            if h.key == key:
                return h
        return None

    def all_with_name(self, key: str) -> list[Header]:
        return [h for h in self._headers if h.key == key]

    def remove(self, key: str) -> Headers:
        self._headers = [h for h in self._headers if h.key != key]
        return self

    def clear(self) -> Headers:
        self._headers.clear()
        return self

    def duplicate(self) -> Headers:
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
        if self._headers is None:
            self._headers = Headers()
        return self._headers

    @headers.setter
    def headers(self, value: Headers) -> None:
        self._headers = value

    def new_record(self, **changes: Any) -> ConnectRecord:
        """A copy with some attributes replaced (what ``newRecord(...)`` does in Java)."""
        raise NotImplementedError

    def _fields(self) -> dict[str, Any]:
        return {
            name.lstrip("_"): getattr(self, name.lstrip("_"))
            for cls in type(self).__mro__
            for name in getattr(cls, "__slots__", ())
        }

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._fields() == other._fields()  # type: ignore[union-attr]

    def __hash__(self) -> int:
        return hash((self.topic, self.kafka_partition))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._fields().items())
        return f"{type(self).__name__}({inner})"


class SourceRecord(ConnectRecord):
    """A record produced by a :class:`~sluice.api.source.SourceTask`.

    ``source_partition`` and ``source_offset`` are JSON-able dicts of primitives; the
    framework stores the offset only after Kafka acknowledged the record, and a
    restarted task resumes *after* the stored offset.
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
        fields = self._fields()
        fields.update(changes)
        return SourceRecord(**fields)


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
        fields = self._fields()
        fields.update(changes)
        return SinkRecord(**fields)
