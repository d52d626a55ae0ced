"""AvroConverter and the AvroData mapping, held to Confluent's behaviour (no registry:
an in-process fake of the registry's semantics stands in for it)."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import struct as _struct
from typing import Any

import fastavro
import pytest

from sluice.api.data import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp, Type
from sluice.api.errors import ConfigError, DataError, RetriableError
from sluice.converters.avro import AvroConverter, RegistryError, RegistryUnavailable, subject_name
from sluice.formats.avro import (
    ANYTHING_SCHEMA,
    AvroCodec,
    AvroData,
    avro_json,
    backward_compatibility_errors,
    parse_avro,
    valid_default,
)

# ---------------------------------------------------------------------------- the fake registry


class FakeRegistry:
    """Confluent's registry semantics in memory: one id per distinct schema (compared
    canonically), shared by the subjects holding it; versions numbered per subject."""

    def __init__(self) -> None:
        self.schemas: dict[int, str] = {}
        self._canonical: dict[str, int] = {}
        self.subjects: dict[str, list[int]] = {}
        self.calls: list[tuple[str, str]] = []
        self.down = False

    @staticmethod
    def canonical(schema: str) -> str:
        return json.dumps(json.loads(schema), sort_keys=True, separators=(",", ":"))

    def _check(self, op: str, arg: str) -> None:
        if self.down:
            raise RegistryUnavailable("connection refused")
        self.calls.append((op, arg))

    def register(self, subject: str, schema: str, normalize: bool = False) -> int:
        self._check("register", subject)
        canon = self.canonical(schema)
        sid = self._canonical.get(canon)
        if sid is None:
            sid = len(self.schemas) + 1
            self.schemas[sid] = schema
            self._canonical[canon] = sid
        versions = self.subjects.setdefault(subject, [])
        if sid not in versions:
            versions.append(sid)
        return sid

    def lookup(self, subject: str, schema: str, normalize: bool = False) -> tuple[int, int]:
        self._check("lookup", subject)
        if subject not in self.subjects:
            raise RegistryError(404, 40401, f"Subject '{subject}' not found.")
        sid = self._canonical.get(self.canonical(schema))
        if sid is None or sid not in self.subjects[subject]:
            raise RegistryError(404, 40403, "Schema not found")
        return sid, self.subjects[subject].index(sid) + 1

    def schema_by_id(self, schema_id: int) -> str:
        self._check("schema_by_id", str(schema_id))
        if schema_id not in self.schemas:
            raise RegistryError(404, 40403, f"Schema {schema_id} not found")
        return self.schemas[schema_id]

    def latest(self, subject: str) -> tuple[int, int, str]:
        self._check("latest", subject)
        if subject not in self.subjects:
            raise RegistryError(404, 40401, f"Subject '{subject}' not found.")
        versions = self.subjects[subject]
        return versions[-1], len(versions), self.schemas[versions[-1]]


@pytest.fixture
def registry() -> FakeRegistry:
    return FakeRegistry()


def converter(registry: FakeRegistry, is_key: bool = False, **configs: Any) -> AvroConverter:
    c = AvroConverter(registry)
    c.configure({k.replace("_", "."): v for k, v in configs.items()}, is_key)
    return c


def avro_text(schema: Schema | None, **options: Any) -> str:
    return avro_json(AvroData(**options).from_connect_schema(schema))


def body(data: bytes) -> bytes:
    assert data[0] == 0
    return data[5:]


# ---------------------------------------------------------------------------- Connect -> Avro schema


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (Schema.INT8_SCHEMA, '{"type":"int","connect.type":"int8"}'),
        (Schema.INT16_SCHEMA, '{"type":"int","connect.type":"int16"}'),
        (Schema.INT32_SCHEMA, '"int"'),
        (Schema.INT64_SCHEMA, '"long"'),
        (Schema.FLOAT32_SCHEMA, '"float"'),
        (Schema.FLOAT64_SCHEMA, '"double"'),
        (Schema.BOOLEAN_SCHEMA, '"boolean"'),
        (Schema.STRING_SCHEMA, '"string"'),
        (Schema.BYTES_SCHEMA, '"bytes"'),
        (Schema.OPTIONAL_STRING_SCHEMA, '["null","string"]'),
        (Schema.OPTIONAL_INT8_SCHEMA, '["null",{"type":"int","connect.type":"int8"}]'),
        (SchemaBuilder.array(Schema.INT32_SCHEMA).build(), '{"type":"array","items":"int"}'),
        (SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build(), '{"type":"map","values":"long"}'),
        (
            Decimal.schema(2),
            '{"type":"bytes","scale":2,"precision":64,"connect.version":1,"connect.parameters":{"scale":"2"},'
            '"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}',
        ),
        (
            Date.SCHEMA,
            '{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Date","logicalType":"date"}',
        ),
        (
            Time.SCHEMA,
            '{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Time",'
            '"logicalType":"time-millis"}',
        ),
        (
            Timestamp.SCHEMA,
            '{"type":"long","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Timestamp",'
            '"logicalType":"timestamp-millis"}',
        ),
    ],
    ids=lambda x: repr(x) if isinstance(x, Schema) else "",
)
def test_connect_schema_to_avro(schema: Schema, expected: str) -> None:
    assert avro_text(schema) == expected


def test_struct_names_defaults_and_metadata() -> None:
    nested = SchemaBuilder.struct().field("c", Schema.OPTIONAL_FLOAT32_SCHEMA).build()
    named = SchemaBuilder.struct().name("NoNamespace").field("y", Schema.STRING_SCHEMA).build()
    schema = (
        SchemaBuilder.struct()
        .doc("top doc")
        .version(3)
        .parameter("p", "v")
        .field("a", nested)
        .field("b", SchemaBuilder.struct().field("d", Schema.INT32_SCHEMA).build())
        .field("n", named)
        .field("s", SchemaBuilder.string().optional().default_value("x").build())
        .field("f", SchemaBuilder.float32().default_value(1.1).build())
        .field("g", SchemaBuilder.float64().default_value(1e10).build())
        .build()
    )
    assert avro_text(schema) == (
        '{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":['
        '{"name":"a","type":{"type":"record","name":"ConnectDefault2","fields":['
        '{"name":"c","type":["null","float"],"default":null}]}},'
        '{"name":"b","type":{"type":"record","name":"ConnectDefault3","fields":[{"name":"d","type":"int"}]}},'
        '{"name":"n","type":{"type":"record","name":"NoNamespace","namespace":"","fields":['
        '{"name":"y","type":"string"}],"connect.name":"NoNamespace"}},'
        '{"name":"s","type":[{"type":"string","connect.default":"x"},"null"],"default":"x"},'
        '{"name":"f","type":{"type":"float","connect.default":1.1},"default":1.1},'
        '{"name":"g","type":{"type":"double","connect.default":1.0E10},"default":1.0E10}],'
        '"connect.doc":"top doc","connect.version":3,"connect.parameters":{"p":"v"}}'
    )


def test_repeated_struct_is_written_once_then_referenced() -> None:
    inner = SchemaBuilder.struct().name("com.example.Inner").field("x", Schema.INT32_SCHEMA).build()
    optional_inner = SchemaBuilder.struct().name("com.example.Inner").field("x", Schema.INT32_SCHEMA).optional().build()
    schema = (
        SchemaBuilder.struct()
        .name("com.example.Outer")
        .field("one", inner)
        .field("two", inner)
        .field("three", optional_inner)
        .build()
    )
    text = avro_text(schema)
    assert text.count('"name":"Inner"') == 1
    assert '{"name":"two","type":"Inner"}' in text
    assert '{"name":"three","type":["null","Inner"],"default":null}' in text


def test_maps_with_non_string_keys_are_arrays_of_map_entries() -> None:
    schema = SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build()
    assert avro_text(schema) == (
        '{"type":"array","items":{"type":"record","name":"MapEntry","namespace":"io.confluent.connect.avro",'
        '"fields":[{"name":"key","type":"int"},{"name":"value","type":"string"}]}}'
    )
    named = SchemaBuilder.map(Schema.OPTIONAL_STRING_SCHEMA, Schema.INT32_SCHEMA).name("my.Entries").build()
    assert avro_text(named) == (
        '{"type":"array","items":{"type":"record","name":"Entries","namespace":"my","fields":['
        '{"name":"key","type":["null","string"],"default":null},{"name":"value","type":"int"}],'
        '"connect.internal.type":"MapEntry"},"connect.name":"my.Entries"}'
    )
    assert avro_text(named, allow_optional_map_keys=True).startswith('{"type":"map","values":"int"')


def test_invalid_field_defaults_are_dropped_as_avro_rejects_them() -> None:
    map_schema = SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).default_value({1: "a"}).build()
    text = avro_text(SchemaBuilder.struct().field("m", map_schema).build())
    assert '"connect.default":[[1,"a"]]' in text
    assert '"default":[[' not in text  # an array of records cannot default to arrays of pairs


def test_decimal_precision_and_legacy_form() -> None:
    with_precision = Decimal.builder(3).parameter("connect.decimal.precision", "10").build()
    assert '"scale":3,"precision":10' in avro_text(with_precision)
    legacy = Decimal.builder(12).parameter("connect.decimal.precision", "5").build()  # scale > precision
    assert avro_text(legacy).endswith('"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}')


def test_connect_meta_data_false_writes_no_connect_properties() -> None:
    schema = SchemaBuilder.struct().name("a.B").version(2).doc("d").field("i", Schema.INT8_SCHEMA).build()
    assert avro_text(schema, connect_meta_data=False) == (
        '{"type":"record","name":"B","namespace":"a","fields":[{"name":"i","type":"int"}]}'
    )


def test_enum_round_trips_with_enhanced_support() -> None:
    avro = parse_avro('{"type":"enum","name":"Color","namespace":"ex","symbols":["RED","GREEN"],"doc":"c"}')
    schema = AvroData(enhanced_avro_schema_support=True).to_connect_schema(avro)
    assert schema is not None and schema.type is Type.STRING and schema.name == "ex.Color"
    assert schema.parameters == {
        "io.confluent.connect.avro.enum.doc.Color": "c",
        "io.confluent.connect.avro.Enum": "ex.Color",
        "io.confluent.connect.avro.Enum.RED": "RED",
        "io.confluent.connect.avro.Enum.GREEN": "GREEN",
    }
    back = avro_text(schema, enhanced_avro_schema_support=True)
    assert back.startswith('{"type":"enum","name":"Color","namespace":"ex","doc":"c","symbols":["RED","GREEN"]')
    assert avro_text(schema).startswith('{"type":"string"')  # without it, a plain string


def test_invalid_names_are_refused_or_scrubbed() -> None:
    schema = SchemaBuilder.struct().name("my-app.User").field("first-name", Schema.STRING_SCHEMA).build()
    with pytest.raises(DataError, match="Illegal character"):
        avro_text(schema)
    assert avro_text(schema, scrub_invalid_names=True) == (
        '{"type":"record","name":"User","namespace":"my_app","fields":[{"name":"first_name","type":"string"}],'
        '"connect.name":"my-app.User"}'
    )


def test_schemaless_values_use_the_anything_record() -> None:
    assert AvroData().from_connect_schema(None) is ANYTHING_SCHEMA
    assert avro_json(ANYTHING_SCHEMA) == (
        '{"type":"record","name":"Anything","namespace":"io.confluent.connect.avro","fields":['
        '{"name":"boolean","type":["null","boolean"],"default":null},'
        '{"name":"bytes","type":["null","bytes"],"default":null},'
        '{"name":"double","type":["null","double"],"default":null},'
        '{"name":"float","type":["null","float"],"default":null},'
        '{"name":"int","type":["null","int"],"default":null},'
        '{"name":"long","type":["null","long"],"default":null},'
        '{"name":"string","type":["null","string"],"default":null},'
        '{"name":"array","type":["null",{"type":"array","items":"Anything"}],"default":null},'
        '{"name":"map","type":["null",{"type":"array","items":{"type":"record","name":"MapEntry","fields":['
        '{"name":"key","type":"Anything"},{"name":"value","type":"Anything"}]}}],"default":null}]}'
    )


# ---------------------------------------------------------------------------- Avro -> Connect schema


def to_connect(text: str, version: int | None = None, **options: Any) -> Schema | None:
    return AvroData(**options).to_connect_schema(parse_avro(text), version)


def test_avro_record_to_connect() -> None:
    schema = to_connect(
        '{"type":"record","name":"User","namespace":"ex","doc":"a user","fields":['
        '{"name":"id","type":"long"},'
        '{"name":"email","type":["null","string"],"default":null},'
        '{"name":"age","type":"int","default":7,"doc":"years"},'
        '{"name":"tags","type":{"type":"array","items":"string"}},'
        '{"name":"when","type":{"type":"long","logicalType":"timestamp-millis"}},'
        '{"name":"micros","type":{"type":"long","logicalType":"timestamp-micros"}},'
        '{"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},'
        '{"name":"small","type":{"type":"int","connect.type":"int16"}}]}',
        version=4,
    )
    assert schema is not None
    assert schema.name == "ex.User" and schema.version == 4 and not schema.optional
    assert schema.parameters == {
        "io.confluent.connect.avro.record.doc": "a user",
        "io.confluent.connect.avro.field.doc.age": "years",
    }
    fields = {f.name: f.schema for f in schema.fields()}
    assert fields["id"] == Schema.INT64_SCHEMA
    assert fields["email"] == Schema.OPTIONAL_STRING_SCHEMA
    assert fields["age"].type is Type.INT32 and fields["age"].default_value == 7
    assert fields["age"].parameters == {"io.confluent.connect.avro.field.default": "true"}
    assert fields["tags"] == SchemaBuilder.array(Schema.STRING_SCHEMA).build()
    assert fields["when"] == Timestamp.SCHEMA
    assert fields["micros"] == Schema.INT64_SCHEMA  # not a Connect logical type
    assert fields["price"] == Decimal.builder(2).parameter("connect.decimal.precision", "9").build()
    assert fields["small"] == Schema.INT16_SCHEMA


def test_connect_version_property_wins_over_registry_version() -> None:
    text = '{"type":"record","name":"R","fields":[{"name":"a","type":"int"}],"connect.version":2}'
    schema = to_connect(text, version=9)
    assert schema is not None and schema.version == 2
    with pytest.raises(DataError, match="Mismatched versions"):
        to_connect('{"type":"long","logicalType":"timestamp-millis"}', version=3)


def test_unions_fixed_and_errors() -> None:
    schema = to_connect(
        '{"type":"record","name":"R","fields":['
        '{"name":"u","type":["null","int","string",{"type":"record","name":"ex.Inner","fields":[{"name":"x","type":"int"}]}]},'
        '{"name":"f","type":{"type":"fixed","name":"Four","size":4}},'
        '{"name":"single","type":["string"]}]}'
    )
    assert schema is not None
    u = schema.field("u").schema
    assert u.name == "io.confluent.connect.avro.Union" and u.optional
    assert [f.name for f in u.fields()] == ["int", "string", "Inner"]
    assert all(f.schema.optional for f in u.fields())
    f = schema.field("f").schema
    assert f.type is Type.BYTES and f.name == "Four" and f.parameters == {"connect.fixed.size": "4"}
    assert schema.field("single").schema == Schema.STRING_SCHEMA

    generalized = to_connect('["int","string"]', generalized_sum_type_support=True)
    assert generalized is not None and generalized.name == "connect_union_0"
    assert [f.name for f in generalized.fields()] == ["connect_union_field_0", "connect_union_field_1"]

    with pytest.raises(DataError, match="Standalone null schemas"):
        to_connect('"null"')
    with pytest.raises(DataError, match="Recursive"):
        to_connect('{"type":"record","name":"L","fields":[{"name":"next","type":["null","L"]}]}')
    assert to_connect(avro_json(ANYTHING_SCHEMA)) is None


@pytest.mark.parametrize(
    "schema",
    [
        SchemaBuilder.struct()
        .name("com.example.Everything")
        .field("i8", Schema.INT8_SCHEMA)
        .field("i16", Schema.OPTIONAL_INT16_SCHEMA)
        .field("f", SchemaBuilder.float32().default_value(2.5).build())
        .field("s", SchemaBuilder.string().optional().default_value("dflt").doc("a string").build())
        .field("d", Decimal.builder(4).optional().build())
        .field("date", Date.builder().optional().build())
        .field("m", SchemaBuilder.map(Schema.INT64_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA).build())
        .field("sm", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.FLOAT64_SCHEMA).optional().build())
        .field("a", SchemaBuilder.array(Timestamp.SCHEMA).build())
        .field(
            "nested",
            SchemaBuilder.struct().name("com.example.Nested").version(5).field("b", Schema.BYTES_SCHEMA).build(),
        )
        .build(),
        SchemaBuilder.array(Schema.OPTIONAL_INT32_SCHEMA).optional().build(),
        Decimal.schema(0),
    ],
    ids=["struct", "array", "decimal"],
)
def test_connect_schemas_survive_the_round_trip(schema: Schema) -> None:
    data = AvroData()
    back = data.to_connect_schema(parse_avro(avro_json(data.from_connect_schema(schema))))
    assert back == schema


# ---------------------------------------------------------------------------- values through the converter


EVERYTHING = (
    SchemaBuilder.struct()
    .name("com.example.Value")
    .field("i8", Schema.INT8_SCHEMA)
    .field("i16", Schema.INT16_SCHEMA)
    .field("i32", Schema.INT32_SCHEMA)
    .field("i64", Schema.INT64_SCHEMA)
    .field("f32", Schema.FLOAT32_SCHEMA)
    .field("f64", Schema.FLOAT64_SCHEMA)
    .field("bool", Schema.BOOLEAN_SCHEMA)
    .field("str", Schema.STRING_SCHEMA)
    .field("bytes", Schema.BYTES_SCHEMA)
    .field("opt", Schema.OPTIONAL_STRING_SCHEMA)
    .field("dec", Decimal.schema(3))
    .field("date", Date.SCHEMA)
    .field("time", Time.SCHEMA)
    .field("ts", Timestamp.SCHEMA)
    .field("arr", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
    .field("smap", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
    .field("imap", SchemaBuilder.map(Schema.INT16_SCHEMA, Schema.OPTIONAL_BOOLEAN_SCHEMA).build())
    .field(
        "inner", SchemaBuilder.struct().name("com.example.Inner").field("x", Schema.FLOAT64_SCHEMA).optional().build()
    )
    .build()
)


def everything_value() -> Struct:
    v = Struct(EVERYTHING)
    v.put("i8", -128).put("i16", 32767).put("i32", -(2**31)).put("i64", 2**63 - 1).put("f32", 0.5).put("f64", -1e300)
    v.put("bool", True).put("str", "snow ☃ \x00").put("bytes", b"\x00\xff").put("opt", None)
    v.put("dec", decimal.Decimal("-1234.567")).put("date", dt.date(1969, 12, 31))
    v.put("time", dt.time(23, 59, 59, 999000)).put("ts", dt.datetime(2001, 2, 3, 4, 5, 6, 7000, tzinfo=dt.UTC))
    v.put("arr", ["a", "", "c"]).put("smap", {"k": 1}).put("imap", {-1: True, 2: None})
    v.put("inner", Struct(EVERYTHING.field("inner").schema).put("x", 0.25))
    return v


def test_every_type_round_trips(registry: FakeRegistry) -> None:
    c = converter(registry)
    value = everything_value()
    data = c.from_connect_data("topic", EVERYTHING, value)
    assert data is not None and data[:5] == b"\x00\x00\x00\x00\x01"
    back = c.to_connect_data("topic", data)
    assert back.schema == EVERYTHING.__class__(
        EVERYTHING.type, name=EVERYTHING.name, fields=EVERYTHING.fields(), version=1
    )  # the registry's version is added
    assert back.value.get("imap") == {-1: True, 2: None}
    for f in EVERYTHING.fields():
        assert back.value.get(f.name) == value.get(f.name), f.name


def test_wire_bytes_are_plain_avro_after_the_header(registry: FakeRegistry) -> None:
    c = converter(registry)
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("b", Schema.OPTIONAL_STRING_SCHEMA).build()
    data = c.from_connect_data("t", schema, Struct(schema).put("a", -1).put("b", "hi"))
    assert data == b"\x00" + _struct.pack(">i", 1) + b"\x01\x02\x04hi"
    parsed = fastavro.parse_schema(json.loads(registry.schemas[1]))
    assert fastavro.schemaless_reader(io.BytesIO(data[5:]), parsed, None) == {"a": -1, "b": "hi"}


def test_ids_are_cached_both_ways(registry: FakeRegistry) -> None:
    c = converter(registry)
    for i in range(5):
        c.to_connect_data("t", c.from_connect_data("t", Schema.STRING_SCHEMA, f"v{i}"))
    assert registry.calls == [("register", "t-value"), ("lookup", "t-value")]


def test_top_level_primitives_and_bytes(registry: FakeRegistry) -> None:
    c = converter(registry)
    assert body(c.from_connect_data("t", Schema.BYTES_SCHEMA, b"raw")) == b"raw"  # bare, as Confluent
    assert body(c.from_connect_data("t2", Schema.STRING_SCHEMA, "x")) == b"\x02x"
    assert body(c.from_connect_data("t3", Schema.INT64_SCHEMA, -1)) == b"\x01"
    assert c.to_connect_data("t", c.from_connect_data("t", Schema.BYTES_SCHEMA, b"raw")).value == b"raw"
    sv = c.to_connect_data("t4", c.from_connect_data("t4", Schema.OPTIONAL_FLOAT64_SCHEMA, 1.5))
    # an optional top-level schema is a union: Confluent adds no registry version to it
    assert sv.schema == Schema.OPTIONAL_FLOAT64_SCHEMA and sv.value == 1.5


def test_nulls(registry: FakeRegistry) -> None:
    c = converter(registry)
    assert c.from_connect_data("t", None, None) is None
    assert c.from_connect_data("t", Schema.OPTIONAL_STRING_SCHEMA, None) is None
    assert registry.calls == []  # a tombstone registers nothing
    with pytest.raises(DataError, match="Found null value for non-optional schema"):
        c.from_connect_data("t", Schema.STRING_SCHEMA, None)
    assert c.to_connect_data("t", None).schema is None and c.to_connect_data("t", None).value is None


def test_schemaless_values_round_trip(registry: FakeRegistry) -> None:
    c = converter(registry)
    value = {"a": [1, 2.5, "x", None, True, b"\x01"], "b": None, "c": {"n": {"m": 1}}}
    sv = c.to_connect_data("t", c.from_connect_data("t", None, value))
    assert sv.schema is None and sv.value == value
    assert json.loads(registry.schemas[1])["name"] == "Anything"
    with pytest.raises(DataError, match="Unknown Java type for schemaless data"):
        c.from_connect_data("t", None, decimal.Decimal(1))


def test_reading_unions_enums_and_fixed(registry: FakeRegistry) -> None:
    text = json.dumps(
        {
            "type": "record",
            "name": "R",
            "namespace": "ex",
            "fields": [
                {
                    "name": "u",
                    "type": [
                        "null",
                        "int",
                        "long",
                        "string",
                        {"type": "record", "name": "In", "fields": [{"name": "x", "type": "int"}]},
                    ],
                },
                {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
                {"name": "f", "type": {"type": "fixed", "name": "F", "size": 2}},
            ],
        }
    )
    sid = registry.register("t-value", text)
    parsed = parse_avro(text)
    codec = AvroCodec(parsed)
    c = converter(registry)
    for index, datum, field, expected in [
        (2, 5, "long", 5),
        (1, 5, "int", 5),
        (3, "s", "string", "s"),
        (4, {"x": 1}, "In", None),
        (0, None, None, None),
    ]:
        from sluice.formats.avro import union_datum

        raw = {"u": union_datum(parsed.fields[0].schema, index, datum), "e": "B", "f": b"ab"}
        sv = c.to_connect_data("t", b"\x00" + sid.to_bytes(4, "big") + codec.encode(raw))
        u = sv.value.get("u")
        if field is None:
            assert u is None
        else:
            assert [k.name for k in u.schema.fields() if u.get(k.name) is not None] == [field]
            if expected is not None:
                assert u.get(field) == expected
        assert sv.value.get("e") == "B" and sv.value.get("f") == b"ab"


def test_writing_connect_unions_picks_the_exact_branch(registry: FakeRegistry) -> None:
    union = to_connect('["null","int","long"]')
    assert union is not None
    value = Struct(union).put("long", 3)
    c = converter(registry)
    data = c.from_connect_data("t", union, value)
    assert body(data) == b"\x04\x06"  # branch 2 (long), then 3
    assert c.to_connect_data("t", data).value.get("long") == 3


def test_magic_byte_and_unknown_ids(registry: FakeRegistry) -> None:
    c = converter(registry)
    with pytest.raises(DataError, match="Failed to deserialize data for topic t to Avro: Unknown magic byte!"):
        c.to_connect_data("t", b"\x01\x00\x00\x00\x01\x02")
    with pytest.raises(DataError, match="shorter than"):
        c.to_connect_data("t", b"\x00\x00")
    with pytest.raises(DataError, match="Schema 42 not found"):
        c.to_connect_data("t", b"\x00\x00\x00\x00\x2a\x02")


def test_reading_requires_the_schema_in_the_subject(registry: FakeRegistry) -> None:
    sid = registry.register("other-value", '"string"')
    with pytest.raises(DataError, match="schema version for id 1 in subject 't-value'"):
        converter(registry).to_connect_data("t", b"\x00" + sid.to_bytes(4, "big") + b"\x02x")


def test_invalid_values(registry: FakeRegistry) -> None:
    c = converter(registry)
    schema = SchemaBuilder.struct().field("a", Schema.INT8_SCHEMA).build()
    bad = Struct(schema)
    bad._values[0] = 300  # bypass put()'s validation
    with pytest.raises(DataError, match="Failed to serialize Avro data from topic t: Invalid value for INT8"):
        c.from_connect_data("t", schema, bad)
    with pytest.raises(DataError, match="Invalid type for STRING"):
        c.from_connect_data("t", Schema.STRING_SCHEMA, 5)
    other = SchemaBuilder.struct().field("b", Schema.INT8_SCHEMA).build()
    with pytest.raises(DataError, match="Mismatching struct schema"):
        c.from_connect_data("t", schema, Struct(other).put("b", 1))


def test_registry_unreachable_is_retriable(registry: FakeRegistry) -> None:
    c = converter(registry)
    registry.down = True
    with pytest.raises(RetriableError):
        c.from_connect_data("t", Schema.STRING_SCHEMA, "x")


def test_batches_match_single_records(registry: FakeRegistry) -> None:
    c = converter(registry)
    values = [everything_value(), None]
    schemas = [EVERYTHING, None]
    encoded = c.from_connect_batch("t", schemas, values)
    assert encoded == [c.from_connect_data("t", s, v) for s, v in zip(schemas, values, strict=True)]
    back = c.to_connect_batch("t", encoded)
    assert back is not None and back[1][1] is None and back[0][1] is None
    assert back[1][0] == c.to_connect_data("t", encoded[0]).value


# ---------------------------------------------------------------------------- subjects and registration


RECORD = SchemaBuilder.struct().name("com.example.Order").field("id", Schema.INT64_SCHEMA).build()


@pytest.mark.parametrize(
    ("strategy", "is_key", "expected"),
    [
        ("io.confluent.kafka.serializers.subject.TopicNameStrategy", False, "orders-value"),
        ("io.confluent.kafka.serializers.subject.TopicNameStrategy", True, "orders-key"),
        ("io.confluent.kafka.serializers.subject.RecordNameStrategy", False, "com.example.Order"),
        ("io.confluent.kafka.serializers.subject.TopicRecordNameStrategy", True, "orders-com.example.Order"),
        ("TopicRecordNameStrategy", False, "orders-com.example.Order"),
        ("io.confluent.kafka.serializers.subject.AssociatedNameStrategy", False, "orders-value"),
    ],
)
def test_subject_name_strategies(registry: FakeRegistry, strategy: str, is_key: bool, expected: str) -> None:
    key = "key.subject.name.strategy" if is_key else "value.subject.name.strategy"
    c = AvroConverter(registry)
    c.configure({key: strategy}, is_key)
    c.from_connect_data("orders", RECORD, Struct(RECORD).put("id", 1))
    assert list(registry.subjects) == [expected]


def test_record_strategies_need_a_record(registry: FakeRegistry) -> None:
    c = converter(registry, value_subject_name_strategy="io.confluent.kafka.serializers.subject.RecordNameStrategy")
    with pytest.raises(DataError, match="the message value must only be a record schema"):
        c.from_connect_data("t", Schema.STRING_SCHEMA, "x")
    with pytest.raises(ConfigError):
        converter(registry, value_subject_name_strategy="com.example.Mine")
    assert (
        subject_name("RecordNameStrategy", "t", True, parse_avro('{"type":"record","name":"a.B","fields":[]}')) == "a.B"
    )


def test_auto_register_false(registry: FakeRegistry) -> None:
    c = converter(registry, auto_register_schemas="false")
    with pytest.raises(DataError) as err:
        c.from_connect_data("orders", RECORD, Struct(RECORD).put("id", 1))
    message = str(err.value)
    assert message.startswith("Failed to serialize Avro data from topic orders: Error retrieving Avro value schema")
    assert "Subject 'orders-value' not found" in message and "auto.register.schemas=false" in message
    registry.register("other", '"int"')
    sid = registry.register("orders-value", avro_text(RECORD))
    data = c.from_connect_data("orders", RECORD, Struct(RECORD).put("id", 1))
    assert data[:5] == b"\x00" + sid.to_bytes(4, "big")
    assert [op for op, _ in registry.calls].count("register") == 2  # only ours above


def test_use_latest_version(registry: FakeRegistry) -> None:
    latest = (
        '{"type":"record","name":"Order","namespace":"com.example","fields":['
        '{"name":"id","type":"long"},{"name":"note","type":"string","default":"none"}]}'
    )
    registry.register("orders-value", latest)
    c = converter(registry, auto_register_schemas="false", use_latest_version="true")
    data = c.from_connect_data("orders", RECORD, Struct(RECORD).put("id", 7))
    assert data[:5] == b"\x00\x00\x00\x00\x01"
    assert body(data) == b"\x0e\x08none"  # written with the latest schema, its default filled in
    sv = c.to_connect_data("orders", data)
    assert sv.value.get("note") == "none" and sv.value.get("id") == 7

    incompatible = '{"type":"record","name":"Order","namespace":"com.example","fields":[{"name":"id","type":"string"}]}'
    registry.register("strict-value", incompatible)
    with pytest.raises(DataError, match="latest.compatibility.strict=false"):
        c.from_connect_data("strict", RECORD, Struct(RECORD).put("id", 7))


def test_backward_compatibility_rules() -> None:
    writer = parse_avro('{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}')
    ok = parse_avro(
        '{"type":"record","name":"R","fields":[{"name":"a","type":"long"},{"name":"b","type":"string","default":""}]}'
    )
    missing_default = parse_avro(
        '{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":"string"}]}'
    )
    narrowed = parse_avro('{"type":"record","name":"R","fields":[{"name":"a","type":"string"}]}')
    assert backward_compatibility_errors(ok, writer) == []
    assert backward_compatibility_errors(missing_default, writer)
    assert backward_compatibility_errors(narrowed, writer)


def test_valid_default_follows_avro() -> None:
    assert valid_default(
        parse_avro('["null",{"type":"record","name":"R","fields":[{"name":"x","type":"int"}]}]'), {"x": 1}
    )
    assert not valid_default(parse_avro('"int"'), 2**40)
    assert not valid_default(parse_avro('{"type":"record","name":"R","fields":[{"name":"x","type":"int"}]}'), {})


# ---------------------------------------------------------------------------- configuration


def test_configuration() -> None:
    c = AvroConverter()
    with pytest.raises(ConfigError, match='Missing required configuration "schema.registry.url"'):
        c.configure({}, False)
    names = set(c.config().names())
    assert {
        "schema.registry.url",
        "auto.register.schemas",
        "use.latest.version",
        "latest.compatibility.strict",
        "key.subject.name.strategy",
        "value.subject.name.strategy",
        "basic.auth.credentials.source",
        "basic.auth.user.info",
        "schemas.cache.config",
        "enhanced.avro.schema.support",
        "connect.meta.data",
    } <= names
    c.configure({"schema.registry.url": "http://u:p@127.0.0.1:1/x"}, True)
    with pytest.raises(RetriableError, match="unreachable"):
        c.from_connect_data("t", Schema.STRING_SCHEMA, "x")
    c.close()
    with pytest.raises(ConfigError, match="SASL_INHERIT"):
        AvroConverter().configure(
            {"schema.registry.url": "http://x", "basic.auth.credentials.source": "SASL_INHERIT"}, False
        )


def test_http_client_requests_auth_and_failover() -> None:
    import httpx2

    from sluice.converters.avro import HttpRegistryClient

    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        if request.url.host == "down":
            raise httpx2.ConnectError("refused", request=request)
        path = request.url.raw_path.decode().split("?")[0]
        if path == "/ccompat/subjects/a%2Fb-value/versions":
            return httpx2.Response(200, json={"id": 5})
        if path == "/ccompat/subjects/a%2Fb-value":
            return httpx2.Response(404, json={"error_code": 40403, "message": "Schema not found"})
        if path == "/ccompat/schemas/ids/5":
            return httpx2.Response(200, json={"schema": '"string"'})
        if path == "/ccompat/subjects/s/versions/latest":
            return httpx2.Response(200, json={"subject": "s", "id": 5, "version": 2, "schema": '"string"'})
        return httpx2.Response(500, text="boom")

    client = HttpRegistryClient(
        ["http://down:1/ccompat", "http://user:p%40ss@up:2/ccompat/"],
        headers={"X-Extra": "1"},
        transport=httpx2.MockTransport(handler),
    )
    assert client.register("a/b-value", '"string"', normalize=True) == 5
    request = seen[-1]
    assert request.url.host == "up" and request.url.params.get("normalize") == "true"
    assert request.headers["Content-Type"] == "application/vnd.schemaregistry.v1+json"
    assert request.headers["Authorization"] == "Basic " + __import__("base64").b64encode(b"user:p@ss").decode()
    assert request.headers["X-Extra"] == "1"
    assert json.loads(request.content) == {"schema": '"string"'}
    with pytest.raises(RegistryError) as err:
        client.lookup("a/b-value", '"string"')
    assert err.value.error_code == 40403 and err.value.status == 404
    assert client.schema_by_id(5) == '"string"'
    assert client.latest("s") == (5, 2, '"string"')
    token = HttpRegistryClient(["http://up:2/ccompat"], token="t0k", transport=httpx2.MockTransport(handler))
    token.schema_by_id(5)
    assert seen[-1].headers["Authorization"] == "Bearer t0k"
    with pytest.raises(RegistryUnavailable):
        HttpRegistryClient(["http://down:1"], transport=httpx2.MockTransport(handler)).schema_by_id(5)
