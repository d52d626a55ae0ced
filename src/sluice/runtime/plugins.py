"""Plugin discovery and class-name resolution (``runtime.isolation.Plugins`` in Kafka).

Plugins come from installed packages' entry points (``sluice.connectors``,
``sluice.converters``, ``sluice.header_converters``, ``sluice.transforms``,
``sluice.predicates``) — Sluice registers its built-ins the same way — and from
the Python modules and packages found directly inside the ``plugin.path``
directories. A class name resolves, in order, from: the exact name (a Python
path, or Kafka's class name for a built-in), a unique alias (simple name or the
simple name without its type suffix), or any importable Python path.

Java plugins — Kafka Connect's own, in jars on ``plugin.path`` — come from Kafka's plugin
scan in the driver's JVM (:mod:`sluice.runtime.java_plugins`), with every installed version
of each. A name both a Sluice built-in and a Java plugin carry (Kafka's
``FileStreamSourceConnector`` is both) resolves to the built-in unless a version
requirement (``connector.plugin.version`` and the other ``*.plugin.version`` keys) only the
Java plugin meets: installing a jar never moves running connectors to another runtime, and
either can be picked by its version. Among Java versions, the latest that meets the
requirement wins, as in Kafka.

Tasks are not plugins, but the built-in connectors' tasks are named as in Kafka Connect
in task configs (``task.class``): :func:`task_class_name` gives that name and
:func:`task_python_path` turns it back into the Python path that loads the task.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.metadata
import inspect
import logging
import pkgutil
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sluice.api.connector import Connector
from sluice.api.converter import Converter, HeaderConverter
from sluice.api.errors import ConnectError
from sluice.api.sink import SinkConnector
from sluice.api.source import SourceConnector
from sluice.api.transforms import Predicate, Transformation
from sluice.runtime.plugin_versions import VersionRange, sort_key

log = logging.getLogger(__name__)

__all__ = ["PluginDesc", "Plugins", "UnknownPluginError", "task_class_name", "task_python_path"]

ENTRY_POINT_GROUPS = {
    "sluice.connectors": "connector",
    "sluice.converters": "converter",
    "sluice.header_converters": "header_converter",
    "sluice.transforms": "transformation",
    "sluice.predicates": "predicate",
}

# Kafka's class names for the built-ins, so configs written for Kafka Connect work as is.
KAFKA_CLASS_NAMES = {
    # Apache Kafka's transforms and predicates (sluice.transforms)
    "sluice.transforms.cast.CastKey": "org.apache.kafka.connect.transforms.Cast$Key",
    "sluice.transforms.cast.CastValue": "org.apache.kafka.connect.transforms.Cast$Value",
    "sluice.transforms.extract_field.ExtractFieldKey": "org.apache.kafka.connect.transforms.ExtractField$Key",
    "sluice.transforms.extract_field.ExtractFieldValue": "org.apache.kafka.connect.transforms.ExtractField$Value",
    "sluice.transforms.flatten.FlattenKey": "org.apache.kafka.connect.transforms.Flatten$Key",
    "sluice.transforms.flatten.FlattenValue": "org.apache.kafka.connect.transforms.Flatten$Value",
    "sluice.transforms.hoist_field.HoistFieldKey": "org.apache.kafka.connect.transforms.HoistField$Key",
    "sluice.transforms.hoist_field.HoistFieldValue": "org.apache.kafka.connect.transforms.HoistField$Value",
    "sluice.transforms.insert_field.InsertFieldKey": "org.apache.kafka.connect.transforms.InsertField$Key",
    "sluice.transforms.insert_field.InsertFieldValue": "org.apache.kafka.connect.transforms.InsertField$Value",
    "sluice.transforms.mask_field.MaskFieldKey": "org.apache.kafka.connect.transforms.MaskField$Key",
    "sluice.transforms.mask_field.MaskFieldValue": "org.apache.kafka.connect.transforms.MaskField$Value",
    "sluice.transforms.replace_field.ReplaceFieldKey": "org.apache.kafka.connect.transforms.ReplaceField$Key",
    "sluice.transforms.replace_field.ReplaceFieldValue": "org.apache.kafka.connect.transforms.ReplaceField$Value",
    "sluice.transforms.set_schema_metadata.SetSchemaMetadataKey": (
        "org.apache.kafka.connect.transforms.SetSchemaMetadata$Key"
    ),
    "sluice.transforms.set_schema_metadata.SetSchemaMetadataValue": (
        "org.apache.kafka.connect.transforms.SetSchemaMetadata$Value"
    ),
    "sluice.transforms.timestamp_converter.TimestampConverterKey": (
        "org.apache.kafka.connect.transforms.TimestampConverter$Key"
    ),
    "sluice.transforms.timestamp_converter.TimestampConverterValue": (
        "org.apache.kafka.connect.transforms.TimestampConverter$Value"
    ),
    "sluice.transforms.value_to_key.ValueToKey": "org.apache.kafka.connect.transforms.ValueToKey",
    "sluice.transforms.drop_headers.DropHeaders": "org.apache.kafka.connect.transforms.DropHeaders",
    "sluice.transforms.filter.Filter": "org.apache.kafka.connect.transforms.Filter",
    "sluice.transforms.header_from.HeaderFromKey": "org.apache.kafka.connect.transforms.HeaderFrom$Key",
    "sluice.transforms.header_from.HeaderFromValue": "org.apache.kafka.connect.transforms.HeaderFrom$Value",
    "sluice.transforms.insert_header.InsertHeader": "org.apache.kafka.connect.transforms.InsertHeader",
    "sluice.transforms.regex_router.RegexRouter": "org.apache.kafka.connect.transforms.RegexRouter",
    "sluice.transforms.timestamp_router.TimestampRouter": "org.apache.kafka.connect.transforms.TimestampRouter",
    "sluice.transforms.predicates.TopicNameMatches": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
    "sluice.transforms.predicates.HasHeaderKey": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
    "sluice.transforms.predicates.RecordIsTombstone": (
        "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone"
    ),
    "sluice.connectors.file.source.FileStreamSourceConnector": (
        "org.apache.kafka.connect.file.FileStreamSourceConnector"
    ),
    "sluice.connectors.file.sink.FileStreamSinkConnector": "org.apache.kafka.connect.file.FileStreamSinkConnector",
    "sluice.connectors.jdbc.sink.JdbcSinkConnector": "io.confluent.connect.jdbc.JdbcSinkConnector",
    "sluice.connectors.jdbc.source.JdbcSourceConnector": "io.confluent.connect.jdbc.JdbcSourceConnector",
    "sluice.connectors.storage.s3.S3SinkConnector": "io.confluent.connect.s3.S3SinkConnector",
    "sluice.connectors.storage.hdfs.HdfsSinkConnector": "io.confluent.connect.hdfs.HdfsSinkConnector",
    "sluice.connectors.elasticsearch.task.ElasticsearchSinkConnector": (
        "io.confluent.connect.elasticsearch.ElasticsearchSinkConnector"
    ),
    "sluice.connectors.replicator.connector.ReplicatorSourceConnector": (
        "io.confluent.connect.replicator.ReplicatorSourceConnector"
    ),
    "sluice.converters.string.StringConverter": "org.apache.kafka.connect.storage.StringConverter",
    "sluice.converters.bytearray.ByteArrayConverter": "org.apache.kafka.connect.converters.ByteArrayConverter",
    "sluice.converters.json.JsonConverter": "org.apache.kafka.connect.json.JsonConverter",
    "sluice.converters.avro.AvroConverter": "io.confluent.connect.avro.AvroConverter",
    "sluice.converters.simple_header.SimpleHeaderConverter": "org.apache.kafka.connect.storage.SimpleHeaderConverter",
    "sluice.converters.number.ShortConverter": "org.apache.kafka.connect.converters.ShortConverter",
    "sluice.converters.number.IntegerConverter": "org.apache.kafka.connect.converters.IntegerConverter",
    "sluice.converters.number.LongConverter": "org.apache.kafka.connect.converters.LongConverter",
    "sluice.converters.number.FloatConverter": "org.apache.kafka.connect.converters.FloatConverter",
    "sluice.converters.number.DoubleConverter": "org.apache.kafka.connect.converters.DoubleConverter",
    "sluice.connectors.testing.verifiable_source.VerifiableSourceConnector": (
        "org.apache.kafka.connect.tools.VerifiableSourceConnector"
    ),
    "sluice.connectors.testing.verifiable_sink.VerifiableSinkConnector": (
        "org.apache.kafka.connect.tools.VerifiableSinkConnector"
    ),
    "sluice.connectors.testing.mock.MockSourceConnector": "org.apache.kafka.connect.tools.MockSourceConnector",
    "sluice.connectors.testing.mock.MockSinkConnector": "org.apache.kafka.connect.tools.MockSinkConnector",
}

# The task classes of the built-in connectors under Kafka's (or Confluent's) names, as
# Kafka Connect writes them into task configs (``task.class``). Tasks are not plugins
# (nothing lists or resolves them by alias); only the worker translates these names.
KAFKA_TASK_CLASS_NAMES = {
    "sluice.connectors.file.source.FileStreamSourceTask": "org.apache.kafka.connect.file.FileStreamSourceTask",
    "sluice.connectors.file.sink.FileStreamSinkTask": "org.apache.kafka.connect.file.FileStreamSinkTask",
    "sluice.connectors.jdbc.source.JdbcSourceTask": "io.confluent.connect.jdbc.source.JdbcSourceTask",
    "sluice.connectors.jdbc.sink.JdbcSinkTask": "io.confluent.connect.jdbc.sink.JdbcSinkTask",
    "sluice.connectors.replicator.task.ReplicatorSourceTask": "io.confluent.connect.replicator.ReplicatorSourceTask",
    "sluice.connectors.testing.verifiable_source.VerifiableSourceTask": (
        "org.apache.kafka.connect.tools.VerifiableSourceTask"
    ),
    "sluice.connectors.testing.verifiable_sink.VerifiableSinkTask": "org.apache.kafka.connect.tools.VerifiableSinkTask",
    "sluice.connectors.testing.mock.MockSourceTask": "org.apache.kafka.connect.tools.MockSourceTask",
    "sluice.connectors.testing.mock.MockSinkTask": "org.apache.kafka.connect.tools.MockSinkTask",
}
_TASK_PYTHON_PATHS = {kafka: path for path, kafka in KAFKA_TASK_CLASS_NAMES.items()}

# Further class names a built-in answers to, by exact name only (they are neither listed nor
# aliases): Confluent's Replicator names its byte-array converter apart from Kafka's, and
# Replicator configs name it for keys, values and headers.
OTHER_CLASS_NAMES = {
    "sluice.converters.bytearray.ByteArrayConverter": ("io.confluent.connect.replicator.util.ByteArrayConverter",),
}

# Kafka's test connectors (its connect-runtime "tools"): usable by name, but left out of
# the plugin listing, as Kafka's ConnectorPluginsResource leaves them out.
UNLISTED_CLASS_NAMES = frozenset(
    {
        "org.apache.kafka.connect.tools.VerifiableSourceConnector",
        "org.apache.kafka.connect.tools.VerifiableSinkConnector",
        "org.apache.kafka.connect.tools.MockSourceConnector",
        "org.apache.kafka.connect.tools.MockSinkConnector",
        "org.apache.kafka.connect.tools.SchemaSourceConnector",
    }
)

_SUFFIXES = {
    "source": "Connector",
    "sink": "Connector",
    "converter": "Converter",
    "header_converter": "HeaderConverter",
    "transformation": "Transformation",
    "predicate": "Predicate",
}


def _aliases(simple: str, kinds: list[str] | tuple[str, ...]) -> set[str]:
    """The aliases Kafka accepts for a plugin: its simple name, and that name without its
    type's suffix (``FileStreamSource`` for ``FileStreamSourceConnector``)."""
    aliases = {simple}
    for kind in kinds:
        cut = simple.rfind(_SUFFIXES[kind])
        if cut > 0:
            aliases.add(simple[:cut])
    return aliases


