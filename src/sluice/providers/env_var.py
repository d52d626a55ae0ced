"""``org.apache.kafka.common.config.provider.EnvVarConfigProvider``.

``${env:DB_PASSWORD}`` takes the value of the worker's environment variable. The path
must be empty (``${env:/x:KEY}`` is a :class:`~sluice.api.errors.ConfigError`).
``allowlist.pattern``, a regular expression that must match a variable's whole name,
limits which variables are visible (default: all).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping

from sluice.api.config_provider import ConfigData, ConfigProvider
from sluice.api.errors import ConfigError, ConnectError

__all__ = ["ALLOWLIST_PATTERN_CONFIG", "ALLOWLIST_PATTERN_CONFIG_DOC", "EnvVarConfigProvider"]

log = logging.getLogger(__name__)

ALLOWLIST_PATTERN_CONFIG = "allowlist.pattern"
ALLOWLIST_PATTERN_CONFIG_DOC = (
    "A pattern / regular expression that needs to match for environment variables to be used by this config provider."
)


class EnvVarConfigProvider(ConfigProvider):
    """Values from environment variables. Param: ``allowlist.pattern``.

    The variables are read when :meth:`configure` runs (from ``env`` when given, for tests);
    later changes to the environment are not seen, as in Kafka, whose JVM sees a fixed one.
    """

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = env
        self._visible: dict[str, str] | None = None

    def configure(self, configs: dict[str, str]) -> None:
        pattern_text = configs.get(ALLOWLIST_PATTERN_CONFIG)
        if pattern_text is None:
            log.info("No pattern for environment variables provided. Using default pattern '(.*)'.")
            pattern_text = ".*"
        try:
            pattern = re.compile(pattern_text)
        except re.error as e:
            raise ConfigError(ALLOWLIST_PATTERN_CONFIG, pattern_text, f"Invalid regular expression: {e}") from None
        env = os.environ if self._env is None else self._env
        self._visible = {name: value for name, value in env.items() if pattern.fullmatch(name)}

    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        if path:
            log.error("Path is not supported for EnvVarConfigProvider, invalid value '%s'", path)
            raise ConfigError(f"Path is not supported for EnvVarConfigProvider, invalid value '{path}'")
        if self._visible is None:
            raise ConnectError("The provider has not been configured yet.")
        if keys is None:
            return ConfigData(dict(self._visible))
        return ConfigData({key: self._visible[key] for key in keys if key in self._visible})
