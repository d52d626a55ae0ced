"""The Herder protocol and the values it exchanges with REST, CLI and tests.

Every user-visible operation is one method here (``connect.runtime.Herder`` in
Kafka). Methods are synchronous and thread-safe: the REST layer calls them from
its thread pool. Failures are raised as :mod:`sluice.api.errors` types or
:class:`ConnectRestError`; the REST layer maps them to status codes in one place:

* :class:`~sluice.api.errors.NotFoundError` → 404
* :class:`~sluice.api.errors.AlreadyExistsError` → 409
* :class:`ConnectRestError` → its ``status``
* anything else → 500
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sluice.api.errors import ConnectError

__all__ = [
    "BadRequestError",
    "ConfigInfo",
    "ConfigInfos",
    "ConfigKeyInfo",
    "ConfigValueInfo",
    "ConnectRestError",
    "ConnectorInfo",
    "ConnectorStateInfo",
    "ConnectorTaskId",
    "Herder",
    "LoggerLevel",
    "PluginInfo",
    "RequestForwardError",
    "SignedRequest",
    "State",
    "StateInfo",
    "TargetState",
    "TaskInfo",
    "TaskStateInfo",
]


class ConnectRestError(ConnectError):
    """An error with an explicit HTTP status (``ConnectRestException``)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status

    def __reduce__(self):
        return (type(self), (self.status, self.message))


class RequestForwardError(ConnectRestError):
    """This worker cannot serve the request: another one (the leader, or the owner of a
    task) can, at ``forward_url`` (None while unknown). The REST layer forwards it there
    or, when forwarding is not allowed, answers 409 with ``message``."""

    def __init__(self, forward_url: str | None, message: str) -> None:
        super().__init__(409, message)
        self.forward_url = forward_url

    def __reduce__(self):
        return (type(self), (self.forward_url, str(self)))


class BadRequestError(ConnectRestError):
    """400 Bad Request."""

    def __init__(self, message: str) -> None:
        super().__init__(400, message)

    def __reduce__(self):
        return (type(self), (self.message,))


class TargetState(enum.Enum):
    """What the user asked a connector to be: started, paused or stopped."""

    STARTED = "STARTED"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"


class State(enum.Enum):
    """Reported state of a connector or task (``AbstractStatus.State``)."""

    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    FAILED = "FAILED"
    DESTROYED = "DESTROYED"
    RESTARTING = "RESTARTING"
    STOPPED = "STOPPED"


@dataclass(frozen=True, order=True)
class ConnectorTaskId:
    connector: str
    task: int

    def __str__(self) -> str:
        return f"{self.connector}-{self.task}"


@dataclass
class ConnectorInfo:
    name: str
    config: dict[str, str]
    tasks: list[ConnectorTaskId]
    type: str  # "source" | "sink" | "unknown"


@dataclass
class TaskInfo:
    id: ConnectorTaskId
    config: dict[str, str]


@dataclass
class StateInfo:
    state: str
    worker_id: str | None
    trace: str | None = None
    #: The connector plugin's version recorded with the status (Kafka 4.x); None: unknown.
    version: str | None = None


@dataclass
class TaskStateInfo:
    id: int
    state: str
    worker_id: str | None
    trace: str | None = None
    #: The task's version recorded with the status (Kafka 4.x); None: unknown.
    version: str | None = None


@dataclass
class ConnectorStateInfo:
    name: str
    connector: StateInfo
    tasks: list[TaskStateInfo]
    type: str


@dataclass
class PluginInfo:
    class_name: str
    type: str  # source, sink, converter, header_converter, transformation, predicate
    version: str | None = None


@dataclass
class ConfigKeyInfo:
    name: str
    type: str
    required: bool
    default_value: str | None
    importance: str
    documentation: str
    group: str | None
    order: int
    width: str
    display_name: str
    dependents: list[str] = field(default_factory=list)


@dataclass
class ConfigValueInfo:
    name: str
    value: str | None
    recommended_values: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    visible: bool = True


@dataclass
class ConfigInfo:
    definition: ConfigKeyInfo | None
    value: ConfigValueInfo | None


@dataclass
class ConfigInfos:
    name: str
    error_count: int
    groups: list[str]
    configs: list[ConfigInfo]


@dataclass(frozen=True)
class SignedRequest:
    """An internal request from another worker: its headers (the KIP-507 signature among
    them) and the body they sign. The herder checks the signature."""

    headers: Mapping[str, str]
    body: bytes


@dataclass
class LoggerLevel:
    level: str
    last_modified: int | None = None


