"""In-memory stores: offsets for tests, statuses and configs for the standalone worker."""

from __future__ import annotations

import threading
from collections.abc import Mapping

from sluice.storage.base import (
    DESTROYED,
    ClusterConfigState,
    ConfigBackingStore,
    ConnectorStatus,
    OffsetBackingStore,
    StatusBackingStore,
    TaskStatus,
    check_target_state,
    connector_config_map,
)

__all__ = ["MemoryConfigBackingStore", "MemoryOffsetBackingStore", "MemoryStatusBackingStore"]


def _check_key(key: object) -> bytes:
    if isinstance(key, bytes):
        return key
    if isinstance(key, (bytearray, memoryview)):
        return bytes(key)
    raise TypeError(f"offset keys must be bytes, not {type(key).__name__}")


def _check_value(value: object) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"offset values must be bytes or None, not {type(value).__name__}")


class MemoryOffsetBackingStore(OffsetBackingStore):
    """Offsets held in a dict (``MemoryOffsetBackingStore``); lost when the process ends."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._data: dict[bytes, bytes] = {}

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        with self._lock:
            return {_check_key(key): self._data.get(_check_key(key)) for key in keys}

    def set(self, values: dict[bytes, bytes | None]) -> None:
        checked = {_check_key(key): _check_value(value) for key, value in values.items()}
        with self._lock:
            _apply(self._data, checked)

    def all(self) -> dict[bytes, bytes]:
        with self._lock:
            return dict(self._data)


def _apply(data: dict[bytes, bytes], values: dict[bytes, bytes | None]) -> None:
    for key, value in values.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value


class MemoryStatusBackingStore(StatusBackingStore):
    """Statuses held in memory (``MemoryStatusBackingStore``), as the standalone worker does."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._connectors: dict[str, ConnectorStatus] = {}
        self._tasks: dict[str, dict[int, TaskStatus]] = {}
        self._topics: dict[str, set[str]] = {}

    def put_connector(self, status: ConnectorStatus) -> None:
        with self._lock:
            if status.state == DESTROYED:
                self._connectors.pop(status.connector, None)
            else:
                self._connectors[status.connector] = status

    def put_task(self, status: TaskStatus) -> None:
        with self._lock:
            if status.state == DESTROYED:
                self._remove_task(status.connector, status.task)
            else:
                self._tasks.setdefault(status.connector, {})[status.task] = status

    def get_connector(self, name: str) -> ConnectorStatus | None:
        with self._lock:
            return self._connectors.get(name)

    def get_task(self, name: str, task: int) -> TaskStatus | None:
        with self._lock:
            return self._tasks.get(name, {}).get(task)

    def get_all_tasks(self, name: str) -> list[TaskStatus]:
        with self._lock:
            tasks = self._tasks.get(name, {})
            return [tasks[task] for task in sorted(tasks)]

    def delete_connector(self, name: str) -> None:
        with self._lock:
            self._connectors.pop(name, None)
            self._tasks.pop(name, None)

    def delete_task(self, name: str, task: int) -> None:
        with self._lock:
            self._remove_task(name, task)

    def connectors(self) -> set[str]:
        with self._lock:
            return set(self._connectors)

    def put_topic(self, connector: str, topic: str) -> None:
        with self._lock:
            self._topics.setdefault(connector, set()).add(topic)

    def get_topics(self, connector: str) -> set[str]:
        with self._lock:
            return set(self._topics.get(connector, ()))

    def delete_topics(self, connector: str) -> None:
        with self._lock:
            self._topics.pop(connector, None)

    def _remove_task(self, name: str, task: int) -> None:
        tasks = self._tasks.get(name)
        if tasks is not None:
            tasks.pop(task, None)
            if not tasks:
                del self._tasks[name]


class MemoryConfigBackingStore(ConfigBackingStore):
    """Configs held in memory (``MemoryConfigBackingStore``), as the standalone worker does.

    Values are copied on the way in and out, so callers may mutate what they passed or
    received without affecting the store.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._state = ClusterConfigState()

    def put_connector_config(
        self, name: str, config: Mapping[str, str | None], target_state: str | None = None
    ) -> None:
        if target_state is not None:
            target_state = check_target_state(target_state)
        with self._lock:
            self._state.connector_configs[name] = connector_config_map(config)
            if target_state is not None:
                self._state.target_states[name] = target_state

    def remove_connector_config(self, name: str) -> None:
        with self._lock:
            self._state.connector_configs.pop(name, None)
            self._state.target_states.pop(name, None)
            self._state.task_configs.pop(name, None)
            self._state.applied_configs.pop(name, None)

    def put_target_state(self, name: str, state: str) -> None:
        state = check_target_state(state)
        with self._lock:
            self._state.target_states[name] = state

    def put_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        configs = [dict(config) for config in configs]
        with self._lock:
            self._state.task_configs[name] = configs
            current = self._state.connector_configs.get(name)
            if current is not None:
                self._state.applied_configs[name] = dict(current)

    def snapshot(self) -> ClusterConfigState:
        with self._lock:
            return self._state.copy()
