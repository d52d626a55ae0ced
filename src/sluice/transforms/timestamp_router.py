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

_PATTERN_LETTERS = "GyMdkHmsSEDFwWahKzZYuXL"
_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)

_DAY, _HOUR, _MINUTE, _SECOND, _MILLI = 86_400_000, 3_600_000, 60_000, 1000, 1
# How long a field's value stays the same: formatted text can be reused within that span.
_SPAN = {
    "G": _DAY, "y": _DAY, "Y": _DAY, "M": _DAY, "L": _DAY, "d": _DAY, "E": _DAY, "u": _DAY, "D": _DAY,
    "F": _DAY, "w": _DAY, "W": _DAY, "a": _HOUR, "H": _HOUR, "k": _HOUR, "K": _HOUR, "h": _HOUR,
    "m": _MINUTE, "s": _SECOND, "S": _MILLI,
}  # fmt: skip


def _sunday_based(day: _dt.date) -> int:
    """Day of the week counted from Sunday = 0 (weeks start on Sunday in ``en_US``)."""
    return (day.weekday() + 1) % 7


def _week_of_year(day: _dt.date) -> tuple[int, int]:
    """``(week year, week of year)`` of ``GregorianCalendar`` in ``en_US``: weeks start on
    Sunday and week 1 is the one containing January 1st."""
    week_start = day - _dt.timedelta(days=_sunday_based(day))
    if (_dt.date(day.year, 12, 31) - week_start).days < 6:  # the week holds next January 1st
        return day.year + 1, 1
    jan1 = _dt.date(day.year, 1, 1)
    first_week_start = jan1 - _dt.timedelta(days=_sunday_based(jan1))
    return day.year, (week_start - first_week_start).days // 7 + 1


def _pad(value: int, count: int) -> str:
    return str(value).zfill(count) if value >= 0 else "-" + str(-value).zfill(count)


def _field(letter: str, count: int) -> Callable[[_dt.datetime], str]:
    if letter == "G":
        return lambda t: "AD"
    if letter == "y":
        if count == 2:
            return lambda t: _pad(t.year % 100, 2)
        return lambda t: _pad(t.year, count)
    if letter == "Y":
        if count == 2:
            return lambda t: _pad(_week_of_year(t.date())[0] % 100, 2)
        return lambda t: _pad(_week_of_year(t.date())[0], count)
    if letter in "ML":
        if count >= 4:
            return lambda t: _MONTHS[t.month - 1]
        if count == 3:
            return lambda t: _MONTHS[t.month - 1][:3]
        return lambda t: _pad(t.month, count)
    if letter == "d":
        return lambda t: _pad(t.day, count)
    if letter == "k":
        return lambda t: _pad(t.hour or 24, count)
    if letter == "H":
        return lambda t: _pad(t.hour, count)
    if letter == "K":
        return lambda t: _pad(t.hour % 12, count)
    if letter == "h":
        return lambda t: _pad(t.hour % 12 or 12, count)
    if letter == "m":
        return lambda t: _pad(t.minute, count)
    if letter == "s":
        return lambda t: _pad(t.second, count)
    if letter == "S":
        return lambda t: _pad(t.microsecond // 1000, count)
    if letter == "E":
        if count >= 4:
            return lambda t: _DAYS[t.weekday()]
        return lambda t: _DAYS[t.weekday()][:3]
    if letter == "u":
        return lambda t: _pad(t.isoweekday(), count)
    if letter == "D":
        return lambda t: _pad(t.timetuple().tm_yday, count)
    if letter == "F":
        return lambda t: _pad((t.day - 1) // 7 + 1, count)
    if letter == "w":
        return lambda t: _pad(_week_of_year(t.date())[1], count)
    if letter == "W":
        return lambda t: _pad((t.day - 1 + _sunday_based(t.date().replace(day=1))) // 7 + 1, count)
    if letter == "a":
        return lambda t: "AM" if t.hour < 12 else "PM"
    if letter == "z":
        text = "Coordinated Universal Time" if count >= 4 else "UTC"
        return lambda t: text
    if letter == "Z":
        return lambda t: "+0000"
    return lambda t: "Z"  # X: ISO 8601 zone, "Z" for UTC whatever the count


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
        literal: list[str] = []
        span = _DAY * 366  # a pattern without fields: same text for any instant
        in_quote = False
        i, n = 0, len(pattern)
        while i < n:
            c = pattern[i]
            if c == "'":
                if i + 1 < n and pattern[i + 1] == "'":
                    literal.append("'")
                    i += 2
                    continue
                in_quote = not in_quote
                i += 1
                continue
            if in_quote or not ("a" <= c <= "z" or "A" <= c <= "Z"):
                literal.append(c)
                i += 1
                continue
            if c not in _PATTERN_LETTERS:
                raise ValueError(f"Illegal pattern character '{c}'")
            count = 1
            while i + count < n and pattern[i + count] == c:
                count += 1
            if literal:
                parts.append("".join(literal))
                literal = []
            parts.append(_field(c, count))
            span = min(span, _SPAN.get(c, span))
            i += count
        if in_quote:
            raise ValueError("Unterminated quote")
        if literal:
            parts.append("".join(literal))
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
            moment = _EPOCH + _dt.timedelta(milliseconds=millis)
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
