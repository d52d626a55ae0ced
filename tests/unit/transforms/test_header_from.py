"""HeaderFrom$Key / HeaderFrom$Value, after Kafka's HeaderFromTest."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from sluice.api.data import Schema, SchemaBuilder, Struct
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import Headers, SinkRecord, SourceRecord, TimestampType
from sluice.transforms.header_from import HeaderFrom, HeaderFromKey, HeaderFromValue

STRING = Schema.STRING_SCHEMA


def _optional_with_default() -> Schema:
    return SchemaBuilder.string().optional().default_value("default").build()


@dataclass
class Rec:
    """A key or value with fields, plus headers: builds the schemaless and schema'd records."""

    fields: list[tuple[str, Schema, Any]] = field(default_factory=list)
    headers: list[tuple[str, Schema | None, Any]] = field(default_factory=list)

    def with_field(self, name: str, schema: Schema, value: Any) -> Rec:
        self.fields.append((name, schema, value))
        return self

    def header(self, name: str, schema: Schema | None, value: Any) -> Rec:
        self.headers.append((name, schema, value))
        return self

    def schema(self) -> Schema:
        builder = SchemaBuilder.struct()
        for name, schema, _ in self.fields:
            builder.field(name, schema)
        return builder.build()

    def struct(self, schema: Schema) -> Struct:
        struct = Struct(schema)
        for name, _, value in self.fields:
            struct.put(name, value)
        return struct

    def _record(self, key: bool, schema: Schema | None, operand: Any, schemaless: bool) -> SourceRecord:
        headers = Headers()
        for name, header_schema, value in self.headers:
            headers.add(name, value, None if schemaless else header_schema)
        return SourceRecord(
            {"foo": "bar"}, {"baz": "quxx"}, "topic", 0,
            schema if key else None, operand if key else "key",
            None if key else schema, "value" if key else operand,
            0, headers,
        )  # fmt: skip

    def schemaless(self, key: bool) -> SourceRecord:
        return self._record(key, None, {name: value for name, _, value in self.fields}, True)

    def with_schema(self, key: bool) -> SourceRecord:
        schema = self.schema()
        return self._record(key, schema, self.struct(schema), False)


_NESTED = SchemaBuilder.struct().field("foo", STRING).build()
_NESTED_VALUE = Struct(_NESTED).put("foo", "foo-value")


def _cases():
    def base() -> Rec:
        return Rec().with_field("field1", STRING, "field1-value").with_field("field2", STRING, "field2-value")

    yield (
        "basic copy",
        base().header("header1", STRING, "existing-value"),
        ["field1"],
        ["inserted1"],
        "copy",
        True,
        base().header("header1", STRING, "existing-value").header("inserted1", STRING, "field1-value"),
    )
    yield (
        "basic move",
        base().header("header1", STRING, "existing-value"),
        ["field1"],
        ["inserted1"],
        "move",
        True,
        Rec()
        .with_field("field2", STRING, "field2-value")
        .header("header1", STRING, "existing-value")
        .header("inserted1", STRING, "field1-value"),
    )
    yield (
        "copy with preexisting header",
        base().header("inserted1", STRING, "existing-value"),
        ["field1"],
        ["inserted1"],
        "copy",
        True,
        base().header("inserted1", STRING, "existing-value").header("inserted1", STRING, "field1-value"),
    )
    yield (
        "move with preexisting header",
        base().header("inserted1", STRING, "existing-value"),
        ["field1"],
        ["inserted1"],
        "move",
        True,
        Rec()
        .with_field("field2", STRING, "field2-value")
        .header("inserted1", STRING, "existing-value")
        .header("inserted1", STRING, "field1-value"),
    )

    def nested() -> Rec:
        return Rec().with_field("field1", _NESTED, _NESTED_VALUE).with_field("field2", STRING, "field2-value")

    yield (
        "copy with struct value",
        nested().header("header1", STRING, "existing-value"),
        ["field1"],
        ["inserted1"],
        "copy",
        True,
        nested().header("header1", STRING, "existing-value").header("inserted1", _NESTED, _NESTED_VALUE),
    )
    yield (
        "move with struct value",
        nested().header("header1", STRING, "existing-value"),
        ["field1"],
        ["inserted1"],
        "move",
        True,
        Rec()
        .with_field("field2", STRING, "field2-value")
        .header("header1", STRING, "existing-value")
        .header("inserted1", _NESTED, _NESTED_VALUE),
    )
    yield (
        "two headers from same field",
        base().header("header1", STRING, "existing-value"),
        ["field1", "field1"],
        ["inserted1", "inserted2"],
        "move",
        True,
        Rec()
        .with_field("field2", STRING, "field2-value")
        .header("header1", STRING, "existing-value")
        .header("inserted1", STRING, "field1-value")
        .header("inserted2", STRING, "field1-value"),
    )
    yield (
        "two fields to same header",
        base().header("header1", STRING, "existing-value"),
        ["field1", "field2"],
        ["inserted1", "inserted1"],
        "move",
        True,
        Rec()
        .header("header1", STRING, "existing-value")
        .header("inserted1", STRING, "field1-value")
        .header("inserted1", STRING, "field2-value"),
    )

    def with_null() -> Rec:
        return (
            Rec()
            .with_field("field1", _optional_with_default(), "field1-value")
            .with_field("field2", _optional_with_default(), None)
        )

    yield (
        "copy null field without default",
        with_null().header("header1", STRING, "existing-value"),
        ["field1", "field2"],
        ["inserted1", "inserted2"],
        "copy",
        False,
        with_null()
        .header("header1", STRING, "existing-value")
        .header("inserted1", _optional_with_default(), "field1-value")
        .header("inserted2", _optional_with_default(), None),
    )
    yield (
        "move null field without default",
        with_null().header("header1", STRING, "existing-value"),
        ["field1", "field2"],
        ["inserted1", "inserted2"],
        "move",
        False,
        Rec()
        .header("header1", STRING, "existing-value")
        .header("inserted1", _optional_with_default(), "field1-value")
        .header("inserted2", _optional_with_default(), None),
    )


