"""RegexRouter (``org.apache.kafka.connect.transforms.RegexRouter``): renames the topic of
records whose topic matches a regular expression.

When ``regex`` matches the whole topic, the first match of ``regex`` in the topic is
replaced by ``replacement`` (Java's ``Matcher.replaceFirst``): ``$1``/``${name}`` insert a
captured group and a backslash makes the next character literal. Otherwise the record is
left alone.

Regular expressions are written in Java's syntax and translated to Python's: named
groups ``(?<name>...)`` and back references ``\\k<name>``, ``\\Q...\\E`` quoting, ``\\z``,
``\\Z``, ``\\h``, the POSIX classes ``\\p{Alpha}``, ``\\p{Digit}``… and the categories
``\\p{L}``, ``\\p{Lu}``, ``\\p{Ll}``, ``\\p{N}``, ``\\p{Nd}`` (reduced to ASCII, which is
exact for topic names) are supported; ``\\d``, ``\\w``, ``\\s`` and ``\\b`` are ASCII-only as
in Java. Java constructs Python's ``re`` lacks (other Unicode categories, class unions
``[a-d[m-p]]`` and intersections ``[a-z&&[^e]]``) are rejected as invalid.
"""

from __future__ import annotations

import re
from typing import Any

from sluice.api.config import ConfigDef, ConfigType, Importance
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import ConnectRecord
from sluice.api.transforms import Transformation

__all__ = ["JavaReplacement", "RegexRouter", "RegexValidator", "compile_java_regex"]

REGEX_CONFIG = "regex"
REPLACEMENT_CONFIG = "replacement"
_ROUTE_CACHE_SIZE = 1024

# -- Java regular expressions -------------------------------------------------------------

_POSIX_CLASSES = {
    "Lower": "a-z",
    "Upper": "A-Z",
    "ASCII": "\\x00-\\x7F",
    "Alpha": "a-zA-Z",
    "Digit": "0-9",
    "Alnum": "a-zA-Z0-9",
    "Punct": "!-/:-@\\[-`{-~",
    "Graph": "!-~",
    "Print": " -~",
    "Blank": " \\t",
    "Cntrl": "\\x00-\\x1F\\x7F",
    "XDigit": "0-9a-fA-F",
    "Space": " \\t\\n\\x0B\\f\\r",
    "javaLowerCase": "a-z",
    "javaUpperCase": "A-Z",
    "javaWhitespace": " \\t\\n\\x0B\\f\\r\\x1C-\\x1F",
    "IsAlphabetic": "a-zA-Z",
    "IsDigit": "0-9",
    "IsLetter": "a-zA-Z",
    "IsLowercase": "a-z",
    "IsUppercase": "A-Z",
    "IsWhite_Space": " \\t\\n\\x0B\\f\\r\\x85\\xA0",
    # Unicode categories, reduced to their ASCII members: exact for topic names, which
    # are ASCII (letters, digits, '.', '_' and '-').
    "L": "a-zA-Z",
    "Letter": "a-zA-Z",
    "Lu": "A-Z",
    "Ll": "a-z",
    "N": "0-9",
    "Nd": "0-9",
    "Pd": "\\-",
    "Pc": "_",
}
_HORIZONTAL_SPACE = " \\t\\xA0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000"


