"""Pieces shared by the built-in converters."""

from __future__ import annotations

from typing import Any

from sluice.api.config import ConfigDef, ConfigType, Importance, ValidString
from sluice.api.converter import HeaderConverter, SchemaAndValue
from sluice.api.data import Schema

__all__ = ["TYPE_CONFIG", "ConvertsHeadersAsValues", "converter_config_def"]

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


class ConvertsHeadersAsValues(HeaderConverter):
    """For a converter that is also a header converter: header values convert exactly
    like record values (as Kafka's String, ByteArray and Json converters do)."""

    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None, value: Any) -> bytes | None:
        return self.from_connect_data(topic, schema, value)  # type: ignore[attr-defined,no-any-return]

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)  # type: ignore[attr-defined,no-any-return]
