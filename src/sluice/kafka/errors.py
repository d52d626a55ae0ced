"""How librdkafka's errors are told apart: which are transient, which end a task.

librdkafka retries a failed authentication (a wrong password, a certificate the client does
not trust) for ever and only reports it; Kafka's Java client throws it to the caller, and a
Kafka Connect task fails with it. Sluice's task loops fail on the same errors, so a wrong
setting gives a FAILED task with the reason rather than a task that waits silently.
"""

from __future__ import annotations

from typing import Any, TypeGuard

from confluent_kafka import KafkaError, KafkaException

__all__ = [
    "AUTHENTICATION_ERRORS",
    "LOCAL_ALL_BROKERS_DOWN",
    "LOCAL_FENCED",
    "LOCAL_PARTITION_EOF",
    "LOCAL_TIMED_OUT",
    "LOCAL_TRANSPORT",
    "RETRIABLE_ERRORS",
    "ends_task",
    "kafka_error",
    "retriable",
]

# librdkafka's local (client-side) error codes: public constants of confluent-kafka whose
# names begin with an underscore, which is all the private-access lint can see.
LOCAL_TIMED_OUT: int = KafkaError._TIMED_OUT  # noqa: SLF001
LOCAL_TRANSPORT: int = KafkaError._TRANSPORT  # noqa: SLF001
LOCAL_ALL_BROKERS_DOWN: int = KafkaError._ALL_BROKERS_DOWN  # noqa: SLF001
LOCAL_PARTITION_EOF: int = KafkaError._PARTITION_EOF  # noqa: SLF001
LOCAL_FENCED: int = KafkaError._FENCED  # noqa: SLF001

#: librdkafka's codes for a failed authentication (SASL or TLS).
AUTHENTICATION_ERRORS = frozenset(
    {
        KafkaError._AUTHENTICATION,  # noqa: SLF001
        KafkaError._SSL,  # noqa: SLF001
        KafkaError.SASL_AUTHENTICATION_FAILED,
    }
)

#: Errors worth retrying even when librdkafka does not flag them retriable: a coordinator
#: still loading on a fresh broker, a topic just created that has no leader yet, a leader
#: that moved, a broker briefly unreachable.
RETRIABLE_ERRORS = frozenset(
    {
        KafkaError.NOT_COORDINATOR,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
        KafkaError.REQUEST_TIMED_OUT,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.UNKNOWN_TOPIC_OR_PART,
        KafkaError.OFFSET_NOT_AVAILABLE,
        KafkaError.FENCED_LEADER_EPOCH,
        KafkaError.UNKNOWN_LEADER_EPOCH,
        KafkaError.NOT_CONTROLLER,
        LOCAL_TIMED_OUT,
        LOCAL_TRANSPORT,
        LOCAL_ALL_BROKERS_DOWN,
    }
)


def kafka_error(exc: BaseException) -> KafkaError | None:
    """The ``KafkaError`` a ``KafkaException`` carries, if any."""
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return exc.args[0]
    return None


def retriable(error: KafkaError | None) -> TypeGuard[KafkaError]:
    """True for an error a client call may be retried after."""
    return error is not None and (bool(error.retriable()) or error.code() in RETRIABLE_ERRORS)


def ends_task(error: Any) -> bool:
    """True for a ``KafkaError`` a task cannot outlive: a fatal one, or failed authentication."""
    return bool(error.fatal()) or error.code() in AUTHENTICATION_ERRORS
