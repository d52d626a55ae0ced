"""The three store interfaces the runtime uses, and the values they hold.

Each is a narrow, synchronous, thread-safe interface with memory, file and (later)
Kafka-topic implementations, mirroring Kafka Connect's ``OffsetBackingStore``,
``StatusBackingStore`` and ``ConfigBackingStore``:

* :class:`OffsetBackingStore`: raw source offsets, keyed and valued by the JSON bytes of
  spec 5.3 (see :mod:`sluice.kafka.offset_format` for the encoding).
* :class:`StatusBackingStore`: the last reported state of every connector and task.
* :class:`ConfigBackingStore`: connector configs, target states and task configs;
  :meth:`ConfigBackingStore.snapshot` returns an immutable-by-convention copy.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

__all__ = [
    "DESTROYED",
    "TARGET_STATES",
    "ClusterConfigState",
    "ConfigBackingStore",
    "ConnectorStatus",
    "copy_configs",
    "OffsetBackingStore",
    "StatusBackingStore",
    "TaskStatus",
]

#: The status state that means "remove this entry" (never visible to users).
DESTROYED = "DESTROYED"

#: Valid target states (``TargetState`` in Kafka).
TARGET_STATES = ("STARTED", "PAUSED", "STOPPED")


# --------------------------------------------------------------------------- offsets


def connector_config_map(config: Mapping[str, str | None]) -> dict[str, str]:
    """A connector config as stored and handed to connectors: a copy of ``config``.

    Kafka accepts a null value in a connector config, stores it as null and hands it on,
    as Java's ``Map<String, String>`` allows. Sluice does the same, so a value of this
    ``dict[str, str]`` may be None: typed as the API types configs, not filtered.
    """
    return cast(dict[str, str], dict(config))


class OffsetBackingStore(ABC):
    """Raw key/value storage for source offsets (``OffsetBackingStore`` in Kafka).

    Keys and values are the exact bytes of spec 5.3. Implementations are thread-safe.
    """

    @abstractmethod
    def start(self) -> None:
        """Open the store (load persisted data)."""

    @abstractmethod
    def stop(self) -> None:
        """Close the store. Every completed :meth:`set` is already durable."""

    @abstractmethod
    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        """The value of every requested key; ``None`` for keys without a value."""

    @abstractmethod
    def set(self, values: dict[bytes, bytes | None]) -> None:
        """Write all ``values`` at once, durable when this returns.

        A ``None`` value deletes (tombstones) its key.
        """

    @abstractmethod
    def all(self) -> dict[bytes, bytes]:
        """Every key with a non-null value."""


# --------------------------------------------------------------------------- statuses


@dataclass(frozen=True)
class ConnectorStatus:
    """A connector's reported state (``ConnectorStatus``; status topic value of spec 5.2)."""

    connector: str
    state: str
    worker_id: str | None  # None only when a status record names no worker
    trace: str | None = None
    generation: int = 0
    #: The connector plugin's version (Kafka 4.x records it); ``None`` when unknown.
    version: str | None = None

    def __post_init__(self) -> None:
        _normalise_state(self)


@dataclass(frozen=True)
class TaskStatus:
    """A task's reported state (``TaskStatus``; status topic value of spec 5.2)."""

    connector: str
    task: int
    state: str
    worker_id: str | None  # None only when a status record names no worker
    trace: str | None = None
    generation: int = 0
    #: The task's version (its ``version()``, as Kafka 4.x records it); ``None`` when unknown.
    version: str | None = None

    def __post_init__(self) -> None:
        _normalise_state(self)


def _normalise_state(status: ConnectorStatus | TaskStatus) -> None:
    """Store an enum state (``State.RUNNING``) as its name string (``"RUNNING"``)."""
    if isinstance(status.state, enum.Enum):
        object.__setattr__(status, "state", str(status.state.value))


class StatusBackingStore(ABC):
    """Connector and task statuses (``StatusBackingStore`` in Kafka). Thread-safe.

    Writing a status whose state is ``"DESTROYED"`` removes that one entry: for a
    connector, only the connector's own status (its tasks' statuses are removed by
    their own DESTROYED writes or by :meth:`delete_connector`).
    """

    def start(self) -> None:
        """Open the store. The default does nothing."""

    def stop(self) -> None:
        """Close the store. The default does nothing."""

    @abstractmethod
    def put_connector(self, status: ConnectorStatus) -> None: ...

    @abstractmethod
    def put_task(self, status: TaskStatus) -> None: ...

    def put_task_safe(self, status: TaskStatus) -> None:
        """Write unless another worker wrote the task's status in a newer generation
        (Kafka's ``putSafe``: a late FAILED or UNASSIGNED from a worker that lost the task
        must not hide its new owner's status). One worker's stores: the same as :meth:`put_task`."""
        self.put_task(status)

    @abstractmethod
    def get_connector(self, name: str) -> ConnectorStatus | None: ...

    @abstractmethod
    def get_task(self, name: str, task: int) -> TaskStatus | None: ...

    @abstractmethod
    def get_all_tasks(self, name: str) -> list[TaskStatus]:
        """The connector's task statuses, sorted by task id."""

    @abstractmethod
    def delete_connector(self, name: str) -> None:
        """Remove the connector's status and all of its tasks' statuses."""

    @abstractmethod
    def delete_task(self, name: str, task: int) -> None: ...

    @abstractmethod
    def connectors(self) -> set[str]:
        """Names of the connectors that have a connector status."""

    # Active topics (``TopicStatus``): the topics a connector's tasks produced to or
    # consumed from since the connector was created or its topics were reset.

    @abstractmethod
    def put_topic(self, connector: str, topic: str) -> None: ...

    @abstractmethod
    def get_topics(self, connector: str) -> set[str]: ...

    @abstractmethod
    def delete_topics(self, connector: str) -> None: ...


