"""SetSchemaMetadata$Key / SetSchemaMetadata$Value."""

from __future__ import annotations

import decimal
from typing import Any

import pytest

from sluice.api.data import Decimal, Schema, SchemaBuilder, Struct
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import SinkRecord
from sluice.transforms.set_schema_metadata import SetSchemaMetadataKey, SetSchemaMetadataValue


def value_xform(**configs: Any) -> SetSchemaMetadataValue:
    xform = SetSchemaMetadataValue()
    xform.configure(configs)
    return xform


def value_record(schema: Schema | None, value: Any) -> SinkRecord:
    return SinkRecord("", 0, None, None, schema, value, 0)


EMPTY_STRUCT = SchemaBuilder.struct().build()


def test_schema_name_update() -> None:
    assert value_xform(**{"schema.name": "foo"}).apply(value_record(EMPTY_STRUCT, None)).value_schema.name == "foo"


def test_schema_version_update() -> None:
    assert value_xform(**{"schema.version": 42}).apply(value_record(EMPTY_STRUCT, None)).value_schema.version == 42


def test_schema_name_and_version_update() -> None:
    out = value_xform(**{"schema.name": "foo", "schema.version": "42"}).apply(value_record(EMPTY_STRUCT, None))
    assert (out.value_schema.name, out.value_schema.version) == ("foo", 42)


def assert_matching_schema(value: Struct, schema: Schema) -> None:
    assert value.schema is schema
    for field in schema.fields():
        assert value.schema.field(field.name) is field


def test_name_and_version_update_with_struct() -> None:
    schema = (
        SchemaBuilder.struct().name("my.orig.SchemaDefn")
        .field("f1", Schema.STRING_SCHEMA).field("f2", Schema.INT32_SCHEMA).build()
    )  # fmt: skip
    value = Struct(schema).put("f1", "value1").put("f2", 1)
    out = value_xform(**{"schema.name": "foo", "schema.version": "42"}).apply(value_record(schema, value))
    assert (out.value_schema.name, out.value_schema.version) == ("foo", 42)
    assert_matching_schema(out.value, out.value_schema)
    assert (out.value.get("f1"), out.value.get("f2")) == ("value1", 1)


@pytest.mark.parametrize(("replace", "expected"), [(False, None), (True, "default")])
def test_struct_with_null_field(replace: bool, expected: str | None) -> None:
    schema = (
        SchemaBuilder.struct().name("my.orig.SchemaDefn")
        .field("f1", SchemaBuilder.string().default_value("default").optional().build())
        .field("f2", Schema.INT32_SCHEMA).build()
    )  # fmt: skip
    xform = value_xform(**{"schema.name": "foo", "schema.version": "42", "replace.null.with.default": replace})
    out = xform.apply(value_record(schema, Struct(schema).put("f1", None).put("f2", 1)))
    assert_matching_schema(out.value, out.value_schema)
    assert out.value.get_without_default("f1") == expected


def test_everything_else_of_the_schema_is_kept() -> None:
    builder = (
        SchemaBuilder.struct().name("old").version(1).doc("the doc").parameter("p", "v").optional()
        .field("amount", Decimal.schema(2)).field("n", Schema.OPTIONAL_INT64_SCHEMA)
    )  # fmt: skip
    default = Struct(builder.build()).put("amount", decimal.Decimal("1.00"))
    schema = builder.default_value(default).build()
    value = Struct(schema).put("amount", decimal.Decimal("12.34"))
    out = value_xform(**{"schema.name": "new"}).apply(value_record(schema, value))
    updated = out.value_schema
    assert (updated.name, updated.version, updated.doc, updated.parameters) == ("new", 1, "the doc", {"p": "v"})
    assert updated.optional and updated.default_value is default
    assert Decimal.scale(updated.field("amount").schema) == 2
    assert out.value.get("amount") == decimal.Decimal("12.34")


def test_non_struct_schemas_fail_as_in_kafka() -> None:
    # Kafka 4.x builds the new schema with schema.fields(), which refuses non-struct schemas.
    with pytest.raises(DataError, match="Cannot list fields on non-struct type"):
        value_xform(**{"schema.name": "foo"}).apply(value_record(Decimal.schema(2), decimal.Decimal("1.23")))
    with pytest.raises(DataError, match="Cannot list fields on non-struct type"):
        value_xform(**{"schema.name": "foo"}).apply(value_record(Schema.OPTIONAL_INT32_SCHEMA, None))


def test_value_schema_required() -> None:
    with pytest.raises(DataError, match=r"^Schema required for \[updating schema metadata\]$"):
        value_xform(**{"schema.name": "foo"}).apply(value_record(None, 42))


def test_ignore_record_with_null_value_and_schema() -> None:
    record = value_record(None, None)
    assert value_xform(**{"schema.name": "foo"}).apply(record) is record


def test_update_schema_in() -> None:
    xform = value_xform(**{"schema.name": "x"})
    schema = SchemaBuilder.struct().name("a").field("f1", Schema.STRING_SCHEMA).build()
    new_schema = SchemaBuilder.struct().name("b").field("f1", Schema.STRING_SCHEMA).build()
    assert_matching_schema(xform.update_schema_in(Struct(schema).put("f1", "v"), new_schema), new_schema)
    assert xform.update_schema_in(1, Schema.INT32_SCHEMA) == 1
    assert xform.update_schema_in(None, Schema.INT32_SCHEMA) is None


def test_key_variant() -> None:
    schema = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).build()
    xform = SetSchemaMetadataKey()
    xform.configure({"schema.name": "com.example.Key", "schema.version": 3})
    out = xform.apply(SinkRecord("t", 0, schema, Struct(schema).put("id", 1), Schema.STRING_SCHEMA, "v", 0))
    assert (out.key_schema.name, out.key_schema.version) == ("com.example.Key", 3)
    assert out.key.get("id") == 1 and out.key.schema is out.key_schema and out.value == "v"


def test_configs() -> None:
    with pytest.raises(ConfigError, match="^Neither schema name nor version configured$"):
        SetSchemaMetadataValue().configure({})
    with pytest.raises(ConfigError, match="schema.version"):
        SetSchemaMetadataValue().configure({"schema.version": "x"})
    assert SetSchemaMetadataValue().config().names() == ["schema.name", "schema.version", "replace.null.with.default"]
