"""A Java connector as the worker sees it (runtime/java_plugins.py): its calls cross the
gateway as JSON, its config definition becomes a Python ConfigDef, its validation is merged
with the framework's, and its context's requests come back to its Python context. The
driver's JVM is played by a fake ``DriverRuntime`` that answers as the Java one does."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from sluice.api.config import NO_DEFAULT, ConfigType
from sluice.api.connector import ConnectorContext
from sluice.runtime.herder.validation import validate_connector_config
from sluice.runtime.java_plugins import JavaConnector, JavaPluginError, JavaRuntime, config_def_of
from sluice.runtime.plugins import Plugins

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"

KEYS = [
    {
        "name": "file",
        "type": "STRING",
        "has_default": True,
        "default": None,
        "importance": "HIGH",
        "documentation": "Source filename.",
        "group": None,
        "order_in_group": -1,
        "width": "NONE",
        "display_name": "file",
        "dependents": [],
        "internal": False,
    },
    {
        "name": "topic",
        "type": "STRING",
        "has_default": False,
        "default": None,
        "importance": "HIGH",
        "documentation": "The topic to publish data to",
        "group": None,
        "order_in_group": -1,
        "width": "NONE",
        "display_name": "topic",
        "dependents": [],
        "internal": False,
    },
    {
        "name": "batch.size",
        "type": "INT",
        "has_default": True,
        "default": "2000",
        "importance": "LOW",
        "documentation": "The maximum number of records the source task can read from the file each time it is polled",
        "group": None,
        "order_in_group": -1,
        "width": "NONE",
        "display_name": "batch.size",
        "dependents": [],
        "internal": False,
    },
]


class FakeDriverRuntime:
    """Answers as DriverRuntime.java does, and remembers what it was asked."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.events: list[str] = []
        self.events_read = threading.Event()

    def plugins(self) -> str:
        return json.dumps([{"class": FILE_SOURCE, "type": "source", "version": "4.3.1", "location": "file:/x.jar"}])

    def newConnector(self, cls: str, version: str | None) -> str:
        self.calls.append(("newConnector", (cls, version)))
        return json.dumps({"id": "7", "version": "4.3.1", "type": "source"})

    def initialize(self, instance: str) -> None:
        self.calls.append(("initialize", (instance,)))

    def start(self, instance: str, props: str) -> None:
        self.calls.append(("start", (instance, json.loads(props))))
        if json.loads(props).get("fail"):
            raise RuntimeError("java.lang.IllegalStateException: no file\n\tat Task.start(Task.java:1)")

    def taskConfigs(self, instance: str, max_tasks: int) -> str:
        return json.dumps({"task_class": "org.apache.kafka.connect.file.FileStreamSourceTask", "configs": [{"a": "1"}]})

    def connectorConfigDef(self, instance: str) -> str:
        return json.dumps(KEYS)

    def validate(self, instance: str, props: str) -> str:
        config = json.loads(props)
        errors = [] if "topic" in config else ['Missing required configuration "topic" which has no default value.']
        return json.dumps(
            [
                {"name": "file", "value": config.get("file"), "recommended_values": [], "errors": [], "visible": True},
                {
                    "name": "topic",
                    "value": config.get("topic"),
                    "recommended_values": [],
                    "errors": errors,
                    "visible": True,
                },
                {"name": "batch.size", "value": "2000", "recommended_values": [], "errors": [], "visible": True},
            ]
        )

    def pluginInfo(self, name: str) -> str | None:
        return json.dumps({"version": "4.3.1"}) if name.startswith("org.apache.kafka.") else None

    def release(self, instance: str) -> None:
        self.calls.append(("release", (instance,)))

    def nextEvent(self, timeout_ms: int) -> str | None:
        if self.events:
            return self.events.pop(0)
        self.events_read.set()
        threading.Event().wait(timeout_ms / 1000 / 50)
        return None


class FakeJavaRuntime(JavaRuntime):
    def __init__(self) -> None:
        super().__init__([], "service_load", lambda: None)
        self.driver = FakeDriverRuntime()
        self._classpath = "unused"

    def facade(self) -> Any:
        if self._facade is None:
            self._facade = self.driver
            threading.Thread(target=self._serve_events, daemon=True).start()
        return self._facade

    def call(self, method: Any, *args: Any) -> Any:
        try:
            return method(*args)
        except RuntimeError as exc:  # as java_call turns a Java exception into one with its trace
            raise JavaPluginError(str(exc)) from None


@pytest.fixture
def runtime() -> Any:
    java = FakeJavaRuntime()
    yield java
    java.close()


def test_a_java_config_def_becomes_a_python_one() -> None:
    keys = config_def_of(KEYS).config_keys()
    assert list(keys) == ["file", "topic", "batch.size"]
    assert keys["batch.size"].type is ConfigType.INT and keys["batch.size"].default_value == 2000
    assert keys["topic"].default_value is NO_DEFAULT
    assert keys["file"].default_value is None


def test_a_java_connector_forwards_its_lifecycle(runtime: FakeJavaRuntime) -> None:
    [desc] = runtime.java_descs()
    connector = desc.cls()
    assert isinstance(connector, JavaConnector) and desc.version == "4.3.1"
    assert connector.version() == "4.3.1"
    connector.start({"file": "/tmp/x", "topic": "t"})
    assert connector.task_configs(3) == [{"a": "1"}]
    assert connector.java_task_class == "org.apache.kafka.connect.file.FileStreamSourceTask"
    with pytest.raises(JavaPluginError, match="IllegalStateException: no file"):
        connector.start({"fail": "yes"})
    assert runtime.driver.calls[0] == ("newConnector", (FILE_SOURCE, "4.3.1"))


def test_a_java_connectors_requests_reach_its_context(runtime: FakeJavaRuntime) -> None:
    asked = threading.Event()

    class Context(ConnectorContext):
        def request_task_reconfiguration(self) -> None:
            asked.set()

        def raise_error(self, error: BaseException) -> None:
            raise AssertionError(error)

    [desc] = runtime.java_descs()
    connector = desc.cls()
    connector.initialize(Context())
    runtime.driver.events.append(json.dumps({"id": "7", "kind": "reconfigure"}))
    assert asked.wait(5)


def test_validation_merges_the_java_connectors_own_and_refuses_python_only_plugins(runtime: FakeJavaRuntime) -> None:
    plugins = Plugins([], java=runtime)
    infos = validate_connector_config(
        plugins,
        {
            "name": "j",
            "connector.class": FILE_SOURCE,
            "connector.plugin.version": "4.3.1",
            "file": "/tmp/x",
            "value.converter": "io.confluent.connect.avro.AvroConverter",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        },
    )
    values = {c.value.name: c.value for c in infos.configs if c.value}
    assert values["topic"].errors == ['Missing required configuration "topic" which has no default value.']
    assert any("is not a Java plugin" in e for e in values["value.converter"].errors)
    assert values["key.converter"].errors == []
    assert values["key.converter.plugin.version"].value == "4.3.1"  # the Java converter's, not Sluice's
    assert infos.error_count == 2
