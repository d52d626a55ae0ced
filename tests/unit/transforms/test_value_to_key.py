"""ValueToKey."""

from __future__ import annotations

from typing import Any

import pytest

from sluice.api.data import Schema, SchemaBuilder, Struct
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import Header, SinkRecord
from sluice.transforms.value_to_key import ValueToKey


def xform(fields: str = "a,b", **configs: Any) -> ValueToKey:
    transform = ValueToKey()
    transform.configure({"fields": fields, **configs})
    return transform


def record(schema: Schema | None, value: Any) -> SinkRecord:
    return SinkRecord("", 0, None, None, schema, value, 0)


def test_schemaless() -> None:
    out = xform().apply(record(None, {"a": 1, "b": 2, "c": 3}))
    assert out.key_schema is None and out.key == {"a": 1, "b": 2}
    assert out.value == {"a": 1, "b": 2, "c": 3}


def test_schemaless_missing_field_is_null() -> None:
    assert xform("a,z").apply(record(None, {"a": 1})).key == {"a": 1, "z": None}


def test_with_schema() -> None:
    schema = (
        SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("b", Schema.INT32_SCHEMA)
        .field("c", Schema.INT32_SCHEMA).build()
    )  # fmt: skip
    value = Struct(schema).put("a", 1).put("b", 2).put("c", 3)
    transform = xform()
    out = transform.apply(record(schema, value))
    expected_schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("b", Schema.INT32_SCHEMA).build()
    assert out.key_schema == expected_schema
    assert out.key == Struct(expected_schema).put("a", 1).put("b", 2)
    assert out.value is value and out.value_schema is schema
    assert transform.apply(record(schema, value)).key_schema is out.key_schema


def test_key_fields_follow_the_configured_order() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("b", Schema.STRING_SCHEMA).build()
    out = xform("b,a").apply(record(schema, Struct(schema).put("a", 1).put("b", "x")))
    assert [f.name for f in out.key_schema.fields()] == ["b", "a"]


def test_non_existing_field() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataError, match="^Field does not exist: not_exist$"):
        xform("not_exist").apply(record(schema, Struct(schema).put("a", 1)))


@pytest.mark.parametrize(("replace", "expected"), [(False, None), (True, 42)])
def test_replace_null_with_default(replace: bool, expected: int | None) -> None:
    schema = SchemaBuilder.struct().field("a", SchemaBuilder.int32().optional().default_value(42).build()).build()
    out = xform("a", **{"replace.null.with.default": replace}).apply(record(schema, Struct(schema).put("a", None)))
    assert out.key.get_without_default("a") == expected


def test_tombstones_are_refused_as_in_kafka() -> None:
    message = r"Only Map objects supported in absence of schema for \[copying fields from value to key\]"
    with pytest.raises(DataError, match=message):
        xform().apply(record(None, None))
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).optional().build()
    with pytest.raises(DataError, match=r"Only Struct objects supported for \[copying fields from value to key\]"):
        xform().apply(record(schema, None))


def test_record_metadata_is_kept() -> None:
    original = SinkRecord("t", 4, Schema.STRING_SCHEMA, "old", None, {"a": 1, "b": 2}, 55, 99, "CreateTime",
                          [Header("h", "v")])  # fmt: skip
    out = xform().apply(original)
    assert (out.topic, out.kafka_partition, out.kafka_offset, out.timestamp, out.timestamp_type) == (
        "t", 4, 55, 99, "CreateTime")  # fmt: skip
    assert list(out.headers) == [Header("h", "v")]


def test_configs() -> None:
    with pytest.raises(ConfigError, match='Missing required configuration "fields"'):
        ValueToKey().configure({})
    with pytest.raises(ConfigError, match="must not be empty"):
        ValueToKey().configure({"fields": ""})
    assert ValueToKey().config().names() == ["fields", "replace.null.with.default"]
