"""Kafka's number converters, ``org.apache.kafka.connect.converters.{Short,Integer,Long,
Float,Double}Converter``: a value as the big-endian bytes of Kafka's clients serializers
(2, 4, 8, 4, 8 bytes; floats as their IEEE 754 bits), ``None`` as ``None``. Reading gives
the optional schema of the type (OPTIONAL_INT16, ..., OPTIONAL_FLOAT64) whatever the
bytes, and fails on a wrong length. The schema passed in is not written. Each is also a
header converter (header values convert exactly like record values).

Kafka fails with a ``ClassCastException`` (wrapped in a ``DataException``) when the
value's Java class is not the converter's. Python has one ``int`` and one ``float``, so
the value's Java class is taken from its schema: an INT32-schema value given to
``ShortConverter`` fails, as in Kafka, and so do strings, booleans, logical-type values
(dates, decimals) and, for the float converters, ints. Without a schema any ``int`` that
fits is accepted by the integer converters and any ``float`` by the float converters
(Kafka would have the connector's own boxed type there, which Python cannot express).
"""

from __future__ import annotations

import math
import struct
from typing import Any

from sluice.api.config import ConfigDef
from sluice.api.converter import Converter, SchemaAndValue
from sluice.api.data import Schema, Type
from sluice.api.errors import DataError
from sluice.converters._common import ConvertsHeadersAsValues, converter_config_def, java_class_name

__all__ = ["DoubleConverter", "FloatConverter", "IntegerConverter", "LongConverter", "ShortConverter"]

_LOGICAL_NAMES = frozenset(
    {
        "org.apache.kafka.connect.data.Decimal",
        "org.apache.kafka.connect.data.Date",
        "org.apache.kafka.connect.data.Time",
        "org.apache.kafka.connect.data.Timestamp",
    }
)


class _NumberConverter(Converter, ConvertsHeadersAsValues):
    """Shared logic: ``_TYPE`` is the Connect type the converter reads and writes."""

    _TYPE: Type
    _TYPE_NAME: str  # as in Kafka's messages: "short", "integer", "long", "float", "double"
    _FORMAT: str  # struct format, big-endian
    _SCHEMA: Schema
    _DESERIALIZER: str  # the Kafka deserializer's name in its size error

    def config(self) -> ConfigDef:
        return converter_config_def()

    def configure(self, configs: dict[str, Any], is_key: bool | None = None) -> None:
        conf = dict(configs)
        if is_key is not None:
            conf["converter.type"] = "key" if is_key else "value"
        else:
            conf.setdefault("converter.type", "header")  # configure(configs): a header converter
        converter_config_def().parse(conf)  # validates converter.type, as NumberConverterConfig does

    def _check(self, schema: Schema | None, value: Any) -> Any:
        expected = self._TYPE
        if schema is not None and (schema.type is not expected or schema.name in _LOGICAL_NAMES):
            raise self._class_cast(schema, value)
        if expected in (Type.FLOAT32, Type.FLOAT64):
            if not isinstance(value, float):
                raise self._class_cast(schema, value)
            return value
        if not isinstance(value, int) or isinstance(value, bool):
            raise self._class_cast(schema, value)
        bits = struct.calcsize(self._FORMAT) * 8
        if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
            raise self._class_cast(schema, value)  # a Long in Java: a ClassCastException there
        return value

    def _class_cast(self, schema: Schema | None, value: Any) -> DataError:
        return DataError(f"Failed to serialize to {self._TYPE_NAME} (was class {java_class_name(schema, value)}): ")

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any, headers: Any = None) -> bytes | None:
        if value is None:
            return None
        number = self._check(schema, value)
        try:
            return struct.pack(self._FORMAT, number)
        except OverflowError:
            # Java's (float) cast of a double too large for float32 gives an infinity.
            return struct.pack(self._FORMAT, math.copysign(math.inf, number))

    def to_connect_data(self, topic: str, value: bytes | None, headers: Any = None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(self._SCHEMA, None)
        size = struct.calcsize(self._FORMAT)
        if len(value) != size:
            cause = ValueError(f"Size of data received by {self._DESERIALIZER} is not {size}")
            raise DataError(f"Failed to deserialize {self._TYPE_NAME}: ") from cause
        return SchemaAndValue(self._SCHEMA, struct.unpack(self._FORMAT, bytes(value))[0])

    def to_connect_batch(self, topic: str, values: list[bytes | None]) -> tuple[list[Schema | None], list[Any]] | None:
        return [self._SCHEMA] * len(values), [self.to_connect_data(topic, v).value for v in values]

    def from_connect_batch(
        self, topic: str, schemas: list[Schema | None], values: list[Any]
    ) -> list[bytes | None] | None:
        return [self.from_connect_data(topic, s, v) for s, v in zip(schemas, values, strict=True)]

    def close(self) -> None:
        pass


class ShortConverter(_NumberConverter):
    """``org.apache.kafka.connect.converters.ShortConverter``: INT16 as 2 big-endian bytes."""

    _TYPE = Type.INT16
    _TYPE_NAME = "short"
    _FORMAT = ">h"
    _SCHEMA = Schema.OPTIONAL_INT16_SCHEMA
    _DESERIALIZER = "ShortDeserializer"


class IntegerConverter(_NumberConverter):
    """``org.apache.kafka.connect.converters.IntegerConverter``: INT32 as 4 big-endian bytes."""

    _TYPE = Type.INT32
    _TYPE_NAME = "integer"
    _FORMAT = ">i"
    _SCHEMA = Schema.OPTIONAL_INT32_SCHEMA
    _DESERIALIZER = "IntegerDeserializer"


class LongConverter(_NumberConverter):
    """``org.apache.kafka.connect.converters.LongConverter``: INT64 as 8 big-endian bytes."""

    _TYPE = Type.INT64
    _TYPE_NAME = "long"
    _FORMAT = ">q"
    _SCHEMA = Schema.OPTIONAL_INT64_SCHEMA
    _DESERIALIZER = "LongDeserializer"


class FloatConverter(_NumberConverter):
    """``org.apache.kafka.connect.converters.FloatConverter``: FLOAT32 as its 4 IEEE 754
    bytes. A Python float is rounded to single precision; reading gives the float32's
    exact value as a Python float."""

    _TYPE = Type.FLOAT32
    _TYPE_NAME = "float"
    _FORMAT = ">f"
    _SCHEMA = Schema.OPTIONAL_FLOAT32_SCHEMA
    _DESERIALIZER = "Deserializer"


class DoubleConverter(_NumberConverter):
    """``org.apache.kafka.connect.converters.DoubleConverter``: FLOAT64 as its 8 IEEE 754 bytes."""

    _TYPE = Type.FLOAT64
    _TYPE_NAME = "double"
    _FORMAT = ">d"
    _SCHEMA = Schema.OPTIONAL_FLOAT64_SCHEMA
    _DESERIALIZER = "Deserializer"
