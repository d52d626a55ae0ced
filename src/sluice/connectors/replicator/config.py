"""The configuration of Confluent's Replicator (``ReplicatorSourceConnector``), with the
keys of its configuration reference, and what Sluice does with them.

Each key keeps Confluent's name, type and default. The source cluster's clients take
``src.kafka.*`` (every client) and ``src.consumer.*`` (the consumer) as Java client
settings; the destination's admin client takes ``dest.kafka.*``; security settings given
the Java way (``ssl.truststore.*``, ``sasl.jaas.config``) are translated for librdkafka as
the worker's own are. What Sluice's Replicator does not do is refused by
:func:`refusals`, naming the key: consumer offset translation (it needs Confluent's
consumer interceptor in the applications), schema translation, provenance filter
overrides, and converters other than the byte-array ones that copy records byte for byte.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from sluice.api.config import ConfigDef, ConfigType, Importance, Range, ValidString

__all__ = [
    "BYTE_ARRAY_CONVERTERS",
    "CONFIG_DEF",
    "INTERNAL_TOPICS",
    "ReplicatorConfig",
    "TopicFilter",
    "refusals",
]

TOPIC_REGEX = "topic.regex"
TOPIC_WHITELIST = "topic.whitelist"
TOPIC_BLACKLIST = "topic.blacklist"
TOPIC_POLL_INTERVAL_MS = "topic.poll.interval.ms"
OFFSET_TOPIC_COMMIT = "offset.topic.commit"
OFFSET_START = "offset.start"
SRC_KEY_CONVERTER = "src.key.converter"
SRC_VALUE_CONVERTER = "src.value.converter"
SRC_HEADER_CONVERTER = "src.header.converter"
SRC_BOOTSTRAP_SERVERS = "src.kafka.bootstrap.servers"
DEST_BOOTSTRAP_SERVERS = "dest.kafka.bootstrap.servers"
TOPIC_RENAME_FORMAT = "topic.rename.format"
TOPIC_AUTO_CREATE = "topic.auto.create"
TOPIC_PRESERVE_PARTITIONS = "topic.preserve.partitions"
TOPIC_CREATE_BACKOFF_MS = "topic.create.backoff.ms"
TOPIC_CONFIG_SYNC = "topic.config.sync"
TOPIC_CONFIG_SYNC_INTERVAL_MS = "topic.config.sync.interval.ms"
TOPIC_TIMESTAMP_TYPE = "topic.timestamp.type"
DEST_TOPIC_REPLICATION_FACTOR = "dest.topic.replication.factor"
PROVENANCE_HEADER_ENABLE = "provenance.header.enable"
PROVENANCE_HEADER_FILTER_OVERRIDES = "provenance.header.filter.overrides"
OFFSET_TIMESTAMPS_COMMIT = "offset.timestamps.commit"
OFFSET_TRANSLATOR_TASKS_MAX = "offset.translator.tasks.max"

SRC_KAFKA_PREFIX = "src.kafka."
SRC_CONSUMER_PREFIX = "src.consumer."
DEST_KAFKA_PREFIX = "dest.kafka."

REPLICATOR_BYTE_ARRAY_CONVERTER = "io.confluent.connect.replicator.util.ByteArrayConverter"
#: The converters that copy keys, values and headers byte for byte, by every name they go by.
BYTE_ARRAY_CONVERTERS = frozenset(
    {
        REPLICATOR_BYTE_ARRAY_CONVERTER,
        "org.apache.kafka.connect.converters.ByteArrayConverter",
        "ByteArrayConverter",
        "ByteArray",
        "sluice.converters.bytearray.ByteArrayConverter",
    }
)

#: Kafka's own topics, never copied even when a pattern matches them (as Confluent's).
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__consumer_timestamps"})

#: Keys of Replicator features Sluice does not have, refused when set to anything but
#: their "off" value (the value a config may keep and still mean the same to Sluice).
_NOT_SUPPORTED: dict[str, tuple[set[str], str]] = {
    OFFSET_TIMESTAMPS_COMMIT: (
        {"false"},
        "consumer offset translation (Confluent's consumer timestamps interceptor) is not supported; "
        "set it to false or leave it out",
    ),
    OFFSET_TRANSLATOR_TASKS_MAX: (
        {"-1", "0"},
        "consumer offset translation is not supported; leave it out",
    ),
    PROVENANCE_HEADER_FILTER_OVERRIDES: ({""}, "provenance filter overrides are not supported; leave it out"),
    "schema.registry.url": ({""}, "schema translation between registries is not supported; leave it out"),
    "schema.registry.topic": ({""}, "schema translation between registries is not supported; leave it out"),
    "schema.subject.translator.class": ({""}, "schema translation is not supported; leave it out"),
    "src.consumer.interceptor.classes": ({""}, "Java interceptors cannot run in Sluice's Kafka clients"),
}

_CONVERTER_KEYS = (
    "key.converter",
    "value.converter",
    "header.converter",
    SRC_KEY_CONVERTER,
    SRC_VALUE_CONVERTER,
    SRC_HEADER_CONVERTER,
)

_SOURCE = "Source Topics"
_CONVERSION = "Source Data Conversion"
_DESTINATION = "Destination Topics"
_PROVENANCE = "Provenance"

CONFIG_DEF = (
    ConfigDef()
    .define(
        TOPIC_REGEX,
        ConfigType.STRING,
        None,
        importance=Importance.HIGH,
        group=_SOURCE,
        documentation="Regex of topics to replicate to the destination cluster (a Java regular expression "
        "matching the whole name).",
    )
    .define(
        TOPIC_WHITELIST,
        ConfigType.LIST,
        "",
        importance=Importance.HIGH,
        group=_SOURCE,
        documentation="Whitelist of topics to be replicated; each must exist in the source cluster when the "
        "connector starts.",
    )
    .define(
        TOPIC_BLACKLIST,
        ConfigType.LIST,
        "",
        importance=Importance.HIGH,
        group=_SOURCE,
        documentation="Topics to exclude from replication (applied before the whitelist and the regex).",
    )
    .define(
        TOPIC_POLL_INTERVAL_MS,
        ConfigType.INT,
        120000,
        Range(0, None),
        importance=Importance.LOW,
        group=_SOURCE,
        documentation="How often to poll the source cluster for new topics matching topic.whitelist or "
        "topic.regex (0: never after start-up).",
    )
    .define(
        OFFSET_TOPIC_COMMIT,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.MEDIUM,
        group=_SOURCE,
        documentation="Whether to commit Replicator's consumer offsets to the source cluster (group "
        "src.consumer.group.id, by default the connector's name) after the records were written to the "
        "destination and their Connect offsets stored; they show Replicator's lag.",
    )
    .define(
        OFFSET_START,
        ConfigType.STRING,
        "connect",
        ValidString(["connect", "consumer"]),
        importance=Importance.LOW,
        group=_SOURCE,
        documentation="Where to start a partition without Connect offsets: 'connect' starts where "
        "src.consumer.auto.offset.reset says (earliest by default); 'consumer' first uses the offset committed "
        "by src.consumer.group.id in the source cluster.",
    )
    .define(
        SRC_KEY_CONVERTER,
        ConfigType.STRING,
        REPLICATOR_BYTE_ARRAY_CONVERTER,
        importance=Importance.LOW,
        group=_CONVERSION,
        documentation="Converter for the keys read from the source cluster (byte-array converters only).",
    )
    .define(
        SRC_VALUE_CONVERTER,
        ConfigType.STRING,
        REPLICATOR_BYTE_ARRAY_CONVERTER,
        importance=Importance.LOW,
        group=_CONVERSION,
        documentation="Converter for the values read from the source cluster (byte-array converters only).",
    )
    .define(
        SRC_HEADER_CONVERTER,
        ConfigType.STRING,
        REPLICATOR_BYTE_ARRAY_CONVERTER,
        importance=Importance.LOW,
        group=_CONVERSION,
        documentation="Converter for the headers read from the source cluster (byte-array converters only).",
    )
    .define(
        SRC_BOOTSTRAP_SERVERS,
        ConfigType.LIST,
        importance=Importance.HIGH,
        group=_SOURCE,
        documentation="host:port pairs of the source cluster; other src.kafka.* keys are its clients' "
        "settings (security included), src.consumer.* its consumer's.",
    )
    .define(
        DEST_BOOTSTRAP_SERVERS,
        ConfigType.LIST,
        importance=Importance.HIGH,
        group=_DESTINATION,
        documentation="host:port pairs of the destination cluster, where topics are created and their "
        "configs synced; other dest.kafka.* keys are its admin client's settings. Records are written by "
        "the worker's producer (producer.override.* to point it elsewhere).",
    )
    .define(
        TOPIC_RENAME_FORMAT,
        ConfigType.STRING,
        "${topic}",
        importance=Importance.HIGH,
        group=_DESTINATION,
        documentation="The destination topic's name; ${topic} stands for the source topic's.",
    )
    .define(
        TOPIC_AUTO_CREATE,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        group=_DESTINATION,
        documentation="Whether to create destination topics (with the source's partition count and "
        "configs) when they do not exist; when false, a missing destination topic fails the connector.",
    )
    .define(
        TOPIC_PRESERVE_PARTITIONS,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        group=_DESTINATION,
        documentation="Whether each record goes to the partition it came from (destination topics grow to "
        "the source's partition count); when false the producer's partitioner picks.",
    )
    .define(
        TOPIC_CREATE_BACKOFF_MS,
        ConfigType.INT,
        120000,
        Range(0, None),
        importance=Importance.LOW,
        group=_DESTINATION,
        documentation="Time to wait before retrying a failed creation of a destination topic.",
    )
    .define(
        TOPIC_CONFIG_SYNC,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        group=_DESTINATION,
        documentation="Whether to copy the source topics' configs to the destination topics periodically.",
    )
    .define(
        TOPIC_CONFIG_SYNC_INTERVAL_MS,
        ConfigType.INT,
        120000,
        Range(0, None),
        importance=Importance.LOW,
        group=_DESTINATION,
        documentation="How often to check the source topics' configs for changes.",
    )
    .define(
        TOPIC_TIMESTAMP_TYPE,
        ConfigType.STRING,
        "CreateTime",
        ValidString(["CreateTime", "LogAppendTime"]),
        importance=Importance.LOW,
        group=_DESTINATION,
        documentation="The message.timestamp.type of the topics created in the destination cluster.",
    )
    .define(
        DEST_TOPIC_REPLICATION_FACTOR,
        ConfigType.INT,
        0,
        Range(0, None),
        importance=Importance.LOW,
        group=_DESTINATION,
        documentation="The replication factor of the topics created in the destination (0: the source topic's).",
    )
    .define(
        PROVENANCE_HEADER_ENABLE,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.LOW,
        group=_PROVENANCE,
        documentation="Whether to add a provenance header (__replicator_id: origin cluster, origin topic, "
        "time of the first copy) to each record, and skip the records whose provenance says they came from "
        "the destination topic: two clusters can replicate each other without loops.",
    )
    .define(
        PROVENANCE_HEADER_FILTER_OVERRIDES,
        ConfigType.STRING,
        "",
        importance=Importance.LOW,
        group=_PROVENANCE,
        documentation="Not supported by Sluice (refused when set).",
    )
    .define(
        OFFSET_TIMESTAMPS_COMMIT,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="Consumer offset translation is not supported by Sluice: refused when set to true.",
    )
    .define(
        OFFSET_TRANSLATOR_TASKS_MAX,
        ConfigType.INT,
        -1,
        importance=Importance.LOW,
        documentation="Consumer offset translation is not supported by Sluice: refused when set.",
    )
)


def refusals(config: Mapping[str, Any]) -> dict[str, str]:
    """The keys of ``config`` that ask for what Sluice's Replicator does not do, each with
    the reason; empty when there is none."""
    out: dict[str, str] = {}
    for key, (allowed, reason) in _NOT_SUPPORTED.items():
        value = config.get(key)
        if value is not None and str(value).strip().lower() not in allowed:
            out[key] = reason
    for key in _CONVERTER_KEYS:
        value = config.get(key)
        if key.startswith("src.") and value is None:
            continue  # the default is Replicator's byte-array converter
        if value is None or str(value).strip() not in BYTE_ARRAY_CONVERTERS:
            out[key] = (
                f"Replicator copies records byte for byte: set {key}={REPLICATOR_BYTE_ARRAY_CONVERTER} "
                "(or Kafka's ByteArrayConverter)"
            )
    return out


def _prefixed(config: Mapping[str, Any], prefix: str) -> dict[str, str]:
    return {k[len(prefix) :]: str(v) for k, v in config.items() if k.startswith(prefix) and v is not None}


@dataclasses.dataclass(frozen=True)
class TopicFilter:
    """Which source topics are replicated: none in the blacklist; those in the whitelist or
    matched (whole name) by the regex; never Kafka's internal topics."""

    whitelist: frozenset[str]
    blacklist: frozenset[str]
    regex: re.Pattern[str] | None

    def __call__(self, topic: str) -> bool:
        if topic in INTERNAL_TOPICS or topic in self.blacklist:
            return False
        return topic in self.whitelist or (self.regex is not None and self.regex.fullmatch(topic) is not None)


