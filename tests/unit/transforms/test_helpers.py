"""Helpers shared by the built-in transforms: field paths, requirements, schema copies,
the schema cache, struct field defaults and Connect's reading of numbers. (The Java
semantics they build on are tested in tests/unit/java.)"""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from sluice.api.data import Decimal, Schema, SchemaBuilder, Struct, Type, schema_type_of
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import Header, SinkRecord, SourceRecord
from sluice.transforms._config import FieldSyntaxVersion
from sluice.transforms._field_path import SingleFieldPath
from sluice.transforms._records import new_record
from sluice.transforms._schemas import LRUCache, copy_schema_basics
from sluice.transforms._values import (
    field_value,
    number_to_int,
    parse_connect_number,
    require_map,
    require_map_or_null,
    require_schema,
    require_sink_record,
    require_struct,
    require_struct_or_null,
)


def v2(path: str) -> list[str]:
    return list(SingleFieldPath(path, FieldSyntaxVersion.V2).steps)


# -- field paths ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["foo.bar.baz", "foo`bar`", "foo.`bar.baz`"])
def test_v1_paths_are_a_single_step(path: str) -> None:
    assert SingleFieldPath(path).steps == (path,)
    assert SingleFieldPath(path, FieldSyntaxVersion.V1).steps == (path,)


@pytest.mark.parametrize(
    ("path", "steps"),
    [
        ("", []),
        ("foobarbaz", ["foobarbaz"]),
        ("foo.bar.baz", ["foo", "bar", "baz"]),
        ("..", ["", "", ""]),
        ("foo..", ["foo", "", ""]),
        (".bar.", ["", "bar", ""]),
        ("..baz", ["", "", "baz"]),
        ("foo`bar`baz", ["foo`bar`baz"]),
        ("`foo.bar.baz`", ["foo.bar.baz"]),
        ("foo.`bar.baz`", ["foo", "bar.baz"]),
        ("`foo.bar`.baz", ["foo.bar", "baz"]),
        ("foo.`bar`.baz", ["foo", "bar", "baz"]),
        ("foo.``bar.baz`", ["foo", "`bar.baz"]),
        ("foo.`bar.baz``", ["foo", "bar.baz`"]),
        ("foo.`ba`r.baz`", ["foo", "ba`r.baz"]),
        ("foo.ba`r.baz", ["foo", "ba`r", "baz"]),
        ("foo.``bar``.baz", ["foo", "`bar`", "baz"]),
        ("``foo.bar.baz``", ["`foo.bar.baz`"]),
        ("foo.`bar\\`.baz`", ["foo", "bar`.baz"]),
        ("foo.`bar.`baz`", ["foo", "bar.`baz"]),
        ("foo.`bar\\`.`baz`", ["foo", "bar`.`baz"]),
        ("foo.`bar\\\\`.\\`baz`", ["foo", "bar\\`.\\`baz"]),
    ],
)
def test_v2_path_steps(path: str, steps: list[str]) -> None:
    assert v2(path) == steps


@pytest.mark.parametrize(
    ("path", "position"),
    [("`foo.bar.baz", 0), ("foo.`bar.baz", 4), ("foo.bar.`baz", 8), ("foo.bar.`baz\\`", 8)],
)
def test_v2_incomplete_backticks_are_a_config_error(path: str, position: int) -> None:
    with pytest.raises(ConfigError) as e:
        SingleFieldPath(path, FieldSyntaxVersion.V2)
    assert str(e.value) == (
        f"Incomplete backtick pair in path: [{path}], consider adding a backslash before backtick "
        f"at position {position} to escape it"
    )


def test_field_syntax_version_from_config() -> None:
    assert FieldSyntaxVersion.from_config("v2") is FieldSyntaxVersion.V2
    with pytest.raises(ConfigError, match="Unrecognized field syntax version"):
        FieldSyntaxVersion.from_config("V3")


BAR = SchemaBuilder.struct().field("bar", Schema.INT32_SCHEMA).build()
NESTED = SchemaBuilder.struct().field("foo", BAR).build()


def test_field_from_schema() -> None:
    assert v2_path("foo.bar").field_from(NESTED) == BAR.field("bar")
    assert v2_path("foo").field_from(NESTED) == NESTED.field("foo")
    assert v2_path("un.known").field_from(NESTED) is None
    assert v2_path("foo.unknown").field_from(NESTED) is None
    assert v2_path("unknown").field_from(NESTED) is None
    assert v2_path("test").field_from(None) is None


def v2_path(path: str) -> SingleFieldPath:
    return SingleFieldPath(path, FieldSyntaxVersion.V2)


def test_value_from_map() -> None:
    value = {"foo": {"bar": 42, "baz": None}}
    assert v2_path("foo.bar").value_from_map(value) == 42
    assert v2_path("foo.baz").value_from_map(value) is None
    assert v2_path("un.known").value_from_map(value) is None
    assert v2_path("foo.unknown").value_from_map(value) is None
    assert v2_path("foo.baz.inner").value_from_map(value) is None
    assert v2_path("foo").value_from_map(None) is None
    with pytest.raises(DataError, match=r"nested field access"):
        v2_path("foo.bar.x").value_from_map(value)


