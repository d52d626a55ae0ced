"""TimestampRouter (``org.apache.kafka.connect.transforms.TimestampRouter``): renames the topic
after the original topic and the record timestamp, e.g. ``orders`` → ``orders-20240131``.

``topic.format`` may contain ``${topic}`` and ``${timestamp}``; the timestamp is the
record's, formatted in UTC with the ``java.text.SimpleDateFormat`` pattern
``timestamp.format`` (English names, as with an ``en_US`` JVM). A record without a
timestamp is a :class:`~sluice.api.errors.DataError`.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from typing import Any

from sluice._java.dates import EPOCH, date_field_formatter, pattern_tokens
from sluice.api.config import ConfigDef, ConfigType, Importance
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import ConnectRecord
from sluice.api.transforms import Transformation

__all__ = ["SimpleDateFormat", "TimestampRouter"]

TOPIC_FORMAT_CONFIG = "topic.format"
TIMESTAMP_FORMAT_CONFIG = "timestamp.format"
TOPIC_PLACEHOLDER = "${topic}"
TIMESTAMP_PLACEHOLDER = "${timestamp}"

# -- java.text.SimpleDateFormat, formatting in UTC ------------------------------------------

_DAY, _HOUR, _MINUTE, _SECOND, _MILLI = 86_400_000, 3_600_000, 60_000, 1000, 1
# How long a field's value stays the same: formatted text can be reused within that span.
_SPAN = {
    "G": _DAY, "y": _DAY, "Y": _DAY, "M": _DAY, "L": _DAY, "d": _DAY, "E": _DAY, "u": _DAY, "D": _DAY,
    "F": _DAY, "w": _DAY, "W": _DAY, "a": _HOUR, "H": _HOUR, "k": _HOUR, "K": _HOUR, "h": _HOUR,
    "m": _MINUTE, "s": _SECOND, "S": _MILLI,
}  # fmt: skip


class SimpleDateFormat:
    """Formats epoch milliseconds in UTC with a ``java.text.SimpleDateFormat`` pattern.

    Letters are Java's (``yyyy``, ``MM``, ``dd``, ``HH``, ``mm``, ``ss``, ``SSS``, ``EEE``,
    ``MMM``, ``D``, ``w``, ``a``, ``z``, ``Z``, ``X``…), text in single quotes is literal and
    ``''`` is a quote. An unknown letter or an unterminated quote raises :class:`ValueError`
    with Java's message. The last result is reused while the instant stays within the
    smallest unit the pattern shows.
    """

    __slots__ = ("pattern", "_parts", "_span", "_last")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        parts: list[str | Callable[[_dt.datetime], str]] = []
        span = _DAY * 366  # a pattern without fields: same text for any instant
        for token in pattern_tokens(pattern):
            if isinstance(token, str):
                parts.append(token)
            else:
                letter, count = token
                parts.append(date_field_formatter(letter, count))
                span = min(span, _SPAN.get(letter, span))
        self._parts = tuple(parts)
        self._span = span
        self._last: tuple[int, str] | None = None

    def __reduce__(self) -> tuple[Any, ...]:  # picklable (the compiled parts are closures)
        return (SimpleDateFormat, (self.pattern,))

    def format(self, millis: int) -> str:
        key = millis // self._span
        last = self._last
        if last is not None and last[0] == key:
            return last[1]
        try:
            moment = EPOCH + _dt.timedelta(milliseconds=millis)
            text = "".join(p if isinstance(p, str) else p(moment) for p in self._parts)
        except OverflowError as e:  # beyond the years 1-9999 Python's datetime covers
            raise DataError(f"Timestamp {millis} is out of the supported range") from e
        self._last = (key, text)
        return text


# -- the transformation -------------------------------------------------------------------

CONFIG_DEF = (
    ConfigDef()
    .define(
        TOPIC_FORMAT_CONFIG,
        ConfigType.STRING,
        "${topic}-${timestamp}",
        importance=Importance.HIGH,
        documentation="The new topic name; ${topic} stands for the original topic and ${timestamp} for the "
        "formatted record timestamp.",
    )
    .define(
        TIMESTAMP_FORMAT_CONFIG,
        ConfigType.STRING,
        "yyyyMMdd",
        importance=Importance.HIGH,
        documentation="How ${timestamp} is written: a java.text.SimpleDateFormat pattern, applied in UTC.",
    )
)


class TimestampRouter(Transformation):
    """Sets each record's topic from its original topic and its timestamp."""

    OVERVIEW_DOC = (
        "Sets each record's topic from its original topic and its timestamp, for example to write each day's "
        "records to their own table or index in a sink system."
    )

    def __init__(self) -> None:
        self._topic_format = "${topic}-${timestamp}"
        self._timestamp_format = SimpleDateFormat("yyyyMMdd")

    def configure(self, configs: dict[str, Any]) -> None:
        values = CONFIG_DEF.parse(configs)
        topic_format = values[TOPIC_FORMAT_CONFIG]
        timestamp_format = values[TIMESTAMP_FORMAT_CONFIG]
        if topic_format is None:
            raise ConfigError(TOPIC_FORMAT_CONFIG, "null", "Topic format must not be null")
        if timestamp_format is None:
            raise ConfigError(TIMESTAMP_FORMAT_CONFIG, "null", "Timestamp format must not be null")
        try:
            self._timestamp_format = SimpleDateFormat(timestamp_format)
        except ValueError as e:
            raise ConfigError(TIMESTAMP_FORMAT_CONFIG, timestamp_format, str(e)) from e
        self._topic_format = topic_format

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        timestamp = record.timestamp
        if timestamp is None:
            raise DataError(f"Timestamp missing on record: {record!r}")
        formatted = self._timestamp_format.format(timestamp)
        topic = self._topic_format.replace(TOPIC_PLACEHOLDER, record.topic).replace(TIMESTAMP_PLACEHOLDER, formatted)
        return record.new_record(topic=topic, headers=record.headers.duplicate())

    def config(self) -> ConfigDef:
        return CONFIG_DEF
