"""Recommenders, validators and lookups of connector config keys that consult the
installed plugins: which classes of a type exist, which version of a named plugin is
installed, whether a class is a plugin of the type a key takes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sluice.api.config import LambdaValidator, Recommender
from sluice.api.errors import ConfigError
from sluice.runtime.plugins import PluginDesc, Plugins, UnknownPluginError

__all__ = [
    "PLUGIN_KINDS",
    "PluginClassRecommender",
    "PluginVersionRecommender",
    "implements_plugin",
    "installed_version",
    "resolve_class_name",
]

PLUGIN_KINDS = ("source", "sink", "converter", "header_converter", "transformation", "predicate")
_INTERFACES = {
    "converter": "Converter",
    "header_converter": "HeaderConverter",
    "transformation": "Transformation",
    "predicate": "Predicate",
}


class PluginClassRecommender(Recommender):
    """Recommends every installed plugin class of one type (sorted, as Kafka lists them)."""

    def __init__(self, plugins: Plugins | None, kind: str) -> None:
        self.plugins, self.kind = plugins, kind

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]:
        if self.plugins is None:
            return []
        return sorted({d.class_name for d in self.plugins.all() if d.type == self.kind})


class PluginVersionRecommender(Recommender):
    """Recommends the installed version of the plugin named by another key. With
    ``needs_class`` (the converters, as in Kafka) the version key is visible only while
    that key names a class that exists."""

    def __init__(
        self, plugins: Plugins | None, class_key: str, kinds: tuple[str, ...], needs_class: bool = False
    ) -> None:
        self.plugins, self.class_key, self.kinds, self.needs_class = plugins, class_key, kinds, needs_class

    def _plugin(self, parsed: Mapping[str, Any]) -> PluginDesc | None:
        name = parsed.get(self.class_key)
        if self.plugins is None or not name:
            return None
        try:
            return self.plugins.resolve(str(name), self.kinds)
        except UnknownPluginError:
            return None

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]:
        plugin = self._plugin(parsed)
        return [plugin.version] if plugin is not None and plugin.version is not None else []

    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool:
        return not self.needs_class or parsed.get(self.class_key) is not None


def implements_plugin(plugins: Plugins | None, kind: str) -> LambdaValidator:
    """The class must be a plugin of ``kind`` (Kafka: a concrete subclass of the interface
    with a public no-argument constructor)."""
    interface = _INTERFACES[kind]

    def check(name: str, value: Any) -> None:
        if value is None or plugins is None:
            return
        try:
            plugins.resolve(str(value), (kind,))
        except Exception as exc:
            raise ConfigError(f"Class class {value} does not implement the {interface} interface") from exc

    return LambdaValidator.with_(check, f"a concrete {interface} class with a no-argument constructor")


def resolve_class_name(plugins: Plugins) -> Callable[[str], str]:
    """A :data:`~sluice.api.config.ClassResolver` over the installed plugins: a Kafka class
    name, alias or Python path becomes the plugin's class name."""

    def resolve(name: str) -> str:
        return plugins.resolve(name, PLUGIN_KINDS).class_name

    return resolve


def installed_version(plugins: Plugins | None, name: str | None, kinds: tuple[str, ...]) -> str | None:
    """The version of the installed plugin ``name`` names (none when no plugin of ``kinds`` has that name)."""
    if plugins is None or not name:
        return None
    try:
        return plugins.resolve(str(name), kinds).version
    except UnknownPluginError:
        return None
