"""Schema helpers shared by the built-in transforms: ``SchemaUtil.copySchemaBasics``,
the per-transform cache of output schemas (Kafka's ``LRUCache``), the schema type of a
schemaless value (``ConnectSchema.schemaType``) and the width of the integer types."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from sluice.api.data import Schema, SchemaBuilder, Type

__all__ = ["LRUCache", "copy_schema_basics", "int_bits"]


_INT_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}


def int_bits(schema_type: Type) -> int:
    """8, 16, 32 or 64 for the integer schema types."""
    return _INT_BITS[schema_type]


def copy_schema_basics(source: Schema, builder: SchemaBuilder | None = None) -> SchemaBuilder:
    """Copy ``source``'s name, version, doc and parameters onto ``builder`` (not its
    optionality, default or fields), as ``SchemaUtil.copySchemaBasics``. Without a builder,
    one of ``source``'s type is made (arrays and maps keep their element schemas)."""
    if builder is None:
        if source.type is Type.ARRAY:
            builder = SchemaBuilder.array(source.value_schema())
        elif source.type is Type.MAP:
            builder = SchemaBuilder.map(source.key_schema(), source.value_schema())
        else:
            builder = SchemaBuilder(source.type)
    builder.name(source.name)  # type: ignore[arg-type]
    builder.version(source.version)  # type: ignore[arg-type]
    builder.doc(source.doc)  # type: ignore[arg-type]
    if source.parameters is not None:
        builder.parameters(source.parameters)
    return builder


class LRUCache:
    """A small least-recently-used map (Kafka's ``LRUCache``), used to keep one output
    schema per input schema so that records with the same schema share the same output
    schema object. Keys are compared with ``==`` (after an identity check)."""

    def __init__(self, max_size: int = 16) -> None:
        self.max_size = max_size
        self._entries: OrderedDict[Any, Any] = OrderedDict()

    def get(self, key: Any) -> Any:
        try:
            value = self._entries[key]
        except KeyError:
            return None
        self._entries.move_to_end(key)
        return value

    def put(self, key: Any, value: Any) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_size:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
