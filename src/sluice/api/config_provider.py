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
    unresolved. ``ttl`` is how many milliseconds the values stay valid (``None``: for ever);
    Sluice does not act on it (Kafka Connect restarts the connector when it expires).
    """

    data: dict[str, str] = field(default_factory=dict, repr=False)  # often secrets
    ttl: int | None = None


class ConfigProvider(ABC):
    """Looks up configuration values by path and key.

    Instances live in the worker process (never in a Spark executor, never pickled):
    the worker builds one per configured name at start-up, calls :meth:`configure`
    once, then :meth:`get` whenever it resolves a connector's config (at connector and
    task start, during validation and before offsets are altered), and :meth:`close`
    when it stops. :meth:`get` may be called from several threads at once (REST request
    threads, the herder's thread), so it must be thread-safe.

    Values a provider returns are often secrets: never log them. They reach connectors
    and tasks inside their configs — task configs travel to the executors in the Spark
    jobs — while stored configs and REST answers keep the placeholders (see
    :meth:`Connector.task_configs <sluice.api.connector.Connector.task_configs>`).
    """

    def configure(self, configs: dict[str, str]) -> None:
        """Called once, in the worker process at start-up, before any :meth:`get`, with the
        ``config.providers.<name>.param.*`` settings (prefix stripped).

        Raises: :class:`~sluice.api.errors.ConfigError` for a bad setting; any exception
        stops the worker from starting (:meth:`close` is called first).
        """

    @abstractmethod
    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        """The values of ``keys`` (all keys when ``None``) at ``path``.

        ``path`` is ``""`` when the placeholder has none (``${provider:key}``). Sluice asks
        once per path and config, with the set of keys the placeholders want there. Leave
        a key out of the result when it has no value (the placeholder stays as written).

        Raises: :class:`~sluice.api.errors.ConfigError` when the path itself cannot be
        read (a ``ConnectError`` passes as is, any other exception is wrapped in a
        ``ConfigError``). What needed the value fails: the connector's or task's start
        (FAILED), a validation or offsets request.
        """

    def close(self) -> None:
        """Release resources; called once when the worker stops (or after
        :meth:`configure` raised). Raises: logged and ignored."""
