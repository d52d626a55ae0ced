"""Confluent's storage partitioners: which directory under ``<topics.dir>/<topic>/`` a
record's file goes to (its *encoded partition*), and the timestamp extractors the
time-based ones and ``rotate.interval.ms`` use.

- ``DefaultPartitioner``: ``partition=<kafka partition>``.
- ``FieldPartitioner``: ``<field>=<value>`` for each of ``partition.field.name``.
- ``TimeBasedPartitioner``: the record's time, truncated to ``partition.duration.ms`` in
  ``timezone``, formatted with ``path.format`` (Joda-Time pattern syntax);
  ``HourlyPartitioner``/``DailyPartitioner`` fix the duration and the pattern.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Callable, Mapping
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sluice.api import ConfigError, DataError, Schema, SinkRecord, Struct, Type
from sluice.connectors.storage.config import (
    DIRECTORY_DELIM,
    LOCALE,
    PARTITION_DURATION_MS,
    PARTITION_FIELD_NAME,
    PARTITIONER_CLASS,
    PATH_FORMAT,
    TIMESTAMP_EXTRACTOR,
    TIMESTAMP_FIELD,
    TIMEZONE,
)

__all__ = [
    "DefaultPartitioner",
    "FieldPartitioner",
    "Partitioner",
    "PartitionError",
    "TimeBasedPartitioner",
    "TimestampExtractor",
    "format_joda",
    "make_partitioner",
    "make_timestamp_extractor",
    "next_scheduled_rotation",
    "wallclock_timestamp",
    "zone",
]

_PREFIX = "io.confluent.connect.storage.partitioner."
HOURLY_FORMAT = "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"
DAILY_FORMAT = "'year'=YYYY/'month'=MM/'day'=dd"


class PartitionError(DataError):
    """A record cannot be placed (a missing or unsupported partition field, no timestamp)."""


# ----------------------------------------------------------------------- timestamps

TimestampExtractor = Callable[[SinkRecord], int]


def make_timestamp_extractor(name: str, field: str) -> TimestampExtractor:
    """Confluent's Wallclock, Record and RecordField extractors (short or full class names)."""
    short = name.strip().rsplit("$", 1)[-1].removesuffix("TimestampExtractor")
    if short == "Wallclock":
        return wallclock_timestamp
    if short == "Record":
        return _record_timestamp
    if short == "RecordField":
        path = field.split(".")
        return lambda record: _field_timestamp(record, path, field)
    raise ConfigError(f"Invalid value {name} for configuration {TIMESTAMP_EXTRACTOR}: Invalid timestamp extractor")


def wallclock_timestamp(record: SinkRecord) -> int:
    """Confluent's Wallclock extractor: the time now."""
    return time.time_ns() // 1_000_000


def _record_timestamp(record: SinkRecord) -> int:
    if record.timestamp is None:
        raise PartitionError(
            f"Unable to determine timestamp using timestamp.extractor Record for record of "
            f"{record.topic}-{record.kafka_partition} at offset {record.kafka_offset}: it has no timestamp"
        )
    return int(record.timestamp)


def _field_timestamp(record: SinkRecord, path: list[str], name: str) -> int:
    value = record.value
    schema = record.value_schema
    try:
        for part in path:
            if isinstance(value, Struct):
                field = value.schema.field(part)
                if field is None:
                    raise KeyError(part)
                schema = field.schema
                value = value.get(field)
            elif isinstance(value, Mapping):
                schema = None
                value = value[part]
            else:
                raise KeyError(part)
    except KeyError:
        raise PartitionError(f"Error extracting timestamp from record field: {name}") from None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return int(value.timestamp() * 1000)
    if isinstance(value, bool) or value is None:
        raise PartitionError(f"Error extracting timestamp from record field: {name}")
    if isinstance(value, int) and (schema is None or schema.type in (Type.INT32, Type.INT64)):
        return value
    if isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value)
        except ValueError:
            raise PartitionError(
                f"Error extracting timestamp from record field {name}: '{value}' is not ISO-8601"
            ) from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=dt.UTC)
        return int(parsed.timestamp() * 1000)
    raise PartitionError(f"Error extracting timestamp from record field: {name} (unsupported type)")


