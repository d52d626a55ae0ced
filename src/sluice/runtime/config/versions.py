"""Plugin versions as Kafka Connect reads ``*.plugin.version``: Maven's version ranges.

:class:`VersionRange` parses a requirement (``1.2``, ``[1.0,2.0)``, ``(,1.0]`` …) and tells
whether an installed version satisfies it, ordering versions close to Maven's
``ComparableVersion``; :data:`PLUGIN_VERSION_VALIDATOR` checks a version key's value and
:func:`version_mismatch_message` words Kafka's error when no installed version matches.
"""

from __future__ import annotations

from typing import Any

from sluice.api.config import LambdaValidator
from sluice.api.errors import ConfigError
from sluice.runtime.plugin_versions import VersionRange, sort_key

__all__ = [
    "PLUGIN_VERSION_VALIDATOR",
    "VersionRange",
    "default_version",
    "sort_key",
    "version_mismatch_message",
    "version_range",
]


def version_range(spec: str) -> VersionRange:
    """Parse a ``*.plugin.version`` value; raises :class:`ConfigError` with Maven's words."""
    try:
        return VersionRange(spec)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc


def _plugin_version_validator(name: str, value: Any) -> None:
    if value is not None:
        try:
            VersionRange(str(value))
        except ValueError as exc:
            raise ConfigError(name, value, str(exc)) from exc


PLUGIN_VERSION_VALIDATOR = LambdaValidator.with_(_plugin_version_validator, "a version or a version range")


def default_version(version: str | None) -> str | None:
    """A plugin's version as the default of its version key (none if it does not parse)."""
    if version is None:
        return None
    try:
        VersionRange(version)
    except ValueError:
        return None
    return version


def version_mismatch_message(
    class_name: str, spec: str, version: str | None, available: list[str] | None = None
) -> str | None:
    """Kafka's error when ``version``, the version of ``class_name`` picked for a config,
    does not satisfy ``spec``; ``available`` lists every installed version (default: that one)."""
    try:
        wanted = VersionRange(spec)
    except ValueError:
        return None  # reported by the version key's own validator
    if version is not None and wanted.contains(version):
        return None
    shown = available if available is not None else ([version] if version is not None else [])
    return (
        f"Plugin {class_name} not found that matches the version range {wanted}, "
        f"available versions: [{', '.join(shown)}]"
    )
