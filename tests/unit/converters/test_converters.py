"""Built-in converters, held to Kafka's exact bytes."""

from __future__ import annotations

import datetime as dt
import decimal
import re

import pytest

from sluice.api.config import ConfigType
from sluice.api.converter import SchemaAndValue
from sluice.api.data import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp
from sluice.api.errors import ConfigError, DataError
from sluice.converters import ByteArrayConverter, JsonConverter, SimpleHeaderConverter, StringConverter
from sluice.converters.json import DESERIALIZE_ERROR, ENVELOPE_ERROR


def json_converter(**configs) -> JsonConverter:
    c = JsonConverter()
    c.configure({k.replace("_", "."): v for k, v in configs.items()}, False)
    return c


@pytest.fixture
def jc() -> JsonConverter:
    return json_converter()


@pytest.fixture
def plain() -> JsonConverter:
    return json_converter(schemas_enable="false")


# -- JsonConverter: serialisation -------------------------------------------------------


def test_file_source_line_golden(jc: JsonConverter, plain: JsonConverter) -> None:
    assert jc.from_connect_data("t", Schema.STRING_SCHEMA, "foo") == (
        b'{"schema":{"type":"string","optional":false},"payload":"foo"}'
    )
    assert plain.from_connect_data("t", Schema.STRING_SCHEMA, "foo") == b'"foo"'


@pytest.mark.parametrize(
    ("schema", "value", "schema_json", "payload"),
    [
        (Schema.BOOLEAN_SCHEMA, True, '{"type":"boolean","optional":false}', "true"),
        (Schema.INT8_SCHEMA, -8, '{"type":"int8","optional":false}', "-8"),
        (Schema.INT16_SCHEMA, 300, '{"type":"int16","optional":false}', "300"),
        (Schema.INT32_SCHEMA, 70000, '{"type":"int32","optional":false}', "70000"),
        (Schema.INT64_SCHEMA, 2**40, '{"type":"int64","optional":false}', "1099511627776"),
        (Schema.FLOAT32_SCHEMA, 1.1, '{"type":"float","optional":false}', "1.1"),
        (Schema.FLOAT64_SCHEMA, 1.0, '{"type":"double","optional":false}', "1.0"),
        (Schema.FLOAT64_SCHEMA, 1e10, '{"type":"double","optional":false}', "1.0E10"),
        (Schema.FLOAT64_SCHEMA, 1e-5, '{"type":"double","optional":false}', "1.0E-5"),
        (Schema.FLOAT64_SCHEMA, float("nan"), '{"type":"double","optional":false}', '"NaN"'),
        (Schema.BYTES_SCHEMA, b"\x00\x01\x02", '{"type":"bytes","optional":false}', '"AAEC"'),
        (Schema.OPTIONAL_STRING_SCHEMA, None, '{"type":"string","optional":true}', "null"),
        (
            Schema.STRING_SCHEMA,
            'h\u00e9 "q" \\ \n\t\x01\x1b',
            '{"type":"string","optional":false}',
            '"h\u00e9 \\"q\\" \\\\ \\n\\t\\u0001\\u001B"',
        ),
        (SchemaBuilder.int32().default_value(5).build(), None, '{"type":"int32","optional":false,"default":5}', "5"),
        (
            SchemaBuilder.string()
            .optional()
            .name("n")
            .version(2)
            .doc("d")
            .parameter("a", "b")
            .parameter("c", "d")
            .build(),
            "x",
            '{"type":"string","optional":true,"name":"n","version":2,"doc":"d","parameters":{"a":"b","c":"d"}}',
            '"x"',
        ),
        (
            SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build(),
            ["a", "b"],
            '{"type":"array","items":{"type":"string","optional":false},"optional":true}',
            '["a","b"]',
        ),
        (
            SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(),
            {"k": 1, "l": 2},
            '{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int32","optional":false},'
            '"optional":false}',
            '{"k":1,"l":2}',
        ),
        (
            SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build(),
            {1: "one", 2: "two"},
            '{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"string","optional":false},'
            '"optional":false}',
            '[[1,"one"],[2,"two"]]',
        ),
    ],
)
def test_schema_and_value_goldens(jc, plain, schema, value, schema_json, payload) -> None:
    assert jc.from_connect_data("t", schema, value) == f'{{"schema":{schema_json},"payload":{payload}}}'.encode()
    assert plain.from_connect_data("t", schema, value) == payload.encode()


