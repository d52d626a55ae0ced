"""librdkafka settings: those of a Java client config that librdkafka shares, with its
security settings translated, and what Kafka Connect's delivery contract asks of a task's
producer and consumer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sluice.kafka.security import librdkafka_security

__all__ = ["consumer_settings", "librdkafka_config", "librdkafka_consumer_config", "producer_settings"]

_LIBRDKAFKA_PRODUCER_KEYS = frozenset(
    {
        "bootstrap.servers",
        "acks",
        "client.id",
        "compression.type",
        "linger.ms",
        "batch.size",
        "delivery.timeout.ms",
        "request.timeout.ms",
        "retries",
        "retry.backoff.ms",
        "enable.idempotence",
    }
)


_LIBRDKAFKA_CONSUMER_KEYS = frozenset(
    {
        "bootstrap.servers",
        "client.id",
        "group.id",
        "auto.offset.reset",
        "fetch.min.bytes",
        "fetch.max.bytes",
        "fetch.wait.max.ms",
        "max.partition.fetch.bytes",
        "isolation.level",
        "check.crcs",
        "client.rack",
        "request.timeout.ms",
        "retry.backoff.ms",
    }
)


def librdkafka_config(java_client_config: Mapping[str, str], client: str = "producer") -> dict[str, str]:
    """The settings of a Java client config (worker ``producer.*``, ``admin.*``, overrides)
    that librdkafka shares with the Java client, and its security settings translated
    (:mod:`sluice.kafka.security`), for the clients Sluice runs in Python.

    Raises :class:`~sluice.api.errors.ConfigError` for security settings librdkafka cannot
    be given."""
    shared = {k: v for k, v in java_client_config.items() if k in _LIBRDKAFKA_PRODUCER_KEYS}
    return {**shared, **librdkafka_security(java_client_config, client)}


def librdkafka_consumer_config(java_consumer_config: Mapping[str, str]) -> dict[str, str]:
    """The settings of a Java consumer config (worker ``consumer.*``, connector
    ``consumer.override.*``) that librdkafka's consumer shares with the Java client, and its
    security settings translated (see :func:`librdkafka_config`)."""
    shared = {k: v for k, v in java_consumer_config.items() if k in _LIBRDKAFKA_CONSUMER_KEYS}
    return {**shared, **librdkafka_security(java_consumer_config, "consumer")}


def producer_settings(connector: str, task: int, configured: dict[str, str]) -> dict[str, Any]:
    """The librdkafka settings of a source task's producer: the worker's and connector's
    producer settings, with what Kafka Connect's delivery contract needs."""
    settings: dict[str, Any] = {
        # Java clients' default partitioner: a key lands where Kafka Connect would put it
        "partitioner": "murmur2_random",
        "linger.ms": "5",
        "client.id": f"connector-producer-{connector}-{task}",
        "log_level": 3,
    }
    settings.update(configured)
    settings["enable.idempotence"] = True  # acks=all, in order, no duplicates from retries
    settings["acks"] = "all"
    return settings


def consumer_settings(connector: str, task: int, configured: dict[str, str]) -> dict[str, Any]:
    """The librdkafka settings of a sink task's consumer. It only reads the partitions it
    is given (``assign``); its group is where the worker commits the task's offsets."""
    settings: dict[str, Any] = {
        "group.id": f"connect-{connector}",
        "auto.offset.reset": "earliest",  # as Kafka Connect configures its sink consumers
        "client.id": f"connector-consumer-{connector}-{task}",
        "log_level": 3,
        # librdkafka pauses fetching for this long once its queue holds queued.min.messages
        # (100,000): at its default, 1 s, a task that puts fewer than 100,000 records a
        # second waits for Kafka most of the time (measured: 116k records/s against 295k).
        "fetch.queue.backoff.ms": 5,
    }
    settings.update(configured)
    settings["enable.auto.commit"] = False
    settings["enable.auto.offset.store"] = False
    settings["enable.partition.eof"] = False
    return settings
