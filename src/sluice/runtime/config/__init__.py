"""Worker and connector configuration with Kafka Connect's keys and defaults.

Worker properties keep Kafka's keys (``bootstrap.servers``, ``key.converter``,
``offset.storage.file.filename`` …); Sluice's own knobs live under ``sluice.`` and
everything under ``spark.`` goes to the SparkSession.

Connector configs: :func:`connector_config_def` gives the framework's keys of a sink or
source connector exactly as Kafka Connect 4.x defines them (names, order, types,
defaults, validators, groups and display metadata), :func:`enrich` adds the keys of each
``transforms``/``predicates`` alias from the plugin's own definition, and
:class:`ConnectorConfigDefs` bundles both for validation and the plugin config endpoint.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sluice.api.config import (
    NO_DEFAULT,
    CaseInsensitiveValidString,
    CompositeValidator,
    ConfigDef,
    ConfigType,
    Importance,
    LambdaValidator,
    NonEmptyString,
    NonEmptyStringWithoutControlChars,
    NonNullValidator,
    Range,
    Recommender,
    ValidList,
    ValidString,
    Width,
    parse_type,
)
from sluice.api.errors import ConfigError, ConnectError
from sluice.runtime.config.versions import (
    PLUGIN_VERSION_VALIDATOR,
    VersionRange,
    default_version,
    version_mismatch_message,
    version_range,
)
from sluice.runtime.config.worker import SIMPLE_HEADER_CONVERTER, WorkerConfig, converter_props
from sluice.runtime.plugins import PluginDesc, Plugins

__all__ = [
    "SIMPLE_HEADER_CONVERTER",
    "ConnectorConfigDefs",
    "ConverterDefault",
    "VersionRange",
    "WorkerConfig",
    "connector_config_def",
    "converter_props",
    "enrich",
    "resolve_class_name",
    "version_mismatch_message",
    "version_range",
    "worker_converter_defaults",
]

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- connectors
#
# The framework's connector keys, as Kafka Connect 4.x's ConnectorConfig,
# SinkConnectorConfig and SourceConnectorConfig define them: same names, order, types,
# defaults, validators, groups, orders in group, widths and display names (the REST
# validate endpoint shows all of them). The documentation strings are Sluice's own.

NAME_CONFIG = "name"
CONNECTOR_CLASS_CONFIG = "connector.class"
CONNECTOR_VERSION_CONFIG = "connector.plugin.version"
TASKS_MAX_CONFIG = "tasks.max"
TASKS_MAX_ENFORCE_CONFIG = "tasks.max.enforce"
KEY_CONVERTER_CLASS_CONFIG = "key.converter"
KEY_CONVERTER_VERSION_CONFIG = "key.converter.plugin.version"
VALUE_CONVERTER_CLASS_CONFIG = "value.converter"
VALUE_CONVERTER_VERSION_CONFIG = "value.converter.plugin.version"
HEADER_CONVERTER_CLASS_CONFIG = "header.converter"
HEADER_CONVERTER_VERSION_CONFIG = "header.converter.plugin.version"
TRANSFORMS_CONFIG = "transforms"
PREDICATES_CONFIG = "predicates"
CONFIG_RELOAD_ACTION_CONFIG = "config.action.reload"
ERRORS_RETRY_TIMEOUT_CONFIG = "errors.retry.timeout"
ERRORS_RETRY_MAX_DELAY_CONFIG = "errors.retry.delay.max.ms"
ERRORS_TOLERANCE_CONFIG = "errors.tolerance"
ERRORS_LOG_ENABLE_CONFIG = "errors.log.enable"
ERRORS_LOG_INCLUDE_MESSAGES_CONFIG = "errors.log.include.messages"
TOPICS_CONFIG = "topics"
TOPICS_REGEX_CONFIG = "topics.regex"
DLQ_TOPIC_NAME_CONFIG = "errors.deadletterqueue.topic.name"
DLQ_TOPIC_REPLICATION_FACTOR_CONFIG = "errors.deadletterqueue.topic.replication.factor"
DLQ_CONTEXT_HEADERS_ENABLE_CONFIG = "errors.deadletterqueue.context.headers.enable"
TOPIC_CREATION_GROUPS_CONFIG = "topic.creation.groups"
TOPIC_CREATION_PREFIX = "topic.creation."
EXACTLY_ONCE_SUPPORT_CONFIG = "exactly.once.support"
TRANSACTION_BOUNDARY_CONFIG = "transaction.boundary"
TRANSACTION_BOUNDARY_INTERVAL_CONFIG = "transaction.boundary.interval.ms"
OFFSETS_TOPIC_CONFIG = "offsets.storage.topic"
PLUGIN_VERSION_SUFFIX = "plugin.version"
PRODUCER_OVERRIDES_PREFIX = "producer.override."
CONSUMER_OVERRIDES_PREFIX = "consumer.override."
ADMIN_OVERRIDES_PREFIX = "admin.override."

COMMON_GROUP = "Common"
TRANSFORMS_GROUP = "Transforms"
PREDICATES_GROUP = "Predicates"
ERROR_GROUP = "Error Handling"
TOPIC_CREATION_GROUP = "Topic Creation"
EXACTLY_ONCE_GROUP = "Exactly Once Support"
OFFSETS_TOPIC_GROUP = "offsets.topic"

# Each converter key, the key of its version and the plugin type it takes.
CONVERTER_KEYS: tuple[tuple[str, str, str], ...] = (
    (KEY_CONVERTER_CLASS_CONFIG, KEY_CONVERTER_VERSION_CONFIG, "converter"),
    (VALUE_CONVERTER_CLASS_CONFIG, VALUE_CONVERTER_VERSION_CONFIG, "converter"),
    (HEADER_CONVERTER_CLASS_CONFIG, HEADER_CONVERTER_VERSION_CONFIG, "header_converter"),
)

PLUGIN_KINDS = ("source", "sink", "converter", "header_converter", "transformation", "predicate")
_INTERFACES = {
    "converter": "Converter",
    "header_converter": "HeaderConverter",
    "transformation": "Transformation",
    "predicate": "Predicate",
}


def _unique_aliases(what: str) -> CompositeValidator:
    def check(name: str, value: Any) -> None:
        if len(set(value)) != len(value):
            raise ConfigError(name, _java_list(value), "Duplicate alias provided.")

    return CompositeValidator.of(NonNullValidator(), LambdaValidator.with_(check, f"unique {what} aliases"))


def _java_list(value: Any) -> str:
    return "[" + ", ".join(str(v) for v in value) + "]"


def _non_negative_or_null(name: str, value: Any) -> None:
    if value is not None and value < 0:
        raise ConfigError(name, value, "Value must be at least 0")


def _valid_regex(name: str, value: Any) -> None:
    try:
        re.compile(value or "")
    except re.error as exc:
        raise ConfigError(name, value, f"Invalid regex: {exc}") from exc


# -- recommenders and validators backed by the installed plugins -------------------------


class _PluginClasses(Recommender):
    """Recommends every installed plugin class of one type (sorted, as Kafka lists them)."""

    def __init__(self, plugins: Plugins | None, kind: str) -> None:
        self.plugins, self.kind = plugins, kind

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]:
        if self.plugins is None:
            return []
        return sorted({d.class_name for d in self.plugins.all() if d.type == self.kind})


class _PluginVersion(Recommender):
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
        except Exception:
            return None

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]:
        plugin = self._plugin(parsed)
        return [plugin.version] if plugin is not None and plugin.version is not None else []

    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool:
        return not self.needs_class or parsed.get(self.class_key) is not None


def _implements(plugins: Plugins | None, kind: str) -> LambdaValidator:
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


def _plugin_version(plugins: Plugins | None, name: str | None, kinds: tuple[str, ...]) -> str | None:
    if plugins is None or not name:
        return None
    try:
        return plugins.resolve(str(name), kinds).version
    except Exception:
        return None


@dataclass(frozen=True)
class ConverterDefault:
    """What a connector config's ``<x>.converter`` and ``<x>.converter.plugin.version``
    default to: the worker's converter and its version (Kafka shows them as the defaults)."""

    class_name: str | None = None
    version: str | None = None


