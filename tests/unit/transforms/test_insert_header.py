"""InsertHeader, after Kafka's InsertHeaderTest, and the Values.parseString rules its
``value.literal`` follows (after Kafka's ValuesTest)."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from sluice.api.data import Date, Decimal, Schema, Time, Timestamp, Type
from sluice.api.errors import ConfigError
from sluice.api.records import Headers, SinkRecord, SourceRecord
from sluice.api.values import parse_string
from sluice.transforms.insert_header import InsertHeader

UTC = dt.UTC


def _source(headers: Headers) -> SourceRecord:
    return SourceRecord({"foo": "bar"}, {"baz": "quxx"}, "topic", 0, None, "key", None, "value", 0, headers)


def _configured(header, literal) -> InsertHeader:
    xform = InsertHeader()
    xform.configure({"header": header, "value.literal": literal})
    return xform


def _assert_non_headers(original, transformed) -> None:
    for attr in (
        "source_partition",
        "source_offset",
        "topic",
        "kafka_partition",
        "key_schema",
        "key",
        "value_schema",
        "value",
        "timestamp",
    ):
        assert getattr(transformed, attr) == getattr(original, attr), attr


def test_insertion_with_existing_other_header() -> None:
    headers = Headers().add_string("existing", "existing-value")
    expected = headers.duplicate().add("inserted", "inserted-value", Schema.STRING_SCHEMA)
    original = _source(headers)
    transformed = _configured("inserted", "inserted-value").apply(original)
    _assert_non_headers(original, transformed)
    assert transformed.headers == expected
    assert len(original.headers) == 1


def test_insertion_with_existing_same_header() -> None:
    headers = Headers().add_string("existing", "preexisting-value")
    expected = headers.duplicate().add("existing", "inserted-value", Schema.STRING_SCHEMA)
    assert _configured("existing", "inserted-value").apply(_source(headers)).headers == expected


def test_insertion_with_byte_header() -> None:
    headers = Headers().add_string("existing", "existing-value")
    expected = headers.duplicate().add("inserted", 1, Schema.INT8_SCHEMA)
    assert _configured("inserted", "1").apply(_source(headers)).headers == expected


@pytest.mark.parametrize(
    ("literal", "schema", "value"),
    [
        ("true", Schema.BOOLEAN_SCHEMA, True),
        ("300", Schema.INT16_SCHEMA, 300),
        ("  spaced  ", Schema.STRING_SCHEMA, "spaced"),  # config values are trimmed
        ("", Schema.STRING_SCHEMA, ""),
        ("null", None, None),
        ("2024-01-31", Date.SCHEMA, dt.date(2024, 1, 31)),
    ],
)
def test_typed_literals(literal, schema, value) -> None:
    header = _configured("h", literal).apply(SourceRecord(None, None, "t")).headers.last_with_name("h")
    assert (header.schema, header.value) == (schema, value)


def test_sink_record() -> None:
    record = SinkRecord("t", 2, None, "k", None, "v", 17)
    transformed = _configured("h", "x").apply(record)
    assert isinstance(transformed, SinkRecord) and transformed.kafka_offset == 17
    assert [(h.key, h.value) for h in transformed.headers] == [("h", "x")]


def test_config_rejects_null_header_key() -> None:
    with pytest.raises(ConfigError, match="Invalid value null for configuration header: entry must be non null"):
        InsertHeader().configure({"header": None, "value.literal": "1"})


def test_config_rejects_null_header_value() -> None:
    with pytest.raises(ConfigError, match="value.literal"):
        InsertHeader().configure({"header": "inserted", "value.literal": None})


@pytest.mark.parametrize("configs", [{}, {"header": "h"}, {"value.literal": "v"}])
def test_config_requires_both_keys(configs) -> None:
    with pytest.raises(ConfigError, match="Missing required configuration"):
        InsertHeader().configure(configs)


def test_config_def() -> None:
    assert InsertHeader().config().names() == ["header", "value.literal"]


# -- Values.parseString ----------------------------------------------------------------------


def _parsed(text):
    result = parse_string(text)
    return (result.schema, result.value)


def test_parse_null_and_empty() -> None:
    result = parse_string(None)
    assert (result.schema, result.value) == (None, None)
    assert _parsed("") == (Schema.STRING_SCHEMA, "")
    assert _parsed("null") == (None, None)
    assert _parsed(" \t null \n") == (None, None)


@pytest.mark.parametrize(
    "text",
    [
        "{foo: 3}",
        "{3: foo}",
        "[foo]",
        "null=",
        "true}",
        "false]",
        "{6:9 4:20}",
        "[0 1 2]",
        "{null: 3}",
        "[1, 2, 3,,,]",
        "[1, null]",
        "[null, 1]",
        "simple",
        "simple string",
        "a:b",
        "'simple' string",
        "si\\:mple",
        "\uffff\uffff",
        "[",
        "{",
        "]",
        "}",
        ",",
        ":",
        '"',
        "a{b",
        "[1, 2",
        "{1: 2",
        "{1 2}",
        "[1: 2]",
        "-",
        "+",
    ],
)
def test_parse_as_whole_string(text: str) -> None:
    assert _parsed(text) == (Schema.STRING_SCHEMA, text)


def test_parse_booleans() -> None:
    assert _parsed("  true  ") == (Schema.BOOLEAN_SCHEMA, True)
    assert _parsed("false") == (Schema.BOOLEAN_SCHEMA, False)
    schema, value = _parsed("[true, false]")
    assert schema.type is Type.ARRAY and schema.value_schema() == Schema.BOOLEAN_SCHEMA and value == [True, False]
    schema, value = _parsed("{true: false, false: true}")
    assert (schema.key_schema(), schema.value_schema()) == (Schema.BOOLEAN_SCHEMA, Schema.BOOLEAN_SCHEMA)
    assert value == {True: False, False: True}


@pytest.mark.parametrize(
    ("text", "schema", "value"),
    [
        ("1", Schema.INT8_SCHEMA, 1),
        ("-128", Schema.INT8_SCHEMA, -128),
        ("+127", Schema.INT8_SCHEMA, 127),
        ("128", Schema.INT16_SCHEMA, 128),
        ("-32769", Schema.INT32_SCHEMA, -32769),
        ("2147483648", Schema.INT64_SCHEMA, 2147483648),
        ("9223372036854775807", Schema.INT64_SCHEMA, 9223372036854775807),
        ("1.0", Schema.INT8_SCHEMA, 1),
        ("300.0", Schema.INT16_SCHEMA, 300),
        ("66000.0", Schema.INT32_SCHEMA, 66000),
        ("1e3", Schema.INT16_SCHEMA, 1000),
        ("1.1", Schema.FLOAT32_SCHEMA, 1.100000023841858),
        ("300.01", Schema.FLOAT32_SCHEMA, 300.010009765625),
        ("66000.0008", Schema.FLOAT32_SCHEMA, 66000.0),
        ("1.5e300", Schema.FLOAT64_SCHEMA, 1.5e300),
        ("12:30", Schema.INT8_SCHEMA, 12),  # only the first token counts, as in Kafka
    ],
)
def test_parse_numbers(text, schema, value) -> None:
    assert _parsed(text) == (schema, value)


def test_parse_big_numbers_as_decimals() -> None:
    schema, value = _parsed("9223372036854775808")
    assert schema == Decimal.schema(0) and value == decimal.Decimal("9223372036854775808")
    schema, value = _parsed("-1e400")
    assert schema.name == Decimal.LOGICAL_NAME and Decimal.scale(schema) == -400
    assert value == decimal.Decimal("-1e400")


def test_parse_temporals() -> None:
    assert _parsed("2019-08-23T14:34:54.346Z") == (
        Timestamp.SCHEMA,
        dt.datetime(2019, 8, 23, 14, 34, 54, 346000, tzinfo=UTC),
    )
    assert _parsed("2019-08-23T14\\:34\\:54.346Z") == (
        Timestamp.SCHEMA,
        dt.datetime(2019, 8, 23, 14, 34, 54, 346000, tzinfo=UTC),
    )
    assert _parsed("2019-08-23") == (Date.SCHEMA, dt.date(2019, 8, 23))
    assert _parsed("14:34:54.346Z") == (Time.SCHEMA, dt.time(14, 34, 54, 346000))
    assert _parsed("14\\:34\\:54.346Z") == (Time.SCHEMA, dt.time(14, 34, 54, 346000))
    assert _parsed("2019-02-30") == (Date.SCHEMA, dt.date(2019, 3, 2))  # lenient, as SimpleDateFormat


def test_parse_temporals_in_containers() -> None:
    schema, value = _parsed("[2019-08-23]")
    assert schema.value_schema() == Date.SCHEMA and value == [dt.date(2019, 8, 23)]
    schema, value = _parsed("[14:34:54.346Z]")
    assert schema.value_schema() == Time.SCHEMA and value == [dt.time(14, 34, 54, 346000)]
    schema, value = _parsed("[2019-08-23T14:34:54.346Z,2019-01-23T15:12:34.567Z,   2019-04-23T19:12:34.567Z]")
    assert schema.value_schema() == Timestamp.SCHEMA
    assert value == [
        dt.datetime(2019, 8, 23, 14, 34, 54, 346000, tzinfo=UTC),
        dt.datetime(2019, 1, 23, 15, 12, 34, 567000, tzinfo=UTC),
        dt.datetime(2019, 4, 23, 19, 12, 34, 567000, tzinfo=UTC),
    ]
    for text in ('{"k1":"14:34:54.346Z"}', '{"k1":14:34:54.346Z}'):
        schema, value = _parsed(text)
        assert (schema.key_schema(), schema.value_schema()) == (Schema.STRING_SCHEMA, Time.SCHEMA)
        assert value == {"k1": dt.time(14, 34, 54, 346000)}


def test_parse_containers() -> None:
    schema, value = _parsed("{}")
    assert schema.type is Type.MAP and value == {}
    schema, value = _parsed("[]")
    assert schema.type is Type.ARRAY and value == []
    schema, value = _parsed("{3: null}")
    assert schema.key_schema() == Schema.INT8_SCHEMA and value == {3: None}
    schema, value = _parsed("[null]")
    assert schema.type is Type.ARRAY and value == [None]
    schema, value = _parsed("[[]]")
    assert schema.value_schema().type is Type.ARRAY
    schema, value = _parsed("[{}]")
    assert schema.value_schema().type is Type.MAP
    schema, value = _parsed('{"a":{}}')
    assert schema.value_schema().type is Type.MAP and value == {"a": {}}
    schema, value = _parsed('{"a":[]}')
    assert schema.value_schema().type is Type.ARRAY and value == {"a": []}
    schema, value = _parsed('["a", "b\\"c", " d "]')
    assert schema.value_schema() == Schema.STRING_SCHEMA and value == ["a", 'b\\"c', " d "]
    schema, value = _parsed("[1,]")
    assert value == [1]


def test_parse_numeric_arrays_widen_to_a_common_type() -> None:
    schema, value = _parsed("[1, 300, 70000]")
    assert schema.value_schema() == Schema.INT32_SCHEMA and value == [1, 300, 70000]
    schema, value = _parsed("[1, 2.5]")
    assert schema.value_schema() == Schema.FLOAT32_SCHEMA and value == [1.0, 2.5]
    assert all(isinstance(v, float) for v in value)
    schema, value = _parsed("{1: 1.5, 1000: 2}")
    assert (schema.key_schema(), schema.value_schema()) == (Schema.INT16_SCHEMA, Schema.FLOAT32_SCHEMA)
    assert value == {1: 1.5, 1000: 2.0}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[1, 2, 300, "four"]', [1, 2, 300, "four"]),
        ('["four", 1, 2, 300]', ["four", 1, 2, 300]),
    ],
)
def test_parse_mixed_arrays_have_no_element_schema(text, expected) -> None:
    schema, value = _parsed(text)
    assert schema.type is Type.ARRAY and schema._value_schema is None
    assert value == expected


def test_parse_mixed_maps() -> None:
    schema, value = _parsed('{1:1, 2:1, 300:300, "four":1}')
    assert schema.type is Type.MAP and schema._key_schema is None and schema._value_schema is None
    assert value == {1: 1, 2: 1, 300: 300, "four": 1}
    schema, value = _parsed('{1:1, 2:1, 300:300, 4:"four"}')
    assert schema.key_schema() == Schema.INT16_SCHEMA and schema._value_schema is None
    assert value == {1: 1, 2: 1, 300: 300, 4: "four"}
