"""What the Replicator's connector asks of the two clusters, with librdkafka's admin client:
which source topics match and their shape, and destination topics made to follow them
(created with the source's partition count and configs, grown when the source grows,
their configs synced)."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from sluice.api.errors import ConnectError
from sluice.connectors.replicator.config import ReplicatorConfig
from sluice.kafka.security import check_authentication
from sluice.kafka.settings import librdkafka_config
from sluice.kafka.topics import create_missing_topics

__all__ = ["Destination", "Source", "TopicShape"]

log = logging.getLogger(__name__)

_TIMEOUT_S = 30.0

#: Topic configs that describe one cluster's brokers or are set by Replicator's own keys:
#: never copied (``message.timestamp.type`` comes from ``topic.timestamp.type``).
UNSYNCED_CONFIGS = frozenset(
    {
        "follower.replication.throttled.replicas",
        "leader.replication.throttled.replicas",
        "message.timestamp.type",
        "min.insync.replicas",
        "unclean.leader.election.enable",
    }
)


@dataclasses.dataclass(frozen=True)
class TopicShape:
    partitions: int
    replication_factor: int


def _admin(java_settings: dict[str, str], client: str) -> Any:
    """An admin client of one cluster, logged in (a refused login raises, naming the cluster)."""
    return check_authentication(librdkafka_config(java_settings, client))


def _cluster_id(admin: Any, where: str) -> str:
    from confluent_kafka import KafkaException

    try:
        cluster_id = admin.list_topics(timeout=_TIMEOUT_S).cluster_id
    except KafkaException as exc:
        raise ConnectError(f"Cannot reach the {where} cluster: {exc}") from exc
    if not cluster_id:
        raise ConnectError(f"The {where} cluster did not give its cluster id")
    return str(cluster_id)


def _dynamic_configs(admin: Any, topics: list[str]) -> dict[str, dict[str, str]]:
    """The configs set on each topic (not the brokers' defaults)."""
    from confluent_kafka.admin import ConfigResource, ConfigSource

    if not topics:
        return {}
    resources = [ConfigResource(ConfigResource.Type.TOPIC, t) for t in topics]
    out: dict[str, dict[str, str]] = {}
    for resource, future in admin.describe_configs(resources, request_timeout=_TIMEOUT_S).items():
        entries = future.result()
        out[resource.name] = {
            name: entry.value
            for name, entry in entries.items()
            if entry.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value and entry.value is not None
        }
    return out


class Source:
    """The source cluster, as the connector sees it."""

    def __init__(self, config: ReplicatorConfig) -> None:
        self.config = config
        self.admin = _admin(config.source_client, "the replicator's source cluster admin")
        self.cluster_id = _cluster_id(self.admin, "source")

    def matching_topics(self) -> dict[str, TopicShape]:
        """The topics to replicate now, with their shapes."""
        metadata = self.admin.list_topics(timeout=_TIMEOUT_S)
        out = {}
        for name, topic in metadata.topics.items():
            if topic.error is not None or not self.config.topics(name):
                continue
            partitions = topic.partitions
            replicas = max((len(p.replicas) for p in partitions.values()), default=1)
            out[name] = TopicShape(len(partitions), replicas)
        missing = [t for t in self.config.whitelist if t not in out and self.config.topics(t)]
        if missing:
            raise ConnectError(
                f"Topics in topic.whitelist do not exist in the source cluster (or cannot be described): "
                f"{', '.join(missing)}"
            )
        return out

    def configs(self, topics: list[str]) -> dict[str, dict[str, str]]:
        return {
            topic: {k: v for k, v in configs.items() if k not in UNSYNCED_CONFIGS}
            for topic, configs in _dynamic_configs(self.admin, topics).items()
        }


class Destination:
    """The destination cluster: its topics made to follow the source's."""

    def __init__(self, config: ReplicatorConfig) -> None:
        self.config = config
        self.admin = _admin(config.destination_client, "the replicator's destination cluster admin")
        self.cluster_id = _cluster_id(self.admin, "destination")

    def follow(self, shapes: dict[str, TopicShape], configs: dict[str, dict[str, str]]) -> list[str]:
        """Create the missing destination topics of the source topics ``shapes`` (their
        ``configs`` applied) and grow those with fewer partitions than the source when
        partitions are preserved. Returns the source topics whose destination topic is
        missing and was not created (``topic.auto.create=false``) or failed to be."""
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import NewPartitions

        existing = self.admin.list_topics(timeout=_TIMEOUT_S).topics
        requests: dict[str, tuple[int, int, dict[str, str]]] = {}  # destination topic -> its settings
        sources: dict[str, str] = {}  # destination topic -> source topic
        to_grow = []
        missing = []
        for source_topic, shape in sorted(shapes.items()):
            name = self.config.destination_topic(source_topic)
            topic = existing.get(name)
            if topic is None or topic.error is not None:
                if not self.config.auto_create:
                    missing.append(source_topic)
                    continue
                factor = self.config.replication_factor or shape.replication_factor
                settings = {**configs.get(source_topic, {}), "message.timestamp.type": self.config.timestamp_type}
                requests[name] = (shape.partitions, factor, settings)
                sources[name] = source_topic
            elif self.config.preserve_partitions and len(topic.partitions) < shape.partitions:
                to_grow.append(NewPartitions(name, shape.partitions))
        if requests:
            try:
                for name in create_missing_topics(self.admin, requests):
                    log.info("Created destination topic %s for %s", name, sources[name])
            except KafkaException as exc:  # retried later: those created meanwhile then exist
                log.warning("Could not create destination topics %s: %s", ", ".join(sorted(requests)), exc)
                missing.extend(sources.values())
        if to_grow:
            for name, future in self.admin.create_partitions(to_grow, request_timeout=_TIMEOUT_S).items():
                try:
                    future.result()
                    log.info("Grew destination topic %s to the source's partition count", name)
                except KafkaException as exc:
                    log.warning("Could not add partitions to destination topic %s: %s", name, exc)
        return missing

    def sync_configs(self, configs: dict[str, dict[str, str]]) -> None:
        """Set on each destination topic the configs its source topic has and it lacks or
        holds with another value."""
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

        names = {self.config.destination_topic(t): t for t in configs}
        current = _dynamic_configs(self.admin, sorted(names))
        resources = []
        for name, source_topic in sorted(names.items()):
            wanted = configs[source_topic]
            changes = [
                ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET)
                for k, v in sorted(wanted.items())
                if current.get(name, {}).get(k) != v
            ]
            if changes:
                resources.append(ConfigResource(ConfigResource.Type.TOPIC, name, incremental_configs=changes))
        if not resources:
            return
        for resource, future in self.admin.incremental_alter_configs(resources, request_timeout=_TIMEOUT_S).items():
            try:
                future.result()
                log.info("Synced the configs of destination topic %s", resource.name)
            except Exception as exc:  # noqa: BLE001 - one topic's refusal does not stop the others
                log.warning("Could not sync the configs of destination topic %s: %s", resource.name, exc)
