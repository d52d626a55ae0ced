"""HoistField$Key / HoistField$Value."""

from __future__ import annotations

from typing import Any

import pytest

from sluice.api.data import Schema, SchemaBuilder, Struct
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import Header, SinkRecord
from sluice.transforms.hoist_field import HoistFieldKey, HoistFieldValue


def key_xform(field: str = "magic") -> HoistFieldKey:
    xform = HoistFieldKey()
    xform.configure({"field": field})
    return xform


def value_xform(field: str = "magic") -> HoistFieldValue:
    xform = HoistFieldValue()
    xform.configure({"field": field})
    return xform


def key_record(schema: Schema | None, key: Any) -> SinkRecord:
    return SinkRecord("test", 0, schema, key, None, None, 0)


def test_schemaless() -> None:
    out = key_xform().apply(key_record(None, 42))
    assert out.key_schema is None and out.key == {"magic": 42}


def test_schemaless_map_is_mutable() -> None:
    out = key_xform().apply(key_record(None, 420))
    out.key["k"] = "v"
    assert out.key == {"magic": 420, "k": "v"}


def test_with_schema() -> None:
    out = key_xform().apply(key_record(Schema.INT32_SCHEMA, 42))
    assert out.key_schema.type.name == "STRUCT"
    assert out.key_schema.fields()[0].name == "magic" and out.key_schema.field("magic").schema is Schema.INT32_SCHEMA
    assert out.key.get("magic") == 42


def test_struct_is_wrapped_as_is() -> None:
    inner = SchemaBuilder.struct().field("a", Schema.STRING_SCHEMA).build()
    value = Struct(inner).put("a", "x")
    record = SinkRecord("t", 1, None, "k", inner, value, 7, 100, "CreateTime", [Header("h", 1)])
    out = value_xform("wrapped").apply(record)
    assert out.value.get("wrapped") is value and out.value_schema.field("wrapped").schema is inner
    assert (out.key, out.kafka_offset, out.timestamp, list(out.headers)) == ("k", 7, 100, [Header("h", 1)])


def test_null_values() -> None:
    assert value_xform().apply(SinkRecord("t", 0, None, None, None, None, 0)).value == {"magic": None}
    out = value_xform().apply(SinkRecord("t", 0, None, None, Schema.OPTIONAL_STRING_SCHEMA, None, 0))
    assert out.value.get("magic") is None and out.value_schema.field("magic").schema == Schema.OPTIONAL_STRING_SCHEMA
    with pytest.raises(DataError, match="null used for required field"):
        value_xform().apply(SinkRecord("t", 0, None, None, Schema.STRING_SCHEMA, None, 0))


def test_schema_cache() -> None:
    xform = key_xform()
    first = xform.apply(key_record(Schema.INT32_SCHEMA, 1))
    second = xform.apply(key_record(Schema.INT32_SCHEMA, 2))
    assert first.key_schema is second.key_schema


def test_config() -> None:
    with pytest.raises(ConfigError, match='Missing required configuration "field"'):
        HoistFieldValue().configure({})
    assert HoistFieldValue().config().names() == ["field"]
