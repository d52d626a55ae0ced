"""An in-memory Herder for the REST unit tests (a fake of our own collaborator).

It keeps connectors, target states and task statuses in dicts and raises the errors,
with the messages, that Kafka Connect's standalone herder raises. It is not a model of
a real worker: tasks are ``tasks.max`` (default 1) config copies, all RUNNING unless a
test sets them otherwise.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from sluice.api.errors import AlreadyExistsError, NotFoundError
from sluice.runtime.herder.base import (
    BadRequestError,
    ConfigInfo,
    ConfigInfos,
    ConfigKeyInfo,
    ConfigValueInfo,
    ConnectorInfo,
    ConnectorStateInfo,
    ConnectorTaskId,
    ConnectRestError,
    Herder,
    LoggerLevel,
    PluginInfo,
    State,
    StateInfo,
    TargetState,
    TaskInfo,
    TaskStateInfo,
)
from sluice.runtime.loggers import Loggers

WORKER_ID = "fake-worker:8083"
#: The plugin version the fake's connectors and tasks report on their statuses.
PLUGIN_VERSION = "4.0.0"

_TARGET_TO_STATE = {
    TargetState.STARTED: State.RUNNING,
    TargetState.PAUSED: State.PAUSED,
    TargetState.STOPPED: State.STOPPED,
}


def java_map_str(config: dict[str, Any]) -> str:
    """``Map.toString()``: ``{k1=v1, k2=v2}``."""
    return "{" + ", ".join(f"{k}={'null' if v is None else v}" for k, v in config.items()) + "}"


class FakeHerder(Herder):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.configs: dict[str, dict[str, Any]] = {}
        self.target_states: dict[str, TargetState] = {}
        self.connector_states: dict[str, StateInfo] = {}
        self.task_states: dict[str, dict[int, TaskStateInfo]] = {}
        self.active_topics: dict[str, list[str]] = {}
        self.health_status: tuple[str, str] = (
            "healthy",
            "Worker has completed startup and is ready to handle requests.",
        )
        self.plugins: list[PluginInfo] = [
            PluginInfo("org.apache.kafka.connect.file.FileStreamSinkConnector", "sink", PLUGIN_VERSION),
            PluginInfo("org.apache.kafka.connect.file.FileStreamSourceConnector", "source", PLUGIN_VERSION),
            PluginInfo("org.apache.kafka.connect.transforms.Cast$Value", "transformation", None),
            PluginInfo("org.apache.kafka.connect.storage.StringConverter", "converter", "undefined"),
        ]
        # name of a Herder method -> exception it raises on its next call
        self.raise_next: dict[str, BaseException] = {}
        # status lookups that fail with NotFoundError even though the connector exists
        self.status_missing: set[str] = set()
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.offsets: dict[str, list[dict[str, Any]]] = {}
        self.topic_tracking = (True, True)  # (enabled, reset allowed)
        # Real Loggers over a private logging hierarchy: tests never touch the process's loggers.
        self.loggers = Loggers(logging.Manager(logging.RootLogger(logging.INFO)))

    # ---- helpers

    def _call(self, method: str, *args: Any) -> None:
        self.calls.append((method, args))
        exc = self.raise_next.pop(method, None)
        if exc is not None:
            raise exc

    def _require(self, name: str, message: str | None = None) -> dict[str, Any]:
        try:
            return self.configs[name]
        except KeyError:
            raise NotFoundError(message or f"Connector {name} not found") from None

    @staticmethod
    def _type_of(config: dict[str, Any]) -> str:
        cls = config.get("connector.class") or ""
        if "Sink" in cls:
            return "sink"
        if "Source" in cls:
            return "source"
        return "unknown"

    def _validate(self, config: dict[str, Any]) -> None:
        if not config.get("connector.class"):
            raise BadRequestError(f"Connector config {java_map_str(config)} contains no connector type")
        if config.get("name") == "":
            raise BadRequestError(
                "Connector configuration is invalid and contains the following 1 error(s):\n"
                "Invalid value  for configuration name: String may not be empty\n"
                "You can also find the above list of errors at the endpoint "
                "`/connector-plugins/{connectorType}/config/validate`"
            )

    def _task_count(self, name: str) -> int:
        if self.target_states.get(name) == TargetState.STOPPED:
            return 0
        return int(self.configs[name].get("tasks.max") or 1)

    def _tasks(self, name: str) -> list[ConnectorTaskId]:
        return [ConnectorTaskId(name, i) for i in range(self._task_count(name))]

    def _info(self, name: str) -> ConnectorInfo:
        config = self.configs[name]
        return ConnectorInfo(name, dict(config), self._tasks(name), self._type_of(config))

    def _apply_target(self, name: str, target: TargetState) -> None:
        self.target_states[name] = target
        state = _TARGET_TO_STATE[target]
        self.connector_states[name] = StateInfo(state.value, WORKER_ID, version=PLUGIN_VERSION)
        if target == TargetState.STOPPED:
            self.task_states[name] = {}
        else:
            self.task_states[name] = {
                t.task: TaskStateInfo(t.task, state.value, WORKER_ID, version=PLUGIN_VERSION) for t in self._tasks(name)
            }

    # ---- Herder

    def server_info(self) -> dict[str, Any]:
        self._call("server_info")
        return {"version": "0.1.0", "commit": "abc123", "kafka_cluster_id": "fake-cluster"}

    def health(self) -> tuple[str, str]:
        self._call("health")
        return self.health_status

    def connectors(self) -> list[str]:
        self._call("connectors")
        with self._lock:
            return sorted(self.configs)

    def connector_info(self, name: str) -> ConnectorInfo:
        self._call("connector_info", name)
        with self._lock:
            self._require(name)
            return self._info(name)

    def connector_config(self, name: str) -> dict[str, str]:
        self._call("connector_config", name)
        with self._lock:
            return dict(self._require(name))

    def put_connector_config(
        self,
        name: str,
        config: dict[str, str],
        allow_replace: bool,
        initial_state: TargetState | None = None,
    ) -> tuple[bool, ConnectorInfo]:
        self._call("put_connector_config", name, dict(config), allow_replace, initial_state)
        with self._lock:
            self._validate(config)  # validation runs before the existence check
            exists = name in self.configs
            if exists and not allow_replace:
                raise AlreadyExistsError(f"Connector {name} already exists")
            self.configs[name] = dict(config)
            target = initial_state or self.target_states.get(name, TargetState.STARTED)
            self._apply_target(name, target)
            return (not exists, self._info(name))

    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo:
        self._call("patch_connector_config", name, dict(patch))
        with self._lock:
            merged = dict(self._require(name))
            for key, value in patch.items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            self._validate(merged)
            self.configs[name] = merged
            return self._info(name)

    def delete_connector(self, name: str) -> None:
        self._call("delete_connector", name)
        with self._lock:
            self._require(name)
            del self.configs[name]
            self.target_states.pop(name, None)
            self.connector_states.pop(name, None)
            self.task_states.pop(name, None)

    def connector_status(self, name: str) -> ConnectorStateInfo:
        self._call("connector_status", name)
        with self._lock:
            if name not in self.configs or name in self.status_missing:
                raise NotFoundError(f"No status found for connector {name}")
            tasks = list(self.task_states.get(name, {}).values())
            # deliberately unsorted, to check that REST sorts by id
            tasks.sort(key=lambda t: -t.id)
            return ConnectorStateInfo(name, self.connector_states[name], tasks, self._type_of(self.configs[name]))

    def task_status(self, name: str, task: int) -> TaskStateInfo:
        self._call("task_status", name, task)
        with self._lock:
            try:
                return self.task_states[name][task]
            except KeyError:
                raise NotFoundError(f"No status found for task {name}-{task}") from None

    def task_configs(self, name: str) -> list[TaskInfo]:
        self._call("task_configs", name)
        with self._lock:
            config = self._require(name)
            return [TaskInfo(t, {**config, "task.id": str(t.task)}) for t in self._tasks(name)]

    def pause_connector(self, name: str) -> None:
        self._call("pause_connector", name)
        with self._lock:
            self._require(name, f"Unknown connector {name}")
            self._apply_target(name, TargetState.PAUSED)

    def resume_connector(self, name: str) -> None:
        self._call("resume_connector", name)
        with self._lock:
            self._require(name, f"Unknown connector {name}")
            self._apply_target(name, TargetState.STARTED)

    def stop_connector(self, name: str) -> None:
        self._call("stop_connector", name)
        with self._lock:
            self._require(name, f"Unknown connector {name}")
            self._apply_target(name, TargetState.STOPPED)

    def restart_connector(self, name: str, include_tasks: bool, only_failed: bool) -> ConnectorStateInfo | None:
        self._call("restart_connector", name, include_tasks, only_failed)
        with self._lock:
            self._require(name, f"Unknown connector: {name}")
            if not include_tasks and not only_failed:
                return None
            conn = self.connector_states[name]
            if not only_failed or conn.state == State.FAILED.value:
                conn_out = StateInfo(State.RESTARTING.value, conn.worker_id, version=conn.version)
            else:
                conn_out = conn
            tasks = []
            for t in sorted(self.task_states[name].values(), key=lambda t: t.id):
                if include_tasks and (not only_failed or t.state == State.FAILED.value):
                    tasks.append(TaskStateInfo(t.id, State.RESTARTING.value, t.worker_id, version=t.version))
                else:
                    tasks.append(t)
            return ConnectorStateInfo(name, conn_out, tasks, self._type_of(self.configs[name]))

    def restart_task(self, name: str, task: int) -> None:
        self._call("restart_task", name, task)
        with self._lock:
            self._require(name)
            if task not in self.task_states.get(name, {}):
                raise NotFoundError(f"Task {name}-{task} not found")

    def connector_plugins(self, connectors_only: bool = True) -> list[PluginInfo]:
        self._call("connector_plugins", connectors_only)
        if connectors_only:
            return [p for p in self.plugins if p.type in ("source", "sink")]
        return list(self.plugins)

    def validate_connector_config(self, config: dict[str, str]) -> ConfigInfos:
        self._call("validate_connector_config", dict(config))
        cls = config.get("connector.class")
        if not cls:
            raise BadRequestError(f"Connector config {java_map_str(config)} contains no connector type")
        name_errors = (
            [] if config.get("name") else ['Missing required configuration "name" which has no default value.']
        )
        return ConfigInfos(
            name=cls,
            error_count=len(name_errors),
            groups=["Common"],
            configs=[
                ConfigInfo(
                    ConfigKeyInfo(
                        name="name",
                        type="STRING",
                        required=True,
                        default_value=None,
                        importance="HIGH",
                        documentation="Globally unique name to use for this connector.",
                        group="Common",
                        order=1,
                        width="MEDIUM",
                        display_name="Connector name",
                        dependents=[],
                    ),
                    ConfigValueInfo("name", config.get("name"), [], name_errors, True),
                ),
                ConfigInfo(None, ConfigValueInfo("bogus", None, [], ["an error without definition"], True)),
            ],
        )

    def connector_active_topics(self, name: str) -> list[str]:
        self._call("connector_active_topics", name)
        with self._lock:
            return list(self.active_topics.get(name, []))

    def reset_connector_active_topics(self, name: str) -> None:
        self._call("reset_connector_active_topics", name)
        enabled, allow_reset = self.topic_tracking
        if not enabled:
            raise ConnectRestError(403, "Topic tracking is disabled.")
        if not allow_reset:
            raise ConnectRestError(403, "Topic tracking reset is disabled.")
        with self._lock:
            self.active_topics.pop(name, None)

    def _stopped_or_400(self, name: str) -> None:
        if name not in self.configs:
            raise NotFoundError(f"Connector {name} not found")
        if self.target_states.get(name) is not TargetState.STOPPED:
            raise BadRequestError(
                "Connectors must be in the STOPPED state before their offsets can be modified. This can be done "
                f"for the specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint"
            )

    def connector_offsets(self, name: str) -> list[dict[str, Any]]:
        self._call("connector_offsets", name)
        if name not in self.configs:
            raise NotFoundError(f"Connector {name} not found")
        return list(self.offsets.get(name, []))

    def alter_connector_offsets(self, name: str, offsets: list[dict[str, Any]]) -> str:
        self._call("alter_connector_offsets", name, offsets)
        self._stopped_or_400(name)
        self.offsets[name] = [o for o in offsets if o.get("offset") is not None]
        return "The offsets for this connector have been altered successfully"

    def reset_connector_offsets(self, name: str) -> str:
        self._call("reset_connector_offsets", name)
        self._stopped_or_400(name)
        self.offsets.pop(name, None)
        return "The offsets for this connector have been reset successfully"

    def plugin_config(self, plugin: str, version: str | None = None) -> list[ConfigKeyInfo]:
        self._call("plugin_config", plugin)
        if plugin not in {p.class_name for p in self.plugins} and plugin != "FileStreamSink":
            raise NotFoundError(f"Unknown plugin {plugin}.")
        return [ConfigKeyInfo("file", "STRING", False, None, "HIGH", "Destination filename.", None, -1, "NONE", "file")]

    def logger_levels(self) -> dict[str, LoggerLevel]:
        return self.loggers.all_levels()

    def logger_level(self, logger: str) -> LoggerLevel:
        return self.loggers.level(logger)

    def set_worker_logger_level(self, logger: str, level: str) -> list[str]:
        self._call("set_worker_logger_level", logger, level)
        return self.loggers.set_level(logger, level)

    def set_cluster_logger_level(self, logger: str, level: str) -> None:
        self._call("set_cluster_logger_level", logger, level)
        self.loggers.set_level(logger, level)