# --------------------------------------------------------------------------- configs


@dataclass
class ClusterConfigState:
    """A consistent copy of the config store (``ClusterConfigState`` in Kafka)."""

    connector_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    target_states: dict[str, str] = field(default_factory=dict)
    task_configs: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    # each connector's config as it was when its task configs were last written (Kafka's
    # AppliedConnectorConfig): a changed connector config restarts its tasks even when the
    # task configs it generates are the same, as they may use its converters or transforms
    applied_configs: dict[str, dict[str, str]] = field(default_factory=dict)

    def contains(self, name: str) -> bool:
        """Whether the connector has a config."""
        return name in self.connector_configs

    def connectors(self) -> list[str]:
        """Names of all connectors with a config, sorted."""
        return sorted(self.connector_configs)

    def connector_config(self, name: str) -> dict[str, str] | None:
        return self.connector_configs.get(name)

    def target_state(self, name: str) -> str:
        """The connector's target state; ``"STARTED"`` when none was recorded."""
        return self.target_states.get(name, "STARTED")

    def tasks(self, name: str) -> list[dict[str, str]]:
        """The connector's task configs in task-id order (empty when none)."""
        return self.task_configs.get(name, [])

    def applied_config(self, name: str) -> dict[str, str] | None:
        """The connector config its current task configs were generated from; None when
        none were written, or not since this store was read."""
        return self.applied_configs.get(name)

    def task_configs_changed(self, name: str, configs: list[dict[str, str]]) -> bool:
        """Whether ``configs``, generated from the current connector config, are to be
        written: they differ from the current ones, or the connector config changed since
        those were (Kafka's ``AbstractHerder.taskConfigsChanged``)."""
        return configs != self.tasks(name) or self.applied_config(name) != self.connector_config(name)

    def task_count(self, name: str) -> int:
        return len(self.tasks(name))

    def task_config(self, name: str, task: int) -> dict[str, str] | None:
        tasks = self.tasks(name)
        return tasks[task] if 0 <= task < len(tasks) else None

    def copy(self) -> ClusterConfigState:
        """A copy to hand out: its maps and configs are copies (see :func:`copy_configs`)."""
        return ClusterConfigState(
            connector_configs=copy_configs(self.connector_configs),
            target_states=dict(self.target_states),
            task_configs={name: [dict(task) for task in tasks] for name, tasks in self.task_configs.items()},
            applied_configs=copy_configs(self.applied_configs),
        )


def copy_configs(configs: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Configs by name, each copied. The values in a config are strings, so one level down is
    enough; a deep copy costs many times more, and creating a connector takes several
    snapshots of every connector's config."""
    return {name: dict(config) for name, config in configs.items()}


class ConfigBackingStore(ABC):
    """Connector configs, target states and task configs (``ConfigBackingStore``). Thread-safe.

    A target state may be written for a connector whose config does not exist yet (the
    distributed store writes ``target-state-`` before ``connector-``);
    :meth:`remove_connector_config` removes the config, target state and task configs.
    """

    def start(self) -> None:
        """Open the store. The default does nothing."""

    def stop(self) -> None:
        """Close the store. The default does nothing."""

    def refresh(self, timeout: float | None = None) -> None:
        """Catch up with what other workers wrote up to now. The default does nothing: a
        store only this process writes is always current."""

    @abstractmethod
    def put_connector_config(
        self, name: str, config: Mapping[str, str | None], target_state: str | None = None
    ) -> None:
        """Create or replace a connector config; ``target_state`` (if given) is set too.

        Without ``target_state`` an existing connector keeps its target state.
        """

    @abstractmethod
    def remove_connector_config(self, name: str) -> None:
        """Delete the connector's config, target state and task configs."""

    @abstractmethod
    def put_target_state(self, name: str, state: str) -> None:
        """Set the target state: ``STARTED``, ``PAUSED`` or ``STOPPED``."""

    @abstractmethod
    def put_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        """Replace the connector's task configs (task ``i`` is ``configs[i]``)."""

    @abstractmethod
    def snapshot(self) -> ClusterConfigState:
        """A copy of the current state, the caller's to keep (see :meth:`ClusterConfigState.copy`)."""


def check_target_state(state: str) -> str:
    """Validate a target state name (or ``TargetState`` member), returning the name."""
    if isinstance(state, enum.Enum):
        state = str(state.value)
    if state not in TARGET_STATES:
        raise ValueError(f"Invalid target state {state!r}; expected one of {', '.join(TARGET_STATES)}")
    return state
