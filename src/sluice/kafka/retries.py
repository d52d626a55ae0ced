"""A Kafka client call retried through transient errors, with backoff and a deadline."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from confluent_kafka import KafkaException

from sluice.kafka.errors import kafka_error, retriable

__all__ = ["QUIET_S", "with_kafka_retries"]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: How long transient Kafka errors are retried quietly (DEBUG) before it is said, once, that they persist.
QUIET_S = 10.0


def with_kafka_retries(call: Callable[[], T], what: str, stopping: threading.Event, timeout_s: float = 120.0) -> T:
    """Run a Kafka client call, retrying transient errors (a coordinator still loading on a
    fresh broker, a leader election) with backoff until ``timeout_s`` or ``stopping``.
    Retries are logged at DEBUG; errors that last beyond :data:`QUIET_S` are reported once
    at WARN. Raises the call's ``KafkaException`` when it is not transient or time is up."""
    started = time.monotonic()
    deadline = started + timeout_s
    delay = 0.1
    reported = False
    while True:
        try:
            return call()
        except KafkaException as exc:
            error = kafka_error(exc)
            if not retriable(error) or time.monotonic() + delay > deadline or stopping.is_set():
                raise
            elapsed = time.monotonic() - started
            if not reported and elapsed >= QUIET_S:
                reported = True
                log.warning(
                    "%s still fails after %.0f s: %s; retrying for up to %.0f s", what, elapsed, error, timeout_s
                )
            else:
                log.debug("%s: %s; retrying", what, error)
            stopping.wait(delay)
            delay = min(delay * 2, 2.0)
