"""Task configs name the built-ins' tasks as Kafka Connect does, and statuses carry the
plugin version, as Kafka Connect 4.3.1 records and answers them (issue 14, items 3 and 4).

The worker runs without Spark here: the driver-side task objects are replaced by a fake
that keeps the spec and the status reporter the worker hands them.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from sluice.api.config import ConfigDef
from sluice.api.connector import Task
from sluice.api.source import SourceConnector, SourceTask
from sluice.rest import entities
from sluice.runtime import worker as worker_module
from sluice.runtime.config import WorkerConfig
from sluice.runtime.herder.base import State, TargetState
from sluice.runtime.herder.standalone import StandaloneHerder
from sluice.runtime.plugins import KAFKA_TASK_CLASS_NAMES, Plugins, task_class_name, task_python_path
from sluice.runtime.worker import SparkProvider, Worker
from sluice.storage.memory import MemoryConfigBackingStore, MemoryOffsetBackingStore, MemoryStatusBackingStore

# Checked against Kafka 4.3.1's connect-file and connect test-plugins sources and
# Confluent's kafka-connect-jdbc (taskClass() of each connector).
KAFKA_TASK_NAMES = {
    "org.apache.kafka.connect.file.FileStreamSourceConnector": "org.apache.kafka.connect.file.FileStreamSourceTask",
    "org.apache.kafka.connect.file.FileStreamSinkConnector": "org.apache.kafka.connect.file.FileStreamSinkTask",
    "io.confluent.connect.jdbc.JdbcSourceConnector": "io.confluent.connect.jdbc.source.JdbcSourceTask",
    "io.confluent.connect.jdbc.JdbcSinkConnector": "io.confluent.connect.jdbc.sink.JdbcSinkTask",
    "org.apache.kafka.connect.tools.VerifiableSourceConnector": "org.apache.kafka.connect.tools.VerifiableSourceTask",
    "org.apache.kafka.connect.tools.VerifiableSinkConnector": "org.apache.kafka.connect.tools.VerifiableSinkTask",
    "org.apache.kafka.connect.tools.MockSourceConnector": "org.apache.kafka.connect.tools.MockSourceTask",
    "org.apache.kafka.connect.tools.MockSinkConnector": "org.apache.kafka.connect.tools.MockSinkTask",
    # Confluent's Replicator is not open source: the task name its logs and task configs show
    "io.confluent.connect.replicator.ReplicatorSourceConnector": "io.confluent.connect.replicator.ReplicatorSourceTask",
}
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SOURCE_TASK = "org.apache.kafka.connect.file.FileStreamSourceTask"
FILE_SOURCE_TASK_PATH = "sluice.connectors.file.source.FileStreamSourceTask"
STRING = "org.apache.kafka.connect.storage.StringConverter"


# -- a Python plugin whose connector and task report different versions -------------------


class VersionedTask(SourceTask):
    def version(self) -> str:
        return "7.0-task"

    def start(self, props: dict[str, str]) -> None:
        pass

    def poll(self) -> list[Any]:
        return []

    def stop(self) -> None:
        pass


class VersionedConnector(SourceConnector):
    def version(self) -> str:
        return "7.0"

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[Task]:
        return VersionedTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{"n": "1"}]

    def config(self) -> ConfigDef:
        return ConfigDef()

    def stop(self) -> None:
        pass


class NoVersionConnector(VersionedConnector):
    def version(self) -> str:
        raise RuntimeError("no version here")


PYTHON_CONNECTOR = f"{__name__}.VersionedConnector"
PYTHON_TASK = f"{__name__}.VersionedTask"


# -- names --------------------------------------------------------------------------------


@pytest.mark.parametrize(("connector", "kafka_task"), sorted(KAFKA_TASK_NAMES.items()))
def test_builtin_tasks_are_named_as_in_kafka(connector: str, kafka_task: str) -> None:
    task_cls = Plugins().resolve_connector(connector).cls().task_class()
    assert task_class_name(task_cls) == kafka_task
    path = task_python_path(kafka_task)
    module, _, attr = path.rpartition(".")
    assert getattr(importlib.import_module(module), attr) is task_cls


def test_every_kafka_task_name_loads_a_task() -> None:
    assert sorted(KAFKA_TASK_CLASS_NAMES.values()) == sorted(KAFKA_TASK_NAMES.values())
    for path in KAFKA_TASK_CLASS_NAMES:
        module, _, attr = path.rpartition(".")
        assert issubclass(getattr(importlib.import_module(module), attr), Task), path


def test_python_plugin_tasks_and_earlier_python_paths_are_kept() -> None:
    assert task_class_name(VersionedTask) == PYTHON_TASK
    assert task_python_path(PYTHON_TASK) == PYTHON_TASK
    # a task config an earlier Sluice wrote for a built-in still loads the same class
    assert task_python_path(FILE_SOURCE_TASK_PATH) == FILE_SOURCE_TASK_PATH
    # a Java-only task class stays what it is (it fails to load, as before)
    assert task_python_path("com.example.OtherTask") == "com.example.OtherTask"


def test_task_version_is_the_task_classes_own() -> None:
    plugins = Plugins()
    from sluice.connectors.file.source import FileStreamSourceTask

    assert plugins.task_version(FILE_SOURCE_TASK) == FileStreamSourceTask().version()
    assert plugins.task_version(FILE_SOURCE_TASK_PATH) == FileStreamSourceTask().version()
    assert plugins.task_version(PYTHON_TASK) == "7.0-task"
    assert plugins.task_version("com.example.OtherTask") is None


# -- the worker ---------------------------------------------------------------------------


class FakeWorkerTask:
    """The driver-side task object, without Spark: keeps what the worker gave it."""

    made: list[FakeWorkerTask] = []

    def __init__(self, spec: Any, target: TargetState, spark: Any, hooks: Any, settings: Any, **kwargs: Any) -> None:
        self.spec, self.report = spec, hooks.report
        FakeWorkerTask.made.append(self)

    def start(self) -> None:
        self.report(State.RUNNING, None)

    def stop(self) -> None:
        pass

    def join(self, timeout: float | None) -> bool:
        self.report(State.UNASSIGNED, None)
        return True

    def cancel(self) -> None:
        pass

    def transition_to(self, target: TargetState) -> None:
        self.report(State.PAUSED if target is TargetState.PAUSED else State.RUNNING, None)


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Worker:
    FakeWorkerTask.made = []
    monkeypatch.setattr(worker_module, "WorkerSourceTask", FakeWorkerTask)
    monkeypatch.setattr(worker_module, "WorkerSinkTask", FakeWorkerTask)
    config = WorkerConfig.standalone(
        {
            "bootstrap.servers": "127.0.0.1:1",
            "offset.storage.file.filename": str(tmp_path / "offsets"),
            "key.converter": STRING,
            "value.converter": STRING,
        }
    )
    w = Worker(
        "w:8083", config, Plugins(), MemoryOffsetBackingStore(), MemoryStatusBackingStore(), SparkProvider(lambda: None)
    )
    monkeypatch.setattr(w, "admin_client", lambda: None)
    return w


def _file_source(tmp_path: Path) -> dict[str, str]:
    return {"name": "src", "connector.class": FILE_SOURCE, "file": str(tmp_path / "in.txt"), "topic": "t"}


def test_worker_writes_kafka_task_class_and_runs_both_names(worker: Worker, tmp_path: Path) -> None:
    config = _file_source(tmp_path)
    assert worker.start_connector("src", config, TargetState.STARTED)
    [task_config] = worker.connector_task_configs("src", 1)
    assert task_config["task.class"] == FILE_SOURCE_TASK

    worker.start_task("src", 0, config, task_config, TargetState.STARTED)
    old = {**task_config, "task.class": FILE_SOURCE_TASK_PATH}  # written by an earlier Sluice
    worker.start_task("src", 1, config, old, TargetState.STARTED)
    assert [t.spec.task_class for t in FakeWorkerTask.made] == [FILE_SOURCE_TASK_PATH, FILE_SOURCE_TASK_PATH]
    # the task sees its config as stored, with Kafka's name (as a Kafka task does)
    assert FakeWorkerTask.made[0].spec.task_config["task.class"] == FILE_SOURCE_TASK


def test_statuses_carry_the_plugin_versions(worker: Worker, tmp_path: Path) -> None:
    store = worker.status_store
    plugin_version = worker.plugins.resolve_connector(FILE_SOURCE).version  # what GET /connector-plugins shows
    assert plugin_version
    config = _file_source(tmp_path)
    worker.start_connector("src", config, TargetState.STARTED)
    assert store.get_connector("src").version == plugin_version
    [task_config] = worker.connector_task_configs("src", 1)
    worker.start_task("src", 0, config, task_config, TargetState.STARTED)
    assert (store.get_task("src", 0).state, store.get_task("src", 0).version) == ("RUNNING", plugin_version)

    worker.set_target_state("src", TargetState.PAUSED)
    assert store.get_connector("src").version == plugin_version
    assert (store.get_task("src", 0).state, store.get_task("src", 0).version) == ("PAUSED", plugin_version)
    worker.set_target_state("src", TargetState.STOPPED)
    assert (store.get_connector("src").state, store.get_connector("src").version) == ("STOPPED", plugin_version)

    # a stopped task's UNASSIGNED has no version: Kafka's worker dropped the task before
    worker.stop_task("src", 0)
    assert (store.get_task("src", 0).state, store.get_task("src", 0).version) == ("UNASSIGNED", None)


def test_connector_and_task_versions_of_a_python_plugin(worker: Worker) -> None:
    store = worker.status_store
    config = {"name": "py", "connector.class": PYTHON_CONNECTOR}
    worker.start_connector("py", config, TargetState.STARTED)
    [task_config] = worker.connector_task_configs("py", 1)
    assert task_config["task.class"] == PYTHON_TASK
    worker.start_task("py", 0, config, task_config, TargetState.STARTED)
    assert store.get_connector("py").version == "7.0"
    assert store.get_task("py", 0).version == "7.0-task"
    worker.restart_connector_instance(
        "py", {**config, "connector.class": f"{__name__}.NoVersionConnector"}, TargetState.STARTED
    )
    assert (store.get_connector("py").state, store.get_connector("py").version) == ("RUNNING", None)


def test_failures_before_the_instance_exists_have_no_version(worker: Worker, tmp_path: Path) -> None:
    store = worker.status_store
    assert not worker.start_connector(
        "nope", {"name": "nope", "connector.class": "com.example.Missing"}, TargetState.STARTED
    )
    assert (store.get_connector("nope").state, store.get_connector("nope").version) == ("FAILED", None)

    config = _file_source(tmp_path)
    worker.start_connector("src", config, TargetState.STARTED)
    [task_config] = worker.connector_task_configs("src", 1)
    worker.start_task("src", 0, {**config, "key.converter": "com.example.Missing"}, task_config, TargetState.STARTED)
    assert (store.get_task("src", 0).state, store.get_task("src", 0).version) == ("FAILED", None)
    # a task that fails once it exists reports its version
    worker.start_task("src", 1, config, task_config, TargetState.STARTED)
    FakeWorkerTask.made[-1].report(State.FAILED, "Traceback ...")
    assert (store.get_task("src", 1).state, store.get_task("src", 1).version) == (
        "FAILED",
        store.get_connector("src").version,
    )


def test_standalone_rest_answers_carry_the_versions(worker: Worker, tmp_path: Path) -> None:
    herder = StandaloneHerder(worker, MemoryConfigBackingStore(), worker.status_store, lambda: "cluster")
    config = _file_source(tmp_path)
    herder.put_connector_config("src", config, allow_replace=False)
    version = worker.plugins.resolve_connector(FILE_SOURCE).version
    assert [t.config["task.class"] for t in herder.task_configs("src")] == [FILE_SOURCE_TASK]
    assert entities.connector_state_json(herder.connector_status("src")) == {
        "name": "src",
        "connector": {"state": "RUNNING", "worker_id": "w:8083", "version": version},
        "tasks": [{"id": 0, "state": "RUNNING", "worker_id": "w:8083", "version": version}],
        "type": "source",
    }
    assert entities.task_state_json(herder.task_status("src", 0)) == {
        "id": 0,
        "state": "RUNNING",
        "worker_id": "w:8083",
        "version": version,
    }
    plan = herder.restart_connector("src", include_tasks=True, only_failed=False)
    assert entities.connector_state_json(plan)["tasks"] == [
        {"id": 0, "state": "RESTARTING", "worker_id": "w:8083", "version": version}
    ]
    assert entities.connector_state_json(plan)["connector"] == {
        "state": "RESTARTING",
        "worker_id": "w:8083",
        "version": version,
    }
