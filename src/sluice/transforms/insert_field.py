"""``InsertField``: add fields with the record's topic, partition, offset, timestamp or a
fixed string to the key or value
(``org.apache.kafka.connect.transforms.InsertField$Key`` / ``$Value``).

A field name ending in ``!`` makes the inserted field required, ``?`` (or no suffix) optional.
Works on structs (the schema gets the new fields: topic and static value as strings,
partition INT32, offset INT64, timestamp as a ``Timestamp``) and schemaless maps (the
timestamp stays a number). A null key or value passes through unchanged; the offset is only
available on sink records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sluice.api.config import ConfigDef, ConfigType, Importance
from sluice.api.data import Schema, SchemaBuilder, Struct, Timestamp
from sluice.api.errors import ConfigError
from sluice.api.records import ConnectRecord
from sluice.transforms._config import REPLACE_NULL_WITH_DEFAULT_CONFIG, define_replace_null_with_default, parse_config
from sluice.transforms._records import KeyOrValueTransformation, KeySide, ValueSide
from sluice.transforms._schemas import LRUCache, copy_schema_basics
from sluice.transforms._values import field_value, require_map, require_sink_record, require_struct

__all__ = ["InsertField", "InsertFieldKey", "InsertFieldValue"]

TOPIC_FIELD = "topic.field"
PARTITION_FIELD = "partition.field"
OFFSET_FIELD = "offset.field"
TIMESTAMP_FIELD = "timestamp.field"
STATIC_FIELD = "static.field"
STATIC_VALUE = "static.value"
PURPOSE = "field insertion"

_SUFFIX_DOC = " End the name with ! for a required field, or ? for an optional one (the default)."

CONFIG_DEF = define_replace_null_with_default(
    ConfigDef()
    .define(TOPIC_FIELD, ConfigType.STRING, None, importance=Importance.MEDIUM,
            documentation="Name of the field that receives the record's Kafka topic." + _SUFFIX_DOC)
    .define(PARTITION_FIELD, ConfigType.STRING, None, importance=Importance.MEDIUM,
            documentation="Name of the field that receives the record's Kafka partition." + _SUFFIX_DOC)
    .define(OFFSET_FIELD, ConfigType.STRING, None, importance=Importance.MEDIUM,
            documentation="Name of the field that receives the record's Kafka offset (sink connectors only)."
            + _SUFFIX_DOC)
    .define(TIMESTAMP_FIELD, ConfigType.STRING, None, importance=Importance.MEDIUM,
            documentation="Name of the field that receives the record's timestamp." + _SUFFIX_DOC)
    .define(STATIC_FIELD, ConfigType.STRING, None, importance=Importance.MEDIUM,
            documentation="Name of the field that receives the fixed text of static.value." + _SUFFIX_DOC)
    .define(STATIC_VALUE, ConfigType.STRING, None, importance=Importance.MEDIUM,
            documentation="The fixed text inserted into static.field.")
)  # fmt: skip

_OPTIONAL_TIMESTAMP_SCHEMA = Timestamp.builder().optional().build()


@dataclass(frozen=True)
class InsertionSpec:
    """A field to insert: its name and whether its schema is optional."""

    name: str
    optional: bool

    @staticmethod
    def parse(spec: str | None) -> InsertionSpec | None:
        if spec is None:
            return None
        if spec.endswith("?"):
            return InsertionSpec(spec[:-1], True)
        if spec.endswith("!"):
            return InsertionSpec(spec[:-1], False)
        return InsertionSpec(spec, True)


class InsertField(KeyOrValueTransformation[ConnectRecord]):
    """Shared logic of :class:`InsertFieldKey` and :class:`InsertFieldValue`."""

    def __init__(self) -> None:
        # Public, as configure() parsed them: what a columnar form of the chain reads.
        self.topic_field: InsertionSpec | None = None
        self.partition_field: InsertionSpec | None = None
        self.offset_field: InsertionSpec | None = None
        self.timestamp_field: InsertionSpec | None = None
        self.static_field: InsertionSpec | None = None
        self.static_value: str | None = None
        self._replace_null_with_default = True
        self._schema_cache = LRUCache(16)

    def configure(self, configs: dict[str, Any]) -> None:
        parsed = parse_config(CONFIG_DEF, configs)
        self.topic_field = InsertionSpec.parse(parsed[TOPIC_FIELD])
        self.partition_field = InsertionSpec.parse(parsed[PARTITION_FIELD])
        self.offset_field = InsertionSpec.parse(parsed[OFFSET_FIELD])
        self.timestamp_field = InsertionSpec.parse(parsed[TIMESTAMP_FIELD])
        self.static_field = InsertionSpec.parse(parsed[STATIC_FIELD])
        self.static_value = parsed[STATIC_VALUE]
        self._replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        specs = (self.topic_field, self.partition_field, self.offset_field, self.timestamp_field, self.static_field)
        if not any(specs):
            raise ConfigError("No field insertion configured")
        if self.static_field is not None and self.static_value is None:
            raise ConfigError(STATIC_VALUE, None, f"No value specified for static field: {self.static_field.name}")
        self._schema_cache = LRUCache(16)

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            return self.new_record(record, None, self._insert_schemaless(record, value))
        struct = require_struct(value, PURPOSE)
        updated_schema = self.updated_schema(struct.schema)
        return self.new_record(record, updated_schema, self._insert_with_schema(record, struct, updated_schema))

    # schema ---------------------------------------------------------------------------------

    def updated_schema(self, schema: Schema) -> Schema:
        """``schema`` with the inserted fields appended (cached per input schema)."""
        cached = self._schema_cache.get(schema)
        if cached is not None:
            return cached
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields():
            builder.field(field.name, field.schema)
        inserted = (
            (self.topic_field, Schema.OPTIONAL_STRING_SCHEMA, Schema.STRING_SCHEMA),
            (self.partition_field, Schema.OPTIONAL_INT32_SCHEMA, Schema.INT32_SCHEMA),
            (self.offset_field, Schema.OPTIONAL_INT64_SCHEMA, Schema.INT64_SCHEMA),
            (self.timestamp_field, _OPTIONAL_TIMESTAMP_SCHEMA, Timestamp.SCHEMA),
            (self.static_field, Schema.OPTIONAL_STRING_SCHEMA, Schema.STRING_SCHEMA),
        )
        for spec, optional_schema, required_schema in inserted:
            if spec is not None:
                builder.field(spec.name, optional_schema if spec.optional else required_schema)
        updated = builder.build()
        self._schema_cache.put(schema, updated)
        return updated

    # values ---------------------------------------------------------------------------------

    def _insert_schemaless(self, record: ConnectRecord, value: Any) -> dict[str, Any]:
        updated = dict(require_map(value, PURPOSE))
        if self.topic_field is not None:
            updated[self.topic_field.name] = record.topic
        if self.partition_field is not None and record.kafka_partition is not None:
            updated[self.partition_field.name] = record.kafka_partition
        if self.offset_field is not None:
            updated[self.offset_field.name] = require_sink_record(record, PURPOSE).kafka_offset
        if self.timestamp_field is not None and record.timestamp is not None:
            updated[self.timestamp_field.name] = record.timestamp
        if self.static_field is not None and self.static_value is not None:
            updated[self.static_field.name] = self.static_value
        return updated

    def _insert_with_schema(self, record: ConnectRecord, struct: Struct, updated_schema: Schema) -> Struct:
        updated = Struct(updated_schema)
        for field in struct.schema.fields():
            updated.put(field.name, field_value(struct, field, self._replace_null_with_default))
        if self.topic_field is not None:
            updated.put(self.topic_field.name, record.topic)
        if self.partition_field is not None and record.kafka_partition is not None:
            updated.put(self.partition_field.name, record.kafka_partition)
        if self.offset_field is not None:
            updated.put(self.offset_field.name, require_sink_record(record, PURPOSE).kafka_offset)
        if self.timestamp_field is not None and record.timestamp is not None:
            updated.put(self.timestamp_field.name, Timestamp.to_logical(Timestamp.SCHEMA, record.timestamp))
        if self.static_field is not None and self.static_value is not None:
            updated.put(self.static_field.name, self.static_value)
        return updated

    def close(self) -> None:
        self._schema_cache = LRUCache(16)


class InsertFieldKey(KeySide, InsertField):
    """``org.apache.kafka.connect.transforms.InsertField$Key``: insert fields into the key."""


class InsertFieldValue(ValueSide, InsertField):
    """``org.apache.kafka.connect.transforms.InsertField$Value``: insert fields into the value."""
