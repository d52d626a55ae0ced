"""ExtractField$Key / ExtractField$Value."""

from __future__ import annotations

from typing import Any

import pytest

from sluice.api.data import Schema, SchemaBuilder, Struct
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import SinkRecord
from sluice.transforms.extract_field import ExtractFieldKey, ExtractFieldValue


def key_xform(**configs: Any) -> ExtractFieldKey:
    xform = ExtractFieldKey()
    xform.configure(configs)
    return xform


def value_xform(**configs: Any) -> ExtractFieldValue:
    xform = ExtractFieldValue()
    xform.configure(configs)
    return xform


def key_record(schema: Schema | None, key: Any) -> SinkRecord:
    return SinkRecord("test", 0, schema, key, None, None, 0)


def test_schemaless() -> None:
    out = key_xform(field="magic").apply(key_record(None, {"magic": 42}))
    assert out.key_schema is None and out.key == 42


def test_schemaless_nested_path() -> None:
    xform = key_xform(field="magic.foo", **{"field.syntax.version": "v2"})
    out = xform.apply(key_record(None, {"magic": {"foo": 42}}))
    assert out.key_schema is None and out.key == 42


def test_v1_takes_dotted_names_literally() -> None:
    out = key_xform(field="magic.foo").apply(key_record(None, {"magic.foo": 1, "magic": {"foo": 2}}))
    assert out.key == 1


OPTIONAL_STRUCT = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).optional().build()


@pytest.mark.parametrize("schema", [None, OPTIONAL_STRUCT])
def test_null_passes_through(schema: Schema | None) -> None:
    out = key_xform(field="magic").apply(key_record(schema, None))
    assert out.key is None
    assert out.key_schema == (None if schema is None else Schema.INT32_SCHEMA)


def test_with_schema() -> None:
    schema = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).build()
    out = key_xform(field="magic").apply(key_record(schema, Struct(schema).put("magic", 42)))
    assert out.key_schema == Schema.INT32_SCHEMA and out.key == 42


def test_with_schema_nested_path() -> None:
    inner = SchemaBuilder.struct().field("foo", Schema.INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("magic", inner).build()
    xform = key_xform(field="magic.foo", **{"field.syntax.version": "V2"})
    out = xform.apply(key_record(schema, Struct(schema).put("magic", Struct(inner).put("foo", 42))))
    assert out.key_schema == Schema.INT32_SCHEMA and out.key == 42


def test_nested_path_with_backticks() -> None:
    inner = SchemaBuilder.struct().field("b.c", Schema.STRING_SCHEMA).build()
    schema = SchemaBuilder.struct().field("a", inner).build()
    xform = value_xform(field="a.`b.c`", **{"field.syntax.version": "V2"})
    record = SinkRecord("t", 0, None, None, schema, Struct(schema).put("a", Struct(inner).put("b.c", "x")), 0)
    assert xform.apply(record).value == "x"


def test_non_existent_field_schemaless_gives_null() -> None:
    assert key_xform(field="nonexistent").apply(key_record(None, {"magic": 42})).key is None


def test_non_existent_nested_field_schemaless_gives_null() -> None:
    xform = key_xform(field="magic.nonexistent", **{"field.syntax.version": "V2"})
    assert xform.apply(key_record(None, {"magic": {"foo": 42}})).key is None


def test_non_existent_field_with_schema_fails() -> None:
    schema = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).build()
    with pytest.raises(ValueError, match="^Unknown field: nonexistent$"):
        key_xform(field="nonexistent").apply(key_record(schema, Struct(schema).put("magic", 42)))


def test_non_existent_nested_field_with_schema_fails() -> None:
    inner = SchemaBuilder.struct().field("foo", Schema.INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("magic", inner).build()
    xform = key_xform(field="magic.nonexistent", **{"field.syntax.version": "V2"})
    with pytest.raises(ValueError, match="^Unknown field: magic.nonexistent$"):
        xform.apply(key_record(schema, Struct(schema).put("magic", Struct(inner).put("foo", 42))))


@pytest.mark.parametrize(("replace", "expected"), [(False, None), (True, 42)])
def test_unset_optional_key_field(replace: bool, expected: int | None) -> None:
    field_schema = SchemaBuilder.int32().optional().default_value(42).build()
    schema = SchemaBuilder.struct().field("magic", field_schema).build()
    xform = key_xform(field="magic", **{"replace.null.with.default": replace})
    out = xform.apply(key_record(schema, Struct(schema).put("magic", None)))
    assert out.key_schema == field_schema and out.key == expected


@pytest.mark.parametrize(("replace", "expected"), [(False, None), (True, 42)])
def test_unset_optional_value_field(replace: bool, expected: int | None) -> None:
    field_schema = SchemaBuilder.int32().optional().default_value(42).build()
    schema = SchemaBuilder.struct().field("magic", field_schema).build()
    xform = value_xform(field="magic", **{"replace.null.with.default": replace})
    record = SinkRecord("t", 0, Schema.STRING_SCHEMA, "k", schema, Struct(schema).put("magic", None), 0)
    out = xform.apply(record)
    assert out.value_schema == field_schema and out.value == expected
    assert out.key == "k" and out.key_schema is Schema.STRING_SCHEMA


def test_requirements() -> None:
    with pytest.raises(DataError, match=r"Only Map objects supported in absence of schema for \[field extraction\]"):
        key_xform(field="a").apply(key_record(None, 42))
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataError, match=r"Only Struct objects supported for \[field extraction\], found: int"):
        key_xform(field="a").apply(key_record(schema, 42))


def test_configs() -> None:
    with pytest.raises(ConfigError, match='Missing required configuration "field"'):
        ExtractFieldValue().configure({})
    with pytest.raises(ConfigError, match="field.syntax.version"):
        ExtractFieldValue().configure({"field": "a", "field.syntax.version": "V3"})
    with pytest.raises(ConfigError, match="Incomplete backtick pair"):
        ExtractFieldValue().configure({"field": "`a.b", "field.syntax.version": "V2"})
    config = ExtractFieldValue().config()
    assert config.names() == ["field", "replace.null.with.default", "field.syntax.version"]
    assert config.config_key("field.syntax.version").default_value == "V1"