ALL_SCHEMA = (
    SchemaBuilder.struct()
    .name("test.All")
    .version(3)
    .doc("all types")
    .field("i8", Schema.INT8_SCHEMA)
    .field("i16", Schema.INT16_SCHEMA)
    .field("i32", Schema.INT32_SCHEMA)
    .field("i64", Schema.INT64_SCHEMA)
    .field("f32", Schema.FLOAT32_SCHEMA)
    .field("f64", Schema.FLOAT64_SCHEMA)
    .field("b", Schema.BOOLEAN_SCHEMA)
    .field("s", Schema.STRING_SCHEMA)
    .field("by", Schema.BYTES_SCHEMA)
    .field("arr", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
    .field("m", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
    .field("mi", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build())
    .field("opt", Schema.OPTIONAL_INT32_SCHEMA)
    .field("inner", SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).optional().build())
    .build()
)
ALL_SCHEMA_JSON = (
    '{"type":"struct","fields":['
    '{"type":"int8","optional":false,"field":"i8"},'
    '{"type":"int16","optional":false,"field":"i16"},'
    '{"type":"int32","optional":false,"field":"i32"},'
    '{"type":"int64","optional":false,"field":"i64"},'
    '{"type":"float","optional":false,"field":"f32"},'
    '{"type":"double","optional":false,"field":"f64"},'
    '{"type":"boolean","optional":false,"field":"b"},'
    '{"type":"string","optional":false,"field":"s"},'
    '{"type":"bytes","optional":false,"field":"by"},'
    '{"type":"array","items":{"type":"string","optional":false},"optional":true,"field":"arr"},'
    '{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int32","optional":false},'
    '"optional":false,"field":"m"},'
    '{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"string","optional":false},'
    '"optional":false,"field":"mi"},'
    '{"type":"int32","optional":true,"field":"opt"},'
    '{"type":"struct","fields":[{"type":"int32","optional":false,"field":"x"}],"optional":true,"field":"inner"}'
    '],"optional":false,"name":"test.All","version":3,"doc":"all types"}'
)
ALL_PAYLOAD = (
    '{"i8":-8,"i16":300,"i32":70000,"i64":1099511627776,"f32":1.5,"f64":1.0E10,"b":true,'
    '"s":"h\u00e9llo","by":"AAEC","arr":["a","b"],"m":{"k":1},"mi":[[1,"one"]],"opt":null,"inner":{"x":7}}'
)


def _all_value() -> Struct:
    inner = Struct(ALL_SCHEMA.field("inner").schema).put("x", 7)
    return (
        Struct(ALL_SCHEMA)
        .put("i8", -8)
        .put("i16", 300)
        .put("i32", 70000)
        .put("i64", 2**40)
        .put("f32", 1.5)
        .put("f64", 1e10)
        .put("b", True)
        .put("s", "h\u00e9llo")
        .put("by", b"\x00\x01\x02")
        .put("arr", ["a", "b"])
        .put("m", {"k": 1})
        .put("mi", {1: "one"})
        .put("inner", inner)
    )


def test_struct_with_every_type_golden(jc: JsonConverter, plain: JsonConverter) -> None:
    expected = f'{{"schema":{ALL_SCHEMA_JSON},"payload":{ALL_PAYLOAD}}}'.encode()
    assert jc.from_connect_data("t", ALL_SCHEMA, _all_value()) == expected
    assert plain.from_connect_data("t", ALL_SCHEMA, _all_value()) == ALL_PAYLOAD.encode()
    back = jc.to_connect_data("t", expected)
    assert back.schema == ALL_SCHEMA
    assert back.value == _all_value()
    # and a second time through the schema cache
    assert jc.to_connect_data("t", expected) == back


def test_logical_type_goldens(jc: JsonConverter) -> None:
    d = Decimal.schema(2)
    dec_json = (
        '{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,'
        '"parameters":{"scale":"2"}}'
    )
    assert jc.from_connect_data("t", d, decimal.Decimal("1.56")) == f'{{"schema":{dec_json},"payload":"AJw="}}'.encode()
    numeric = json_converter(decimal_format="numeric")
    assert (
        numeric.from_connect_data("t", d, decimal.Decimal("1.56")) == f'{{"schema":{dec_json},"payload":1.56}}'.encode()
    )
    cases = [
        (Date.SCHEMA, dt.date(1997, 5, 19), '"org.apache.kafka.connect.data.Date"', "int32", "10000"),
        (Time.SCHEMA, dt.time(4, 0), '"org.apache.kafka.connect.data.Time"', "int32", "14400000"),
        (
            Timestamp.SCHEMA,
            dt.datetime(2001, 9, 9, 1, 46, 40, tzinfo=dt.UTC),
            '"org.apache.kafka.connect.data.Timestamp"',
            "int64",
            "1000000000000",
        ),
    ]
    for schema, value, name, typ, payload in cases:
        expected = f'{{"schema":{{"type":"{typ}","optional":false,"name":{name},"version":1}},"payload":{payload}}}'
        assert jc.from_connect_data("t", schema, value) == expected.encode()
        assert jc.to_connect_data("t", expected.encode()) == SchemaAndValue(schema, value)
    # decimals read back exactly, whatever the format
    assert jc.to_connect_data("t", f'{{"schema":{dec_json},"payload":"AJw="}}'.encode()).value == decimal.Decimal(
        "1.56"
    )
    assert jc.to_connect_data("t", f'{{"schema":{dec_json},"payload":1.56}}'.encode()).value == decimal.Decimal("1.56")
    neg = jc.from_connect_data("t", d, decimal.Decimal("-1.28"))
    assert neg == f'{{"schema":{dec_json},"payload":"gA=="}}'.encode()
    assert jc.to_connect_data("t", neg).value == decimal.Decimal("-1.28")


def test_logical_type_errors(jc: JsonConverter) -> None:
    with pytest.raises(DataError, match="Invalid type for Decimal, expected BigDecimal but was class float"):
        jc.from_connect_data("t", Decimal.schema(2), 1.5)
    with pytest.raises(DataError, match="mismatching scale"):
        jc.from_connect_data("t", Decimal.schema(2), decimal.Decimal("1.5"))
    with pytest.raises(DataError, match="Invalid type for Timestamp, expected Date but was class int"):
        jc.from_connect_data("t", Timestamp.SCHEMA, 5)
    bad = (
        b'{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1},'
        b'"payload":"x"}'
    )
    with pytest.raises(
        DataError, match="Invalid type for Date, underlying representation should be integer but was STRING"
    ):
        jc.to_connect_data("t", bad)


def test_null_handling(jc: JsonConverter, plain: JsonConverter) -> None:
    assert jc.from_connect_data("t", None, None) is None
    assert plain.from_connect_data("t", None, None) is None
    with pytest.raises(
        DataError, match="^Conversion error: null value for field that is required and has no default value$"
    ):
        jc.from_connect_data("t", Schema.STRING_SCHEMA, None)
    assert jc.from_connect_data("t", None, {"a": 1}) == b'{"schema":null,"payload":{"a":1}}'
    # a required field with a default: written as the default, unless replace.null.with.default=false
    schema = SchemaBuilder.struct().field("a", SchemaBuilder.int32().optional().default_value(9).build()).build()
    assert plain.from_connect_data("t", schema, Struct(schema)) == b'{"a":9}'
    keep = json_converter(schemas_enable="false", replace_null_with_default="false")
    assert keep.from_connect_data("t", schema, Struct(schema)) == b'{"a":null}'
    assert plain.to_connect_data("t", None) == SchemaAndValue(None, None)
    assert jc.to_connect_data("t", None) == SchemaAndValue(None, None)


def test_schemaless_values(plain: JsonConverter) -> None:
    value = {"a": 1, "b": [1.5, True, None, "x"], "c": {"d": -2}, "e": b"\x01"}
    assert plain.from_connect_data("t", None, value) == b'{"a":1,"b":[1.5,true,null,"x"],"c":{"d":-2},"e":"AQ=="}'
    assert plain.from_connect_data("t", None, {1: "a"}) == b'[[1,"a"]]'
    assert plain.to_connect_data("t", b'{"a":1,"b":[1.5,true,null,"x"],"c":{"d":-2}}') == SchemaAndValue(
        None, {"a": 1, "b": [1.5, True, None, "x"], "c": {"d": -2}}
    )
    assert plain.to_connect_data("t", b"12") == SchemaAndValue(None, 12)
    assert plain.to_connect_data("t", b"") == SchemaAndValue(None, None)
    with pytest.raises(DataError, match="does not have corresponding schema type"):
        plain.from_connect_data("t", None, decimal.Decimal(1))
    with pytest.raises(DataError, match="Mismatching schema."):
        plain.from_connect_data("t", None, Struct(ALL_SCHEMA))


def test_type_mismatch_errors(jc: JsonConverter) -> None:
    with pytest.raises(DataError, match="Invalid type for INT32: class str"):
        jc.from_connect_data("t", Schema.INT32_SCHEMA, "1")
    with pytest.raises(DataError, match="Invalid type for STRING: class int"):
        jc.from_connect_data("t", Schema.STRING_SCHEMA, 1)
    with pytest.raises(DataError, match="Invalid type for INT8"):
        jc.from_connect_data("t", Schema.INT8_SCHEMA, 1000)
    with pytest.raises(DataError, match="Mismatching schema."):
        jc.from_connect_data("t", ALL_SCHEMA, {"a": 1})


def test_deserialisation_errors(jc: JsonConverter, plain: JsonConverter) -> None:
    for bad in (b"not json", b"{", b"123abc", b"NaN", b"\xff"):
        with pytest.raises(DataError) as info:
            plain.to_connect_data("t", bad)
        assert str(info.value) == DESERIALIZE_ERROR
    assert DESERIALIZE_ERROR == "Converting byte[] to Kafka Connect data failed due to serialization error: "
    for bad in (b'"foo"', b'{"schema":null}', b'{"schema":null,"payload":1,"x":2}', b"", b'{"payload":1,"x":2}'):
        with pytest.raises(DataError) as info:
            jc.to_connect_data("t", bad)
        assert str(info.value) == ENVELOPE_ERROR
    assert ENVELOPE_ERROR == (
        'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional '
        "fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter "
        "configuration."
    )
    with pytest.raises(DataError, match="^Unknown schema type: nope$"):
        jc.to_connect_data("t", b'{"schema":{"type":"nope"},"payload":1}')
    with pytest.raises(DataError, match="^Schema must contain 'type' field$"):
        jc.to_connect_data("t", b'{"schema":{},"payload":1}')
    with pytest.raises(DataError, match="^Invalid null value for required INT32 field$"):
        jc.to_connect_data("t", b'{"schema":{"type":"int32","optional":false},"payload":null}')
    with pytest.raises(DataError, match="^Invalid bytes field$"):
        jc.to_connect_data("t", b'{"schema":{"type":"bytes","optional":false},"payload":"!!"}')
    with pytest.raises(DataError, match="^Structs should be encoded as JSON objects, but found ARRAY$"):
        jc.to_connect_data("t", b'{"schema":{"type":"struct","fields":[]},"payload":[]}')


def test_envelope_with_spaces_and_other_key_order(jc: JsonConverter) -> None:
    text = b'{ "payload" : "x", "schema" : {"optional": true, "type": "string"} }'
    assert jc.to_connect_data("t", text) == SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, "x")
    assert jc.to_connect_data("t", b'{"schema":null,"payload":{"k":[1]}}') == SchemaAndValue(None, {"k": [1]})


