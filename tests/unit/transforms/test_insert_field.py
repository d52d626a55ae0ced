"""InsertField$Key / InsertField$Value."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from sluice.api.data import Schema, SchemaBuilder, Struct, Timestamp
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import Header, SinkRecord, SourceRecord
from sluice.transforms.insert_field import InsertFieldKey, InsertFieldValue

ALL = {
    "topic.field": "topic_field!",
    "partition.field": "partition_field",
    "timestamp.field": "timestamp_field?",
    "static.field": "instance_id",
    "static.value": "my-instance-id",
}


def value_xform(**configs: Any) -> InsertFieldValue:
    xform = InsertFieldValue()
    xform.configure(configs or dict(ALL))
    return xform


def key_xform(**configs: Any) -> InsertFieldKey:
    xform = InsertFieldKey()
    xform.configure(configs or dict(ALL))
    return xform


SIMPLE = SchemaBuilder.struct().name("name").version(1).doc("doc").field("magic", Schema.OPTIONAL_INT64_SCHEMA).build()


def test_top_level_struct_required() -> None:
    with pytest.raises(DataError, match=r"Only Struct objects supported for \[field insertion\], found: int"):
        value_xform(**{"topic.field": "topic_field"}).apply(
            SourceRecord(None, None, "", 0, None, None, Schema.INT32_SCHEMA, 42)
        )


def test_copy_schema_and_insert_configured_fields() -> None:
    xform = value_xform()
    record = SourceRecord(None, None, "test", 0, None, None, SIMPLE, Struct(SIMPLE).put("magic", 42), 789)
    out = xform.apply(record)
    schema = out.value_schema
    assert (schema.name, schema.version, schema.doc) == ("name", 1, "doc")
    assert schema.field("magic").schema == Schema.OPTIONAL_INT64_SCHEMA and out.value.get("magic") == 42
    assert schema.field("topic_field").schema == Schema.STRING_SCHEMA and out.value.get("topic_field") == "test"
    assert schema.field("partition_field").schema == Schema.OPTIONAL_INT32_SCHEMA
    assert out.value.get("partition_field") == 0
    assert schema.field("timestamp_field").schema == Timestamp.builder().optional().build()
    assert out.value.get("timestamp_field") == dt.datetime(1970, 1, 1, 0, 0, 0, 789000, tzinfo=dt.UTC)
    assert schema.field("instance_id").schema == Schema.OPTIONAL_STRING_SCHEMA
    assert out.value.get("instance_id") == "my-instance-id"
    # the schema is cached per input schema
    again = xform.apply(SourceRecord(None, None, "test", 1, None, None, SIMPLE, Struct(SIMPLE)))
    assert again.value_schema is out.value_schema
    assert again.value.get("timestamp_field") is None


def test_schemaless_insert_configured_fields() -> None:
    record = SourceRecord(None, None, "test", 0, None, None, None, {"magic": 42}, 123)
    out = value_xform().apply(record)
    assert out.value == {
        "magic": 42, "topic_field": "test", "partition_field": 0, "timestamp_field": 123,
        "instance_id": "my-instance-id",
    }  # fmt: skip


def test_schemaless_skips_missing_partition_and_timestamp() -> None:
    record = SourceRecord(None, None, "test", None, None, None, None, {"magic": 42})
    assert value_xform().apply(record).value == {"magic": 42, "topic_field": "test", "instance_id": "my-instance-id"}


@pytest.mark.parametrize("schema", [None, SIMPLE])
def test_tombstone_value_is_unchanged(schema: Schema | None) -> None:
    record = SourceRecord(None, None, "test", 0, None, None, schema, None)
    out = value_xform().apply(record)
    assert out is record


def test_key_fields_into_tombstone_event() -> None:
    record = SourceRecord(None, None, "test", 0, None, {"magic": 42}, None, None)
    out = key_xform().apply(record)
    assert out.key == {"magic": 42, "topic_field": "test", "partition_field": 0, "instance_id": "my-instance-id"}
    assert out.value is None


def test_null_key_leaves_record_unchanged() -> None:
    record = SourceRecord(None, None, "test", 0, None, None, None, {"magic": 42})
    assert key_xform().apply(record) is record


@pytest.mark.parametrize(("replace", "expected"), [(False, None), (True, 42)])
def test_unset_optional_field(replace: bool, expected: int | None) -> None:
    magic = SchemaBuilder.int64().optional().default_value(42).build()
    schema = SchemaBuilder.struct().name("name").version(1).doc("doc").field("magic_with_default", magic).build()
    xform = value_xform(**ALL, **{"replace.null.with.default": replace})
    value = Struct(schema).put("magic_with_default", None)
    out = xform.apply(SourceRecord(None, None, "test", 0, None, None, schema, value, 789))
    assert out.value_schema.field("magic_with_default").schema == magic
    assert out.value.get_without_default("magic_with_default") == expected


def test_offset_field_on_sink_records() -> None:
    xform = value_xform(**{"offset.field": "offset!"})
    out = xform.apply(SinkRecord("t", 2, None, None, SIMPLE, Struct(SIMPLE), 1234))
    assert out.value_schema.field("offset").schema == Schema.INT64_SCHEMA and out.value.get("offset") == 1234
    out = xform.apply(SinkRecord("t", 2, None, None, None, {}, 99, headers=[Header("h", "x")]))
    assert out.value == {"offset": 99} and out.kafka_offset == 99 and list(out.headers) == [Header("h", "x")]


def test_offset_field_requires_a_sink_record() -> None:
    xform = value_xform(**{"offset.field": "offset"})
    with pytest.raises(DataError, match=r"Only SinkRecord supported for \[field insertion\]"):
        xform.apply(SourceRecord(None, None, "t", 0, None, None, None, {}))


def test_required_field_names_with_suffixes() -> None:
    xform = key_xform(**{"topic.field": "t?", "partition.field": "p!", "timestamp.field": "ts!"})
    out = xform.apply(SinkRecord("topic", 3, SIMPLE, Struct(SIMPLE), None, None, 0, 5))
    assert out.key_schema.field("t").schema == Schema.OPTIONAL_STRING_SCHEMA
    assert out.key_schema.field("p").schema == Schema.INT32_SCHEMA
    assert out.key_schema.field("ts").schema == Timestamp.SCHEMA
    assert out.key.get("p") == 3


def test_duplicate_field_name_is_refused() -> None:
    with pytest.raises(DataError, match="field name duplication magic"):
        value_xform(**{"topic.field": "magic"}).apply(
            SourceRecord(None, None, "t", 0, None, None, SIMPLE, Struct(SIMPLE))
        )


def test_configs() -> None:
    with pytest.raises(ConfigError, match="^No field insertion configured$"):
        InsertFieldValue().configure({"static.value": "x"})
    with pytest.raises(ConfigError, match="No value specified for static field: instance_id"):
        InsertFieldValue().configure({"static.field": "instance_id"})
    config = InsertFieldValue().config()
    assert config.names() == ["topic.field", "partition.field", "offset.field", "timestamp.field", "static.field",
                              "static.value", "replace.null.with.default"]  # fmt: skip
    assert all(config.config_key(n).default_value is None for n in config.names()[:-1])
