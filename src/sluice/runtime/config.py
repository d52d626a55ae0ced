"""Worker and connector configuration with Kafka Connect's keys and defaults.

Worker properties keep Kafka's keys (``bootstrap.servers``, ``key.converter``,
``offset.storage.file.filename`` …); Sluice's own knobs live under ``sluice.`` and
everything under ``spark.`` goes to the SparkSession.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sluice.api.config import (
    ConfigDef,
    ConfigType,
    Importance,
    NonEmptyStringWithoutControlChars,
    Range,
    ValidString,
    Width,
)
from sluice.api.errors import ConfigError

__all__ = [
    "ConnectorConfigDefs",
    "WorkerConfig",
    "converter_props",
]

SIMPLE_HEADER_CONVERTER = "org.apache.kafka.connect.storage.SimpleHeaderConverter"


def _worker_def(standalone: bool) -> ConfigDef:
    d = ConfigDef()
    d.define("bootstrap.servers", ConfigType.LIST, "localhost:9092", importance=Importance.HIGH,
             documentation="Kafka bootstrap servers.")
    d.define("key.converter", ConfigType.CLASS, importance=Importance.HIGH,
             documentation="Converter class for record keys.")
    d.define("value.converter", ConfigType.CLASS, importance=Importance.HIGH,
             documentation="Converter class for record values.")
    d.define("header.converter", ConfigType.CLASS, SIMPLE_HEADER_CONVERTER, importance=Importance.LOW,
             documentation="Converter class for header values.")
    d.define("task.shutdown.graceful.timeout.ms", ConfigType.LONG, 5000, importance=Importance.LOW,
             documentation="How long to wait for tasks to shut down gracefully (total).")
    d.define("offset.flush.interval.ms", ConfigType.LONG, 60000, importance=Importance.LOW,
             documentation="Upper bound between offset commits (Sluice commits after every batch).")
    d.define("offset.flush.timeout.ms", ConfigType.LONG, 5000, importance=Importance.LOW,
             documentation="Maximum wait for an offset commit.")
    d.define("plugin.path", ConfigType.LIST, None, importance=Importance.LOW,
             documentation="Directories holding Python plugin modules and packages.")
    d.define("listeners", ConfigType.LIST, "http://:8083", importance=Importance.LOW,
             documentation="REST listeners, protocol://host:port.")
    d.define("rest.advertised.host.name", ConfigType.STRING, None, importance=Importance.LOW, documentation="")
    d.define("rest.advertised.port", ConfigType.INT, None, importance=Importance.LOW, documentation="")
    d.define("rest.advertised.listener", ConfigType.STRING, None, importance=Importance.LOW, documentation="")
    d.define("sluice.source.batch.max.records", ConfigType.INT, 500_000, Range.at_least(1), Importance.LOW,
             "Most records one source micro-batch (one Spark job) carries; a batch ends earlier "
             "as soon as the task has nothing more to hand over.")
    d.define("sluice.source.batch.max.wait.ms", ConfigType.INT, 500, Range.at_least(1), Importance.LOW,
             "How long a source micro-batch waits for its first records.")
    d.define("sluice.sink.batch.max.records", ConfigType.INT, 500_000, Range.at_least(1), Importance.LOW,
             "Most records one sink micro-batch reads per partition.")
    d.define("sluice.sink.poll.interval.ms", ConfigType.INT, 100, Range.at_least(1), Importance.LOW,
             "How often an idle sink task checks Kafka for new records.")
    if standalone:
        d.define("offset.storage.file.filename", ConfigType.STRING, importance=Importance.HIGH,
                 documentation="File to store source connector offsets in.")
        d.define("sluice.config.storage.file.filename", ConfigType.STRING, None, importance=Importance.LOW,
                 documentation="File keeping REST-created connectors and target states across restarts "
                 "(default: the offsets file name plus '.connectors.json').")
    return d


@dataclass(frozen=True)
class WorkerConfig:
    """Parsed worker properties plus the raw map (converter and client prefixes)."""

    raw: dict[str, str]
    values: dict[str, Any]

    @classmethod
    def standalone(cls, props: Mapping[str, str]) -> WorkerConfig:
        raw = {str(k): str(v) for k, v in props.items()}
        return cls(raw, _worker_def(True).parse(raw))

    def get(self, key: str) -> Any:
        return self.values[key]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(self.values["bootstrap.servers"])

    def spark_conf(self) -> dict[str, str]:
        return {k: v for k, v in self.raw.items() if k.startswith("spark.")}

    def prefixed(self, prefix: str) -> dict[str, str]:
        return {k[len(prefix):]: v for k, v in self.raw.items() if k.startswith(prefix)}

    @property
    def plugin_path(self) -> list[str]:
        return list(self.values.get("plugin.path") or [])


def converter_props(config: Mapping[str, str], prefix: str) -> dict[str, str]:
    """``<prefix>.x=y`` → ``{"x": "y"}`` for a converter (``prefix`` e.g. ``key.converter``)."""
    head = prefix + "."
    return {k[len(head):]: v for k, v in config.items() if k.startswith(head)}


# --------------------------------------------------------------------------- connectors

COMMON_GROUP = "Common"
TRANSFORMS_GROUP = "Transforms"
PREDICATES_GROUP = "Predicates"
ERROR_GROUP = "Error Handling"
TOPIC_CREATION_GROUP = "Topic Creation"
EXACTLY_ONCE_GROUP = "Exactly Once Support"
OFFSETS_TOPIC_GROUP = "offsets.topic"


def _unique_list(name: str, value: Any) -> None:
    if value and len(set(value)) != len(value):
        raise ConfigError(name, value, "Duplicate alias provided.")


def _common_def() -> ConfigDef:
    d = ConfigDef()
    order = iter(range(1, 100))
    d.define("name", ConfigType.STRING, validator=NonEmptyStringWithoutControlChars(), importance=Importance.HIGH,
             documentation="Globally unique name to use for this connector.", group=COMMON_GROUP,
             order_in_group=next(order), width=Width.MEDIUM, display_name="Connector name")
    d.define("connector.class", ConfigType.STRING, importance=Importance.HIGH,
             documentation="Name or alias of the class for this connector: a Python path "
             "(package.module.Class) or Kafka's class name for a built-in connector.",
             group=COMMON_GROUP, order_in_group=next(order), width=Width.LONG, display_name="Connector class")
    d.define("tasks.max", ConfigType.INT, 1, Range.at_least(1), Importance.HIGH,
             "Maximum number of tasks to use for this connector.", COMMON_GROUP, next(order), Width.SHORT,
             "Tasks max")
    d.define("tasks.max.enforce", ConfigType.BOOLEAN, True, None, Importance.LOW,
             "(Deprecated) Whether to fail a connector that generates more task configs than tasks.max.",
             COMMON_GROUP, next(order), Width.SHORT, "Enforce tasks max")
    d.define("key.converter", ConfigType.CLASS, None, None, Importance.LOW,
             "Converter class for keys; overrides the worker's.", COMMON_GROUP, next(order), Width.SHORT,
             "Key converter class")
    d.define("value.converter", ConfigType.CLASS, None, None, Importance.LOW,
             "Converter class for values; overrides the worker's.", COMMON_GROUP, next(order), Width.SHORT,
             "Value converter class")
    d.define("header.converter", ConfigType.CLASS, None, None, Importance.LOW,
             "Converter class for header values; overrides the worker's.", COMMON_GROUP, next(order),
             Width.SHORT, "Header converter class")
    d.define("config.action.reload", ConfigType.STRING, "restart", ValidString.in_("none", "restart"),
             Importance.LOW, "What to do when external configuration providers change a value.", COMMON_GROUP,
             next(order), Width.MEDIUM, "Reload Action")
    d.define("transforms", ConfigType.LIST, "", _unique_list, Importance.LOW,
             "Aliases for the transformations to be applied to records.", TRANSFORMS_GROUP, 1, Width.LONG,
             "Transforms")
    d.define("predicates", ConfigType.LIST, "", _unique_list, Importance.LOW,
             "Aliases for the predicates used by transformations.", PREDICATES_GROUP, 1, Width.LONG, "Predicates")
    err = iter(range(1, 100))
    d.define("errors.retry.timeout", ConfigType.LONG, 0, None, Importance.MEDIUM,
             "The maximum duration in milliseconds that a failed operation will be reattempted.",
             ERROR_GROUP, next(err), Width.MEDIUM, "Retry Timeout for Errors")
    d.define("errors.retry.delay.max.ms", ConfigType.LONG, 60000, None, Importance.MEDIUM,
             "The maximum duration in milliseconds between consecutive retry attempts.", ERROR_GROUP, next(err),
             Width.MEDIUM, "Maximum Delay Between Retries for Errors")
    d.define("errors.tolerance", ConfigType.STRING, "none", ValidString.in_("none", "all"), Importance.MEDIUM,
             "Behavior for tolerating errors during connector operation.", ERROR_GROUP, next(err), Width.SHORT,
             "Error Tolerance")
    d.define("errors.log.enable", ConfigType.BOOLEAN, False, None, Importance.MEDIUM,
             "If true, write each error and the details of the failed operation to the log.", ERROR_GROUP,
             next(err), Width.SHORT, "Log Errors")
    d.define("errors.log.include.messages", ConfigType.BOOLEAN, False, None, Importance.MEDIUM,
             "Whether to include the record that caused a failure in the log.", ERROR_GROUP, next(err),
             Width.SHORT, "Log Error Details")
    return d


def _sink_def() -> ConfigDef:
    d = _common_def()
    d.define("topics", ConfigType.LIST, "", None, Importance.HIGH,
             "List of topics to consume, separated by commas", COMMON_GROUP, 4, Width.LONG, "Topics")
    d.define("topics.regex", ConfigType.STRING, "", None, Importance.HIGH,
             "Regular expression giving topics to consume.", COMMON_GROUP, 4, Width.LONG, "Topics regex")
    d.define("errors.deadletterqueue.topic.name", ConfigType.STRING, "", None, Importance.MEDIUM,
             "The name of the topic to be used as the dead letter queue (DLQ).", ERROR_GROUP, 6, Width.MEDIUM,
             "Dead Letter Queue Topic Name")
    d.define("errors.deadletterqueue.topic.replication.factor", ConfigType.SHORT, 3, None, Importance.MEDIUM,
             "Replication factor used to create the dead letter queue topic when it doesn't already exist.",
             ERROR_GROUP, 7, Width.MEDIUM, "Dead Letter Queue Topic Replication Factor")
    d.define("errors.deadletterqueue.context.headers.enable", ConfigType.BOOLEAN, False, None, Importance.MEDIUM,
             "If true, add headers containing error context to the messages written to the dead letter queue.",
             ERROR_GROUP, 8, Width.MEDIUM, "Enable Error Context Headers")
    return d


def _source_def() -> ConfigDef:
    d = _common_def()
    d.define("topic.creation.groups", ConfigType.LIST, "", _unique_list, Importance.LOW,
             "Groups of configurations for topics created by source connectors", TOPIC_CREATION_GROUP, 1,
             Width.LONG, "Topic Creation Groups")
    d.define("exactly.once.support", ConfigType.STRING, "requested",
             ValidString(["requested", "required"], case_sensitive=False), Importance.MEDIUM,
             "Permitted values are requested, required.", EXACTLY_ONCE_GROUP, 1, Width.SHORT,
             "Exactly once support")
    d.define("transaction.boundary", ConfigType.STRING, "poll",
             ValidString(["poll", "interval", "connector"], case_sensitive=False), Importance.MEDIUM,
             "Permitted values are poll, interval, connector.", EXACTLY_ONCE_GROUP, 2, Width.SHORT,
             "Transaction Boundary")
    d.define("transaction.boundary.interval.ms", ConfigType.LONG, None, None, Importance.LOW,
             "If 'transaction.boundary' is set to 'interval', determines the interval for producer transaction "
             "commits.", EXACTLY_ONCE_GROUP, 3, Width.SHORT, "Transaction boundary interval")
    d.define("offsets.storage.topic", ConfigType.STRING, None, None, Importance.LOW,
             "The name of a separate offsets topic to use for this connector.", OFFSETS_TOPIC_GROUP, 1,
             Width.LONG, "Offsets topic")
    return d


class ConnectorConfigDefs:
    """The framework's connector ConfigDefs (``SinkConnectorConfig`` / ``SourceConnectorConfig``)."""

    SINK = _sink_def()
    SOURCE = _source_def()
    SINK_GROUPS = [COMMON_GROUP, TRANSFORMS_GROUP, PREDICATES_GROUP, ERROR_GROUP]
    SOURCE_GROUPS = [COMMON_GROUP, TRANSFORMS_GROUP, PREDICATES_GROUP, ERROR_GROUP, TOPIC_CREATION_GROUP,
                     EXACTLY_ONCE_GROUP, OFFSETS_TOPIC_GROUP]

    @classmethod
    def for_type(cls, kind: str) -> ConfigDef:
        return cls.SINK if kind == "sink" else cls.SOURCE