@dataclasses.dataclass(frozen=True)
class ReplicatorConfig:
    """A parsed Replicator configuration."""

    topics: TopicFilter
    whitelist: tuple[str, ...]
    topic_poll_interval_s: float
    offset_topic_commit: bool
    offset_start: str
    rename_format: str
    auto_create: bool
    preserve_partitions: bool
    create_backoff_s: float
    config_sync: bool
    config_sync_interval_s: float
    timestamp_type: str
    replication_factor: int
    provenance: bool
    source_client: dict[str, str]  # Java settings of every source client (src.kafka.*)
    source_consumer: dict[str, str]  # ... and of its consumer (src.kafka.* then src.consumer.*)
    destination_client: dict[str, str]  # Java settings of the destination's admin client

    @classmethod
    def parse(cls, props: Mapping[str, str]) -> ReplicatorConfig:
        values = CONFIG_DEF.parse(props)
        regex = values[TOPIC_REGEX]
        source_client = _prefixed(props, SRC_KAFKA_PREFIX)
        source_client["bootstrap.servers"] = ",".join(values[SRC_BOOTSTRAP_SERVERS])
        destination_client = _prefixed(props, DEST_KAFKA_PREFIX)
        destination_client["bootstrap.servers"] = ",".join(values[DEST_BOOTSTRAP_SERVERS])
        whitelist = tuple(t for t in values[TOPIC_WHITELIST] if t)
        return cls(
            topics=TopicFilter(
                frozenset(whitelist),
                frozenset(t for t in values[TOPIC_BLACKLIST] if t),
                re.compile(regex) if regex else None,
            ),
            whitelist=whitelist,
            topic_poll_interval_s=values[TOPIC_POLL_INTERVAL_MS] / 1000.0,
            offset_topic_commit=values[OFFSET_TOPIC_COMMIT],
            offset_start=values[OFFSET_START],
            rename_format=values[TOPIC_RENAME_FORMAT],
            auto_create=values[TOPIC_AUTO_CREATE],
            preserve_partitions=values[TOPIC_PRESERVE_PARTITIONS],
            create_backoff_s=values[TOPIC_CREATE_BACKOFF_MS] / 1000.0,
            config_sync=values[TOPIC_CONFIG_SYNC],
            config_sync_interval_s=values[TOPIC_CONFIG_SYNC_INTERVAL_MS] / 1000.0,
            timestamp_type=values[TOPIC_TIMESTAMP_TYPE],
            replication_factor=values[DEST_TOPIC_REPLICATION_FACTOR],
            provenance=values[PROVENANCE_HEADER_ENABLE],
            source_client=source_client,
            source_consumer={**source_client, **_prefixed(props, SRC_CONSUMER_PREFIX)},
            destination_client=destination_client,
        )

    def destination_topic(self, source_topic: str) -> str:
        return self.rename_format.replace("${topic}", source_topic)
