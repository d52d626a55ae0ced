"""Confluent's conventions for Connect data in Avro, shared by both directions of the mapping.

The names and properties Confluent's ``AvroData`` writes (``connect.name``,
``connect.parameters``, ``io.confluent.connect.avro.ConnectDefault`` ...), the
``io.confluent.connect.avro.Anything`` record that carries schemaless values, and
:class:`AvroDataBase`: the ``AvroDataConfig`` options, caches and name scrubbing that
:class:`~sluice.formats.avro.from_connect.ConnectToAvro` and
:class:`~sluice.formats.avro.to_connect.AvroToConnect` share.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from sluice.api.data import Date, Decimal, Schema, Time, Timestamp, Type
from sluice.formats.avro.schema import AvroField, AvroType, scrub_name

__all__ = ["ANYTHING_SCHEMA", "AvroDataBase", "is_union_schema"]

NAMESPACE = "io.confluent.connect.avro"
DEFAULT_SCHEMA_NAME = "ConnectDefault"
DEFAULT_SCHEMA_FULL_NAME = NAMESPACE + "." + DEFAULT_SCHEMA_NAME
MAP_ENTRY_TYPE_NAME = "MapEntry"
KEY_FIELD = "key"
VALUE_FIELD = "value"

CONNECT_NAME_PROP = "connect.name"
CONNECT_DOC_PROP = "connect.doc"
CONNECT_VERSION_PROP = "connect.version"
CONNECT_DEFAULT_VALUE_PROP = "connect.default"
CONNECT_PARAMETERS_PROP = "connect.parameters"
CONNECT_INTERNAL_TYPE_NAME = "connect.internal.type"
CONNECT_TYPE_PROP = "connect.type"
AVRO_RECORD_DOC_PROP = NAMESPACE + ".record.doc"
AVRO_ENUM_DOC_PREFIX_PROP = NAMESPACE + ".enum.doc."
AVRO_FIELD_DOC_PREFIX_PROP = NAMESPACE + ".field.doc."
AVRO_FIELD_DEFAULT_FLAG_PROP = NAMESPACE + ".field.default"
AVRO_ENUM_DEFAULT_PREFIX_PROP = NAMESPACE + ".enum.default."
AVRO_TYPE_UNION = NAMESPACE + ".Union"
AVRO_TYPE_ENUM = NAMESPACE + ".Enum"
AVRO_TYPE_ANYTHING = NAMESPACE + ".Anything"
GENERALIZED_TYPE_UNION = "org.apache.kafka.connect.data.Union"
GENERALIZED_TYPE_ENUM = "org.apache.kafka.connect.data.Enum"
GENERALIZED_TYPE_UNION_PREFIX = "connect_union_"
GENERALIZED_TYPE_UNION_FIELD_PREFIX = GENERALIZED_TYPE_UNION_PREFIX + "field_"
AVRO_PROP = "avro"
AVRO_LOGICAL_TYPE_PROP = "logicalType"
AVRO_LOGICAL_TIMESTAMP_MILLIS = "timestamp-millis"
AVRO_LOGICAL_TIME_MILLIS = "time-millis"
AVRO_LOGICAL_DATE = "date"
AVRO_LOGICAL_DECIMAL = "decimal"
CONNECT_AVRO_FIXED_SIZE_PROP = "connect.fixed.size"
CONNECT_AVRO_DECIMAL_PRECISION_PROP = "connect.decimal.precision"
CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT = 64

LOGICAL_NAMES = (Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME)


def _anything() -> AvroType:
    anything = AvroType("record", name="Anything", namespace=NAMESPACE)

    def optional(t: AvroType) -> AvroType:
        return AvroType("union", branches=[AvroType("null"), t])

    entry = AvroType("record", name=MAP_ENTRY_TYPE_NAME, namespace=NAMESPACE)
    entry.fields = [AvroField(KEY_FIELD, anything), AvroField(VALUE_FIELD, anything)]
    anything.fields = [
        AvroField(n, optional(AvroType(t)), default=None)
        for n, t in (
            ("boolean", "boolean"),
            ("bytes", "bytes"),
            ("double", "double"),
            ("float", "float"),
            ("int", "int"),
            ("long", "long"),
            ("string", "string"),
        )
    ]
    anything.fields.append(AvroField("array", optional(AvroType("array", items=anything)), default=None))
    anything.fields.append(AvroField("map", optional(AvroType("array", items=entry)), default=None))
    return anything


ANYTHING_SCHEMA = _anything()
"""``io.confluent.connect.avro.Anything``: how Confluent writes values that have no schema."""


def is_union_schema(schema: Schema) -> bool:
    """A Connect struct standing for an Avro union (Confluent's or the generalized form)."""
    return schema.type is Type.STRUCT and (
        schema.name == AVRO_TYPE_UNION
        or (schema.parameters is not None and GENERALIZED_TYPE_UNION in schema.parameters)
    )


class _LRU(OrderedDict[Any, Any]):
    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = max(1, size)

    def get_(self, key: Any) -> Any:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def put(self, key: Any, value: Any) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)


class AvroDataBase:
    """What both directions of Confluent's ``AvroData`` share: the ``AvroDataConfig`` options
    (as keyword arguments), each direction's schema cache, and the scrubbing of names."""

    def __init__(
        self,
        *,
        cache_size: int = 1000,
        connect_meta_data: bool = True,
        enhanced_avro_schema_support: bool = False,
        generalized_sum_type_support: bool = False,
        ignore_default_for_nullables: bool = False,
        scrub_invalid_names: bool = False,
        allow_optional_map_keys: bool = False,
        flatten_singleton_unions: bool = True,
    ) -> None:
        self.connect_meta_data = connect_meta_data
        self.enhanced = enhanced_avro_schema_support
        self.generalized = generalized_sum_type_support
        self.ignore_default_for_nullables = ignore_default_for_nullables
        self.scrub = scrub_invalid_names
        self.allow_optional_map_keys = allow_optional_map_keys
        self.flatten_singleton_unions = flatten_singleton_unions
        self._from_cache = _LRU(cache_size)  # Connect schema -> Avro schema (ConnectToAvro)
        self._to_cache = _LRU(cache_size)  # (Avro schema, version) -> Connect schema (AvroToConnect)
        self._union_index = 0  # numbers the generalized unions AvroToConnect names

    def _scrub(self, name: str) -> str:
        return scrub_name(name) if self.scrub else name

    def _split_name(self, full: str) -> tuple[str | None, str]:
        parts = [self._scrub(p) for p in full.split(".")]
        while len(parts) > 1 and parts[-1] == "":
            parts.pop()  # Java's String.split drops trailing empty strings
        if len(parts) <= 1:
            return None, parts[0]
        return ".".join(parts[:-1]), parts[-1]
