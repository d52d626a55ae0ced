"""The Connect data model: schemas, the builder, structs, logical types, Java rendering."""

from __future__ import annotations

import datetime as dt
import decimal
import pickle

import pytest

from sluice.api.data import (
    Date,
    Decimal,
    Field,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
    java_double_string,
    java_float_string,
    java_string,
)
from sluice.api.errors import DataError


def _person() -> Schema:
    return (
        SchemaBuilder.struct()
        .name("com.example.Person")
        .version(2)
        .doc("a person")
        .field("id", Schema.INT64_SCHEMA)
        .field("name", Schema.OPTIONAL_STRING_SCHEMA)
        .field("age", SchemaBuilder.int32().optional().default_value(18).build())
        .build()
    )


def test_primitive_schema_constants() -> None:
    assert Schema.STRING_SCHEMA.type is Type.STRING and not Schema.STRING_SCHEMA.optional
    assert Schema.OPTIONAL_BYTES_SCHEMA.type is Type.BYTES and Schema.OPTIONAL_BYTES_SCHEMA.is_optional
    assert Schema.FLOAT32_SCHEMA.type.value == "float" and Schema.FLOAT64_SCHEMA.type.value == "double"
    assert Type.STRING.is_primitive and not Type.STRUCT.is_primitive
    assert repr(Schema.INT32_SCHEMA) == "Schema{INT32}"


def test_builder_and_equality() -> None:
    a, b = _person(), _person()
    assert a == b and hash(a) == hash(b)
    assert a.name == "com.example.Person" and a.version == 2 and a.doc == "a person"
    assert [f.name for f in a.fields()] == ["id", "name", "age"]
    assert a.field("age") == Field("age", 2, a.field("age").schema)
    assert a.field("missing") is None
    assert a != SchemaBuilder.struct().name("com.example.Person").field("id", Schema.INT64_SCHEMA).build()
    assert repr(a) == "Schema{com.example.Person:STRUCT}"
    assert SchemaBuilder.string().optional().build() == Schema.OPTIONAL_STRING_SCHEMA
    assert SchemaBuilder.string().parameter("k", "v").build() != Schema.STRING_SCHEMA
    m = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build()
    assert m.key_schema() == Schema.STRING_SCHEMA and m.value_schema() == Schema.INT32_SCHEMA
    arr = SchemaBuilder.array(Schema.BOOLEAN_SCHEMA).schema()
    assert arr.value_schema() == Schema.BOOLEAN_SCHEMA


def test_builder_errors() -> None:
    with pytest.raises(DataError, match="Cannot create field because of field name duplication id"):
        SchemaBuilder.struct().field("id", Schema.INT8_SCHEMA).field("id", Schema.INT8_SCHEMA)
    with pytest.raises(DataError, match="Cannot create fields on type STRING"):
        SchemaBuilder.string().field("x", Schema.INT8_SCHEMA)
    with pytest.raises(DataError):
        SchemaBuilder.int8().default_value(1000)
    with pytest.raises(DataError, match="Cannot look up fields on non-struct type"):
        Schema.INT8_SCHEMA.field("x")
    with pytest.raises(DataError, match="Cannot look up key schema on non-map type"):
        Schema.INT8_SCHEMA.key_schema()


def test_struct_put_get_validate() -> None:
    s = Struct(_person()).put("id", 7)
    assert s.get("id") == 7 and s.get("name") is None
    assert s.get("age") == 18 and s.get_without_default("age") is None
    s.validate()
    assert s == Struct(_person()).put("id", 7)
    assert s != Struct(_person()).put("id", 8)
    assert repr(s) == "Struct{id=7}"
    s.put("name", "Ann").put("age", 30)
    assert str(s) == "Struct{id=7,name=Ann,age=30}"
    assert pickle.loads(pickle.dumps(s)) == s


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("id", "x", 'Invalid Java object for schema with type INT64: class str for field: "id"'),
        ("id", None, 'Invalid value: null used for required field: "id", schema type: INT64'),
        ("id", True, "Invalid Java object for schema with type INT64"),
        ("id", 2**63, "Invalid Java object for schema with type INT64"),
        ("name", 5, 'Invalid Java object for schema with type STRING: class int for field: "name"'),
    ],
)
def test_struct_put_validation(field, value, message) -> None:
    with pytest.raises(DataError) as info:
        Struct(_person()).put(field, value)
    assert message in str(info.value)


def test_struct_validation_misc() -> None:
    with pytest.raises(DataError, match='Invalid value: null used for required field: "id", schema type: INT64'):
        Struct(_person()).validate()
    with pytest.raises(DataError, match="nope is not a valid field name"):
        Struct(_person()).put("nope", 1)
    with pytest.raises(DataError, match="Not a struct schema"):
        Struct(Schema.STRING_SCHEMA)
    outer = SchemaBuilder.struct().field("p", _person()).build()
    with pytest.raises(DataError, match="Struct schemas do not match."):
        Struct(outer).put("p", Struct(SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).build()).put("id", 1))
    with pytest.raises(DataError, match='required field: "id"'):
        Struct(outer).put("p", Struct(_person()))  # the nested struct is validated too
    lists = SchemaBuilder.struct().field("xs", SchemaBuilder.array(Schema.INT8_SCHEMA).build()).build()
    with pytest.raises(DataError, match="Invalid Java object for schema with type INT8"):
        Struct(lists).put("xs", [1, 2, 300])
    with pytest.raises(DataError, match="Invalid value: null used for required value, schema type: INT8"):
        Struct(lists).put("xs", [None])


