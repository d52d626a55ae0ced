"""MaskField$Key / MaskField$Value."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest

from sluice.api.data import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import SinkRecord
from sluice.transforms.mask_field import MaskFieldKey, MaskFieldValue

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
NOW = dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=dt.UTC)

SCHEMA = (
    SchemaBuilder.struct()
    .field("magic", Schema.INT32_SCHEMA)
    .field("bool", Schema.BOOLEAN_SCHEMA)
    .field("byte", Schema.INT8_SCHEMA)
    .field("short", Schema.INT16_SCHEMA)
    .field("int", Schema.INT32_SCHEMA)
    .field("long", Schema.INT64_SCHEMA)
    .field("float", Schema.FLOAT32_SCHEMA)
    .field("double", Schema.FLOAT64_SCHEMA)
    .field("string", Schema.STRING_SCHEMA)
    .field("date", Date.SCHEMA)
    .field("time", Time.SCHEMA)
    .field("timestamp", Timestamp.SCHEMA)
    .field("decimal", Decimal.schema(0))
    .field("array", SchemaBuilder.array(Schema.INT32_SCHEMA).build())
    .field("map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())
    .field("withDefault", SchemaBuilder.string().optional().default_value("default").build())
    .build()
)

VALUES: dict[str, Any] = {
    "magic": 42, "bool": True, "int": 42, "long": 42, "double": 42.0, "string": "55.121.20.20",
    "date": NOW, "bigdec": decimal.Decimal("42.0"), "list": [42], "map": {"key": "value"},
}  # fmt: skip


def values_with_schema() -> Struct:
    return (
        Struct(SCHEMA).put("magic", 42).put("bool", True).put("byte", 42).put("short", 42).put("int", 42)
        .put("long", 42).put("float", 42.0).put("double", 42.0).put("string", "hmm").put("date", NOW.date())
        .put("time", NOW.time()).put("timestamp", NOW).put("decimal", decimal.Decimal(42)).put("array", [1, 2, 3])
        .put("map", {"what": "what"}).put("withDefault", None)
    )  # fmt: skip


def transform(fields: list[str], replacement: str | None = None, cls: type = MaskFieldValue) -> Any:
    xform = cls()
    xform.configure({"fields": fields, "replacement": replacement, "replace.null.with.default": False})
    return xform


def record(schema: Schema | None, value: Any) -> SinkRecord:
    return SinkRecord("", 0, None, None, schema, value, 0)


def test_schemaless() -> None:
    fields = [k for k in VALUES if k != "magic"]
    out = transform(fields).apply(record(None, dict(VALUES))).value
    assert out == {
        "magic": 42, "bool": False, "int": 0, "long": 0, "double": 0.0, "string": "", "date": EPOCH,
        "bigdec": decimal.Decimal(0), "list": [], "map": {},
    }  # fmt: skip
    assert VALUES["string"] == "55.121.20.20"


def test_schemaless_missing_field_becomes_null() -> None:
    assert transform(["absent"]).apply(record(None, {"a": 1})).value == {"a": 1, "absent": None}


def test_with_schema() -> None:
    fields = [f.name for f in SCHEMA.fields() if f.name != "magic"]
    out = transform(fields).apply(record(SCHEMA, values_with_schema())).value
    assert out.schema is SCHEMA
    assert out.get("magic") == 42
    assert out.get("bool") is False
    assert (out.get("byte"), out.get("short"), out.get("int"), out.get("long")) == (0, 0, 0, 0)
    assert out.get("float") == 0.0 and out.get("double") == 0.0
    assert out.get("string") == ""
    assert out.get("date") == dt.date(1970, 1, 1)
    assert out.get("time") == dt.time(0)
    assert out.get("timestamp") == EPOCH
    assert out.get("decimal") == decimal.Decimal(0)
    assert out.get("array") == [] and out.get("map") == {}
    assert out.get_without_default("withDefault") is None


@pytest.mark.parametrize(
    ("field", "replacement", "expected"),
    [("int", "123", 123), ("long", "123", 123), ("double", "123.0", 123.0), ("string", "123", "123"),
     ("bigdec", "123.0", decimal.Decimal("123.0")), ("int", "1e3", 1000), ("int", "123.45", 123)],
)  # fmt: skip
def test_schemaless_with_replacement(field: str, replacement: str, expected: Any) -> None:
    out = transform([field], replacement).apply(record(None, dict(VALUES))).value
    assert out[field] == expected and type(out[field]) is type(expected)


@pytest.mark.parametrize(
    ("field", "replacement", "expected"),
    [("short", "123", 123), ("byte", "123", 123), ("byte", "300", 44), ("int", "123", 123), ("long", "123", 123),
     ("float", "123.0", 123.0), ("float", "0.1", 0.10000000149011612), ("double", "123.0", 123.0),
     ("string", "123", "123"), ("decimal", "123.0", decimal.Decimal("123.0"))],
)  # fmt: skip
def test_with_schema_and_replacement(field: str, replacement: str, expected: Any) -> None:
    out = transform([field], replacement).apply(record(SCHEMA, values_with_schema())).value
    assert out.get(field) == expected and type(out.get(field)) is type(expected)


@pytest.mark.parametrize("fields", [["date"], ["int", "date"], ["bool"], ["list"], ["map"]])
def test_schemaless_unsupported_replacement_type(fields: list[str]) -> None:
    with pytest.raises(DataError, match="Cannot mask value of type"):
        transform(fields, "123").apply(record(None, dict(VALUES)))


@pytest.mark.parametrize("field", ["time", "timestamp", "date", "array", "bool"])
def test_with_schema_unsupported_replacement_type(field: str) -> None:
    with pytest.raises(DataError, match="Cannot mask value of type"):
        transform([field], "123").apply(record(SCHEMA, values_with_schema()))


@pytest.mark.parametrize("field", ["int", "long", "double", "bigdec"])
def test_replacement_type_mismatch(field: str) -> None:
    with pytest.raises(DataError, match="Unable to convert foo"):
        transform([field], "foo").apply(record(None, dict(VALUES)))
    with pytest.raises(DataError, match="Unable to convert foo"):
        transform(["string", field], "foo").apply(record(None, dict(VALUES)))


def test_unmaskable_value() -> None:
    with pytest.raises(DataError, match="^Cannot mask value of type: class bytes$"):
        transform(["b"]).apply(record(None, {"b": b"x"}))


def test_null_field_stays_null() -> None:
    assert transform(["a"], "x").apply(record(None, {"a": None})).value == {"a": None}


def test_replace_null_with_default_applies_to_unmasked_fields() -> None:
    xform = MaskFieldValue()
    xform.configure({"fields": "string"})
    out = xform.apply(record(SCHEMA, values_with_schema())).value
    assert out.get_without_default("withDefault") == "default"


def test_masked_lists_and_maps_are_new_objects() -> None:
    out = transform(["array", "map"]).apply(record(SCHEMA, values_with_schema())).value
    out.get("array").append(0)
    out.get("map")["k"] = "v"
    again = transform(["array", "map"]).apply(record(SCHEMA, values_with_schema())).value
    assert again.get("array") == [] and again.get("map") == {}


def test_key_variant() -> None:
    out = transform(["k"], None, MaskFieldKey).apply(SinkRecord("t", 0, None, {"k": "secret", "x": 1}, None, "v", 0))
    assert out.key == {"k": "", "x": 1} and out.value == "v"


def test_tombstone_is_refused_as_in_kafka() -> None:
    message = r"Only Map objects supported in absence of schema for \[mask fields\], found: null"
    with pytest.raises(DataError, match=message):
        transform(["a"]).apply(record(None, None))
    with pytest.raises(DataError, match=r"Only Struct objects supported for \[mask fields\], found: null"):
        transform(["a"]).apply(record(SCHEMA, None))


def test_configs() -> None:
    with pytest.raises(ConfigError, match="String must be non-empty"):
        MaskFieldValue().configure({"fields": "short", "replacement": ""})
    with pytest.raises(ConfigError, match='Missing required configuration "fields"'):
        MaskFieldValue().configure({})
    with pytest.raises(ConfigError, match="must not be empty"):
        MaskFieldValue().configure({"fields": ""})
    with pytest.raises(ConfigError, match="must not be duplicated"):
        MaskFieldValue().configure({"fields": "a,a"})
    config = MaskFieldValue().config()
    assert config.names() == ["fields", "replacement", "replace.null.with.default"]
