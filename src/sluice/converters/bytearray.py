"""``org.apache.kafka.connect.converters.ByteArrayConverter``: bytes pass through
unchanged. Also usable as a header converter."""

from __future__ import annotations

from typing import Any

from sluice.api.config import ConfigDef
from sluice.api.converter import Converter, SchemaAndValue
from sluice.api.data import Schema, Type
from sluice.api.errors import DataError
from sluice.converters._common import ConvertsHeadersAsValues, converter_config_def, java_class_name

__all__ = ["ByteArrayConverter"]


class ByteArrayConverter(Converter, ConvertsHeadersAsValues):
    """Passes ``bytes`` through; the Connect schema is OPTIONAL_BYTES on the way in."""

    def config(self) -> ConfigDef:
        return converter_config_def()

    def configure(self, configs: dict[str, Any], is_key: bool | None = None) -> None:
        pass

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any, headers: Any = None) -> bytes | None:
        if schema is not None and schema.type is not Type.BYTES:
            raise DataError(f"Invalid schema type for ByteArrayConverter: {schema.type.name}")
        if value is None:
            return None
        if isinstance(value, bytes):
            return value
        if isinstance(value, (bytearray, memoryview)):
            return bytes(value)
        raise DataError(
            f"ByteArrayConverter is not compatible with objects of type class {java_class_name(schema, value)}"
        )

    def to_connect_data(self, topic: str, value: bytes | None, headers: Any = None) -> SchemaAndValue:
        return SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, value)

    def to_connect_batch(self, topic: str, values: list[bytes | None]) -> tuple[list[Schema | None], list[Any]] | None:
        return [Schema.OPTIONAL_BYTES_SCHEMA] * len(values), list(values)

    def from_connect_batch(
        self, topic: str, schemas: list[Schema | None], values: list[Any]
    ) -> list[bytes | None] | None:
        return [self.from_connect_data(topic, s, v) for s, v in zip(schemas, values, strict=True)]

    def close(self) -> None:
        pass
