"""Kafka Connect's source-offset key and value bytes (spec 5.3).

Kafka serialises offsets with its internal ``JsonConverter`` (``schemas.enable=false``),
whose bytes come from Jackson's default ``ObjectMapper``. Keys are compared as exact
bytes (compaction, partitioning, the standalone file's map), so this module writes the
same JSON Jackson writes:

* compact: no whitespace; object members in insertion order; UTF-8 with characters
  of the Basic Multilingual Plane written raw (``ü`` is ``C3 BC``);
* strings escape ``"`` and ``\\``, use ``\\b \\t \\n \\f \\r`` and otherwise ``\\u00XX`` with
  **upper-case** hex for control characters below U+0020; ``/``, U+007F and other BMP
  characters are not escaped; a character **outside the BMP** (an emoji) is written as
  its escaped UTF-16 surrogate pair, ``\\uD83D\\uDE00``, because Jackson's
  ``UTF8JsonGenerator`` escapes surrogates (lone surrogates are escaped likewise);
* ``int`` is written as an integer (``bool`` as ``true``/``false``);
* ``float`` is written like Java's ``Double.toString``: ``1.0``, ``0.001``, ``1.0E7``,
  ``1.0E-4``, ``-0.0``; NaN and infinities as the strings ``"NaN"``, ``"Infinity"``,
  ``"-Infinity"`` (Jackson's default ``QUOTE_NON_NUMERIC_NUMBERS``). The digits are the
  shortest that round-trip (with Java's tie rule: ``Double.MIN_VALUE`` is ``4.9E-324``),
  which is what Java 19+ prints. Java 17's older algorithm prints a superfluous digit
  for some values of magnitude 1e16 to 1e26 and for some subnormals
  (``1.61304845894623136E17`` where we write ``1.6130484589462314E17``), so a Java 17
  worker's key for such a float differs from ours;
* ``bytes`` become a base64 string (Jackson's ``BinaryNode``);
* a mapping whose keys are not all strings is written as an array of ``[key, value]``
  pairs, as ``JsonConverter`` does for schemaless maps;
* anything else (``Decimal``, sets, arbitrary objects) raises :class:`DataError`, as
  ``JsonConverter`` does for Java classes without a schema type.

Reading follows ``JsonConverter.toConnectData``: integral numbers become ``int``, other
numbers ``float``.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping
from typing import Any

from sluice._java.text import jackson_string
from sluice.api.data import java_double_string
from sluice.api.errors import DataError

__all__ = [
    "decode_offset_key",
    "decode_offset_value",
    "encode_json",
    "encode_offset_key",
    "encode_offset_value",
    "java_double_to_string",
]

# Java's Double.toString, as Jackson writes doubles; one implementation serves the API
# (JsonConverter, java_string) and these offsets.
java_double_to_string = java_double_string


def _write(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(jackson_string(value))
    elif isinstance(value, int):
        out.append(str(int(value)))
    elif isinstance(value, float):
        text = java_double_to_string(float(value))
        out.append(text if math.isfinite(value) else jackson_string(text))  # "NaN", "Infinity"
    elif isinstance(value, (bytes, bytearray, memoryview)):
        out.append(jackson_string(base64.b64encode(bytes(value)).decode("ascii")))
    elif isinstance(value, Mapping):
        if all(isinstance(key, str) for key in value):
            out.append("{")
            first = True
            for key, item in value.items():
                if not first:
                    out.append(",")
                first = False
                out.append(jackson_string(key))
                out.append(":")
                _write(item, out)
            out.append("}")
        else:
            out.append("[")
            first = True
            for key, item in value.items():
                if not first:
                    out.append(",")
                first = False
                out.append("[")
                _write(key, out)
                out.append(",")
                _write(item, out)
                out.append("]")
            out.append("]")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(item, out)
        out.append("]")
    else:
        raise DataError(f"{type(value).__name__} does not have corresponding schema type.")


def encode_json(value: Any) -> bytes:
    """Compact JSON bytes of ``value`` exactly as JsonConverter (schemas off) writes them."""
    out: list[str] = []
    _write(value, out)
    return "".join(out).encode("utf-8")


def _decode_json(data: bytes) -> Any:
    return json.loads(bytes(data).decode("utf-8"))


def encode_offset_key(connector: str, partition: Mapping[str, Any]) -> bytes:
    """The offsets-topic key ``[<connector>,<partition>]``.

    ``encode_offset_key("local-file-source", {"filename": "/mnt/connect.input"})`` is
    ``b'["local-file-source",{"filename":"/mnt/connect.input"}]'``.
    """
    return encode_json([connector, partition])


def decode_offset_key(key: bytes) -> tuple[str, dict[str, Any]] | None:
    """``(connector, partition)``, or ``None`` for keys that are not a ``[string, map]`` list.

    Such keys are ignored, as ``OffsetUtils.processPartitionKey`` ignores them.
    """
    if key is None:
        return None
    try:
        value = _decode_json(key)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], dict):
        return value[0], value[1]
    return None


def encode_offset_value(offset: Mapping[str, Any] | None) -> bytes | None:
    """The JSON bytes of a source offset; ``None`` (a tombstone) stays ``None``."""
    if offset is None:
        return None
    return encode_json(offset)


def decode_offset_value(value: bytes | None) -> dict[str, Any] | None:
    """The source offset map; ``None`` for ``None`` or JSON ``null``.

    Raises :class:`DataError` when the bytes are not JSON or not a JSON object.
    """
    if value is None:
        return None
    try:
        decoded = _decode_json(value)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise DataError(f"Converting byte[] to Kafka Connect data failed due to serialization error: {e}") from e
    if decoded is None:
        return None
    if not isinstance(decoded, dict):
        raise DataError(f"Source offset is not a JSON object: {decoded!r}")
    return decoded
