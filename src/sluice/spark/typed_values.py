"""Connect values from the typed Spark columns a columnar chain hands to the executor.

A columnar chain (``spark/columnar.py``) that changes a key, a value or adds headers from
them carries the result as Spark columns in Connect's *physical* form: structs as Spark
structs, Timestamp as epoch milliseconds, Date as epoch days, Time as milliseconds of the
day. The schema of each is static (known when the chain compiles), so the executor turns
the Arrow values back into Connect values with that schema alone. No pyspark here: this
runs on the executors' Python workers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sluice.api.data import DATE_TIME_TYPES, Schema, Struct, Type

__all__ = ["TypedOutputs", "value_builder"]

# Columns a columnar chain adds when it changes the key, the value or adds headers.
SINK_KEY = "sink_key"
SINK_VALUE = "sink_value"
SINK_ADDED_HEADERS = "sink_added_headers"


@dataclass(frozen=True)
class TypedOutputs:
    """What the typed columns of a sink batch hold: the key's and the value's final schema
    (``None``: not changed by the chain, the converter's result stands) and the headers a
    ``HeaderFrom`` adds, ``(name, schema)`` in order, read from ``sink_added_headers``
    fields ``h0``, ``h1``, …"""

    key_schema: Schema | None = None
    value_schema: Schema | None = None
    added_headers: tuple[tuple[str, Schema], ...] = ()


Builder = Callable[[Any], Any]


def value_builder(schema: Schema) -> Builder:
    """A function from one Arrow value (``to_pylist`` form) to the Connect value of ``schema``."""
    logical = DATE_TIME_TYPES.get(schema.name) if schema.name is not None else None
    if logical is not None:
        return _nullable(lambda v: logical.to_logical(schema, v))
    kind = schema.type
    if kind is Type.STRUCT:
        fields = [(f.name, value_builder(f.schema)) for f in schema.fields()]

        def struct(v: dict[str, Any] | None) -> Struct | None:
            if v is None:
                return None
            return Struct.from_converted(schema, [build(v[n]) for n, build in fields])

        return struct
    if kind is Type.ARRAY:
        element = value_builder(schema.value_schema())
        return _nullable(lambda v: [element(e) for e in v])
    if kind is Type.MAP:
        key, value = value_builder(schema.key_schema()), value_builder(schema.value_schema())
        return _nullable(lambda v: {key(k): value(e) for k, e in v})
    if kind is Type.BYTES:
        return _nullable(bytes)
    return _identity


def _identity(value: Any) -> Any:
    return value


def _nullable(build: Builder) -> Builder:
    return lambda v: None if v is None else build(v)
