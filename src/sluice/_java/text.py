"""Java's text forms: JSON string literals as Jackson writes them, ``Double.toString`` and
``Float.toString``, ``String.split``."""

from __future__ import annotations

import decimal as _decimal
import math
import re
from collections.abc import Callable
from json.encoder import encode_basestring as _encode_basestring
from typing import Literal

from sluice._java.numbers import to_float32

__all__ = ["Surrogates", "jackson_quoter", "jackson_string", "java_double_string", "java_float_string", "java_split"]


# -- JSON string literals, as Jackson writes them ------------------------------------------

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_TO_ESCAPE = re.compile(r'["\\\x00-\x1f]')


def _escape_char(m: re.Match[str]) -> str:
    c = m.group()
    return _ESCAPES.get(c) or f"\\u{ord(c):04X}"


def _escape_utf16(m: re.Match[str]) -> str:
    cp = ord(m.group())
    if cp < 0x10000:
        return f"\\u{cp:04X}"
    cp -= 0x10000
    return f"\\u{0xD800 | (cp >> 10):04X}\\u{0xDC00 | (cp & 0x3FF):04X}"


Surrogates = Literal["escape", "pairs", "raw"]


def jackson_quoter(surrogates: Surrogates = "escape") -> Callable[[str], str]:
    """The function writing a ``str`` as the JSON string literal Jackson writes, quotes
    included (one function per mode, to bind once where strings are many).

    ``"`` and ``\\`` are escaped, ``\\b \\t \\n \\f \\r`` are written so, other characters
    below U+0020 as ``\\u00XX`` with upper-case hex; ``/``, U+007F and the rest of the
    Basic Multilingual Plane are written as they are. ``surrogates`` says what becomes of
    UTF-16 surrogates, i.e. of characters beyond the BMP (an emoji) and of lone surrogates:

    * ``"escape"`` — Jackson's ``UTF8JsonGenerator`` (``ObjectMapper`` writing bytes):
      every surrogate is escaped, so an emoji is the pair ``\\uD83D\\uDE00`` and a lone
      surrogate ``\\uD800`` (:func:`jackson_string`);
    * ``"pairs"`` — characters beyond the BMP escaped as pairs, lone surrogates written
      as they are (encoding the text as UTF-8 then fails on them);
    * ``"raw"`` — Jackson's ``WriterBasedJsonGenerator`` (writing characters, e.g. Avro's
      ``Schema.toString``): nothing beyond the control characters is escaped.
    """
    return _QUOTERS[surrogates]


def _quoter(utf16_escaped: re.Pattern[str] | None) -> Callable[[str], str]:
    def quote(text: str) -> str:
        out = _encode_basestring(text)
        if "\\u00" in out:  # rare: Python writes lower-case hex, Jackson upper-case
            out = '"' + _TO_ESCAPE.sub(_escape_char, text) + '"'
        if utf16_escaped is not None and not text.isascii():
            out = utf16_escaped.sub(_escape_utf16, out)
        return out

    return quote


_QUOTERS: dict[str, Callable[[str], str]] = {
    "escape": _quoter(re.compile("[\ud800-\udfff\U00010000-\U0010ffff]")),
    "pairs": _quoter(re.compile("[\U00010000-\U0010ffff]")),
    "raw": _quoter(None),
}


_ESCAPE_ALL = _QUOTERS["escape"]


def jackson_string(text: str) -> str:
    """``text`` as the JSON string literal Jackson's ``ObjectMapper`` writes to bytes
    (``UTF8JsonGenerator``): :func:`jackson_quoter` ``("escape")``, so characters beyond the
    BMP and lone surrogates are ``\\uXXXX`` escapes of their UTF-16 code units."""
    return _ESCAPE_ALL(text)


# -- Double.toString / Float.toString ------------------------------------------------------


def _shortest_digits(text: str) -> tuple[str, int]:
    """Significant digits (no trailing zeros) and exponent ``e`` of the positive number
    written as ``text``, so that value = d1.d2d3... × 10**e."""
    _sign, digit_tuple, exponent = _decimal.Decimal(text).as_tuple()
    full = "".join(map(str, digit_tuple))
    return full.rstrip("0") or "0", len(full) - 1 + int(exponent)


def _java_format(digits: str, e: int, negative: bool) -> str:
    sign = "-" if negative else ""
    if -3 <= e < 7:
        if e >= 0:
            int_part = digits[: e + 1].ljust(e + 1, "0")
            frac = digits[e + 1 :] or "0"
        else:
            int_part = "0"
            frac = "0" * (-e - 1) + digits
        return f"{sign}{int_part}.{frac}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{e}"


def _without_digits(value: float) -> str:
    """How Java prints the doubles and floats written without digits: NaN, the infinities
    and the zeros."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"


def java_double_string(value: float) -> str:
    """``Double.toString(value)`` (shortest round-trip digits, as JDK 19+ prints them)."""
    if value == 0.0 or not math.isfinite(value):
        return _without_digits(value)
    a = abs(value)
    digits, e = _shortest_digits(repr(a))
    if len(digits) == 1:
        # Java always prints at least two significant digits; pick the closest pair.
        digits, e = _shortest_digits(f"{a:.1e}")
    return _java_format(digits, e, value < 0)


def java_float_string(value: float) -> str:
    """``Float.toString((float) value)``: shortest digits that round-trip as float32."""
    f = to_float32(value)
    if f == 0.0 or not math.isfinite(f):
        return _without_digits(f)
    a = abs(f)
    text = f"{a:.1e}"
    for precision in range(10):
        candidate = f"{a:.{precision}e}"
        if to_float32(float(candidate)) == a:  # a candidate beyond float32's range is inf: no match
            text = candidate if precision > 0 else f"{a:.1e}"
            break
    digits, e = _shortest_digits(text)
    return _java_format(digits, e, f < 0)


# -- String.split ------------------------------------------------------------------------------


def java_split(text: str, sep: str) -> list[str]:
    """``String.split`` with a literal one-character separator: trailing empty strings are
    dropped, but a string without the separator splits into itself (``"" -> [""]``)."""
    if sep not in text:
        return [text]
    parts = text.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts
