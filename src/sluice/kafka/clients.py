"""Where the Kafka clients of a task come from: a factory the task loops are given, so that
tests drive them with fakes of their own.

The loops speak librdkafka's Python API (``confluent_kafka``, whose ``TopicPartition``
and ``KafkaException`` they use as they are): a producer's ``produce``, ``poll``,
``flush``, ``len``, ``purge`` and ``close``; a consumer's ``consume``,
``incremental_assign``, ``incremental_unassign``, ``pause``, ``resume``, ``seek``,
``get_watermark_offsets`` and ``close``; an admin client's ``list_topics`` and
``create_topics``. A fake offers those.
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["LIBRDKAFKA", "KafkaClients", "LibrdkafkaClients", "close_producer"]


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


def close_producer(producer: Any) -> None:
    """Release a producer's connections and threads now, dropping what it still holds (the
    caller flushed first, as long as it would wait, and said what was left).

    librdkafka's threads wake every second while the client lives, so a task's producer is
    closed when the task ends rather than whenever the garbage collector frees it. Delivery
    reports for the dropped records may run during the close: their callbacks must expect
    it."""
    if len(producer):
        producer.purge()  # close() itself would wait for them without a limit
    producer.close()