class Herder(ABC):
    """Operates a Connect cluster (standalone: one worker)."""

    @abstractmethod
    def server_info(self) -> dict[str, Any]:
        """``{"version", "commit", "kafka_cluster_id"}`` for ``GET /``."""

    @abstractmethod
    def health(self) -> tuple[str, str]:
        """``(status, message)``: status is ``healthy``, ``starting`` or ``unhealthy``."""

    def await_started(self, timeout_s: float) -> bool:
        """Wait until the herder serves requests about connectors (Kafka's herder queues
        them until it has started); False when it has not within ``timeout_s``. The
        default: it always does."""
        return True

    def starting_stage(self) -> str | None:
        """What a starting herder is waiting for (Kafka's stage summary), else None."""
        return None

    @abstractmethod
    def connectors(self) -> list[str]:
        """Names of all connectors."""

    @abstractmethod
    def connector_info(self, name: str) -> ConnectorInfo:
        """Raises NotFoundError(``Connector <c> not found``)."""

    @abstractmethod
    def connector_config(self, name: str) -> dict[str, str]:
        """The raw stored config. Raises NotFoundError."""

    @abstractmethod
    def put_connector_config(
        self,
        name: str,
        config: Mapping[str, str | None],
        allow_replace: bool,
        initial_state: TargetState | None = None,
    ) -> tuple[bool, ConnectorInfo]:
        """Create or replace. Returns ``(created, info)``. Raises AlreadyExistsError when
        it exists and ``allow_replace`` is false, BadRequestError for an invalid config."""

    @abstractmethod
    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo:
        """Merge ``patch`` into the config (None removes a key)."""

    @abstractmethod
    def delete_connector(self, name: str) -> None:
        """Raises NotFoundError(``Connector <c> not found``)."""

    @abstractmethod
    def connector_status(self, name: str) -> ConnectorStateInfo:
        """Raises NotFoundError(``No status found for connector <c>``)."""

    @abstractmethod
    def task_status(self, name: str, task: int) -> TaskStateInfo:
        """Raises NotFoundError(``No status found for task <c>-<t>``)."""

    @abstractmethod
    def task_configs(self, name: str) -> list[TaskInfo]:
        """Raises NotFoundError."""

    @abstractmethod
    def pause_connector(self, name: str) -> None: ...

    @abstractmethod
    def resume_connector(self, name: str) -> None: ...

    @abstractmethod
    def stop_connector(self, name: str) -> None: ...

    @abstractmethod
    def restart_connector(self, name: str, include_tasks: bool, only_failed: bool) -> ConnectorStateInfo | None:
        """Both flags false: restart the connector synchronously and return None.
        Otherwise return the state computed before the restart (202 body)."""

    @abstractmethod
    def restart_task(self, name: str, task: int) -> None: ...

    @abstractmethod
    def connector_plugins(self, connectors_only: bool = True) -> list[PluginInfo]: ...

    @abstractmethod
    def validate_connector_config(self, config: Mapping[str, str | None]) -> ConfigInfos:
        """Validate a config (``PUT /connector-plugins/{type}/config/validate``)."""

    @abstractmethod
    def connector_active_topics(self, name: str) -> list[str]:
        """Topics the connector used; raises ConnectRestError(403) when tracking is disabled."""

    @abstractmethod
    def reset_connector_active_topics(self, name: str) -> None:
        """Forget the connector's active topics; 403 when tracking or its reset is disabled."""

    @abstractmethod
    def connector_offsets(self, name: str) -> list[dict[str, Any]]:
        """``[{"partition": {...}, "offset": {...}}]``. Raises NotFoundError."""

    @abstractmethod
    def alter_connector_offsets(self, name: str, offsets: list[dict[str, Any]]) -> str:
        """Alter offsets of a STOPPED connector; returns the success message."""

    @abstractmethod
    def reset_connector_offsets(self, name: str) -> str:
        """Reset all offsets of a STOPPED connector; returns the success message."""

    @abstractmethod
    def plugin_config(self, plugin: str, version: str | None = None) -> list[ConfigKeyInfo]:
        """Config definitions of a plugin (``GET /connector-plugins/{plugin}/config``), of
        the installed version that meets ``version`` (KIP-891's ``?version=``) if given."""

    def metrics_text(self) -> str:
        """This worker's metrics in Prometheus' text format (``GET /metrics``)."""
        return ""

    @abstractmethod
    def logger_levels(self) -> dict[str, LoggerLevel]:
        """Loggers with an explicitly set level, plus ``root``."""

    @abstractmethod
    def logger_level(self, logger: str) -> LoggerLevel:
        """Raises NotFoundError(``Logger <x> not found.``)."""

    @abstractmethod
    def set_worker_logger_level(self, logger: str, level: str) -> list[str]:
        """Set the level on this worker; returns the affected logger names, sorted."""

    @abstractmethod
    def set_cluster_logger_level(self, logger: str, level: str) -> None:
        """Set the level on every worker of the cluster."""

    # -- internal endpoints: called by the other workers of a distributed cluster

    def put_task_configs(self, name: str, configs: list[dict[str, str]], request: SignedRequest) -> None:
        """``POST /connectors/{c}/tasks``: the leader writes the task configs the
        connector's owner sends (raises :class:`RequestForwardError` on any other
        worker)."""
        raise ConnectError("Kafka Connect in standalone mode does not support externally setting task configurations.")

    def fence_zombie_source_tasks(self, name: str, request: SignedRequest) -> None:
        """``PUT /connectors/{c}/fence``: the leader fences the producers of the
        connector's earlier tasks and records its task count (KIP-618), answering once
        that is done."""
        raise ConnectError("Kafka Connect in standalone mode does not support exactly-once source connectors.")
