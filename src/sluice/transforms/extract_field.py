"""``ExtractField``: replace the key or value by one of its fields
(``org.apache.kafka.connect.transforms.ExtractField$Key`` / ``$Value``).

Works on a struct (the output schema is the field's schema) or, without a schema, on a map.
With ``field.syntax.version=V2`` the field may be a dotted path into nested structs or maps.
A null key or value stays null; with a schema, the field must exist in it.
"""

from __future__ import annotations

from typing import Any

from sluice.api.config import ConfigDef, ConfigType, Importance
from sluice.api.data import Schema
from sluice.api.records import ConnectRecord
from sluice.transforms._config import (
    FIELD_SYNTAX_VERSION_CONFIG,
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    FieldSyntaxVersion,
    define_field_syntax_version,
    define_replace_null_with_default,
    parse_config,
)
from sluice.transforms._field_path import SingleFieldPath
from sluice.transforms._records import KeyOrValueTransformation, KeySide, ValueSide
from sluice.transforms._values import require_map_or_null, require_struct_or_null

__all__ = ["ExtractField", "ExtractFieldKey", "ExtractFieldValue"]

FIELD_CONFIG = "field"
PURPOSE = "field extraction"

CONFIG_DEF = define_field_syntax_version(
    define_replace_null_with_default(
        ConfigDef().define(
            FIELD_CONFIG,
            ConfigType.STRING,
            importance=Importance.MEDIUM,
            documentation="The field whose content becomes the new key or value.",
        )
    )
)


class ExtractField(KeyOrValueTransformation[ConnectRecord]):
    """Shared logic of :class:`ExtractFieldKey` and :class:`ExtractFieldValue`."""

    def __init__(self) -> None:
        # Public, as configure() parsed them: what a columnar form of the chain reads.
        self.path = SingleFieldPath("")
        self._original_path = ""
        self._replace_null_with_default = True

    def configure(self, configs: dict[str, Any]) -> None:
        parsed = parse_config(CONFIG_DEF, configs)
        self._original_path = parsed[FIELD_CONFIG]
        version = FieldSyntaxVersion.from_config(parsed[FIELD_SYNTAX_VERSION_CONFIG])
        self.path = SingleFieldPath(self._original_path, version)
        self._replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema = self.operating_schema(record)
        if schema is None:
            value = require_map_or_null(self.operating_value(record), PURPOSE)
            return self.new_record(record, None, None if value is None else self.path.value_from_map(value))
        struct = require_struct_or_null(self.operating_value(record), PURPOSE)
        updated_schema = self.updated_schema(schema)
        extracted = None if struct is None else self.path.value_from_struct(struct, self._replace_null_with_default)
        return self.new_record(record, updated_schema, extracted)

    def updated_schema(self, schema: Schema) -> Schema:
        """The schema of the extracted field; raises :class:`ValueError` when it is missing."""
        field = self.path.field_from(schema)
        if field is None:
            raise ValueError(f"Unknown field: {self._original_path}")
        return field.schema


class ExtractFieldKey(KeySide, ExtractField):
    """``org.apache.kafka.connect.transforms.ExtractField$Key``: the key becomes one of its fields."""


class ExtractFieldValue(ValueSide, ExtractField):
    """``org.apache.kafka.connect.transforms.ExtractField$Value``: the value becomes one of its fields."""
