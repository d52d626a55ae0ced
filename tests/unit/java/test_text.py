"""``sluice._java.text``: JSON string literals as Jackson writes them, ``Double.toString``,
``Float.toString`` and ``String.split``."""

from __future__ import annotations

import json
import random

import pytest

from sluice._java.text import jackson_quoter, jackson_string, java_double_string, java_float_string, java_split

# -- jackson_string -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "literal"),
    [
        ("", '""'),
        ("plain", '"plain"'),
        ('say "hi"', '"say \\"hi\\""'),
        ("back\\slash", '"back\\\\slash"'),
        ("a/b", '"a/b"'),  # Jackson does not escape the solidus
        ("\b\t\n\f\r", '"\\b\\t\\n\\f\\r"'),
        ("\x00\x01\x1f", '"\\u0000\\u0001\\u001F"'),  # upper-case hex
        ("\x1b[0m", '"\\u001B[0m"'),
        ("\x7f", '"\x7f"'),  # DEL is not escaped
        ("ü é ß", '"ü é ß"'),  # the BMP as it is
        ("\u2028\u2029", '"\u2028\u2029"'),
        ("\\u00e9", '"\\\\u00e9"'),  # a literal backslash-u stays a backslash
    ],
)
def test_jackson_string_escapes(text: str, literal: str) -> None:
    assert jackson_string(text) == literal
    for mode in ("escape", "pairs", "raw"):
        assert jackson_quoter(mode)(text) == literal  # type: ignore[arg-type]


def test_characters_beyond_the_bmp() -> None:
    emoji = "\U0001f600"  # 😀 = U+D83D U+DE00 in UTF-16
    assert jackson_string(emoji) == '"\\uD83D\\uDE00"'
    assert jackson_quoter("pairs")(emoji) == '"\\uD83D\\uDE00"'
    assert jackson_quoter("raw")(emoji) == '"\U0001f600"'
    assert jackson_string("a\U0010ffffb") == '"a\\uDBFF\\uDFFFb"'
    assert jackson_string("\U00010000\x01") == '"\\uD800\\uDC00\\u0001"'


def test_lone_surrogates() -> None:
    assert jackson_string("\ud800") == '"\\uD800"'  # UTF8JsonGenerator escapes every surrogate
    assert jackson_string("a\udfffb") == '"a\\uDFFFb"'
    assert jackson_quoter("pairs")("\ud800") == '"\ud800"'
    assert jackson_quoter("raw")("\ud800") == '"\ud800"'


def _reference(text: str, mode: str) -> str:
    """Jackson's escaping, one UTF-16 code unit at a time."""
    short = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
    out = ['"']
    for c in text:
        cp = ord(c)
        if c in short:
            out.append(short[c])
        elif cp < 0x20:
            out.append(f"\\u{cp:04X}")
        elif cp >= 0x10000 and mode != "raw":
            units = c.encode("utf-16-be")
            out.append(f"\\u{units[0] << 8 | units[1]:04X}\\u{units[2] << 8 | units[3]:04X}")
        elif 0xD800 <= cp <= 0xDFFF and mode == "escape":
            out.append(f"\\u{cp:04X}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def test_jackson_string_against_a_reference() -> None:
    rng = random.Random(7)
    alphabet = [chr(c) for c in range(0x80)] + ["é", "\u2028", "\ud800", "\udc00", "\U0001f600", "\U00010437", "中"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
        for mode in ("escape", "pairs", "raw"):
            assert jackson_quoter(mode)(text) == _reference(text, mode), (text, mode)  # type: ignore[arg-type]


def test_jackson_string_is_the_utf8_generator() -> None:
    assert jackson_quoter() is jackson_quoter("escape")
    for text in ("x", "\U0001f600", "\ud800", "\x01"):
        assert jackson_string(text) == jackson_quoter("escape")(text)


def test_jackson_string_is_json() -> None:
    text = 'a"\\\n\x00\x1fü\U0001f600'
    assert json.loads(jackson_string(text)) == text
    assert json.loads(jackson_quoter("raw")(text)) == text


# -- Double.toString / Float.toString --------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1.0"),
        (0.001, "0.001"),
        (1e7, "1.0E7"),
        (1e-4, "1.0E-4"),
        (123456.789, "123456.789"),
        (-0.0, "-0.0"),
        (0.0, "0.0"),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
        (5e-324, "4.9E-324"),  # Double.MIN_VALUE
        (1.7976931348623157e308, "1.7976931348623157E308"),
        (100.0, "100.0"),
        (9999999.0, "9999999.0"),
        (1.0e-3, "0.001"),
        (2e22, "2.0E22"),
    ],
)
def test_java_double_string(value: float, text: str) -> None:
    assert java_double_string(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.1, "0.1"),
        (1.0, "1.0"),
        (1e10, "1.0E10"),
        (3.4028234663852886e38, "3.4028235E38"),  # Float.MAX_VALUE
        (1.401298464324817e-45, "1.4E-45"),  # Float.MIN_VALUE
        (3.4e39, "Infinity"),  # beyond float: (float) gives an infinity
        (-3.4e39, "-Infinity"),
        (float("nan"), "NaN"),
        (-0.0, "-0.0"),
        (1e-50, "0.0"),
        (16777217.0, "1.6777216E7"),
        (0.3, "0.3"),
    ],
)
def test_java_float_string(value: float, text: str) -> None:
    assert java_float_string(value) == text


# -- String.split ----------------------------------------------------------------------------------


def test_java_split() -> None:
    assert java_split("a:b", ":") == ["a", "b"]
    assert java_split("a:b:", ":") == ["a", "b"]
    assert java_split("a::", ":") == ["a"]
    assert java_split(":b", ":") == ["", "b"]
    assert java_split("a::b", ":") == ["a", "", "b"]
    assert java_split("", ":") == [""]
    assert java_split(":", ":") == []
    assert java_split("ab", ":") == ["ab"]
