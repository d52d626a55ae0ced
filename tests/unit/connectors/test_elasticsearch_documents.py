"""Records as Elasticsearch bulk actions: index names, document ids, external versions, the
JSON source and the mappings a value schema gives (Confluent's DataConverter and Mapping)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from typing import Any

import pytest

from sluice.api import ConfigError, DataError, Schema, SchemaBuilder, SinkRecord, Struct
from sluice.api.data import Date, Decimal, Timestamp
from sluice.api.records import Headers, SinkBatch
from sluice.connectors.elasticsearch.config import CONFIG_DEF, Settings
from sluice.connectors.elasticsearch.documents import DocumentMaker, index_name, mapping_for


def settings(**overrides: str) -> Settings:
    return Settings.parse({"connection.url": "http://127.0.0.1:9200", **overrides})


def record(
    value: Any,
    *,
    key: Any = "k1",
    key_schema: Schema | None = None,
    value_schema: Schema | None = None,
    topic: str = "Orders",
    offset: int = 42,
    headers: Headers | None = None,
    timestamp: int | None = 1_700_000_000_000,
) -> SinkRecord:
    return SinkRecord(topic, 3, key_schema, key, value_schema, value, offset, timestamp=timestamp, headers=headers)


def lines(action: Any) -> tuple[dict[str, Any], Any]:
    return json.loads(action.header), (json.loads(action.source) if action.source is not None else None)


ORDER = (
    SchemaBuilder.struct()
    .name("Order")
    .field("id", Schema.INT64_SCHEMA)
    .field("name", Schema.OPTIONAL_STRING_SCHEMA)
    .field("amount", Decimal.builder(2).optional().build())
    .field("at", Timestamp.builder().optional().build())
    .field("day", Date.builder().optional().build())
    .field("tags", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).optional().build())
    .field("qty", SchemaBuilder.int32().default_value(1).build())
    .build()
)


def order(**values: Any) -> Struct:
    struct = Struct(ORDER)
    for name, value in {"id": 7, **values}.items():
        struct.put(name, value)
    return struct


@pytest.mark.parametrize(
    ("topic", "index"),
    [("Orders", "orders"), ("-logs", "logs"), ("_x", "x"), (".", "dot"), ("..", "dotdot"), ("a" * 300, "a" * 255)],
)
def test_index_is_the_topic_lower_cased_as_confluent_names_it(topic: str, index: str) -> None:
    assert index_name(topic) == index


def test_key_is_the_id_and_the_offset_the_external_version() -> None:
    action = DocumentMaker(settings()).action(record(order(), value_schema=ORDER))
    assert action is not None
    header, source = lines(action)
    assert header == {"index": {"_index": "orders", "_id": "k1", "version": 42, "version_type": "external"}}
    assert source["id"] == 7 and action.replay_safe


def test_integer_keys_are_ids_and_other_keys_are_refused() -> None:
    maker = DocumentMaker(settings())
    action = maker.action(record({"a": 1}, key=12345, key_schema=Schema.INT64_SCHEMA))
    assert action is not None and action.doc_id == "12345"
    with pytest.raises(DataError, match="Unsupported key schema type STRUCT"):
        maker.action(record({"a": 1}, key=order(), key_schema=ORDER))
    with pytest.raises(DataError, match="can not be null"):
        maker.action(record({"a": 1}, key=None))


def test_key_ignore_ids_are_topic_partition_offset_without_version() -> None:
    for maker in (
        DocumentMaker(settings(**{"key.ignore": "true"})),
        DocumentMaker(settings(**{"topic.key.ignore": "Orders"})),
    ):
        header, _ = lines(maker.action(record({"a": 1}, key=None)))
        assert header == {"index": {"_index": "orders", "_id": "Orders+3+42"}}


def test_external_version_header_replaces_the_offset() -> None:
    maker = DocumentMaker(settings(**{"external.version.header": "v"}))
    header, _ = lines(maker.action(record({"a": 1}, headers=Headers().add("v", "9000"))))
    assert header["index"]["version"] == 9000
    with pytest.raises(DataError, match="no header v"):
        maker.action(record({"a": 1}))


def test_struct_source_follows_confluents_pre_pass() -> None:
    at = dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=dt.UTC)
    value = order(name='ü "q"', amount=decimal.Decimal("12.34"), at=at, day=dt.date(1970, 1, 11), tags={"a": 1})
    _, source = lines(DocumentMaker(settings()).action(record(value, value_schema=ORDER)))
    assert source == {
        "id": 7,
        "name": 'ü "q"',
        "amount": 12.34,  # Decimal as a double
        "at": int(at.timestamp() * 1000),  # Timestamp as epoch milliseconds
        "day": 10,  # Date as days, as JsonConverter writes it
        "tags": {"a": 1},  # a string-keyed map as an object (compact.map.entries=true)
        "qty": 1,  # the default for a null field
    }


def test_maps_as_key_value_entries_without_compaction() -> None:
    maker = DocumentMaker(settings(**{"compact.map.entries": "false"}))
    _, source = lines(maker.action(record(order(tags={"a": 1}), value_schema=ORDER)))
    assert source["tags"] == [{"key": "a", "value": 1}]


def test_schema_ignore_writes_values_as_jsonconverter_does() -> None:
    maker = DocumentMaker(settings(**{"schema.ignore": "true"}))
    _, source = lines(maker.action(record(order(amount=decimal.Decimal("1.50")), value_schema=ORDER)))
    assert source["amount"] == "AJY="  # the decimal's unscaled bytes, base64 (no pre-pass)


def test_required_null_without_default_is_a_data_error() -> None:
    unchecked = Struct.from_converted(ORDER, [None, "x", None, None, None, None, None])
    with pytest.raises(DataError, match="'id'"):
        DocumentMaker(settings()).action(record(unchecked, value_schema=ORDER))


def test_schemaless_values_and_non_finite_numbers() -> None:
    _, source = lines(DocumentMaker(settings()).action(record({"a": [1, {"b": float("nan")}], "c": None})))
    assert source == {"a": [1, {"b": "NaN"}], "c": None}


def test_tombstones_follow_behavior_on_null_values() -> None:
    tombstone = record(None)
    with pytest.raises(DataError, match="null value encountered"):
        DocumentMaker(settings()).action(tombstone)
    assert DocumentMaker(settings(**{"behavior.on.null.values": "ignore"})).action(tombstone) is None
    action = DocumentMaker(settings(**{"behavior.on.null.values": "DELETE"})).action(tombstone)
    assert action is not None and action.source is None
    assert lines(action)[0] == {"delete": {"_index": "orders", "_id": "k1", "version": 42, "version_type": "external"}}
    assert DocumentMaker(settings(**{"behavior.on.null.values": "delete"})).action(record(None, key=None)) is None


def test_upsert_merges_without_version() -> None:
    maker = DocumentMaker(settings(**{"write.method": "upsert", "max.in.flight.requests": "3"}))
    header, source = lines(maker.action(record({"a": 1})))
    assert header == {"update": {"_index": "orders", "_id": "k1", "retry_on_conflict": 3}}
    assert source == {"doc": {"a": 1}, "doc_as_upsert": True}


def test_data_streams_create_with_a_timestamp() -> None:
    maker = DocumentMaker(
        settings(**{"data.stream.type": "logs", "data.stream.dataset": "app", "data.stream.timestamp.field": "at"})
    )
    header, source = lines(maker.action(record({"at": "2024-01-01T00:00:00Z", "a": 1})))
    assert header == {"create": {"_index": "logs-app-orders", "_id": "k1"}}
    assert source["@timestamp"] == "2024-01-01T00:00:00Z"
    _, source = lines(maker.action(record({"a": 1})))
    assert source["@timestamp"] == 1_700_000_000_000  # the record's timestamp


def test_mapping_from_a_schema() -> None:
    assert mapping_for(ORDER) == {
        "properties": {
            "id": {"type": "long"},
            "name": {"type": "text", "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}},
            "amount": {"type": "double"},
            "at": {"type": "date"},
            "day": {"type": "date"},
            "tags": {
                "properties": {
                    "key": {"type": "text", "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}},
                    "value": {"type": "integer"},
                }
            },
            "qty": {"type": "integer", "null_value": 1},
        }
    }
    with pytest.raises(DataError):
        mapping_for(Schema.STRING_SCHEMA)


def test_config_cross_checks() -> None:
    with pytest.raises(ConfigError, match="data.stream.dataset is required"):
        settings(**{"data.stream.type": "LOGS"})
    with pytest.raises(ConfigError, match="use.autogenerated.ids must be false"):
        settings(**{"write.method": "upsert", "use.autogenerated.ids": "true"})
    with pytest.raises(ConfigError, match="not an http"):
        settings(**{"connection.url": "ftp://x"})
    keys = {key.name for key in CONFIG_DEF.config_keys().values()}
    assert {"batch.size", "max.in.flight.requests", "linger.ms", "flush.timeout.ms", "read.timeout.ms"} <= keys


def test_confluent_features_not_implemented_are_refused_not_ignored() -> None:
    with pytest.raises(ConfigError, match="proxy.host is not supported"):
        settings(**{"proxy.host": "proxy.example"})
    assert settings(**{"external.resource.usage": "DISABLED"}).urls == ("http://127.0.0.1:9200",)


def test_validate_puts_errors_beside_their_keys() -> None:
    from sluice.connectors.elasticsearch import ElasticsearchSinkConnector

    result = ElasticsearchSinkConnector().validate(
        {"connection.url": "http://127.0.0.1:9200", "data.stream.type": "LOGS", "proxy.host": "p"}
    )
    errors = {cv.name: cv.error_messages for cv in result.config_values if cv.error_messages}
    assert errors == {
        "data.stream.dataset": ["data.stream.dataset is required with data.stream.type."],
        "proxy.host": ["proxy.host is not supported by Sluice's Elasticsearch sink (docs/compatibility.md)."],
    }


def mixed_records() -> list[SinkRecord]:
    """Two topics' records: keys of every kind (missing, empty, integer, unusable), values with
    and without a schema, tombstones, a value its schema's encoder refuses, NaN."""
    records = []
    for i in range(24):
        key: Any = f"k{i % 9}"
        key_schema: Schema | None = Schema.STRING_SCHEMA
        value: Any = order(id=i, name=f"n{i}", amount=decimal.Decimal(i) / 4, at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
        value_schema: Schema | None = ORDER
        if i == 3:
            key = None
        elif i == 4:
            key = ""
        elif i == 5:
            key_schema, key = Schema.INT64_SCHEMA, 5
        elif i == 6:
            key_schema, key = None, 6.5  # no usable id
        elif i == 7:
            value = None
        elif i == 8:
            value_schema, value = None, {"plain": i, "nan": float("nan")}
        elif i == 9:
            value = "not a struct"
        elif i == 10:
            value = order(id=i, tags={"a": 1})
        elif i == 11:
            key_schema, key = None, 11
        headers = Headers().add("version", str(100 + i)) if i != 12 else Headers()
        topic = "Orders" if i % 2 else "returns"
        records.append(SinkRecord(topic, i % 3, key_schema, key, value_schema, value, i, 1_000 + i, headers=headers))
    return records


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"key.ignore": "true"},
        {"schema.ignore": "true"},
        {"topic.key.ignore": "returns", "topic.schema.ignore": "Orders"},
        {"behavior.on.null.values": "delete"},
        {"behavior.on.null.values": "fail"},
        {"write.method": "upsert"},
        {"external.version.header": "version"},
        {"compact.map.entries": "false"},
        {"data.stream.type": "logs", "data.stream.dataset": "shop"},
    ],
)
def test_a_batch_gives_the_actions_its_records_give(overrides):
    maker = DocumentMaker(settings(**overrides))
    records = mixed_records()

    def outcome(result: Any) -> Any:
        if result is None or isinstance(result, DataError):
            return repr(result)
        return (result.index, result.doc_id, result.header, result.source, result.replay_safe, result.record)

    by_record = []
    for r in records:
        try:
            by_record.append(outcome(maker.action(r)))
        except DataError as e:
            by_record.append(repr(e))
    batch = SinkBatch.of(records).take(list(range(len(records))))
    by_batch = [outcome(result) for result in maker.actions(batch)]
    assert by_batch == by_record
    assert any(isinstance(o, tuple) for o in by_record) and any(isinstance(o, str) for o in by_record)
