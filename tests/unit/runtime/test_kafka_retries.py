"""Transient Kafka errors (a coordinator still loading on a fresh broker) are retried;
others fail at once."""

from __future__ import annotations

import threading

import pytest
from confluent_kafka import KafkaError, KafkaException

from sluice.runtime.tasks import _with_kafka_retries


def test_retriable_errors_are_retried_until_the_call_succeeds() -> None:
    calls = []

    def call() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise KafkaException(KafkaError(KafkaError.NOT_COORDINATOR))
        return "done"

    assert _with_kafka_retries(call, "test", threading.Event()) == "done"
    assert len(calls) == 3


def test_other_errors_fail_immediately() -> None:
    calls = []

    def call() -> None:
        calls.append(1)
        raise KafkaException(KafkaError(KafkaError.INVALID_CONFIG))

    with pytest.raises(KafkaException):
        _with_kafka_retries(call, "test", threading.Event())
    assert len(calls) == 1


def test_retries_stop_at_the_deadline() -> None:
    def call() -> None:
        raise KafkaException(KafkaError(KafkaError.COORDINATOR_LOAD_IN_PROGRESS))

    with pytest.raises(KafkaException):
        _with_kafka_retries(call, "test", threading.Event(), timeout_s=0.3)
