"""``SetSchemaMetadata``: set the name and/or version of the key or value schema
(``org.apache.kafka.connect.transforms.SetSchemaMetadata$Key`` / ``$Value``).

Everything else of the schema is kept (optionality, default, doc, parameters such as a
decimal's scale, fields). A struct key or value is rebuilt on the new schema. A record whose
key/value and schema are both null passes through; a key/value without a schema is refused.
As in Kafka, only struct schemas can be renamed: any other schema fails with Kafka's
``Cannot list fields on non-struct type``.
"""

from __future__ import annotations

from typing import Any

from sluice.api.config import ConfigDef, ConfigType, Importance
from sluice.api.data import Schema, Struct, Type
from sluice.api.errors import ConfigError
from sluice.api.records import ConnectRecord
from sluice.transforms._config import REPLACE_NULL_WITH_DEFAULT_CONFIG, define_replace_null_with_default, parse_config
from sluice.transforms._records import KeyOrValueTransformation, KeySide, ValueSide
from sluice.transforms._values import field_value, require_schema

__all__ = ["SetSchemaMetadata", "SetSchemaMetadataKey", "SetSchemaMetadataValue"]

SCHEMA_NAME_CONFIG = "schema.name"
SCHEMA_VERSION_CONFIG = "schema.version"
PURPOSE = "updating schema metadata"

CONFIG_DEF = define_replace_null_with_default(
    ConfigDef()
    .define(SCHEMA_NAME_CONFIG, ConfigType.STRING, None, importance=Importance.HIGH,
            documentation="The name the schema gets.")
    .define(SCHEMA_VERSION_CONFIG, ConfigType.INT, None, importance=Importance.HIGH,
            documentation="The version the schema gets.")
)  # fmt: skip


class SetSchemaMetadata(KeyOrValueTransformation[ConnectRecord]):
    """Shared logic of :class:`SetSchemaMetadataKey` and :class:`SetSchemaMetadataValue`."""

    def __init__(self) -> None:
        self._name: str | None = None
        self._version: int | None = None
        self._replace_null_with_default = True

    def configure(self, configs: dict[str, Any]) -> None:
        parsed = parse_config(CONFIG_DEF, configs)
        self._name = parsed[SCHEMA_NAME_CONFIG]
        self._version = parsed[SCHEMA_VERSION_CONFIG]
        self._replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        if self._name is None and self._version is None:
            raise ConfigError("Neither schema name nor version configured")

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        if value is None and schema is None:
            return record
        updated_schema = self.updated_schema(require_schema(schema, PURPOSE))
        return self.new_record(record, updated_schema, self.update_schema_in(value, updated_schema))

    def updated_schema(self, schema: Schema) -> Schema:
        """``schema`` with the configured name and/or version."""
        fields = schema.fields()  # refuses non-struct schemas, exactly like Kafka
        return Schema(
            schema.type,
            optional=schema.optional,
            default_value=schema.default_value,
            name=self._name if self._name is not None else schema.name,
            version=self._version if self._version is not None else schema.version,
            doc=schema.doc,
            parameters=schema.parameters,
            fields=fields,
            key_schema=schema.key_schema() if schema.type is Type.MAP else None,
            value_schema=schema.value_schema() if schema.type in (Type.MAP, Type.ARRAY) else None,
        )

    def update_schema_in(self, key_or_value: Any, updated_schema: Schema) -> Any:
        """A struct rebuilt on ``updated_schema`` (same fields); anything else unchanged."""
        if not isinstance(key_or_value, Struct):
            return key_or_value
        rebuilt = Struct(updated_schema)
        for field in updated_schema.fields():
            rebuilt.put(field, field_value(key_or_value, field, self._replace_null_with_default))
        return rebuilt


class SetSchemaMetadataKey(KeySide, SetSchemaMetadata):
    """``org.apache.kafka.connect.transforms.SetSchemaMetadata$Key``: rename/version the key schema."""


class SetSchemaMetadataValue(ValueSide, SetSchemaMetadata):
    """``org.apache.kafka.connect.transforms.SetSchemaMetadata$Value``: rename/version the value schema."""