def test_payload_conversion_with_schema(jc: JsonConverter) -> None:
    def read(schema_json: str, payload: str):
        return jc.to_connect_data("t", f'{{"schema":{schema_json},"payload":{payload}}}'.encode())

    assert read('{"type":"int8","optional":false}', "300").value == 44  # (byte) wrap, as Java
    assert read('{"type":"double","optional":false}', "2").value == 2.0
    assert read('{"type":"int64","optional":false}', "1.9").value == 1
    assert read('{"type":"string","optional":true,"default":"d"}', "null").value == "d"
    assert read('{"type":"bytes","optional":false}', '"AAEC"').value == b"\x00\x01\x02"
    r = read(
        '{"type":"struct","fields":[{"type":"int32","optional":true,"default":3,"field":"a"},'
        '{"type":"string","optional":true,"field":"b"}],"optional":false,"name":"S"}',
        '{"b":"x"}',
    )
    assert r.schema.name == "S" and r.value.get("a") == 3 and r.value.get("b") == "x"
    r = read(
        '{"type":"map","keys":{"type":"int64","optional":false},"values":{"type":"boolean","optional":false},'
        '"optional":false}',
        "[[1,true],[2,false]]",
    )
    assert r.value == {1: True, 2: False}
    with pytest.raises(DataError, match="Found invalid map entry, expected length 2 but found :1"):
        read(
            '{"type":"map","keys":{"type":"int64","optional":false},"values":{"type":"int64","optional":false}}',
            "[[1]]",
        )
    with pytest.raises(DataError, match="Maps with string fields should be encoded as JSON objects, but found ARRAY"):
        read(
            '{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int64","optional":false}}', "[]"
        )


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (Schema.STRING_SCHEMA, "round"),
        (Schema.OPTIONAL_INT64_SCHEMA, None),
        (Schema.FLOAT64_SCHEMA, 0.1),
        (Schema.FLOAT64_SCHEMA, -1.5e300),
        (
            SchemaBuilder.array(SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_BYTES_SCHEMA).build()).build(),
            [{"a": b"x", "b": None}, {}],
        ),
        (SchemaBuilder.string().default_value("dflt").doc("doc").build(), "v"),
        (Decimal.schema(5), decimal.Decimal("-123.45678")),
        (Timestamp.SCHEMA, dt.datetime(1969, 7, 20, 20, 17, 40, tzinfo=dt.UTC)),
    ],
)
def test_round_trip(jc: JsonConverter, schema, value) -> None:
    data = jc.from_connect_data("t", schema, value)
    assert jc.to_connect_data("t", data) == SchemaAndValue(schema, value)


