"""Field paths (``SingleFieldPath``, KIP-821): a field of a struct or map named by a
transform's config, possibly nested (``field.syntax.version=V2``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sluice.api.data import Schema, Struct
from sluice.api.errors import ConfigError
from sluice.transforms._config import FieldSyntaxVersion
from sluice.transforms._values import require_map_or_null, require_struct_or_null

__all__ = ["SingleFieldPath"]

_BACKTICK = "`"
_DOT = "."
_BACKSLASH = "\\"


def _incomplete_backticks(path: str, at: int) -> ConfigError:
    return ConfigError(
        f"Incomplete backtick pair in path: [{path}], consider adding a backslash before backtick "
        f"at position {at} to escape it"
    )


def _parse_path_v2(path: str) -> list[str]:
    """Split a V2 path into steps (see :class:`SingleFieldPath`)."""
    steps: list[str] = []
    n = len(path)
    i = 0
    while 0 <= i < n:
        if path[i] != _BACKTICK:
            dot = path.find(_DOT, i)
            if dot < 0:
                steps.append(path[i:])
                break
            steps.append(path[i:dot])
            i = dot + 1
            continue
        # A step wrapped in backticks: it ends at a backtick followed by a dot (or at a
        # backtick closing the path); a backtick escaped by a backslash before such a dot
        # belongs to the name, as does any backtick not followed by a dot.
        opening = i
        pieces: list[str] = []
        start = i = i + 1
        while True:
            closing = path.find(_BACKTICK, i)
            if closing < 0:
                raise _incomplete_backticks(path, opening)
            escaped = path[closing - 1] == _BACKSLASH
            if closing >= n - 1:
                if escaped:
                    raise _incomplete_backticks(path, opening)
                pieces.append(path[start:closing])
                steps.append("".join(pieces))
                i = closing + 1
                break
            if path[closing + 1] != _DOT:
                i = closing + 1
                continue
            if escaped:
                pieces.append(path[start : closing - 1])
                pieces.append(_BACKTICK)
                start = i = closing + 1
                continue
            pieces.append(path[start:closing])
            steps.append("".join(pieces))
            i = closing + 2
            break
    if path.endswith(_DOT):
        steps.append("")
    return steps


class SingleFieldPath:
    """A path to one field inside a struct or map (``SingleFieldPath``).

    With :attr:`FieldSyntaxVersion.V1` the whole text is one top-level field name. With
    V2 the text is split on dots into steps; a step wrapped in backticks may contain dots
    (```a.b`.c`` is ``["a.b", "c"]``), a backslash before a backtick that would close such a
    step keeps the backtick in the name, and backticks not next to a dot are ordinary
    characters. An unclosed wrapping backtick raises :class:`ConfigError`. Missing steps
    make lookups return ``None``.
    """

    __slots__ = ("version", "steps")

    def __init__(self, path: str, version: FieldSyntaxVersion = FieldSyntaxVersion.V1) -> None:
        self.version = version
        self.steps: tuple[str, ...] = (path,) if version is FieldSyntaxVersion.V1 else tuple(_parse_path_v2(path))

    def field_from(self, schema: Schema | None) -> Any:
        """The :class:`~sluice.api.data.Field` at this path in a struct schema, or ``None``."""
        if schema is None:
            return None
        current = schema
        for step in self.steps[:-1]:
            field = current.field(step)
            if field is None:
                return None
            current = field.schema
        return current.field(self.steps[-1])

    def value_from_struct(self, struct: Struct | None, with_default: bool = True) -> Any:
        """The value at this path in a struct (defaults applied to the last step only when
        ``with_default``; intermediate structs always fall back to their defaults)."""
        if struct is None:
            return None
        current = struct
        for step in self.steps[:-1]:
            if current.schema.field(step) is None:
                return None
            current = require_struct_or_null(current.get(step), "nested field access")  # type: ignore[assignment]
            if current is None:
                return None
        last = self.steps[-1]
        if current.schema.field(last) is None:
            return None
        return current.get(last) if with_default else current.get_without_default(last)

    def value_from_map(self, value: Mapping[str, Any] | None) -> Any:
        """The value at this path in a schemaless map, or ``None``."""
        if value is None:
            return None
        current: Mapping[str, Any] | None = value
        for step in self.steps[:-1]:
            current = require_map_or_null(current.get(step), "nested field access")  # type: ignore[union-attr]
            if current is None:
                return None
        return current.get(self.steps[-1])  # type: ignore[union-attr]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleFieldPath) and self.steps == other.steps

    def __hash__(self) -> int:
        return hash(self.steps)

    def __repr__(self) -> str:
        return f"SingleFieldPath{{version={self.version.value}, path={'.'.join(self.steps)}}}"
