"""``TimestampConverter``: convert a timestamp between Unix time, formatted strings and
Connect's ``Date``, ``Time`` and ``Timestamp`` types
(``org.apache.kafka.connect.transforms.TimestampConverter$Key`` / ``$Value``).

It converts the whole key or value, or one top-level ``field`` of a struct or map. The
source representation comes from the schema (logical type name, else STRING = formatted
string, INT64 = Unix time) or, without a schema, from the value (``datetime``/``date``/
``time`` = timestamp, ``int`` = Unix time, ``str`` = formatted string). ``format`` is a
``java.text.SimpleDateFormat`` pattern (see :class:`~sluice._java.dates.SimpleDateFormat`),
applied in UTC; ``unix.precision`` is the unit of Unix times read and written (conversions go
through milliseconds, so finer digits are lost, as in Kafka). Null values stay null.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from sluice._java.dates import EPOCH, SimpleDateFormat, to_utc_datetime
from sluice._java.names import class_name
from sluice.api.config import ConfigDef, ConfigType, Importance, ValidString
from sluice.api.data import Date, Schema, SchemaBuilder, Struct, Time, Timestamp, Type
from sluice.api.errors import ConfigError, ConnectError, DataError
from sluice.api.records import ConnectRecord
from sluice.transforms._config import REPLACE_NULL_WITH_DEFAULT_CONFIG, define_replace_null_with_default, parse_config
from sluice.transforms._records import KeyOrValueTransformation, KeySide, ValueSide
from sluice.transforms._schemas import LRUCache, copy_schema_basics
from sluice.transforms._values import field_value, require_map, require_struct_or_null

__all__ = ["TimestampConverter", "TimestampConverterKey", "TimestampConverterValue"]

FIELD_CONFIG = "field"
TARGET_TYPE_CONFIG = "target.type"
FORMAT_CONFIG = "format"
UNIX_PRECISION_CONFIG = "unix.precision"
PURPOSE = "converting timestamp formats"

TYPE_STRING = "string"
TYPE_UNIX = "unix"
TYPE_DATE = "Date"
TYPE_TIME = "Time"
TYPE_TIMESTAMP = "Timestamp"

UNIX_PRECISION_MILLIS = "milliseconds"
UNIX_PRECISION_MICROS = "microseconds"
UNIX_PRECISION_NANOS = "nanoseconds"
UNIX_PRECISION_SECONDS = "seconds"

OPTIONAL_DATE_SCHEMA = Date.builder().optional().build()
OPTIONAL_TIME_SCHEMA = Time.builder().optional().build()
OPTIONAL_TIMESTAMP_SCHEMA = Timestamp.builder().optional().build()

CONFIG_DEF = define_replace_null_with_default(
    ConfigDef()
    .define(
        FIELD_CONFIG,
        ConfigType.STRING,
        "",
        importance=Importance.HIGH,
        documentation="The field holding the timestamp; empty when the whole key or value is the timestamp.",
    )
    .define(
        TARGET_TYPE_CONFIG,
        ConfigType.STRING,
        validator=ValidString.in_(TYPE_STRING, TYPE_UNIX, TYPE_DATE, TYPE_TIME, TYPE_TIMESTAMP),
        importance=Importance.HIGH,
        documentation="What the timestamp becomes: string, unix, Date, Time or Timestamp.",
    )
    .define(
        FORMAT_CONFIG,
        ConfigType.STRING,
        "",
        importance=Importance.MEDIUM,
        documentation=(
            "A java.text.SimpleDateFormat pattern, used to write timestamps when target.type is string "
            "and to read timestamps that are strings."
        ),
    )
    .define(
        UNIX_PRECISION_CONFIG,
        ConfigType.STRING,
        UNIX_PRECISION_MILLIS,
        ValidString.in_(UNIX_PRECISION_NANOS, UNIX_PRECISION_MICROS, UNIX_PRECISION_MILLIS, UNIX_PRECISION_SECONDS),
        Importance.LOW,
        "The unit of Unix times, both written (target.type unix) and read (64-bit integers): seconds, "
        "milliseconds, microseconds or nanoseconds. Conversions go through milliseconds, so anything "
        "finer is lost.",
    )
)

_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1
_TO_MILLIS_DIVISOR = {UNIX_PRECISION_SECONDS: None, UNIX_PRECISION_MILLIS: 1, UNIX_PRECISION_MICROS: 1000,
                      UNIX_PRECISION_NANOS: 1_000_000}  # fmt: skip


def _trunc_div(n: int, d: int) -> int:
    """Integer division rounding towards zero (Java's ``/``)."""
    q = abs(n) // d
    return q if n >= 0 else -q


def _saturated(n: int) -> int:
    return max(_LONG_MIN, min(_LONG_MAX, n))


_MILLIS_PER_DAY = 86_400_000


def _epoch_millis(value: _dt.date | _dt.time) -> int:
    """The epoch milliseconds a date, time or datetime stands for (``java.util.Date``)."""
    delta = to_utc_datetime(value) - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def _from_epoch_millis(millis: int) -> _dt.datetime:
    try:
        return EPOCH + _dt.timedelta(milliseconds=millis)
    except OverflowError:
        raise DataError(f"Unix timestamp {millis} ms is outside the supported range (years 1 to 9999)") from None


class _Translator:
    """One timestamp representation: to and from the raw form, epoch milliseconds (what a
    ``java.util.Date`` holds, so Unix times beyond Python's datetime range pass through)."""

    def to_raw(self, conv: TimestampConverter, value: Any) -> int:
        raise NotImplementedError

    def type_schema(self, optional: bool) -> Schema:
        raise NotImplementedError

    def to_type(self, conv: TimestampConverter, raw: int) -> Any:
        raise NotImplementedError


class _StringTranslator(_Translator):
    def to_raw(self, conv: TimestampConverter, value: Any) -> int:
        if not isinstance(value, str):
            raise DataError(f"Expected string timestamp to be a String, but found class {class_name(value)}")
        fmt = conv.date_format
        if fmt is None:  # only a string target requires a format at configuration time
            raise DataError(f"Could not parse timestamp: value ({value}) does not match pattern (null)")
        try:
            return _epoch_millis(fmt.parse(value))
        except ValueError as e:
            raise DataError(
                f"Could not parse timestamp: value ({value}) does not match pattern ({fmt.to_pattern()})"
            ) from e

    def type_schema(self, optional: bool) -> Schema:
        return Schema.OPTIONAL_STRING_SCHEMA if optional else Schema.STRING_SCHEMA

    def to_type(self, conv: TimestampConverter, raw: int) -> str:
        assert conv.date_format is not None
        return conv.date_format.format(_from_epoch_millis(raw))


class _UnixTranslator(_Translator):
    def to_raw(self, conv: TimestampConverter, value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise DataError(f"Expected Unix timestamp to be a Long, but found class {class_name(value)}")
        precision = conv.unix_precision
        if precision == UNIX_PRECISION_SECONDS:
            return _saturated(value * 1000)
        return _trunc_div(value, _TO_MILLIS_DIVISOR[precision])  # type: ignore[arg-type]

    def type_schema(self, optional: bool) -> Schema:
        return Schema.OPTIONAL_INT64_SCHEMA if optional else Schema.INT64_SCHEMA

    def to_type(self, conv: TimestampConverter, raw: int) -> int:
        precision = conv.unix_precision
        if precision == UNIX_PRECISION_SECONDS:
            return _trunc_div(raw, 1000)
        if precision == UNIX_PRECISION_MICROS:
            return _saturated(raw * 1000)
        if precision == UNIX_PRECISION_NANOS:
            return _saturated(raw * 1_000_000)
        return raw


def _date_like_to_raw(kind: str, value: Any) -> int:
    if not isinstance(value, (_dt.date, _dt.time)):
        raise DataError(f"Expected {kind} to be a date, time or datetime, but found class {class_name(value)}")
    return _epoch_millis(value)


class _DateTranslator(_Translator):
    def to_raw(self, conv: TimestampConverter, value: Any) -> int:
        return _date_like_to_raw(TYPE_DATE, value)

    def type_schema(self, optional: bool) -> Schema:
        return OPTIONAL_DATE_SCHEMA if optional else Date.SCHEMA

    def to_type(self, conv: TimestampConverter, raw: int) -> _dt.date:
        return _from_epoch_millis(raw - raw % _MILLIS_PER_DAY).date()


class _TimeTranslator(_Translator):
    def to_raw(self, conv: TimestampConverter, value: Any) -> int:
        return _date_like_to_raw(TYPE_TIME, value)

    def type_schema(self, optional: bool) -> Schema:
        return OPTIONAL_TIME_SCHEMA if optional else Time.SCHEMA

    def to_type(self, conv: TimestampConverter, raw: int) -> _dt.time:
        return _from_epoch_millis(raw % _MILLIS_PER_DAY).time()


class _TimestampTranslator(_Translator):
    def to_raw(self, conv: TimestampConverter, value: Any) -> int:
        return _date_like_to_raw(TYPE_TIMESTAMP, value)

    def type_schema(self, optional: bool) -> Schema:
        return OPTIONAL_TIMESTAMP_SCHEMA if optional else Timestamp.SCHEMA

    def to_type(self, conv: TimestampConverter, raw: int) -> _dt.datetime:
        return _from_epoch_millis(raw)


TRANSLATORS: dict[str, _Translator] = {
    TYPE_STRING: _StringTranslator(),
    TYPE_UNIX: _UnixTranslator(),
    TYPE_DATE: _DateTranslator(),
    TYPE_TIME: _TimeTranslator(),
    TYPE_TIMESTAMP: _TimestampTranslator(),
}


def timestamp_type_from_schema(schema: Schema) -> str:
    """The representation a schema stands for; :class:`ConnectError` if none."""
    if schema.name == Timestamp.LOGICAL_NAME:
        return TYPE_TIMESTAMP
    if schema.name == Date.LOGICAL_NAME:
        return TYPE_DATE
    if schema.name == Time.LOGICAL_NAME:
        return TYPE_TIME
    if schema.type is Type.STRING:
        return TYPE_STRING
    if schema.type is Type.INT64:
        return TYPE_UNIX
    raise ConnectError(f"Schema {schema!r} does not correspond to a known timestamp type format")


def infer_timestamp_type(value: Any) -> str:
    """The representation of a schemaless value; :class:`DataError` if none."""
    if isinstance(value, (_dt.date, _dt.time)):
        return TYPE_TIMESTAMP
    if isinstance(value, int) and not isinstance(value, bool):
        return TYPE_UNIX
    if isinstance(value, str):
        return TYPE_STRING
    raise DataError(f"TimestampConverter does not support class {class_name(value)} objects as timestamps")


class TimestampConverter(KeyOrValueTransformation[ConnectRecord]):
    """Shared logic of :class:`TimestampConverterKey` and :class:`TimestampConverterValue`."""

    def __init__(self) -> None:
        self.field = ""
        self.target_type = TYPE_TIMESTAMP
        self.date_format: SimpleDateFormat | None = None
        self.unix_precision = UNIX_PRECISION_MILLIS
        self._replace_null_with_default = True
        self._schema_cache = LRUCache(16)

    def configure(self, configs: dict[str, Any]) -> None:
        parsed = parse_config(CONFIG_DEF, configs)
        self.field = parsed[FIELD_CONFIG]
        self.target_type = parsed[TARGET_TYPE_CONFIG]
        pattern: str = parsed[FORMAT_CONFIG] or ""
        self.unix_precision = parsed[UNIX_PRECISION_CONFIG]
        self._replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._schema_cache = LRUCache(16)
        if self.target_type == TYPE_STRING and not pattern.strip():
            raise ConfigError("TimestampConverter requires format option to be specified when using string timestamps")
        self.date_format = None
        if pattern.strip():
            try:
                self.date_format = SimpleDateFormat(pattern)
            except ValueError as e:
                raise ConfigError(
                    f"TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: "
                    f"{pattern} ({e})"
                ) from e

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            return self.new_record(record, None, self._apply_schemaless(value))
        if not self.field:
            updated_schema = TRANSLATORS[self.target_type].type_schema(schema.optional)
            return self.new_record(record, updated_schema, self.convert(value, timestamp_type_from_schema(schema)))
        struct = require_struct_or_null(value, PURPOSE)
        updated_schema = self.updated_schema(schema)
        return self.new_record(record, updated_schema, self._convert_struct(struct, updated_schema))

    # schema ---------------------------------------------------------------------------------

    def updated_schema(self, schema: Schema) -> Schema:
        """For a struct schema, the schema with the converted field's new type (cached)."""
        cached = self._schema_cache.get(schema)
        if cached is not None:
            return cached
        translator = TRANSLATORS[self.target_type]
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields():
            if field.name == self.field:
                builder.field(field.name, translator.type_schema(field.schema.optional))
            else:
                builder.field(field.name, field.schema)
        if schema.optional:
            builder.optional()
        if schema.default_value is not None:
            builder.default_value(self._convert_struct(schema.default_value, builder.build()))
        updated = builder.build()
        self._schema_cache.put(schema, updated)
        return updated

    # values ---------------------------------------------------------------------------------

    def _convert_struct(self, struct: Struct | None, updated_schema: Schema) -> Struct | None:
        if struct is None:
            return None
        updated = Struct(updated_schema)
        for field in struct.schema.fields():
            current = field_value(struct, field, self._replace_null_with_default)
            if field.name == self.field:
                current = self.convert(current, timestamp_type_from_schema(field.schema))
            updated.put(field.name, current)
        return updated

    def _apply_schemaless(self, value: Any) -> Any:
        if value is None or not self.field:
            return self.convert(value)
        updated = dict(require_map(value, PURPOSE))
        updated[self.field] = self.convert(updated.get(self.field))
        return updated

    def convert(self, timestamp: Any, source_type: str | None = None) -> Any:
        """Convert one timestamp (``None`` stays ``None``) from ``source_type`` (inferred
        from the value when ``None``) to the configured target type."""
        if timestamp is None:
            return None
        source = TRANSLATORS[source_type or infer_timestamp_type(timestamp)]
        raw = source.to_raw(self, timestamp)
        return TRANSLATORS[self.target_type].to_type(self, raw)


class TimestampConverterKey(KeySide, TimestampConverter):
    """``org.apache.kafka.connect.transforms.TimestampConverter$Key``: convert a timestamp in the key."""


class TimestampConverterValue(ValueSide, TimestampConverter):
    """``org.apache.kafka.connect.transforms.TimestampConverter$Value``: convert a timestamp in the value."""
