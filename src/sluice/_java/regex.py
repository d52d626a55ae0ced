"""Java regular expressions (``java.util.regex``) in Python's ``re``.

Patterns are written in Java's syntax and translated to Python's: named groups
``(?<name>...)`` and back references ``\\k<name>``, ``\\Q...\\E`` quoting, ``\\z``,
``\\Z``, ``\\h``, the POSIX classes ``\\p{Alpha}``, ``\\p{Digit}``… and the categories
``\\p{L}``, ``\\p{Lu}``, ``\\p{Ll}``, ``\\p{N}``, ``\\p{Nd}`` (reduced to ASCII, which is
exact for topic names) are supported; ``\\d``, ``\\w``, ``\\s`` and ``\\b`` are ASCII-only as
in Java. Java constructs Python's ``re`` lacks (other Unicode categories, class unions
``[a-d[m-p]]`` and intersections ``[a-z&&[^e]]``) are rejected as invalid.

Replacement strings (``Matcher.replaceFirst``) are read by :func:`parse_replacement`.
"""

from __future__ import annotations

import re

__all__ = ["compile_java_regex", "parse_replacement"]

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


def parse_replacement(replacement: str, pattern: re.Pattern[str]) -> tuple[str | int, ...]:
    """A replacement string of ``Matcher.replaceFirst``/``replaceAll`` for ``pattern``, as
    the texts and group numbers to join: ``$n`` takes the longest run of digits that is
    still a group number, ``${name}`` a named group, ``\\x`` is the character ``x``. An
    invalid replacement raises :class:`ValueError` with Java's message."""
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