def test_small_schema_cache_still_converts() -> None:
    c = json_converter(schemas_cache_size="1")
    for _ in range(2):
        for schema, value in ((Schema.STRING_SCHEMA, "a"), (Schema.INT32_SCHEMA, 1), (ALL_SCHEMA, _all_value())):
            assert c.to_connect_data("t", c.from_connect_data("t", schema, value)) == SchemaAndValue(schema, value)


def test_json_converter_config() -> None:
    cd = JsonConverter().config()
    assert cd.names() == [
        "converter.type",
        "schemas.enable",
        "schemas.cache.size",
        "schema.content",
        "decimal.format",
        "replace.null.with.default",
    ]
    keys = cd.config_keys()
    assert keys["schemas.enable"].type is ConfigType.BOOLEAN and keys["schemas.enable"].default_value is True
    assert keys["schemas.cache.size"].default_value == 1000
    assert keys["decimal.format"].default_value == "BASE64"
    assert cd.groups() == ["Schemas", "Serialization"]
    with pytest.raises(ConfigError, match=r"String must be one of \(case insensitive\): BASE64, NUMERIC"):
        json_converter(decimal_format="hex")
    with pytest.raises(ConfigError, match="Expected value to be either true or false"):
        json_converter(schemas_enable="maybe")
    # booleans may arrive typed, and the header-converter form of configure works
    c = JsonConverter()
    c.configure({"schemas.enable": False})
    assert c.from_connect_header("t", "h", Schema.INT32_SCHEMA, 5) == b"5"
    assert c.to_connect_header("t", "h", b"5") == SchemaAndValue(None, 5)


