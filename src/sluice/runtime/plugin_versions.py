"""Plugin versions as Kafka Connect orders and matches them: Maven's versions and version
ranges (:class:`VersionRange`), used by plugin resolution and by the ``*.plugin.version``
keys' validation (:mod:`sluice.runtime.config.versions`)."""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ["VersionRange", "sort_key"]


class VersionRange:
    """A plugin version requirement as Kafka reads ``*.plugin.version`` (Maven's syntax):
    a plain version (``1.2``: exactly that version), or ranges such as ``[1.0,2.0)``,
    ``(,1.0]``, ``[1.5,)`` or ``[1.0]``, several separated by commas."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.ranges: list[tuple[str | None, bool, str | None, bool]] = []  # (low, low_inclusive, high, high_inclusive)
        text = spec.strip()
        if not text:
            raise ValueError("Version requirement may not be empty")
        if text[0] not in "[(":
            self.ranges.append((text, True, text, True))
            return
        while text.startswith(("[", "(")):
            close = min((i for i in (text.find("]"), text.find(")")) if i >= 0), default=-1)
            if close < 0:
                raise ValueError(f"Unbounded range: {spec}")
            self.ranges.append(self._range(text[: close + 1], spec))
            text = text[close + 1 :].strip()
            if text.startswith(","):
                text = text[1:].strip()
        if text:
            raise ValueError(f"Only fully-qualified sets allowed in multiple set scenario: {spec}")

    @staticmethod
    def _range(part: str, spec: str) -> tuple[str | None, bool, str | None, bool]:
        low_inclusive, high_inclusive = part[0] == "[", part[-1] == "]"
        inner = part[1:-1].strip()
        if "," not in inner:
            if not (low_inclusive and high_inclusive) or not inner:
                raise ValueError(f"Single version must be surrounded by []: {spec}")
            return inner, True, inner, True
        low, _, high = (s.strip() for s in inner.partition(","))
        if "," in high:
            raise ValueError(f"Invalid version range {part}, too many commas")
        if low and high and _Version(low) > _Version(high):
            raise ValueError(f"Range defies version ordering: {spec}")
        return low or None, low_inclusive, high or None, high_inclusive

    def contains(self, version: str) -> bool:
        key = _Version(version)
        for low, low_in, high, high_in in self.ranges:
            if low is not None and (key < _Version(low) or (key == _Version(low) and not low_in)):
                continue
            if high is not None and (key > _Version(high) or (key == _Version(high) and not high_in)):
                continue
            return True
        return False

    def __str__(self) -> str:
        parts = []
        for low, low_in, high, high_in in self.ranges:
            parts.append(f"{'[' if low_in else '('}{low or ''},{high or ''}{']' if high_in else ')'}")
        return ",".join(parts)


_QUALIFIERS = {
    "alpha": 0,
    "a": 0,
    "beta": 1,
    "b": 1,
    "milestone": 2,
    "m": 2,
    "rc": 3,
    "cr": 3,
    "snapshot": 4,
    "": 5,
    "ga": 5,
    "final": 5,
    "release": 5,
    "sp": 6,
}
_RELEASE = 5


@functools.total_ordering
class _Version:
    """A version ordered close to Maven's ComparableVersion: numbers compare as numbers,
    known qualifiers (alpha < beta < milestone < rc < snapshot < release < sp) by rank and
    other words after them alphabetically; a number is above any qualifier, and a missing
    item counts as 0 against a number and as a release against a qualifier, so
    1 == 1.0 and 1.0-SNAPSHOT < 1.0 < 1.0.1."""

    def __init__(self, text: str) -> None:
        self.items: list[int | tuple[int, str]] = []
        for token in re.findall(r"[0-9]+|[a-zA-Z]+", text.lower()):
            if token.isdigit():
                self.items.append(int(token))
            else:
                rank = _QUALIFIERS.get(token)
                self.items.append((rank, "") if rank is not None else (len(_QUALIFIERS), token))

    def _compare(self, other: _Version) -> int:
        for i in range(max(len(self.items), len(other.items))):
            a = self.items[i] if i < len(self.items) else None
            b = other.items[i] if i < len(other.items) else None
            if a is None:
                a = 0 if isinstance(b, int) else (_RELEASE, "")
            if b is None:
                b = 0 if isinstance(a, int) else (_RELEASE, "")
            if isinstance(a, int) != isinstance(b, int):
                return 1 if isinstance(a, int) else -1
            if a != b:
                return -1 if a < b else 1  # type: ignore[operator]
        return 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Version) and self._compare(other) == 0

    def __lt__(self, other: _Version) -> bool:
        return self._compare(other) < 0

    __hash__ = None  # type: ignore[assignment]


def sort_key(version: str) -> Any:
    """A key that orders versions as Maven does (``sorted(versions, key=sort_key)``)."""
    return _Version(version)
