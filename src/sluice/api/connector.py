"""Connector base classes, mirroring ``org.apache.kafka.connect.connector``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from sluice.api.errors import ConnectError

if TYPE_CHECKING:
    from sluice.api.config import Config, ConfigDef

__all__ = ["Connector", "ConnectorContext", "Task"]


class ConnectorContext(ABC):
    """What the framework offers a running :class:`Connector` (driver side)."""

    @abstractmethod
    def request_task_reconfiguration(self) -> None:
        """Ask the framework to call :meth:`Connector.task_configs` again and restart the
        tasks if their configs changed. Any thread of the worker process may call it."""

    @abstractmethod
    def raise_error(self, error: BaseException) -> None:
        """Report an unrecoverable error: the connector becomes FAILED with its trace."""


class Task(ABC):
    """Common base of :class:`~sluice.api.source.SourceTask` and :class:`~sluice.api.sink.SinkTask`.

    Tasks run inside Spark executors, in the Python worker process that executes
    the task's partition. The framework instantiates the class with no arguments
    there, so it must be importable on the executors.
    """

    def version(self) -> str:
        """The task's version; defaults to the connector package's."""
        return "unknown"

    @abstractmethod
    def start(self, props: dict[str, str]) -> None:
        """Called once, in the executor, before any data call, with the task config."""

    @abstractmethod
    def stop(self) -> None:
        """Called in the executor when the task is shut down; release resources here."""


class Connector(ABC):
    """A connector: configures and splits work into task configs. Runs on the driver
    (the worker process), never on executors.

    Subclasses implement :meth:`start`, :meth:`stop`, :meth:`task_class`,
    :meth:`task_configs` and :meth:`config`; :meth:`validate` has a working default.
    """

    context: ConnectorContext

    def initialize(self, context: ConnectorContext) -> None:
        """Called by the worker once, before :meth:`start`."""
        self.context = context

    def version(self) -> str:
        """The plugin's version, shown by ``GET /connector-plugins``."""
        return "unknown"

    @abstractmethod
    def start(self, props: dict[str, str]) -> None:
        """Called by the worker (driver side) when the connector starts, with its
        config (config-provider placeholders already resolved)."""

    def reconfigure(self, props: dict[str, str]) -> None:
        """Called when the config changes; the default stops and starts again."""
        self.stop()
        self.start(props)

    @abstractmethod
    def task_class(self) -> type[Task]:
        """The task class; it must be importable on Spark executors."""

    @abstractmethod
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """Up to ``max_tasks`` task configs, one per task. Called on the driver after
        :meth:`start` and whenever reconfiguration is requested."""

    @abstractmethod
    def stop(self) -> None:
        """Called on the driver when the connector stops (pause keeps it running)."""

    @abstractmethod
    def config(self) -> ConfigDef:
        """The connector's own configuration definition (no framework keys)."""

    def validate(self, connector_configs: dict[str, str]) -> Config:
        """Check a connector config before it is created or updated.

        Called by the framework on the driver (the worker's REST or herder thread) for
        ``PUT /connector-plugins/{type}/config/validate`` and before every create or
        update, with the whole connector config: the framework's keys (``name``,
        ``tasks.max``, ``transforms``, …) and the connector's own. Config-provider
        placeholders are already resolved, so values may be secrets: never log them.

        The default checks each value against :meth:`config` and returns one
        :class:`~sluice.api.config.ConfigValue` per key it defines. Override it to add
        checks that involve several keys (or a remote system), usually by calling
        ``super().validate(connector_configs)`` and adding error messages to the values
        it returns. A value for a key :meth:`config` does not define is still reported,
        without a definition. Each error message counts as one error; a config with
        errors is refused.
        """
        from sluice.api.config import Config

        config_def = self.config()
        if config_def is None:
            raise ConnectError(
                f"{type(self).__module__}.{type(self).__qualname__}.config() must return a ConfigDef that is not null."
            )
        return Config(config_def.validate(connector_configs))
