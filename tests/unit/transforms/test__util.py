"""Shared transform helpers: field paths, requirements, schema copies, the schema cache,
Java number semantics and the SimpleDateFormat port (expected values checked against
Java 17's java.text.SimpleDateFormat)."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from sluice.api.data import Decimal, Schema, SchemaBuilder, Struct, Type
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import Header, SinkRecord, SourceRecord
from sluice.transforms._util import (
    EPOCH,
    FieldSyntaxVersion,
    LRUCache,
    SimpleDateFormat,
    SingleFieldPath,
    copy_schema_basics,
    field_value,
    float_to_int,
    infer_schema_type,
    java_split,
    new_record,
    number_to_int,
    parse_connect_number,
    parse_java_double,
    parse_java_float,
    parse_java_integer,
    require_map,
    require_map_or_null,
    require_schema,
    require_sink_record,
    require_struct,
    require_struct_or_null,
    to_float32,
    wrap_int,
)


def v2(path: str) -> list[str]:
    return list(SingleFieldPath(path, FieldSyntaxVersion.V2).steps)


def millis(d: dt.datetime) -> int:
    delta = d - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def at(ms: int) -> dt.datetime:
    return EPOCH + dt.timedelta(milliseconds=ms)


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


def test_infer_schema_type() -> None:
    assert infer_schema_type(True) is Type.BOOLEAN
    assert infer_schema_type(1) is Type.INT64
    assert infer_schema_type(1.5) is Type.FLOAT64
    assert infer_schema_type("s") is Type.STRING
    assert infer_schema_type(b"b") is Type.BYTES
    assert infer_schema_type([1]) is Type.ARRAY
    assert infer_schema_type({}) is Type.MAP
    assert infer_schema_type(Struct(BAR)) is Type.STRUCT
    assert infer_schema_type(decimal.Decimal(1)) is None
    assert infer_schema_type(dt.date.today()) is None


def test_java_split() -> None:
    assert java_split("a:b", ":") == ["a", "b"]
    assert java_split("a:b:", ":") == ["a", "b"]
    assert java_split(":b", ":") == ["", "b"]
    assert java_split("", ":") == [""]
    assert java_split(":", ":") == []


# -- Java numbers -------------------------------------------------------------------------------


def test_integer_narrowing() -> None:
    assert wrap_int(300, 8) == 44
    assert wrap_int(-129, 8) == 127
    assert wrap_int(2**31, 32) == -(2**31)
    assert float_to_int(300.7, 8) == 44
    assert float_to_int(float("nan"), 32) == 0
    assert float_to_int(1e20, 32) == 2**31 - 1
    assert float_to_int(1e20, 8) == -1
    assert float_to_int(-1e30, 64) == -(2**63)
    assert number_to_int(decimal.Decimal("1E400"), 64) == 0
    assert number_to_int(decimal.Decimal("-123.9"), 32) == -123


def test_java_number_parsing() -> None:
    assert parse_java_integer("+7", 8) == 7
    for bad in ("128", " 1", "1.0", "0x10", ""):
        with pytest.raises(ValueError):
            parse_java_integer(bad, 8)
    assert parse_java_double(" 1.5f ") == 1.5
    assert parse_java_double("0x1p3") == 8.0
    assert parse_java_double("-Infinity") == float("-inf")
    assert parse_java_double("NaN") != parse_java_double("NaN")
    for bad in ("inf", "nan", "1_000", "abc", ""):
        with pytest.raises(ValueError):
            parse_java_double(bad)
    assert parse_java_float("3.4e39") == float("inf")
    assert to_float32(0.1) == 0.10000000149011612
    assert parse_connect_number("12") == 12
    assert parse_connect_number("1e3") == decimal.Decimal("1E+3")
    with pytest.raises(DataError, match="Unable to convert foo"):
        parse_connect_number("foo")


# -- SimpleDateFormat -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "ms", "text"),
    [
        ("yyyy-MM-dd", 0, "1970-01-01"),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", 1500000000123, "2017-07-14T02:40:00.123Z"),
        ("yyyy MM dd HH mm ss SSS z", 86401234, "1970 01 02 00 00 01 234 UTC"),
        ("yy/M/d H:m:s", 1500000000123, "17/7/14 2:40:0"),
        ("yyyyMMddHHmmss", 951782400000, "20000229000000"),
        ("EEE, dd MMM yyyy HH:mm:ss Z", 1500000000123, "Fri, 14 Jul 2017 02:40:00 +0000"),
        ("EEEE MMMM d yyyy hh:mm a", 1500000000123, "Friday July 14 2017 02:40 AM"),
        ("y-D k K S SSSS", 1234, "1970-1 24 0 234 0234"),
        ("'quote''s' yyyy X XX XXX zzzz u", 0, "quote's 1970 Z Z Z Coordinated Universal Time 4"),
        ("MMMyyyy", 253402300799999, "Dec9999"),
    ],
)
def test_format(pattern: str, ms: int, text: str) -> None:
    assert SimpleDateFormat(pattern).format(at(ms)) == text


def test_format_dates_and_times() -> None:
    fmt = SimpleDateFormat("yyyy-MM-dd HH:mm:ss.SSS")
    assert fmt.format(dt.date(2020, 2, 29)) == "2020-02-29 00:00:00.000"
    assert fmt.format(dt.time(13, 14, 15, 16000)) == "1970-01-01 13:14:15.016"
    assert fmt.format(dt.datetime(2020, 1, 1, 12)) == "2020-01-01 12:00:00.000"
    offset = dt.timezone(dt.timedelta(hours=2))
    assert fmt.format(dt.datetime(2020, 1, 1, 12, tzinfo=offset)) == "2020-01-01 10:00:00.000"


@pytest.mark.parametrize(
    ("pattern", "text", "ms"),
    [
        ("yyyy-MM-dd", "2017-01-05", 1483574400000),
        ("yyyy-MM-dd", "2017-13-05", 1515110400000),  # lenient: month 13
        ("yyyy-MM-dd", "2017-02-30xyz", 1488412800000),  # lenient day, trailing text ignored
        ("yyyyMMddHHmmss", "20170105123456", 1483619696000),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2017-01-05T12:34:56.789+02:00", 1483612496789),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2017-01-05T12:34:56.789Z", 1483619696789),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSX", "2017-01-05T12:34:56.789-05", 1483637696789),
        ("yyyy-MM-dd HH:mm:ss Z", "2017-01-05 12:34:56 -0530", 1483639496000),
        ("yyyy-MM-dd HH:mm:ss Z", "2017-01-05 12:34:56 GMT+5:30", 1483599896000),
        ("yyyy-MM-dd HH:mm:ss z", "2017-01-05 12:34:56 UTC", 1483619696000),
        ("yyyy MM dd HH mm ss SSS z", "1970 01 02 00 00 01 234 UTC", 86401234),
        ("dd MMM yyyy", "05 jan 2017", 1483574400000),
        ("dd MMMM yyyy", "05 January 2017", 1483574400000),
        ("hh:mm a", "12:30 PM", 45000000),
        ("hh:mm a", "12:30 AM", 1800000),
        ("HH:mm", "25:61", 93660000),
        ("yyyy-MM-dd", " 2017-01-05", 1483574400000),
        ("yyyy-MM-dd", "2017- 01-05", 1483574400000),
        ("SSS", "5", 5),
        ("yyyy-MM-dd HH:mm:ss.SSS", "2017-01-05 10:00:00.12345", 1483610412345),
        ("yyyyMMdd", "2017015", 1483574400000),
        ("D yyyy", "60 2016", 1456704000000),
        ("EEE, dd MMM yyyy HH:mm:ss Z", "Thu, 05 Jan 2017 12:34:56 +0100", 1483616096000),
        ("yyyy-MM-dd", "2017-1-5 trailing", 1483574400000),
    ],
)
def test_parse(pattern: str, text: str, ms: int) -> None:
    assert millis(SimpleDateFormat(pattern).parse(text)) == ms


@pytest.mark.parametrize(
    ("pattern", "text"),
    [("yyyy-MM-dd", "abc"), ("yyyy-MM-dd'T'HH:mm:ssXXX", "2017-01-05T12:34:56+0200"), ("yyyy-MM-dd", "2017-01")],
)
def test_parse_failures(pattern: str, text: str) -> None:
    with pytest.raises(ValueError, match="Unparseable date"):
        SimpleDateFormat(pattern).parse(text)


def test_two_digit_years_fall_in_a_century_window() -> None:
    fmt = SimpleDateFormat("yy/M/d")
    this_year = dt.datetime.now(dt.timezone.utc).year
    parsed = fmt.parse(f"{(this_year + 10) % 100:02d}/1/1")
    assert parsed.year == this_year + 10
    parsed = fmt.parse(f"{(this_year - 50) % 100:02d}/1/1")
    assert parsed.year == this_year - 50
    assert fmt.parse("2017/1/5").year == 2017  # more than two digits: literal


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("yyyy-MM-dd'T", "Unterminated quote"),
        ("yyyy-bb", "Illegal pattern character 'b'"),
        ("YYYY-ww", "pattern letter 'Y' is not supported"),
        ("G yyyy", "pattern letter 'G' is not supported"),
        ("XXXX", "invalid ISO 8601 format: length=4"),
    ],
)
def test_bad_patterns(pattern: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SimpleDateFormat(pattern)
