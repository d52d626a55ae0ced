"""Topic creation: missing topics created with their settings (:func:`create_missing_topics`),
and for source connectors (``topic.creation.*``) on the executor that writes the records: a
topic is created the first time a task writes to it, with the settings of the first group
that matches it (the ``default`` group last), as Kafka Connect's ``TopicCreation`` does.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sluice.kafka.clients import LIBRDKAFKA, KafkaClients

log = logging.getLogger(__name__)

__all__ = ["TopicCreationGroup", "TopicCreationSpec", "TopicCreator", "create_missing_topics"]

DEFAULT_GROUP = "default"


@dataclass(frozen=True)
class TopicCreationGroup:
    name: str
    replication_factor: int  # -1: the broker's default
    partitions: int  # -1: the broker's default
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    topic_configs: tuple[tuple[str, str], ...] = ()

    def matches(self, topic: str) -> bool:
        """The default group takes every topic; another one the topics one of its include
        patterns matches (whole name, as Java's ``matches``) and no exclude pattern does."""
        if self.name == DEFAULT_GROUP:
            return True
        if any(re.fullmatch(p, topic) for p in self.exclude):
            return False
        return any(re.fullmatch(p, topic) for p in self.include)


@dataclass(frozen=True)
class TopicCreationSpec:
    """The groups in the connector's order with ``default`` last, and the
    librdkafka settings of the admin client that creates the topics."""

    groups: tuple[TopicCreationGroup, ...]
    admin_config: dict[str, str] = field(default_factory=dict)

    def group_for(self, topic: str) -> TopicCreationGroup:
        return next(g for g in self.groups if g.matches(topic))


class TopicCreator:
    """Creates each topic a task writes to once, when it does not exist yet."""

    def __init__(self, spec: TopicCreationSpec, clients: KafkaClients = LIBRDKAFKA) -> None:
        self.spec = spec
        self.known: set[str] = set()
        self._clients = clients
        self._admin: Any = None

    def ensure(self, topics: Iterable[str]) -> None:
        new = sorted(set(topics) - self.known)
        if not new:
            return
        if self._admin is None:
            self._admin = self._clients.admin(dict(self.spec.admin_config))
        requests = {}
        for topic in new:
            group = self.spec.group_for(topic)
            requests[topic] = (group.partitions, group.replication_factor, dict(group.topic_configs))
        for topic in create_missing_topics(self._admin, requests):
            log.info("Created topic %s (topic creation group %s)", topic, self.spec.group_for(topic).name)
        self.known.update(new)

    def close(self) -> None:
        """Let the admin client go (librdkafka's threads end with it); ``ensure`` makes a new
        one if called again."""
        self._admin = None


def create_missing_topics(admin: Any, requests: dict[str, tuple[int, int, dict[str, str]]]) -> list[str]:
    """Create the topics of ``requests`` (``topic: (partitions, replication factor,
    configs)``) that do not exist yet; one created meanwhile by someone else is fine.
    Returns the topics this call created."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import NewTopic

    existing = admin.list_topics(timeout=30).topics
    missing = [
        NewTopic(topic, partitions, factor, config=configs)
        for topic, (partitions, factor, configs) in sorted(requests.items())
        if topic not in existing
    ]
    if not missing:
        return []
    created = []
    for topic, future in admin.create_topics(missing, request_timeout=30).items():
        try:
            future.result()
            created.append(topic)
        except KafkaException as exc:
            if "TOPIC_ALREADY_EXISTS" not in str(exc):
                raise
    return created
