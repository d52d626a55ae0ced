"""``HoistField``: wrap the key or value in a struct (or, without a schema, a map) with a
single field (``org.apache.kafka.connect.transforms.HoistField$Key`` / ``$Value``).

With a schema, the new struct schema has one field of the original schema; a null value is
wrapped too (and must then have an optional schema).
"""

from __future__ import annotations

from typing import Any

from sluice.api.config import ConfigDef, ConfigType, Importance
from sluice.api.data import Schema, SchemaBuilder, Struct
from sluice.api.records import ConnectRecord
from sluice.transforms._config import parse_config
from sluice.transforms._records import KeyOrValueTransformation, KeySide, ValueSide
from sluice.transforms._schemas import LRUCache

__all__ = ["HoistField", "HoistFieldKey", "HoistFieldValue"]

FIELD_CONFIG = "field"

CONFIG_DEF = ConfigDef().define(
    FIELD_CONFIG,
    ConfigType.STRING,
    importance=Importance.MEDIUM,
    documentation="Name of the one field of the struct or map that will hold the original key or value.",
)


class HoistField(KeyOrValueTransformation[ConnectRecord]):
    """Shared logic of :class:`HoistFieldKey` and :class:`HoistFieldValue`."""

    def __init__(self) -> None:
        self._field = ""
        self._schema_cache = LRUCache(16)

    def configure(self, configs: dict[str, Any]) -> None:
        parsed = parse_config(CONFIG_DEF, configs)
        self._field = parsed[FIELD_CONFIG]
        self._schema_cache = LRUCache(16)

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            return self.new_record(record, None, {self._field: value})
        updated_schema = self.updated_schema(schema)
        return self.new_record(record, updated_schema, Struct(updated_schema).put(self._field, value))

    def updated_schema(self, schema: Schema) -> Schema:
        """A struct schema with one field holding ``schema`` (cached per input schema)."""
        cached = self._schema_cache.get(schema)
        if cached is None:
            cached = SchemaBuilder.struct().field(self._field, schema).build()
            self._schema_cache.put(schema, cached)
        return cached

    def close(self) -> None:
        self._schema_cache = LRUCache(16)


class HoistFieldKey(KeySide, HoistField):
    """``org.apache.kafka.connect.transforms.HoistField$Key``: wrap the key in a one-field struct or map."""


class HoistFieldValue(ValueSide, HoistField):
    """``org.apache.kafka.connect.transforms.HoistField$Value``: wrap the value in a one-field struct or map."""