# -- StringConverter --------------------------------------------------------------------


def test_string_converter() -> None:
    c = StringConverter()
    c.configure({}, False)
    assert c.from_connect_data("t", Schema.STRING_SCHEMA, "h\u00e9") == "h\u00e9".encode()
    assert c.from_connect_data("t", None, None) is None
    assert c.from_connect_data("t", Schema.INT32_SCHEMA, 42) == b"42"
    assert c.from_connect_data("t", None, 1e10) == b"1.0E10"
    assert c.from_connect_data("t", None, True) == b"true"
    assert c.from_connect_data("t", None, {"a": [1, None]}) == b"{a=[1, null]}"
    assert c.to_connect_data("t", b"abc") == SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, "abc")
    assert c.to_connect_data("t", None) == SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, None)
    assert c.to_connect_data("t", b"\xff").value == "\ufffd"
    assert c.config().names() == ["converter.type", "converter.encoding"]
    assert c.from_connect_header("t", "h", None, "x") == b"x"


@pytest.mark.parametrize(
    ("configs", "encoded"),
    [
        ({"converter.encoding": "ISO-8859-1"}, b"\xe9"),
        ({"encoding": "latin-1"}, b"\xe9"),
        ({"converter.encoding": "UTF8"}, b"\xc3\xa9"),
        ({"converter.encoding": "UTF-16"}, b"\xfe\xff\x00\xe9"),
        ({"converter.encoding": "US-ASCII"}, b"?"),
    ],
)
def test_string_converter_encodings(configs, encoded) -> None:
    c = StringConverter()
    c.configure(configs, True)
    assert c.from_connect_data("t", None, "\u00e9") == encoded
    if encoded != b"?":
        assert c.to_connect_data("t", encoded).value == "\u00e9"