def _version_key(version: str | None) -> Any:
    return sort_key(version or "")


class UnknownPluginError(ConnectError):
    """No plugin matches a class name or alias."""


@dataclass(frozen=True)
class PluginDesc:
    """A discovered plugin. ``class_name`` is what REST shows; ``python_path`` loads it."""

    class_name: str
    python_path: str
    type: str  # source, sink, converter, header_converter, transformation, predicate
    version: str | None
    cls: builtins.type[Any]


def python_path(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def task_class_name(cls: type) -> str:
    """The ``task.class`` of a task config: Kafka's (or Confluent's) class name for a
    built-in connector's task, the Python path for any other task."""
    path = python_path(cls)
    return KAFKA_TASK_CLASS_NAMES.get(path, path)


def task_python_path(name: str) -> str:
    """The Python path that loads the task a ``task.class`` names. Kafka's names of the
    built-ins' tasks translate; anything else (a Python plugin's task, or a built-in's task
    config written by an earlier Sluice, which stored Python paths) is already one."""
    return _TASK_PYTHON_PATHS.get(name, name)


def plugin_types(cls: type) -> list[str]:
    """Every plugin type a class implements (a converter is often a header converter too)."""
    if not inspect.isclass(cls) or inspect.isabstract(cls):
        return []
    kinds = []
    if issubclass(cls, SourceConnector):
        kinds.append("source")
    if issubclass(cls, SinkConnector):
        kinds.append("sink")
    if issubclass(cls, Converter):
        kinds.append("converter")
    if issubclass(cls, HeaderConverter):
        kinds.append("header_converter")
    if issubclass(cls, Transformation):
        kinds.append("transformation")
    if issubclass(cls, Predicate):
        kinds.append("predicate")
    return kinds


def _version(cls: type) -> str | None:
    try:
        if issubclass(cls, Connector):
            version = cls().version()
            return None if version in (None, "undefined") else str(version)
    except Exception:
        log.debug("Could not read the version of %s", cls, exc_info=True)
    module_root = cls.__module__.split(".")[0]
    try:
        return importlib.metadata.version(module_root)
    except importlib.metadata.PackageNotFoundError:
        return None


def resolved_plugin_path(plugin_path: list[str] | None) -> list[str]:
    """``plugin.path``'s directories as absolute paths, empty entries left out."""
    return [str(Path(p).resolve()) for p in (plugin_path or []) if p]


class JavaPluginSource(Protocol):
    """Where Java plugins come from (:class:`sluice.runtime.java_plugins.JavaRuntime`)."""

    def java_descs(self) -> list[PluginDesc]: ...


class Plugins:
    """The plugins this worker knows, computed once at start-up (Java plugins on first use:
    their scan runs in the Spark driver's JVM)."""

    def __init__(self, plugin_path: list[str] | None = None, java: JavaPluginSource | None = None) -> None:
        self.plugin_path = resolved_plugin_path(plugin_path)
        self._by_name: dict[str, dict[str, PluginDesc]] = {}  # name -> type -> plugin
        self._aliases: dict[str, dict[str, PluginDesc] | None] = {}  # None: ambiguous
        self.load_errors: list[tuple[str, str]] = []
        self._task_versions: dict[str, str | None] = {}
        self.java = java
        self._java: dict[str, list[PluginDesc]] | None = None  # class name -> every version and type
        self._java_lock = threading.Lock()
        self._discover()

    def load_java(self) -> None:
        """Read the Java plugins now (Kafka's scan of plugin.path, in the driver's JVM: a
        few seconds), instead of on the first lookup that needs them."""
        self._java_plugins()

    def _java_plugins(self) -> dict[str, list[PluginDesc]]:
        """Java plugins by class name and unique alias, each name's oldest version first;
        loaded on first use."""
        if self.java is None:
            return {}
        with self._java_lock:
            if self._java is None:
                by_name: dict[str, list[PluginDesc]] = {}
                by_alias: dict[str, set[str]] = {}
                for desc in sorted(self.java.java_descs(), key=lambda d: _version_key(d.version)):
                    by_name.setdefault(desc.class_name, []).append(desc)
                    for alias in _aliases(desc.class_name.rpartition(".")[2], (desc.type,)):
                        by_alias.setdefault(alias, set()).add(desc.class_name)
                for alias, names in by_alias.items():
                    if len(names) == 1 and alias not in by_name:  # claimed by two classes: dropped
                        by_name[alias] = by_name[next(iter(names))]
                self._java = by_name
            return self._java

    # -- discovery -----------------------------------------------------------------

    def _discover(self) -> None:
        for group in ENTRY_POINT_GROUPS:
            for ep in importlib.metadata.entry_points(group=group):
                try:
                    self._register(ep.load())
                except Exception as exc:  # noqa: BLE001 - a broken plugin is reported, never fatal
                    log.warning("Could not load plugin %s from entry point group %s: %s", ep.value, group, exc)
                    self.load_errors.append((ep.value, str(exc)))
        for directory in self.plugin_path:
            if directory not in sys.path:
                sys.path.append(directory)
            for module_info in pkgutil.iter_modules([directory]):
                try:
                    module = importlib.import_module(module_info.name)
                except Exception as exc:  # noqa: BLE001 - a broken plugin module is reported, never fatal
                    log.warning("Could not import plugin module %s from %s: %s", module_info.name, directory, exc)
                    self.load_errors.append((module_info.name, str(exc)))
                    continue
                for cls in self._classes_in(module, module_info.ispkg):
                    self._register(cls)

    @staticmethod
    def _classes_in(module: object, is_package: bool) -> list[type]:
        name = module.__name__  # type: ignore[attr-defined]
        found = []
        for _, value in inspect.getmembers(module, inspect.isclass):
            own = value.__module__ == name or (is_package and value.__module__.startswith(name + "."))
            if own and plugin_types(value):
                found.append(value)
        return found

    def _register(self, cls: type) -> None:
        kinds = plugin_types(cls)
        if not kinds:
            return
        path = python_path(cls)
        class_name = KAFKA_CLASS_NAMES.get(path, path)
        if class_name in self._by_name:
            return
        version = _version(cls)
        descs = {kind: PluginDesc(class_name, path, kind, version, cls) for kind in kinds}
        self._by_name[class_name] = descs
        self._by_name[path] = descs
        for other in OTHER_CLASS_NAMES.get(path, ()):
            self._by_name.setdefault(other, descs)
        for alias in _aliases(cls.__name__, kinds):
            if alias in self._aliases and self._aliases[alias] is not descs:
                self._aliases[alias] = None  # claimed by two classes: dropped, as in Kafka
            else:
                self._aliases[alias] = descs

    # -- queries -------------------------------------------------------------------

    def all(self) -> list[PluginDesc]:
        """Every listed plugin (not the test connectors of :data:`UNLISTED_CLASS_NAMES`),
        each version of a Java plugin apart."""
        unique = {
            (d.class_name, d.type, d.version): d
            for descs in self._by_name.values()
            for d in descs.values()
            if d.class_name not in UNLISTED_CLASS_NAMES
        }
        for java in self._java_plugins().values():
            for d in java:
                if d.class_name not in UNLISTED_CLASS_NAMES:
                    unique.setdefault((d.class_name, d.type, d.version), d)
        return sorted(unique.values(), key=lambda d: (d.class_name, d.type, d.version or ""))

    def connectors(self) -> list[PluginDesc]:
        return [d for d in self.all() if d.type in ("source", "sink")]

    def resolve(self, name: str, kinds: tuple[str, ...], version: str | None = None) -> PluginDesc:
        """The plugin of one of ``kinds`` that ``name`` designates; with ``version`` (a
        ``*.plugin.version`` requirement) the latest one that meets it, else the
        built-in or Python plugin, else the latest Java one. Raises
        :class:`UnknownPluginError` when none does (:meth:`versions` says which there are)."""
        name = name.strip()
        if version is None or not version.strip():
            python = self._resolve_python(name, kinds)
            if python is not None:
                return python
            java = self._java_candidates(name, kinds)
            if java:
                return java[-1]
            raise UnknownPluginError(self._unknown_message(name, kinds))
        try:
            wanted = VersionRange(version)
        except ValueError as exc:
            raise UnknownPluginError(f"Invalid version requirement {version!r} for {name}: {exc}") from None
        candidates = self._candidates(name, kinds)
        if not candidates:
            raise UnknownPluginError(self._unknown_message(name, kinds))
        meeting = [d for d in candidates if d.version is not None and wanted.contains(d.version)]
        if not meeting:
            shown = ", ".join(d.version or "undefined" for d in candidates)
            raise UnknownPluginError(
                f"Plugin {candidates[0].class_name} not found that matches the version range {wanted}, "
                f"available versions: [{shown}]"
            )
        return max(meeting, key=lambda d: _version_key(d.version))

    def versions(self, name: str, kinds: tuple[str, ...]) -> list[str]:
        """Every installed version of the plugin ``name`` designates."""
        return [d.version or "undefined" for d in self._candidates(name.strip(), kinds)]

    def _candidates(self, name: str, kinds: tuple[str, ...]) -> list[PluginDesc]:
        """Every plugin ``name`` designates: the Python one (a built-in, say) first, then
        the Java ones of its class name, oldest version first."""
        python = self._resolve_python(name, kinds)
        if python is None:
            return self._java_candidates(name, kinds)
        return [python, *self._java_candidates(python.class_name, kinds)]

    def _resolve_python(self, name: str, kinds: tuple[str, ...]) -> PluginDesc | None:
        descs = self._by_name.get(name) or self._aliases.get(name)
        if descs is None and "." in name:
            descs = self._load_python_path(name)
        for kind in kinds:
            if descs and kind in descs:
                return descs[kind]
        return None

    def _java_candidates(self, name: str, kinds: tuple[str, ...]) -> list[PluginDesc]:
        """Java plugins of ``kinds`` named ``name``, oldest version first."""
        return [d for d in self._java_plugins().get(name, []) if d.type in kinds]

    def resolve_connector(self, name: str, version: str | None = None) -> PluginDesc:
        return self.resolve(name, ("source", "sink"), version)

    def resolve_connector_of(self, config: Mapping[str, Any]) -> PluginDesc:
        """The connector a connector config names, at its ``connector.plugin.version``."""
        version = config.get("connector.plugin.version")
        return self.resolve_connector(str(config.get("connector.class") or ""), str(version) if version else None)

    def task_version(self, task_class: str) -> str | None:
        """What ``version()`` of a task of class ``task_class`` (a ``task.class``) returns,
        the version Kafka's worker records with the task's statuses (``WorkerTask``
        reads it from the task instance). Sluice's task instances live in the Spark
        executors, so the driver asks an instance of its own, once per class. ``None``
        when the class cannot be loaded or instantiated here, or ``version()`` fails."""
        path = task_python_path(task_class)
        if path not in self._task_versions:
            module_name, _, attr = path.rpartition(".")
            try:
                version = getattr(importlib.import_module(module_name), attr)().version()
            except Exception:
                log.debug("Could not read the version of task class %s", task_class, exc_info=True)
                return None  # not remembered: the task fails to start anyway
            self._task_versions[path] = None if version is None else str(version)
        return self._task_versions[path]

    def _load_python_path(self, name: str) -> dict[str, PluginDesc] | None:
        module_name, _, attr = name.rpartition(".")
        try:
            cls = getattr(importlib.import_module(module_name), attr)
        except Exception:  # noqa: BLE001 - importing the named module runs its code: anything means no such plugin
            return None
        kinds = plugin_types(cls)
        if not kinds:
            return None
        descs = {kind: PluginDesc(name, python_path(cls), kind, _version(cls), cls) for kind in kinds}
        self._by_name.setdefault(name, descs)
        return descs

    def _unknown_message(self, name: str, kinds: tuple[str, ...]) -> str:
        if "source" in kinds or "sink" in kinds:
            available = ", ".join(d.class_name for d in self.connectors())
            return (
                f"Failed to find any class that implements Connector and which name matches {name}, "
                f"available connectors are: {available}"
            )
        return f"Failed to find any class that implements {'/'.join(kinds)} and which name matches {name}"
