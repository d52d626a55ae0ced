"""``org.apache.kafka.connect.storage.SimpleHeaderConverter`` (the worker's default
``header.converter``), covering the common cases.

Serialisation follows Kafka's ``Values.convertToString``: strings as they are,
booleans ``true``/``false``, numbers as Java prints them, bytes as base64, lists
``[a,b]`` and maps ``{"k":v}`` with embedded strings quoted, structs as
``{"field":value,...}``, Date/Time/Timestamp as ISO-8601 (``2024-01-31``,
``13:45:00.000Z``, ``2024-01-31T13:45:00.000Z``).

Deserialisation follows ``Values.parseString`` for scalars: empty → STRING ``""``;
``true``/``false`` (any case) → BOOLEAN; an integer → the smallest of INT8, INT16, INT32,
INT64 that holds it; any other number → FLOAT64; anything else → STRING.

Not implemented (documented gaps): parsing of arrays, maps, ISO dates and times back
into typed values (they come back as STRING, whole), Kafka's FLOAT32 choice for short
decimals (we return FLOAT64), and ``null`` tokens inside arrays or maps.
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal
import re
from typing import Any

from sluice.api.config import ConfigDef
from sluice.api.converter import HeaderConverter, SchemaAndValue
from sluice.api.data import (
    Date,
    Schema,
    Struct,
    Time,
    Timestamp,
    Type,
    java_double_string,
    java_float_string,
    java_string,
)

__all__ = ["SimpleHeaderConverter"]

_INT = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_INT_SCHEMAS = (
    (8, Schema.INT8_SCHEMA),
    (16, Schema.INT16_SCHEMA),
    (32, Schema.INT32_SCHEMA),
    (64, Schema.INT64_SCHEMA),
)


def _escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def _append(out: list[str], schema: Schema | None, value: Any, embedded: bool) -> None:
    if value is None:
        out.append("null")
        return
    name = schema.name if schema is not None else None
    if isinstance(value, bool):
        out.append("true" if value else "false")
    elif isinstance(value, str):
        out.append(f'"{_escape(value)}"' if embedded else value)
    elif isinstance(value, float):
        if schema is not None and schema.type is Type.FLOAT32:
            out.append(java_float_string(value))
        else:
            out.append(java_double_string(value))
    elif isinstance(value, (int, decimal.Decimal)):
        out.append(java_string(value))
    elif isinstance(value, (bytes, bytearray, memoryview)):
        text = base64.b64encode(value).decode("ascii")
        out.append(f'"{text}"' if embedded else text)
    elif isinstance(value, (list, tuple)):
        vs = schema.value_schema() if schema is not None and schema.type is Type.ARRAY else None
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _append(out, vs, item, True)
        out.append("]")
    elif isinstance(value, dict):
        ks = schema.key_schema() if schema is not None and schema.type is Type.MAP else None
        vs = schema.value_schema() if schema is not None and schema.type is Type.MAP else None
        out.append("{")
        for i, (k, v) in enumerate(value.items()):
            if i:
                out.append(",")
            _append(out, ks, k, True)
            out.append(":")
            _append(out, vs, v, True)
        out.append("}")
    elif isinstance(value, Struct):
        out.append("{")
        for i, f in enumerate(value.schema.fields()):
            if i:
                out.append(",")
            _append(out, None, f.name, True)
            out.append(":")
            _append(out, f.schema, value.get(f), True)
        out.append("}")
    elif isinstance(value, (_dt.date, _dt.time)):
        text = _iso(name, value)
        out.append(f'"{text}"' if embedded else text)
    else:
        out.append(java_string(value))


def _iso(name: str | None, value: _dt.date | _dt.time) -> str:
    if isinstance(value, _dt.time) or name == Time.LOGICAL_NAME:
        ms = Time.from_logical(Time.SCHEMA, value)  # type: ignore[arg-type]
        seconds, millis = divmod(ms, 1000)
        minutes, second = divmod(seconds, 60)
        hour, minute = divmod(minutes, 60)
        return f"{hour:02d}:{minute:02d}:{second:02d}.{millis:03d}Z"
    if not isinstance(value, _dt.datetime) or name == Date.LOGICAL_NAME:
        day = Date.to_logical(Date.SCHEMA, Date.from_logical(Date.SCHEMA, value))
        return f"{day.year:04d}-{day.month:02d}-{day.day:02d}"
    ts = Timestamp.to_logical(Timestamp.SCHEMA, Timestamp.from_logical(Timestamp.SCHEMA, value))
    return (
        f"{ts.year:04d}-{ts.month:02d}-{ts.day:02d}T{ts.hour:02d}:{ts.minute:02d}:{ts.second:02d}"
        f".{ts.microsecond // 1000:03d}Z"
    )


def convert_to_string(schema: Schema | None, value: Any) -> str | None:
    """``Values.convertToString`` for the supported cases."""
    if value is None:
        return None
    out: list[str] = []
    _append(out, schema, value, False)
    return "".join(out)


def parse_string(text: str) -> SchemaAndValue:
    """``Values.parseString`` for scalars (see the module docstring for the gaps)."""
    if text == "":
        return SchemaAndValue(Schema.STRING_SCHEMA, text)
    token = text.strip()
    lower = token.lower()
    if lower == "true":
        return SchemaAndValue(Schema.BOOLEAN_SCHEMA, True)
    if lower == "false":
        return SchemaAndValue(Schema.BOOLEAN_SCHEMA, False)
    if _INT.fullmatch(token):
        n = int(token)
        for bits, schema in _INT_SCHEMAS:
            if -(1 << (bits - 1)) <= n < (1 << (bits - 1)):
                return SchemaAndValue(schema, n)
        return SchemaAndValue(Schema.STRING_SCHEMA, text)
    if _NUMBER.fullmatch(token):
        return SchemaAndValue(Schema.FLOAT64_SCHEMA, float(token))
    return SchemaAndValue(Schema.STRING_SCHEMA, text)


class SimpleHeaderConverter(HeaderConverter):
    """Header values as plain UTF-8 strings, with the type inferred on the way back."""

    def config(self) -> ConfigDef:
        return ConfigDef()

    def configure(self, configs: dict[str, Any]) -> None:
        pass

    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None, value: Any) -> bytes | None:
        text = convert_to_string(schema, value)
        return None if text is None else text.encode("utf-8")

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(None, None)
        return parse_string(bytes(value).decode("utf-8", "replace"))

    def close(self) -> None:
        pass
