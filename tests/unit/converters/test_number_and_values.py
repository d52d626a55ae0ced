"""Number converters and Kafka's Values (SimpleHeaderConverter), without a JVM.

The integration test tests/integration/test_converter_parity.py checks the same code
against Kafka itself; these pin the behaviours it found.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math

import pytest

from sluice.api.converter import SchemaAndValue
from sluice.api.data import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp, Type
from sluice.api.errors import ConfigError, DataError
from sluice.api.values import convert_to_string, parse_string
from sluice.converters import DoubleConverter, FloatConverter, IntegerConverter, LongConverter, ShortConverter
from sluice.runtime.plugins import Plugins

UTC = dt.UTC


@pytest.mark.parametrize(
    ("cls", "schema", "value", "data", "read_schema"),
    [
        (ShortConverter, Schema.INT16_SCHEMA, -2, b"\xff\xfe", Schema.OPTIONAL_INT16_SCHEMA),
        (IntegerConverter, Schema.INT32_SCHEMA, 2**31 - 1, b"\x7f\xff\xff\xff", Schema.OPTIONAL_INT32_SCHEMA),
        (LongConverter, Schema.INT64_SCHEMA, 1, b"\x00" * 7 + b"\x01", Schema.OPTIONAL_INT64_SCHEMA),
        (FloatConverter, Schema.FLOAT32_SCHEMA, 1.5, b"\x3f\xc0\x00\x00", Schema.OPTIONAL_FLOAT32_SCHEMA),
        (DoubleConverter, Schema.FLOAT64_SCHEMA, -0.0, b"\x80" + b"\x00" * 7, Schema.OPTIONAL_FLOAT64_SCHEMA),
    ],
)
def test_number_converters_round_trip(cls, schema, value, data, read_schema) -> None:
    c = cls()
    c.configure({}, False)
    assert c.from_connect_data("t", schema, value) == data
    assert c.from_connect_data("t", None, value) == data  # schemaless: any Python number that fits
    back = c.to_connect_data("t", data)
    assert back.schema == read_schema and back.value == value
    assert math.copysign(1, back.value) == math.copysign(1, value)
    assert c.from_connect_data("t", schema, None) is None
    assert c.to_connect_data("t", None) == SchemaAndValue(read_schema, None)
    # also a header converter
    c.configure({})
    assert c.from_connect_header("t", "h", schema, value) == data
    assert c.to_connect_header("t", "h", data).value == value


def test_number_converters_reject_other_java_types() -> None:
    c = ShortConverter()
    c.configure({}, True)
    with pytest.raises(DataError, match=r"^Failed to serialize to short \(was class java.lang.Integer\): $"):
        c.from_connect_data("t", Schema.INT32_SCHEMA, 5)
    with pytest.raises(DataError, match=r"^Failed to serialize to short \(was class java.lang.Long\): $"):
        c.from_connect_data("t", None, 40000)
    with pytest.raises(DataError, match=r"\(was class java.lang.String\)"):
        c.from_connect_data("t", None, "5")
    with pytest.raises(DataError, match=r"\(was class java.lang.Boolean\)"):
        c.from_connect_data("t", None, True)
    with pytest.raises(DataError, match=r"\(was class java.util.Date\)"):
        IntegerConverter().from_connect_data("t", Date.SCHEMA, dt.date(2024, 1, 1))
    with pytest.raises(DataError, match=r"^Failed to serialize to double \(was class java.lang.Long\): $"):
        DoubleConverter().from_connect_data("t", None, 3)


def test_number_converters_reading_wrong_sizes() -> None:
    with pytest.raises(DataError, match="^Failed to deserialize integer: $") as info:
        IntegerConverter().to_connect_data("t", b"\x00\x01")
    assert str(info.value.__cause__) == "Size of data received by IntegerDeserializer is not 4"
    with pytest.raises(DataError, match="^Failed to deserialize double: $"):
        DoubleConverter().to_connect_data("t", b"")


def test_float_converter_rounds_to_single_precision() -> None:
    c = FloatConverter()
    assert c.from_connect_data("t", None, 0.1) == b"\x3d\xcc\xcc\xcd"
    assert c.to_connect_data("t", b"\x3d\xcc\xcc\xcd").value == pytest.approx(0.1, rel=1e-7)
    assert c.from_connect_data("t", None, 1e300) == b"\x7f\x80\x00\x00"  # (float) of a huge double
    assert math.isnan(c.to_connect_data("t", c.from_connect_data("t", None, math.nan)).value)


def test_number_converters_config_and_plugin_names() -> None:
    with pytest.raises(ConfigError):
        LongConverter().configure({"converter.type": "sideways"})
    plugins = Plugins()
    for name in ("Short", "Integer", "Long", "Float", "Double"):
        kinds = {
            d.type for d in plugins.all() if d.class_name == f"org.apache.kafka.connect.converters.{name}Converter"
        }
        assert kinds == {"converter", "header_converter"}


# -- Values.convertToString -------------------------------------------------------------


def test_convert_to_string() -> None:
    assert convert_to_string(None, None) is None
    assert convert_to_string(Schema.FLOAT32_SCHEMA, 0.1) == "0.1"
    assert convert_to_string(Schema.FLOAT64_SCHEMA, 1e7) == "1.0E7"
    assert convert_to_string(None, ['a"b', 1, None, b"\x00"]) == '["a\\"b",1,null,"AA=="]'
    assert convert_to_string(None, {1: "x"}) == '{1:"x"}'
    assert convert_to_string(Decimal.schema(-2), decimal.Decimal("1.2E+3")) == "1.2E+3"
    schema = SchemaBuilder.struct().field("a", SchemaBuilder.int32().optional().default_value(9).build()).build()
    assert convert_to_string(schema, Struct(schema)) == '{"a":9}'


def test_convert_to_string_formats_dates_by_their_millis_not_their_schema() -> None:
    assert convert_to_string(Date.SCHEMA, dt.date(2024, 1, 31)) == "2024-01-31"
    assert convert_to_string(Date.SCHEMA, dt.date(1970, 1, 1)) == "00:00:00.000Z"  # under one day
    assert convert_to_string(Date.SCHEMA, dt.date(1900, 1, 1)) == "00:00:00.000Z"  # negative
    assert convert_to_string(Time.SCHEMA, dt.time(13, 45, 30, 123000)) == "13:45:30.123Z"
    at = dt.datetime(2024, 1, 31, 13, 45, tzinfo=UTC)
    assert convert_to_string(Timestamp.SCHEMA, at) == "2024-01-31T13:45:00.000Z"
    assert convert_to_string(Timestamp.SCHEMA, dt.datetime(2024, 1, 31, tzinfo=UTC)) == "2024-01-31"
    array = SchemaBuilder.array(Date.SCHEMA).build()
    assert convert_to_string(array, [dt.date(2024, 1, 31)]) == "[2024-01-31]"  # not quoted


# -- Values.parseString -----------------------------------------------------------------

ARRAY_INT16 = SchemaBuilder.array(Schema.INT16_SCHEMA).build()


@pytest.mark.parametrize(
    ("text", "schema", "value"),
    [
        ("", Schema.STRING_SCHEMA, ""),
        (" ", Schema.STRING_SCHEMA, " "),
        ("null", None, None),
        ("true", Schema.BOOLEAN_SCHEMA, True),
        (" false ", Schema.BOOLEAN_SCHEMA, False),
        ("TRUE", Schema.STRING_SCHEMA, "TRUE"),
        ("true}", Schema.STRING_SCHEMA, "true}"),
        ("42", Schema.INT8_SCHEMA, 42),
        ("-129", Schema.INT16_SCHEMA, -129),
        ("2147483648", Schema.INT64_SCHEMA, 2**31),
        ("1e3", Schema.INT16_SCHEMA, 1000),
        ("127.000", Schema.INT8_SCHEMA, 127),
        ("-0.0", Schema.INT8_SCHEMA, 0),
        ("1.5", Schema.FLOAT32_SCHEMA, 1.5),
        ("1e39", Schema.FLOAT64_SCHEMA, 1e39),
        ("1e400", Decimal.schema(-400), decimal.Decimal("1e400")),
        ("123456789012345678901234567890", Decimal.schema(0), decimal.Decimal("123456789012345678901234567890")),
        ("1,2", Schema.INT8_SCHEMA, 1),
        ("12abc", Schema.STRING_SCHEMA, "12abc"),
        (".5", Schema.STRING_SCHEMA, ".5"),
        ("[1, 1000]", ARRAY_INT16, [1, 1000]),
        ("[1,2.5]", SchemaBuilder.array(Schema.FLOAT32_SCHEMA).build(), [1.0, 2.5]),
        ("[1,null]", Schema.STRING_SCHEMA, "[1,null]"),
        ("[1,]", SchemaBuilder.array(Schema.INT8_SCHEMA).build(), [1]),
        ('{"a":1,"b":1000}', SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT16_SCHEMA).build(), {"a": 1, "b": 1000}),
        ('["a\\"b"]', SchemaBuilder.array(Schema.STRING_SCHEMA).build(), ['a\\"b']),
        ("2024-01-31", Date.SCHEMA, dt.date(2024, 1, 31)),
        ("2024-02-30", Date.SCHEMA, dt.date(2024, 3, 1)),
        ("13:45:30.123Z", Time.SCHEMA, dt.time(13, 45, 30, 123000)),
        ("2024-01-31T13:45:30.123Z", Timestamp.SCHEMA, dt.datetime(2024, 1, 31, 13, 45, 30, 123000, tzinfo=UTC)),
    ],
)
def test_parse_string(text: str, schema: Schema | None, value: object) -> None:
    parsed = parse_string(text)
    assert parsed.schema == schema
    assert parsed.value == value
    assert type(parsed.value) is type(value)


def test_parse_string_mixed_elements_have_no_element_schema() -> None:
    parsed = parse_string('[1,"a"]')
    assert parsed.schema.type is Type.ARRAY and parsed.schema.value_schema() is None
    assert parsed.value == [1, "a"]
    parsed = parse_string("{}")
    assert parsed.schema.type is Type.MAP and parsed.schema.key_schema() is None
    parsed = parse_string('{"a":1,"b":"x"}')
    assert parsed.schema.key_schema() == Schema.STRING_SCHEMA and parsed.schema.value_schema() is None
