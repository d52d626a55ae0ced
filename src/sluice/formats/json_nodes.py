"""JSON text and nodes as Jackson writes and reads them, for Kafka's JsonConverter mapping.

Writing: strings quoted as Jackson's UTF-8 generator quotes them (:data:`quote_string`,
:func:`json_bytes`), doubles and floats as Java prints them with ``NaN``/``Infinity``
quoted, bytes as padded base64. Reading: a parsed JSON node (Python's ``json`` values,
numbers possibly :class:`decimal.Decimal`, or :data:`MISSING` for empty input) read the
way Jackson's ``JsonNode`` accessors read the node Kafka's parser builds.
"""

from __future__ import annotations

import base64
import decimal
import math
import re
from typing import Any

from sluice._java.numbers import narrow
from sluice._java.text import jackson_quoter
from sluice.api.data import java_double_string, java_float_string

__all__ = [
    "LONE_SURROGATE",
    "MISSING",
    "base64_decode",
    "base64_text",
    "double_text",
    "float_text",
    "is_int32",
    "is_number",
    "java_double",
    "java_float",
    "java_int",
    "java_long",
    "json_bytes",
    "node_type",
    "quote_string",
]

# -- writing ----------------------------------------------------------------------------

# JsonConverter writes strings as Jackson's UTF-8 generator does, characters beyond the BMP
# as escaped surrogate pairs (\uD83D\uDE00); a lone surrogate is left as it is, so encoding
# the text as UTF-8 refuses it (a DataError), where Jackson would write it escaped.
quote_string = jackson_quoter("pairs")

LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_bytes(text: str) -> bytes:
    """JSON text as the UTF-8 bytes Jackson writes: lone UTF-16 surrogates (which only
    string literals hold: :data:`quote_string` writes them as they are) as ``\\uD800``
    escapes."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04X}", text).encode("utf-8")


def double_text(value: float) -> str:
    text = java_double_string(value)
    return text if text[-1].isdigit() else f'"{text}"'  # NaN / Infinity are quoted by Jackson


def float_text(value: float) -> str:
    text = java_float_string(value)
    return text if text[-1].isdigit() else f'"{text}"'


def base64_text(value: bytes | bytearray | memoryview) -> str:
    return '"' + base64.b64encode(value).decode("ascii") + '"'


# -- reading ----------------------------------------------------------------------------

MISSING = object()  # Jackson's MissingNode: empty input


def node_type(node: Any) -> str:
    """Jackson's ``JsonNodeType`` name of a node (what Kafka's error messages show)."""
    if node is None:
        return "NULL"
    if node is MISSING:
        return "MISSING"
    if isinstance(node, bool):
        return "BOOLEAN"
    if isinstance(node, (int, float, decimal.Decimal)):
        return "NUMBER"
    if isinstance(node, str):
        return "STRING"
    if isinstance(node, list):
        return "ARRAY"
    return "OBJECT"


def is_number(node: Any) -> bool:
    return isinstance(node, (int, float, decimal.Decimal)) and not isinstance(node, bool)


def java_int(node: Any) -> int:
    """``JsonNode.intValue()``: numbers truncated to 32 bits, anything else 0."""
    if isinstance(node, bool) or not is_number(node):
        return 0
    return narrow(int(node), 32)


def java_long(node: Any) -> int:
    if isinstance(node, bool) or not is_number(node):
        return 0
    return narrow(int(node), 64)


def java_double(node: Any) -> float:
    """``JsonNode.doubleValue()`` of the node Kafka's parser builds: numbers are read as
    BigDecimal, which has no negative zero, so ``-0.0`` reads as ``0.0``."""
    if isinstance(node, bool) or not is_number(node):
        return 0.0
    return float(node) or 0.0


_FLOAT32_MAX = 3.4028235677973366e38  # values from here on round to infinity in float32


def java_float(node: Any) -> float:
    """``JsonNode.floatValue()``: the decimal value written (not rounded to single
    precision), except that a value beyond float32's range is an infinity, as in Java."""
    value = java_double(node)
    if value >= _FLOAT32_MAX or value <= -_FLOAT32_MAX:
        return math.copysign(math.inf, value)
    return value


def is_int32(node: Any) -> bool:
    return type(node) is int and -(2**31) <= node < 2**31


def base64_decode(text: str) -> bytes:
    return base64.b64decode(text, validate=True)
