"""Fencing transactional producers (what Kafka's ``Admin.fenceProducers`` does, through
librdkafka, which has no such call): ``init_transactions`` with a transactional id bumps
its producer epoch, so every earlier producer with that id is fenced (its next write or
commit fails) and the transaction it left open is aborted."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sluice.kafka.clients import LIBRDKAFKA, KafkaClients, close_producer

__all__ = ["TRANSACTION_TIMEOUT_MS", "fence_transactional_ids", "transactional_settings"]

#: The producer's ``transaction.timeout.ms`` default (Kafka's and librdkafka's).
TRANSACTION_TIMEOUT_MS = 60_000


def transactional_settings(settings: dict[str, Any], transactional_id: str) -> dict[str, Any]:
    """Producer ``settings`` made transactional with ``transactional_id``. librdkafka refuses a
    message timeout beyond the transaction's (Kafka Connect sets the largest int), so it is
    lowered to the transaction timeout: a record not delivered in time aborts the transaction."""
    made = dict(settings)
    made["transactional.id"] = transactional_id
    made["enable.idempotence"] = True
    transaction_timeout = int(made.get("transaction.timeout.ms", TRANSACTION_TIMEOUT_MS))
    for key in ("delivery.timeout.ms", "message.timeout.ms"):
        if key in made:
            made[key] = min(int(made[key]), transaction_timeout)
    return made


def fence_transactional_ids(
    settings: dict[str, Any],
    transactional_ids: Iterable[str],
    timeout_s: float = 60.0,
    clients: KafkaClients = LIBRDKAFKA,
) -> None:
    """Fence the producers of each of ``transactional_ids``, one after the other, with a
    producer of ``settings``. Raises librdkafka's ``KafkaException`` (a missing permission
    on a transactional id, a timeout) at the first id that cannot be fenced."""
    for transactional_id in transactional_ids:
        producer = clients.producer(transactional_settings(settings, transactional_id))
        try:
            producer.init_transactions(timeout_s)
        finally:
            close_producer(producer)