def test_string_converter_unknown_encoding() -> None:
    with pytest.raises(ConfigError, match="Unsupported encoding"):
        StringConverter().configure({"converter.encoding": "no-such-charset"}, False)


# -- ByteArrayConverter -----------------------------------------------------------------


def test_byte_array_converter() -> None:
    c = ByteArrayConverter()
    c.configure({}, False)
    assert c.from_connect_data("t", Schema.BYTES_SCHEMA, b"\x00x") == b"\x00x"
    assert c.from_connect_data("t", None, bytearray(b"ab")) == b"ab"
    assert c.from_connect_data("t", Schema.OPTIONAL_BYTES_SCHEMA, None) is None
    assert c.to_connect_data("t", b"z") == SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, b"z")
    assert c.to_connect_data("t", None) == SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, None)
    with pytest.raises(DataError, match="^Invalid schema type for ByteArrayConverter: STRING$"):
        c.from_connect_data("t", Schema.STRING_SCHEMA, b"x")
    with pytest.raises(DataError, match="ByteArrayConverter is not compatible with objects of type"):
        c.from_connect_data("t", None, "text")


# -- SimpleHeaderConverter --------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "value", "encoded", "parsed"),
    [
        (Schema.STRING_SCHEMA, "foo", b"foo", SchemaAndValue(Schema.STRING_SCHEMA, "foo")),
        (Schema.STRING_SCHEMA, "", b"", SchemaAndValue(Schema.STRING_SCHEMA, "")),
        (Schema.INT32_SCHEMA, 42, b"42", SchemaAndValue(Schema.INT8_SCHEMA, 42)),
        (Schema.INT64_SCHEMA, 300, b"300", SchemaAndValue(Schema.INT16_SCHEMA, 300)),
        (Schema.INT64_SCHEMA, 2**40, b"1099511627776", SchemaAndValue(Schema.INT64_SCHEMA, 2**40)),
        (Schema.BOOLEAN_SCHEMA, True, b"true", SchemaAndValue(Schema.BOOLEAN_SCHEMA, True)),
        # Kafka's Values.parseString: a short decimal reads back as FLOAT32
        (Schema.FLOAT64_SCHEMA, 1.5, b"1.5", SchemaAndValue(Schema.FLOAT32_SCHEMA, 1.5)),
        (None, None, None, SchemaAndValue(None, None)),
    ],
)
def test_simple_header_converter(schema, value, encoded, parsed) -> None:
    c = SimpleHeaderConverter()
    c.configure({})
    assert c.from_connect_header("t", "h", schema, value) == encoded
    assert c.to_connect_header("t", "h", encoded) == parsed


def test_simple_header_converter_composites() -> None:
    c = SimpleHeaderConverter()
    assert c.from_connect_header("t", "h", None, ["a", 1, None]) == b'["a",1,null]'
    assert c.from_connect_header("t", "h", None, {"k": 'v"q'}) == b'{"k":"v\\"q"}'
    assert c.from_connect_header("t", "h", Schema.FLOAT32_SCHEMA, 1.100000023841858) == b"1.1"
    assert c.from_connect_header("t", "h", Date.SCHEMA, dt.date(2024, 1, 31)) == b"2024-01-31"
    assert c.from_connect_header("t", "h", Timestamp.SCHEMA, dt.datetime(2024, 1, 31, 13, 45)) == (
        b"2024-01-31T13:45:00.000Z"
    )
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    assert c.from_connect_header("t", "h", schema, Struct(schema).put("a", 1)) == b'{"a":1}'
    int8_array = SchemaBuilder.array(Schema.INT8_SCHEMA).build()
    assert c.to_connect_header("t", "h", b"[1,2]") == SchemaAndValue(int8_array, [1, 2])
    assert c.to_connect_header("t", "h", b"[1,") == SchemaAndValue(Schema.STRING_SCHEMA, "[1,")


