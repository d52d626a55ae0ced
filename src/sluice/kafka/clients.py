"""Where the Kafka clients of a task come from: a factory the task loops are given, so that
tests drive them with fakes of their own.

The loops speak librdkafka's Python API (``confluent_kafka``, whose ``TopicPartition``
and ``KafkaException`` they use as they are): a producer's ``produce``,
``poll``, ``flush`` and ``len``; a consumer's ``consume``, ``incremental_assign``,
``incremental_unassign``, ``pause``, ``resume``, ``seek``, ``get_watermark_offsets`` and
``close``; an admin client's ``list_topics`` and ``create_topics``. A fake offers those.
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["LIBRDKAFKA", "KafkaClients", "LibrdkafkaClients"]


class KafkaClients(Protocol):
    """Makes Kafka clients from librdkafka settings."""

    def producer(self, settings: dict[str, Any]) -> Any: ...

    def consumer(self, settings: dict[str, Any]) -> Any: ...

    def admin(self, settings: dict[str, Any]) -> Any: ...


class LibrdkafkaClients:
    """The real clients: librdkafka's, through ``confluent_kafka`` (imported on first use)."""

    def producer(self, settings: dict[str, Any]) -> Any:
        from confluent_kafka import Producer

        return Producer(settings)

    def consumer(self, settings: dict[str, Any]) -> Any:
        from confluent_kafka import Consumer

        return Consumer(settings)

    def admin(self, settings: dict[str, Any]) -> Any:
        from confluent_kafka.admin import AdminClient

        return AdminClient(settings)


LIBRDKAFKA = LibrdkafkaClients()