# -- the definitions ---------------------------------------------------------------------


def _common_def(
    plugins: Plugins | None,
    connector_version: str | None,
    converters: Mapping[str, ConverterDefault],
) -> ConfigDef:
    d = ConfigDef()
    order = itertools.count(1)
    d.define(
        NAME_CONFIG,
        ConfigType.STRING,
        NO_DEFAULT,
        NonEmptyStringWithoutControlChars(),
        Importance.HIGH,
        "Name of the connector, unique in the Connect cluster.",
        COMMON_GROUP,
        next(order),
        Width.MEDIUM,
        "Connector name",
    )
    d.define(
        CONNECTOR_CLASS_CONFIG,
        ConfigType.STRING,
        NO_DEFAULT,
        None,
        Importance.HIGH,
        "The connector's class: Kafka's class name or one of its aliases for a built-in connector "
        "(FileStreamSink, FileStreamSinkConnector or org.apache.kafka.connect.file.FileStreamSinkConnector), "
        "or the Python path package.module.Class of a Python connector.",
        COMMON_GROUP,
        next(order),
        Width.LONG,
        "Connector class",
    )
    d.define(
        CONNECTOR_VERSION_CONFIG,
        ConfigType.STRING,
        default_version(connector_version),
        PLUGIN_VERSION_VALIDATOR,
        Importance.MEDIUM,
        "Which installed version of the connector plugin to use: a version, or a range such as [1.0,2.0). "
        "Defaults to the installed version.",
        COMMON_GROUP,
        next(order),
        Width.MEDIUM,
        "Connector version",
        recommender=_PluginVersion(plugins, CONNECTOR_CLASS_CONFIG, ("source", "sink")),
    )
    d.define(
        TASKS_MAX_CONFIG,
        ConfigType.INT,
        1,
        Range.at_least(1),
        Importance.HIGH,
        "The largest number of tasks the connector may run; it may run fewer.",
        COMMON_GROUP,
        next(order),
        Width.SHORT,
        "Tasks max",
    )
    d.define(
        TASKS_MAX_ENFORCE_CONFIG,
        ConfigType.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "Deprecated. When true, a connector that produces more task configs than tasks.max fails; when "
        "false, the extra tasks run and a warning is logged.",
        COMMON_GROUP,
        next(order),
        Width.SHORT,
        "Enforce tasks max",
    )
    docs = {
        KEY_CONVERTER_CLASS_CONFIG: (
            "Converter between the Connect data of record keys and the bytes in Kafka, "
            "for this connector only; unset, the worker's key.converter is used.",
            "Key converter class",
            "Key converter version",
        ),
        VALUE_CONVERTER_CLASS_CONFIG: (
            "Converter between the Connect data of record values and the bytes in "
            "Kafka, for this connector only; unset, the worker's value.converter is "
            "used.",
            "Value converter class",
            "Value converter version",
        ),
        HEADER_CONVERTER_CLASS_CONFIG: (
            "Converter between the Connect data of header values and the bytes in "
            "Kafka, for this connector only; unset, the worker's header.converter is "
            "used.",
            "Header converter class",
            "Header converter version",
        ),
    }
    for class_key, version_key, kind in CONVERTER_KEYS:
        doc, display, version_display = docs[class_key]
        default = converters.get(class_key, ConverterDefault())
        d.define(
            class_key,
            ConfigType.CLASS,
            default.class_name,
            CompositeValidator.of(_implements(plugins, kind)),
            Importance.LOW,
            doc,
            COMMON_GROUP,
            next(order),
            Width.SHORT,
            display,
            recommender=_PluginClasses(plugins, kind),
        )
        d.define(
            version_key,
            ConfigType.STRING,
            default_version(default.version),
            PLUGIN_VERSION_VALIDATOR,
            Importance.LOW,
            f"Which installed version of the {class_key} plugin to use: a version, or a range such as "
            "[1.0,2.0). Defaults to the installed version.",
            COMMON_GROUP,
            next(order),
            Width.SHORT,
            version_display,
            recommender=_PluginVersion(plugins, class_key, (kind,), needs_class=True),
        )
    d.define(
        TRANSFORMS_CONFIG,
        ConfigType.LIST,
        [],
        _unique_aliases("transformation"),
        Importance.LOW,
        "Aliases of the transformations applied to each record, in order; each alias is configured by the "
        "transforms.<alias>.* keys.",
        TRANSFORMS_GROUP,
        next(order),
        Width.LONG,
        "Transforms",
    )
    d.define(
        PREDICATES_CONFIG,
        ConfigType.LIST,
        [],
        _unique_aliases("predicate"),
        Importance.LOW,
        "Aliases of the predicates that transformations may refer to; each alias is configured by the "
        "predicates.<alias>.* keys.",
        PREDICATES_GROUP,
        next(order),
        Width.LONG,
        "Predicates",
    )
    d.define(
        CONFIG_RELOAD_ACTION_CONFIG,
        ConfigType.STRING,
        "restart",
        ValidString.in_("none", "restart"),
        Importance.LOW,
        "What happens when a config provider reports that a value this connector uses has changed: "
        "'restart' restarts the connector with the new value, 'none' does nothing.",
        COMMON_GROUP,
        next(order),
        Width.MEDIUM,
        "Reload Action",
    )
    errors = itertools.count(1)
    d.define(
        ERRORS_RETRY_TIMEOUT_CONFIG,
        ConfigType.LONG,
        0,
        None,
        Importance.MEDIUM,
        "How long, in milliseconds, a failed operation is retried: 0 (the default) never retries, -1 "
        "retries without end.",
        ERROR_GROUP,
        next(errors),
        Width.MEDIUM,
        "Retry Timeout for Errors",
    )
    d.define(
        ERRORS_RETRY_MAX_DELAY_CONFIG,
        ConfigType.LONG,
        60000,
        None,
        Importance.MEDIUM,
        "The longest wait, in milliseconds, between two retries of a failed operation; random jitter is "
        "added once the backoff reaches it.",
        ERROR_GROUP,
        next(errors),
        Width.MEDIUM,
        "Maximum Delay Between Retries for Errors",
    )
    d.define(
        ERRORS_TOLERANCE_CONFIG,
        ConfigType.STRING,
        "none",
        ValidString.in_("none", "all"),
        Importance.MEDIUM,
        "What an error in conversion or transformation does: 'none' (the default) fails the task at once, "
        "'all' skips the record and goes on.",
        ERROR_GROUP,
        next(errors),
        Width.SHORT,
        "Error Tolerance",
    )
    d.define(
        ERRORS_LOG_ENABLE_CONFIG,
        ConfigType.BOOLEAN,
        False,
        None,
        Importance.MEDIUM,
        "Whether each error, with the operation that failed and the record it concerned, is written to the "
        "worker's log; by default only errors that are not tolerated are.",
        ERROR_GROUP,
        next(errors),
        Width.SHORT,
        "Log Errors",
    )
    d.define(
        ERRORS_LOG_INCLUDE_MESSAGES_CONFIG,
        ConfigType.BOOLEAN,
        False,
        None,
        Importance.MEDIUM,
        "Whether logged errors include the record's key, value and headers; by default only its topic, "
        "partition and offset are logged.",
        ERROR_GROUP,
        next(errors),
        Width.SHORT,
        "Log Error Details",
    )
    return d


