"""Pieces shared by the built-in converters."""

from __future__ import annotations

from typing import Any, Protocol

from sluice._java.names import java_class_of
from sluice.api.config import ConfigDef, ConfigType, Importance, ValidString
from sluice.api.converter import HeaderConverter, SchemaAndValue
from sluice.api.data import Schema, Type
from sluice.api.errors import DataError
from sluice.api.records import Headers

__all__ = ["TYPE_CONFIG", "ConvertsHeadersAsValues", "converter_config_def", "java_class_name"]

TYPE_CONFIG = "converter.type"


def converter_config_def() -> ConfigDef:
    """A ConfigDef holding ``converter.type``, which every converter accepts."""
    return ConfigDef().define(
        TYPE_CONFIG,
        ConfigType.STRING,
        validator=ValidString.in_("key", "value", "header"),
        importance=Importance.LOW,
        documentation="How this converter will be used.",
    )


class _ValueConverter(Protocol):
    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None: ...

    def to_connect_data(self, topic: str, value: bytes | None, headers: Headers | None = None) -> SchemaAndValue: ...


class ConvertsHeadersAsValues(HeaderConverter):
    """For a converter that is also a header converter: header values convert exactly
    like record values (as Kafka's String, ByteArray and Json converters do). Mix it into
    a :class:`~sluice.api.converter.Converter`."""

    def from_connect_header(
        self: _ValueConverter, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self: _ValueConverter, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)


# Java class names for the message Kafka writes for a ClassCastException.
_JAVA_CLASS = {
    Type.INT8: "java.lang.Byte",
    Type.INT16: "java.lang.Short",
    Type.INT32: "java.lang.Integer",
    Type.INT64: "java.lang.Long",
    Type.FLOAT32: "java.lang.Float",
    Type.FLOAT64: "java.lang.Double",
    Type.BOOLEAN: "java.lang.Boolean",
    Type.STRING: "java.lang.String",
    Type.BYTES: "[B",
    Type.ARRAY: "java.util.ArrayList",
    Type.MAP: "java.util.HashMap",
    Type.STRUCT: "org.apache.kafka.connect.data.Struct",
}
_LOGICAL_CLASS = {
    "org.apache.kafka.connect.data.Decimal": "java.math.BigDecimal",
    "org.apache.kafka.connect.data.Date": "java.util.Date",
    "org.apache.kafka.connect.data.Time": "java.util.Date",
    "org.apache.kafka.connect.data.Timestamp": "java.util.Date",
}


def java_class_name(schema: Schema | None, value: Any) -> str:
    """The Java class Kafka would see for ``value`` with ``schema`` (for error messages):
    the schema's type decides it (``java.lang.Short`` for INT16, ``java.util.Date`` for
    the temporal logical types), else the Python type (``int`` → ``java.lang.Long``)."""
    if schema is not None:
        try:
            Schema.validate_value(schema, value)
        except DataError:
            pass  # not what the schema says: name it from its Python type
        else:
            if schema.name in _LOGICAL_CLASS:
                return _LOGICAL_CLASS[schema.name]
            return _JAVA_CLASS[schema.type]
    return java_class_of(value)
