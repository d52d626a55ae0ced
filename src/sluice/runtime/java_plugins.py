"""Kafka Connect's own plugins — Java classes in jars on ``plugin.path`` — as the worker
sees them (the driver side).

Kafka Connect's runtime runs in the Spark driver's JVM, in a class loader of its own
(:mod:`sluice.jvm.connect_runtime`); its plugin isolation scans ``plugin.path`` as Kafka
Connect's worker does, honouring ``plugin.discovery``. :class:`JavaRuntime` reaches it
through PySpark's gateway, by strings of JSON only.

To the rest of the worker a Java connector is a :class:`~sluice.api.connector.Connector`
like any other: :func:`java_connector_class` makes a Python class for each Java connector
class and version, whose instances hold a Java instance in the driver's JVM and forward
``start``, ``task_configs``, ``stop``, ``config`` and ``validate`` to it. Its tasks are
Java tasks: they run in the JVM task host (:mod:`sluice.spark.jvm_hosts`), not the Python
one. Requests a Java connector makes of its context (new task configs, an error, its source
partitions' offsets) reach its Python context from a thread that waits for them.
"""

from __future__ import annotations

import json
import logging
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from sluice.api.config import (
    NO_DEFAULT,
    Config,
    ConfigDef,
    ConfigType,
    ConfigValue,
    Importance,
    Width,
    parse_type,
)
from sluice.api.connector import Connector, ConnectorContext, Task
from sluice.api.errors import ConnectError
from sluice.api.sink import SinkConnector
from sluice.api.source import ConnectorTransactionBoundaries, ExactlyOnceSupport, SourceConnector
from sluice.jvm.connect_runtime import EXTRA_CLASSPATH_SETTING, classpath_string, extra_classpath, host_classpath
from sluice.kafka.offset_format import encode_json
from sluice.runtime.plugins import PluginDesc

log = logging.getLogger(__name__)

__all__ = ["JavaConnector", "JavaPlugin", "JavaPluginError", "JavaRuntime", "java_connector_class"]

DRIVER_RUNTIME = "sluice.jvmhost.DriverRuntime"
ISOLATED_RUNTIME = "sluice.jvmhost.boot.IsolatedRuntime"


class JavaPluginError(ConnectError):
    """A Java plugin's call failed; the message holds its Java stack trace."""