def test_value_from_struct() -> None:
    baz = SchemaBuilder.struct().field("inner", Schema.STRING_SCHEMA).optional().build()
    bar = SchemaBuilder.struct().field("bar", Schema.INT32_SCHEMA).field("baz", baz).build()
    schema = SchemaBuilder.struct().field("foo", bar).build()
    struct = Struct(schema).put("foo", Struct(bar).put("bar", 42).put("baz", None))
    assert v2_path("foo.bar").value_from_struct(struct) == 42
    assert v2_path("foo.baz").value_from_struct(struct) is None
    assert v2_path("un.known").value_from_struct(struct) is None
    assert v2_path("foo.unknown").value_from_struct(struct) is None
    assert v2_path("foo.baz.inner").value_from_struct(struct) is None
    assert v2_path("foo").value_from_struct(None) is None


def test_value_from_struct_with_and_without_default() -> None:
    schema = SchemaBuilder.struct().field("a", SchemaBuilder.int32().optional().default_value(7).build()).build()
    struct = Struct(schema)
    assert SingleFieldPath("a").value_from_struct(struct) == 7
    assert SingleFieldPath("a").value_from_struct(struct, with_default=False) is None


# -- requirements and helpers -----------------------------------------------------------------


def test_requirements_messages() -> None:
    with pytest.raises(DataError, match=r"^Schema required for \[p\]$"):
        require_schema(None, "p")
    assert require_schema(Schema.INT32_SCHEMA, "p") is Schema.INT32_SCHEMA
    with pytest.raises(DataError, match=r"^Only Map objects supported in absence of schema for \[p\], found: int$"):
        require_map(1, "p")
    with pytest.raises(DataError, match=r"found: null$"):
        require_map(None, "p")
    assert require_map_or_null(None, "p") is None
    with pytest.raises(DataError, match=r"^Only Struct objects supported for \[p\], found: dict$"):
        require_struct({}, "p")
    assert require_struct_or_null(None, "p") is None
    source = SourceRecord(None, None, "t", 0)
    message = r"^Only SinkRecord supported for \[p\], found: sluice\.api\.records\.SourceRecord$"
    with pytest.raises(DataError, match=message):
        require_sink_record(source, "p")
    sink = SinkRecord("t", 0, None, None, None, None, 5)
    assert require_sink_record(sink, "p") is sink


def test_copy_schema_basics() -> None:
    source = (
        SchemaBuilder.struct().name("n").version(3).doc("d").parameter("k", "v").optional()
        .field("f", Schema.INT32_SCHEMA).build()
    )  # fmt: skip
    copied = copy_schema_basics(source, SchemaBuilder.struct()).build()
    assert (copied.name, copied.version, copied.doc, copied.parameters) == ("n", 3, "d", {"k": "v"})
    assert not copied.optional and copied.fields() == []
    decimal_copy = copy_schema_basics(Decimal.schema(4)).build()
    assert decimal_copy.type is Type.BYTES and Decimal.scale(decimal_copy) == 4
    array_copy = copy_schema_basics(SchemaBuilder.array(Schema.STRING_SCHEMA).build()).build()
    assert array_copy.value_schema() == Schema.STRING_SCHEMA


def test_lru_cache_evicts_least_recently_used() -> None:
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1
    cache.put("c", 3)
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3
    assert len(cache) == 2


def test_field_value_default_handling() -> None:
    schema = SchemaBuilder.struct().field("a", SchemaBuilder.string().optional().default_value("x").build()).build()
    struct = Struct(schema)
    assert field_value(struct, schema.field("a"), True) == "x"
    assert field_value(struct, schema.field("a"), False) is None
    assert field_value(struct, "a", True) == "x"


def test_new_record_duplicates_headers() -> None:
    record = SourceRecord({"p": 1}, {"o": 2}, "t", 0, None, "k", None, "v", 5, [Header("h", "x")])
    copy = new_record(record, value="w")
    assert copy.value == "w" and copy.source_offset == {"o": 2} and copy.timestamp == 5
    copy.headers.add("h2", "y")
    assert len(record.headers) == 1 and len(copy.headers) == 2


def test_schema_type_of() -> None:
    assert schema_type_of(True) is Type.BOOLEAN
    assert schema_type_of(1) is Type.INT64
    assert schema_type_of(1.5) is Type.FLOAT64
    assert schema_type_of("s") is Type.STRING
    assert schema_type_of(b"b") is Type.BYTES
    assert schema_type_of([1]) is Type.ARRAY
    assert schema_type_of({}) is Type.MAP
    assert schema_type_of(Struct(BAR)) is Type.STRUCT
    assert schema_type_of(decimal.Decimal(1)) is None
    assert schema_type_of(dt.date.today()) is None


# -- numbers as Connect reads them ------------------------------------------------------------


def test_number_to_int() -> None:
    assert number_to_int(decimal.Decimal("1E400"), 64) == 0
    assert number_to_int(decimal.Decimal("-123.9"), 32) == -123
    assert number_to_int(300, 8) == 44
    assert number_to_int(300.7, 8) == 44
    with pytest.raises(DataError, match="Decimal value NaN is not finite"):
        number_to_int(decimal.Decimal("NaN"), 32)


def test_parse_connect_number() -> None:
    assert parse_connect_number("12") == 12
    assert parse_connect_number("-12") == -12
    assert parse_connect_number("1e3") == decimal.Decimal("1E+3")
    assert parse_connect_number("1.50") == decimal.Decimal("1.50")
    for bad in ("foo", "", "1e", "0x10", " 1"):
        with pytest.raises(DataError, match=f"^Unable to convert {bad} \\(class java.lang.String\\) to a number$"):
            parse_connect_number(bad)
