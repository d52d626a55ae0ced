"""``org.apache.kafka.common.config.provider.FileConfigProvider``.

``${file:/etc/connect/secrets.properties:db.password}`` reads the Java properties file at
the path (UTF-8, with ``\\uXXXX`` escapes, as Kafka reads it) and takes the key's value.
A key the file lacks stays unresolved; a file that cannot be read is a
:class:`~sluice.api.errors.ConfigError`; a path outside ``allowed.paths`` resolves
nothing (with a warning).
"""

from __future__ import annotations

import logging

import javaproperties

from sluice.api.config_provider import ConfigData, ConfigProvider
from sluice.api.errors import ConfigError, ConnectError
from sluice.providers._allowed_paths import ALLOWED_PATHS_CONFIG, ALLOWED_PATHS_DOC, AllowedPaths

__all__ = ["ALLOWED_PATHS_CONFIG", "ALLOWED_PATHS_DOC", "FileConfigProvider"]

log = logging.getLogger(__name__)


class FileConfigProvider(ConfigProvider):
    """Values from Java properties files. Param: ``allowed.paths``."""

    def __init__(self) -> None:
        self._allowed_paths: AllowedPaths | None = None

    def configure(self, configs: dict[str, str]) -> None:
        self._allowed_paths = AllowedPaths(configs.get(ALLOWED_PATHS_CONFIG))

    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        if self._allowed_paths is None:
            raise ConnectError("The provider has not been configured yet.")
        if not path:
            return ConfigData({})
        file_path = self._allowed_paths.parse_untrusted_path(path)
        if file_path is None:
            log.warning("The path %s is not allowed to be accessed", path)
            return ConfigData({})
        try:
            with open(file_path, encoding="utf-8") as reader:
                properties = javaproperties.load(reader)
        except (OSError, ValueError) as e:  # ValueError: not UTF-8, or a bad \u escape
            # The exception's text is left out: a decoding error quotes the file's bytes.
            log.error("Could not read properties from file %s (%s)", path, type(e).__name__)
            raise ConfigError(f"Could not read properties from file {path}") from e
        if keys is None:
            return ConfigData(dict(properties))
        return ConfigData({key: properties[key] for key in keys if key in properties})
