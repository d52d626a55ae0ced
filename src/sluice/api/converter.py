"""Converters between Connect data and bytes, mirroring ``org.apache.kafka.connect.storage``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from sluice.api.data import Schema

if TYPE_CHECKING:
    from sluice.api.config import ConfigDef
    from sluice.api.records import Headers

__all__ = ["Converter", "HeaderConverter", "SchemaAndValue"]


@dataclass(frozen=True)
class SchemaAndValue:
    schema: Schema | None
    value: Any

    NULL: ClassVar[SchemaAndValue]


SchemaAndValue.NULL = SchemaAndValue(None, None)


class Converter(ABC):
    """Converts record keys or values. Instances are created and configured inside
    Spark executors (and on the driver for validation); they must be cheap to build."""

    def configure(self, configs: dict[str, Any], is_key: bool) -> None:
        """Called once with the converter's own configs (prefix stripped)."""

    @abstractmethod
    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        """Serialise a Connect value for the given topic."""

    @abstractmethod
    def to_connect_data(self, topic: str, value: bytes | None, headers: Headers | None = None) -> SchemaAndValue:
        """Deserialise bytes read from the given topic."""

    # Optional batch forms. A converter whose results never depend on the record headers
    # may override them to convert a whole batch in one call (no per-record method call or
    # SchemaAndValue); the framework then uses them instead of the per-record methods.
    # Returning None means "not supported": the framework falls back to the per-record
    # methods, with headers.

    def to_connect_batch(self, topic: str, values: list[bytes | None]) -> tuple[list[Schema | None], list[Any]] | None:
        """Deserialise many values of one topic: ``(schemas, values)``, one entry per input."""
        return None

    def from_connect_batch(
        self, topic: str, schemas: list[Schema | None], values: list[Any]
    ) -> list[bytes | None] | None:
        """Serialise many values for one topic, one result per input."""
        return None

    def config(self) -> ConfigDef:
        from sluice.api.config import ConfigDef

        return ConfigDef()

    def close(self) -> None:
        """Release resources."""


class HeaderConverter(ABC):
    """Converts header values (``org.apache.kafka.connect.storage.HeaderConverter``)."""

    def configure(self, configs: dict[str, Any]) -> None:
        """Called once with the converter's own configs (prefix stripped)."""

    @abstractmethod
    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None, value: Any) -> bytes | None: ...

    @abstractmethod
    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue: ...

    def config(self) -> ConfigDef:
        from sluice.api.config import ConfigDef

        return ConfigDef()

    def close(self) -> None:
        """Release resources."""