def _sink_def(d: ConfigDef) -> ConfigDef:
    d.define(
        TOPICS_CONFIG,
        ConfigType.LIST,
        [],
        ValidList.any_non_duplicate_values(True, False),
        Importance.HIGH,
        "The topics to consume, separated by commas. Set this or topics.regex, not both.",
        COMMON_GROUP,
        4,
        Width.LONG,
        "Topics",
    )
    d.define(
        TOPICS_REGEX_CONFIG,
        ConfigType.STRING,
        "",
        LambdaValidator.with_(_valid_regex, "valid regex"),
        Importance.HIGH,
        "A regular expression; every topic whose whole name it matches is consumed. Set this or topics, not both.",
        COMMON_GROUP,
        4,
        Width.LONG,
        "Topics regex",
    )
    d.define(
        DLQ_TOPIC_NAME_CONFIG,
        ConfigType.STRING,
        "",
        None,
        Importance.MEDIUM,
        "Topic that receives the records the sink failed to process (the dead letter queue); empty, the "
        "default, means none.",
        ERROR_GROUP,
        6,
        Width.MEDIUM,
        "Dead Letter Queue Topic Name",
    )
    d.define(
        DLQ_TOPIC_REPLICATION_FACTOR_CONFIG,
        ConfigType.SHORT,
        3,
        None,
        Importance.MEDIUM,
        "Replication factor of the dead letter queue topic when the worker has to create it.",
        ERROR_GROUP,
        7,
        Width.MEDIUM,
        "Dead Letter Queue Topic Replication Factor",
    )
    d.define(
        DLQ_CONTEXT_HEADERS_ENABLE_CONFIG,
        ConfigType.BOOLEAN,
        False,
        None,
        Importance.MEDIUM,
        "Whether records written to the dead letter queue carry __connect.errors.* headers describing the "
        "failure and where the record came from.",
        ERROR_GROUP,
        8,
        Width.MEDIUM,
        "Enable Error Context Headers",
    )
    return d