# ----------------------------------------------------------------------- partitioners


class Partitioner:
    """Encodes a record's partition; the directory of its files is
    ``<topic><delim><encoded partition>`` under ``topics.dir``."""

    timestamp_extractor: TimestampExtractor | None = None

    def __init__(self, delim: str) -> None:
        self.delim = delim

    def encode_partition(self, record: SinkRecord) -> str:
        raise NotImplementedError

    def kafka_partition_encoder(self) -> Callable[[int], str] | None:
        """What :meth:`encode_partition` returns for a record, as a function of its Kafka
        partition alone, when nothing else matters (``None``: it depends on each record)."""
        return None

    def partitioned_path(self, topic: str, encoded: str) -> str:
        return f"{topic}{self.delim}{encoded}"


def _default_encoding(kafka_partition: int | None) -> str:
    return f"partition={kafka_partition}"


class DefaultPartitioner(Partitioner):
    def encode_partition(self, record: SinkRecord) -> str:
        return _default_encoding(record.kafka_partition)

    def kafka_partition_encoder(self) -> Callable[[int], str] | None:
        return _default_encoding


class FieldPartitioner(Partitioner):
    _TYPES = (Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.STRING, Type.BOOLEAN)

    def __init__(self, delim: str, fields: list[str]) -> None:
        super().__init__(delim)
        if not fields:
            raise ConfigError(
                f"Invalid value [] for configuration {PARTITION_FIELD_NAME}: FieldPartitioner needs a field"
            )
        self.fields = fields

    def encode_partition(self, record: SinkRecord) -> str:
        value = record.value
        parts = []
        for name in self.fields:
            parts.append(f"{name}={self._value(record, value, name)}")
        return self.delim.join(parts)

    def _value(self, record: SinkRecord, value: Any, name: str) -> str:
        where = f"{record.topic}-{record.kafka_partition}@{record.kafka_offset}"
        current: Any = value
        schema: Schema | None = None
        for part in name.split("."):
            if isinstance(current, Struct):
                field = current.schema.field(part)
                if field is None:
                    raise PartitionError(f"Record {where}: the value has no field '{name}' to partition by")
                schema = field.schema
                current = current.get(field)
            elif isinstance(current, Mapping):
                if part not in current:
                    raise PartitionError(f"Record {where}: the value has no field '{name}' to partition by")
                schema = None
                current = current[part]
            else:
                raise PartitionError(f"Record {where}: value is not a Struct or a Map, cannot partition by '{name}'")
        if schema is not None and schema.type not in self._TYPES:
            raise PartitionError(
                f"Record {where}: field '{name}' is of type {schema.type.name}, which cannot partition"
            )
        if current is None:
            raise PartitionError(f"Record {where}: field '{name}' is null, which cannot partition")
        if isinstance(current, bool):
            return "true" if current else "false"
        if isinstance(current, (int, str)):
            return str(current)
        raise PartitionError(f"Record {where}: field '{name}' holds a {type(current).__name__}, which cannot partition")


