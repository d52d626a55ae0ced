"""Sluice's AvroConverter against a real Schema Registry (Apicurio, Confluent-compatible API),
checked with a client we did not write: confluent-kafka's own AvroSerializer/AvroDeserializer."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from typing import Any

import pytest

pytest.importorskip("confluent_kafka.schema_registry.avro", reason="confluent-kafka's schema registry extras")

from confluent_kafka.schema_registry import Schema as RegistrySchema
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from sluice.api.data import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp, Type
from sluice.api.errors import DataError
from sluice.converters.avro import AvroConverter
from sluice.formats.avro import AvroData, avro_json

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("search")]

STRATEGY = "io.confluent.kafka.serializers.subject."
UTC = dt.UTC


@pytest.fixture
def client(schema_registry: str) -> SchemaRegistryClient:
    # A timeout: a request the registry never answers is retried instead of hanging the test.
    return SchemaRegistryClient({"url": schema_registry, "timeout": 30})


def sluice(url: str, is_key: bool = False, **configs: str) -> AvroConverter:
    c = AvroConverter()
    c.configure({"schema.registry.url": url, **{k.replace("_", "."): v for k, v in configs.items()}}, is_key)
    return c


def ctx(topic: str, is_key: bool = False) -> SerializationContext:
    return SerializationContext(topic, MessageField.KEY if is_key else MessageField.VALUE)


def schema_id(data: bytes) -> int:
    assert data[0] == 0
    return int.from_bytes(data[1:5], "big")


# ------------------------------------------------------------------------ (a) Sluice writes, Confluent reads

INNER = (
    SchemaBuilder.struct()
    .name("com.example.Inner")
    .field("x", Schema.FLOAT64_SCHEMA)
    .field("tag", Schema.OPTIONAL_STRING_SCHEMA)
    .build()
)
EVERYTHING = (
    SchemaBuilder.struct()
    .name("com.example.Everything")
    .doc("every Connect type")
    .field("i8", Schema.INT8_SCHEMA)
    .field("i16", Schema.INT16_SCHEMA)
    .field("i32", Schema.INT32_SCHEMA)
    .field("i64", Schema.INT64_SCHEMA)
    .field("f32", Schema.FLOAT32_SCHEMA)
    .field("f64", Schema.FLOAT64_SCHEMA)
    .field("bool", Schema.BOOLEAN_SCHEMA)
    .field("str", Schema.STRING_SCHEMA)
    .field("bytes", Schema.BYTES_SCHEMA)
    .field("opt_str", Schema.OPTIONAL_STRING_SCHEMA)
    .field("opt_int", Schema.OPTIONAL_INT32_SCHEMA)
    .field("with_default", SchemaBuilder.string().optional().default_value("dflt").build())
    .field("dec", Decimal.schema(2))
    .field("date", Date.SCHEMA)
    .field("time", Time.SCHEMA)
    .field("ts", Timestamp.SCHEMA)
    .field("opt_ts", Timestamp.builder().optional().build())
    .field("strings", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
    .field("structs", SchemaBuilder.array(INNER).build())
    .field("str_map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build())
    .field("int_map", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build())
    .field("inner", INNER)
    .field(
        "opt_inner", SchemaBuilder.struct().name("com.example.Other").field("y", Schema.INT64_SCHEMA).optional().build()
    )
    .build()
)


def everything() -> Struct:
    inner = Struct(INNER).put("x", 0.25).put("tag", "t")
    v = Struct(EVERYTHING)
    v.put("i8", -128).put("i16", 32767).put("i32", -(2**31)).put("i64", 2**63 - 1)
    v.put("f32", 0.5).put("f64", 1e-300).put("bool", True).put("str", "snow ☃ ünïcode").put("bytes", b"\x00\x01\xff")
    v.put("opt_str", None).put("opt_int", 42)
    v.put("dec", decimal.Decimal("-12345.67")).put("date", dt.date(1969, 12, 31))
    v.put("time", dt.time(23, 59, 59, 999000)).put("ts", dt.datetime(2001, 2, 3, 4, 5, 6, 7000, tzinfo=UTC))
    v.put("opt_ts", None)
    v.put("strings", ["a", "", "c"]).put("structs", [inner, Struct(INNER).put("x", -1.0)])
    v.put("str_map", {"k": 1, "l": -2}).put("int_map", {1: "one", -7: "minus seven"})
    v.put("inner", inner)
    return v


EXPECTED_BY_CONFLUENT = {
    "i8": -128,
    "i16": 32767,
    "i32": -(2**31),
    "i64": 2**63 - 1,
    "f32": 0.5,
    "f64": 1e-300,
    "bool": True,
    "str": "snow ☃ ünïcode",
    "bytes": b"\x00\x01\xff",
    "opt_str": None,
    "opt_int": 42,
    "with_default": "dflt",
    "dec": decimal.Decimal("-12345.67"),
    "date": dt.date(1969, 12, 31),
    "time": dt.time(23, 59, 59, 999000),
    "ts": dt.datetime(2001, 2, 3, 4, 5, 6, 7000, tzinfo=UTC),
    "opt_ts": None,
    "strings": ["a", "", "c"],
    "structs": [{"x": 0.25, "tag": "t"}, {"x": -1.0, "tag": None}],
    "str_map": {"k": 1, "l": -2},
    "int_map": [{"key": 1, "value": "one"}, {"key": -7, "value": "minus seven"}],
    "inner": {"x": 0.25, "tag": "t"},
    "opt_inner": None,
}


def test_every_connect_type_is_read_by_confluent_kafka(
    schema_registry: str, client: SchemaRegistryClient, unique_name: str
) -> None:
    converter = sluice(schema_registry)
    data = converter.from_connect_data(unique_name, EVERYTHING, everything())
    assert data is not None
    registered = client.get_schema(schema_id(data))
    assert registered.schema_str == avro_json(AvroData().from_connect_schema(EVERYTHING))
    assert client.get_subjects().count(f"{unique_name}-value") == 1

    assert AvroDeserializer(client)(data, ctx(unique_name)) == EXPECTED_BY_CONFLUENT

    back = converter.to_connect_data(unique_name, data)
    assert back.schema is not None and back.schema.version == 1  # the subject's version
    for f in EVERYTHING.fields():
        assert back.value.get(f.name) == everything().get(f.name), f.name


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        (Schema.STRING_SCHEMA, "plain", "plain"),
        (Schema.INT64_SCHEMA, -5, -5),
        (Schema.FLOAT32_SCHEMA, 1.5, 1.5),
        (Schema.BOOLEAN_SCHEMA, False, False),
        (Schema.BYTES_SCHEMA, b"\x00raw", b"\x00raw"),
        (Schema.OPTIONAL_STRING_SCHEMA, "maybe", "maybe"),
        (Schema.INT8_SCHEMA, 7, 7),
        # a top-level bytes schema is written bare (no length), as Confluent does, and the Python
        # deserializer then returns the bytes without applying the decimal logical type
        (Decimal.schema(3), decimal.Decimal("1.500"), (1500).to_bytes(2, "big")),
        (Timestamp.SCHEMA, dt.datetime(2020, 1, 1, tzinfo=UTC), dt.datetime(2020, 1, 1, tzinfo=UTC)),
        (SchemaBuilder.array(Schema.INT32_SCHEMA).build(), [1, 2], [1, 2]),
        (SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build(), {"a": "b"}, {"a": "b"}),
        (
            None,
            {"a": [1, "x"]},
            {
                "boolean": None,
                "bytes": None,
                "double": None,
                "float": None,
                "int": None,
                "long": None,
                "string": None,
                "array": None,
                "map": [
                    {
                        "key": {
                            "boolean": None,
                            "bytes": None,
                            "double": None,
                            "float": None,
                            "int": None,
                            "long": None,
                            "string": "a",
                            "array": None,
                            "map": None,
                        },
                        "value": {
                            "boolean": None,
                            "bytes": None,
                            "double": None,
                            "float": None,
                            "int": None,
                            "long": None,
                            "string": None,
                            "map": None,
                            "array": [
                                {
                                    "boolean": None,
                                    "bytes": None,
                                    "double": None,
                                    "float": None,
                                    "int": None,
                                    "long": 1,
                                    "string": None,
                                    "array": None,
                                    "map": None,
                                },
                                {
                                    "boolean": None,
                                    "bytes": None,
                                    "double": None,
                                    "float": None,
                                    "int": None,
                                    "long": None,
                                    "string": "x",
                                    "array": None,
                                    "map": None,
                                },
                            ],
                        },
                    }
                ],
            },
        ),
    ],
    ids=[
        "string",
        "int64",
        "float32",
        "boolean",
        "bytes",
        "optional",
        "int8",
        "decimal",
        "timestamp",
        "array",
        "map",
        "schemaless",
    ],
)
def test_top_level_values_are_read_by_confluent_kafka(
    schema_registry: str,
    client: SchemaRegistryClient,
    unique_name: str,
    schema: Schema | None,
    value: Any,
    expected: Any,
) -> None:
    converter = sluice(schema_registry)
    data = converter.from_connect_data(unique_name, schema, value)
    assert AvroDeserializer(client)(data, ctx(unique_name)) == expected
    back = converter.to_connect_data(unique_name, data)
    assert back.value == value


# ------------------------------------------------------------------------ (b) Confluent writes, Sluice reads

PRODUCED = {
    "type": "record",
    "name": "Payment",
    "namespace": "com.example.py",
    "doc": "written by confluent-kafka",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "count", "type": "int"},
        {"name": "ratio", "type": "float"},
        {"name": "amount", "type": "double"},
        {"name": "ok", "type": "boolean"},
        {"name": "name", "type": "string"},
        {"name": "blob", "type": "bytes"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "retries", "type": "int", "default": 3},
        {
            "name": "choice",
            "type": [
                "null",
                "int",
                "string",
                {"type": "record", "name": "Card", "fields": [{"name": "number", "type": "string"}]},
            ],
        },
        {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}},
        {"name": "code", "type": {"type": "fixed", "name": "Code", "size": 3}},
        {"name": "items", "type": {"type": "array", "items": "Card"}},
        {"name": "attrs", "type": {"type": "map", "values": "int"}},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "when", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "micros", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    ],
}


def test_records_written_by_confluent_kafka_are_read(
    schema_registry: str, client: SchemaRegistryClient, unique_name: str
) -> None:
    serializer = AvroSerializer(client, json.dumps(PRODUCED))
    when = dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=UTC)
    records = [
        {
            "id": 1,
            "count": -2,
            "ratio": 0.5,
            "amount": 12.75,
            "ok": True,
            "name": "ünï",
            "blob": b"\x00\xff",
            "note": None,
            "retries": 1,
            "choice": ("com.example.py.Card", {"number": "4111"}),
            "color": "GREEN",
            "code": b"abc",
            "items": [{"number": "1"}],
            "attrs": {"a": 1},
            "price": decimal.Decimal("99.95"),
            "day": dt.date(2024, 2, 29),
            "at": dt.time(1, 2, 3, 4000),
            "when": when,
            "micros": 1_700_000_000_000_001,
        },
        {
            "id": 2,
            "count": 0,
            "ratio": -1.0,
            "amount": 0.0,
            "ok": False,
            "name": "",
            "blob": b"",
            "note": "n",
            "retries": 3,
            "choice": 7,
            "color": "BLUE",
            "code": b"xyz",
            "items": [],
            "attrs": {},
            "price": decimal.Decimal("-0.01"),
            "day": dt.date(1970, 1, 1),
            "at": dt.time(0, 0),
            "when": dt.datetime(1970, 1, 1, tzinfo=UTC),
            "micros": 0,
        },
        {
            "id": 3,
            "count": 1,
            "ratio": 2.0,
            "amount": 1.0,
            "ok": True,
            "name": "x",
            "blob": b"b",
            "note": None,
            "retries": 3,
            "color": "RED",
            "code": b"123",
            "items": [],
            "attrs": {"z": -1},
            "price": decimal.Decimal("1.00"),
            "day": dt.date(2000, 1, 1),
            "at": dt.time(12, 0),
            "when": when,
            "micros": 5,
            "choice": "text",
        },
        {
            "id": 4,
            "count": 1,
            "ratio": 2.0,
            "amount": 1.0,
            "ok": True,
            "name": "x",
            "blob": b"b",
            "note": None,
            "retries": 3,
            "color": "RED",
            "code": b"123",
            "items": [],
            "attrs": {},
            "price": decimal.Decimal("1.00"),
            "day": dt.date(2000, 1, 1),
            "at": dt.time(12, 0),
            "when": when,
            "micros": 5,
            "choice": None,
        },
    ]
    converter = sluice(schema_registry)
    results = [converter.to_connect_data(unique_name, serializer(r, ctx(unique_name))) for r in records]

    schema = results[0].schema
    assert schema is not None and schema.name == "com.example.py.Payment" and schema.version == 1
    fields = {f.name: f.schema for f in schema.fields()}
    assert fields["id"] == Schema.INT64_SCHEMA and fields["count"] == Schema.INT32_SCHEMA
    assert fields["ratio"] == Schema.FLOAT32_SCHEMA and fields["amount"] == Schema.FLOAT64_SCHEMA
    assert fields["note"] == Schema.OPTIONAL_STRING_SCHEMA
    assert fields["retries"].default_value == 3
    assert fields["choice"].name == "io.confluent.connect.avro.Union"
    assert [f.name for f in fields["choice"].fields()] == ["int", "string", "Card"]
    assert (
        fields["color"].type is Type.STRING
        and fields["color"].parameters["io.confluent.connect.avro.Enum"] == "com.example.py.Color"
    )
    assert fields["code"].type is Type.BYTES and fields["code"].parameters == {"connect.fixed.size": "3"}
    assert fields["items"].value_schema().name == "com.example.py.Card"
    assert fields["attrs"] == SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build()
    assert fields["price"].name == Decimal.LOGICAL_NAME and fields["price"].parameters == {
        "scale": "2",
        "connect.decimal.precision": "10",
    }
    assert fields["day"] == Date.SCHEMA and fields["at"] == Time.SCHEMA and fields["when"] == Timestamp.SCHEMA
    assert fields["micros"] == Schema.INT64_SCHEMA

    first = results[0].value
    assert first.get("name") == "ünï" and first.get("blob") == b"\x00\xff" and first.get("note") is None
    assert first.get("choice").get("Card").get("number") == "4111"
    assert first.get("color") == "GREEN" and first.get("code") == b"abc"
    assert [c.get("number") for c in first.get("items")] == ["1"] and first.get("attrs") == {"a": 1}
    assert first.get("price") == decimal.Decimal("99.95") and first.get("day") == dt.date(2024, 2, 29)
    assert first.get("at") == dt.time(1, 2, 3, 4000) and first.get("when") == when
    assert first.get("micros") == 1_700_000_000_000_001 and first.get("ratio") == 0.5
    assert results[1].value.get("choice").get("int") == 7 and results[1].value.get("note") == "n"
    assert results[1].value.get("price") == decimal.Decimal("-0.01")
    assert results[2].value.get("choice").get("string") == "text"
    assert results[3].value.get("choice") is None


def test_primitive_and_bytes_values_written_by_confluent_kafka(
    schema_registry: str, client: SchemaRegistryClient, unique_name: str
) -> None:
    converter = sluice(schema_registry)
    for topic, schema, value, connect_schema in [
        (unique_name + "-s", "string", "héllo", Schema.STRING_SCHEMA),
        (unique_name + "-b", "bytes", b"\x00\x01", Schema.BYTES_SCHEMA),
        (unique_name + "-l", "long", -1, Schema.INT64_SCHEMA),
    ]:
        data = AvroSerializer(client, json.dumps(schema))(value, ctx(topic))
        back = converter.to_connect_data(topic, data)
        assert back.value == value
        assert back.schema == SchemaBuilder(connect_schema.type).version(1).build()


def test_keys_use_the_key_subject(schema_registry: str, client: SchemaRegistryClient, unique_name: str) -> None:
    data = AvroSerializer(client, '"string"')("k1", ctx(unique_name, is_key=True))
    key_converter = sluice(schema_registry, is_key=True)
    assert key_converter.to_connect_data(unique_name, data).value == "k1"
    written = key_converter.from_connect_data(unique_name, Schema.STRING_SCHEMA, "k2")
    assert schema_id(written) == schema_id(data)  # the same schema, the same id
    assert AvroDeserializer(client)(written, ctx(unique_name, is_key=True)) == "k2"
    with pytest.raises(DataError, match=f"subject '{unique_name}-value'"):
        sluice(schema_registry).to_connect_data(unique_name, data)  # not registered under the value subject


# ------------------------------------------------------------------------ (c) subject name strategies

ORDER = SchemaBuilder.struct().name("com.example.Order").field("id", Schema.INT64_SCHEMA).build()


@pytest.mark.parametrize(
    ("strategy", "is_key", "subject"),
    [
        ("TopicNameStrategy", False, "{topic}-value"),
        ("TopicNameStrategy", True, "{topic}-key"),
        ("RecordNameStrategy", False, "com.example.Order"),
        ("RecordNameStrategy", True, "com.example.Order"),
        ("TopicRecordNameStrategy", False, "{topic}-com.example.Order"),
        ("TopicRecordNameStrategy", True, "{topic}-com.example.Order"),
    ],
)
def test_subject_name_strategies_register_under_the_expected_subject(
    schema_registry: str, client: SchemaRegistryClient, unique_name: str, strategy: str, is_key: bool, subject: str
) -> None:
    expected = subject.format(topic=unique_name)
    if "{topic}" not in subject:  # RecordNameStrategy is shared by every test: start clean
        for s in client.get_subjects():
            if s == expected:
                client.delete_subject(s, permanent=False)
                client.delete_subject(s, permanent=True)
    config = {("key" if is_key else "value") + "_subject_name_strategy": STRATEGY + strategy}
    converter = sluice(schema_registry, is_key=is_key, **config)
    data = converter.from_connect_data(unique_name, ORDER, Struct(ORDER).put("id", 5))
    assert expected in client.get_subjects()
    assert client.get_latest_version(expected).schema_id == schema_id(data)
    assert converter.to_connect_data(unique_name, data).value.get("id") == 5
    if strategy != "TopicNameStrategy":
        with pytest.raises(DataError, match="must only be a record schema"):
            converter.from_connect_data(unique_name, Schema.STRING_SCHEMA, "not a record")


def test_same_schema_same_id_across_subjects(
    schema_registry: str, client: SchemaRegistryClient, unique_name: str
) -> None:
    a = sluice(schema_registry).from_connect_data(unique_name + "-a", ORDER, Struct(ORDER).put("id", 1))
    b = sluice(schema_registry).from_connect_data(unique_name + "-b", ORDER, Struct(ORDER).put("id", 1))
    assert schema_id(a) == schema_id(b)
    text = avro_json(AvroData().from_connect_schema(ORDER))
    found = client.lookup_schema(
        unique_name + "-a-value", RegistrySchema(json.dumps(json.loads(text), indent=2), "AVRO")
    )
    assert found.schema_id == schema_id(a)  # looked up canonically, whatever the whitespace


# ------------------------------------------------------------------------ (d) auto.register.schemas=false


def test_auto_register_false_without_a_schema_is_a_clear_error(
    schema_registry: str, client: SchemaRegistryClient, unique_name: str
) -> None:
    converter = sluice(schema_registry, auto_register_schemas="false")
    with pytest.raises(DataError) as err:
        converter.from_connect_data(unique_name, ORDER, Struct(ORDER).put("id", 1))
    message = str(err.value)
    assert f"Failed to serialize Avro data from topic {unique_name}" in message
    assert f"subject '{unique_name}-value'" in message and "40401" in message
    assert "auto.register.schemas=false" in message
    assert f"{unique_name}-value" not in client.get_subjects()

    # registered by someone else (with other whitespace): now found, with that id
    text = json.dumps(json.loads(avro_json(AvroData().from_connect_schema(ORDER))), indent=1)
    registered = client.register_schema(f"{unique_name}-value", RegistrySchema(text, "AVRO"))
    data = converter.from_connect_data(unique_name, ORDER, Struct(ORDER).put("id", 1))
    assert schema_id(data) == registered
    other = SchemaBuilder.struct().name("com.example.Order").field("id", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataError, match="40403"):
        converter.from_connect_data(unique_name, other, Struct(other).put("id", 1))


def test_use_latest_version_and_compatibility(
    schema_registry: str, client: SchemaRegistryClient, unique_name: str
) -> None:
    latest = {
        "type": "record",
        "name": "Order",
        "namespace": "com.example",
        "fields": [{"name": "id", "type": "long"}, {"name": "source", "type": "string", "default": "sluice"}],
    }
    latest_id = client.register_schema(f"{unique_name}-value", RegistrySchema(json.dumps(latest), "AVRO"))
    converter = sluice(schema_registry, auto_register_schemas="false", use_latest_version="true")
    data = converter.from_connect_data(unique_name, ORDER, Struct(ORDER).put("id", 9))
    assert schema_id(data) == latest_id
    assert AvroDeserializer(client)(data, ctx(unique_name)) == {"id": 9, "source": "sluice"}
    assert converter.to_connect_data(unique_name, data).value.get("source") == "sluice"

    # the registry enforces BACKWARD compatibility, as Confluent's does by default
    incompatible = SchemaBuilder.struct().name("com.example.Order").field("id", Schema.STRING_SCHEMA).build()
    with pytest.raises(DataError, match="409"):
        sluice(schema_registry).from_connect_data(unique_name, incompatible, Struct(incompatible).put("id", "x"))


# ------------------------------------------------------------------------ the tooling


def test_dev_registry_start_status_stop(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """`sluice dev registry ...` runs a second, independent registry (own ports) and stops it by pid."""
    import urllib.request

    from sluice_devtools.cli import dev_main
    from sluice_devtools.registry import SchemaRegistry

    work = tmp_path / "registry"
    assert dev_main(["registry", "status", "--dir", str(work)]) == 1
    try:
        assert dev_main(["registry", "start", "--dir", str(work)]) == 0
        url = capsys.readouterr().out.strip().splitlines()[-1]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/apis/ccompat/v7")
        with urllib.request.urlopen(url + "/config", timeout=10) as answer:
            assert json.load(answer) == {"compatibilityLevel": "BACKWARD"}
        assert dev_main(["registry", "start", "--dir", str(work)]) == 0  # already running: same URL
        assert capsys.readouterr().out.strip().splitlines()[-1] == url
        assert dev_main(["registry", "status", "--dir", str(work)]) == 0
        pid = SchemaRegistry(work).status().pid
        assert pid is not None
    finally:
        assert dev_main(["registry", "stop", "--dir", str(work)]) == 0
    assert "stopped" in capsys.readouterr().out
    assert dev_main(["registry", "status", "--dir", str(work)]) == 1
    assert not SchemaRegistry(work).status().running
