"""``sluice._java.regex``: Java regular expressions and replacement strings in Python."""

from __future__ import annotations

import re

import pytest

from sluice._java.regex import compile_java_regex, parse_replacement


def test_java_syntax_is_translated() -> None:
    assert compile_java_regex("(?<name>a+)-\\k<name>").fullmatch("aa-aa")
    assert compile_java_regex("\\Qa.b\\E").fullmatch("a.b")
    assert not compile_java_regex("\\Qa.b\\E").fullmatch("axb")
    assert compile_java_regex("\\Qa.b").fullmatch("a.b")  # unterminated quoting runs to the end
    assert compile_java_regex("\\p{Alpha}+\\p{Digit}").fullmatch("abc1")
    assert compile_java_regex("[\\p{Lu}_]+").fullmatch("AB_C")
    assert compile_java_regex("\\P{Digit}").fullmatch("x")
    assert compile_java_regex("\\pL").fullmatch("x")
    assert compile_java_regex("a\\h+b").fullmatch("a \tb")
    assert compile_java_regex("x\\z").search("x")
    assert compile_java_regex("x\\Z").search("x\n")
    assert compile_java_regex("(?<=a)b").search("ab")  # look-behind is not a named group


def test_ascii_classes_as_in_java() -> None:
    assert compile_java_regex("\\d+").fullmatch("123")
    assert not compile_java_regex("\\d+").fullmatch("١٢٣")  # Arabic-Indic digits are not \d in Java
    assert not compile_java_regex("\\w").fullmatch("é")
    assert compile_java_regex("(?i)abc").fullmatch("ABC")


@pytest.mark.parametrize("pattern", ["(", "[a-d[m-p]]", "[a-z&&[^e]]", "\\p{InGreek}"])
def test_what_python_cannot_express_is_invalid(pattern: str) -> None:
    with pytest.raises(re.error):
        compile_java_regex(pattern)


def test_parse_replacement() -> None:
    pattern = compile_java_regex("(?<first>a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)")
    assert parse_replacement("x", pattern) == ("x",)
    assert parse_replacement("$1-${first}", pattern) == (1, "-", 1)
    assert parse_replacement("$11", pattern) == (11,)
    assert parse_replacement("$111", pattern) == (11, "1")  # the longest group number that exists
    assert parse_replacement("\\$1", pattern) == ("$1",)
    assert parse_replacement("", pattern) == ()


@pytest.mark.parametrize(
    ("replacement", "message"),
    [
        ("x\\", "character to be escaped is missing"),
        ("$", "Illegal group reference: group index is missing"),
        ("$x", "Illegal group reference"),
        ("$2", "No group 2"),
        ("${}", "named capturing group has 0 length name"),
        ("${name", "named capturing group is missing trailing '}'"),
        ("${1a}", "capturing group name {1a} starts with digit character"),
        ("${other}", "No group with name {other}"),
    ],
)
def test_invalid_replacements(replacement: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        parse_replacement(replacement, compile_java_regex("(?<name>a)"))