class JavaRuntime:
    """The Connect runtime in the driver's JVM, made on first use (the Spark session must be
    up): the Java plugins it found, and the Java connector instances it holds."""

    def __init__(self, plugin_path: list[str], discovery: str, spark: Callable[[], Any]) -> None:
        self.settings = {
            "plugin.path": ",".join(plugin_path),
            "plugin.discovery": discovery,
            EXTRA_CLASSPATH_SETTING: classpath_string(extra_classpath()),
        }
        self._spark = spark
        self._lock = threading.Lock()
        self._facade: Any = None
        self._session: Any = None
        self._classpath: str | None = None
        self._contexts: dict[str, ConnectorContext] = {}
        self._closed = threading.Event()

    @property
    def classpath(self) -> str:
        """The isolated runtime's class path (the host jar built on first use)."""
        if self._classpath is None:
            self._classpath = classpath_string(host_classpath())
        return self._classpath

    def facade(self) -> Any:
        with self._lock:
            if self._facade is None:
                from sluice.spark.session import jvm_view

                self._session = self._spark()
                isolated = getattr(jvm_view(self._session), ISOLATED_RUNTIME)
                self._facade = self.call(isolated.create, self.classpath, DRIVER_RUNTIME, json.dumps(self.settings))
                threading.Thread(target=self._serve_events, name="sluice-java-connectors", daemon=True).start()
            return self._facade

    def call(self, method: Any, *args: Any) -> Any:
        """Call a gateway method; a Java exception becomes :class:`JavaPluginError` with
        its Java stack trace."""
        from sluice.spark.session import JavaCallError, java_call

        try:
            return java_call(self._session, method, *args)
        except JavaCallError as exc:
            raise JavaPluginError(str(exc)) from None

    def invoke(self, method: str, *args: Any) -> Any:
        """Call ``method`` of the driver's ``DriverRuntime`` (:meth:`call`'s errors)."""
        return self.call(getattr(self.facade(), method), *args)

    def plugins(self) -> list[dict[str, str]]:
        """The Java plugins found on ``plugin.path``: class, type, version, location."""
        return list(json.loads(self.invoke("plugins")))

    def java_descs(self) -> list[PluginDesc]:
        """The Java plugins as the worker's plugin registry lists them (every version)."""
        descs = []
        for plugin in self.plugins():
            name, kind, version = plugin["class"], plugin["type"], plugin.get("version")
            if kind in ("source", "sink"):
                cls: type[Any] = java_connector_class(self, name, version, kind)
            else:
                cls = _standing_for(JavaPlugin, self, name, version)
            descs.append(PluginDesc(name, name, kind, version, cls))
        return descs

    def config_def(self, class_name: str, version: str | None) -> ConfigDef:
        """The config definition of a Java plugin (any kind) of ``version``."""
        return config_def_of(json.loads(self.invoke("configDef", class_name, version)))

    def plugin_info(self, class_or_alias: str) -> tuple[bool, str | None]:
        """Whether Java tasks can load this converter, transformation or predicate — one of
        Kafka's own (the runtime's) or a Java plugin on ``plugin.path`` — and its version
        (Kafka's own report Kafka's version; None when it has none)."""
        answer = self.invoke("pluginInfo", class_or_alias)
        if answer is None:
            return False, None
        version = json.loads(answer).get("version")
        return True, None if version is None else str(version)

    def listen(self, instance: str, context: ConnectorContext) -> None:
        self._contexts[instance] = context

    def release(self, instance: str) -> None:
        self._contexts.pop(instance, None)
        facade = self._facade
        if facade is not None and not self._closed.is_set():
            try:
                facade.release(instance)
            except Exception:
                log.debug("Could not release Java connector instance %s", instance, exc_info=True)

    def close(self) -> None:
        self._closed.set()

    def _serve_events(self) -> None:
        """Hand each Java connector's requests to its context, until the runtime closes."""
        while not self._closed.is_set():
            try:
                event = self._facade.nextEvent(1000)
            except Exception:
                if self._closed.is_set():
                    return
                # A request lost here is a reconfiguration a connector never gets: keep reading.
                log.warning("Reading the Java connectors' requests failed; reading on", exc_info=True)
                self._closed.wait(1.0)
                continue
            if event is None:
                continue
            request = json.loads(event)
            context = self._contexts.get(request["id"])
            if context is None:
                continue
            try:
                if request["kind"] == "reconfigure":
                    context.request_task_reconfiguration()
                elif request["kind"] == "offsets":
                    self._answer_offsets(context, request)
                else:
                    context.raise_error(JavaPluginError(request.get("trace") or "a Java connector raised an error"))
            except Exception:
                log.warning("Handling a Java connector's request failed", exc_info=True)

    def _answer_offsets(self, context: ConnectorContext, request: dict[str, Any]) -> None:
        """A Java connector's offset reader asks for its partitions' offsets: each as the JSON
        Kafka stores (the reader decodes it as Kafka's does), or null."""
        try:
            stored_offsets = getattr(context, "stored_offsets", None)
            if stored_offsets is None:
                raise ConnectError("the connector's context keeps no offsets")
            offsets = stored_offsets(list(request["partitions"]))
            answer: Any = [None if o is None else encode_json(o).decode("utf-8") for o in offsets]
        except Exception as exc:  # noqa: BLE001 - said to the connector, whose read fails with it
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        self.invoke("answerOffsets", str(request["request"]), json.dumps(answer))


def config_def_of(keys: list[dict[str, Any]]) -> ConfigDef:
    """A Java ``ConfigDef`` (as ``DriverRuntime`` describes it) as a Python one."""
    definition = ConfigDef()
    for key in keys:
        kind = ConfigType[key["type"]]
        default: Any = NO_DEFAULT
        if key["has_default"]:
            default = key["default"]
            if default is not None:
                try:
                    default = parse_type(key["name"], default, kind)
                except Exception:  # noqa: BLE001 - shown as Java gave it
                    log.debug("Default of %s kept as text: %r", key["name"], default)
        definition.define(
            key["name"],
            kind,
            default,
            None,
            Importance[key["importance"] or "LOW"],
            key["documentation"] or "",
            key["group"],
            key["order_in_group"],
            Width[key["width"]],
            key["display_name"],
            key["dependents"],
            internal=bool(key.get("internal")),
        )
    return definition


