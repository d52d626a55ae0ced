"""The framework's connector config definitions, as Kafka Connect 4.x's
``ConnectorConfig``, ``SinkConnectorConfig`` and ``SourceConnectorConfig`` define them:
same names, order, types, defaults, validators, groups, orders in group, widths and
display names (the REST validate endpoint shows all of them). The documentation strings
are Sluice's own.

:func:`connector_config_def` gives a sink's or a source's keys; :class:`ConnectorConfigDefs`
adds the worker's converter defaults and each transformation and predicate alias's keys
(:mod:`~sluice.runtime.config.enrichment`) for validation and the plugin config endpoint.
"""

from __future__ import annotations

import contextlib
import itertools
import re
from collections.abc import Mapping
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
    ValidList,
    ValidString,
    Width,
)
from sluice.api.errors import ConfigError
from sluice.runtime.config.enrichment import enrich
from sluice.runtime.config.installed_plugins import (
    PluginClassRecommender,
    PluginVersionRecommender,
    implements_plugin,
    installed_version,
)
from sluice.runtime.config.keys import (
    COMMON_GROUP,
    CONFIG_RELOAD_ACTION_CONFIG,
    CONNECTOR_CLASS_CONFIG,
    CONNECTOR_VERSION_CONFIG,
    CONVERTER_KEYS,
    DLQ_CONTEXT_HEADERS_ENABLE_CONFIG,
    DLQ_TOPIC_NAME_CONFIG,
    DLQ_TOPIC_REPLICATION_FACTOR_CONFIG,
    ERROR_GROUP,
    ERRORS_LOG_ENABLE_CONFIG,
    ERRORS_LOG_INCLUDE_MESSAGES_CONFIG,
    ERRORS_RETRY_MAX_DELAY_CONFIG,
    ERRORS_RETRY_TIMEOUT_CONFIG,
    ERRORS_TOLERANCE_CONFIG,
    EXACTLY_ONCE_GROUP,
    EXACTLY_ONCE_SUPPORT_CONFIG,
    HEADER_CONVERTER_CLASS_CONFIG,
    KEY_CONVERTER_CLASS_CONFIG,
    NAME_CONFIG,
    OFFSETS_TOPIC_CONFIG,
    OFFSETS_TOPIC_GROUP,
    PREDICATES_CONFIG,
    PREDICATES_GROUP,
    TASKS_MAX_CONFIG,
    TASKS_MAX_ENFORCE_CONFIG,
    TOPIC_CREATION_GROUP,
    TOPIC_CREATION_GROUPS_CONFIG,
    TOPICS_CONFIG,
    TOPICS_REGEX_CONFIG,
    TRANSACTION_BOUNDARY_CONFIG,
    TRANSACTION_BOUNDARY_INTERVAL_CONFIG,
    TRANSFORMS_CONFIG,
    TRANSFORMS_GROUP,
    VALUE_CONVERTER_CLASS_CONFIG,
)
from sluice.runtime.config.versions import PLUGIN_VERSION_VALIDATOR, default_version
from sluice.runtime.config.worker import WorkerConfig
from sluice.runtime.plugins import PluginDesc, Plugins

__all__ = ["ConnectorConfigDefs", "ConverterDefault", "connector_config_def", "worker_converter_defaults"]


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


@dataclass(frozen=True)
class ConverterDefault:
    """What a connector config's ``<x>.converter`` and ``<x>.converter.plugin.version``
    default to: the worker's converter and its version (Kafka shows them as the defaults)."""

    class_name: str | None = None
    version: str | None = None


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
        recommender=PluginVersionRecommender(plugins, CONNECTOR_CLASS_CONFIG, ("source", "sink")),
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
            CompositeValidator.of(implements_plugin(plugins, kind)),
            Importance.LOW,
            doc,
            COMMON_GROUP,
            next(order),
            Width.SHORT,
            display,
            recommender=PluginClassRecommender(plugins, kind),
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
            recommender=PluginVersionRecommender(plugins, class_key, (kind,), needs_class=True),
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
            version = installed_version(plugins, props.get(class_key), (kind,))
        elif worker is not None and worker.raw.get(version_key):
            version = worker.raw[version_key]
        else:
            version = installed_version(plugins, worker_class, (kind,))
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
