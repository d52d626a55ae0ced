"""Which librdkafka client errors end a task.

librdkafka retries a failed authentication (a wrong password, a certificate the client does
not trust) for ever and only reports it; Kafka's Java client throws it to the caller, and a
Kafka Connect task fails with it. Sluice's task loops fail on the same errors, so a wrong
setting gives a FAILED task with the reason rather than a task that waits silently.
"""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaError

__all__ = ["AUTHENTICATION_ERRORS", "ends_task"]

#: librdkafka's codes for a failed authentication (SASL or TLS).
AUTHENTICATION_ERRORS = frozenset(
    {
        KafkaError._AUTHENTICATION,  # noqa: SLF001 - librdkafka's local error codes have these names
        KafkaError._SSL,  # noqa: SLF001
        KafkaError.SASL_AUTHENTICATION_FAILED,
    }
)


def ends_task(error: Any) -> bool:
    """True for a ``KafkaError`` a task cannot outlive: a fatal one, or failed authentication."""
    return bool(error.fatal()) or error.code() in AUTHENTICATION_ERRORS
