"""``allowed.paths``, shared by the file and directory providers (Kafka's ``AllowedPaths``).

The check is lexical, as in Kafka: a path is normalised (``.`` and ``..`` removed) and
must lie under one of the allowed paths; symbolic links are not followed.
"""

from __future__ import annotations

import os
from pathlib import PurePath

from sluice.api.errors import ConfigError

__all__ = ["ALLOWED_PATHS_CONFIG", "ALLOWED_PATHS_DOC", "AllowedPaths"]

ALLOWED_PATHS_CONFIG = "allowed.paths"
ALLOWED_PATHS_DOC = (
    "A comma separated list of paths that this config provider is allowed to access. If not set, all paths are allowed."
)


class AllowedPaths:
    """The directories and files a provider may read; ``None`` or ``""`` allows everything.

    Raises :class:`ConfigError` when an entry is not absolute or does not exist.
    Entries are stripped of surrounding blanks (Kafka rejects ``"/a, /b"``).
    """

    def __init__(self, config_value: str | None) -> None:
        self._allowed: list[PurePath] | None = None
        if config_value:
            self._allowed = [self._checked(entry.strip()) for entry in config_value.split(",")]

    @staticmethod
    def _checked(entry: str) -> PurePath:
        normalised = PurePath(os.path.normpath(entry))
        if not normalised.is_absolute():
            raise ConfigError(f"Path {entry} is not absolute")
        if not os.path.exists(normalised):
            raise ConfigError(f"Path {normalised} does not exist")
        return normalised

    def parse_untrusted_path(self, path: str) -> PurePath | None:
        """``path`` as the provider should open it, or ``None`` when it is not allowed."""
        if self._allowed is None:
            return PurePath(path)
        normalised = PurePath(os.path.normpath(path))
        if any(normalised.is_relative_to(allowed) for allowed in self._allowed):
            return normalised
        return None
