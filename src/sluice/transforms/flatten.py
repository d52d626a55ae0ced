"""``Flatten``: turn nested structs or maps into one level, joining field names with a
delimiter (``org.apache.kafka.connect.transforms.Flatten$Key`` / ``$Value``).

Arrays are kept as they are. With a schema, a flattened field is optional when it or any
struct above it is optional, and takes its default from its own schema or, failing that,
from the default value of the enclosing structs. A null key or value passes through (with a
schema, the schema is flattened all the same).
"""

from __future__ import annotations

from typing import Any

from sluice._java.names import class_name
from sluice.api.config import ConfigDef, ConfigType, Importance
from sluice.api.data import Schema, SchemaBuilder, Struct, Type, schema_type_of
from sluice.api.errors import DataError
from sluice.api.records import ConnectRecord
from sluice.transforms._config import parse_config
from sluice.transforms._records import KeyOrValueTransformation, KeySide, ValueSide
from sluice.transforms._schemas import LRUCache, copy_schema_basics
from sluice.transforms._values import require_map, require_struct_or_null

__all__ = ["Flatten", "FlattenKey", "FlattenValue"]

DELIMITER_CONFIG = "delimiter"
DELIMITER_DEFAULT = "."
PURPOSE = "flattening"

CONFIG_DEF = ConfigDef().define(
    DELIMITER_CONFIG,
    ConfigType.STRING,
    DELIMITER_DEFAULT,
    importance=Importance.MEDIUM,
    documentation="The text put between the names of a nested field and its parents to name the flattened field.",
)

_KEPT_TYPES = frozenset(
    (Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64,
     Type.BOOLEAN, Type.STRING, Type.BYTES, Type.ARRAY)
)  # fmt: skip


class Flatten(KeyOrValueTransformation[ConnectRecord]):
    """Shared logic of :class:`FlattenKey` and :class:`FlattenValue`."""

    def __init__(self) -> None:
        self._delimiter = DELIMITER_DEFAULT
        self._schema_cache = LRUCache(16)

    def configure(self, configs: dict[str, Any]) -> None:
        parsed = parse_config(CONFIG_DEF, configs)
        self._delimiter = parsed[DELIMITER_CONFIG]
        self._schema_cache = LRUCache(16)

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            flat: dict[str, Any] = {}
            self._flatten_map(require_map(value, PURPOSE), "", flat)
            return self.new_record(record, None, flat)
        struct = require_struct_or_null(value, PURPOSE)
        updated_schema = self.updated_schema(schema)
        if struct is None:
            return self.new_record(record, updated_schema, None)
        updated = Struct(updated_schema)
        self._flatten_struct(struct, "", updated)
        return self.new_record(record, updated_schema, updated)

    def _name(self, prefix: str, name: str) -> str:
        return name if not prefix else prefix + self._delimiter + name

    # schemaless -----------------------------------------------------------------------------

    def _flatten_map(self, original: dict[str, Any], prefix: str, out: dict[str, Any]) -> None:
        for key, value in original.items():
            if not isinstance(key, str):  # Kafka fails on such a key too (a ClassCastException)
                raise DataError(
                    f"Flatten transformation requires string keys in maps without schemas, found: {class_name(key)}"
                )
            name = self._name(prefix, key)
            if value is None:
                out[name] = None
                continue
            value_type = schema_type_of(value)
            if value_type is None:
                raise DataError(
                    f"Flatten transformation was passed a value of type class {class_name(value)} which is not "
                    "supported by Connect's data API"
                )
            if value_type in _KEPT_TYPES:
                out[name] = value
            elif value_type is Type.MAP:
                self._flatten_map(require_map(value, PURPOSE), name, out)
            else:
                raise DataError(
                    f"Flatten transformation does not support class {class_name(value)} for record without "
                    f"schemas (for field {name})."
                )

    # schema ---------------------------------------------------------------------------------

    def updated_schema(self, schema: Schema) -> Schema:
        """The flattened schema of ``schema`` (cached per input schema)."""
        cached = self._schema_cache.get(schema)
        if cached is not None:
            return cached
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        self._flatten_schema(schema, "", builder, schema.optional, schema.default_value)
        updated = builder.build()
        self._schema_cache.put(schema, updated)
        return updated

    def _flatten_schema(
        self, schema: Schema, prefix: str, out: SchemaBuilder, optional: bool, parent_default: Struct | None
    ) -> None:
        for field in schema.fields():
            name = self._name(prefix, field.name)
            field_optional = optional or field.schema.optional
            default = field.schema.default_value
            if default is None and parent_default is not None:
                default = parent_default.get(field)
            field_type = field.schema.type
            if field_type in _KEPT_TYPES:
                builder = copy_schema_basics(field.schema)
                if field_optional:
                    builder.optional()
                if default is not None:
                    builder.default_value(default)
                out.field(name, builder.build())
            elif field_type is Type.STRUCT:
                self._flatten_schema(field.schema, name, out, field_optional, default)
            else:
                raise DataError(
                    f"Flatten transformation does not support {field_type.name} for record with schemas "
                    f"(for field {name})."
                )

    # values ---------------------------------------------------------------------------------

    def _flatten_struct(self, struct: Struct | None, prefix: str, out: Struct) -> None:
        if struct is None:
            return
        for field in struct.schema.fields():
            name = self._name(prefix, field.name)
            field_type = field.schema.type
            if field_type in _KEPT_TYPES:
                out.put(name, struct.get(field))
            elif field_type is Type.STRUCT:
                self._flatten_struct(struct.get(field), name, out)
            else:
                raise DataError(
                    f"Flatten transformation does not support {field_type.name} for record with schemas "
                    f"(for field {name})."
                )


class FlattenKey(KeySide, Flatten):
    """``org.apache.kafka.connect.transforms.Flatten$Key``: flatten the key."""


class FlattenValue(ValueSide, Flatten):
    """``org.apache.kafka.connect.transforms.Flatten$Value``: flatten the value."""