def _translate(pattern: str) -> str:
    """Java regex syntax to Python ``re`` syntax (see the module documentation)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    class_start = -1
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            d = pattern[i + 1]
            if d == "Q":
                end = pattern.find("\\E", i + 2)
                quoted = pattern[i + 2 :] if end < 0 else pattern[i + 2 : end]
                out.append(re.escape(quoted))
                i = n if end < 0 else end + 2
                continue
            if d in "pP" and i + 2 < n:
                if pattern[i + 2] == "{":
                    close = pattern.find("}", i + 3)
                    name = pattern[i + 3 : close] if close > 0 else ""
                    length = close + 1 - i if close > 0 else 2
                else:
                    name, length = pattern[i + 2], 3
                if name.startswith("Is") and name not in _POSIX_CLASSES:
                    name = name[2:]
                body = _POSIX_CLASSES.get(name)
                if body is not None:
                    negated = d == "P"
                    if in_class and not negated:
                        out.append(body)
                    else:
                        out.append(("[^" if negated else "[") + body + "]")
                    i += length
                    continue
            if d == "h" or d == "H":
                if in_class and d == "h":
                    out.append(_HORIZONTAL_SPACE)
                else:
                    out.append(("[" if d == "h" else "[^") + _HORIZONTAL_SPACE + "]")
                i += 2
                continue
            if not in_class:
                if d == "z":
                    out.append("\\Z")
                    i += 2
                    continue
                if d == "Z":
                    out.append("(?=\\n?\\Z)")
                    i += 2
                    continue
                if d == "k" and i + 2 < n and pattern[i + 2] == "<":
                    close = pattern.find(">", i + 3)
                    if close > 0:
                        out.append(f"(?P={pattern[i + 3 : close]})")
                        i = close + 1
                        continue
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if c == "]" and i > class_start:
                in_class = False
            elif c == "[" and i > class_start:
                raise re.error("nested character classes (unions) are not supported", pattern, i)
            elif c == "&" and pattern.startswith("&&", i):
                raise re.error("character class intersections are not supported", pattern, i)
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            class_start = i + 1
            if i + 1 < n and pattern[i + 1] == "^":
                class_start += 1
            out.append(c)
            i += 1
            continue
        if c == "(" and pattern.startswith("(?<", i) and i + 3 < n and pattern[i + 3] not in "=!":
            out.append("(?P<")
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)


def compile_java_regex(pattern: str) -> re.Pattern[str]:
    """Compile a Java regular expression (``java.util.regex.Pattern.compile``); raises
    :class:`re.error` when it is invalid or uses what Python cannot express."""
    return re.compile(_translate(pattern), re.ASCII)


class RegexValidator:
    """Kafka's ``RegexValidator``: the value must compile as a regular expression."""

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigError(name, "null", "Invalid regex: null")
        try:
            compile_java_regex(value)
        except (re.error, ValueError, OverflowError) as e:
            raise ConfigError(name, value, f"Invalid regex: {e}") from e

    def __str__(self) -> str:
        return "valid regex"


# -- Java replacement strings -------------------------------------------------------------


class JavaReplacement:
    """A replacement string of ``Matcher.replaceFirst``/``replaceAll``, parsed once.

    ``$n`` takes the longest run of digits that is still a group number, ``${name}`` a
    named group; an unmatched group inserts nothing; ``\\x`` is the character ``x``. An
    invalid replacement is reported (with Java's message) when it is first used, as Java
    only finds out then.
    """

    __slots__ = ("_parts", "_error")

    def __init__(self, replacement: str, pattern: re.Pattern[str]) -> None:
        self._parts: tuple[str | int, ...] = ()
        self._error: str | None = None
        try:
            self._parts = self._parse(replacement, pattern)
        except ValueError as e:
            self._error = str(e)

    @staticmethod
    def _parse(replacement: str, pattern: re.Pattern[str]) -> tuple[str | int, ...]:
        parts: list[str | int] = []
        literal: list[str] = []
        groups = pattern.groups
        i, n = 0, len(replacement)
        while i < n:
            c = replacement[i]
            if c == "\\":
                i += 1
                if i == n:
                    raise ValueError("character to be escaped is missing")
                literal.append(replacement[i])
                i += 1
            elif c == "$":
                i += 1
                if i == n:
                    raise ValueError("Illegal group reference: group index is missing")
                if replacement[i] == "{":
                    i += 1
                    start = i
                    while i < n and replacement[i].isascii() and replacement[i].isalnum():
                        i += 1
                    name = replacement[start:i]
                    if not name:
                        raise ValueError("named capturing group has 0 length name")
                    if i == n or replacement[i] != "}":
                        raise ValueError("named capturing group is missing trailing '}'")
                    if name[0].isdigit():
                        raise ValueError(f"capturing group name {{{name}}} starts with digit character")
                    if name not in pattern.groupindex:
                        raise ValueError(f"No group with name {{{name}}}")
                    ref = pattern.groupindex[name]
                    i += 1
                else:
                    if not "0" <= replacement[i] <= "9":
                        raise ValueError("Illegal group reference")
                    ref = ord(replacement[i]) - ord("0")
                    i += 1
                    while i < n and "0" <= replacement[i] <= "9":
                        longer = ref * 10 + ord(replacement[i]) - ord("0")
                        if longer > groups:
                            break
                        ref = longer
                        i += 1
                    if ref > groups:
                        raise ValueError(f"No group {ref}")
                if literal:
                    parts.append("".join(literal))
                    literal = []
                parts.append(ref)
            else:
                literal.append(c)
                i += 1
        if literal:
            parts.append("".join(literal))
        return tuple(parts)

    def expand(self, match: re.Match[str]) -> str:
        if self._error is not None:
            raise DataError(self._error)
        return "".join(p if isinstance(p, str) else (match.group(p) or "") for p in self._parts)