CASES = [(key, *case) for key in (True, False) for case in _cases()]
IDS = [f"{'key' if c[0] else 'value'}: {c[1]}" for c in CASES]


def _config(fields, headers, operation, replace_null_with_default) -> dict[str, Any]:
    return {
        "fields": fields,
        "headers": headers,
        "operation": operation,
        "replace.null.with.default": replace_null_with_default,
    }


def _xform(key: bool) -> HeaderFrom:
    return HeaderFromKey() if key else HeaderFromValue()


def _assert_same_record(expected: SourceRecord, actual: SourceRecord) -> None:
    assert type(actual) is SourceRecord
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
        assert getattr(actual, attr) == getattr(expected, attr), attr
    assert actual.headers == expected.headers


@pytest.mark.parametrize(
    ("key", "description", "original", "fields", "headers", "operation", "replace", "expected"), CASES, ids=IDS
)
def test_schemaless(key, description, original, fields, headers, operation, replace, expected) -> None:
    xform = _xform(key)
    xform.configure(_config(fields, headers, operation, replace))
    record = original.schemaless(key)
    _assert_same_record(expected.schemaless(key), xform.apply(record))
    assert record == original.schemaless(key)  # the input is untouched


@pytest.mark.parametrize(
    ("key", "description", "original", "fields", "headers", "operation", "replace", "expected"), CASES, ids=IDS
)
def test_with_schema(key, description, original, fields, headers, operation, replace, expected) -> None:
    xform = _xform(key)
    xform.configure(_config(fields, headers, operation, replace))
    record = original.with_schema(key)
    _assert_same_record(expected.with_schema(key), xform.apply(record))
    assert record == original.with_schema(key)


@pytest.mark.parametrize("key", [True, False])
def test_replace_null_with_default(key: bool) -> None:
    rec = Rec().with_field("f", _optional_with_default(), None)
    xform = _xform(key)
    xform.configure(_config("f", "h", "copy", "true"))
    transformed = xform.apply(rec.with_schema(key))
    assert [(h.key, h.value) for h in transformed.headers] == [("h", "default")]


def test_move_keeps_schema_metadata_but_not_optional() -> None:
    schema = (
        SchemaBuilder.struct()
        .name("com.example.V")
        .version(3)
        .doc("a doc")
        .parameter("p", "1")
        .optional()
        .field("a", STRING)
        .field("b", Schema.INT32_SCHEMA)
        .build()
    )
    value = Struct(schema).put("a", "x").put("b", 7)
    xform = HeaderFromValue()
    xform.configure(_config("b", "hb", "move", True))
    transformed = xform.apply(SourceRecord(None, None, "t", value_schema=schema, value=value))
    moved = transformed.value_schema
    assert (moved.name, moved.version, moved.doc, moved.parameters) == ("com.example.V", 3, "a doc", {"p": "1"})
    assert not moved.optional
    assert [f.name for f in moved.fields()] == ["a"]
    assert transformed.value == Struct(moved).put("a", "x")
    header = transformed.headers.last_with_name("hb")
    assert (header.value, header.schema) == (7, Schema.INT32_SCHEMA)
    # the moved schema is cached: the same schema object for the next record
    again = xform.apply(SourceRecord(None, None, "t", value_schema=schema, value=value))
    assert again.value_schema is moved


