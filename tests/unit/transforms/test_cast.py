"""Cast$Key / Cast$Value (expected values follow Kafka 4.3's Cast, checked against it)."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest

from sluice.api.config import ConfigDef
from sluice.api.data import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp, Type
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import Header, SinkRecord, SourceRecord
from sluice.transforms.cast import CastKey, CastValue

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)


def cast_value(spec: str, **extra: Any) -> CastValue:
    xform = CastValue()
    xform.configure({"spec": spec, **extra})
    return xform


def cast_key(spec: str) -> CastKey:
    xform = CastKey()
    xform.configure({"spec": spec})
    return xform


def value_record(schema: Schema | None, value: Any) -> SourceRecord:
    return SourceRecord(None, None, "topic", 0, None, None, schema, value)


# -- configuration ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "Must specify at least one field to cast."),
        ("foo:faketype", "Invalid type found in casting spec: faketype"),
        ("foo:array", "does not support casting to ARRAY"),
        ("array", "does not support casting to ARRAY"),
        ("foo:bytes", "does not support casting to BYTES; supported types are [INT8, INT16, INT32, INT64, FLOAT32"),
        ("foo:int8:extra", "Invalid cast mapping: foo:int8:extra"),
        ("foo:int8,int32", "may only specify a single cast in their spec"),
        ("int8,int32", "may only specify a single cast in their spec"),
        ("foo:float", "Invalid type found in casting spec: float"),
    ],
)
def test_invalid_specs(spec: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        CastKey().configure({"spec": spec})
    assert message in str(e.value)


def test_spec_is_required() -> None:
    with pytest.raises(ConfigError, match='Missing required configuration "spec"'):
        CastValue().configure({})


def test_spec_types_are_case_insensitive_and_trimmed() -> None:
    xform = cast_value(" a : INT64 , b:Float32")
    record = xform.apply(value_record(None, {"a": 1.9, "b": 2}))
    assert record.value == {"a": 1, "b": 2.0}


def test_config_def() -> None:
    config = CastValue().config()
    assert isinstance(config, ConfigDef)
    assert config.names() == ["spec", "replace.null.with.default"]
    assert config.config_key("spec").has_default is False
    assert config.config_key("replace.null.with.default").default_value is True


# -- nulls ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("schema", [None, Schema.STRING_SCHEMA])
def test_null_value_passes_through(schema: Schema | None) -> None:
    original = SourceRecord(None, None, "topic", 0, Schema.STRING_SCHEMA, "key", schema, None)
    assert cast_value("foo:int64").apply(original) is original


@pytest.mark.parametrize("schema", [None, Schema.STRING_SCHEMA])
def test_null_key_passes_through(schema: Schema | None) -> None:
    original = SourceRecord(None, None, "topic", 0, schema, None, Schema.STRING_SCHEMA, "value")
    assert cast_key("foo:int64").apply(original) is original


@pytest.mark.parametrize(("replace", "expected"), [(False, None), (True, "10")])
def test_null_field_with_default(replace: bool, expected: str | None) -> None:
    schema = SchemaBuilder.struct().field("magic", SchemaBuilder.int32().optional().default_value(10).build()).build()
    xform = cast_value("magic:string", **{"replace.null.with.default": replace})
    record = xform.apply(value_record(schema, Struct(schema).put("magic", None)))
    field_schema = record.value_schema.field("magic").schema
    assert field_schema.type is Type.STRING and field_schema.optional and field_schema.default_value == "10"
    assert record.value.get_without_default("magic") == expected


# -- whole value --------------------------------------------------------------------------------


def test_whole_key_with_schema() -> None:
    record = SourceRecord(None, None, "topic", 0, Schema.INT32_SCHEMA, 42, Schema.STRING_SCHEMA, "bogus")
    transformed = cast_key("int8").apply(record)
    assert transformed.key_schema.type is Type.INT8 and transformed.key == 42
    assert transformed.value == "bogus" and transformed.value_schema is Schema.STRING_SCHEMA


@pytest.mark.parametrize(
    ("target", "schema_type", "expected"),
    [
        ("int8", Type.INT8, 42),
        ("int16", Type.INT16, 42),
        ("int32", Type.INT32, 42),
        ("int64", Type.INT64, 42),
        ("float32", Type.FLOAT32, 42.0),
        ("float64", Type.FLOAT64, 42.0),
        ("boolean", Type.BOOLEAN, True),
        ("string", Type.STRING, "42"),
    ],
)
def test_whole_value_with_schema(target: str, schema_type: Type, expected: Any) -> None:
    record = cast_value(target).apply(value_record(Schema.INT32_SCHEMA, 42))
    assert record.value_schema.type is schema_type
    assert record.value == expected and type(record.value) is type(expected)


@pytest.mark.parametrize(
    ("target", "expected"),
    [("int8", 42), ("int16", 42), ("int32", 42), ("int64", 42), ("float32", 42.0), ("float64", 42.0),
     ("boolean", True), ("string", "42")],
)  # fmt: skip
def test_whole_value_schemaless(target: str, expected: Any) -> None:
    record = cast_value(target).apply(value_record(None, 42))
    assert record.value_schema is None
    assert record.value == expected and type(record.value) is type(expected)


def test_whole_value_zero_is_false() -> None:
    assert cast_value("boolean").apply(value_record(Schema.INT32_SCHEMA, 0)).value is False
    assert cast_value("boolean").apply(value_record(None, 0)).value is False


def test_whole_value_schemaless_unsupported_type() -> None:
    with pytest.raises(DataError, match="does not support casting from ARRAY"):
        cast_value("int8").apply(value_record(None, ["foo"]))
    with pytest.raises(DataError, match="not supported by Connect's data API"):
        cast_value("int8").apply(value_record(None, decimal.Decimal(1)))


def test_whole_decimal_to_string() -> None:
    record = cast_value("string").apply(value_record(Decimal.schema(0), decimal.Decimal(42)))
    assert record.value_schema.type is Type.STRING and record.value == "42"


def test_whole_timestamp_to_string_keeps_schema_basics() -> None:
    record = cast_value("string").apply(value_record(Timestamp.SCHEMA, EPOCH + DAY + dt.timedelta(milliseconds=1)))
    assert record.value == "1970-01-02T00:00:00.001Z"
    # As Kafka, the whole-value cast copies name, version, doc and parameters.
    assert record.value_schema.type is Type.STRING and record.value_schema.name == Timestamp.LOGICAL_NAME


def test_whole_value_default_is_cast() -> None:
    schema = SchemaBuilder.float32().default_value(-42.125).build()
    record = cast_value("int32").apply(value_record(schema, 42.125))
    assert record.value == 42
    assert record.value_schema.type is Type.INT32 and record.value_schema.default_value == -42


def test_whole_value_optional_schema_stays_optional() -> None:
    record = cast_value("int64").apply(value_record(Schema.OPTIONAL_INT32_SCHEMA, 5))
    assert record.value_schema == Schema.OPTIONAL_INT64_SCHEMA


# -- fields -------------------------------------------------------------------------------------


def test_cast_fields_with_schema() -> None:
    day = EPOCH + DAY
    raw = bytes([0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10])
    xform = cast_value(
        "int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,boolean:int8,"
        "string:int32,bigdecimal:string,date:string,optional:int32,bytes:string,byteArray:string"
    )
    schema = (
        SchemaBuilder.struct()
        .field("int8", Schema.INT8_SCHEMA)
        .field("int16", Schema.OPTIONAL_INT16_SCHEMA)
        .field("int32", SchemaBuilder.int32().default_value(2).build())
        .field("int64", Schema.INT64_SCHEMA)
        .field("float32", Schema.FLOAT32_SCHEMA)
        .field("float64", SchemaBuilder.float64().default_value(-1.125).build())
        .field("boolean", Schema.BOOLEAN_SCHEMA)
        .field("string", Schema.STRING_SCHEMA)
        .field("bigdecimal", Decimal.schema(0))
        .field("date", Date.SCHEMA)
        .field("optional", Schema.OPTIONAL_FLOAT32_SCHEMA)
        .field("timestamp", Timestamp.SCHEMA)
        .field("bytes", Schema.BYTES_SCHEMA)
        .field("byteArray", Schema.BYTES_SCHEMA)
        .build()
    )
    value = (
        Struct(schema).put("int8", 8).put("int16", 16).put("int32", 32).put("int64", 64).put("float32", 32.0)
        .put("float64", -64.0).put("boolean", True).put("bigdecimal", decimal.Decimal(42)).put("date", day.date())
        .put("string", "42").put("timestamp", EPOCH).put("bytes", bytearray(raw)).put("byteArray", raw)
    )  # fmt: skip
    out = cast_value_record(xform, schema, value)
    s = out.schema
    assert out.get("int8") == 8 and s.field("int8").schema.type is Type.INT16
    assert out.get("int16") == 16 and s.field("int16").schema == Schema.OPTIONAL_INT32_SCHEMA
    assert out.get("int32") == 32 and s.field("int32").schema.default_value == 2
    assert s.field("int32").schema.type is Type.INT64
    assert out.get("int64") is True and s.field("int64").schema.type is Type.BOOLEAN
    assert out.get("float32") == 32.0 and s.field("float32").schema.type is Type.FLOAT64
    assert out.get("float64") is True and s.field("float64").schema.default_value is True
    assert out.get("boolean") == 1 and s.field("boolean").schema.type is Type.INT8
    assert out.get("string") == 42 and s.field("string").schema.type is Type.INT32
    assert out.get("bigdecimal") == "42" and s.field("bigdecimal").schema.type is Type.STRING
    assert out.get("date") == "1970-01-02" and s.field("date").schema.type is Type.STRING
    assert out.get("timestamp") == EPOCH and s.field("timestamp").schema is Timestamp.SCHEMA
    assert out.get("bytes") == "/ty6mHZUMhA=" and out.get("byteArray") == "/ty6mHZUMhA="
    assert out.get("optional") is None and s.field("optional").schema == Schema.OPTIONAL_INT32_SCHEMA


def cast_value_record(xform: CastValue, schema: Schema, value: Struct) -> Struct:
    record = xform.apply(value_record(schema, value))
    assert record.value.schema is record.value_schema
    return record.value


def test_cast_fields_schemaless() -> None:
    xform = cast_value("int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,"
                       "boolean:int8,string:int32,missing:int32")  # fmt: skip
    value = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "float32": 32.0, "float64": -64.0,
             "boolean": True, "string": "42", "other": "x"}  # fmt: skip
    record = xform.apply(value_record(None, value))
    assert record.value_schema is None
    assert record.value == {
        "int8": 8, "int16": 16, "int32": 32, "int64": True, "float32": 32.0, "float64": True,
        "boolean": 1, "string": 42, "other": "x", "missing": None,
    }  # fmt: skip
    assert value["string"] == "42"  # the original is not modified


def test_cast_logical_to_primitive() -> None:
    spec = ("date_to_int32:int32,timestamp_to_int64:int64,time_to_int64:int64,decimal_to_int32:int32,"
            "timestamp_to_float64:float64,null_timestamp_to_int32:int32")  # fmt: skip
    schema = (
        SchemaBuilder.struct()
        .field("date_to_int32", Date.SCHEMA)
        .field("timestamp_to_int64", Timestamp.SCHEMA)
        .field("time_to_int64", Time.SCHEMA)
        .field("decimal_to_int32", Decimal.schema(0))
        .field("timestamp_to_float64", Timestamp.SCHEMA)
        .field("null_timestamp_to_int32", Timestamp.builder().optional().build())
        .build()
    )
    value = (
        Struct(schema).put("date_to_int32", (EPOCH + DAY).date()).put("timestamp_to_int64", EPOCH)
        .put("time_to_int64", dt.time(0, 0, 0, 1000)).put("decimal_to_int32", decimal.Decimal(2**31))
        .put("timestamp_to_float64", dt.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=dt.UTC))
        .put("null_timestamp_to_int32", None)
    )  # fmt: skip
    out = cast_value_record(cast_value(spec), schema, value)
    assert out.get("date_to_int32") == 1
    assert out.get("timestamp_to_int64") == 0
    assert out.get("time_to_int64") == 1
    assert out.get("decimal_to_int32") == -(2**31)
    assert out.get("timestamp_to_float64") == 253402300799999.0
    assert out.get("null_timestamp_to_int32") is None
    types = {f.name: f.schema.type for f in out.schema.fields()}
    assert types == {
        "date_to_int32": Type.INT32, "timestamp_to_int64": Type.INT64, "time_to_int64": Type.INT64,
        "decimal_to_int32": Type.INT32, "timestamp_to_float64": Type.FLOAT64, "null_timestamp_to_int32": Type.INT32,
    }  # fmt: skip
    assert out.schema.field("null_timestamp_to_int32").schema.optional


def test_cast_logical_to_string() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("date", Date.SCHEMA)
        .field("decimal", Decimal.schema(0))
        .field("time", Time.SCHEMA)
        .field("timestamp", Timestamp.SCHEMA)
        .build()
    )
    value = (
        Struct(schema).put("date", dt.date(1970, 1, 2)).put("decimal", decimal.Decimal(1982))
        .put("time", dt.time(1)).put("timestamp", dt.datetime(2017, 7, 14, 2, 40, 0, 123000, tzinfo=dt.UTC))
    )  # fmt: skip
    out = cast_value_record(cast_value("date:string,decimal:string,time:string,timestamp:string"), schema, value)
    assert out.get("date") == "1970-01-02"
    assert out.get("decimal") == "1982"
    assert out.get("time") == "01:00:00.000Z"
    assert out.get("timestamp") == "2017-07-14T02:40:00.123Z"


# Each (schema, value) cast to every target type; the expected results come from running
# Kafka 4.3.1's Cast$Value on the same inputs ("ERR" = DataException).
TARGETS = ("int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string")
MATRIX: list[tuple[Schema, Any, tuple[Any, ...]]] = [
    (Schema.INT8_SCHEMA, -128, (-128, -128, -128, -128, -128.0, -128.0, True, "-128")),
    (Schema.INT16_SCHEMA, 300, (44, 300, 300, 300, 300.0, 300.0, True, "300")),
    (Schema.INT32_SCHEMA, -1, (-1, -1, -1, -1, -1.0, -1.0, True, "-1")),
    (Schema.INT64_SCHEMA, 2**63 - 1, (-1, -1, -1, 2**63 - 1, 9.223372036854776e18, 9.223372036854776e18, True,
                                      "9223372036854775807")),
    (Schema.INT64_SCHEMA, 2**32 + 255, (-1, 255, 255, 2**32 + 255, 4294967296.0, 4294967551.0, True, "4294967551")),
    (Schema.FLOAT32_SCHEMA, 3.700000047683716, (3, 3, 3, 3, 3.700000047683716, 3.700000047683716, True, "3.7")),
    (Schema.FLOAT32_SCHEMA, 0.10000000149011612, (0, 0, 0, 0, 0.10000000149011612, 0.10000000149011612, False, "0.1")),
    (Schema.FLOAT64_SCHEMA, 1e300, (-1, -1, 2**31 - 1, 2**63 - 1, float("inf"), 1e300, True, "1.0E300")),
    (Schema.FLOAT64_SCHEMA, -300.9, (-44, -300, -300, -300, -300.8999938964844, -300.9, True, "-300.9")),
    (Schema.FLOAT64_SCHEMA, 0.1, (0, 0, 0, 0, 0.10000000149011612, 0.1, False, "0.1")),
    (Schema.FLOAT64_SCHEMA, 1e7, (-128, -27008, 10000000, 10000000, 1e7, 1e7, True, "1.0E7")),
    (Schema.BOOLEAN_SCHEMA, True, (1, 1, 1, 1, 1.0, 1.0, True, "true")),
    (Schema.STRING_SCHEMA, "42", (42, 42, 42, 42, 42.0, 42.0, False, "42")),
    (Schema.STRING_SCHEMA, "-129", ("ERR", -129, -129, -129, -129.0, -129.0, False, "-129")),
    (Schema.STRING_SCHEMA, "1.5", ("ERR", "ERR", "ERR", "ERR", 1.5, 1.5, False, "1.5")),
    (Schema.STRING_SCHEMA, "TRUE", ("ERR", "ERR", "ERR", "ERR", "ERR", "ERR", True, "TRUE")),
    (Schema.STRING_SCHEMA, " 7 ", ("ERR", "ERR", "ERR", "ERR", 7.0, 7.0, False, " 7 ")),
    (Schema.STRING_SCHEMA, "0x1p3", ("ERR", "ERR", "ERR", "ERR", 8.0, 8.0, False, "0x1p3")),
    (Schema.STRING_SCHEMA, "3.4e39", ("ERR", "ERR", "ERR", "ERR", float("inf"), 3.4e39, False, "3.4e39")),
    (Decimal.schema(2), decimal.Decimal("123456789012.99"),
     (20, 6676, -1097262572, 123456789012, 123456790528.0, 123456789012.99, True, "123456789012.99")),
    (Decimal.schema(3), decimal.Decimal("-0.500"), (0, 0, 0, 0, -0.5, -0.5, False, "-0.500")),
    (Date.SCHEMA, dt.date(2016, 7, 18), (104, 17000, 17000, 17000, 17000.0, 17000.0, True, "2016-07-18")),
    (Date.SCHEMA, dt.date(1970, 1, 1), (0, 0, 0, 0, 0.0, 0.0, False, "00:00:00.000Z")),
    (Time.SCHEMA, dt.time(1, 2, 3, 4000), (-4, -12548, 3723004, 3723004, 3723004.0, 3723004.0, True,
                                           "01:02:03.004Z")),
    (Timestamp.SCHEMA, EPOCH - dt.timedelta(seconds=5), (120, -5000, -5000, -5000, -5000.0, -5000.0, True,
                                                         "23:59:55.000Z")),
    (Timestamp.SCHEMA, EPOCH + 3 * DAY, (0, 5120, 259200000, 259200000, 259200000.0, 259200000.0, True, "1970-01-04")),
    (Schema.BYTES_SCHEMA, bytes([1, 2, 255]), ("ERR", "ERR", "ERR", "ERR", "ERR", "ERR", "ERR", "AQL/")),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "value", "expected"), MATRIX)
def test_cast_matrix_matches_kafka(schema: Schema, value: Any, expected: tuple[Any, ...]) -> None:
    for target, want in zip(TARGETS, expected, strict=True):
        xform = cast_value(target)
        if want == "ERR":
            with pytest.raises(DataError):
                xform.apply(value_record(schema, value))
            continue
        got = xform.apply(value_record(schema, value)).value
        assert got == want, (target, got, want)
        assert type(got) is type(want), (target, got)


def test_nan_casts() -> None:
    nan = float("nan")
    assert cast_value("int32").apply(value_record(Schema.FLOAT64_SCHEMA, nan)).value == 0
    assert cast_value("boolean").apply(value_record(Schema.FLOAT64_SCHEMA, nan)).value is False
    assert cast_value("string").apply(value_record(Schema.FLOAT64_SCHEMA, nan)).value == "NaN"


def test_out_of_range_string_message() -> None:
    with pytest.raises(DataError, match=r"^Value \(300\) was out of range for requested data type$"):
        cast_value("int8").apply(value_record(Schema.STRING_SCHEMA, "300"))


def test_struct_field_cannot_be_cast() -> None:
    inner = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("inner", inner).build()
    value = Struct(schema).put("inner", Struct(inner).put("x", 1))
    with pytest.raises(DataError, match="does not support casting from STRUCT"):
        cast_value("inner:string").apply(value_record(schema, value))


def test_non_struct_value_with_field_spec() -> None:
    with pytest.raises(DataError, match="Cannot list fields on non-struct type"):
        cast_value("a:int8").apply(value_record(Schema.INT32_SCHEMA, 1))
    struct_schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataError, match=r"Only Struct objects supported for \[cast types\]"):
        cast_value("a:int8").apply(value_record(struct_schema, 1))
    with pytest.raises(DataError, match=r"Only Map objects supported in absence of schema for \[cast types\]"):
        cast_value("a:int8").apply(value_record(None, 1))


def test_schema_is_cached_and_basics_copied() -> None:
    schema = SchemaBuilder.struct().name("n").version(2).doc("d").field("a", Schema.INT32_SCHEMA).build()
    xform = cast_value("a:string")
    first = xform.apply(value_record(schema, Struct(schema).put("a", 1)))
    second = xform.apply(value_record(schema, Struct(schema).put("a", 2)))
    assert first.value_schema is second.value_schema
    assert (first.value_schema.name, first.value_schema.version, first.value_schema.doc) == ("n", 2, "d")
    assert second.value.get("a") == "2"


def test_key_variant_keeps_value_and_sink_metadata() -> None:
    record = SinkRecord("t", 3, None, {"id": "7"}, Schema.STRING_SCHEMA, "v", 99, 1234, "CreateTime",
                        [Header("h", "x")])  # fmt: skip
    out = cast_key("id:int64").apply(record)
    assert out.key == {"id": 7} and out.value == "v" and out.value_schema is Schema.STRING_SCHEMA
    assert (out.topic, out.kafka_partition, out.kafka_offset, out.timestamp) == ("t", 3, 99, 1234)
    assert list(out.headers) == [Header("h", "x")]
