"""Config providers and ``${provider:[path:]key}`` placeholders (spec 3.7).

Kafka's ``ConfigTransformer``, the provider set its ``Worker`` builds from
``config.providers``, and ``AbstractHerder.reverseTransform``, in one module:

* :meth:`ConfigProviders.from_worker_config` builds and configures one provider per name
  in ``config.providers``: class from ``config.providers.<name>.class``, settings from
  ``config.providers.<name>.param.*``.
* :meth:`ConfigProviders.transform` replaces each placeholder whose provider and key are
  known with the provider's value; any other placeholder stays as written.
* :func:`reverse_transform` puts the raw placeholder text back into task configs, so
  stores and REST never hold resolved values.

Resolved values are often secrets: nothing here logs them, and the results' ``repr``
leaves them out.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from sluice.api.config_provider import ConfigData, ConfigProvider
from sluice.api.errors import ConfigError, ConnectError

__all__ = [
    "BUILTIN_PROVIDERS",
    "CONFIG_PROVIDERS_CONFIG",
    "PLACEHOLDER_PATTERN",
    "ConfigProviders",
    "TransformResult",
    "has_placeholder",
    "keys_with_placeholders",
    "reverse_transform",
]

log = logging.getLogger(__name__)

CONFIG_PROVIDERS_CONFIG = "config.providers"

# Kafka's ConfigTransformer.DEFAULT_PATTERN: group 1 provider, group 3 path (optional), group 4 key.
PLACEHOLDER_PATTERN = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")

_KAFKA_PACKAGE = "org.apache.kafka.common.config.provider"

# Kafka's class name of each built-in -> where it lives in Sluice. The runtime layer may
# not import sluice.providers, so the built-ins are loaded by name like any other plugin.
BUILTIN_PROVIDERS: dict[str, str] = {
    f"{_KAFKA_PACKAGE}.FileConfigProvider": "sluice.providers.file.FileConfigProvider",
    f"{_KAFKA_PACKAGE}.DirectoryConfigProvider": "sluice.providers.directory.DirectoryConfigProvider",
    f"{_KAFKA_PACKAGE}.EnvVarConfigProvider": "sluice.providers.env_var.EnvVarConfigProvider",
}


def _builtin_names() -> dict[str, str]:
    """Every name that designates a built-in: Kafka's class name, the simple name, the
    simple name without ``ConfigProvider`` (Kafka's aliases) and Sluice's Python paths."""
    names: dict[str, str] = {}
    for kafka_name, python_path in BUILTIN_PROVIDERS.items():
        simple = kafka_name.rpartition(".")[2]
        package_path = "sluice.providers." + simple
        for name in (kafka_name, simple, simple.removesuffix("ConfigProvider"), python_path, package_path):
            names[name] = python_path
    return names


_BUILTIN_NAMES = _builtin_names()


def has_placeholder(value: str | None) -> bool:
    """Whether ``value`` contains a ``${provider:[path:]key}`` placeholder."""
    return isinstance(value, str) and PLACEHOLDER_PATTERN.search(value) is not None


def keys_with_placeholders(config: Mapping[str, str]) -> set[str]:
    """The keys of ``config`` whose values contain a placeholder."""
    return {key for key, value in config.items() if has_placeholder(value)}


def reverse_transform(
    raw_connector_config: Mapping[str, str], task_configs: list[dict[str, str]]
) -> list[dict[str, str]]:
    """``task_configs`` with the raw connector value put back for every key whose raw value
    holds a placeholder (``AbstractHerder.reverseTransform``).

    Task configs are built by a connector from its resolved config; the herder stores and
    shows them reverse-transformed so resolved secrets never reach the config store or REST.
    Keys a task config lacks are not added; other keys are kept as they are.
    """
    templated = keys_with_placeholders(raw_connector_config)
    return [
        {key: raw_connector_config[key] if key in templated else value for key, value in task_config.items()}
        for task_config in task_configs
    ]


def _placeholder_parts(match: re.Match[str]) -> tuple[str, str, str]:
    return match.group(1), match.group(3) or "", match.group(4)


@dataclass(frozen=True)
class TransformResult:
    """A transformed config and, for each path whose provider gave one, its TTL in
    milliseconds (``ConfigTransformerResult``; Kafka keys the TTLs by path alone)."""

    data: dict[str, str] = field(repr=False)
    ttls: dict[str, int] = field(default_factory=dict)


class ConfigProviders:
    """The worker's named config providers, and placeholder resolution with them.

    Built once per worker and shared: :meth:`transform` may run on several threads at
    once (providers must be thread-safe, as Kafka requires). :meth:`close` closes them all.
    """

    def __init__(self, providers: Mapping[str, ConfigProvider] | None = None) -> None:
        self._providers: dict[str, ConfigProvider] = dict(providers or {})

    @classmethod
    def from_worker_config(
        cls,
        raw: Mapping[str, str],
        resolve_class: Callable[[str], type] | None = None,
    ) -> ConfigProviders:
        """Build and configure the providers that the worker properties ``raw`` name.

        ``config.providers.<name>.class`` accepts Kafka's class names of the built-ins
        (``org.apache.kafka.common.config.provider.FileConfigProvider``), their simple names
        and aliases (``FileConfigProvider``, ``File``), or a Python path
        (``package.module.Class``) of a :class:`ConfigProvider` subclass. Python paths load
        with ``resolve_class`` when given (say, one that also searches ``plugin.path``),
        otherwise by importing the module. A name listed without a ``.class`` setting is
        skipped with a warning; its placeholders stay unresolved, as in Kafka.

        Raises :class:`ConfigError`, naming the provider, when a class cannot be loaded, is
        not a config provider, or fails to build or configure; providers already built are
        closed first.
        """
        names = [n.strip() for n in str(raw.get(CONFIG_PROVIDERS_CONFIG) or "").split(",") if n.strip()]
        providers: dict[str, ConfigProvider] = {}
        try:
            for name in dict.fromkeys(names):
                prefix = f"{CONFIG_PROVIDERS_CONFIG}.{name}"
                class_name = raw.get(f"{prefix}.class")
                if class_name is None or not str(class_name).strip():
                    log.warning(
                        "Config provider '%s' is listed in %s but %s.class is not set; ignoring it",
                        name,
                        CONFIG_PROVIDERS_CONFIG,
                        prefix,
                    )
                    continue
                params = {
                    key[len(prefix) + len(".param.") :]: str(value)
                    for key, value in raw.items()
                    if key.startswith(f"{prefix}.param.")
                }
                providers[name] = _new_provider(name, str(class_name).strip(), params, resolve_class)
                log.info("Config provider '%s' is %s", name, type(providers[name]).__qualname__)
        except BaseException:
            ConfigProviders(providers).close()
            raise
        return cls(providers)

    @property
    def names(self) -> list[str]:
        """The configured provider names, in configuration order."""
        return list(self._providers)

    def provider(self, name: str) -> ConfigProvider | None:
        return self._providers.get(name)

    def transform(self, config: Mapping[str, str]) -> dict[str, str]:
        """``config`` with every resolvable placeholder replaced by its value.

        A placeholder naming an unknown provider, or a key its provider does not have,
        stays as written; a value may hold several placeholders. Each provider is asked
        once per path, for all the keys the config wants there. Errors a provider raises
        (for example an unreadable file) propagate as :class:`ConnectError`.
        """
        return self.transform_with_ttls(config).data

    def transform_with_ttls(self, config: Mapping[str, str]) -> TransformResult:
        """:meth:`transform`, plus the TTLs providers reported (for scheduled reloads)."""
        wanted: dict[str, dict[str, set[str]]] = {}  # provider -> path -> keys
        for value in config.values():
            if isinstance(value, str):
                for match in PLACEHOLDER_PATTERN.finditer(value):
                    provider_name, path, key = _placeholder_parts(match)
                    wanted.setdefault(provider_name, {}).setdefault(path, set()).add(key)

        found: dict[tuple[str, str], dict[str, str]] = {}  # (provider, path) -> values
        ttls: dict[str, int] = {}
        for provider_name, keys_by_path in wanted.items():
            provider = self._providers.get(provider_name)
            if provider is None:
                log.debug("No config provider named '%s'; its placeholders stay unresolved", provider_name)
                continue
            for path, keys in keys_by_path.items():
                result = _lookup(provider_name, provider, path, keys)
                found[(provider_name, path)] = result.data
                if result.ttl is not None and result.ttl >= 0:
                    ttls[path] = result.ttl

        def substitute(match: re.Match[str]) -> str:
            provider_name, path, key = _placeholder_parts(match)
            return found.get((provider_name, path), {}).get(key, match.group(0))

        data = {
            key: PLACEHOLDER_PATTERN.sub(substitute, value) if isinstance(value, str) else value
            for key, value in config.items()
        }
        return TransformResult(data, ttls)

    reverse_transform = staticmethod(reverse_transform)

    def close(self) -> None:
        """Close every provider; a failure is logged and does not stop the others."""
        for name, provider in self._providers.items():
            try:
                provider.close()
            except Exception:
                log.warning("Failed to close config provider '%s'", name, exc_info=True)

    def __enter__(self) -> ConfigProviders:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _lookup(provider_name: str, provider: ConfigProvider, path: str, keys: set[str]) -> ConfigData:
    try:
        result = provider.get(path, set(keys))
    except ConnectError:
        raise
    except Exception as e:
        raise ConfigError(f"Config provider '{provider_name}' failed to read path '{path}': {e}") from e
    if not isinstance(result, ConfigData):
        raise ConfigError(
            f"Config provider '{provider_name}' returned {type(result).__name__} for path '{path}', not ConfigData"
        )
    return result


def _import_class(path: str) -> type:
    module_name, _, attr = path.rpartition(".")
    if not module_name:
        raise ImportError(f"'{path}' is neither a built-in config provider nor a Python path package.module.Class")
    value = getattr(importlib.import_module(module_name), attr)
    if not isinstance(value, type):
        raise TypeError(f"'{path}' is not a class")
    return value


def _new_provider(
    name: str,
    class_name: str,
    params: dict[str, str],
    resolve_class: Callable[[str], type] | None,
) -> ConfigProvider:
    class_config = f"{CONFIG_PROVIDERS_CONFIG}.{name}.class"
    builtin = _BUILTIN_NAMES.get(class_name)
    try:
        if builtin is not None:
            provider_class = _import_class(builtin)
        elif resolve_class is not None:
            provider_class = resolve_class(class_name)
        else:
            provider_class = _import_class(class_name)
    except Exception as e:
        available = ", ".join(BUILTIN_PROVIDERS)
        raise ConfigError(
            class_config,
            class_name,
            f"Could not load the class of config provider '{name}' ({e}); built-in config providers are: "
            f"{available}, or give a Python path package.module.Class",
        ) from e
    if not (isinstance(provider_class, type) and issubclass(provider_class, ConfigProvider)):
        raise ConfigError(
            class_config,
            class_name,
            f"Config provider '{name}': the class does not implement {ConfigProvider.__module__}.ConfigProvider",
        )
    if inspect.isabstract(provider_class):
        raise ConfigError(class_config, class_name, f"Config provider '{name}': the class is abstract")
    try:
        provider = provider_class()
    except Exception as e:
        raise ConfigError(class_config, class_name, f"Could not create config provider '{name}': {e}") from e
    try:
        provider.configure(params)
    except Exception as e:
        try:
            provider.close()
        except Exception:
            log.debug("Closing config provider '%s' after a failed configure also failed", name, exc_info=True)
        raise ConfigError(f"Could not configure config provider '{name}' ({class_name}): {e}") from e
    return provider
