"""The keys of each ``transforms.<alias>.*`` and ``predicates.<alias>.*`` alias of a
connector config (Kafka's ``ConnectorConfig.enrich``): its ``type`` and
``plugin.version`` keys, then the keys the named plugin defines.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sluice.api.config import NO_DEFAULT, ConfigDef, ConfigType, Importance, LambdaValidator, Width, parse_type
from sluice.api.errors import ConfigError, ConnectError
from sluice.runtime.config.installed_plugins import PluginClassRecommender, PluginVersionRecommender
from sluice.runtime.config.keys import (
    PLUGIN_VERSION_SUFFIX,
    PREDICATES_CONFIG,
    PREDICATES_GROUP,
    TRANSFORMS_CONFIG,
    TRANSFORMS_GROUP,
)
from sluice.runtime.config.versions import PLUGIN_VERSION_VALIDATOR, default_version
from sluice.runtime.plugins import PluginDesc, Plugins, UnknownPluginError

__all__ = ["NEGATE_CONFIG", "PREDICATE_CONFIG", "enrich"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _AliasFamily:
    list_key: str
    group: str
    kind: str
    interface: str


_TRANSFORMS = _AliasFamily(TRANSFORMS_CONFIG, TRANSFORMS_GROUP, "transformation", "Transformation")
_PREDICATES = _AliasFamily(PREDICATES_CONFIG, PREDICATES_GROUP, "predicate", "Predicate")

PREDICATE_CONFIG = "predicate"
NEGATE_CONFIG = "negate"


def _aliases(props: Mapping[str, Any], key: str) -> list[str]:
    try:
        value = parse_type(key, props.get(key), ConfigType.LIST)
    except ConfigError:
        return []
    return list(dict.fromkeys(value)) if isinstance(value, list) else []


def _plugin_config_def(plugin: PluginDesc) -> ConfigDef:
    config_def = plugin.cls().config()
    if config_def is None:
        raise ConnectError(f"{plugin.class_name}.config() must return a ConfigDef that is not null.")
    return config_def


def _enrich_family(d: ConfigDef, props: Mapping[str, Any], plugins: Plugins, family: _AliasFamily) -> None:
    for alias in _aliases(props, family.list_key):
        prefix = f"{family.list_key}.{alias}."
        group = f"{family.group}: {alias}"
        type_key = prefix + "type"
        plugin = _resolve_alias_plugin(plugins, props.get(type_key), family.kind)

        def check_type(name: str, value: Any, prefix: str = prefix) -> None:
            if family is _TRANSFORMS:
                negate, predicate = prefix + NEGATE_CONFIG, prefix + PREDICATE_CONFIG
                if negate in props and predicate not in props:
                    raise ConfigError(
                        f"Config '{negate}' was provided but there is no config '{predicate}' "
                        "defining a predicate to be negated."
                    )
            if value is None:
                return
            try:
                found = plugins.resolve(str(value), (family.kind,))
            except Exception as exc:
                raise ConfigError(f"Class class {value} does not implement the {family.interface} interface") from exc
            try:
                _plugin_config_def(found)
            except Exception as exc:
                raise ConfigError(
                    name, value, f"Error getting config definition from {family.interface}: {exc}"
                ) from exc

        what = "transformation" if family is _TRANSFORMS else "predicate"
        d.define(
            type_key,
            ConfigType.CLASS,
            NO_DEFAULT,
            LambdaValidator.with_(check_type, f"valid configs for {alias} {what}"),
            Importance.HIGH,
            f"Class of the '{alias}' {what}: Kafka's class name or alias, or a Python path.",
            group,
            0,
            Width.LONG,
            f"{family.interface} type for {alias}",
            recommender=PluginClassRecommender(plugins, family.kind),
        )
        version = default_version(plugin.version if plugin else None)
        d.define(
            prefix + PLUGIN_VERSION_SUFFIX,
            ConfigType.STRING,
            version,
            PLUGIN_VERSION_VALIDATOR,
            Importance.HIGH,
            f"Which installed version of the '{alias}' {what} to use: a version, or a range such as "
            "[1.0,2.0). Defaults to the installed version.",
            group,
            1,
            Width.LONG,
            f"{family.interface} version for {alias}",
            recommender=PluginVersionRecommender(plugins, type_key, (family.kind,)),
        )
        if plugin is None:
            continue
        try:
            own = _plugin_config_def(plugin)
        except Exception:  # noqa: BLE001 - the plugin's own config() failed: reported on the type key by its validator
            continue  # reported on the type key by its validator
        child = ConfigDef()
        if family is _TRANSFORMS:
            child.define(
                PREDICATE_CONFIG,
                ConfigType.STRING,
                None,
                None,
                Importance.MEDIUM,
                "Alias of the predicate that decides, record by record, whether this transformation "
                "applies; without one it applies to every record.",
            )
            child.define(
                NEGATE_CONFIG,
                ConfigType.BOOLEAN,
                False,
                None,
                Importance.MEDIUM,
                "Apply the transformation to the records the predicate does not match instead.",
            )
        for key in own.config_keys().values():
            if family is _TRANSFORMS and key.name in (PREDICATE_CONFIG, NEGATE_CONFIG):
                log.warning("Transformation config %s is masked by the implicit config of that name", key.name)
                continue
            child.define_key(key)
        d.embed(prefix, group, 2, child)


def _resolve_alias_plugin(plugins: Plugins, name: Any, kind: str) -> PluginDesc | None:
    if not isinstance(name, str) or not name.strip():
        return None
    try:
        return plugins.resolve(name, (kind,))
    except UnknownPluginError:
        return None


def enrich(base: ConfigDef, props: Mapping[str, Any], plugins: Plugins) -> ConfigDef:
    """``base`` plus, for each alias listed in ``transforms`` and ``predicates``, its
    ``type`` and ``plugin.version`` keys and the keys the plugin defines (Kafka's
    ``ConnectorConfig.enrich``).

    The keys of alias ``a`` are in group ``Transforms: a`` (``Predicates: a``): ``type``
    (order 0), ``plugin.version`` (1), then, once ``type`` names a plugin of the right
    kind, the plugin's own keys with the prefix — for a transformation together with the
    implicit ``predicate`` and ``negate`` — sorted as :meth:`ConfigDef.sorted_configs`.
    """
    d = ConfigDef(base)
    _enrich_family(d, props, plugins, _TRANSFORMS)
    _enrich_family(d, props, plugins, _PREDICATES)
    return d