class TimeBasedPartitioner(Partitioner):
    def __init__(
        self, delim: str, duration_ms: int, path_format: str, tz: dt.tzinfo, extractor: TimestampExtractor
    ) -> None:
        super().__init__(delim)
        if duration_ms <= 0:
            raise ConfigError(
                f"Invalid value {duration_ms} for configuration {PARTITION_DURATION_MS}: "
                "TimeBasedPartitioner needs a positive partition duration"
            )
        if not path_format.strip() or path_format == delim:
            raise ConfigError(
                f"Invalid value {path_format} for configuration {PATH_FORMAT}: Path format cannot be empty."
            )
        if delim and path_format.endswith(delim):
            path_format = path_format[: -len(delim)]
        self.duration_ms = duration_ms
        self.tokens = _parse_joda(path_format)
        self.tz = tz
        self.timestamp_extractor = extractor

    def encode_partition(self, record: SinkRecord) -> str:
        assert self.timestamp_extractor is not None
        timestamp = self.timestamp_extractor(record)
        return self.encode_timestamp(timestamp)

    def encode_timestamp(self, timestamp_ms: int) -> str:
        bucket = partition_start(self.duration_ms, timestamp_ms, self.tz)
        when = dt.datetime.fromtimestamp(bucket / 1000, dt.UTC).astimezone(self.tz)
        return _format_tokens(self.tokens, when)


def zone(name: str, key: str = TIMEZONE) -> dt.tzinfo:
    if not name.strip():
        raise ConfigError(f"Invalid value {name} for configuration {key}: Timezone cannot be empty.")
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"Invalid value {name} for configuration {key}: unknown time zone") from None


def _offset_ms(tz: dt.tzinfo, utc_ms: int) -> int:
    offset = dt.datetime.fromtimestamp(utc_ms / 1000, dt.UTC).astimezone(tz).utcoffset()
    return int(offset.total_seconds() * 1000) if offset is not None else 0


def partition_start(duration_ms: int, timestamp_ms: int, tz: dt.tzinfo) -> int:
    """The start (UTC epoch ms) of the partition a time falls in: truncated in local time."""
    local = timestamp_ms + _offset_ms(tz, timestamp_ms)
    truncated = (local // duration_ms) * duration_ms
    naive = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=truncated)
    offset = naive.replace(tzinfo=tz).utcoffset()
    return truncated - (int(offset.total_seconds() * 1000) if offset is not None else 0)


def next_scheduled_rotation(now_ms: int, interval_ms: int, tz: dt.tzinfo) -> int:
    """The next multiple of ``interval_ms`` after ``now_ms``, counted from the start of the
    local day (and never past the next day's start), as Confluent schedules rotations."""
    local = dt.datetime.fromtimestamp(now_ms / 1000, dt.UTC).astimezone(tz)
    start_of_day = local.replace(hour=0, minute=0, second=0, microsecond=0)
    start_ms = int(start_of_day.timestamp() * 1000)
    next_day_ms = int((start_of_day.replace(tzinfo=None) + dt.timedelta(days=1)).replace(tzinfo=tz).timestamp() * 1000)
    candidate = start_ms + ((now_ms - start_ms) // interval_ms + 1) * interval_ms
    return min(candidate, next_day_ms)


# ----------------------------------------------------------------------- Joda patterns

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]  # fmt: skip
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_TOKEN = re.compile(r"'((?:[^']|'')*)'|([A-Za-z])\2*|([^A-Za-z']+)")


def _parse_joda(pattern: str) -> list[tuple[str, str]]:
    """(kind, text) tokens: ('lit', text) or (letter, run)."""
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(pattern):
        match = _TOKEN.match(pattern, pos)
        if match is None:  # a lone quote
            raise ConfigError(f"Invalid value {pattern} for configuration {PATH_FORMAT}: unterminated quote")
        quoted, letters, literal = match.group(1), match.group(0) if match.group(2) else None, match.group(3)
        if quoted is not None:
            tokens.append(("lit", quoted.replace("''", "'") if quoted else "'"))
        elif letters is not None:
            if letters[0] not in _FIELDS:
                raise ConfigError(
                    f"Invalid value {pattern} for configuration {PATH_FORMAT}: Illegal pattern component: {letters}"
                )
            tokens.append((letters[0], letters))
        else:
            tokens.append(("lit", literal or ""))
        pos = match.end()
    return tokens


def _num(value: int, width: int) -> str:
    return str(value).zfill(width)


