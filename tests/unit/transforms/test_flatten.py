"""Flatten$Key / Flatten$Value."""

from __future__ import annotations

import decimal
from typing import Any

import pytest

from sluice.api.data import Decimal, Schema, SchemaBuilder, Struct, Type
from sluice.api.errors import DataError
from sluice.api.records import SourceRecord
from sluice.transforms.flatten import FlattenKey, FlattenValue


def value_xform(**configs: Any) -> FlattenValue:
    xform = FlattenValue()
    xform.configure(configs)
    return xform


def key_xform(**configs: Any) -> FlattenKey:
    xform = FlattenKey()
    xform.configure(configs)
    return xform


def value_record(schema: Schema | None, value: Any) -> SourceRecord:
    return SourceRecord(None, None, "topic", 0, None, None, schema, value)


def test_top_level_struct_required() -> None:
    with pytest.raises(DataError, match=r"Only Struct objects supported for \[flattening\], found: int"):
        value_xform().apply(value_record(Schema.INT32_SCHEMA, 42))


def test_top_level_map_required() -> None:
    with pytest.raises(DataError, match=r"Only Map objects supported in absence of schema for \[flattening\]"):
        value_xform().apply(value_record(None, 42))


SUPPORTED = (
    SchemaBuilder.struct()
    .field("int8", Schema.INT8_SCHEMA)
    .field("int16", Schema.INT16_SCHEMA)
    .field("int32", Schema.INT32_SCHEMA)
    .field("int64", Schema.INT64_SCHEMA)
    .field("float32", Schema.FLOAT32_SCHEMA)
    .field("float64", Schema.FLOAT64_SCHEMA)
    .field("boolean", Schema.BOOLEAN_SCHEMA)
    .field("string", Schema.STRING_SCHEMA)
    .field("bytes", Schema.BYTES_SCHEMA)
    .build()
)


def test_nested_struct() -> None:
    one = SchemaBuilder.struct().field("B", SUPPORTED).build()
    two = SchemaBuilder.struct().field("A", one).build()
    supported = (
        Struct(SUPPORTED).put("int8", 8).put("int16", 16).put("int32", 32).put("int64", 64).put("float32", 32.0)
        .put("float64", 64.0).put("boolean", True).put("string", "stringy").put("bytes", b"bytes")
    )  # fmt: skip
    out = value_xform().apply(value_record(two, Struct(two).put("A", Struct(one).put("B", supported))))
    assert out.value_schema.type is Type.STRUCT
    value = out.value
    assert len(value.schema.fields()) == 9
    assert [f.name for f in value.schema.fields()][:2] == ["A.B.int8", "A.B.int16"]
    assert value.get("A.B.int8") == 8 and value.schema.field("A.B.int8").schema == Schema.INT8_SCHEMA
    assert value.get("A.B.int64") == 64
    assert value.get("A.B.float32") == 32.0
    assert value.get("A.B.boolean") is True
    assert value.get("A.B.string") == "stringy"
    assert value.get("A.B.bytes") == b"bytes"


def test_nested_map_with_delimiter() -> None:
    supported = {"int8": 8, "int64": 64, "float64": 64.0, "boolean": True, "string": "stringy", "bytes": b"bytes"}
    out = value_xform(delimiter="#").apply(value_record(None, {"A": {"B": supported}}))
    assert out.value_schema is None
    assert out.value == {f"A#B#{k}": v for k, v in supported.items()}


