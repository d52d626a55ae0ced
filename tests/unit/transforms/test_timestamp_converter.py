"""TimestampConverter$Key / TimestampConverter$Value."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from sluice.api.data import Date, Schema, SchemaBuilder, Struct, Time, Timestamp
from sluice.api.errors import ConfigError, ConnectError, DataError
from sluice.api.records import SourceRecord
from sluice.transforms.timestamp_converter import TimestampConverterKey, TimestampConverterValue

UTC = dt.UTC
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)
TIME = dt.time(0, 0, 1, 234000)  # 1234 ms after midnight
DATE = dt.date(1970, 1, 2)
DATE_PLUS_TIME = dt.datetime(1970, 1, 2, 0, 0, 1, 234000, tzinfo=UTC)
DATE_PLUS_TIME_UNIX = 86401234
DATE_PLUS_TIME_UNIX_MICROS = DATE_PLUS_TIME_UNIX * 1000 + 123
DATE_PLUS_TIME_UNIX_NANOS = DATE_PLUS_TIME_UNIX_MICROS * 1000 + 456
DATE_PLUS_TIME_UNIX_SECONDS = 86401
STRING_DATE_FMT = "yyyy MM dd HH mm ss SSS z"
DATE_PLUS_TIME_STRING = "1970 01 02 00 00 01 234 UTC"


def value_xform(target: str, **configs: Any) -> TimestampConverterValue:
    xform = TimestampConverterValue()
    xform.configure({"target.type": target, **configs})
    return xform


def schemaless(value: Any) -> SourceRecord:
    return SourceRecord(None, None, "topic", 0, None, None, None, value)


def with_schema(schema: Schema, value: Any) -> SourceRecord:
    return SourceRecord(None, None, "topic", 0, None, None, schema, value)


# -- configuration ------------------------------------------------------------------------------


def test_config_no_target_type() -> None:
    with pytest.raises(ConfigError, match='Missing required configuration "target.type"'):
        TimestampConverterValue().configure({})


def test_config_invalid_target_type() -> None:
    with pytest.raises(ConfigError, match="String must be one of: string, unix, Date, Time, Timestamp"):
        TimestampConverterValue().configure({"target.type": "invalid"})


def test_config_unix_precision() -> None:
    with pytest.raises(ConfigError, match="unix.precision"):
        TimestampConverterValue().configure({"target.type": "unix", "unix.precision": "invalid"})
    TimestampConverterValue().configure({"target.type": "unix", "unix.precision": "seconds"})


def test_config_missing_format() -> None:
    with pytest.raises(ConfigError, match="requires format option to be specified when using string timestamps"):
        TimestampConverterValue().configure({"target.type": "string"})
    with pytest.raises(ConfigError, match="requires format option"):
        TimestampConverterValue().configure({"target.type": "string", "format": "  "})


@pytest.mark.parametrize("pattern", ["bad-format", "yyyy'", "YYYY-ww"])
def test_config_invalid_format(pattern: str) -> None:
    with pytest.raises(ConfigError, match="requires a SimpleDateFormat-compatible pattern for string timestamps"):
        TimestampConverterValue().configure({"target.type": "string", "format": pattern})


def test_config_def() -> None:
    config = TimestampConverterValue().config()
    assert config.names() == ["field", "target.type", "format", "unix.precision", "replace.null.with.default"]
    assert config.config_key("unix.precision").default_value == "milliseconds"


# -- schemaless -----------------------------------------------------------------------------------


def test_schemaless_identity() -> None:
    out = value_xform("Timestamp").apply(schemaless(DATE_PLUS_TIME))
    assert out.value_schema is None and out.value == DATE_PLUS_TIME


def test_schemaless_timestamp_to_date() -> None:
    assert value_xform("Date").apply(schemaless(DATE_PLUS_TIME)).value == DATE


def test_schemaless_timestamp_to_time() -> None:
    assert value_xform("Time").apply(schemaless(DATE_PLUS_TIME)).value == TIME


def test_schemaless_timestamp_to_unix() -> None:
    assert value_xform("unix").apply(schemaless(DATE_PLUS_TIME)).value == DATE_PLUS_TIME_UNIX


def test_schemaless_timestamp_to_string() -> None:
    out = value_xform("string", format=STRING_DATE_FMT).apply(schemaless(DATE_PLUS_TIME))
    assert out.value == DATE_PLUS_TIME_STRING


def test_schemaless_date_to_timestamp() -> None:
    assert value_xform("Timestamp").apply(schemaless(DATE)).value == dt.datetime(1970, 1, 2, tzinfo=UTC)


def test_schemaless_time_to_timestamp() -> None:
    assert value_xform("Timestamp").apply(schemaless(TIME)).value == EPOCH + dt.timedelta(milliseconds=1234)


def test_schemaless_unix_to_timestamp() -> None:
    assert value_xform("Timestamp").apply(schemaless(DATE_PLUS_TIME_UNIX)).value == DATE_PLUS_TIME


def test_schemaless_string_to_timestamp() -> None:
    out = value_xform("Timestamp", format=STRING_DATE_FMT).apply(schemaless(DATE_PLUS_TIME_STRING))
    assert out.value == DATE_PLUS_TIME


def test_naive_datetimes_are_utc() -> None:
    naive = dt.datetime(1970, 1, 2, 0, 0, 1, 234000)
    assert value_xform("unix").apply(schemaless(naive)).value == DATE_PLUS_TIME_UNIX


@pytest.mark.parametrize("target", ["string", "Date", "Timestamp", "unix", "Time"])
def test_schemaless_null_value(target: str) -> None:
    out = value_xform(target, format=STRING_DATE_FMT).apply(schemaless(None))
    assert out.value_schema is None and out.value is None


@pytest.mark.parametrize("target", ["string", "Date", "Timestamp", "unix", "Time"])
def test_schemaless_null_with_field(target: str) -> None:
    out = value_xform(target, format=STRING_DATE_FMT, field="ts").apply(schemaless(None))
    assert out.value_schema is None and out.value is None


def test_schemaless_field_conversion() -> None:
    out = value_xform("Date", field="ts").apply(schemaless({"ts": DATE_PLUS_TIME, "other": 1}))
    assert out.value_schema is None and out.value == {"ts": DATE, "other": 1}


def test_schemaless_missing_field_becomes_null() -> None:
    assert value_xform("Date", field="ts").apply(schemaless({"other": 1})).value == {"other": 1, "ts": None}


def test_schemaless_unsupported_values() -> None:
    with pytest.raises(DataError, match="TimestampConverter does not support class float objects as timestamps"):
        value_xform("Date").apply(schemaless(1.5))
    with pytest.raises(DataError, match="does not support class bool"):
        value_xform("Date").apply(schemaless(True))
    with pytest.raises(DataError, match=r"Only Map objects supported in absence of schema"):
        value_xform("Date", field="ts").apply(schemaless(5))


def test_string_that_does_not_parse() -> None:
    with pytest.raises(DataError, match=r"Could not parse timestamp: value \(nope\) does not match pattern \(yyyy\)"):
        value_xform("unix", format="yyyy").apply(schemaless("nope"))


# -- with schema ----------------------------------------------------------------------------------


def test_with_schema_identity() -> None:
    out = value_xform("Timestamp").apply(with_schema(Timestamp.SCHEMA, DATE_PLUS_TIME))
    assert out.value_schema == Timestamp.SCHEMA and out.value == DATE_PLUS_TIME


def test_with_schema_timestamp_to_date() -> None:
    out = value_xform("Date").apply(with_schema(Timestamp.SCHEMA, DATE_PLUS_TIME))
    assert out.value_schema == Date.SCHEMA and out.value == DATE


def test_with_schema_timestamp_to_time() -> None:
    out = value_xform("Time").apply(with_schema(Timestamp.SCHEMA, DATE_PLUS_TIME))
    assert out.value_schema == Time.SCHEMA and out.value == TIME


def test_with_schema_timestamp_to_unix() -> None:
    out = value_xform("unix").apply(with_schema(Timestamp.SCHEMA, DATE_PLUS_TIME))
    assert out.value_schema == Schema.INT64_SCHEMA and out.value == DATE_PLUS_TIME_UNIX


def test_with_schema_timestamp_to_string() -> None:
    out = value_xform("string", format=STRING_DATE_FMT).apply(with_schema(Timestamp.SCHEMA, DATE_PLUS_TIME))
    assert out.value_schema == Schema.STRING_SCHEMA and out.value == DATE_PLUS_TIME_STRING


def test_with_schema_date_to_timestamp() -> None:
    out = value_xform("Timestamp").apply(with_schema(Date.SCHEMA, DATE))
    assert out.value_schema == Timestamp.SCHEMA and out.value == dt.datetime(1970, 1, 2, tzinfo=UTC)


def test_with_schema_time_to_timestamp() -> None:
    out = value_xform("Timestamp").apply(with_schema(Time.SCHEMA, TIME))
    assert out.value_schema == Timestamp.SCHEMA and out.value == EPOCH + dt.timedelta(milliseconds=1234)


def test_with_schema_unix_to_timestamp() -> None:
    out = value_xform("Timestamp").apply(with_schema(Schema.INT64_SCHEMA, DATE_PLUS_TIME_UNIX))
    assert out.value_schema == Timestamp.SCHEMA and out.value == DATE_PLUS_TIME


def test_with_schema_string_to_timestamp() -> None:
    xform = value_xform("Timestamp", format=STRING_DATE_FMT)
    out = xform.apply(with_schema(Schema.STRING_SCHEMA, DATE_PLUS_TIME_STRING))
    assert out.value_schema == Timestamp.SCHEMA and out.value == DATE_PLUS_TIME


def test_with_schema_date_to_string_and_unix() -> None:
    assert value_xform("string", format="yyyy-MM-dd").apply(with_schema(Date.SCHEMA, DATE)).value == "1970-01-02"
    assert value_xform("unix").apply(with_schema(Date.SCHEMA, DATE)).value == 86_400_000


@pytest.mark.parametrize(
    ("target", "original", "expected"),
    [
        ("Timestamp", Timestamp.builder().optional().build(), Timestamp.builder().optional().build()),
        ("unix", Timestamp.builder().optional().build(), Schema.OPTIONAL_INT64_SCHEMA),
        ("Time", Timestamp.builder().optional().build(), Time.builder().optional().build()),
        ("Date", Timestamp.builder().optional().build(), Date.builder().optional().build()),
        ("string", Timestamp.builder().optional().build(), Schema.OPTIONAL_STRING_SCHEMA),
        ("Timestamp", Schema.OPTIONAL_INT64_SCHEMA, Timestamp.builder().optional().build()),
        ("Timestamp", Schema.OPTIONAL_STRING_SCHEMA, Timestamp.builder().optional().build()),
    ],
)
def test_with_schema_null_value(target: str, original: Schema, expected: Schema) -> None:
    out = value_xform(target, format=STRING_DATE_FMT).apply(with_schema(original, None))
    assert out.value_schema == expected and out.value is None


@pytest.mark.parametrize(
    ("target", "original", "expected"),
    [
        ("Timestamp", Timestamp.builder().optional().build(), Timestamp.builder().optional().build()),
        ("unix", Timestamp.builder().optional().build(), Schema.OPTIONAL_INT64_SCHEMA),
        ("Time", Timestamp.builder().optional().build(), Time.builder().optional().build()),
        ("Date", Timestamp.builder().optional().build(), Date.builder().optional().build()),
        ("string", Timestamp.builder().optional().build(), Schema.OPTIONAL_STRING_SCHEMA),
        ("Timestamp", Schema.OPTIONAL_INT64_SCHEMA, Timestamp.builder().optional().build()),
    ],
)
def test_with_schema_null_field(target: str, original: Schema, expected: Schema) -> None:
    xform = value_xform(target, format=STRING_DATE_FMT, field="ts")
    struct_schema = SchemaBuilder.struct().field("ts", original).field("other", Schema.STRING_SCHEMA)
    expected_struct = SchemaBuilder.struct().field("ts", expected).field("other", Schema.STRING_SCHEMA)
    out = xform.apply(with_schema(struct_schema.build(), Struct(struct_schema.build()).put("other", "test")))
    assert out.value_schema == expected_struct.build()
    assert out.value.get("ts") is None and out.value.get("other") == "test"
    # the whole struct is null
    out = xform.apply(with_schema(struct_schema.optional().build(), None))
    assert out.value_schema == expected_struct.optional().build() and out.value is None


def test_with_schema_field_conversion() -> None:
    schema = SchemaBuilder.struct().field("ts", Schema.INT64_SCHEMA).field("other", Schema.STRING_SCHEMA).build()
    out = value_xform("Timestamp", field="ts").apply(
        with_schema(schema, Struct(schema).put("ts", DATE_PLUS_TIME_UNIX).put("other", "test"))
    )
    expected = SchemaBuilder.struct().field("ts", Timestamp.SCHEMA).field("other", Schema.STRING_SCHEMA).build()
    assert out.value_schema == expected
    assert out.value.get("ts") == DATE_PLUS_TIME and out.value.get("other") == "test"


@pytest.mark.parametrize(("replace", "expected"), [(False, None), (True, EPOCH)])
def test_with_schema_null_field_with_default(replace: bool, expected: dt.datetime | None) -> None:
    schema = (
        SchemaBuilder.struct().field("ts", SchemaBuilder.int64().optional().default_value(0).build())
        .field("other", Schema.STRING_SCHEMA).build()
    )  # fmt: skip
    xform = value_xform("Timestamp", field="ts", **{"replace.null.with.default": replace})
    out = xform.apply(with_schema(schema, Struct(schema).put("ts", None).put("other", "test")))
    expected_schema = (
        SchemaBuilder.struct().field("ts", Timestamp.builder().optional().build())
        .field("other", Schema.STRING_SCHEMA).build()
    )  # fmt: skip
    assert out.value_schema == expected_schema
    assert out.value.get("ts") == expected and out.value.get("other") == "test"


@pytest.mark.parametrize(
    ("precision", "unix", "expected"),
    [
        ("microseconds", DATE_PLUS_TIME_UNIX_MICROS, DATE_PLUS_TIME),
        ("nanoseconds", DATE_PLUS_TIME_UNIX_NANOS, DATE_PLUS_TIME),
        ("seconds", DATE_PLUS_TIME_UNIX_SECONDS, dt.datetime(1970, 1, 2, 0, 0, 1, tzinfo=UTC)),
        ("microseconds", -1500, EPOCH - dt.timedelta(milliseconds=1)),  # truncated towards zero, as in Java
    ],
)
def test_with_schema_field_conversion_precisions(precision: str, unix: int, expected: dt.datetime) -> None:
    schema = SchemaBuilder.struct().field("ts", Schema.INT64_SCHEMA).build()
    xform = value_xform("Timestamp", field="ts", **{"unix.precision": precision})
    out = xform.apply(with_schema(schema, Struct(schema).put("ts", unix)))
    assert out.value_schema == SchemaBuilder.struct().field("ts", Timestamp.SCHEMA).build()
    assert out.value.get("ts") == expected


@pytest.mark.parametrize(
    ("precision", "expected"),
    [("microseconds", 86401234000), ("nanoseconds", 86401234000000), ("seconds", DATE_PLUS_TIME_UNIX_SECONDS)],
)
def test_schemaless_string_to_unix_precisions(precision: str, expected: int) -> None:
    xform = value_xform("unix", format=STRING_DATE_FMT, **{"unix.precision": precision})
    out = xform.apply(schemaless(DATE_PLUS_TIME_STRING))
    assert out.value_schema is None and out.value == expected


def test_unix_seconds_of_negative_times_truncate_towards_zero() -> None:
    xform = value_xform("unix", **{"unix.precision": "seconds"})
    out = xform.apply(schemaless(EPOCH - dt.timedelta(milliseconds=1500)))
    assert out.value == -1


def test_with_schema_unsupported_schema() -> None:
    message = r"Schema Schema\{INT32\} does not correspond to a known timestamp type format"
    with pytest.raises(ConnectError, match=message):
        value_xform("Timestamp").apply(with_schema(Schema.INT32_SCHEMA, 5))


def test_struct_default_is_converted_and_schema_cached() -> None:
    builder = SchemaBuilder.struct().name("s").optional().field("ts", Schema.INT64_SCHEMA)
    default = Struct(builder.build()).put("ts", 0)
    schema = builder.default_value(default).build()
    xform = value_xform("Date", field="ts")
    out = xform.apply(with_schema(schema, Struct(schema).put("ts", DATE_PLUS_TIME_UNIX)))
    assert out.value.get("ts") == DATE
    assert out.value_schema.name == "s" and out.value_schema.optional
    assert out.value_schema.default_value.get("ts") == dt.date(1970, 1, 1)
    again = xform.apply(with_schema(schema, Struct(schema).put("ts", 0)))
    assert again.value_schema is out.value_schema


def test_key() -> None:
    xform = TimestampConverterKey()
    xform.configure({"target.type": "Timestamp"})
    out = xform.apply(SourceRecord(None, None, "topic", 0, None, DATE_PLUS_TIME, None, None))
    assert out.key_schema is None and out.key == DATE_PLUS_TIME


def test_iso_round_trip_with_offsets() -> None:
    fmt = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"
    parsed = value_xform("Timestamp", format=fmt).apply(schemaless("2017-01-05T12:34:56.789+02:00")).value
    assert parsed == dt.datetime(2017, 1, 5, 10, 34, 56, 789000, tzinfo=UTC)
    assert value_xform("string", format=fmt).apply(schemaless(parsed)).value == "2017-01-05T10:34:56.789Z"