class JavaConnector(Connector):
    """A Java connector in the driver's JVM, as a Python connector. Subclasses are made per
    Java class and version (:func:`java_connector_class`)."""

    runtime: JavaRuntime
    java_class: str
    java_version: str | None

    def __init__(self) -> None:
        self._instance: str | None = None
        self._version: str | None = None
        #: The class of the connector's tasks (Java's name), known once it gave task configs.
        self.java_task_class: str | None = None

    def _id(self) -> str:
        if self._instance is None:
            made = json.loads(self.runtime.invoke("newConnector", self.java_class, self.java_version))
            self._instance, self._version = made["id"], made.get("version")
            weakref.finalize(self, self.runtime.release, self._instance)
        return self._instance

    def version(self) -> str:
        self._id()
        return self._version or "undefined"

    def initialize(self, context: ConnectorContext) -> None:
        super().initialize(context)
        instance = self._id()
        self.runtime.listen(instance, context)
        self.runtime.invoke("initialize", instance)

    def start(self, props: dict[str, str]) -> None:
        self.runtime.invoke("start", self._id(), json.dumps(props))

    def task_class(self) -> type[Task]:
        raise JavaPluginError(f"{self.java_class} is a Java connector: its tasks are Java classes")

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        answer = json.loads(self.runtime.invoke("taskConfigs", self._id(), max_tasks))
        self.java_task_class = answer["task_class"]
        return [dict(config) for config in answer["configs"]]

    def stop(self) -> None:
        self.runtime.invoke("stop", self._id())

    def config(self) -> ConfigDef:
        return config_def_of(json.loads(self.runtime.invoke("connectorConfigDef", self._id())))

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport | None:
        answer = self._source_capability("exactly_once", connector_config)
        return None if answer is None else ExactlyOnceSupport(answer)

    def can_define_transaction_boundaries(
        self, connector_config: dict[str, str]
    ) -> ConnectorTransactionBoundaries | None:
        answer = self._source_capability("transaction_boundaries", connector_config)
        return None if answer is None else ConnectorTransactionBoundaries(answer)

    def _source_capability(self, capability: str, connector_config: dict[str, str]) -> str | None:
        """The Java source connector's answer (an enum constant's name, or None, which
        validation reports as Kafka does); raises :class:`ConnectError` with the message
        of the exception it threw."""
        made = json.loads(self.runtime.invoke("sourceCapability", self._id(), capability, json.dumps(connector_config)))
        if "error" in made:
            raise ConnectError(made["error"])
        answer = made.get("answer")
        return None if answer is None else str(answer)

    def validate(self, connector_configs: dict[str, str]) -> Config:
        answer = json.loads(self.runtime.invoke("validate", self._id(), json.dumps(connector_configs)))
        return Config(
            [
                ConfigValue(v["name"], v["value"], list(v["recommended_values"]), list(v["errors"]), bool(v["visible"]))
                for v in answer
            ]
        )


class JavaPlugin:
    """A Java converter, header converter, transformation or predicate, as the worker's
    validation sees it: its config definition. It runs only in Java tasks."""

    runtime: JavaRuntime
    java_class: str
    java_version: str | None

    def config(self) -> ConfigDef:
        return self.runtime.config_def(self.java_class, self.java_version)

    def version(self) -> str:
        return self.java_version or "undefined"


P = TypeVar("P", JavaConnector, JavaPlugin)


def _standing_for(
    base: type[P], runtime: JavaRuntime, class_name: str, version: str | None, *more: type[Any]
) -> type[P]:
    """A Python class standing for Java class ``class_name`` at ``version``."""
    simple = class_name.rpartition(".")[2]
    namespace = {"runtime": runtime, "java_class": class_name, "java_version": version, "__qualname__": simple}
    return type(simple, (base, *more), namespace)


def java_connector_class(runtime: JavaRuntime, class_name: str, version: str | None, kind: str) -> type[JavaConnector]:
    """A Python class standing for Java connector ``class_name`` at ``version``."""
    return _standing_for(
        JavaConnector, runtime, class_name, version, SinkConnector if kind == "sink" else SourceConnector
    )
