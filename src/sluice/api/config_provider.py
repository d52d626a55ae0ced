"""Config providers, mirroring ``org.apache.kafka.common.config.provider.ConfigProvider``.

A config provider supplies values for ``${provider:[path:]key}`` placeholders in
connector configurations, so secrets and environment-specific settings stay out of the
stored config. The worker builds one instance per name listed in ``config.providers``
(class in ``config.providers.<name>.class``, settings in
``config.providers.<name>.param.*``) and asks it for every placeholder that names it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

__all__ = ["ConfigData", "ConfigProvider"]


@dataclass(frozen=True)
class ConfigData:
    """What a provider returns for one path (``org.apache.kafka.common.config.ConfigData``).

    ``data`` maps each key found to its value; a requested key that is absent stays
    unresolved. ``ttl`` is how many milliseconds the values stay valid (``None``: for ever).
    """

    data: dict[str, str] = field(default_factory=dict, repr=False)  # often secrets
    ttl: int | None = None


class ConfigProvider(ABC):
    """Looks up configuration values by path and key.

    Instances live in the worker process (never in a Spark executor, never pickled):
    the worker builds one per configured name at start-up, calls :meth:`configure`
    once, then :meth:`get` whenever it resolves a connector's config (at connector and
    task start and during validation), and :meth:`close` when it stops. :meth:`get`
    may be called from several threads at once, so it must be thread-safe.

    Values a provider returns are often secrets: never log them.
    """

    def configure(self, configs: dict[str, str]) -> None:
        """Called once, before any :meth:`get`, with the ``config.providers.<name>.param.*``
        settings (prefix stripped). Raise :class:`~sluice.api.errors.ConfigError` for a bad one."""

    @abstractmethod
    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        """The values of ``keys`` (all keys when ``None``) at ``path``.

        ``path`` is ``""`` when the placeholder has none (``${provider:key}``). Leave a key
        out of the result when it has no value; raise
        :class:`~sluice.api.errors.ConfigError` when the path itself cannot be read.
        """

    def close(self) -> None:
        """Release resources; called once when the worker stops."""
