"""``sluice._java.numbers``: Java's narrowing of integers, casts of doubles, float32
rounding and the ``parseXxx`` methods."""

from __future__ import annotations

import decimal
import math
import random
import struct

import pytest

from sluice._java.numbers import (
    decimal_from_java_string,
    float_to_int,
    narrow,
    parse_java_double,
    parse_java_float,
    parse_java_integer,
    to_float32,
)

BITS = (8, 16, 32, 64)


@pytest.mark.parametrize(
    ("n", "bits", "narrowed"),
    [
        (2**31, 32, -(2**31)),
        (2**31 - 1, 32, 2**31 - 1),
        (-(2**31), 32, -(2**31)),
        (-(2**31) - 1, 32, 2**31 - 1),
        (2**32, 32, 0),
        (2**32 + 5, 32, 5),
        (-129, 8, 127),
        (-128, 8, -128),
        (127, 8, 127),
        (128, 8, -128),
        (255, 8, -1),
        (256, 8, 0),
        (300, 8, 44),
        (-300, 8, -44),
        (32768, 16, -32768),
        (65535, 16, -1),
        (-32769, 16, 32767),
        (2**63, 64, -(2**63)),
        (2**64 - 1, 64, -1),
        (-(2**63) - 1, 64, 2**63 - 1),
        (2**100 + 7, 64, 7),
        (-(2**100), 32, 0),
        (0, 8, 0),
        (-1, 64, -1),
    ],
)
def test_narrow(n: int, bits: int, narrowed: int) -> None:
    assert narrow(n, bits) == narrowed
    assert type(narrow(n, bits)) is int


@pytest.mark.parametrize("bits", BITS)
def test_narrow_is_javas_cast_through_twos_complement_bytes(bits: int) -> None:
    # Java keeps the low bits: the same as packing the low bytes and reading them signed.
    fmt = {8: "<b", 16: "<h", 32: "<i", 64: "<q"}[bits]
    rng = random.Random(bits)
    samples = [rng.randrange(-(2**130), 2**130) for _ in range(2000)]
    samples += [k * (1 << bits) + d for k in range(-3, 4) for d in (-1, 0, 1, 1 << (bits - 1), -(1 << (bits - 1)))]
    for n in samples:
        low = (n & ((1 << bits) - 1)).to_bytes(bits // 8, "little")
        assert narrow(n, bits) == struct.unpack(fmt, low)[0], n
        # the arithmetic form the copies this replaced used
        half = 1 << (bits - 1)
        assert narrow(n, bits) == ((n + half) % (1 << bits)) - half, n


def test_narrow_keeps_values_in_range() -> None:
    for bits in BITS:
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        for n in (lo, lo + 1, -1, 0, 1, hi - 1, hi):
            assert narrow(n, bits) == n


@pytest.mark.parametrize(
    ("value", "bits", "result"),
    [
        (300.7, 8, 44),
        (-300.7, 8, -44),
        (float("nan"), 32, 0),
        (float("nan"), 8, 0),
        (1e20, 32, 2**31 - 1),
        (1e20, 8, -1),  # (byte) (int) 1e20: 0x7FFFFFFF's low byte
        (-1e20, 16, 0),  # (short) Integer.MIN_VALUE
        (-1e30, 64, -(2**63)),
        (float("inf"), 64, 2**63 - 1),
        (float("-inf"), 32, -(2**31)),
        (2.0**31, 32, 2**31 - 1),
        (-0.9, 32, 0),
        (9.99, 64, 9),
    ],
)
def test_float_to_int(value: float, bits: int, result: int) -> None:
    assert float_to_int(value, bits) == result


def test_to_float32() -> None:
    assert to_float32(0.1) == 0.10000000149011612
    assert to_float32(1.5) == 1.5
    assert to_float32(3.4e39) == math.inf
    assert to_float32(-3.4e39) == -math.inf
    assert to_float32(1e-50) == 0.0
    assert math.isnan(to_float32(math.nan))
    assert to_float32(3.4028235e38) == 3.4028234663852886e38  # Float.MAX_VALUE


def test_parse_java_integer() -> None:
    assert parse_java_integer("+7", 8) == 7
    assert parse_java_integer("-128", 8) == -128
    assert parse_java_integer("\u0663", 32) == 3  # any Unicode decimal digit, as Character.digit
    assert parse_java_integer("9223372036854775807", 64) == 2**63 - 1
    for bad in ("128", " 1", "1.0", "0x10", "", "+", "1 "):
        with pytest.raises(ValueError):
            parse_java_integer(bad, 8)
    with pytest.raises(ValueError, match='^Value out of range. Value:"2147483648"$'):
        parse_java_integer("2147483648", 32)
    with pytest.raises(ValueError, match='^For input string: "x"$'):
        parse_java_integer("x", 32)


def test_parse_java_double() -> None:
    assert parse_java_double(" 1.5f ") == 1.5
    assert parse_java_double("\t1e3\n") == 1000.0
    assert parse_java_double("0x1p3") == 8.0
    assert parse_java_double("0x1.8p1d") == 3.0
    assert parse_java_double(".5") == 0.5
    assert parse_java_double("5.") == 5.0
    assert parse_java_double("-Infinity") == float("-inf")
    assert math.isnan(parse_java_double("NaN"))
    for bad in ("inf", "nan", "1_000", "abc", "", "0x1", "\u0663", "1e", "--1"):
        with pytest.raises(ValueError, match="For input string"):
            parse_java_double(bad)


def test_parse_java_float() -> None:
    assert parse_java_float("3.4e39") == float("inf")
    assert parse_java_float("0.1") == to_float32(0.1)


def test_decimal_from_java_string() -> None:
    assert decimal_from_java_string("1.50") == decimal.Decimal("1.50")
    assert decimal_from_java_string("-1E+3") == decimal.Decimal("-1E3")
    assert decimal_from_java_string(".5") == decimal.Decimal("0.5")
    assert decimal_from_java_string("\u0661\u0662") == decimal.Decimal(12)
    for bad in ("", "NaN", "Infinity", "1e", " 1", "0x10", "1_0"):
        with pytest.raises(ValueError):
            decimal_from_java_string(bad)