def test_sink_record_key() -> None:
    schema = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).field("name", STRING).build()
    key = Struct(schema).put("id", 5).put("name", "n")
    record = SinkRecord("t", 1, schema, key, STRING, "v", 10, 99, TimestampType.LOG_APPEND_TIME)
    xform = HeaderFromKey()
    xform.configure(_config("id", "the-id", "move", True))
    transformed = xform.apply(record)
    assert isinstance(transformed, SinkRecord)
    assert (transformed.kafka_offset, transformed.timestamp, transformed.timestamp_type) == (10, 99, "LogAppendTime")
    assert transformed.key == Struct(transformed.key_schema).put("name", "n")
    assert (transformed.value_schema, transformed.value) == (STRING, "v")
    assert [(h.key, h.value, h.schema) for h in transformed.headers] == [("the-id", 5, Schema.INT64_SCHEMA)]


def test_schemaless_missing_field_gives_null_header() -> None:
    xform = HeaderFromValue()
    xform.configure(_config("absent", "h", "move", True))
    transformed = xform.apply(SourceRecord(None, None, "t", value={"a": 1}))
    assert transformed.value == {"a": 1}
    header = transformed.headers.last_with_name("h")
    assert (header.value, header.schema) == (None, None)


def test_schema_missing_field_is_an_error() -> None:
    schema = SchemaBuilder.struct().field("a", STRING).build()
    xform = HeaderFromValue()
    xform.configure(_config("absent", "h", "copy", True))
    with pytest.raises(DataError):
        xform.apply(SourceRecord(None, None, "t", value_schema=schema, value=Struct(schema).put("a", "x")))


def test_wrong_operand_types() -> None:
    xform = HeaderFromValue()
    xform.configure(_config("a", "h", "copy", True))
    with pytest.raises(
        DataError,
        match=r"Only Map objects supported in absence of schema for \[header copy\], "
        r"found: str",
    ):
        xform.apply(SourceRecord(None, None, "t", value="text"))
    with pytest.raises(DataError, match=r"Only Struct objects supported for \[header copy\], found: null"):
        xform.apply(SourceRecord(None, None, "t", value_schema=SchemaBuilder.struct().build(), value=None))
    key_xform = HeaderFromKey()
    key_xform.configure(_config("a", "h", "move", True))
    with pytest.raises(DataError, match=r"\[header move\], found: null"):
        key_xform.apply(SourceRecord(None, None, "t", value={"a": 1}))


@pytest.mark.parametrize("key", [True, False])
def test_invalid_config_extra_header(key: bool) -> None:
    with pytest.raises(ConfigError, match="'fields' config must have the same number of elements as 'headers'"):
        _xform(key).configure(_config(["foo", "bar"], ["foo"], "copy", True))


@pytest.mark.parametrize("key", [True, False])
def test_invalid_config_extra_field(key: bool) -> None:
    with pytest.raises(ConfigError):
        _xform(key).configure(_config(["foo"], ["foo", "bar"], "copy", True))


@pytest.mark.parametrize("key", [True, False])
def test_invalid_config_empty_headers_and_fields(key: bool) -> None:
    with pytest.raises(ConfigError, match="Empty list"):
        _xform(key).configure(_config([], [], "copy", True))


@pytest.mark.parametrize(
    "configs",
    [
        {"fields": "a", "headers": "b"},
        {"fields": "a", "headers": "b", "operation": "MOVE"},
        {"fields": "a", "headers": "b", "operation": "rename"},
        {"headers": "b", "operation": "copy"},
        {"fields": "a", "headers": "b", "operation": "copy", "replace.null.with.default": "maybe"},
    ],
)
def test_invalid_configs(configs) -> None:
    with pytest.raises(ConfigError):
        HeaderFromValue().configure(configs)


def test_config_def() -> None:
    config = HeaderFromValue().config()
    assert config.names() == ["fields", "headers", "operation", "replace.null.with.default"]
    assert config.config_key("replace.null.with.default").default_value is True
    assert not config.config_key("operation").has_default
    values = {v.name: v for v in config.validate({"fields": "a", "headers": "b", "operation": "rename"})}
    assert values["operation"].error_messages == [
        "Invalid value rename for configuration operation: String must be one of: move, copy"
    ]


def test_base_class_is_abstract() -> None:
    with pytest.raises(TypeError):
        HeaderFrom()  # type: ignore[abstract]
