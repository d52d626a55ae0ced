"""``org.apache.kafka.common.config.provider.DirectoryConfigProvider``.

``${dir:/run/secrets:db-password}`` takes the content of the regular file ``db-password``
in the directory ``/run/secrets`` (decoded as UTF-8), the layout of Kubernetes and Docker
secret mounts. Only names found by listing the directory are read, so a key cannot reach
outside it (``../x``). Subdirectories are ignored; a missing file leaves its key
unresolved; a path that is not a directory, or lies outside ``allowed.paths``, resolves
nothing (with a warning); a directory or file that cannot be read is a
:class:`~sluice.api.errors.ConfigError`.
"""

from __future__ import annotations

import logging
import os
from pathlib import PurePath

from sluice.api.config_provider import ConfigData, ConfigProvider
from sluice.api.errors import ConfigError, ConnectError
from sluice.providers._allowed_paths import ALLOWED_PATHS_CONFIG, ALLOWED_PATHS_DOC, AllowedPaths

__all__ = ["ALLOWED_PATHS_CONFIG", "ALLOWED_PATHS_DOC", "DirectoryConfigProvider"]

log = logging.getLogger(__name__)


class DirectoryConfigProvider(ConfigProvider):
    """Values from the files of a directory, one key per file name. Param: ``allowed.paths``."""

    def __init__(self) -> None:
        self._allowed_paths: AllowedPaths | None = None

    def configure(self, configs: dict[str, str]) -> None:
        self._allowed_paths = AllowedPaths(configs.get(ALLOWED_PATHS_CONFIG))

    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        if self._allowed_paths is None:
            raise ConnectError("The provider has not been configured yet.")
        if not path:
            return ConfigData({})
        directory = self._allowed_paths.parse_untrusted_path(path)
        if directory is None:
            log.warning("The path %s is not allowed to be accessed", path)
            return ConfigData({})
        if not os.path.isdir(directory):
            log.warning("The path %s is not a directory", path)
            return ConfigData({})
        try:
            names = os.listdir(directory)
        except OSError as e:
            log.error("Could not list directory %s (%s)", directory, type(e).__name__)
            raise ConfigError(f"Could not list directory {directory}") from e
        data = {}
        for name in names:
            file_path = directory / name
            # isfile follows symbolic links, as Files.isRegularFile does: secret mounts link each key.
            if (keys is None or name in keys) and os.path.isfile(file_path):
                data[name] = _read(file_path)
        return ConfigData(data)


def _read(file_path: PurePath) -> str:
    try:
        with open(file_path, "rb") as f:
            content = f.read()
    except OSError as e:
        log.error("Could not read file %s for property %s (%s)", file_path, file_path.name, type(e).__name__)
        raise ConfigError(f"Could not read file {file_path} for property {file_path.name}") from e
    # Java's new String(bytes, UTF_8) replaces malformed input rather than failing.
    return content.decode("utf-8", "replace")
