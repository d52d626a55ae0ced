"""ReplaceField$Key / ReplaceField$Value."""

from __future__ import annotations

import decimal
import logging
from typing import Any

import pytest

from sluice.api.data import Decimal, Schema, SchemaBuilder, Struct
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import SinkRecord
from sluice.transforms.replace_field import ReplaceFieldKey, ReplaceFieldValue


def value_xform(**configs: Any) -> ReplaceFieldValue:
    xform = ReplaceFieldValue()
    xform.configure(configs)
    return xform


def key_xform(**configs: Any) -> ReplaceFieldKey:
    xform = ReplaceFieldKey()
    xform.configure(configs)
    return xform


def value_record(schema: Schema | None, value: Any) -> SinkRecord:
    return SinkRecord("test", 0, None, None, schema, value, 0)


SCHEMA = (
    SchemaBuilder.struct().name("n").version(2)
    .field("dont", Schema.STRING_SCHEMA)
    .field("abc", Schema.INT32_SCHEMA)
    .field("foo", Schema.BOOLEAN_SCHEMA)
    .field("etc", Schema.STRING_SCHEMA)
    .build()
)  # fmt: skip


def struct() -> Struct:
    return Struct(SCHEMA).put("dont", "whatever").put("abc", 42).put("foo", True).put("etc", "etc")


@pytest.mark.parametrize("schema", [None, SCHEMA])
def test_tombstone(schema: Schema | None) -> None:
    record = value_record(schema, None)
    assert value_xform(exclude="dont").apply(record) is record


def test_schemaless() -> None:
    xform = value_xform(exclude="dont", renames="abc:xyz,foo:bar")
    out = xform.apply(value_record(None, {"dont": "whatever", "abc": 42, "foo": True, "etc": "etc"}))
    assert out.value == {"xyz": 42, "bar": True, "etc": "etc"}


def test_with_schema() -> None:
    xform = value_xform(include="abc,foo", renames="abc:xyz,foo:bar")
    out = xform.apply(value_record(SCHEMA, struct()))
    assert [f.name for f in out.value_schema.fields()] == ["xyz", "bar"]
    assert out.value.get("xyz") == 42 and out.value.get("bar") is True
    assert (out.value_schema.name, out.value_schema.version) == ("n", 2)
    assert xform.apply(value_record(SCHEMA, struct())).value_schema is out.value_schema


def test_exclude_wins_over_include() -> None:
    out = value_xform(include="abc,foo", exclude="foo").apply(value_record(SCHEMA, struct()))
    assert [f.name for f in out.value_schema.fields()] == ["abc"]


def test_field_schemas_are_kept() -> None:
    schema = SchemaBuilder.struct().field("amount", Decimal.schema(3)).field("x", Schema.INT8_SCHEMA).build()
    value = Struct(schema).put("x", 1).put("amount", decimal.Decimal("1.250"))
    out = value_xform(renames="amount:total").apply(value_record(schema, value))
    assert out.value_schema.field("total").schema is schema.field("amount").schema
    assert out.value.get("total") == decimal.Decimal("1.250")


@pytest.mark.parametrize(("replace", "expected"), [(False, None), (True, 42)])
def test_replace_null_with_default_on_value(replace: bool, expected: int | None) -> None:
    schema = SchemaBuilder.struct().field("a", SchemaBuilder.int32().optional().default_value(42).build()).build()
    xform = value_xform(renames="a:b", **{"replace.null.with.default": replace})
    out = xform.apply(value_record(schema, Struct(schema).put("a", None)))
    assert out.value.get_without_default("b") == expected


@pytest.mark.parametrize(("replace", "expected"), [(False, None), (True, 42)])
def test_replace_null_with_default_on_key(replace: bool, expected: int | None) -> None:
    schema = SchemaBuilder.struct().field("a", SchemaBuilder.int32().optional().default_value(42).build()).build()
    xform = key_xform(**{"replace.null.with.default": replace})
    out = xform.apply(SinkRecord("t", 0, schema, Struct(schema).put("a", None), Schema.STRING_SCHEMA, "v", 0))
    assert out.key.get_without_default("a") == expected
    assert out.value == "v" and out.value_schema is Schema.STRING_SCHEMA


def test_key_schemaless() -> None:
    out = key_xform(renames="id:key_id").apply(SinkRecord("t", 0, None, {"id": 1}, None, None, 0))
    assert out.key == {"key_id": 1}


def test_requirements() -> None:
    with pytest.raises(DataError, match=r"Only Map objects supported in absence of schema for \[field replacement\]"):
        value_xform().apply(value_record(None, "x"))
    with pytest.raises(DataError, match=r"Only Struct objects supported for \[field replacement\]"):
        value_xform().apply(value_record(SCHEMA, "x"))


@pytest.mark.parametrize("renames", ["foo", "foo:", "a:b:c", "a::"])
def test_invalid_renames(renames: str) -> None:
    with pytest.raises(ConfigError, match="Invalid rename mapping"):
        ReplaceFieldValue().configure({"renames": renames})


def test_java_split_edge_cases_in_renames() -> None:
    out = value_xform(renames="a:b:").apply(value_record(None, {"a": 1}))
    assert out.value == {"b": 1}


def test_duplicate_list_entries_are_refused() -> None:
    with pytest.raises(ConfigError, match="must not be duplicated"):
        ReplaceFieldValue().configure({"exclude": "a,a"})


def test_deprecated_aliases(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        out = value_xform(blacklist="dont", whitelist="dont,abc").apply(value_record(SCHEMA, struct()))
    assert [f.name for f in out.value_schema.fields()] == ["abc"]
    assert "deprecated" in caplog.text
    # the current names win over the old ones
    out = value_xform(exclude="etc", blacklist="abc").apply(value_record(SCHEMA, struct()))
    assert [f.name for f in out.value_schema.fields()] == ["dont", "abc", "foo"]


def test_config() -> None:
    config = ReplaceFieldValue().config()
    assert config.names() == ["exclude", "include", "renames", "replace.null.with.default"]
    assert config.config_key("exclude").default_value == []
