"""``ValueToKey``: replace the record key by a struct (or map) of some fields of the value
(``org.apache.kafka.connect.transforms.ValueToKey``).

With a schema, every listed field must exist in the value's struct schema; the key schema
has those fields, in the listed order. There is no ``$Key``/``$Value`` pair. The value must
be a struct or map: a null value (tombstone) is refused, as in Kafka.
"""

from __future__ import annotations

from typing import Any

from sluice.api.config import ConfigDef, ConfigType, Importance, ValidList
from sluice.api.data import Schema, SchemaBuilder, Struct
from sluice.api.errors import DataError
from sluice.api.records import ConnectRecord
from sluice.api.transforms import Transformation
from sluice.transforms._config import REPLACE_NULL_WITH_DEFAULT_CONFIG, define_replace_null_with_default, parse_config
from sluice.transforms._records import new_record
from sluice.transforms._schemas import LRUCache
from sluice.transforms._values import field_value, require_map, require_struct

__all__ = ["ValueToKey"]

FIELDS_CONFIG = "fields"
PURPOSE = "copying fields from value to key"

CONFIG_DEF = define_replace_null_with_default(
    ConfigDef().define(
        FIELDS_CONFIG,
        ConfigType.LIST,
        validator=ValidList.any_non_duplicate_values(False, False),
        importance=Importance.HIGH,
        documentation="The fields of the value that make up the new key.",
    )
)


class ValueToKey(Transformation[ConnectRecord]):
    """``org.apache.kafka.connect.transforms.ValueToKey``: build the key from value fields."""

    def __init__(self) -> None:
        # Public, as configure() parsed them: what a columnar form of the chain reads.
        self.fields: list[str] = []
        self._replace_null_with_default = True
        self._schema_cache = LRUCache(16)

    def configure(self, configs: dict[str, Any]) -> None:
        parsed = parse_config(CONFIG_DEF, configs)
        self.fields = list(parsed[FIELDS_CONFIG])
        self._replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._schema_cache = LRUCache(16)

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        if record.value_schema is None:
            value = require_map(record.value, PURPOSE)
            key_map = {name: value.get(name) for name in self.fields}
            return new_record(record, key_schema=None, key=key_map)
        struct = require_struct(record.value, PURPOSE)
        key_schema = self.key_schema(struct.schema)
        key = Struct(key_schema)
        for name in self.fields:
            key.put(name, field_value(struct, name, self._replace_null_with_default))
        return new_record(record, key_schema=key_schema, key=key, value_schema=struct.schema, value=struct)

    def key_schema(self, value_schema: Schema) -> Schema:
        """The key schema for a value schema (cached per value schema)."""
        cached = self._schema_cache.get(value_schema)
        if cached is not None:
            return cached
        builder = SchemaBuilder.struct()
        for name in self.fields:
            field = value_schema.field(name)
            if field is None:
                raise DataError(f"Field does not exist: {name}")
            builder.field(name, field.schema)
        schema = builder.build()
        self._schema_cache.put(value_schema, schema)
        return schema

    def close(self) -> None:
        self._schema_cache = LRUCache(16)