def _source_def(d: ConfigDef) -> ConfigDef:
    order = itertools.count(1)  # one sequence across the three source groups, as in Kafka
    d.define(
        TOPIC_CREATION_GROUPS_CONFIG,
        ConfigType.LIST,
        [],
        _unique_aliases("topic creation group"),
        Importance.LOW,
        "Names of topic creation groups besides 'default'; each is configured by the "
        "topic.creation.<group>.* keys and applies to the topics its include/exclude patterns select.",
        TOPIC_CREATION_GROUP,
        next(order),
        Width.LONG,
        "Topic Creation Groups",
    )
    d.define(
        EXACTLY_ONCE_SUPPORT_CONFIG,
        ConfigType.STRING,
        "requested",
        CaseInsensitiveValidString.in_("REQUIRED", "REQUESTED"),
        Importance.MEDIUM,
        "'required' refuses the connector unless it declares exactly-once support; 'requested' (the "
        "default) accepts it either way.",
        EXACTLY_ONCE_GROUP,
        next(order),
        Width.SHORT,
        "Exactly once support",
    )
    d.define(
        TRANSACTION_BOUNDARY_CONFIG,
        ConfigType.STRING,
        "poll",
        CaseInsensitiveValidString.in_("INTERVAL", "POLL", "CONNECTOR"),
        Importance.MEDIUM,
        "With exactly-once delivery, where transactions end: 'poll' after each batch a task returns, "
        "'interval' every transaction.boundary.interval.ms, 'connector' where the connector decides.",
        EXACTLY_ONCE_GROUP,
        next(order),
        Width.SHORT,
        "Transaction Boundary",
    )
    d.define(
        TRANSACTION_BOUNDARY_INTERVAL_CONFIG,
        ConfigType.LONG,
        None,
        LambdaValidator.with_(_non_negative_or_null, "[0,...]"),
        Importance.LOW,
        "With transaction.boundary=interval, milliseconds between two commits (default: the worker's "
        "offset.flush.interval.ms).",
        EXACTLY_ONCE_GROUP,
        next(order),
        Width.SHORT,
        "Transaction boundary interval",
    )
    d.define(
        OFFSETS_TOPIC_CONFIG,
        ConfigType.STRING,
        None,
        NonEmptyString(),
        Importance.LOW,
        "A topic of its own for this connector's source offsets, instead of the worker's offsets topic "
        "(distributed mode).",
        OFFSETS_TOPIC_GROUP,
        1,
        Width.LONG,
        "Offsets topic",
    )
    return d