def _year(when: dt.datetime, run: str) -> str:
    return _num(when.year % 100, 2) if len(run) == 2 else _num(when.year, len(run))


def _text(names: list[str], index: int, run: str) -> str:
    return names[index] if len(run) >= 4 else names[index][:3]


_FIELDS: dict[str, Callable[[dt.datetime, str], str]] = {
    "y": _year,
    "Y": _year,
    "x": lambda w, r: _year(w.replace(year=w.isocalendar()[0]), r),
    "M": lambda w, r: _text(_MONTHS, w.month - 1, r) if len(r) >= 3 else _num(w.month, len(r)),
    "d": lambda w, r: _num(w.day, len(r)),
    "D": lambda w, r: _num(w.timetuple().tm_yday, len(r)),
    "H": lambda w, r: _num(w.hour, len(r)),
    "k": lambda w, r: _num(w.hour or 24, len(r)),
    "h": lambda w, r: _num(w.hour % 12 or 12, len(r)),
    "K": lambda w, r: _num(w.hour % 12, len(r)),
    "m": lambda w, r: _num(w.minute, len(r)),
    "s": lambda w, r: _num(w.second, len(r)),
    "S": lambda w, r: str(w.microsecond // 1000).zfill(3)[: len(r)].ljust(len(r), "0"),
    "E": lambda w, r: _text(_DAYS, w.weekday(), r),
    "e": lambda w, r: _num(w.isoweekday(), len(r)),
    "w": lambda w, r: _num(w.isocalendar()[1], len(r)),
    "a": lambda w, r: "AM" if w.hour < 12 else "PM",
    "G": lambda w, r: "AD",
    "C": lambda w, r: _num(w.year // 100, len(r)),
}


def _format_tokens(tokens: list[tuple[str, str]], when: dt.datetime) -> str:
    return "".join(text if kind == "lit" else _FIELDS[kind](when, text) for kind, text in tokens)


def format_joda(pattern: str, when: dt.datetime) -> str:
    """``when`` formatted with a Joda-Time ``DateTimeFormat`` pattern (English names)."""
    return _format_tokens(_parse_joda(pattern), when)


# ----------------------------------------------------------------------- from the config


def make_partitioner(values: Mapping[str, Any]) -> Partitioner:
    """The partitioner ``partitioner.class`` names, configured from the parsed config."""
    name = str(values[PARTITIONER_CLASS]).strip()
    short = name.removeprefix(_PREFIX)
    delim = values[DIRECTORY_DELIM]
    if short == "DefaultPartitioner":
        return DefaultPartitioner(delim)
    if short == "FieldPartitioner":
        return FieldPartitioner(delim, [f.strip() for f in values[PARTITION_FIELD_NAME] if f.strip()])
    if short in ("TimeBasedPartitioner", "HourlyPartitioner", "DailyPartitioner"):
        if not str(values[LOCALE]).strip():
            raise ConfigError(f"Invalid value  for configuration {LOCALE}: Locale cannot be empty.")
        tz = zone(values[TIMEZONE])
        extractor = make_timestamp_extractor(values[TIMESTAMP_EXTRACTOR], values[TIMESTAMP_FIELD])
        if short == "HourlyPartitioner":
            return TimeBasedPartitioner(delim, 3_600_000, HOURLY_FORMAT, tz, extractor)
        if short == "DailyPartitioner":
            return TimeBasedPartitioner(delim, 86_400_000, DAILY_FORMAT, tz, extractor)
        return TimeBasedPartitioner(delim, values[PARTITION_DURATION_MS], values[PATH_FORMAT], tz, extractor)
    raise ConfigError(
        f"Invalid value {name} for configuration {PARTITIONER_CLASS}: not a known partitioner "
        "(DefaultPartitioner, FieldPartitioner, TimeBasedPartitioner, HourlyPartitioner, DailyPartitioner)"
    )