# -- batch forms: the same result as the per-record methods ------------------------------

BATCH_CASES = [
    (Schema.STRING_SCHEMA, "plain"),
    (Schema.OPTIONAL_STRING_SCHEMA, None),
    (None, None),
    (Schema.STRING_SCHEMA, "ünïcødé \U0001f600"),
    (Schema.INT64_SCHEMA, 42),
    (Schema.FLOAT64_SCHEMA, 0.1),
    (SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(), {"a": 1}),
    (Decimal.schema(2), decimal.Decimal("1.25")),
]


@pytest.mark.parametrize(
    "converter",
    [json_converter(), json_converter(schemas_enable="false"), StringConverter(), ByteArrayConverter()],
    ids=["json", "json-schemaless", "string", "bytearray"],
)
def test_batch_forms_equal_the_per_record_methods(converter) -> None:
    if isinstance(converter, StringConverter):
        converter.configure({}, False)
    if isinstance(converter, ByteArrayConverter):
        cases = [(Schema.BYTES_SCHEMA, b"\x00\xff"), (None, None), (Schema.OPTIONAL_BYTES_SCHEMA, b"")]
    else:
        cases = BATCH_CASES
    schemas, values = [s for s, _ in cases], [v for _, v in cases]
    encoded = converter.from_connect_batch("t", schemas, values)
    assert encoded == [converter.from_connect_data("t", s, v) for s, v in cases]
    decoded = converter.to_connect_batch(
        "t", [*encoded, b"\xff not utf-8" if isinstance(converter, StringConverter) else None]
    )
    expected = [converter.to_connect_data("t", e) for e in encoded]
    if isinstance(converter, StringConverter):
        expected.append(converter.to_connect_data("t", b"\xff not utf-8"))
    else:
        expected.append(converter.to_connect_data("t", None))
    assert decoded is not None
    assert [SchemaAndValue(s, v) for s, v in zip(*decoded, strict=True)] == expected


def test_batch_forms_raise_the_per_record_errors(jc: JsonConverter, plain: JsonConverter) -> None:
    with pytest.raises(DataError, match="Invalid type for STRING"):
        plain.from_connect_batch("t", [Schema.STRING_SCHEMA, Schema.STRING_SCHEMA], ["ok", 5])
    with pytest.raises(DataError, match=re.escape(DESERIALIZE_ERROR)):
        plain.to_connect_batch("t", [b'"ok"', b"{not json"])
    with pytest.raises(DataError):
        jc.to_connect_batch("t", [b'"no envelope"'])


def test_schema_content_applies_one_schema_to_bare_payloads() -> None:
    schema_json = '{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false}'
    c = json_converter(schema_content=schema_json)
    result = c.to_connect_data("t", b'{"id": 7}')
    assert result.schema.type.value == "struct" and result.value.get("id") == 7
    # an envelope's own schema is ignored; its payload is read with the configured one
    enveloped = c.to_connect_data("t", b'{"schema": {"type": "string"}, "payload": {"id": 8}}')
    assert enveloped.schema == result.schema and enveloped.value.get("id") == 8
    assert c.to_connect_batch("t", [b'{"id": 1}'])[1][0].get("id") == 1
    with pytest.raises(ConfigError, match="schema.content"):
        json_converter(schema_content="{not json")


def test_json_lone_surrogates_are_written_as_jackson_escapes() -> None:
    """A string with an unpaired UTF-16 surrogate (JSON's "\\ud800" decodes to one) is
    written as Jackson writes it, an escape, and reads back as the same string."""
    conv = JsonConverter()
    conv.configure({"schemas.enable": "false"}, is_key=False)
    text = "a\ud800b \U0001f600 \udfff"
    assert conv.from_connect_data("t", Schema.STRING_SCHEMA, text) == b'"a\\uD800b \\uD83D\\uDE00 \\uDFFF"'
    batch = conv.from_connect_batch("t", [Schema.STRING_SCHEMA, None], ["ok", ["\ud801"]])
    assert batch == [b'"ok"', b'["\\uD801"]']
    with pytest.raises(DataError, match=re.escape(DESERIALIZE_ERROR)):  # Jackson refuses such a key
        conv.from_connect_data("t", None, {"k\ud801": 1})
    assert conv.to_connect_data("t", conv.from_connect_data("t", Schema.STRING_SCHEMA, text)).value == text
