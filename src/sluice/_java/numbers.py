"""Java's integer and floating-point semantics: narrowing, casts of doubles, float32
rounding and the ``parseXxx`` methods of the boxed number classes."""

from __future__ import annotations

import decimal as _decimal
import re
import struct as _struct

__all__ = [
    "decimal_from_java_string",
    "float_to_int",
    "narrow",
    "parse_java_double",
    "parse_java_float",
    "parse_java_integer",
    "to_float32",
]


def narrow(n: int, bits: int) -> int:
    """``n`` narrowed to a signed ``bits``-bit integer as Java does it (``(byte)``,
    ``(short)``, ``(int)`` casts, ``intValue()`` of a long, overflowing ``long``
    arithmetic): the low ``bits`` bits of ``n``'s two's complement, read as signed.
    ``narrow(2**31, 32)`` is ``-2**31``, ``narrow(-129, 8)`` is ``127``; a value already
    in range is returned as it is."""
    half = 1 << (bits - 1)
    if -half <= n < half:
        return n
    return ((n + half) & ((half << 1) - 1)) - half


def float_to_int(value: float, bits: int) -> int:
    """Java's ``(byte)``/``(short)``/``(int)``/``(long)`` cast of a double: NaN is 0, the
    value is truncated towards zero and saturated to the int (or long) range, then narrowed
    to 8 or 16 bits by keeping the low bits."""
    if value != value:  # NaN
        return 0
    wide = 64 if bits == 64 else 32
    lo, hi = -(1 << (wide - 1)), (1 << (wide - 1)) - 1
    if value >= hi:
        n = hi
    elif value <= lo:
        n = lo
    else:
        n = int(value)
    return narrow(n, bits) if bits < wide else n


def to_float32(value: float) -> float:
    """Java's ``(float)`` cast of a double: ``value`` rounded to the nearest IEEE single
    (±inf when out of range)."""
    try:
        return _struct.unpack("<f", _struct.pack("<f", value))[0]
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


_JAVA_INTEGER = re.compile(r"[+-]?\d+")
_JAVA_FLOATING = re.compile(
    r"[+-]?(NaN|Infinity|(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)|"
    r"(0[xX]([0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?[0-9]+))[fFdD]?"
)
# Java reads the digits of integers and BigDecimals with Character.digit, so any Unicode
# decimal digit counts (what \d matches in a str pattern); Double.parseDouble is ASCII only.
_BIG_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
# What Double.parseDouble trims: every character up to U+0020.
_JAVA_WHITESPACE = "".join(chr(c) for c in range(0x21))


def parse_java_integer(text: str, bits: int) -> int:
    """``Byte.parseByte``/``Short.parseShort``/``Integer.parseInt``/``Long.parseLong``:
    an optional sign and decimal digits (any Unicode decimal digit, as Java's
    ``Character.digit`` reads them: ``"\u0663"`` is 3), in range; :class:`ValueError` otherwise."""
    if not _JAVA_INTEGER.fullmatch(text):
        raise ValueError(f'For input string: "{text}"')
    n = int(text)
    if not -(1 << (bits - 1)) <= n < (1 << (bits - 1)):
        raise ValueError(f'Value out of range. Value:"{text}"')
    return n


def parse_java_double(text: str) -> float:
    """``Double.parseDouble``: surrounding whitespace ignored; decimal, hexadecimal,
    ``NaN`` and ``Infinity`` forms with an optional ``f``/``d`` suffix; :class:`ValueError`
    otherwise."""
    trimmed = text.strip(_JAVA_WHITESPACE)
    if not _JAVA_FLOATING.fullmatch(trimmed):
        raise ValueError(f'For input string: "{text}"')
    # A trailing f/F/d/D is always a type suffix: hexadecimal forms end with the decimal
    # digits of their binary exponent.
    body = trimmed[:-1] if trimmed[-1] in "fFdD" else trimmed
    if "x" in body[:3].lower():
        return float.fromhex(body)
    return float(body.replace("Infinity", "inf"))


def parse_java_float(text: str) -> float:
    """``Float.parseFloat`` (see :func:`parse_java_double`), rounded to a single."""
    return to_float32(parse_java_double(text))


def decimal_from_java_string(text: str) -> _decimal.Decimal:
    """``new BigDecimal(text)``: raises :class:`ValueError` for anything Java refuses (digits
    may be any Unicode decimal digit, as in Java)."""
    if not _BIG_DECIMAL.fullmatch(text):
        raise ValueError(text)
    return _decimal.Decimal(text)
