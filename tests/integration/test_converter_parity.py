"""Byte parity of Sluice's converters with Apache Kafka Connect's own (4.3.1, in a JVM
through :class:`sluice_devtools.kafka_reference.KafkaReference`).

A fixed corpus of Connect (schema, value) pairs — every schema type, the logical types,
names/versions/docs/parameters/defaults, optional nulls, awkward floats and strings,
schemaless values — goes through each converter configuration on both sides:
``fromConnectData`` must give the same bytes (or both fail), and ``toConnectData`` of
those bytes the same schema and value (or both fail). Header converters likewise with
``fromConnectHeader``/``toConnectHeader``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import os
import struct
from collections.abc import Iterator
from typing import Any

import pytest

from sluice.api.converter import SchemaAndValue
from sluice.api.data import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp, Type
from sluice.api.errors import DataError
from sluice.converters import (
    ByteArrayConverter,
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    JsonConverter,
    LongConverter,
    ShortConverter,
    SimpleHeaderConverter,
    StringConverter,
)
from sluice_devtools.kafka_reference import JavaError, KafkaReference

pytestmark = pytest.mark.integration

UTC = dt.UTC
TOPIC = "parity-topic"

# ------------------------------------------------------------------------------ corpus

NESTED = (
    SchemaBuilder.struct()
    .name("com.example.Inner")
    .version(2)
    .doc("an inner struct")
    .field("id", Schema.INT64_SCHEMA)
    .field("label", Schema.OPTIONAL_STRING_SCHEMA)
    .build()
)
OPTIONAL_NESTED = (
    SchemaBuilder.struct()
    .name("com.example.Inner")
    .version(2)
    .doc("an inner struct")
    .field("id", Schema.INT64_SCHEMA)
    .field("label", Schema.OPTIONAL_STRING_SCHEMA)
    .optional()
    .build()
)
DEFAULT_INT = SchemaBuilder.int32().optional().default_value(42).build()
DEFAULT_REQUIRED_STRING = SchemaBuilder.string().default_value("fallback").build()
NAMED_STRING = (
    SchemaBuilder.string()
    .name("com.example.Name")
    .version(3)
    .doc("a documented string")
    .parameter("z.param", "last")
    .parameter("a.param", "first")
    .build()
)
EVERYTHING = (
    SchemaBuilder.struct()
    .name("com.example.Everything")
    .version(7)
    .doc("one of each")
    .parameter("connect.record.doc", "x")
    .field("i8", Schema.INT8_SCHEMA)
    .field("i16", Schema.INT16_SCHEMA)
    .field("i32", Schema.INT32_SCHEMA)
    .field("i64", Schema.INT64_SCHEMA)
    .field("f32", Schema.FLOAT32_SCHEMA)
    .field("f64", Schema.FLOAT64_SCHEMA)
    .field("flag", Schema.BOOLEAN_SCHEMA)
    .field("text", Schema.STRING_SCHEMA)
    .field("raw", Schema.BYTES_SCHEMA)
    .field("list", SchemaBuilder.array(Schema.INT32_SCHEMA).build())
    .field("by_name", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_FLOAT64_SCHEMA).build())
    .field("by_id", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build())
    .field("inner", NESTED)
    .field("maybe_inner", OPTIONAL_NESTED)
    .field("inners", SchemaBuilder.array(NESTED).build())
    .field("opt_text", Schema.OPTIONAL_STRING_SCHEMA)
    .field("with_default", DEFAULT_INT)
    .field("named", NAMED_STRING)
    .field("price", Decimal.builder(2).optional().build())
    .field("day", Date.builder().optional().build())
    .field("clock", Time.builder().optional().build())
    .field("at", Timestamp.builder().optional().build())
    .build()
)


def _inner(i: int, label: str | None) -> Struct:
    return Struct(NESTED).put("id", i).put("label", label)


def _everything(**overrides: Any) -> Struct:
    values: dict[str, Any] = {
        "i8": -128,
        "i16": 32767,
        "i32": -(2**31),
        "i64": 2**63 - 1,
        "f32": 0.1,
        "f64": -2.5e-7,
        "flag": True,
        "text": 'quote " backslash \\ tab \t newline \n nul \x00 emoji 😀',
        "raw": b"\x00\x01\xfe\xff",
        "list": [3, 1, 2],
        "by_name": {"zeta": 1.5, "alpha": None, "mid": -0.0},
        "by_id": {3: "three", -1: "minus one", 0: ""},
        "inner": _inner(1, "one"),
        "maybe_inner": None,
        "inners": [_inner(2, None), _inner(3, "three")],
        "opt_text": None,
        "with_default": None,
        "named": "named value",
        "price": decimal.Decimal("-12.34"),
        "day": dt.date(2024, 2, 29),
        "clock": dt.time(13, 45, 30, 123000),
        "at": dt.datetime(2024, 1, 31, 13, 45, 0, 500000, tzinfo=UTC),
    }
    values.update(overrides)
    s = Struct(EVERYTHING)
    for k, v in values.items():
        s.put(k, v)
    return s


def _opt(builder: SchemaBuilder) -> Schema:
    return builder.optional().build()


FLOATS64 = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.1,
    2 / 3,
    1e-3,
    1e-4,
    9999999.0,
    1e7,
    1.0e16,
    1e21,
    1e22,
    123456789.123,
    1.7976931348623157e308,
    2.2250738585072014e-308,
    5e-324,
    1e-300,
    -3.14159,
    math.nan,
    math.inf,
    -math.inf,
]
FLOATS32 = [
    0.0,
    -0.0,
    1.5,
    0.1,
    -2.75,
    3.4028234663852886e38,
    1.401298464324817e-45,
    1.1754943508222875e-38,
    1e-10,
    123456.789,
    16777216.0,
    math.nan,
    math.inf,
    -math.inf,
]
STRINGS = [
    "",
    "plain",
    "naïve café",
    "日本語テキスト",
    "emoji 😀 and clef 𝄞",
    "\x00\x01\x02\x1f",
    "\t\n\r\b\f",
    'quotes " and \\ backslash / slash',
    "\x7f del",
    "\u2028\u2029 separators",
    "</script>",
    " padded ",
    "true",
    "42",
    "1.5",
    "[1,2]",
    '{"a":1}',
    "null",
]
DECIMALS = [
    (0, "0"),
    (0, "123456789012345678901234567890"),
    (2, "1.25"),
    (2, "-1.25"),
    (2, "0.00"),
    (2, "-0.01"),
    (5, "3.14159"),
    (10, "-98765432109876543210.0123456789"),
    (-2, "1.2E+3"),
    (3, "127.000"),
    (1, "-12.8"),
]
DATES = [dt.date(1970, 1, 1), dt.date(2024, 2, 29), dt.date(1900, 1, 1), dt.date(2999, 12, 31)]
TIMES = [dt.time(0, 0), dt.time(13, 45, 30, 123000), dt.time(23, 59, 59, 999000), dt.time(0, 0, 0, 1000)]
TIMESTAMPS = [
    dt.datetime(1970, 1, 1, tzinfo=UTC),
    dt.datetime(2024, 1, 31, 13, 45, 0, 500000, tzinfo=UTC),
    dt.datetime(2024, 1, 31, tzinfo=UTC),
    dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
    dt.datetime(1970, 1, 1, 0, 0, 0, 500000, tzinfo=UTC),
    dt.datetime(2286, 11, 20, 17, 46, 39, 999000, tzinfo=UTC),
]


def corpus() -> Iterator[tuple[str, Schema | None, Any]]:
    yield "null/null", None, None
    for v in (-128, -1, 0, 127):
        yield f"int8/{v}", Schema.INT8_SCHEMA, v
    for v in (-32768, 300, 32767):
        yield f"int16/{v}", Schema.INT16_SCHEMA, v
    for v in (-(2**31), 0, 65536, 2**31 - 1):
        yield f"int32/{v}", Schema.INT32_SCHEMA, v
    for v in (-(2**63), 0, 1234567890123, 2**63 - 1):
        yield f"int64/{v}", Schema.INT64_SCHEMA, v
    for v in FLOATS32:
        yield f"float32/{v!r}", Schema.FLOAT32_SCHEMA, v
    for v in FLOATS64:
        yield f"float64/{v!r}", Schema.FLOAT64_SCHEMA, v
    yield "boolean/true", Schema.BOOLEAN_SCHEMA, True
    yield "boolean/false", Schema.BOOLEAN_SCHEMA, False
    for i, v in enumerate(STRINGS):
        yield f"string/{i}", Schema.STRING_SCHEMA, v
    for v in (b"", b"\x00\xff\x10", bytes(range(256))):
        yield f"bytes/{len(v)}", Schema.BYTES_SCHEMA, v
    for t in ("INT8", "INT16", "INT32", "INT64", "FLOAT32", "FLOAT64", "BOOLEAN", "STRING", "BYTES"):
        yield f"optional-{t}/null", getattr(Schema, f"OPTIONAL_{t}_SCHEMA"), None
    yield "required-int32/null", Schema.INT32_SCHEMA, None
    yield "named-string", NAMED_STRING, "value"
    yield "default-int/null", DEFAULT_INT, None
    yield "default-int/set", DEFAULT_INT, 7
    yield "default-required-string/set", DEFAULT_REQUIRED_STRING, "given"
    yield "array/int32", SchemaBuilder.array(Schema.INT32_SCHEMA).build(), [1, -2, 3]
    yield "array/empty", SchemaBuilder.array(Schema.STRING_SCHEMA).build(), []
    yield "array/optional-strings", SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).build(), ["a", None, "c"]
    yield (
        "array/nested",
        SchemaBuilder.array(SchemaBuilder.array(Schema.FLOAT64_SCHEMA).build()).build(),
        [[1.5, -0.0], [], [math.nan]],
    )
    yield "array/booleans-optional", _opt(SchemaBuilder.array(Schema.BOOLEAN_SCHEMA)), [True, False]
    yield (
        "map/string-int",
        SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(),
        {"b": 2, "a": 1, "": 0, "ü": -1},
    )
    yield (
        "map/int-string",
        SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build(),
        {10: "ten", -3: "minus three"},
    )
    yield (
        "map/int64-struct",
        SchemaBuilder.map(Schema.INT64_SCHEMA, NESTED).build(),
        {5: _inner(5, "five"), 1: _inner(1, None)},
    )
    yield (
        "map/bool-bytes",
        SchemaBuilder.map(Schema.BOOLEAN_SCHEMA, Schema.BYTES_SCHEMA).build(),
        {True: b"yes", False: b""},
    )
    yield "map/empty", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build(), {}
    yield (
        "map/string-array",
        SchemaBuilder.map(Schema.STRING_SCHEMA, SchemaBuilder.array(Schema.INT16_SCHEMA).build()).build(),
        {"x": [1, 2], "y": []},
    )
    yield "struct/everything", EVERYTHING, _everything()
    yield (
        "struct/everything-nulls",
        EVERYTHING,
        _everything(
            maybe_inner=Struct(OPTIONAL_NESTED).put("id", 9).put("label", "nine"),
            opt_text="set",
            with_default=5,
            price=None,
            day=None,
            clock=None,
            at=None,
        ),
    )
    yield "struct/inner", NESTED, _inner(-7, "ünïcode 😀")
    yield "struct/optional-null", OPTIONAL_NESTED, None
    yield (
        "struct/empty",
        SchemaBuilder.struct().name("Empty").build(),
        Struct(SchemaBuilder.struct().name("Empty").build()),
    )
    for scale, text in DECIMALS:
        yield f"decimal/{scale}/{text}", Decimal.schema(scale), decimal.Decimal(text)
    yield "decimal/optional-null", Decimal.builder(4).optional().build(), None
    for v in DATES:
        yield f"date/{v}", Date.SCHEMA, v
    for v in TIMES:
        yield f"time/{v}", Time.SCHEMA, v
    for v in TIMESTAMPS:
        yield f"timestamp/{v.isoformat()}", Timestamp.SCHEMA, v
    yield "date/default", Date.builder().optional().default_value(dt.date(2000, 1, 1)).build(), None
    # schemaless
    yield "schemaless/map", None, {"b": 1, "a": [1, 2], "c": {"d": "x", "e": None}, "f": 1.5, "g": True}
    yield "schemaless/list", None, [1, "a", True, None, 2.5, [], {}]
    yield "schemaless/string", None, "just a string"
    yield "schemaless/unicode", None, "😀\x00\n"
    yield "schemaless/int", None, 42
    yield "schemaless/negative", None, -7
    yield "schemaless/big", None, 2**63 - 1
    yield "schemaless/float", None, 1.5
    yield "schemaless/float-integral", None, 3.0
    yield "schemaless/true", None, True
    yield "schemaless/false", None, False
    yield "schemaless/bytes", None, b"\x00raw\xff"
    yield "schemaless/empty-map", None, {}
    yield "schemaless/int-keys", None, {1: "one", 2: "two"}


CORPUS = list(corpus())

# Before JDK 19, Float.toString/Double.toString did not always print the shortest digits
# that round-trip (JDK-4511638): Java 17 prints Float.MIN_NORMAL as 1.17549435E-38 where
# JDK 19+ (and Sluice) print 1.1754944E-38. Those values are only compared on JDK 19+.
JDK19_DIGITS = {"float32/1.1754943508222875e-38"}


def cases(
    ref: KafkaReference, items: list[tuple[str, Schema | None, Any]] | None = None
) -> list[tuple[str, Schema | None, Any]]:
    """The corpus (or ``items``) minus what the reference JVM prints in its own way."""
    items = CORPUS if items is None else items
    major = int((ref.java_version or "0").split(".")[0])
    if major >= 19:
        return list(items)
    return [c for c in items if c[0] not in JDK19_DIGITS]


# ---------------------------------------------------------------------------- compare


def _millis(value: dt.datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value - dt.datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000


def canon(schema: Schema | None, value: Any) -> Any:
    """A comparable form of a Connect value: NaN equals NaN, -0.0 differs from 0.0,
    FLOAT32 values compare as float32, decimals keep their scale, map order is ignored."""
    if value is None:
        return None
    t = schema.type if schema is not None else None
    if isinstance(value, Struct):
        return (
            "struct",
            tuple((f.name, canon(f.schema, value.get_without_default(f.name))) for f in value.schema.fields()),
        )
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)  # Java writes every NaN as "NaN": payload bits are not compared
    if t is Type.FLOAT32 and isinstance(value, (int, float)):
        try:
            return ("f32", struct.pack(">f", value))
        except OverflowError:
            return ("f32", struct.pack(">f", math.copysign(math.inf, value)))
    if isinstance(value, float):
        return ("f64", struct.pack(">d", value))
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, decimal.Decimal):
        return ("decimal", value.as_tuple())
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ("bytes", bytes(value))
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, dt.datetime):
        return ("datetime", _millis(value))
    if isinstance(value, dt.date):
        return ("date", value.toordinal())
    if isinstance(value, dt.time):
        return ("time", (value.hour, value.minute, value.second, value.microsecond // 1000))
    if isinstance(value, list):
        vs = schema.value_schema() if t is Type.ARRAY else None
        return ("list", tuple(canon(vs, v) for v in value))
    if isinstance(value, dict):
        ks = schema.key_schema() if t is Type.MAP else None
        vs = schema.value_schema() if t is Type.MAP else None
        return ("map", tuple(sorted((repr(canon(ks, k)), repr(canon(vs, v))) for k, v in value.items())))
    return ("other", repr(value))


def same(a: SchemaAndValue | None, b: SchemaAndValue | None) -> bool:
    a = a or SchemaAndValue(None, None)
    b = b or SchemaAndValue(None, None)
    return a.schema == b.schema and canon(a.schema, a.value) == canon(b.schema, b.value)


def show(sv: Any) -> str:
    if isinstance(sv, SchemaAndValue):
        return f"({sv.schema!r}, {sv.value!r})"
    return repr(sv)


class Outcome:
    """A result or the exception that replaced it."""

    def __init__(self, fn: Any, *args: Any, **kwargs: Any) -> None:
        self.value: Any = None
        self.error: BaseException | None = None
        try:
            self.value = fn(*args, **kwargs)
        except (DataError, JavaError) as e:
            self.error = e
        except Exception as e:  # noqa: BLE001 - a Python crash where Kafka raises is a difference too
            self.error = e

    def __repr__(self) -> str:
        if self.error is not None:
            return f"<{type(self.error).__name__}: {self.error}>"
        return show(self.value)


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def ref() -> Iterator[KafkaReference]:
    # SLUICE_REFERENCE_JAVA: run Kafka on another JVM than the default `java`.
    with KafkaReference(java=os.environ.get("SLUICE_REFERENCE_JAVA") or None) as reference:
        yield reference


STATS = {"equal": 0, "both_failed": 0}


def _check_pair(
    problems: list[str],
    label: str,
    ours: Outcome,
    theirs: Outcome,
    *,
    compare: Any = None,
    check_messages: bool = False,
) -> bool:
    """Record a difference; True when both succeeded with equal results."""
    STATS["both_failed" if ours.error is not None and theirs.error is not None else "equal"] += 1
    if (ours.error is None) != (theirs.error is None):
        if ours.error is not None and isinstance(ours.error, DataError) is False:
            problems.append(f"{label}: Sluice crashed {ours!r}, Kafka gave {theirs!r}")
        else:
            problems.append(f"{label}: Sluice {ours!r} but Kafka {theirs!r}")
        return False
    if ours.error is not None:
        if not isinstance(ours.error, DataError):
            problems.append(f"{label}: both failed but Sluice raised {ours!r} (Kafka {theirs!r})")
        elif check_messages and isinstance(theirs.error, JavaError):
            # The harness passes schemaless maps as LinkedHashMaps; a connector's would vary.
            expected = (theirs.error.message or "").replace("java.util.LinkedHashMap", "java.util.HashMap")
            if str(ours.error) != expected:
                problems.append(f"{label}: both failed, with different messages: Sluice {ours!r}, Kafka {theirs!r}")
        return False
    equal = compare(ours.value, theirs.value) if compare else ours.value == theirs.value
    if not equal:
        problems.append(f"{label}: Sluice {ours!r} != Kafka {theirs!r}")
    return equal


def _round_trip(
    problems: list[str],
    ref: KafkaReference,
    label: str,
    java_class: str,
    configs: dict[str, Any],
    ours: Any,
    data: bytes | None,
    is_key: bool,
) -> None:
    mine = Outcome(ours.to_connect_data, TOPIC, data)
    theirs = Outcome(ref.to_connect, java_class, configs, data, is_key=is_key, topic=TOPIC)
    _check_pair(problems, f"{label} toConnect({data!r})", mine, theirs, compare=same)


def run_converter(
    ref: KafkaReference,
    java_class: str,
    ours_cls: type,
    configs: dict[str, Any],
    is_key: bool,
    cases: list[tuple[str, Schema | None, Any]],
    *,
    lenient: Any = None,
) -> list[str]:
    ours = ours_cls()
    ours.configure(dict(configs), is_key)
    problems: list[str] = []
    for label, schema, value in cases:
        mine = Outcome(ours.from_connect_data, TOPIC, schema, value)
        theirs = Outcome(ref.from_connect, java_class, configs, schema, value, is_key=is_key, topic=TOPIC)
        if lenient is not None and mine.error is None and theirs.error is not None:
            expected = lenient(schema, value)
            if expected is not None:
                theirs = expected
        if _check_pair(problems, f"{label} fromConnect", mine, theirs, check_messages=True) and mine.value is not None:
            _round_trip(problems, ref, label, java_class, configs, ours, mine.value, is_key)
    return problems


def report(problems: list[str]) -> str:
    return f"{len(problems)} difference(s) from Kafka:\n" + "\n".join(problems[:60])


# ------------------------------------------------------------------------------- tests

JSON = "org.apache.kafka.connect.json.JsonConverter"

JSON_CONFIGS = [
    pytest.param({}, False, id="defaults-value"),
    pytest.param({}, True, id="defaults-key"),
    pytest.param({"schemas.enable": "false"}, False, id="schemaless-value"),
    pytest.param({"schemas.enable": "false"}, True, id="schemaless-key"),
    pytest.param({"decimal.format": "NUMERIC"}, False, id="numeric"),
    pytest.param({"decimal.format": "numeric", "schemas.enable": "false"}, False, id="numeric-schemaless"),
    pytest.param({"replace.null.with.default": "false"}, False, id="keep-nulls"),
    pytest.param({"replace.null.with.default": "false", "schemas.enable": "false"}, True, id="keep-nulls-schemaless"),
]


@pytest.mark.parametrize(("configs", "is_key"), JSON_CONFIGS)
def test_json_converter(ref: KafkaReference, configs: dict[str, Any], is_key: bool) -> None:
    problems = run_converter(ref, JSON, JsonConverter, configs, is_key, cases(ref))
    assert not problems, report(problems)


JSON_INPUTS = [
    b'{"schema":null,"payload":{"a":1,"b":[1.5,"x",null,true],"c":12345678901234567890}}',
    b'{"schema":{"type":"int32","optional":false},"payload":"not a number"}',
    b'{"schema":{"type":"float","optional":false},"payload":1e39}',
    b'{"schema":{"type":"double","optional":true},"payload":null}',
    b'{"schema":{"type":"int64","optional":false,"default":5},"payload":null}',
    b'{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal",'
    b'"parameters":{"scale":"3"}},"payload":12.5}',
    b'{"schema":{"type":"struct","fields":[{"type":"string","optional":true,"field":"s","default":"d"}],'
    b'"optional":false},"payload":{}}',
    b'{"schema":{"type":"map","keys":{"type":"int8","optional":false},"values":{"type":"string",'
    b'"optional":false},"optional":false},"payload":[[1,"a"],[2,"b"]]}',
    b'{"schema":{"type":"string"},"payload":"no optional flag"}',
    b'{"schema":{"type":"nope","optional":false},"payload":1}',
    b'{"payload":1}',
    b'{"schema":null,"payload":1,"extra":true}',
    b'  [1, 2.0, -0.0, 1E400, "\\u00e9"] ',
    b"not json",
    b"",
    b"12abc",
    b'"\xff"',
]


@pytest.mark.parametrize(("configs", "is_key"), JSON_CONFIGS[:4])
def test_json_converter_writes_lone_surrogates_as_kafka_does(
    ref: KafkaReference, configs: dict[str, Any], is_key: bool
) -> None:
    """Unpaired UTF-16 surrogates (what JSON's "\\ud800" decodes to) in strings, map keys and
    struct values: the bytes are Kafka's. Only this direction: the harness carries Java's
    strings back as UTF-8, which cannot hold a lone surrogate."""
    struct_schema = SchemaBuilder.struct().field("s", Schema.STRING_SCHEMA).build()
    struct = Struct(struct_schema).put("s", "x\udfff")
    map_schema = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build()
    items = [
        ("string", Schema.STRING_SCHEMA, "lone \ud800 and \udfff, a pair \U0001f600"),
        ("map", map_schema, {"k\ud801": "v\udc00"}),
        ("struct", struct_schema, struct),
        ("schemaless", None, ["\ud800"]),
    ]
    ours = JsonConverter()
    ours.configure(dict(configs), is_key)
    problems: list[str] = []
    for label, schema, value in items:
        mine = Outcome(ours.from_connect_data, TOPIC, schema, value)
        theirs = Outcome(ref.from_connect, JSON, configs, schema, value, is_key=is_key, topic=TOPIC)
        _check_pair(problems, f"{label} fromConnect", mine, theirs, check_messages=True)
    assert not problems, report(problems)


@pytest.mark.parametrize(
    "configs",
    [{}, {"schemas.enable": "false"}, {"decimal.format": "NUMERIC"}],
    ids=["schemas", "schemaless", "numeric"],
)
def test_json_converter_reads_what_kafka_reads(ref: KafkaReference, configs: dict[str, Any]) -> None:
    ours = JsonConverter()
    ours.configure(dict(configs), False)
    problems: list[str] = []
    for data in JSON_INPUTS:
        _round_trip(problems, ref, "input", JSON, configs, ours, data, False)
    assert not problems, report(problems)


def _no_bytes(value: Any) -> bool:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return False
    if isinstance(value, Struct):
        return all(_no_bytes(value.get_without_default(f.name)) for f in value.schema.fields())
    if isinstance(value, list):
        return all(_no_bytes(v) for v in value)
    if isinstance(value, dict):
        return all(_no_bytes(k) and _no_bytes(v) for k, v in value.items())
    return True


@pytest.mark.parametrize(
    "configs",
    [{}, {"converter.encoding": "UTF-16"}, {"converter.encoding": "ISO-8859-1"}],
    ids=["utf8", "utf16", "latin1"],
)
def test_string_converter(ref: KafkaReference, configs: dict[str, Any]) -> None:
    # byte[].toString() is "[B@<identity hash>" in Java: not comparable, left out.
    items = [c for c in cases(ref) if _no_bytes(c[2])]
    problems = run_converter(
        ref, "org.apache.kafka.connect.storage.StringConverter", StringConverter, configs, False, items
    )
    for data in (b"", b"abc", "h\u00e9llo \U0001f600".encode(), b"\xff\xfe\x00a", b"\xc3"):
        ours = StringConverter()
        ours.configure(dict(configs), False)
        _round_trip(
            problems, ref, "input", "org.apache.kafka.connect.storage.StringConverter", configs, ours, data, False
        )
    assert not problems, report(problems)


def test_byte_array_converter(ref: KafkaReference) -> None:
    problems = run_converter(
        ref, "org.apache.kafka.connect.converters.ByteArrayConverter", ByteArrayConverter, {}, False, cases(ref)
    )
    assert not problems, report(problems)


NUMBER_CONVERTERS = [
    pytest.param(ShortConverter, "ShortConverter", Schema.INT16_SCHEMA, id="short"),
    pytest.param(IntegerConverter, "IntegerConverter", Schema.INT32_SCHEMA, id="integer"),
    pytest.param(LongConverter, "LongConverter", Schema.INT64_SCHEMA, id="long"),
    pytest.param(FloatConverter, "FloatConverter", Schema.FLOAT32_SCHEMA, id="float"),
    pytest.param(DoubleConverter, "DoubleConverter", Schema.FLOAT64_SCHEMA, id="double"),
]
NUMBER_EXTRA = [
    ("schemaless/short-range", None, -32768),
    ("schemaless/int-range", None, 2**31 - 1),
    ("schemaless/out-of-int", None, 2**31),
    ("schemaless/tiny-float", None, 1e-45),
    ("schemaless/huge-float", None, 1e300),
    ("schemaless/nan", None, math.nan),
    ("schemaless/-inf", None, -math.inf),
    ("schemaless/neg-zero", None, -0.0),
]


@pytest.mark.parametrize(("ours_cls", "name", "own_schema"), NUMBER_CONVERTERS)
@pytest.mark.parametrize("is_key", [False, True], ids=["value", "key"])
def test_number_converter(ref: KafkaReference, ours_cls: type, name: str, own_schema: Schema, is_key: bool) -> None:
    java_class = f"org.apache.kafka.connect.converters.{name}"

    def lenient(schema: Schema | None, value: Any) -> Outcome | None:
        # Without a schema Kafka sees a Long or a Double (what the corpus' schemaless JSON
        # becomes in Java); Sluice accepts any Python int / float there, as the converter's
        # own type (a Java connector would have boxed it so). Compare with that.
        if schema is not None:
            return None
        return Outcome(ref.from_connect, java_class, {}, own_schema, value, is_key=is_key, topic=TOPIC)

    problems = run_converter(ref, java_class, ours_cls, {}, is_key, cases(ref, CORPUS + NUMBER_EXTRA), lenient=lenient)
    ours = ours_cls()
    ours.configure({}, is_key)
    for data in (
        None,
        b"",
        b"\x01",
        b"\x00\x01",
        b"\x7f\xff\xff\xff",
        b"\x80\x00\x00\x00\x00\x00\x00\x00",
        b"\xff" * 8,
        b"\x7f\xc0\x00\x00",
        b"\x7f\xf8\x00\x00\x00\x00\x00\x01",
        b"\x00" * 3,
    ):
        _round_trip(problems, ref, "input", java_class, {}, ours, data, is_key)
    # as a header converter too
    header = ours_cls()
    header.configure({})
    for label, schema, value in cases(ref):
        mine = Outcome(header.from_connect_header, TOPIC, "h", schema, value)
        theirs = Outcome(ref.from_connect_header, java_class, {}, schema, value, topic=TOPIC, header_key="h")
        if schema is None and mine.error is None and theirs.error is not None:
            theirs = Outcome(ref.from_connect_header, java_class, {}, own_schema, value, topic=TOPIC, header_key="h")
        if _check_pair(problems, f"{label} fromConnectHeader", mine, theirs) and mine.value is not None:
            _check_pair(
                problems,
                f"{label} toConnectHeader",
                Outcome(header.to_connect_header, TOPIC, "h", mine.value),
                Outcome(ref.to_connect_header, java_class, {}, mine.value, topic=TOPIC, header_key="h"),
                compare=same,
            )
    assert not problems, report(problems)


HEADER_INPUTS = [
    "",
    " ",
    "true",
    "false",
    "TRUE",
    " true ",
    "null",
    "42",
    " 42 ",
    "-129",
    "32768",
    "2147483648",
    "9223372036854775808",
    "123456789012345678901234567890",
    "1.5",
    "0.1",
    "-0.0",
    "1e3",
    "1E-50",
    "1e39",
    "1e400",
    "3.4028236e38",
    ".5",
    "+7",
    "12abc",
    "abc",
    "a,b",
    "a:b",
    "[1,2,3]",
    "[1, 1000, 100000]",
    "[1,2.5]",
    '[1,"a"]',
    "[]",
    "[null]",
    "[1,]",
    "[,1]",
    "[1",
    '{"a":1,"b":2}',
    '{"a":1,"b":"x"}',
    "{}",
    '{"a":}',
    "{1:2}",
    '{"k":[1,2]}',
    "2024-01-31",
    "13:45:30.123Z",
    "2024-01-31T13:45:30.123Z",
    '["2024-01-31"]',
    "2024-13-45",
    '{"a":true,"b":false}',
    '"quoted"',
    '["a\\"b"]',
    "x\\,y",
    "emoji 😀",
    "[true,false,null]",
    "1,2",
    '{"a":{"b":[1]}}',
]


def test_simple_header_converter(ref: KafkaReference) -> None:
    java_class = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
    ours = SimpleHeaderConverter()
    ours.configure({})
    problems: list[str] = []
    for label, schema, value in cases(ref):
        mine = Outcome(ours.from_connect_header, TOPIC, "h", schema, value)
        theirs = Outcome(ref.from_connect_header, java_class, {}, schema, value, topic=TOPIC, header_key="h")
        if _check_pair(problems, f"{label} fromConnectHeader", mine, theirs) and mine.value is not None:
            _check_pair(
                problems,
                f"{label} toConnectHeader({mine.value!r})",
                Outcome(ours.to_connect_header, TOPIC, "h", mine.value),
                Outcome(ref.to_connect_header, java_class, {}, mine.value, topic=TOPIC, header_key="h"),
                compare=same,
            )
    for text in HEADER_INPUTS:
        data = text.encode("utf-8")
        _check_pair(
            problems,
            f"toConnectHeader({text!r})",
            Outcome(ours.to_connect_header, TOPIC, "h", data),
            Outcome(ref.to_connect_header, java_class, {}, data, topic=TOPIC, header_key="h"),
            compare=same,
        )
    assert not problems, report(problems)


@pytest.mark.parametrize(
    ("java_class", "ours_cls"),
    [
        ("org.apache.kafka.connect.json.JsonConverter", JsonConverter),
        ("org.apache.kafka.connect.storage.StringConverter", StringConverter),
        ("org.apache.kafka.connect.converters.ByteArrayConverter", ByteArrayConverter),
    ],
    ids=["json", "string", "bytearray"],
)
def test_converters_as_header_converters(ref: KafkaReference, java_class: str, ours_cls: type) -> None:
    ours = ours_cls()
    ours.configure({})
    problems: list[str] = []
    for label, schema, value in cases(ref):
        if ours_cls is StringConverter and not _no_bytes(value):
            continue
        mine = Outcome(ours.from_connect_header, TOPIC, "h", schema, value)
        theirs = Outcome(ref.from_connect_header, java_class, {}, schema, value, topic=TOPIC, header_key="h")
        if _check_pair(problems, f"{label} fromConnectHeader", mine, theirs) and mine.value is not None:
            _check_pair(
                problems,
                f"{label} toConnectHeader",
                Outcome(ours.to_connect_header, TOPIC, "h", mine.value),
                Outcome(ref.to_connect_header, java_class, {}, mine.value, topic=TOPIC, header_key="h"),
                compare=same,
            )
    assert not problems, report(problems)


# ------------------------------------------------------------------------ the harness


def test_harness_reports_java_exceptions(ref: KafkaReference) -> None:
    with pytest.raises(JavaError) as info:
        ref.to_connect(JSON, {}, b"{not json")
    assert info.value.java_class == "org.apache.kafka.connect.errors.DataException"
    assert info.value.message.startswith("Converting byte[] to Kafka Connect data failed due to serialization error")
    assert any("JsonParseException" in c["class"] for c in info.value.causes)
    assert "at org.apache.kafka.connect.json.JsonConverter" in info.value.stacktrace

    with pytest.raises(JavaError) as info:
        ref.from_connect("org.example.NoSuchConverter", {}, None, "x")
    assert info.value.java_class == "java.lang.ClassNotFoundException"

    with pytest.raises(JavaError) as info:
        ref.from_connect(JSON, {"decimal.format": "HEX"}, None, "x")
    assert info.value.simple_class == "ConfigException"

    with pytest.raises(JavaError) as info:
        ref.request("noSuchOp")
    assert "Unknown op" in (info.value.message or "")

    # and it keeps serving
    assert ref.ping()["version"] == ref.kafka_version
    assert ref.from_connect(JSON, {"schemas.enable": "false"}, Schema.STRING_SCHEMA, "ok") == b'"ok"'


def test_harness_neutral_codec_round_trips_the_corpus(ref: KafkaReference) -> None:
    """What Python sends arrives in Java intact: decoded in the JVM, encoded again and
    decoded in Python, it is the value sent (NaN, -0.0, map order, bytes, non-string keys)."""
    problems: list[str] = []
    for label, schema, value in CORPUS:
        sent = SchemaAndValue(schema, value)
        back = Outcome(ref.echo, schema, value)
        if back.error is not None or not same(sent, back.value):
            problems.append(f"{label}: sent {show(sent)}, came back {back!r}")
    assert not problems, report(problems)


def test_harness_runs_kafka_transformations_and_predicates(ref: KafkaReference) -> None:
    from sluice.api.records import Headers, SinkRecord, SourceRecord, TimestampType

    value_schema = SchemaBuilder.struct().name("V").field("a", Schema.INT32_SCHEMA).build()
    headers = Headers().add("h1", 5, Schema.INT32_SCHEMA).add("h2", b"\x00\xff", None)
    sink = SinkRecord(
        "orders",
        3,
        Schema.STRING_SCHEMA,
        "k",
        value_schema,
        Struct(value_schema).put("a", 1),
        42,
        1700000000000,
        TimestampType.CREATE_TIME,
        headers,
    )

    out = ref.transform(
        "org.apache.kafka.connect.transforms.InsertField$Value",
        {"static.field": "origin", "static.value": "here", "topic.field": "t", "offset.field": "o"},
        sink,
    )
    assert isinstance(out, SinkRecord)
    assert (out.topic, out.kafka_partition, out.kafka_offset, out.timestamp) == ("orders", 3, 42, 1700000000000)
    assert out.timestamp_type == TimestampType.CREATE_TIME
    assert [f.name for f in out.value_schema.fields()] == ["a", "t", "o", "origin"]
    assert (out.value.get("a"), out.value.get("t"), out.value.get("o"), out.value.get("origin")) == (
        1,
        "orders",
        42,
        "here",
    )
    assert [(h.key, h.value, h.schema) for h in out.headers] == [
        ("h1", 5, Schema.INT32_SCHEMA),
        ("h2", b"\x00\xff", None),
    ]

    source = SourceRecord(
        {"file": "f"}, {"position": 7}, "raw", None, None, None, None, {"b": 1, "a": [1.5, None]}, None
    )
    routed = ref.transform(
        "org.apache.kafka.connect.transforms.RegexRouter", {"regex": "r(.*)", "replacement": "cooked-$1"}, source
    )
    assert isinstance(routed, SourceRecord)
    assert routed.topic == "cooked-aw"
    assert (routed.source_partition, routed.source_offset) == ({"file": "f"}, {"position": 7})
    assert routed.value == {"b": 1, "a": [1.5, None]} and list(routed.value) == ["b", "a"]

    assert ref.transform("org.apache.kafka.connect.transforms.Filter", {}, sink) is None

    assert (
        ref.predicate("org.apache.kafka.connect.transforms.predicates.TopicNameMatches", {"pattern": "ord.*"}, sink)
        is True
    )
    assert ref.predicate("org.apache.kafka.connect.transforms.predicates.HasHeaderKey", {"name": "h9"}, sink) is False
    assert ref.predicate("org.apache.kafka.connect.transforms.predicates.RecordIsTombstone", {}, source) is False

    with pytest.raises(JavaError) as info:
        ref.transform("org.apache.kafka.connect.transforms.ExtractField$Value", {"field": "nope"}, sink)
    assert info.value.simple_class == "IllegalArgumentException"
    with pytest.raises(JavaError) as info:
        ref.transform("org.apache.kafka.connect.transforms.Cast$Value", {"spec": "a:notatype"}, sink)
    assert info.value.simple_class == "ConfigException"
    with pytest.raises(JavaError) as info:
        ref.predicate("org.apache.kafka.connect.transforms.predicates.TopicNameMatches", {}, sink)
    assert info.value.simple_class == "ConfigException"
