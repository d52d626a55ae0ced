"""Plugin discovery and class-name resolution (``runtime.isolation.Plugins`` in Kafka).

Plugins come from installed packages' entry points (``sluice.connectors``,
``sluice.converters``, ``sluice.header_converters``, ``sluice.transforms``,
``sluice.predicates``) — Sluice registers its built-ins the same way — and from
the Python modules and packages found directly inside the ``plugin.path``
directories. A class name resolves, in order, from: the exact name (a Python
path, or Kafka's class name for a built-in), a unique alias (simple name or the
simple name without its type suffix), or any importable Python path.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import logging
import pkgutil
import sys
from dataclasses import dataclass
from pathlib import Path

from sluice.api.connector import Connector
from sluice.api.converter import Converter, HeaderConverter
from sluice.api.errors import ConnectError
from sluice.api.sink import SinkConnector
from sluice.api.source import SourceConnector
from sluice.api.transforms import Predicate, Transformation

log = logging.getLogger(__name__)

__all__ = ["PluginDesc", "Plugins", "UnknownPluginError"]

ENTRY_POINT_GROUPS = {
    "sluice.connectors": "connector",
    "sluice.converters": "converter",
    "sluice.header_converters": "header_converter",
    "sluice.transforms": "transformation",
    "sluice.predicates": "predicate",
}

# Kafka's class names for the built-ins, so configs written for Kafka Connect work as is.
KAFKA_CLASS_NAMES = {
    "sluice.connectors.file.source.FileStreamSourceConnector": "org.apache.kafka.connect.file.FileStreamSourceConnector",
    "sluice.connectors.file.sink.FileStreamSinkConnector": "org.apache.kafka.connect.file.FileStreamSinkConnector",
    "sluice.converters.string.StringConverter": "org.apache.kafka.connect.storage.StringConverter",
    "sluice.converters.bytearray.ByteArrayConverter": "org.apache.kafka.connect.converters.ByteArrayConverter",
    "sluice.converters.json.JsonConverter": "org.apache.kafka.connect.json.JsonConverter",
    "sluice.converters.simple_header.SimpleHeaderConverter": "org.apache.kafka.connect.storage.SimpleHeaderConverter",
}

_SUFFIXES = {
    "source": "Connector",
    "sink": "Connector",
    "converter": "Converter",
    "header_converter": "HeaderConverter",
    "transformation": "Transformation",
    "predicate": "Predicate",
}


class UnknownPluginError(ConnectError):
    """No plugin matches a class name or alias."""


@dataclass(frozen=True)
class PluginDesc:
    """A discovered plugin. ``class_name`` is what REST shows; ``python_path`` loads it."""

    class_name: str
    python_path: str
    type: str  # source, sink, converter, header_converter, transformation, predicate
    version: str | None
    cls: type


def python_path(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def plugin_type(cls: type) -> str | None:
    if not inspect.isclass(cls) or inspect.isabstract(cls):
        return None
    if issubclass(cls, SourceConnector):
        return "source"
    if issubclass(cls, SinkConnector):
        return "sink"
    if issubclass(cls, HeaderConverter):
        return "header_converter"
    if issubclass(cls, Converter):
        return "converter"
    if issubclass(cls, Transformation):
        return "transformation"
    if issubclass(cls, Predicate):
        return "predicate"
    return None


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


class Plugins:
    """The plugins this worker knows, computed once at start-up."""

    def __init__(self, plugin_path: list[str] | None = None) -> None:
        self.plugin_path = [str(Path(p).resolve()) for p in (plugin_path or []) if p]
        self._by_name: dict[str, PluginDesc] = {}
        self._aliases: dict[str, PluginDesc | None] = {}
        self.load_errors: list[tuple[str, str]] = []
        self._discover()

    # -- discovery -----------------------------------------------------------------

    def _discover(self) -> None:
        for group in ENTRY_POINT_GROUPS:
            for ep in importlib.metadata.entry_points(group=group):
                try:
                    self._register(ep.load())
                except Exception as exc:  # a broken plugin is reported, never fatal
                    log.warning("Could not load plugin %s from entry point group %s: %s", ep.value, group, exc)
                    self.load_errors.append((ep.value, str(exc)))
        for directory in self.plugin_path:
            if directory not in sys.path:
                sys.path.append(directory)
            for module_info in pkgutil.iter_modules([directory]):
                try:
                    module = importlib.import_module(module_info.name)
                except Exception as exc:
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
            if own and plugin_type(value):
                found.append(value)
        return found

    def _register(self, cls: type) -> None:
        kind = plugin_type(cls)
        if kind is None:
            return
        path = python_path(cls)
        class_name = KAFKA_CLASS_NAMES.get(path, path)
        if class_name in self._by_name:
            return
        desc = PluginDesc(class_name, path, kind, _version(cls), cls)
        self._by_name[class_name] = desc
        self._by_name[path] = desc
        simple = cls.__name__
        suffix = _SUFFIXES[kind]
        aliases = {simple}
        cut = simple.rfind(suffix)
        if cut > 0:
            aliases.add(simple[:cut])
        for alias in aliases:
            if alias in self._aliases and self._aliases[alias] is not desc:
                self._aliases[alias] = None  # ambiguous across all plugin types: dropped
            else:
                self._aliases[alias] = desc

    # -- queries -------------------------------------------------------------------

    def all(self) -> list[PluginDesc]:
        return sorted({d.class_name: d for d in self._by_name.values()}.values(), key=lambda d: d.class_name)

    def connectors(self) -> list[PluginDesc]:
        return [d for d in self.all() if d.type in ("source", "sink")]

    def resolve(self, name: str, kinds: tuple[str, ...]) -> PluginDesc:
        """The plugin of one of ``kinds`` that ``name`` designates."""
        name = name.strip()
        desc = self._by_name.get(name)
        if desc is None:
            alias = self._aliases.get(name)
            desc = alias
        if desc is None and "." in name:
            desc = self._load_python_path(name)
        if desc is None or desc.type not in kinds:
            raise UnknownPluginError(self._unknown_message(name, kinds))
        return desc

    def resolve_connector(self, name: str) -> PluginDesc:
        return self.resolve(name, ("source", "sink"))

    def _load_python_path(self, name: str) -> PluginDesc | None:
        module_name, _, attr = name.rpartition(".")
        try:
            cls = getattr(importlib.import_module(module_name), attr)
        except Exception:
            return None
        kind = plugin_type(cls)
        if kind is None:
            return None
        desc = PluginDesc(name, python_path(cls), kind, _version(cls), cls)
        self._by_name.setdefault(name, desc)
        return desc

    def _unknown_message(self, name: str, kinds: tuple[str, ...]) -> str:
        if "source" in kinds or "sink" in kinds:
            available = ", ".join(d.class_name for d in self.connectors())
            return (
                f"Failed to find any class that implements Connector and which name matches {name}, "
                f"available connectors are: {available}"
            )
        return f"Failed to find any class that implements {'/'.join(kinds)} and which name matches {name}"