def connector_config_def(
    kind: str,
    plugins: Plugins | None = None,
    *,
    connector_version: str | None = None,
    converters: Mapping[str, ConverterDefault] | None = None,
) -> ConfigDef:
    """The framework's keys of a ``sink`` or ``source`` connector (Kafka's
    ``SinkConnectorConfig`` / ``SourceConnectorConfig`` definitions), without the
    ``transforms.<alias>.*`` and ``predicates.<alias>.*`` keys (see :func:`enrich`).

    ``plugins`` feeds the recommenders (installed converters, plugin versions) and the
    converter class checks; ``connector_version`` and ``converters`` (keyed by
    ``key.converter`` …) give the defaults shown for the version and converter keys.
    """
    d = _common_def(plugins, connector_version, converters or {})
    return _sink_def(d) if kind == "sink" else _source_def(d)


# -- transforms.<alias>.* and predicates.<alias>.* ------------------------------------------


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
            recommender=_PluginClasses(plugins, family.kind),
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
            recommender=_PluginVersion(plugins, type_key, (family.kind,)),
        )
        if plugin is None:
            continue
        try:
            own = _plugin_config_def(plugin)
        except Exception:
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
    except Exception:
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


def worker_converter_defaults(
    plugins: Plugins | None, props: Mapping[str, Any], worker: WorkerConfig | None
) -> dict[str, ConverterDefault]:
    """The defaults Kafka shows for the converter keys of a connector config: the
    worker's converter classes, and the version of the converter that will really be
    used (the connector's own when it sets one)."""
    defaults: dict[str, ConverterDefault] = {}
    for class_key, version_key, kind in CONVERTER_KEYS:
        worker_class = None
        if worker is not None:
            worker_class = worker.values.get(class_key) or worker.raw.get(class_key)
        if worker_class is not None and plugins is not None:
            with contextlib.suppress(Exception):
                worker_class = plugins.resolve(worker_class, (kind,)).class_name
        if props.get(class_key):
            version = _plugin_version(plugins, props.get(class_key), (kind,))
        elif worker is not None and worker.raw.get(version_key):
            version = worker.raw[version_key]
        else:
            version = _plugin_version(plugins, worker_class, (kind,))
        defaults[class_key] = ConverterDefault(worker_class, version)
    return defaults