# -- the transformation -------------------------------------------------------------------

CONFIG_DEF = (
    ConfigDef()
    .define(
        REGEX_CONFIG,
        ConfigType.STRING,
        validator=RegexValidator(),
        importance=Importance.HIGH,
        documentation="Java regular expression the whole topic name must match for the record to be routed.",
    )
    .define(
        REPLACEMENT_CONFIG,
        ConfigType.STRING,
        importance=Importance.HIGH,
        documentation="The new topic name: replaces the first match of the regular expression; $1, $2… insert "
        "the captured groups.",
    )
)


class RegexRouter(Transformation):
    """Changes the topic of each record whose topic the regular expression matches."""

    OVERVIEW_DOC = (
        "Changes the topic of records whose topic matches a Java regular expression: the first match is "
        "replaced with the replacement string, as java.util.regex.Matcher#replaceFirst() does."
    )

    def __init__(self) -> None:
        self._regex: re.Pattern[str] | None = None
        self._replacement: JavaReplacement | None = None
        # topic -> new topic, or None when the regex does not match: a task sees few topics
        self._routes: dict[str, str | None] = {}

    def configure(self, configs: dict[str, Any]) -> None:
        values = CONFIG_DEF.parse(configs)
        self._regex = compile_java_regex(values[REGEX_CONFIG])
        replacement = values[REPLACEMENT_CONFIG]
        if replacement is None:
            raise ConfigError(REPLACEMENT_CONFIG, "null", "Replacement must not be null")
        self._replacement = JavaReplacement(replacement, self._regex)
        self._routes = {}

    def _route(self, topic: str) -> str | None:
        regex = self._regex
        if regex.fullmatch(topic) is None:  # type: ignore[union-attr]
            new_topic = None
        else:
            # Matcher.replaceFirst replaces the first match found, not always the whole topic
            first: re.Match[str] = regex.search(topic)  # type: ignore[union-attr,assignment]
            expanded = self._replacement.expand(first)  # type: ignore[union-attr]
            new_topic = topic[: first.start()] + expanded + topic[first.end() :]
        if len(self._routes) >= _ROUTE_CACHE_SIZE:
            self._routes.clear()
        self._routes[topic] = new_topic
        return new_topic

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        topic = record.topic
        try:
            new_topic = self._routes[topic]
        except KeyError:
            new_topic = self._route(topic)
        if new_topic is None:
            return record
        return record.new_record(topic=new_topic, headers=record.headers.duplicate())

    def config(self) -> ConfigDef:
        return CONFIG_DEF