def test_optional_field_struct() -> None:
    inner = SchemaBuilder.struct().field("opt_int32", Schema.OPTIONAL_INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("B", inner).build()
    out = value_xform().apply(value_record(schema, Struct(schema).put("B", Struct(inner).put("opt_int32", None))))
    assert out.value.get("B.opt_int32") is None
    assert out.value_schema.field("B.opt_int32").schema == Schema.OPTIONAL_INT32_SCHEMA


def test_optional_struct_with_null_value_flattens_the_schema() -> None:
    schema = SchemaBuilder.struct().optional().field("opt_int32", Schema.OPTIONAL_INT32_SCHEMA).build()
    out = value_xform().apply(value_record(schema, None))
    assert out.value_schema.type is Type.STRUCT and out.value is None


def test_optional_nested_struct() -> None:
    inner = SchemaBuilder.struct().optional().field("opt_int32", Schema.OPTIONAL_INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("B", inner).build()
    out = value_xform().apply(value_record(schema, Struct(schema).put("B", None)))
    assert out.value_schema.type is Type.STRUCT
    assert out.value.get("B.opt_int32") is None


def test_optional_field_map() -> None:
    out = value_xform().apply(value_record(None, {"B": {"opt_int32": None}}))
    assert out.value == {"B.opt_int32": None}


def test_key() -> None:
    record = SourceRecord(None, None, "topic", None, None, {"A": {"B": 12}}, None, None)
    out = key_xform().apply(record)
    assert out.key_schema is None and out.key == {"A.B": 12}


def test_schemaless_array_is_kept() -> None:
    value = {"foo": ["bar", {"baz": {"lfg": "lfg"}}]}
    assert value_xform().apply(value_record(None, value)).value == value


def test_array_with_schema_is_kept() -> None:
    nested = SchemaBuilder.struct().field("lfg", Schema.STRING_SCHEMA).build()
    inner = SchemaBuilder.struct().field("baz", nested).build()
    schema = SchemaBuilder.struct().field("foo", SchemaBuilder.array(inner).doc("durk").build()).build()
    value = Struct(schema).put("foo", [Struct(inner).put("baz", Struct(nested).put("lfg", "lfg"))])
    out = value_xform().apply(value_record(schema, value))
    assert out.value == value
    assert out.value_schema == schema


def test_optional_and_default_values_nested() -> None:
    child_no_default = (
        SchemaBuilder.struct().optional()
        .field("req_field", Schema.STRING_SCHEMA)
        .field("opt_field", SchemaBuilder.string().optional().default_value("child_default").build())
    )  # fmt: skip
    child_default = Struct(child_no_default.build()).put("req_field", "req_default")
    schema = child_no_default.default_value(child_default).build()
    out = value_xform().apply(value_record(schema, Struct(schema)))
    flat = out.value_schema
    assert flat.type is Type.STRUCT and len(flat.fields()) == 2
    assert flat.field("req_field").schema == SchemaBuilder.string().optional().default_value("req_default").build()
    assert flat.field("opt_field").schema == SchemaBuilder.string().optional().default_value("child_default").build()
    assert out.value.get("req_field") == "req_default"
    assert out.value.get_without_default("req_field") is None


def test_nested_struct_default_fills_flattened_defaults() -> None:
    inner_builder = SchemaBuilder.struct().optional().field("x", Schema.INT32_SCHEMA)
    inner_default = Struct(inner_builder.build()).put("x", 5)
    inner = inner_builder.default_value(inner_default).build()
    schema = SchemaBuilder.struct().field("in", inner).build()
    out = value_xform(delimiter="_").apply(value_record(schema, Struct(schema)))
    assert out.value_schema.field("in_x").schema == SchemaBuilder.int32().optional().default_value(5).build()
    # the nested struct is null: its default struct supplies the value, as Struct.get does in Kafka
    assert out.value.get_without_default("in_x") == 5


def test_schema_basics_are_copied_but_not_optionality() -> None:
    schema = SchemaBuilder.struct().name("n").version(1).doc("d").optional().field("a", Schema.INT32_SCHEMA).build()
    out = value_xform().apply(value_record(schema, Struct(schema).put("a", 1)))
    assert (out.value_schema.name, out.value_schema.version, out.value_schema.doc) == ("n", 1, "d")
    assert not out.value_schema.optional


def test_logical_types_are_kept() -> None:
    inner = SchemaBuilder.struct().field("amount", Decimal.schema(2)).build()
    schema = SchemaBuilder.struct().field("in", inner).build()
    value = Struct(schema).put("in", Struct(inner).put("amount", decimal.Decimal("1.25")))
    out = value_xform().apply(value_record(schema, value))
    assert out.value_schema.field("in.amount").schema == Decimal.schema(2)
    assert out.value.get("in.amount") == decimal.Decimal("1.25")


@pytest.mark.parametrize("schema", [None, SchemaBuilder.struct().name("name").version(1).doc("doc")
                                    .field("magic", Schema.OPTIONAL_INT64_SCHEMA).build()])  # fmt: skip
def test_tombstone_passes_through(schema: Schema | None) -> None:
    record = value_record(schema, None)
    out = value_xform().apply(record)
    assert out.value is None and out.value_schema == schema


def test_map_with_null_fields_keeps_order() -> None:
    value = {"firstNull": None, "firstNonNull": "nonNull", "secondNull": None, "secondNonNull": "alsoNonNull",
             "thirdNonNull": None}  # fmt: skip
    out = value_xform().apply(value_record(None, value))
    assert out.value == value and list(out.value) == list(value)


def test_struct_with_null_fields() -> None:
    names = ("firstNull", "firstNonNull", "secondNull", "secondNonNull", "thirdNonNull")
    builder = SchemaBuilder.struct()
    for name in names:
        builder.field(name, Schema.OPTIONAL_STRING_SCHEMA)
    schema = builder.build()
    value = Struct(schema).put("firstNonNull", "nonNull").put("secondNonNull", "alsoNonNull")
    assert value_xform().apply(value_record(schema, value)).value == value


def test_map_fields_with_schema_are_refused() -> None:
    map_schema = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build()
    schema = SchemaBuilder.struct().field("m", map_schema).build()
    with pytest.raises(DataError, match=r"does not support MAP for record with schemas \(for field m\)"):
        value_xform().apply(value_record(schema, Struct(schema).put("m", {})))


def test_schemaless_unsupported_values() -> None:
    with pytest.raises(DataError, match="not supported by Connect's data API"):
        value_xform().apply(value_record(None, {"a": decimal.Decimal(1)}))
    inner = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataError, match=r"does not support class .*Struct for record without schemas \(for field a\)"):
        value_xform().apply(value_record(None, {"a": Struct(inner).put("x", 1)}))


def test_schema_cache_reuses_output_schema() -> None:
    schema = SchemaBuilder.struct().field("a", SchemaBuilder.struct().field("b", Schema.INT32_SCHEMA).build()).build()
    inner = schema.field("a").schema
    xform = value_xform()
    first = xform.apply(value_record(schema, Struct(schema).put("a", Struct(inner).put("b", 1))))
    second = xform.apply(value_record(schema, Struct(schema).put("a", Struct(inner).put("b", 2))))
    assert first.value_schema is second.value_schema
    assert second.value.get("a.b") == 2


def test_config() -> None:
    config = FlattenValue().config()
    assert config.names() == ["delimiter"]
    assert config.config_key("delimiter").default_value == "."