def test_validate_value_numbers_and_bytes() -> None:
    Schema.validate_value(Schema.INT8_SCHEMA, -128)
    Schema.validate_value(Schema.FLOAT64_SCHEMA, 1.5)
    Schema.validate_value(Schema.BYTES_SCHEMA, b"x")
    Schema.validate_value(Schema.BYTES_SCHEMA, bytearray(b"x"))
    Schema.validate_value(None, object())
    with pytest.raises(DataError):
        Schema.validate_value(Schema.FLOAT64_SCHEMA, 1)
    with pytest.raises(DataError):
        Schema.validate_value(Schema.BOOLEAN_SCHEMA, 1)


def test_logical_types() -> None:
    d = Decimal.schema(2)
    assert d.name == "org.apache.kafka.connect.data.Decimal" and d.version == 1 and d.parameters == {"scale": "2"}
    assert d.type is Type.BYTES
    assert Decimal.from_logical(d, decimal.Decimal("1.23")) == b"\x7b"
    assert Decimal.from_logical(d, decimal.Decimal("-1.28")) == b"\x80"
    assert Decimal.from_logical(d, decimal.Decimal("1.28")) == b"\x00\x80"
    assert Decimal.to_logical(d, b"\xff\x38") == decimal.Decimal("-2.00")
    with pytest.raises(DataError, match="Schema has scale 2, value has scale 1"):
        Decimal.from_logical(d, decimal.Decimal("1.5"))
    assert Date.SCHEMA.name == "org.apache.kafka.connect.data.Date" and Date.SCHEMA.type is Type.INT32
    assert Date.from_logical(Date.SCHEMA, dt.date(1970, 1, 2)) == 1
    assert Date.to_logical(Date.SCHEMA, -1) == dt.date(1969, 12, 31)
    with pytest.raises(DataError, match="should not have any time fields"):
        Date.from_logical(Date.SCHEMA, dt.datetime(1970, 1, 2, 1))
    assert Time.SCHEMA.type is Type.INT32 and Time.SCHEMA.version == 1
    assert Time.from_logical(Time.SCHEMA, dt.time(1, 2, 3, 4000)) == 3723004
    assert Time.to_logical(Time.SCHEMA, 3723004) == dt.time(1, 2, 3, 4000)
    assert Timestamp.SCHEMA.type is Type.INT64 and Timestamp.SCHEMA.name == "org.apache.kafka.connect.data.Timestamp"
    when = dt.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=dt.UTC)
    assert Timestamp.from_logical(Timestamp.SCHEMA, when) == 1704164645006
    assert Timestamp.from_logical(Timestamp.SCHEMA, when.replace(tzinfo=None)) == 1704164645006
    assert Timestamp.to_logical(Timestamp.SCHEMA, 1704164645006) == when
    with pytest.raises(DataError, match="schema does not match"):
        Timestamp.from_logical(Schema.INT64_SCHEMA, when)
    # Logical values are validated by class.
    Schema.validate_value(d, decimal.Decimal("1.00"))
    with pytest.raises(DataError, match='schema "org.apache.kafka.connect.data.Decimal" with type BYTES'):
        Schema.validate_value(d, b"\x01")
    with pytest.raises(DataError):
        Schema.validate_value(Timestamp.SCHEMA, 5)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "null"),
        ("text", "text"),
        (True, "true"),
        (False, "false"),
        (12, "12"),
        (1.0, "1.0"),
        (1.5, "1.5"),
        (1e10, "1.0E10"),
        (1e-5, "1.0E-5"),
        (0.001, "0.001"),
        (1234567.0, "1234567.0"),
        (12345678.9, "1.23456789E7"),
        (-0.0, "-0.0"),
        (float("nan"), "NaN"),
        (float("-inf"), "-Infinity"),
        ({"a": 1, "b": None}, "{a=1, b=null}"),
        (["x", 2, [True]], "[x, 2, [true]]"),
        (decimal.Decimal("1.50"), "1.50"),
        (decimal.Decimal("1E-7"), "1E-7"),
        (dt.datetime(1970, 1, 1, tzinfo=dt.UTC), "Thu Jan 01 00:00:00 UTC 1970"),
        (dt.date(2024, 2, 29), "Thu Feb 29 00:00:00 UTC 2024"),
    ],
)
def test_java_string(value, expected) -> None:
    assert java_string(value) == expected


def test_java_string_struct_and_nesting() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("b", Schema.OPTIONAL_STRING_SCHEMA).build()
    s = Struct(schema).put("a", 1)
    assert java_string(s) == "Struct{a=1}"
    assert java_string({"k": s, "l": [s]}) == "{k=Struct{a=1}, l=[Struct{a=1}]}"


def test_java_float_forms() -> None:
    assert java_double_string(5e-324) == "4.9E-324"
    assert java_double_string(1.7976931348623157e308) == "1.7976931348623157E308"
    assert java_float_string(1.1) == "1.1"
    assert java_float_string(3.4028234663852886e38) == "3.4028235E38"
    assert java_float_string(1.401298464324817e-45) == "1.4E-45"
    assert java_float_string(16777216.0) == "1.6777216E7"
