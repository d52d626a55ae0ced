"""What every herder does the same way over one :class:`Worker` and its stores: reads
answered from the config and status stores, validation, offsets, active topics,
plugins and loggers. Standalone and distributed herders add their own writes."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from sluice import __version__
from sluice.api.errors import ConnectError, NotFoundError
from sluice.api.metrics import Metric, MetricsReporter
from sluice.api.records import TopicPartition
from sluice.api.source import partition_key
from sluice.runtime.auto_restart import AutoRestarter
from sluice.runtime.herder.base import (
    BadRequestError,
    ConfigInfos,
    ConfigKeyInfo,
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
from sluice.runtime.herder.validation import validate_connector_config
from sluice.runtime.loggers import Loggers
from sluice.runtime.metrics.exposition import as_metrics, prometheus_text, worker_metrics
from sluice.runtime.metrics.reporters import load_reporters
from sluice.runtime.offsets import (
    KAFKA_OFFSET_KEY,
    KAFKA_PARTITION_KEY,
    KAFKA_TOPIC_KEY,
    SinkGroupOffsets,
    offsets_message,
    parse_sink_offsets,
    parse_source_offsets,
    source_offsets,
    write_source_offsets,
)
from sluice.runtime.plugins import UnknownPluginError
from sluice.runtime.worker import Worker
from sluice.storage.base import ConfigBackingStore, StatusBackingStore

log = logging.getLogger(__name__)

__all__ = ["WorkerHerder"]


class WorkerHerder(Herder):
    """The parts of a herder that only read state or act through the worker."""

    #: Whether validation runs a distributed worker's checks (Kafka's exactly-once preflight).
    validates_as_distributed = False

    def __init__(
        self,
        worker: Worker,
        config_store: ConfigBackingStore,
        status_store: StatusBackingStore,
        kafka_cluster_id: Callable[[], str | None],
        sink_offsets: SinkGroupOffsets | None = None,
        loggers: Loggers | None = None,
    ) -> None:
        self.worker = worker
        self.config_store = config_store
        self.status_store = status_store
        self._cluster_id = kafka_cluster_id
        self.sink_offsets = sink_offsets or SinkGroupOffsets(worker.admin_client)
        self.loggers = loggers or Loggers()
        self._lock = threading.RLock()
        self._started = threading.Event()  # requests about connectors are served (await_started)
        self.auto_restarter = AutoRestarter(
            self.restart_task,
            self._restart_connector_only,
            lambda name: self.config_store.snapshot().connector_config(name),
        )
        worker.status_hook = self._on_status
        self.reporters: list[MetricsReporter] = []

    def _on_status(self, connector: str, task: int | None, state: State, trace: str | None) -> str | None:
        """Each status the worker writes, before it is written: timed for the task's
        running-ratio and pause-ratio, then given to the automatic restarts."""
        if task is not None:
            # A stopping task instance is no longer among the worker's tasks (the worker
            # drops it before stopping it), so this is the instance reporting.
            series = getattr(self.worker.task_states(connector).get(task), "series", None)
            if series is not None:  # (metrics never stand in the way of a status)
                series.states.change(state)
        return self.auto_restarter.on_status(connector, task, state, trace)

    def _restart_connector_only(self, name: str) -> None:
        self.restart_connector(name, False, False)

    def ready(self) -> None:
        self._started.set()

    def await_started(self, timeout_s: float) -> bool:
        return self._started.wait(timeout_s)

    def starting_stage(self) -> str | None:
        if self._started.is_set():
            return None
        startup = self.worker.startup
        return None if startup.ready else startup.stage.summary()

    # -- info -----------------------------------------------------------------------

    def server_info(self) -> dict[str, Any]:
        return {"version": __version__, "commit": "unknown", "kafka_cluster_id": self._cluster_id()}

    def metrics_text(self) -> str:
        return prometheus_text(self._metric_families())

    def _metric_families(self) -> list[Any]:
        return [*worker_metrics(self.worker.metrics_snapshot()), *self._more_metrics()]

    def metrics(self) -> list[Metric]:
        """The worker's metrics as metrics reporters get them."""
        return as_metrics(self._metric_families())

    def start_reporters(self) -> None:
        """``metric.reporters``: created, configured and given the metrics (raises ConfigError)."""
        raw = dict(self.worker.config.raw)
        self.reporters = load_reporters(raw.get("metric.reporters"), raw, self.metrics)

    def close_reporters(self) -> None:
        reporters, self.reporters = self.reporters, []
        for reporter in reporters:
            try:
                reporter.close()
            except Exception:
                log.warning("Closing the metrics reporter %s failed", type(reporter).__name__, exc_info=True)

    def _more_metrics(self) -> list[Any]:
        """Metric families of the herder's own (a distributed one's rebalances)."""
        return []

    def health(self) -> tuple[str, str]:
        if not self._started.is_set():
            return ("starting", self._starting_message())
        return ("healthy", "Worker has completed startup and is ready to handle requests.")

    def _starting_message(self) -> str:
        stage = self.starting_stage()
        return "Worker is still starting up." + (f" {stage}" if stage else "")

    def connectors(self) -> list[str]:
        return self.config_store.snapshot().connectors()

    def _generate_task_configs_of(self, name: str, config: Mapping[str, str]) -> list[dict[str, str]] | None:
        """The task configs the running connector generates for ``config``'s ``tasks.max``;
        None when its ``task_configs()`` raised: the connector is FAILED with that."""
        try:
            return self.worker.connector_task_configs(name, int(config.get("tasks.max", "1")))
        except Exception as exc:  # noqa: BLE001 - the connector's own task_configs() failed: the connector is FAILED with it
            self.worker.fail_connector(name, exc)
            return None

    def _changed_task_configs(self, name: str) -> list[dict[str, str]] | None:
        """The task configs the running connector generates now, when they, or the connector
        config since the stored ones were written, changed (Kafka's ``taskConfigsChanged``);
        None when nothing is to be written: the connector is gone or STOPPED, its
        ``task_configs()`` raised, or nothing changed."""
        snapshot = self.config_store.snapshot()
        config = snapshot.connector_config(name)
        if config is None or TargetState(snapshot.target_state(name)) is TargetState.STOPPED:
            return None
        configs = self._generate_task_configs_of(name, config)
        if configs is None or not snapshot.task_configs_changed(name, configs):
            return None
        return configs

    def _require(self, name: str) -> dict[str, str]:
        config = self.config_store.snapshot().connector_config(name)
        if config is None:
            raise NotFoundError(f"Connector {name} not found")
        return config

    def _type(self, name: str, config: Mapping[str, str | None]) -> str:
        kind = self.worker.connector_type(name)
        if kind:
            return kind
        try:
            return self.worker.plugins.resolve_connector(config.get("connector.class") or "").type
        except UnknownPluginError:
            return "unknown"

    def connector_info(self, name: str) -> ConnectorInfo:
        config = self._require(name)
        tasks = [ConnectorTaskId(name, i) for i in range(self.config_store.snapshot().task_count(name))]
        return ConnectorInfo(name, dict(config), tasks, self._type(name, config))

    def connector_config(self, name: str) -> dict[str, str]:
        return dict(self._require(name))

    def task_configs(self, name: str) -> list[TaskInfo]:
        self._require(name)
        snapshot = self.config_store.snapshot()
        return [TaskInfo(ConnectorTaskId(name, i), dict(cfg)) for i, cfg in enumerate(snapshot.tasks(name))]

    def connector_status(self, name: str) -> ConnectorStateInfo:
        status = self.status_store.get_connector(name)
        config = self.config_store.snapshot().connector_config(name)
        if status is None or config is None:
            raise NotFoundError(f"No status found for connector {name}")
        tasks = [
            TaskStateInfo(t.task, t.state, t.worker_id, t.trace or None, t.version)
            for t in self.status_store.get_all_tasks(name)
        ]
        return ConnectorStateInfo(
            name,
            StateInfo(status.state, status.worker_id, status.trace or None, status.version),
            tasks,
            self._type(name, config),
        )

    def task_status(self, name: str, task: int) -> TaskStateInfo:
        status = self.status_store.get_task(name, task)
        if status is None:
            raise NotFoundError(f"No status found for task {name}-{task}")
        return TaskStateInfo(status.task, status.state, status.worker_id, status.trace or None, status.version)

    def connector_plugins(self, connectors_only: bool = True) -> list[PluginInfo]:
        order = (
            ["sink", "source"]
            if connectors_only
            else ["sink", "source", "transformation", "predicate", "converter", "header_converter"]
        )
        plugins = self.worker.plugins.all()
        result = []
        for kind in order:
            for desc in plugins:
                if desc.type == kind:
                    result.append(PluginInfo(desc.class_name, desc.type, desc.version))
        return result

    def validate_connector_config(self, config: Mapping[str, str | None]) -> ConfigInfos:
        # As Kafka Connect does, placeholders are resolved before validation; null values
        # (Kafka accepts them) stay null.
        present = {key: value for key, value in config.items() if value is not None}
        resolved = {**config, **self.worker.resolve(present)}
        return validate_connector_config(
            self.worker.plugins, resolved, worker_config=self.worker.config, distributed=self.validates_as_distributed
        )

    def _restart_plan(
        self, name: str, include_tasks: bool, only_failed: bool
    ) -> tuple[ConnectorStateInfo, bool, list[int]]:
        """Kafka's restart plan (``AbstractHerder.buildRestartPlan``): the 202 body with what
        will restart shown RESTARTING, whether the connector restarts, and which tasks."""
        try:
            before = self.connector_status(name)
        except NotFoundError:
            raise NotFoundError(f"Status for connector {name} not found") from None
        restart_connector = not only_failed or before.connector.state == State.FAILED.value
        restart_tasks = [
            t.id for t in before.tasks if include_tasks and (not only_failed or t.state == State.FAILED.value)
        ]
        plan = ConnectorStateInfo(
            before.name,
            StateInfo(
                State.RESTARTING.value if restart_connector else before.connector.state,
                before.connector.worker_id,
                None if restart_connector else before.connector.trace,
                before.connector.version,
            ),
            [
                TaskStateInfo(t.id, State.RESTARTING.value, t.worker_id, None, t.version)
                if t.id in restart_tasks
                else t
                for t in before.tasks
            ],
            before.type,
        )
        return plan, restart_connector, restart_tasks

    # -- active topics ----------------------------------------------------------------

    def _check_topic_tracking(self, reset: bool = False) -> None:
        if not self.worker.config.get("topic.tracking.enable"):
            raise ConnectRestError(403, "Topic tracking is disabled.")
        if reset and not self.worker.config.get("topic.tracking.allow.reset"):
            raise ConnectRestError(403, "Topic tracking reset is disabled.")

    def connector_active_topics(self, name: str) -> list[str]:
        self._check_topic_tracking()
        return sorted(self.status_store.get_topics(name))

    def reset_connector_active_topics(self, name: str) -> None:
        self._check_topic_tracking(reset=True)
        self.status_store.delete_topics(name)

    # -- offsets ----------------------------------------------------------------------

    def _sink_group(self, config: dict[str, str]) -> str:
        return config.get("consumer.override.group.id") or f"connect-{config['name']}"

    def _require_stopped(self, name: str) -> None:
        snapshot = self.config_store.snapshot()
        if TargetState(snapshot.target_state(name)) is not TargetState.STOPPED or snapshot.task_count(name) > 0:
            raise BadRequestError(
                "Connectors must be in the STOPPED state before their offsets can be modified. This can be done "
                f"for the specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint"
            )

    def connector_offsets(self, name: str) -> list[dict[str, Any]]:
        config = self._require(name)
        if self._type(name, config) != "sink":
            return source_offsets(self.worker.offset_store_of(config), name)
        try:
            committed = self.sink_offsets.list(self._sink_group({**config, "name": name}))
        except Exception as exc:
            log.error("Could not read the consumer group offsets of %s", name, exc_info=True)
            raise ConnectRestError(500, f"Failed to retrieve consumer group offsets for sink connector {name}") from exc
        return [
            {
                "partition": {KAFKA_TOPIC_KEY: topic, KAFKA_PARTITION_KEY: partition},
                "offset": {KAFKA_OFFSET_KEY: offset},
            }
            for (topic, partition), offset in sorted(committed.items())
        ]

    def _connector_agrees(self, name: str, config: dict[str, str], offsets: dict[Any, Any]) -> bool:
        """Ask the connector (``alter_offsets``) before the framework changes its offsets."""
        try:
            connector = self.worker.plugins.resolve_connector(config["connector.class"]).cls()
            return bool(connector.alter_offsets(self.worker.resolve(dict(config)), offsets))
        except NotImplementedError as exc:
            raise ConnectRestError(
                500,
                f"Failed to modify offsets for connector {name} because it doesn't support external modification "
                "of offsets",
            ) from exc
        except ConnectError as exc:
            raise BadRequestError(str(exc)) from exc
        except Exception as exc:
            raise ConnectRestError(500, f"Failed to alter offsets for connector {name}: {exc}") from exc

    def alter_connector_offsets(self, name: str, offsets: list[dict[str, Any]]) -> str:
        with self._lock:
            config = self._require(name)
            self._require_stopped(name)
            if self._type(name, config) == "sink":
                changes = parse_sink_offsets(offsets)
                managed = self._connector_agrees(
                    name, config, {TopicPartition(t, p): o for (t, p), o in changes.items()}
                )
                try:
                    self.sink_offsets.alter(self._sink_group({**config, "name": name}), changes)
                except Exception as exc:
                    raise ConnectRestError(
                        500, f"Failed to alter consumer group offsets for connector {name}: {exc}"
                    ) from exc
            else:
                parsed = parse_source_offsets(offsets)
                managed = self._connector_agrees(name, config, {partition_key(p): o for p, o in parsed})
                write_source_offsets(self.worker.offset_store_of(config), name, parsed)
            return offsets_message(managed, "altered")

    def reset_connector_offsets(self, name: str) -> str:
        with self._lock:
            config = self._require(name)
            self._require_stopped(name)
            if self._type(name, config) == "sink":
                group = self._sink_group({**config, "name": name})
                try:
                    known = self.sink_offsets.list(group)
                except Exception:  # noqa: BLE001 - the group cannot be read now: the connector is asked with no offsets
                    known = {}
                managed = self._connector_agrees(name, config, {TopicPartition(t, p): None for t, p in known})
                try:
                    self.sink_offsets.delete_group(group)
                except Exception as exc:
                    raise ConnectRestError(
                        500,
                        f"Failed to reset consumer group offsets for connector {name} either because its tasks "
                        "haven't stopped completely yet or the connector was resumed before the request completed. "
                        "Please try again.",
                    ) from exc
            else:
                store = self.worker.offset_store_of(config)
                known_source = [p for p, _ in parse_source_offsets(source_offsets(store, name))]
                managed = self._connector_agrees(name, config, {partition_key(p): None for p in known_source})
                write_source_offsets(store, name, [(p, None) for p in known_source])
            return offsets_message(managed, "reset")

    # -- plugins and loggers ----------------------------------------------------------

    def plugin_config(self, plugin: str, version: str | None = None) -> list[ConfigKeyInfo]:
        from sluice.runtime.herder.validation import plugin_config_info

        return plugin_config_info(self.worker.plugins, plugin, version)

    def logger_levels(self) -> dict[str, LoggerLevel]:
        return self.loggers.all_levels()

    def logger_level(self, logger: str) -> LoggerLevel:
        return self.loggers.level(logger)

    def set_worker_logger_level(self, logger: str, level: str) -> list[str]:
        return self.loggers.set_level(logger, level)
