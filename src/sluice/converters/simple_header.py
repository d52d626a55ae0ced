"""``org.apache.kafka.connect.storage.SimpleHeaderConverter`` (the worker's default
``header.converter``).

Header values are written as the UTF-8 bytes of Kafka's ``Values.convertToString`` and
read back with ``Values.parseString``, which infers the schema (see
:mod:`sluice.api.values` for both, including their odd corners). Reading never
fails: text that cannot be parsed comes back as the raw bytes with a BYTES schema, as in
Kafka.
"""

from __future__ import annotations

from typing import Any

from sluice.api.config import ConfigDef
from sluice.api.converter import HeaderConverter, SchemaAndValue
from sluice.api.data import Schema
from sluice.api.values import convert_to_string, parse_string

__all__ = ["SimpleHeaderConverter", "convert_to_string", "parse_string"]


class SimpleHeaderConverter(HeaderConverter):
    """Header values as plain UTF-8 strings, with the type inferred on the way back."""

    def config(self) -> ConfigDef:
        return ConfigDef()

    def configure(self, configs: dict[str, Any]) -> None:
        pass

    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None, value: Any) -> bytes | None:
        text = convert_to_string(schema, value)
        return None if text is None else text.encode("utf-8", "surrogatepass")

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(None, None)
        try:
            return parse_string(bytes(value).decode("utf-8", "replace"))
        except Exception:  # noqa: BLE001 - Kafka: any failure gives the bytes themselves
            return SchemaAndValue(Schema.BYTES_SCHEMA, bytes(value))

    def close(self) -> None:
        pass
