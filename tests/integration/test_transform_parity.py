"""Sluice's transformations and predicates give what Apache Kafka Connect's own (4.3.1, in a
JVM through :class:`sluice_devtools.kafka_reference.KafkaReference`) give.

Every transformation class (both the ``$Key`` and the ``$Value`` variant where Kafka has
them) and every predicate is configured in several representative ways (:data:`CASES`).
Each configuration is applied to the records of a corpus — source and sink records;
schema'd keys and values (structs with nested structs, optional fields, defaults, arrays,
maps, Decimal, Date, Time, Timestamp, every primitive type) and schemaless ones (maps,
lists, primitives); null keys and values (tombstones); with and without headers; different
topics, partitions and timestamps — once by Sluice's class (instantiated directly,
``configure``, ``apply`` / ``test``) and once by Kafka's, and the outcomes must be the same:

* equal records: type, topic, partition, key schema and value, value schema and value,
  timestamp, headers (names, schemas, values), sink offset and timestamp type, source
  partition and offset; or both dropped; or both raised corresponding exceptions
  (:data:`ERROR_KINDS`); or, when Kafka's result cannot be carried back by the harness
  (JsonConverter refuses it), Sluice's result is refused by Sluice's JsonConverter as well;
* both accept a configuration, or both refuse it in ``configure`` (``test_configure``);
* Sluice leaves the input record untouched.

A test id names the transformation, the configuration and the record
(``Cast$Value[fields-int]-value:struct/person@sink``). Every known difference is listed in
:data:`KNOWN_DIFFERENCES` with its reason: deliberate ones are skipped, the others are
strict expected failures. About 6,000 comparisons; one JVM for the module; a few seconds.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from sluice.api.data import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp, Type, java_float_string
from sluice.api.errors import ConfigError, ConnectError, DataError
from sluice.api.records import ConnectRecord, Headers, SinkRecord, SourceRecord, TimestampType
from sluice.transforms import (
    cast,
    drop_headers,
    extract_field,
    flatten,
    header_from,
    hoist_field,
    insert_field,
    insert_header,
    mask_field,
    predicates,
    regex_router,
    replace_field,
    set_schema_metadata,
    timestamp_converter,
    timestamp_router,
    value_to_key,
)
from sluice.transforms import (
    filter as filter_,
)
from sluice_devtools.kafka_reference import JavaError, KafkaReference, encode_record

pytestmark = pytest.mark.integration

UTC = dt.UTC
T = "org.apache.kafka.connect.transforms."
P = T + "predicates."

# ------------------------------------------------------------------------------ schemas

GEO = (
    SchemaBuilder.struct()
    .name("com.example.Geo")
    .field("lat", Schema.FLOAT64_SCHEMA)
    .field("lon", Schema.FLOAT64_SCHEMA)
    .build()
)


def _address(optional: bool) -> Schema:
    b = (
        SchemaBuilder.struct()
        .name("com.example.Address")
        .version(1)
        .doc("where")
        .field("street", Schema.STRING_SCHEMA)
        .field("city", Schema.OPTIONAL_STRING_SCHEMA)
        .field("zip", SchemaBuilder.int32().optional().default_value(10115).build())
        .field("geo", GEO)
    )
    return (b.optional() if optional else b).build()


ADDRESS = _address(False)
OPT_ADDRESS = _address(True)
PRICE = Decimal.schema(2)


def _person(optional: bool) -> Schema:
    b = (
        SchemaBuilder.struct()
        .name("com.example.Person")
        .version(3)
        .doc("a person")
        .parameter("origin", "crm")
        .field("id", Schema.INT64_SCHEMA)
        .field("name", Schema.STRING_SCHEMA)
        .field("tiny", Schema.INT8_SCHEMA)
        .field("small", Schema.INT16_SCHEMA)
        .field("count", Schema.INT32_SCHEMA)
        .field("ratio", Schema.FLOAT32_SCHEMA)
        .field("score", Schema.FLOAT64_SCHEMA)
        .field("active", Schema.BOOLEAN_SCHEMA)
        .field("note", Schema.OPTIONAL_STRING_SCHEMA)
        .field("nick", SchemaBuilder.string().optional().default_value("anon").build())
        .field("level", SchemaBuilder.int32().optional().default_value(7).build())
        .field("raw", Schema.BYTES_SCHEMA)
        .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
        .field("address", ADDRESS)
        .field("alt_address", OPT_ADDRESS)
        .field("price", PRICE)
        .field("birthday", Date.SCHEMA)
        .field("wakeup", Time.SCHEMA)
        .field("created", Timestamp.SCHEMA)
        .field("created_text", Schema.STRING_SCHEMA)
        .field("created_unix", Schema.INT64_SCHEMA)
        .field("numeric_text", Schema.STRING_SCHEMA)
        .field("dotted.name", Schema.OPTIONAL_STRING_SCHEMA)
    )
    return (b.optional() if optional else b).build()


PERSON = _person(False)
OPT_PERSON = _person(True)
WITH_MAP = (
    SchemaBuilder.struct()
    .name("com.example.WithMap")
    .field("id", Schema.INT32_SCHEMA)
    .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
    .field("inner", ADDRESS)
    .build()
)
# (Every field with a default is optional: a required field left null cannot cross to the JVM,
# whose JsonConverter refuses it with replace.null.with.default=false.)
DEFAULTS = (
    SchemaBuilder.struct()
    .name("com.example.Defaults")
    .field("a", SchemaBuilder.int32().optional().default_value(1).build())
    .field("b", SchemaBuilder.string().optional().default_value("bee").build())
    .field("flag", SchemaBuilder.bool().optional().default_value(True).build())
    .field("when", Timestamp.builder().optional().default_value(dt.datetime(2020, 1, 1, tzinfo=UTC)).build())
    .field("amount", Decimal.builder(2).optional().default_value(decimal.Decimal("1.50")).build())
    .build()
)
EMPTY = SchemaBuilder.struct().name("com.example.Empty").build()
KEY = SchemaBuilder.struct().name("com.example.Key").field("id", Schema.INT64_SCHEMA).build()

# ------------------------------------------------------------------------------ values

CREATED = dt.datetime(2024, 1, 31, 13, 45, 0, 123000, tzinfo=UTC)
CREATED_MILLIS = 1706708700123


def _geo(lat: float, lon: float) -> Struct:
    return Struct(GEO).put("lat", lat).put("lon", lon)


def _addr(schema: Schema, street: str, city: str | None, zip_code: int | None = None) -> Struct:
    return Struct(schema).put("street", street).put("city", city).put("zip", zip_code).put("geo", _geo(52.52, 13.405))


def person(schema: Schema = PERSON, **overrides: Any) -> Struct:
    values: dict[str, Any] = {
        "id": 1001,
        "name": "Ada",
        "tiny": -7,
        "small": 300,
        "count": 70000,
        "ratio": 0.5,
        "score": 98.25,
        "active": True,
        "note": None,
        "nick": None,
        "level": 3,
        "raw": b"\x00\x01\xfe\xff",
        "tags": ["a", "b c"],
        "address": _addr(ADDRESS, "Unter den Linden 1", "Berlin"),
        "alt_address": None,
        "price": decimal.Decimal("12.34"),
        "birthday": dt.date(1990, 5, 17),
        "wakeup": dt.time(6, 30, 15, 250000),
        "created": CREATED,
        "created_text": "2024-01-31 13:45:00",
        "created_unix": CREATED_MILLIS,
        "numeric_text": "42",
        "dotted.name": "dots",
    }
    values.update(overrides)
    s = Struct(schema)
    for k, v in values.items():
        s.put(k, v)
    return s


PERSON_FULL = dict(
    note="likes math",
    nick="countess",
    level=None,
    alt_address=_addr(OPT_ADDRESS, "Main St 2", None, 12345),
    tags=[],
    active=False,
    ratio=-1.25,
    score=-0.0,
)
PERSON_OLD = dict(
    id=-1,
    name="",
    tiny=127,
    small=-32768,
    count=-(2**31),
    ratio=3.0e38,
    score=1e-300,
    price=decimal.Decimal("-0.01"),
    birthday=dt.date(1900, 1, 1),
    wakeup=dt.time(0, 0),
    created=dt.datetime(1969, 7, 20, 20, 17, 40, tzinfo=UTC),
    created_text="1969-07-20 20:17:40",
    created_unix=-14182940000,
    numeric_text="not a number",
    **{"dotted.name": None},
)

SCHEMALESS_MAP = {
    "id": 7,
    "name": "alice",
    "score": 2.5,
    "flag": True,
    "none": None,
    "tags": ["a", "b"],
    "nested": {"a": 1, "b": {"c": "deep", "d": [1, 2]}},
    "ts": CREATED_MILLIS,
    "text": "2024-01-31 13:45:00",
    "dotted.name": "dots",
    "count": "12",
}


@dataclass(frozen=True)
class Payload:
    label: str
    schema: Schema | None
    value: Any


def payloads() -> Iterator[Payload]:
    yield Payload("struct/person", PERSON, person())
    yield Payload("struct/person-full", PERSON, person(**PERSON_FULL))
    yield Payload("struct/person-old", PERSON, person(**PERSON_OLD))
    yield Payload("struct/opt-person", OPT_PERSON, person(OPT_PERSON, nick="n"))
    yield Payload("struct/opt-person-null", OPT_PERSON, None)
    yield Payload("struct/person-null", PERSON, None)
    yield Payload(
        "struct/with-map",
        WITH_MAP,
        Struct(WITH_MAP).put("id", 5).put("attrs", {"x": 1, "y": -2}).put("inner", _addr(ADDRESS, "Ring 3", "Wien")),
    )
    yield Payload("struct/defaults-null", DEFAULTS, Struct(DEFAULTS))
    yield Payload(
        "struct/defaults-set",
        DEFAULTS,
        Struct(DEFAULTS)
        .put("a", 2)
        .put("b", "bb")
        .put("flag", False)
        .put("when", CREATED)
        .put("amount", decimal.Decimal("9.99")),
    )
    yield Payload("struct/empty", EMPTY, Struct(EMPTY))
    yield Payload("int8", Schema.INT8_SCHEMA, -7)
    yield Payload("int16", Schema.INT16_SCHEMA, 300)
    yield Payload("int32", Schema.INT32_SCHEMA, 70000)
    yield Payload("int64", Schema.INT64_SCHEMA, CREATED_MILLIS)
    yield Payload("int64/negative", Schema.INT64_SCHEMA, -86_400_001)
    yield Payload("float32", Schema.FLOAT32_SCHEMA, 1.5)
    yield Payload("float64", Schema.FLOAT64_SCHEMA, -2.25e10)
    yield Payload("float64/nan", Schema.FLOAT64_SCHEMA, math.nan)
    yield Payload("float64/tiny", Schema.FLOAT64_SCHEMA, 1e-5)
    yield Payload("float64/1e7", Schema.FLOAT64_SCHEMA, 1e7)
    yield Payload("float32/-inf", Schema.FLOAT32_SCHEMA, -math.inf)
    yield Payload("float32/min-normal", Schema.FLOAT32_SCHEMA, 1.1754943508222875e-38)
    yield Payload("boolean", Schema.BOOLEAN_SCHEMA, True)
    yield Payload("string", Schema.STRING_SCHEMA, "hello")
    yield Payload("string/int", Schema.STRING_SCHEMA, "42")
    yield Payload("string/float", Schema.STRING_SCHEMA, "1.5")
    yield Payload("string/true", Schema.STRING_SCHEMA, "TRUE")
    yield Payload("string/timestamp", Schema.STRING_SCHEMA, "2024-01-31 13:45:00")
    yield Payload("string/iso-zone", Schema.STRING_SCHEMA, "2024-01-31T13:45:00+02:00")
    yield Payload("string/padded", Schema.STRING_SCHEMA, " 42 ")
    yield Payload("string/special-number", Schema.STRING_SCHEMA, "NaN")
    yield Payload("string/huge-number", Schema.STRING_SCHEMA, "1e400")
    yield Payload("string/hex-float", Schema.STRING_SCHEMA, "0x1p3")
    yield Payload("string/plus", Schema.STRING_SCHEMA, "+7")
    yield Payload("string/arabic-digit", Schema.STRING_SCHEMA, "\u0663")
    yield Payload("string/lenient-timestamp", Schema.STRING_SCHEMA, "2024-13-45 25:61:00")
    yield Payload("string/trailing-text", Schema.STRING_SCHEMA, "2024-01-31 13:45:00 and more")
    yield Payload("string/compact", Schema.STRING_SCHEMA, "20240131134500")
    yield Payload("string/compact-short", Schema.STRING_SCHEMA, "2024013113")
    yield Payload("string/named", Schema.STRING_SCHEMA, "Wed, 31 Jan 2024 01:45 PM UTC")
    yield Payload("string/named-long", Schema.STRING_SCHEMA, "1:45 pm, January 31 2024")
    yield Payload("string/dotted", Schema.STRING_SCHEMA, "31.01.24 13:45")
    yield Payload("string/iso-offset", Schema.STRING_SCHEMA, "2024-01-31T13:45:00.123+0530")
    yield Payload("string/day-of-year", Schema.STRING_SCHEMA, "366 2024")
    yield Payload("string/blanks", Schema.STRING_SCHEMA, "2024-01-31  \t13:45:00")
    yield Payload("string/time", Schema.STRING_SCHEMA, "13:45:30.123Z")
    yield Payload("bytes", Schema.BYTES_SCHEMA, b"\x00\x01\xfe")
    yield Payload("decimal", PRICE, decimal.Decimal("12.34"))
    yield Payload("decimal/big", Decimal.schema(0), decimal.Decimal("-123456789012345678901"))
    yield Payload("decimal/negative-scale", Decimal.schema(-2), decimal.Decimal("1.2E+3"))
    yield Payload("date", Date.SCHEMA, dt.date(2024, 2, 29))
    yield Payload("date/1500", Date.SCHEMA, dt.date(1500, 3, 1))
    yield Payload("time", Time.SCHEMA, dt.time(13, 45, 30, 123000))
    yield Payload("timestamp", Timestamp.SCHEMA, CREATED)
    yield Payload("timestamp/pre-epoch", Timestamp.SCHEMA, dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC))
    yield Payload("timestamp/1500", Timestamp.SCHEMA, dt.datetime(1500, 3, 1, 12, 0, tzinfo=UTC))
    yield Payload("array", SchemaBuilder.array(Schema.INT32_SCHEMA).build(), [1, 2, 3])
    yield Payload("map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(), {"a": 1, "b": 2})
    yield Payload("optional-int32/null", Schema.OPTIONAL_INT32_SCHEMA, None)
    yield Payload("string-default/null", SchemaBuilder.string().optional().default_value("dflt").build(), None)
    yield Payload("schemaless/map", None, SCHEMALESS_MAP)
    yield Payload(
        "schemaless/map-odd",
        None,
        {
            "empty": {},
            "bytes": b"\x01",
            "huge": 1.5e300,
            "neg": -0.0,
            "deep": {"x": {"y": {"z": None}}},
            "maps": [{"a": 1}],
            "ключ": "значение",
            "id": "not-a-number",
            "name": None,
            "ts": "1706708700123",
        },
    )
    yield Payload("schemaless/map-int-keys", None, {1: "one", 2: "two"})
    yield Payload("schemaless/list", None, [1, "a", None])
    yield Payload("schemaless/string", None, "hello")
    yield Payload("schemaless/string-timestamp", None, "2024-01-31 13:45:00")
    yield Payload("schemaless/int", None, CREATED_MILLIS)
    yield Payload("schemaless/float", None, 2.5)
    yield Payload("schemaless/bool", None, False)
    yield Payload("schemaless/bytes", None, b"\x00raw")
    yield Payload("null", None, None)


PAYLOADS = list(payloads())

# ------------------------------------------------------------------------------ records

TOPICS = ["orders", "orders.eu-west", "Customers_2024", "logs"]
TIMESTAMPS = [CREATED_MILLIS, None, 0, -1000, 253402300799999]
SINK_TIMESTAMP_TYPES = [TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME]


def _headers(i: int) -> Headers:
    variant = i % 4
    if variant == 0:
        return Headers()
    if variant == 1:
        return Headers().add("trace", "abc-123", Schema.STRING_SCHEMA)
    if variant == 2:
        return (
            Headers()
            .add("n", 5, Schema.INT32_SCHEMA)
            .add("trace", b"\x01\x02", None)
            .add("trace", None, None)
            .add("h_id", "old", Schema.OPTIONAL_STRING_SCHEMA)
        )
    return Headers().add("where", _addr(ADDRESS, "Hdr 1", "Oslo"), ADDRESS).add("list", [1, 2], None)


OTHER_KEYS: list[tuple[Schema | None, Any]] = [
    (None, None),
    (Schema.STRING_SCHEMA, "k-1"),
    (KEY, Struct(KEY).put("id", 99)),
    (None, 42),
    (None, {"kid": 1}),
]
OTHER_VALUES: list[tuple[Schema | None, Any]] = [
    (Schema.STRING_SCHEMA, "v"),
    (None, None),
    (None, {"vid": 2}),
    (Schema.OPTIONAL_STRING_SCHEMA, None),
]


@dataclass(frozen=True)
class RecordCase:
    """A record of the corpus; ``make`` builds a fresh copy (transforms get their own)."""

    label: str
    make: Callable[[], SourceRecord | SinkRecord]
    payload: str = ""
    side: str = ""  # "key" or "value": where the payload sits


def _record(i: int, key: tuple[Schema | None, Any], value: tuple[Schema | None, Any]) -> Callable[[], ConnectRecord]:
    topic = TOPICS[(i // 2) % len(TOPICS)]
    timestamp = TIMESTAMPS[i % len(TIMESTAMPS)]
    if i % 2 == 0:

        def make() -> SinkRecord:
            ts_type = TimestampType.NO_TIMESTAMP_TYPE if timestamp is None else SINK_TIMESTAMP_TYPES[(i // 2) % 2]
            return SinkRecord(
                topic,
                (i // 2) % 4,
                key[0],
                key[1],
                value[0],
                value[1],
                1000 + 7 * i,
                timestamp,
                ts_type,
                _headers(i // 2),
            )
    else:

        def make() -> SourceRecord:
            partition = None if i % 3 == 0 else i % 5
            return SourceRecord(
                {"file": f"f{i % 3}"},
                {"position": i},
                topic,
                partition,
                key[0],
                key[1],
                value[0],
                value[1],
                timestamp,
                _headers(i // 2),
            )

    return make


def _kind(make: Callable[[], ConnectRecord]) -> str:
    return "sink" if isinstance(make(), SinkRecord) else "source"


def value_records() -> list[RecordCase]:
    out = []
    for i, p in enumerate(PAYLOADS):
        make = _record(i, OTHER_KEYS[i % len(OTHER_KEYS)], (p.schema, p.value))
        out.append(RecordCase(f"value:{p.label}@{_kind(make)}", make, p.label, "value"))
    return out


def key_records() -> list[RecordCase]:
    out = []
    for i, p in enumerate(PAYLOADS):
        make = _record(i + 1, (p.schema, p.value), OTHER_VALUES[i % len(OTHER_VALUES)])
        out.append(RecordCase(f"key:{p.label}@{_kind(make)}", make, p.label, "key"))
    return out


VALUE_RECORDS = value_records()
KEY_RECORDS = key_records()

# A configuration that works on fields is applied to every struct and schemaless map, and to
# a few other payloads (nulls, a primitive, a logical type, an array, a map, a schemaless list
# and number) to compare how both refuse them; a whole-key/value configuration to everything.
FIELD_PAYLOADS = {p.label for p in PAYLOADS if p.label.startswith(("struct/", "schemaless/map"))} | {
    "null",
    "optional-int32/null",
    "int32",
    "timestamp",
    "array",
    "map",
    "schemaless/list",
    "schemaless/int",
}
# The transformations and predicates that look at the record rather than at its key or
# value get records with every combination of kind, topic, partition, timestamp and headers
# (the first 20 of the corpus), tombstones and null keys, and a few with the payload as key.
ENVELOPE_RECORDS = (
    VALUE_RECORDS[:20]
    + [
        r
        for r in VALUE_RECORDS[20:]
        if r.payload in ("null", "optional-int32/null", "schemaless/map", "schemaless/bytes")
    ]
    + KEY_RECORDS[:4]
)

# ------------------------------------------------------------------------------ cases


@dataclass(frozen=True)
class Case:
    """One transformation (or predicate) configuration."""

    java_class: str
    ours: type
    configs: dict[str, str]
    label: str
    invalid: bool = False  # configure must fail on both sides
    records: str = "value"  # which records: "value"/"key" (the payload as value/key), "envelope" or "few"
    predicate: bool = False
    whole: bool = False  # works on the whole key or value: every payload, else FIELD_PAYLOADS
    only: tuple[str, ...] = ()  # if set, just the payloads whose labels start with one of these

    @property
    def short(self) -> str:
        return self.java_class.rsplit(".", 1)[-1]

    @property
    def id(self) -> str:
        return f"{self.short}[{self.label}]"


CASES: list[Case] = []


def kv(
    name: str,
    module: Any,
    label: str,
    configs: dict[str, str],
    invalid: bool = False,
    whole: bool = False,
    only: tuple[str, ...] = (),
) -> None:
    """A configuration of a $Key/$Value transformation, for both variants."""
    base = name.split("$")[0]
    for side, suffix in (("value", "Value"), ("key", "Key")):
        ours = getattr(module, f"{base}{suffix}")
        CASES.append(Case(f"{T}{base}${suffix}", ours, configs, label, invalid, side, whole=whole, only=only))


def single(
    name: str, ours: type, label: str, configs: dict[str, str], invalid: bool = False, records: str = "envelope"
) -> None:
    CASES.append(Case(T + name, ours, configs, label, invalid, records))


def pred(name: str, ours: type, label: str, configs: dict[str, str], invalid: bool = False) -> None:
    CASES.append(Case(P + name, ours, configs, label, invalid, "envelope", predicate=True))


# Cast: the whole key/value to every target type, and fields of structs and maps
for target in ("int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string"):
    kv("Cast", cast, f"whole-{target}", {"spec": target}, whole=True)
kv("Cast", cast, "whole-upper", {"spec": " INT32 "}, whole=True)
kv(
    "Cast",
    cast,
    "fields-int",
    {"spec": "tiny:int16,small:int8,count:int8,score:int32,ratio:int64,active:int32,numeric_text:int64,id:int16"},
)
kv(
    "Cast",
    cast,
    "fields-float",
    {
        "spec": "tiny:float32,count:float64,score:float32,ratio:float64,active:float64,"
        "numeric_text:float32,level:float64"
    },
)
kv("Cast", cast, "fields-bool", {"spec": "id:boolean,score:boolean,name:boolean,tiny:boolean,nick:boolean"})
kv(
    "Cast",
    cast,
    "fields-string",
    {
        "spec": "id:string,ratio:string,score:string,active:string,raw:string,"
        "price:string,birthday:string,wakeup:string,created:string"
    },
)
kv("Cast", cast, "fields-logical-to-numbers", {"spec": "price:float64,birthday:int32,wakeup:int64,created:int64"})
kv("Cast", cast, "fields-defaults", {"spec": "nick:int8,level:string,a:string,b:boolean,when:int64,amount:int32"})
kv(
    "Cast",
    cast,
    "fields-defaults-kept-null",
    {"spec": "level:string,a:float32,flag:int8", "replace.null.with.default": "false"},
)
kv(
    "Cast",
    cast,
    "fields-schemaless",
    {"spec": "id:string,score:int32,flag:string,count:int64,ts:float32,none:int8,missing:string"},
)
kv("Cast", cast, "fields-schemaless-unsupported", {"spec": "nested:string"})
kv("Cast", cast, "fields-schemaless-list", {"spec": "tags:int8"})
kv("Cast", cast, "fields-struct-target", {"spec": "address:string"})
kv("Cast", cast, "fields-array", {"spec": "tags:string"})
kv("Cast", cast, "spaces", {"spec": " count : int64 , name : string "})
kv("Cast", cast, "invalid-empty", {"spec": ""}, invalid=True)
kv("Cast", cast, "invalid-type", {"spec": "a:notatype"}, invalid=True)
kv("Cast", cast, "invalid-bytes", {"spec": "a:bytes"}, invalid=True)
kv("Cast", cast, "invalid-whole-and-field", {"spec": "int8,a:int16"}, invalid=True)
kv("Cast", cast, "invalid-three-parts", {"spec": "a:b:int8"}, invalid=True)
kv("Cast", cast, "invalid-missing", {}, invalid=True)

# ExtractField
kv("ExtractField", extract_field, "name", {"field": "name"})
kv("ExtractField", extract_field, "struct", {"field": "address"})
kv("ExtractField", extract_field, "default", {"field": "nick"})
kv("ExtractField", extract_field, "default-kept-null", {"field": "nick", "replace.null.with.default": "false"})
kv("ExtractField", extract_field, "dotted-v1", {"field": "dotted.name"})
kv("ExtractField", extract_field, "nested-v1", {"field": "address.city"})
kv("ExtractField", extract_field, "nested-v2", {"field": "address.city", "field.syntax.version": "V2"})
kv("ExtractField", extract_field, "deep-v2", {"field": "address.geo.lat", "field.syntax.version": "v2"})
kv("ExtractField", extract_field, "null-parent-v2", {"field": "alt_address.zip", "field.syntax.version": "V2"})
kv("ExtractField", extract_field, "backticks-v2", {"field": "`dotted.name`", "field.syntax.version": "V2"})
kv("ExtractField", extract_field, "schemaless-v2", {"field": "nested.b.c", "field.syntax.version": "V2"})
kv("ExtractField", extract_field, "schemaless-list-v2", {"field": "tags.a", "field.syntax.version": "V2"})
kv("ExtractField", extract_field, "map-in-struct-v2", {"field": "attrs.x", "field.syntax.version": "V2"})
kv("ExtractField", extract_field, "missing", {"field": "missing"})
kv("ExtractField", extract_field, "missing-v2", {"field": "address.missing", "field.syntax.version": "V2"})
kv("ExtractField", extract_field, "invalid-version", {"field": "a", "field.syntax.version": "V3"}, invalid=True)
kv("ExtractField", extract_field, "invalid-missing", {}, invalid=True)
kv("ExtractField", extract_field, "invalid-backtick", {"field": "`a.b", "field.syntax.version": "V2"}, invalid=True)

# Flatten
kv("Flatten", flatten, "default", {})
kv("Flatten", flatten, "underscore", {"delimiter": "_"})
kv("Flatten", flatten, "long-delimiter", {"delimiter": "::"})

# HoistField
kv("HoistField", hoist_field, "wrapped", {"field": "wrapped"}, whole=True)
kv("HoistField", hoist_field, "dotted", {"field": "a.b"}, whole=True)
kv("HoistField", hoist_field, "invalid-missing", {}, invalid=True)

# InsertField
kv(
    "InsertField",
    insert_field,
    "all-optional",
    {
        "topic.field": "t",
        "partition.field": "p",
        "offset.field": "o",
        "timestamp.field": "ts",
        "static.field": "s",
        "static.value": "fixed",
    },
)
kv(
    "InsertField",
    insert_field,
    "all-required",
    {
        "topic.field": "t!",
        "partition.field": "p!",
        "timestamp.field": "ts!",
        "static.field": "s!",
        "static.value": "fixed",
    },
)
kv(
    "InsertField",
    insert_field,
    "question-marks",
    {"topic.field": "t?", "partition.field": "p?", "timestamp.field": "ts?", "static.field": "s?", "static.value": "v"},
)
kv("InsertField", insert_field, "offset-required", {"offset.field": "o!"})
kv("InsertField", insert_field, "topic-only", {"topic.field": "topic"})
kv("InsertField", insert_field, "existing-name", {"static.field": "name", "static.value": "dup"})
kv(
    "InsertField",
    insert_field,
    "static-kept-null",
    {"static.field": "s", "static.value": "v", "replace.null.with.default": "false"},
)
kv("InsertField", insert_field, "invalid-nothing", {}, invalid=True)
kv("InsertField", insert_field, "invalid-no-static-value", {"static.field": "s"}, invalid=True)

# MaskField
kv("MaskField", mask_field, "primitives", {"fields": "id,name,tiny,small,count,ratio,score,active,note,nick"})
kv("MaskField", mask_field, "logical", {"fields": "price,birthday,wakeup,created,amount,when"})
kv("MaskField", mask_field, "containers", {"fields": "tags,attrs"})
kv("MaskField", mask_field, "struct", {"fields": "address"})
kv("MaskField", mask_field, "bytes", {"fields": "raw"})
kv("MaskField", mask_field, "replacement-number", {"fields": "count,score,name,tiny,id", "replacement": "0"})
kv("MaskField", mask_field, "replacement-decimal", {"fields": "price,ratio,score", "replacement": "12.5"})
kv("MaskField", mask_field, "replacement-text", {"fields": "name,note", "replacement": "***"})
kv("MaskField", mask_field, "replacement-bad-number", {"fields": "count", "replacement": "abc"})
kv("MaskField", mask_field, "replacement-overflow", {"fields": "tiny,small,count,ratio", "replacement": "100000"})
kv("MaskField", mask_field, "replacement-exponent", {"fields": "id,count,score,price", "replacement": "1e3"})
kv("MaskField", mask_field, "replacement-padded", {"fields": "count,name", "replacement": " 7 "})
kv("MaskField", mask_field, "replacement-boolean", {"fields": "active", "replacement": "true"})
kv("MaskField", mask_field, "replacement-date", {"fields": "birthday", "replacement": "2020-01-01"})
kv("MaskField", mask_field, "schemaless", {"fields": "id,name,flag,score,tags,nested,none,missing"})
kv("MaskField", mask_field, "schemaless-replacement", {"fields": "id,name,score,ts", "replacement": "99"})
kv("MaskField", mask_field, "defaults-kept-null", {"fields": "nick,level,a,b", "replace.null.with.default": "false"})
kv("MaskField", mask_field, "defaults", {"fields": "nick,level,a,b"})
kv("MaskField", mask_field, "duplicates", {"fields": "name,name"})
kv("MaskField", mask_field, "invalid-empty", {"fields": ""}, invalid=True)
kv("MaskField", mask_field, "invalid-replacement", {"fields": "a", "replacement": ""}, invalid=True)

# ReplaceField
kv("ReplaceField", replace_field, "exclude", {"exclude": "raw,tags,attrs,b"})
kv("ReplaceField", replace_field, "include", {"include": "id,name,address,a"})
kv("ReplaceField", replace_field, "renames", {"renames": "id:person_id,name:full_name,a:aa"})
kv(
    "ReplaceField",
    replace_field,
    "combined",
    {"include": "id,name,note,nick,flag,b", "exclude": "note", "renames": "nick:alias,b:bee"},
)
kv(
    "ReplaceField",
    replace_field,
    "defaults-kept-null",
    {"include": "nick,level,a,b", "replace.null.with.default": "false"},
)
kv("ReplaceField", replace_field, "missing", {"exclude": "missing", "renames": "missing:other"})
kv("ReplaceField", replace_field, "rename-onto-existing", {"renames": "id:name"})
kv("ReplaceField", replace_field, "rename-trailing-colon", {"renames": "id:ident:"})
kv("ReplaceField", replace_field, "rename-collision", {"renames": "id:x,name:x"})
kv("ReplaceField", replace_field, "deprecated-blacklist", {"blacklist": "raw,tags"})
kv("ReplaceField", replace_field, "invalid-rename", {"renames": "nocolon"}, invalid=True)
# Kafka 4.x drops repeated list items (with a warning) before validating the list
kv("ReplaceField", replace_field, "duplicates", {"exclude": "raw,raw,b"})

# SetSchemaMetadata
kv("SetSchemaMetadata", set_schema_metadata, "name", {"schema.name": "com.example.Renamed"}, whole=True)
kv("SetSchemaMetadata", set_schema_metadata, "version", {"schema.version": "9"}, whole=True)
kv("SetSchemaMetadata", set_schema_metadata, "both", {"schema.name": "x.Y", "schema.version": "1"}, whole=True)
kv(
    "SetSchemaMetadata",
    set_schema_metadata,
    "kept-null",
    {"schema.name": "x.Y", "replace.null.with.default": "false"},
    whole=True,
)
kv("SetSchemaMetadata", set_schema_metadata, "invalid-nothing", {}, invalid=True)
kv("SetSchemaMetadata", set_schema_metadata, "invalid-version", {"schema.version": "one"}, invalid=True)

# TimestampConverter: the whole key/value and fields, to each target type
ISO = "yyyy-MM-dd'T'HH:mm:ss.SSSZ"
TEXT = "yyyy-MM-dd HH:mm:ss"
kv("TimestampConverter", timestamp_converter, "to-string", {"target.type": "string", "format": ISO}, whole=True)
kv(
    "TimestampConverter",
    timestamp_converter,
    "to-string-names",
    {"target.type": "string", "format": "EEE, d MMM yyyy hh:mm a z"},
    whole=True,
)
for i, pattern in enumerate(
    [
        "yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
        "yy/M/d H:m:s.S",
        "EEEE MMMM dd yyyy KK:mm a",
        "D 'day' HH 'o''clock'",
        "yyyyMMddHHmmssSSS",
        "hh 'h' k K u",
        "zzzz Z X XX",
        "MMM d, ''yy",
    ]
):
    kv(
        "TimestampConverter",
        timestamp_converter,
        f"to-string-{i}",
        {"target.type": "string", "format": pattern},
        whole=True,
    )
kv("TimestampConverter", timestamp_converter, "to-unix", {"target.type": "unix"}, whole=True)
for precision in ("seconds", "microseconds", "nanoseconds"):
    kv(
        "TimestampConverter",
        timestamp_converter,
        f"to-unix-{precision}",
        {"target.type": "unix", "unix.precision": precision},
        whole=True,
    )
kv("TimestampConverter", timestamp_converter, "to-date", {"target.type": "Date"}, whole=True)
kv("TimestampConverter", timestamp_converter, "to-time", {"target.type": "Time"}, whole=True)
kv("TimestampConverter", timestamp_converter, "to-timestamp", {"target.type": "Timestamp"}, whole=True)
kv(
    "TimestampConverter",
    timestamp_converter,
    "parse-to-timestamp",
    {"target.type": "Timestamp", "format": TEXT},
    whole=True,
)
# parsing: every string payload through patterns Sluice's SimpleDateFormat must read as Java's does
TEXT_PATTERNS = [
    "yyyyMMddHHmmss",
    "EEE, d MMM yyyy hh:mm a z",
    "dd.MM.yy HH:mm",
    "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
    "D yyyy",
    "h:mm a, MMMM d yyyy",
    "yyyy-MM-dd",
    "yyyyMMddHHmmssSSS",
    "HH:mm:ss.SSS'Z'",
]
for i, pattern in enumerate(TEXT_PATTERNS):
    kv(
        "TimestampConverter",
        timestamp_converter,
        f"parse-{i}",
        {"target.type": "unix", "format": pattern},
        only=("string", "schemaless/string"),
    )
kv(
    "TimestampConverter",
    timestamp_converter,
    "unix-seconds-to-timestamp",
    {"target.type": "Timestamp", "unix.precision": "seconds"},
    whole=True,
)
kv(
    "TimestampConverter",
    timestamp_converter,
    "parse-iso-zone",
    {"target.type": "Timestamp", "format": "yyyy-MM-dd'T'HH:mm:ssXXX"},
    whole=True,
)
kv(
    "TimestampConverter",
    timestamp_converter,
    "parse-to-unix-seconds",
    {"target.type": "unix", "format": TEXT, "unix.precision": "seconds"},
    whole=True,
)
kv(
    "TimestampConverter",
    timestamp_converter,
    "field-created-string",
    {"field": "created", "target.type": "string", "format": TEXT},
)
kv(
    "TimestampConverter",
    timestamp_converter,
    "field-unix-timestamp",
    {"field": "created_unix", "target.type": "Timestamp"},
)
kv(
    "TimestampConverter",
    timestamp_converter,
    "field-unix-micros-date",
    {"field": "created_unix", "target.type": "Date", "unix.precision": "microseconds"},
)
kv(
    "TimestampConverter",
    timestamp_converter,
    "field-text-unix",
    {"field": "created_text", "target.type": "unix", "format": TEXT},
)
kv(
    "TimestampConverter",
    timestamp_converter,
    "field-birthday-timestamp",
    {"field": "birthday", "target.type": "Timestamp"},
)
kv("TimestampConverter", timestamp_converter, "field-wakeup-unix", {"field": "wakeup", "target.type": "unix"})
kv("TimestampConverter", timestamp_converter, "field-created-date", {"field": "created", "target.type": "Date"})
kv("TimestampConverter", timestamp_converter, "field-created-time", {"field": "created", "target.type": "Time"})
kv("TimestampConverter", timestamp_converter, "field-default", {"field": "when", "target.type": "unix"})
kv(
    "TimestampConverter",
    timestamp_converter,
    "field-default-kept-null",
    {"field": "when", "target.type": "unix", "replace.null.with.default": "false"},
)
kv("TimestampConverter", timestamp_converter, "field-name-not-timestamp", {"field": "name", "target.type": "unix"})
kv(
    "TimestampConverter",
    timestamp_converter,
    "schemaless-ts-string",
    {"field": "ts", "target.type": "string", "format": "yyyy/MM/dd"},
)
kv(
    "TimestampConverter",
    timestamp_converter,
    "schemaless-text-timestamp",
    {"field": "text", "target.type": "Timestamp", "format": TEXT},
)
kv("TimestampConverter", timestamp_converter, "schemaless-missing", {"field": "missing", "target.type": "unix"})
kv("TimestampConverter", timestamp_converter, "invalid-target", {"target.type": "bogus"}, invalid=True)
kv("TimestampConverter", timestamp_converter, "invalid-no-format", {"target.type": "string"}, invalid=True)
kv(
    "TimestampConverter",
    timestamp_converter,
    "invalid-format",
    {"target.type": "string", "format": "yyyy-MM-dd'"},
    invalid=True,
)
kv(
    "TimestampConverter",
    timestamp_converter,
    "invalid-format-letter",
    {"target.type": "string", "format": "yyyy-bb"},
    invalid=True,
)
kv(
    "TimestampConverter",
    timestamp_converter,
    "invalid-precision",
    {"target.type": "unix", "unix.precision": "days"},
    invalid=True,
)

# ValueToKey
single("ValueToKey", value_to_key.ValueToKey, "id", {"fields": "id"}, records="value")
single("ValueToKey", value_to_key.ValueToKey, "several", {"fields": "id,name,address"}, records="value")
single("ValueToKey", value_to_key.ValueToKey, "default", {"fields": "nick,a"}, records="value")
single(
    "ValueToKey",
    value_to_key.ValueToKey,
    "default-kept-null",
    {"fields": "nick,a", "replace.null.with.default": "false"},
    records="value",
)
single("ValueToKey", value_to_key.ValueToKey, "schemaless", {"fields": "id,nested,missing"}, records="value")
single("ValueToKey", value_to_key.ValueToKey, "missing", {"fields": "missing"}, records="value")
single("ValueToKey", value_to_key.ValueToKey, "duplicates", {"fields": "id,id"}, records="value")
single("ValueToKey", value_to_key.ValueToKey, "invalid-empty", {"fields": ""}, invalid=True, records="value")

# DropHeaders
single("DropHeaders", drop_headers.DropHeaders, "trace", {"headers": "trace"})
single("DropHeaders", drop_headers.DropHeaders, "several", {"headers": "trace,n,where"})
single("DropHeaders", drop_headers.DropHeaders, "absent", {"headers": "absent"})
single("DropHeaders", drop_headers.DropHeaders, "duplicates", {"headers": "trace,trace"})
single("DropHeaders", drop_headers.DropHeaders, "invalid-empty", {"headers": ""}, invalid=True)

# Filter
single("Filter", filter_.Filter, "drop", {})

# HeaderFrom
kv("HeaderFrom", header_from, "copy", {"fields": "id,name", "headers": "h_id,h_name", "operation": "copy"})
kv("HeaderFrom", header_from, "move", {"fields": "id,address", "headers": "h_id,h_addr", "operation": "move"})
kv("HeaderFrom", header_from, "move-defaults", {"fields": "nick,a", "headers": "h_nick,h_a", "operation": "move"})
kv(
    "HeaderFrom",
    header_from,
    "copy-kept-null",
    {"fields": "nick,a", "headers": "h_nick,h_a", "operation": "copy", "replace.null.with.default": "false"},
)
kv("HeaderFrom", header_from, "same-header-twice", {"fields": "id,tiny", "headers": "h,h", "operation": "copy"})
kv("HeaderFrom", header_from, "missing", {"fields": "missing", "headers": "h", "operation": "copy"})
kv(
    "HeaderFrom",
    header_from,
    "schemaless-move",
    {"fields": "nested,none,missing", "headers": "a,b,c", "operation": "move"},
)
kv("HeaderFrom", header_from, "invalid-counts", {"fields": "a,b", "headers": "h", "operation": "copy"}, invalid=True)
kv("HeaderFrom", header_from, "invalid-operation", {"fields": "a", "headers": "h", "operation": "steal"}, invalid=True)

# InsertHeader
for i, literal in enumerate(
    [
        "hello",
        "42",
        "-129",
        "1.5",
        "true",
        "null",
        "[1,2,3]",
        '[1,"a"]',
        '{"a":1,"b":2}',
        "2024-01-31",
        "13:45:30.123Z",
        "2024-01-31T13:45:30.123Z",
        "",
        "  spaced  ",
        "12345678901234567890",
    ]
):
    single(
        "InsertHeader",
        insert_header.InsertHeader,
        f"literal-{i}",
        {"header": "added", "value.literal": literal},
        records="few",
    )
single("InsertHeader", insert_header.InsertHeader, "existing-name", {"header": "trace", "value.literal": "again"})
single("InsertHeader", insert_header.InsertHeader, "invalid-missing", {"header": "h"}, invalid=True)

# RegexRouter
single("RegexRouter", regex_router.RegexRouter, "swap", {"regex": "(\\w+)\\.(.*)", "replacement": "$2.$1"})
single("RegexRouter", regex_router.RegexRouter, "literal", {"regex": "orders", "replacement": "archive"})
single("RegexRouter", regex_router.RegexRouter, "partial", {"regex": "eu", "replacement": "us"})
single(
    "RegexRouter",
    regex_router.RegexRouter,
    "named",
    {"regex": "(?<first>[A-Za-z]+)[_.].*", "replacement": "${first}-x"},
)
single("RegexRouter", regex_router.RegexRouter, "whole", {"regex": ".*", "replacement": "prefix-$0"})
single("RegexRouter", regex_router.RegexRouter, "escaped", {"regex": "(l)ogs", "replacement": "\\$1-$1"})
single("RegexRouter", regex_router.RegexRouter, "bad-group", {"regex": "(logs)", "replacement": "$2"})
single("RegexRouter", regex_router.RegexRouter, "trailing-backslash", {"regex": "logs", "replacement": "x\\"})
single("RegexRouter", regex_router.RegexRouter, "invalid-regex", {"regex": "(", "replacement": "x"}, invalid=True)
single("RegexRouter", regex_router.RegexRouter, "invalid-missing", {"regex": "x"}, invalid=True)

# TimestampRouter
single("TimestampRouter", timestamp_router.TimestampRouter, "default", {})
single(
    "TimestampRouter",
    timestamp_router.TimestampRouter,
    "custom",
    {"topic.format": "${timestamp}_${topic}_${topic}", "timestamp.format": "yyyy-MM-dd'T'HH.mm.ss.SSS"},
)
single(
    "TimestampRouter",
    timestamp_router.TimestampRouter,
    "weeks",
    {"topic.format": "${topic}.${timestamp}", "timestamp.format": "YYYY-ww-u-F-W-k-K-S-G"},
)
single(
    "TimestampRouter",
    timestamp_router.TimestampRouter,
    "names",
    {"topic.format": "t-${timestamp}", "timestamp.format": "EEE-MMM-D-w-a-hh-z"},
)
# Kafka compiles timestamp.format on first use: records with a timestamp fail, not configure
single("TimestampRouter", timestamp_router.TimestampRouter, "bad-format", {"timestamp.format": "yyyy-bb"})

# Predicates
pred("TopicNameMatches", predicates.TopicNameMatches, "prefix", {"pattern": "orders.*"})
pred("TopicNameMatches", predicates.TopicNameMatches, "partial", {"pattern": "eu"})
pred("TopicNameMatches", predicates.TopicNameMatches, "class", {"pattern": "[A-Z]\\w+_\\d{4}"})
pred("TopicNameMatches", predicates.TopicNameMatches, "case-insensitive", {"pattern": "(?i)ORDERS.*"})
pred("TopicNameMatches", predicates.TopicNameMatches, "invalid-regex", {"pattern": "(["}, invalid=True)
pred("TopicNameMatches", predicates.TopicNameMatches, "invalid-missing", {}, invalid=True)
pred("HasHeaderKey", predicates.HasHeaderKey, "trace", {"name": "trace"})
pred("HasHeaderKey", predicates.HasHeaderKey, "absent", {"name": "absent"})
pred("HasHeaderKey", predicates.HasHeaderKey, "invalid-missing", {}, invalid=True)
pred("RecordIsTombstone", predicates.RecordIsTombstone, "plain", {})

VALID = [c for c in CASES if not c.invalid]

# --------------------------------------------------------------------- known differences

CONFIGURE = "(configure)"  # as a payload label: the difference is in configure itself

_PRE_1582 = (
    "Deliberate, documented in docs/compatibility.md: before the Gregorian reform (1582) Sluice's dates are "
    "proleptic Gregorian, Java's SimpleDateFormat/Calendar Julian, so the formatted day differs"
)
_DATETIME_RANGE = (
    "Deliberate (sluice.api.data): Sluice's Date and Timestamp values are Python dates and datetimes, years 1 to "
    "9999; a java.util.Date goes further, so Kafka converts a Unix time beyond that range where Sluice raises a "
    "DataError"
)
_DUPLICATES = (
    "Known difference, not deliberate: Kafka 4.3.1's ConfigDef.parse drops repeated items of a ValidList-validated "
    "list (with a warning) before validating it; Sluice's ConfigDef.parse (sluice.api.config) refuses them, and "
    "tests/unit/transforms pins that for MaskField and ReplaceField. Fixing it means dropping the duplicates in "
    "ConfigDef.parse (DropHeaders does it by hand already) and updating those unit tests."
)

# Every known difference between Sluice and Kafka, with its reason. A deliberate one is
# skipped; one that is not deliberate but cannot be fixed in the transforms alone is an
# expected failure (strict: when it gets fixed, the test says so). A configuration Sluice
# refuses where Kafka accepts it is marked on its configure test (payload CONFIGURE) and gets
# no apply tests.
# Keys: (java class short name, its base name before "$" or "*"; config label or "*";
# payload label, CONFIGURE or "*").
KNOWN_DIFFERENCES: dict[tuple[str, str, str], tuple[str, str]] = {
    # the patterns that show the year, month or day (to-string-5 and -6 do not)
    **{
        ("TimestampConverter", label, payload): ("skip", _PRE_1582)
        for label in (
            "to-string",
            "to-string-names",
            "to-string-0",
            "to-string-1",
            "to-string-2",
            "to-string-3",
            "to-string-4",
            "to-string-7",
        )
        for payload in ("date/1500", "timestamp/1500")
    },
    # sluice.transforms.replace_field documents it: Sluice still reads the names exclude and
    # include had before Kafka 2.7 (blacklist, whitelist); Kafka 4 ignores them.
    ("ReplaceField", "deprecated-blacklist", "*"): (
        "skip",
        "Deliberate, documented in sluice.transforms.replace_field: Sluice still honours the pre-2.7 "
        "names blacklist/whitelist as aliases of exclude/include; Kafka 4 ignores them",
    ),
    # 1706708700123 seconds is in the year 56054.
    ("TimestampConverter", "unix-seconds-to-timestamp", "int64"): ("skip", _DATETIME_RANGE),
    ("TimestampConverter", "unix-seconds-to-timestamp", "schemaless/int"): ("skip", _DATETIME_RANGE),
    ("ReplaceField", "duplicates", CONFIGURE): ("xfail", _DUPLICATES),
    ("MaskField", "duplicates", CONFIGURE): ("xfail", _DUPLICATES),
    ("ValueToKey", "duplicates", CONFIGURE): ("xfail", _DUPLICATES),
    ("TimestampRouter", "bad-format", CONFIGURE): (
        "xfail",
        "Known difference, not deliberate: Kafka compiles timestamp.format on first use (a ThreadLocal), so "
        "an invalid pattern passes configure and fails each record with a timestamp (IllegalArgumentException); "
        "Sluice refuses it in configure, as tests/unit/transforms/test_timestamp_router.py pins",
    ),
}


def known_difference(case: Case, payload: str) -> tuple[str, str] | None:
    for short in (case.short, case.short.split("$")[0], "*"):
        for label in (case.label, "*"):
            for key in (payload, "*") if payload != CONFIGURE else (payload,):
                known = KNOWN_DIFFERENCES.get((short, label, key))
                if known:
                    return known
    return None


def _marks(known: tuple[str, str] | None) -> list[Any]:
    if known is None:
        return []
    kind, reason = known
    return [pytest.mark.skip(reason=reason) if kind == "skip" else pytest.mark.xfail(reason=reason, strict=True)]


def _records_for(case: Case) -> list[RecordCase]:
    if case.records == "envelope":
        return ENVELOPE_RECORDS
    if case.records == "few":
        return ENVELOPE_RECORDS[:8]
    if case.records == "key":
        # $Key and $Value share their code but for the part they read and write: the $Key
        # variants get every third payload (the $Value variants all of them).
        records = [r for r in KEY_RECORDS if _wanted(case, r)]
        return records if case.only else records[::3]
    return [r for r in VALUE_RECORDS if _wanted(case, r)]


def _wanted(case: Case, record: RecordCase) -> bool:
    if case.only:
        return record.payload.startswith(case.only)
    return case.whole or record.payload in FIELD_PAYLOADS


def configure_params() -> Iterator[Any]:
    for case in CASES:
        yield pytest.param(case, id=case.id, marks=_marks(known_difference(case, CONFIGURE)))


def apply_params() -> Iterator[Any]:
    for case in VALID:
        if known_difference(case, CONFIGURE) is not None:
            continue  # Sluice refuses the configuration: see its configure test
        for record in _records_for(case):
            marks = _marks(known_difference(case, record.payload))
            yield pytest.param(case, record, id=f"{case.id}-{record.label}", marks=marks)


# ---------------------------------------------------------------------------- compare

# The Sluice exceptions that correspond to a Kafka exception (by simple class name).
# Kafka's unchecked Java exceptions (a NullPointerException or ClassCastException on data
# a transformation did not expect) correspond to a DataError, or to the Python exception of
# the same meaning.
ERROR_KINDS: dict[str, tuple[type[BaseException], ...]] = {
    "DataException": (DataError,),
    "SchemaBuilderException": (DataError,),
    "SchemaProjectorException": (DataError,),
    "ConfigException": (ConfigError,),
    "ConnectException": (ConnectError,),
    "IllegalArgumentException": (DataError, ValueError),
    "PatternSyntaxException": (ConfigError,),
    "NullPointerException": (DataError,),
    "ClassCastException": (DataError, TypeError),
    "IndexOutOfBoundsException": (DataError, IndexError),
    "UnsupportedOperationException": (DataError,),
    "DateTimeException": (DataError,),
    "ArithmeticException": (DataError,),
}


def corresponds(ours: BaseException, theirs: JavaError) -> bool:
    kinds = ERROR_KINDS.get(theirs.simple_class)
    return kinds is not None and isinstance(ours, kinds)


def _millis(value: dt.datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value - dt.datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000


def _as_kafka_sends_float(value: float) -> float:
    """A float32 value as it reaches Python from the JVM without a schema: the harness
    writes a schemaless Java ``Float`` in its shortest float digits, read back as a double."""
    try:
        single = struct.unpack(">f", struct.pack(">f", value))[0]
    except OverflowError:
        return value
    if single != value or math.isinf(value) or math.isnan(value):
        return value
    return float(java_float_string(value))


def canon(schema: Schema | None, value: Any, floats32: bool = False) -> Any:
    """A comparable form of a Connect value: NaN equals NaN, -0.0 differs from 0.0, FLOAT32
    values compare as float32, decimals keep their scale, structs carry their schema, map
    order is ignored. With ``floats32`` (results of a Cast to float32) schemaless floats
    compare as the harness carries a schemaless ``Float``: see :func:`_as_kafka_sends_float`."""
    if value is None:
        return None
    t = schema.type if schema is not None else None
    if floats32 and schema is None and isinstance(value, float):
        value = _as_kafka_sends_float(value)
    if isinstance(value, Struct):
        return (
            "struct",
            value.schema,
            tuple(
                (f.name, canon(f.schema, value.get_without_default(f.name), floats32)) for f in value.schema.fields()
            ),
        )
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
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
        if schema is not None and schema.name == Decimal.LOGICAL_NAME:
            scale = int((schema.parameters or {}).get("scale", "0"))
            if value.as_tuple().exponent != -scale:
                # Off its schema's scale (MaskField's replacement 1e3 is BigDecimal("1e3")):
                # the harness sends such a decimal as a plain JSON number, which keeps the
                # value but not the scale. Compared by value, and only with another off-scale one.
                return ("decimal-off-scale", value.normalize().as_tuple())
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
    if isinstance(value, (list, tuple)):
        vs = schema.value_schema() if t is Type.ARRAY else None
        return ("list", tuple(canon(vs, v, floats32) for v in value))
    if isinstance(value, dict):
        ks = schema.key_schema() if t is Type.MAP else None
        vs = schema.value_schema() if t is Type.MAP else None
        return (
            "map",
            tuple(sorted((repr(canon(ks, k, floats32)), repr(canon(vs, v, floats32))) for k, v in value.items())),
        )
    return ("other", repr(value))


def _schema_text(schema: Schema | None) -> str:
    if schema is None:
        return "None"
    parts = [schema.type.name, "optional" if schema.optional else "required"]
    for attr in ("name", "version", "doc", "parameters", "default_value"):
        v = getattr(schema, attr)
        if v is not None:
            parts.append(f"{attr}={v!r}")
    if schema.type is Type.STRUCT:
        parts.append("fields=[" + ", ".join(f"{f.name}: {_schema_text(f.schema)}" for f in schema.fields()) + "]")
    elif schema.type in (Type.ARRAY, Type.MAP):
        if schema.type is Type.MAP:
            parts.append(f"keys={_schema_text(schema.key_schema())}")
        parts.append(f"values={_schema_text(schema.value_schema())}")
    return "{" + " ".join(parts) + "}"


def record_differences(ours: ConnectRecord, theirs: ConnectRecord, floats32: bool = False) -> list[str]:
    problems: list[str] = []

    def check(what: str, a: Any, b: Any, shown_a: Any = None, shown_b: Any = None) -> None:
        if a != b:
            problems.append(
                f"{what}: Sluice {shown_a if shown_a is not None else a!r} != "
                f"Kafka {shown_b if shown_b is not None else b!r}"
            )

    check("record type", type(ours).__name__, type(theirs).__name__)
    check("topic", ours.topic, theirs.topic)
    check("partition", ours.kafka_partition, theirs.kafka_partition)
    check("timestamp", ours.timestamp, theirs.timestamp)
    for part in ("key", "value"):
        a_schema, b_schema = getattr(ours, f"{part}_schema"), getattr(theirs, f"{part}_schema")
        check(f"{part} schema", a_schema, b_schema, _schema_text(a_schema), _schema_text(b_schema))
        a, b = getattr(ours, part), getattr(theirs, part)
        check(part, canon(a_schema, a, floats32), canon(b_schema, b, floats32), repr(a), repr(b))
    a_headers = [(h.key, h.schema, canon(h.schema, h.value)) for h in ours.headers]
    b_headers = [(h.key, h.schema, canon(h.schema, h.value)) for h in theirs.headers]
    check("headers", a_headers, b_headers, list(ours.headers), list(theirs.headers))
    if isinstance(ours, SinkRecord) and isinstance(theirs, SinkRecord):
        check("offset", ours.kafka_offset, theirs.kafka_offset)
        check("timestamp type", ours.timestamp_type, theirs.timestamp_type)
    if isinstance(ours, SourceRecord) and isinstance(theirs, SourceRecord):
        check("source partition", ours.source_partition, theirs.source_partition)
        check("source offset", ours.source_offset, theirs.source_offset)
    return problems


class Outcome:
    """A result, or the exception raised instead."""

    def __init__(self, fn: Callable[..., Any], *args: Any, catch: type[BaseException] = Exception) -> None:
        self.value: Any = None
        self.error: BaseException | None = None
        try:
            self.value = fn(*args)
        except catch as e:  # any exception is an outcome to compare (for Kafka: what the JVM raised)
            self.error = e

    def __repr__(self) -> str:
        if self.error is not None:
            return f"<{type(self.error).__name__}: {self.error}>"
        return repr(self.value)


def _error_text(error: BaseException) -> str:
    if isinstance(error, JavaError):
        return f"{error.java_class}: {error.message}"
    return f"{type(error).__module__}.{type(error).__name__}: {error}"


def _kafka_result_not_encodable(error: JavaError) -> bool:
    return "ConnectReference.encodeRecord(" in error.stacktrace


def _kafka_failed_in_configure(error: JavaError) -> bool:
    return "ConnectReference.transformation(" in error.stacktrace or "ConnectReference.predicate(" in error.stacktrace


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def ref() -> Iterator[KafkaReference]:
    with KafkaReference() as reference:
        yield reference


def _java_major(ref: KafkaReference) -> int:
    version = (ref.java_version or "0").split(".")[0]
    return int(version) if version.isdigit() else 0


_INSTANCES: dict[str, Outcome] = {}


def configured(case: Case) -> Outcome:
    """Sluice's instance for ``case``, configured once (Kafka's harness caches its own)."""
    outcome = _INSTANCES.get(case.id)
    if outcome is None:

        def make() -> Any:
            instance = case.ours()
            instance.configure(dict(case.configs))
            return instance

        outcome = _INSTANCES[case.id] = Outcome(make)
    return outcome


def _kafka(ref: KafkaReference, case: Case, record: ConnectRecord) -> Any:
    if case.predicate:
        return ref.predicate(case.java_class, case.configs, record)
    return ref.transform(case.java_class, case.configs, record)


def _ours(instance: Any, case: Case, record: ConnectRecord) -> Any:
    return instance.test(record) if case.predicate else instance.apply(record)


# ------------------------------------------------------------------------------ tests


def test_every_transformation_and_predicate_is_covered() -> None:
    from sluice.runtime.plugins import KAFKA_CLASS_NAMES

    kafka_names = {v for v in KAFKA_CLASS_NAMES.values() if v.startswith(T)}
    covered = {c.java_class for c in VALID}
    assert kafka_names - covered == set()
    for c in CASES:  # and each Sluice class is the one the plugin registry maps to that Kafka name
        ours = f"{c.ours.__module__}.{c.ours.__qualname__}"
        assert KAFKA_CLASS_NAMES.get(ours) == c.java_class, (ours, c.java_class)


@pytest.mark.parametrize("case", list(configure_params()))
def test_configure(ref: KafkaReference, case: Case) -> None:
    """Both accept the configuration, or both refuse it in ``configure`` with corresponding errors."""
    ours = configured(case)
    probe = SinkRecord("probe", 0, None, None, None, {"a": 1}, 0)
    theirs = Outcome(_kafka, ref, case, probe, catch=JavaError)
    kafka_refused = isinstance(theirs.error, JavaError) and _kafka_failed_in_configure(theirs.error)
    if case.invalid:
        assert kafka_refused, f"Kafka accepted the configuration the test calls invalid: {theirs!r}"
    if kafka_refused:
        assert ours.error is not None, f"Kafka refused the configuration ({_error_text(theirs.error)}), Sluice not"
        assert corresponds(ours.error, theirs.error), (
            f"different errors: Sluice {_error_text(ours.error)}, Kafka {_error_text(theirs.error)}"
        )
    else:
        assert ours.error is None, f"Sluice refused the configuration: {_error_text(ours.error)}"


# Before JDK 19, Float.toString did not always print the shortest digits that read back as
# the same float (JDK-4511638): Java 17 writes Float.MIN_NORMAL as 1.17549435E-38, JDK 19+ and
# Sluice (sluice.api.data.java_float_string) 1.1754944E-38. Compared only on JDK 19+.
JDK19_DIGITS = {("Cast", "whole-string", "float32/min-normal")}


@pytest.mark.parametrize(("case", "record"), list(apply_params()))
def test_apply(ref: KafkaReference, case: Case, record: RecordCase) -> None:
    if (case.short.split("$")[0], case.label, record.payload) in JDK19_DIGITS and _java_major(ref) < 19:
        pytest.skip(f"Java {ref.java_version} prints some floats with more digits than JDK 19+ and Sluice")
    instance = configured(case)
    assert instance.error is None, f"Sluice refused the configuration: {_error_text(instance.error)}"
    theirs = Outcome(_kafka, ref, case, record.make(), catch=JavaError)
    if isinstance(theirs.error, JavaError) and _kafka_failed_in_configure(theirs.error):
        pytest.fail(f"Kafka refused the configuration: {_error_text(theirs.error)}")
    given = record.make()
    before = encode_record(given)
    ours = Outcome(_ours, instance.value, case, given)
    assert encode_record(given) == before, "Sluice modified the record it was given"

    if isinstance(theirs.error, JavaError) and _kafka_result_not_encodable(theirs.error):
        # Kafka's transformation succeeded, but its result cannot be sent back: JsonConverter
        # refuses it (Cast keeps the logical name of a Date on the INT32 it casts to, say).
        # Sluice must succeed with a result Sluice's JsonConverter refuses just the same.
        assert ours.error is None, f"Sluice raised {_error_text(ours.error)}; Kafka succeeded"
        with pytest.raises(DataError):
            encode_record(ours.value)
        return

    if theirs.error is not None or ours.error is not None:
        assert theirs.error is not None, f"Sluice raised {_error_text(ours.error)}; Kafka gave {theirs.value!r}"
        assert ours.error is not None, f"Kafka raised {_error_text(theirs.error)}; Sluice gave {ours.value!r}"
        assert corresponds(ours.error, theirs.error), (
            f"different errors: Sluice {_error_text(ours.error)}, Kafka {_error_text(theirs.error)}"
        )
        return
    if case.predicate:
        assert ours.value is theirs.value, f"Sluice {ours.value!r}, Kafka {theirs.value!r}"
        return
    if theirs.value is None or ours.value is None:
        assert theirs.value is None and ours.value is None, f"Sluice {ours.value!r}, Kafka {theirs.value!r}"
        return
    floats32 = case.short.startswith("Cast$") and "float32" in case.configs.get("spec", "")
    problems = record_differences(ours.value, theirs.value, floats32)
    assert not problems, "\n".join(problems)