class ConnectorConfigDefs:
    """The framework's connector ConfigDefs (``SinkConnectorConfig`` / ``SourceConnectorConfig``)."""

    SINK = connector_config_def("sink")
    SOURCE = connector_config_def("source")
    SINK_GROUPS = [COMMON_GROUP, TRANSFORMS_GROUP, PREDICATES_GROUP, ERROR_GROUP]
    SOURCE_GROUPS = [
        COMMON_GROUP,
        TRANSFORMS_GROUP,
        PREDICATES_GROUP,
        ERROR_GROUP,
        TOPIC_CREATION_GROUP,
        EXACTLY_ONCE_GROUP,
        OFFSETS_TOPIC_GROUP,
    ]

    @classmethod
    def for_type(cls, kind: str) -> ConfigDef:
        return cls.SINK if kind == "sink" else cls.SOURCE

    @staticmethod
    def for_plugin(plugins: Plugins, plugin: PluginDesc) -> ConfigDef:
        """The framework keys shown with a connector plugin's own keys by
        ``GET /connector-plugins/{plugin}/config``: no worker, so the converter keys have
        no defaults, and the version defaults to the plugin's."""
        return connector_config_def(plugin.type, plugins, connector_version=plugin.version)

    @staticmethod
    def enriched(
        plugins: Plugins, plugin: PluginDesc, props: Mapping[str, Any], worker: WorkerConfig | None = None
    ) -> ConfigDef:
        """Everything a connector config of ``plugin`` is validated against (Kafka's
        ``enrichedConfigDef``): the framework keys with the worker's converter defaults,
        plus the keys of every listed transformation and predicate alias."""
        base = connector_config_def(
            plugin.type,
            plugins,
            connector_version=plugin.version,
            converters=worker_converter_defaults(plugins, props, worker),
        )
        return enrich(base, props, plugins)
