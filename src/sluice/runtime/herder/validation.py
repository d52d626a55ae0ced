"""Connector config validation shared by every herder (``AbstractHerder.validateConnectorConfig``)
and the plugin config endpoint (``AbstractHerder.connectorPluginConfig``).

:func:`validate_connector_config` answers ``PUT /connector-plugins/{type}/config/validate``
with Kafka Connect 4.x's ConfigInfos, in the same order:

1. values that match no definition (``"definition": null``): keys given as ``null``
   and values a connector's ``validate()`` reports for keys it does not define;
2. every framework key (``SinkConnectorConfig`` / ``SourceConnectorConfig``), then the
   ``transforms.<alias>.*`` and ``predicates.<alias>.*`` keys of each listed alias, then
   the connector's own keys (the connector's definition replaces a framework key of the
   same name in place);
3. the ``producer.override.*``, ``consumer.override.*`` and ``admin.override.*`` keys the
   config sets, for the clients the connector uses, checked against the worker's
   ``connector.client.config.override.policy``;
4. the keys of the header, key and value converters the connector config sets itself,
   shown with their ``<x>.converter.`` prefix.

Where Kafka lists values out of a Java ``HashMap`` (1, 3 and 4), the same order is
computed with :func:`java_hash_map_order`. Password values are only ever rendered as
``[hidden]`` and nothing here logs config values.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

from sluice.api.config import ConfigDef, ConfigKey, ConfigType, ConfigValue, convert_to_string, parse_type
from sluice.api.connector import Connector
from sluice.api.errors import ConfigError, NotFoundError
from sluice.api.source import ConnectorTransactionBoundaries, ExactlyOnceSupport, SourceConnector
from sluice.runtime.config import (
    ADMIN_OVERRIDES_PREFIX,
    CONNECTOR_CLASS_CONFIG,
    CONNECTOR_VERSION_CONFIG,
    CONSUMER_OVERRIDES_PREFIX,
    CONVERTER_KEYS,
    DLQ_TOPIC_NAME_CONFIG,
    HEADER_CONVERTER_CLASS_CONFIG,
    KEY_CONVERTER_CLASS_CONFIG,
    PLUGIN_KINDS,
    PLUGIN_VERSION_SUFFIX,
    PREDICATES_CONFIG,
    PRODUCER_OVERRIDES_PREFIX,
    SIMPLE_HEADER_CONVERTER,
    TOPIC_CREATION_GROUPS_CONFIG,
    TOPIC_CREATION_PREFIX,
    TOPICS_CONFIG,
    TOPICS_REGEX_CONFIG,
    TRANSFORMS_CONFIG,
    VALUE_CONVERTER_CLASS_CONFIG,
    ConnectorConfigDefs,
    WorkerConfig,
    resolve_class_name,
    version_mismatch_message,
)
from sluice.runtime.config.clients import client_config_def
from sluice.runtime.config.keys import EXACTLY_ONCE_SUPPORT_CONFIG, TRANSACTION_BOUNDARY_CONFIG
from sluice.runtime.data_path import topic_creation_errors
from sluice.runtime.herder.base import (
    BadRequestError,
    ConfigInfo,
    ConfigInfos,
    ConfigKeyInfo,
    ConfigValueInfo,
)
from sluice.runtime.java_plugins import JavaConnector, JavaRuntime
from sluice.runtime.plugin_versions import VersionRange
from sluice.runtime.plugins import PluginDesc, Plugins, UnknownPluginError

log = logging.getLogger(__name__)

__all__ = [
    "config_key_info",
    "invalid_config_message",
    "java_hash_map_order",
    "java_map_string",
    "plugin_config_info",
    "validate_connector_config",
]

NULL_VALUE_MESSAGE = "Null value can not be supplied as the configuration value."

OVERRIDE_POLICY_CONFIG = "connector.client.config.override.policy"
OVERRIDE_ALLOWLIST_CONFIG = "connector.client.config.override.allowlist"
_PRINCIPAL_KEYS = frozenset({"sasl.jaas.config", "sasl.mechanism", "security.protocol"})


_SECRET_KEY = re.compile(r"password|secret|jaas|token|credential|api\.?key", re.IGNORECASE)


def java_map_string(config: Mapping[str, Any]) -> str:
    """``{k=v, k2=v2}``, the way Java prints a map (used in Kafka's error messages).

    Kafka prints every value as is; values of keys that look like secrets are shown as
    ``[hidden]`` here, since the message reaches REST clients and logs."""
    return (
        "{"
        + ", ".join(
            f"{k}={'[hidden]' if v is not None and _SECRET_KEY.search(str(k)) else v}" for k, v in config.items()
        )
        + "}"
    )


# --------------------------------------------------------------------------- Java HashMap order


def _java_string_hash(text: str) -> int:
    data = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h


def java_hash_map_order(names: Iterable[str]) -> list[str]:
    """The order in which a ``java.util.HashMap`` filled with ``names`` (in that order,
    starting empty) iterates its keys: by bucket of the spread ``String.hashCode`` in a
    table grown by doubling from 16 at a load factor of 0.75, and by insertion order
    within a bucket. Kafka builds several validate results from such maps."""
    unique = list(dict.fromkeys(names))
    capacity = 16
    while len(unique) > capacity * 0.75:
        capacity *= 2

    def bucket(name: str) -> int:
        h = _java_string_hash(name)
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(unique, key=bucket)  # sorted() is stable: insertion order within a bucket


# --------------------------------------------------------------------------- rendering


def config_key_info(key: ConfigKey, prefix: str = "") -> ConfigKeyInfo:
    """A definition as the REST API shows it (``AbstractHerder.convertConfigKey``)."""
    return ConfigKeyInfo(
        name=prefix + key.name,
        type=key.type.value,
        required=not key.has_default,
        default_value=None if not key.has_default else convert_to_string(key.default_value, key.type),
        importance=key.importance.value,
        documentation=key.documentation,
        group=key.group,
        order=key.order_in_group,
        width=key.width.value,
        display_name=key.display_name or key.name,
        dependents=list(key.dependents),
    )


def _value_info(
    value: ConfigValue, type_: ConfigType | None, name: str | None = None, visible: bool | None = None
) -> ConfigValueInfo:
    item_type = ConfigType.STRING if type_ is ConfigType.LIST else type_
    return ConfigValueInfo(
        name=name if name is not None else value.name,
        value=convert_to_string(value.value, type_),
        recommended_values=[str(convert_to_string(v, item_type)) for v in value.recommended_values],
        errors=list(value.error_messages),
        visible=value.visible if visible is None else visible,
    )


def _generate_result(
    name: str, keys: Mapping[str, ConfigKey], values: list[ConfigValue], groups: list[str]
) -> ConfigInfos:
    """``AbstractHerder.generateResult``: undefined values first, then one entry per key."""
    infos: list[ConfigInfo] = []
    error_count = 0
    by_name: dict[str, ConfigValue] = {}
    for value in values:
        by_name[value.name] = value
        if value.name not in keys:
            infos.append(ConfigInfo(None, _value_info(value, None)))
            error_count += len(value.error_messages)
    for key_name, key in keys.items():
        found = by_name.get(key_name)
        if found is not None:
            error_count += len(found.error_messages)
        infos.append(ConfigInfo(config_key_info(key), None if found is None else _value_info(found, key.type)))
    return ConfigInfos(name=name, error_count=error_count, groups=groups, configs=infos)


def _prefixed_result(keys: Mapping[str, ConfigKey], values: list[ConfigValue], prefix: str) -> ConfigInfos:
    """``AbstractHerder.prefixedConfigInfos``: a converter's or client's values under their
    prefix; one error counted per value that has any, and every value shown visible."""
    infos: list[ConfigInfo] = []
    groups: list[str] = []
    error_count = 0
    for value in values:
        key = keys.get(value.name)
        definition = None
        if key is not None:
            if key.group is not None and key.group not in groups:
                groups.append(key.group)
            definition = config_key_info(key, prefix)
        if value.error_messages:
            error_count += 1
        infos.append(ConfigInfo(definition, _value_info(value, key.type if key else None, prefix + value.name, True)))
    return ConfigInfos(name="", error_count=error_count, groups=groups, configs=infos)


def _merge(name: str, results: list[ConfigInfos | None]) -> ConfigInfos:
    error_count = 0
    groups: list[str] = []
    configs: list[ConfigInfo] = []
    for result in results:
        if result is None:
            continue
        error_count += result.error_count
        configs.extend(result.configs)
        groups.extend(g for g in result.groups if g not in groups)
    return ConfigInfos(name=name, error_count=error_count, groups=groups, configs=configs)


# --------------------------------------------------------------------------- checks across keys


def _blank(value: Any) -> bool:
    return value is None or not str(value).strip()


def _sink_checks(config: Mapping[str, Any], values: dict[str, ConfigValue]) -> None:
    """``SinkConnectorConfig.validate``: exactly one of topics and topics.regex, and a dead
    letter queue that the connector does not consume itself."""
    topics, regex = config.get(TOPICS_CONFIG), config.get(TOPICS_REGEX_CONFIG)
    dlq = str(config.get(DLQ_TOPIC_NAME_CONFIG) or "").strip()

    def error(key: str, message: str) -> None:
        values.setdefault(key, ConfigValue(key, config.get(key))).add_error_message(message)

    if not _blank(topics) and not _blank(regex):
        message = "topics and topics.regex are mutually exclusive options, but both are set."
        error(TOPICS_CONFIG, message)
        error(TOPICS_REGEX_CONFIG, message)
    if _blank(topics) and _blank(regex):
        message = "Must configure one of topics or topics.regex"
        error(TOPICS_CONFIG, message)
        error(TOPICS_REGEX_CONFIG, message)
    if dlq:
        if not _blank(topics):
            listed = list(dict.fromkeys(t for t in parse_type(TOPICS_CONFIG, topics, ConfigType.LIST) if t))
            if dlq in listed:
                error(
                    TOPICS_CONFIG,
                    f"The DLQ topic '{dlq}' may not be included in the list of topics "
                    f"('topics=[{', '.join(listed)}]') consumed by the connector",
                )
        if not _blank(regex):
            try:
                matches = re.fullmatch(str(regex), dlq) is not None
            except re.error:
                matches = False  # already reported by the topics.regex validator
            if matches:
                error(
                    TOPICS_REGEX_CONFIG,
                    f"The DLQ topic '{dlq}' may not be matched by the regex for the "
                    f"topics ('topics.regex={regex}') consumed by the connector",
                )


def _version_checks(
    config: Mapping[str, Any], values: dict[str, ConfigValue], plugins: Plugins, connector: PluginDesc
) -> None:
    """A requested ``*.plugin.version`` that the installed plugin does not satisfy is an
    error on the class key and on the version key, as in Kafka."""

    def check(class_key: str, version_key: str, plugin: PluginDesc | None) -> None:
        spec = config.get(version_key)
        if plugin is None or _blank(spec):
            return
        available = plugins.versions(plugin.class_name, (plugin.type,))
        message = version_mismatch_message(plugin.class_name, str(spec), plugin.version, available)
        if message:
            values[class_key].add_error_message(message)
            values[version_key].add_error_message(message)

    check(CONNECTOR_CLASS_CONFIG, CONNECTOR_VERSION_CONFIG, connector)
    for class_key, version_key, kind in CONVERTER_KEYS:
        # Only a converter the connector config names itself is looked up by version.
        if _blank(config.get(class_key)) or values[class_key].error_messages or values[class_key].value is None:
            continue
        check(class_key, version_key, _resolve(plugins, values[class_key].value, (kind,)))
    for name in values:
        for family, kind in ((TRANSFORMS_CONFIG, "transformation"), (PREDICATES_CONFIG, "predicate")):
            if name.startswith(family + ".") and name.endswith("." + PLUGIN_VERSION_SUFFIX):
                type_key = name[: -len(PLUGIN_VERSION_SUFFIX)] + "type"
                type_value = values.get(type_key)
                if type_value is not None and type_value.value is not None and not type_value.error_messages:
                    check(type_key, name, _resolve(plugins, type_value.value, (kind,)))


def _java_plugin_checks(
    runtime: JavaRuntime,
    config: Mapping[str, Any],
    worker_config: WorkerConfig | None,
    keys: dict[str, ConfigKey],
    values: dict[str, ConfigValue],
) -> None:
    """A Java connector's tasks run in the JVM with Kafka Connect's converters, transforms
    and predicates (or Java ones on plugin.path): one the JVM cannot load (a Python-only
    plugin) named in the config is an error on its key; the converter version keys the
    config leaves unset show the Java converters' versions, as Kafka Connect shows them."""
    for class_key, version_key, _ in CONVERTER_KEYS:
        named = config.get(class_key)
        name = named if not _blank(named) else worker_config.raw.get(class_key) if worker_config else None
        if _blank(name) and class_key == HEADER_CONVERTER_CLASS_CONFIG:
            name = SIMPLE_HEADER_CONVERTER
        if _blank(name) or class_key not in values or values[class_key].error_messages:
            continue
        loads, version = runtime.plugin_info(str(name).strip())
        if not loads and not _blank(named):
            values[class_key].add_error_message(_not_java_message(str(name).strip()))
        elif version is not None and _blank(config.get(version_key)) and version_key in values:
            values[version_key].value = version
            if version_key in keys:
                keys[version_key] = dataclasses.replace(keys[version_key], default_value=version)
    for key, raw in config.items():
        if not (key.startswith((TRANSFORMS_CONFIG + ".", PREDICATES_CONFIG + ".")) and key.endswith(".type")):
            continue
        value = values.get(key)
        if value is None or _blank(raw) or value.error_messages:
            continue
        if not runtime.plugin_info(str(raw).strip())[0]:
            value.add_error_message(_not_java_message(str(raw).strip()))


def _not_java_message(name: str) -> str:
    return (
        f"{name} is not a Java plugin: the tasks of a Java connector run in the JVM, with Kafka "
        "Connect's converters, transformations and predicates or Java ones on plugin.path"
    )


def _resolve(plugins: Plugins, name: Any, kinds: tuple[str, ...]) -> PluginDesc | None:
    try:
        return plugins.resolve(str(name), kinds)
    except UnknownPluginError:
        return None


def _topic_creation_checks(
    config: Mapping[str, Any], values: dict[str, ConfigValue], worker_config: WorkerConfig | None
) -> None:
    """Source connectors: the default group's settings are required once topic creation is
    on, and every group's must be valid (errors reported on ``topic.creation.groups``)."""
    enabled = True if worker_config is None else bool(worker_config.get("topic.creation.enable"))
    strings = {k: str(v) for k, v in config.items() if v is not None}
    for message in topic_creation_errors(strings, enabled):
        values.setdefault(TOPIC_CREATION_GROUPS_CONFIG, ConfigValue(TOPIC_CREATION_GROUPS_CONFIG)).add_error_message(
            message
        )


# --------------------------------------------------------------------------- converters and clients


def _converter_result(
    plugins: Plugins, config: Mapping[str, Any], class_value: ConfigValue | None, class_key: str, kind: str
) -> ConfigInfos | None:
    """The converter's own keys, when the connector config names a converter of its own
    that passed validation (``AbstractHerder.validateConverterConfig``)."""
    name = config.get(class_key)
    if name is None or class_value is None or class_value.error_messages:
        return None
    what = class_key.replace(".", " ")  # "key converter"
    try:
        instance = plugins.resolve(str(name), (kind,)).cls()
    except Exception as exc:  # noqa: BLE001 - the plugin's own constructor failed: an error on the class key, as Kafka
        class_value.add_error_message(f"Failed to load class {name}: {exc}")
        return None
    try:
        try:
            config_def = instance.config()
        except Exception as exc:  # noqa: BLE001 - the plugin's own config() failed: an error on the class key, as Kafka
            class_value.add_error_message(f"Failed to load ConfigDef from {what}: {exc}")
            return None
        if config_def is None:
            return None  # no definitions: nothing more to check, as in Kafka
        prefix = class_key + "."
        props: dict[str, Any] = {k[len(prefix) :]: v for k, v in config.items() if k.startswith(prefix)}
        props.setdefault("converter.type", class_key.split(".")[0])
        try:
            validated = config_def.validate_all(props)
        except Exception as exc:  # noqa: BLE001 - the plugin's ConfigDef failed to validate: an error on the class key
            class_value.add_error_message(f"Failed to perform config validation for {what}: {exc}")
            return None
        ordered = [validated[n] for n in java_hash_map_order(validated)]
        return _prefixed_result(config_def.config_keys(), ordered, prefix)
    finally:
        close = getattr(instance, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):
                close()


class _OverridePolicy:
    """The worker's ``connector.client.config.override.policy`` (All, None, Principal,
    Allowlist), deciding which client keys a connector may override."""

    _NAMES = {
        "All": "All",
        "None": "None",
        "Principal": "Principal",
        "Allowlist": "Allowlist",
    }

    def __init__(self, worker: WorkerConfig | None) -> None:
        raw = (worker.raw.get(OVERRIDE_POLICY_CONFIG) if worker else None) or "All"
        simple = raw.strip().rpartition(".")[2].removesuffix("ConnectorClientConfigOverridePolicy")
        self.name = self._NAMES.get(simple, "All")
        allowlist = worker.raw.get(OVERRIDE_ALLOWLIST_CONFIG) if worker else None
        self.allowlist = set(parse_type(OVERRIDE_ALLOWLIST_CONFIG, allowlist or "", ConfigType.LIST))

    def allows(self, key: str) -> bool:
        if self.name == "All":
            return True
        if self.name == "Principal":
            return key in _PRINCIPAL_KEYS
        if self.name == "Allowlist":
            return key in self.allowlist
        return False


def _override_result(config: Mapping[str, Any], prefix: str, client: str, policy: _OverridePolicy) -> ConfigInfos:
    keys = client_config_def(client).config_keys()
    client_configs: dict[str, Any] = {}
    for full_name, raw in config.items():
        if not full_name.startswith(prefix):
            continue
        name = full_name[len(prefix) :]
        key = keys.get(name)
        try:
            client_configs[name] = parse_type(name, raw, key.type) if key is not None else raw
        except ConfigError as exc:
            # Kafka lets this escape (HTTP 500); it is the client's mistake (docs/compatibility.md).
            raise BadRequestError(str(exc)) from exc
    values = []
    for name in java_hash_map_order(client_configs):
        value = ConfigValue(name, client_configs[name])
        if not policy.allows(name):
            value.add_error_message(
                f"The '{policy.name}' policy does not allow '{name}' to be overridden in the connector configuration."
            )
        values.append(value)
    return _prefixed_result(keys, values, prefix)


# --------------------------------------------------------------------------- validate


def resolve_connector_class(plugins: Plugins, config: Mapping[str, Any]) -> PluginDesc:
    connector_class = config.get(CONNECTOR_CLASS_CONFIG)
    if connector_class is None or not str(connector_class).strip():
        raise BadRequestError(f"Connector config {java_map_string(config)} contains no connector type")
    try:
        return plugins.resolve_connector_of(config)
    except UnknownPluginError:
        pass  # no installed version meets connector.plugin.version: the version checks say so
    try:
        return plugins.resolve_connector(str(connector_class))
    except Exception as exc:
        # Kafka answers 500 here; an unknown class is a client mistake, so 400 (docs/compatibility.md).
        raise BadRequestError(str(exc)) from exc


def validate_connector_config(
    plugins: Plugins, config: Mapping[str, Any], worker_config: WorkerConfig | None = None, *, distributed: bool = False
) -> ConfigInfos:
    """Validate a connector config as ``PUT /connector-plugins/{type}/config/validate``
    does and return Kafka's ConfigInfos (see the module docstring for its layout).

    ``worker_config`` supplies what Kafka takes from the worker: the defaults shown for
    the converter keys and the client override policy. A ``distributed`` worker also runs
    Kafka's exactly-once preflight checks of a source connector. Raises
    :class:`BadRequestError` when ``connector.class`` is missing or names no connector.
    """
    desc = resolve_connector_class(plugins, config)
    connector: Connector = desc.cls()
    enriched = ConnectorConfigDefs.enriched(plugins, desc, config, worker_config)
    values = enriched.validate_all(config, class_resolver=resolve_class_name(plugins))
    if desc.type == "sink":
        _sink_checks(config, values)
    _version_checks(config, values, plugins, desc)
    if desc.type == "source":
        _topic_creation_checks(config, values, worker_config)
        if distributed and isinstance(connector, SourceConnector):
            _exactly_once_checks(
                connector, config, values, worker_config is not None and worker_config.exactly_once_source
            )
    for key, raw in config.items():
        if raw is None:
            values.setdefault(key, ConfigValue(key)).add_error_message(NULL_VALUE_MESSAGE)

    class_name = f"{type(connector).__module__}.{type(connector).__qualname__}"
    own_def: ConfigDef | None = connector.config()
    if own_def is None:
        raise BadRequestError(f"{class_name}.config() must return a ConfigDef that is not null.")
    own = connector.validate(dict(config))
    if own is None:
        raise BadRequestError(f"{class_name}.validate() must return a Config that is not null.")

    keys = enriched.config_keys()
    keys.update(own_def.config_keys())  # the connector's definition wins, in the framework key's place
    if issubclass(desc.cls, JavaConnector):
        _java_plugin_checks(desc.cls.runtime, config, worker_config, keys, values)
    groups = list(dict.fromkeys([*enriched.groups(), *own_def.groups()]))

    converters = {
        class_key: _converter_result(plugins, config, values.get(class_key), class_key, kind)
        for class_key, _, kind in CONVERTER_KEYS
    }
    framework_values = [values[name] for name in java_hash_map_order(values)]
    result = _generate_result(
        str(config.get(CONNECTOR_CLASS_CONFIG)), keys, [*framework_values, *own.config_values], groups
    )

    policy = _OverridePolicy(worker_config)
    has_dlq = desc.type == "sink" and not _blank(config.get(DLQ_TOPIC_NAME_CONFIG))
    uses_producer = desc.type == "source" or has_dlq
    uses_admin = has_dlq or (desc.type == "source" and any(k.startswith(TOPIC_CREATION_PREFIX) for k in config))
    uses_consumer = desc.type == "sink"
    return _merge(
        result.name,
        [
            result,
            _override_result(config, PRODUCER_OVERRIDES_PREFIX, "producer", policy) if uses_producer else None,
            _override_result(config, CONSUMER_OVERRIDES_PREFIX, "consumer", policy) if uses_consumer else None,
            _override_result(config, ADMIN_OVERRIDES_PREFIX, "admin", policy) if uses_admin else None,
            converters[HEADER_CONVERTER_CLASS_CONFIG],
            converters[KEY_CONVERTER_CLASS_CONFIG],
            converters[VALUE_CONVERTER_CLASS_CONFIG],
        ],
    )


WORKER_WITHOUT_EXACTLY_ONCE = "This worker does not have exactly-once source support enabled."
_NO_EXACTLY_ONCE_ANSWER = (
    "The connector does not implement the API required for preflight validation of exactly-once source support. "
    "Please consult the documentation for the connector to determine whether it supports exactly-once semantics, "
    'and then consider reconfiguring the connector to use the value "requested" for this property (which will '
    "disable this preflight check and allow the connector to be created)."
)
_EXACTLY_ONCE_UNSUPPORTED = "The connector does not support exactly-once semantics with the provided configuration."
_NO_BOUNDARIES_ANSWER = (
    "This connector has returned a null value from its canDefineTransactionBoundaries method, which is not "
    "permitted. The connector will be treated as if it cannot define its own transaction boundaries, and cannot "
    f"be configured with '{TRANSACTION_BOUNDARY_CONFIG}' set to 'connector'."
)
_BOUNDARIES_UNSUPPORTED = (
    "The connector does not support connector-defined transaction boundaries with the given configuration. "
    "Please reconfigure it to use a different transaction boundary definition."
)


def _exactly_once_checks(
    connector: SourceConnector, config: Mapping[str, Any], values: dict[str, ConfigValue], worker_enabled: bool
) -> None:
    """A distributed worker's preflight checks of a source connector, as Kafka's
    ``DistributedHerder``: ``exactly.once.support=required`` asks the worker (whether
    ``exactly.once.source.support`` is enabled) and the connector's
    :meth:`~SourceConnector.exactly_once_support`;
    ``transaction.boundary=connector`` asks its :meth:`~SourceConnector.can_define_transaction_boundaries`.
    Each problem is one error on its key."""
    raw = {key: value for key, value in config.items() if value is not None}
    support = values.get(EXACTLY_ONCE_SUPPORT_CONFIG)
    if support is not None and not support.error_messages and str(support.value).strip().lower() == "required":
        if not worker_enabled:
            support.add_error_message(WORKER_WITHOUT_EXACTLY_ONCE)
        try:
            answer = connector.exactly_once_support(dict(raw))
            if answer is None:
                support.add_error_message(_NO_EXACTLY_ONCE_ANSWER)
            elif answer is ExactlyOnceSupport.UNSUPPORTED:
                support.add_error_message(_EXACTLY_ONCE_UNSUPPORTED)
            elif answer is not ExactlyOnceSupport.SUPPORTED:
                raise ConfigError(f"Unexpected value returned from SourceConnector::exactlyOnceSupport: {answer}")
        except Exception as exc:
            log.error("Failed while validating connector support for exactly-once semantics", exc_info=True)
            support.add_error_message(_unexpected_validation_error(exc))
    boundary = values.get(TRANSACTION_BOUNDARY_CONFIG)
    if boundary is not None and not boundary.error_messages and str(boundary.value).strip().lower() == "connector":
        try:
            boundaries = connector.can_define_transaction_boundaries(dict(raw))
            if boundaries is None:
                boundary.add_error_message(_NO_BOUNDARIES_ANSWER)
            elif boundaries is not ConnectorTransactionBoundaries.SUPPORTED:
                boundary.add_error_message(_BOUNDARIES_UNSUPPORTED)
        except Exception as exc:
            log.error(
                "Failed while validating connector support for defining its own transaction boundaries", exc_info=True
            )
            boundary.add_error_message(_unexpected_validation_error(exc))


def _unexpected_validation_error(exc: BaseException) -> str:
    message = str(exc).strip()
    if message:
        return f"An unexpected error occurred during validation: {message}"
    return "An unexpected error occurred during validation; please see the worker logs for more details."


def invalid_config_message(infos: ConfigInfos) -> str:
    errors = [e for info in infos.configs if info.value for e in info.value.errors]
    return (
        f"Connector configuration is invalid and contains the following {len(errors)} error(s):\n"
        + "".join(f"{e}\n" for e in errors)
        + "You can also find the above list of errors at the endpoint "
        "`/connector-plugins/{connectorType}/config/validate`"
    )


# --------------------------------------------------------------------------- plugin config

_VALID_PLUGIN_TYPES = "sink, source, converter, header_converter, transformation, predicate"

# Kafka plugins of the kinds GET /connector-plugins/{plugin}/config refuses with 400.
_OTHER_KAFKA_PLUGINS = (
    "org.apache.kafka.common.config.provider.FileConfigProvider",
    "org.apache.kafka.common.config.provider.DirectoryConfigProvider",
    "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
    "org.apache.kafka.connect.connector.policy.AllConnectorClientConfigOverridePolicy",
    "org.apache.kafka.connect.connector.policy.NoneConnectorClientConfigOverridePolicy",
    "org.apache.kafka.connect.connector.policy.PrincipalConnectorClientConfigOverridePolicy",
    "org.apache.kafka.connect.connector.policy.AllowlistConnectorClientConfigOverridePolicy",
)


def _other_plugin_names() -> set[str]:
    names = set()
    for full in _OTHER_KAFKA_PLUGINS:
        simple = full.rpartition(".")[2]
        names.update({full, simple})
        for suffix in ("ConfigProvider", "ConnectorClientConfigOverridePolicy"):
            if simple.endswith(suffix) and len(simple) > len(suffix):
                names.add(simple[: -len(suffix)])
    return names


_OTHER_PLUGIN_NAMES = _other_plugin_names()


def _is_other_plugin(name: str) -> bool:
    """A config provider or client override policy: a plugin, but not one this endpoint
    describes."""
    if name in _OTHER_PLUGIN_NAMES:
        return True
    module_name, _, attr = name.rpartition(".")
    if not module_name:
        return False
    try:
        from sluice.api.config_provider import ConfigProvider

        cls = getattr(importlib.import_module(module_name), attr)
        return isinstance(cls, type) and issubclass(cls, ConfigProvider)
    except Exception:  # noqa: BLE001 - importing the named module runs its code: anything means not a provider
        return False


def plugin_config_info(plugins: Plugins, plugin_name: str, version: str | None = None) -> list[ConfigKeyInfo]:
    """``GET /connector-plugins/{plugin}/config``: the definitions of a plugin's keys.

    ``plugin_name`` is a class name or a unique alias. A connector lists its own keys
    first, then the framework's sink or source keys it does not define itself; any other
    plugin lists only its own keys. Raises :class:`NotFoundError` (404) for an unknown
    plugin and :class:`BadRequestError` (400) for a plugin of another kind (a config
    provider, an override policy).
    """
    if version is not None:
        try:
            VersionRange(version)
        except ValueError as exc:
            raise BadRequestError(f"Invalid version range {version}: {exc}") from None
    try:
        desc = plugins.resolve(plugin_name, PLUGIN_KINDS, version)
    except UnknownPluginError as exc:
        if version is not None and plugins.versions(plugin_name, PLUGIN_KINDS):
            raise NotFoundError(str(exc)) from None
        if _is_other_plugin(plugin_name.strip()):
            raise BadRequestError(
                f"Invalid plugin class {plugin_name}. Valid types are {_VALID_PLUGIN_TYPES}."
            ) from None
        raise NotFoundError(f"Unknown plugin {plugin_name}.") from None
    own = desc.cls().config()
    keys: dict[str, ConfigKey] = dict(own.config_keys()) if own is not None else {}
    if desc.type in ("source", "sink"):
        for name, key in ConnectorConfigDefs.for_plugin(plugins, desc).config_keys().items():
            keys.setdefault(name, key)
    return [config_key_info(key) for key in keys.values()]
