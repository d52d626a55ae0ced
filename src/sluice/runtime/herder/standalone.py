"""StandaloneHerder: one worker, configs from files and REST, offsets in a file.

Every operation runs under one lock, so REST calls, command-line connectors and
reconfiguration requests never interleave.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping

from sluice.api.errors import AlreadyExistsError, NotFoundError
from sluice.runtime.herder.base import (
    BadRequestError,
    ConnectorInfo,
    ConnectorStateInfo,
    State,
    TargetState,
)
from sluice.runtime.herder.validation import invalid_config_message
from sluice.runtime.herder.worker_herder import WorkerHerder
from sluice.runtime.loggers import Loggers
from sluice.runtime.offsets import SinkGroupOffsets
from sluice.runtime.worker import Worker
from sluice.storage.base import ConfigBackingStore, StatusBackingStore

log = logging.getLogger(__name__)

__all__ = ["StandaloneHerder"]


class StandaloneHerder(WorkerHerder):
    """Runs every connector and task on this worker; writes go straight to its stores."""

    def __init__(
        self,
        worker: Worker,
        config_store: ConfigBackingStore,
        status_store: StatusBackingStore,
        kafka_cluster_id: Callable[[], str | None],
        sink_offsets: SinkGroupOffsets | None = None,
        loggers: Loggers | None = None,
    ) -> None:
        super().__init__(worker, config_store, status_store, kafka_cluster_id, sink_offsets, loggers)
        worker.reconfiguration_listener = self._on_reconfiguration_request

    # -- lifecycle ------------------------------------------------------------------

    def start(self) -> None:
        """Start every connector already in the config store (restored after a restart)."""
        with self._lock:
            snapshot = self.config_store.snapshot()
            for name in snapshot.connectors():
                self._start_connector(name)

    def stop(self) -> None:
        self.auto_restarter.close()
        with self._lock:
            # Every task told to stop at once, with one deadline for all, then the connectors:
            # a worker with hundreds of tasks stops in about the time its slowest task takes.
            self.worker.stop()
            for name in self.config_store.snapshot().connectors():
                self._mark_unassigned(name)

    def _mark_unassigned(self, name: str) -> None:
        from sluice.storage.base import ConnectorStatus

        current = self.status_store.get_connector(name)
        if current is not None and current.state != State.FAILED.value:
            self.status_store.put_connector(
                ConnectorStatus(name, State.UNASSIGNED.value, self.worker.worker_id, None, current.generation)
            )

    # -- writes ---------------------------------------------------------------------

    def put_connector_config(
        self, name: str, config: Mapping[str, str | None], allow_replace: bool, initial_state: TargetState | None = None
    ) -> tuple[bool, ConnectorInfo]:
        with self._lock:
            infos = self.validate_connector_config(config)
            if infos.error_count:
                raise BadRequestError(invalid_config_message(infos))
            exists = self.config_store.snapshot().contains(name)
            if exists and not allow_replace:
                raise AlreadyExistsError(f"Connector {name} already exists")
            if exists and self._reapplied_unchanged(name, config):
                return (False, self.connector_info(name))
            if exists:
                self.worker.stop_connector(name)
                self.config_store.put_connector_config(name, config)
            else:
                target = (initial_state or TargetState.STARTED).value
                self.config_store.put_connector_config(name, config, target)
            self._start_connector(name)
            return (not exists, self.connector_info(name))

    def _reapplied_unchanged(self, name: str, config: Mapping[str, str | None]) -> bool:
        """A connector given the config it runs with: as in Kafka, the connector restarts and
        its running tasks keep running unless the task configs it now generates differ
        (``AbstractHerder.taskConfigsChanged``). False when this does not apply: the config
        changed, or the connector or some of its tasks do not run here."""
        snapshot = self.config_store.snapshot()
        stored = snapshot.connector_config(name)
        target = TargetState(snapshot.target_state(name))
        if stored is None or dict(stored) != dict(config) or target is TargetState.STOPPED:
            return False
        running_here = sorted(self.worker.task_states(name)) == list(range(snapshot.task_count(name)))
        if not self.worker.runs_connector(name) or not running_here:
            return False
        if self.worker.restart_connector_instance(name, dict(stored), target):
            self._update_tasks(name)
        # else the connector is FAILED with its trace; its tasks go on, as in Kafka
        return True

    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo:
        with self._lock:
            merged = dict(self._require(name))
            for key, value in patch.items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            return self.put_connector_config(name, merged, allow_replace=True)[1]

    def delete_connector(self, name: str) -> None:
        with self._lock:
            self._require(name)
            self.worker.stop_connector(name)
            self.config_store.remove_connector_config(name)
            self.status_store.delete_connector(name)
            self.status_store.delete_topics(name)

    def _target(self, name: str) -> TargetState:
        return TargetState(self.config_store.snapshot().target_state(name))

    def _start_connector(self, name: str) -> None:
        """(Re)start a configured connector and, unless stopped, its tasks."""
        snapshot = self.config_store.snapshot()
        config = snapshot.connector_config(name)
        assert config is not None
        target = TargetState(snapshot.target_state(name))
        if not self.worker.start_connector(name, dict(config), target):
            return
        if target is TargetState.STOPPED:
            self.config_store.put_task_configs(name, [])
            return
        self._generate_and_start_tasks(name)

    def _generate_and_start_tasks(self, name: str) -> None:
        config = self.config_store.snapshot().connector_config(name)
        assert config is not None
        task_configs = self._generate_task_configs_of(name, config)
        if task_configs is None:
            return
        self.config_store.put_task_configs(name, task_configs)
        self._start_tasks(name)

    def _update_tasks(self, name: str) -> None:
        """Ask the running connector for its task configs; when they, or the connector
        config since they were written, changed, restart the tasks with them (Kafka's
        ``updateConnectorTasks``)."""
        new_configs = self._changed_task_configs(name)
        if new_configs is None:
            return
        self.worker.stop_tasks(name)
        self.config_store.put_task_configs(name, new_configs)
        self._start_tasks(name)

    def _start_tasks(self, name: str) -> None:
        snapshot = self.config_store.snapshot()
        config = snapshot.connector_config(name)
        assert config is not None
        task_configs = snapshot.tasks(name)
        target = TargetState(snapshot.target_state(name))
        for old in self.status_store.get_all_tasks(name):
            if old.task >= len(task_configs):
                self.status_store.delete_task(name, old.task)
        for task, task_config in enumerate(task_configs):
            self.worker.start_task(name, task, dict(config), dict(task_config), target, len(task_configs))

    def _on_reconfiguration_request(self, name: str) -> None:
        def reconfigure() -> None:
            with self._lock:
                self._update_tasks(name)

        threading.Thread(target=reconfigure, name=f"sluice-reconfigure-{name}", daemon=True).start()

    def pause_connector(self, name: str) -> None:
        with self._lock:
            self._require(name)
            self.config_store.put_target_state(name, TargetState.PAUSED.value)
            self.worker.set_target_state(name, TargetState.PAUSED)

    def resume_connector(self, name: str) -> None:
        with self._lock:
            self._require(name)
            was_stopped = self._target(name) is TargetState.STOPPED
            self.config_store.put_target_state(name, TargetState.STARTED.value)
            self.worker.set_target_state(name, TargetState.STARTED)
            if was_stopped and self.worker.is_running(name):
                self._generate_and_start_tasks(name)

    def stop_connector(self, name: str) -> None:
        with self._lock:
            if self.config_store.snapshot().connector_config(name) is None:
                # Kafka's standalone herder answers 500 here (IllegalArgumentException); 404 is
                # the distributed answer and the one a client can act on (docs/compatibility.md).
                raise NotFoundError(f"Unknown connector {name}")
            self.worker.stop_tasks(name)
            for task in self.status_store.get_all_tasks(name):
                self.status_store.delete_task(name, task.task)
            self.config_store.put_task_configs(name, [])
            self.config_store.put_target_state(name, TargetState.STOPPED.value)
            self.worker.set_target_state(name, TargetState.STOPPED)

    def restart_connector(self, name: str, include_tasks: bool, only_failed: bool) -> ConnectorStateInfo | None:
        with self._lock:
            if self.config_store.snapshot().connector_config(name) is None:
                raise NotFoundError(f"Unknown connector: {name}")
            if not include_tasks and not only_failed:
                self._restart_connector_instance(name)
                return None
            plan, restart_connector, restart_tasks = self._restart_plan(name, include_tasks, only_failed)
            if restart_connector:
                self._restart_connector_instance(name, restart_tasks_too=bool(restart_tasks))
            elif restart_tasks:
                for task in restart_tasks:
                    self._restart_task_instance(name, task)
            return plan

    def _restart_connector_instance(self, name: str, restart_tasks_too: bool = False) -> None:
        if restart_tasks_too or not self.worker.task_states(name):
            self.worker.stop_connector(name)
            self._start_connector(name)
            return
        # Only the connector instance restarts; its running tasks are left alone.
        snapshot = self.config_store.snapshot()
        config = snapshot.connector_config(name)
        assert config is not None
        self.worker.restart_connector_instance(name, dict(config), TargetState(snapshot.target_state(name)))

    def restart_task(self, name: str, task: int) -> None:
        with self._lock:
            snapshot = self.config_store.snapshot()
            if snapshot.connector_config(name) is None:
                raise NotFoundError(f"Connector {name} not found")
            if snapshot.task_config(name, task) is None:
                raise NotFoundError(f"Task {name}-{task} not found")
            self._restart_task_instance(name, task)

    def _restart_task_instance(self, name: str, task: int) -> None:
        snapshot = self.config_store.snapshot()
        config = snapshot.connector_config(name)
        task_config = snapshot.task_config(name, task)
        assert config is not None and task_config is not None
        self.worker.stop_task(name, task)
        self.worker.start_task(
            name,
            task,
            dict(config),
            dict(task_config),
            TargetState(snapshot.target_state(name)),
            snapshot.task_count(name),
        )

    def set_cluster_logger_level(self, logger: str, level: str) -> None:
        # One worker is the whole cluster.
        self.loggers.set_level(logger, level)
