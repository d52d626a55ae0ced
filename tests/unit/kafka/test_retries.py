"""Transient Kafka errors (a coordinator still loading on a fresh broker) are retried,
quietly while they last seconds; others fail at once."""

from __future__ import annotations

import logging
import threading

import pytest
from confluent_kafka import KafkaError, KafkaException

from sluice.kafka import retries
from sluice.kafka.retries import with_kafka_retries


def test_retriable_errors_are_retried_until_the_call_succeeds() -> None:
    calls = []

    def call() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise KafkaException(KafkaError(KafkaError.NOT_COORDINATOR))
        return "done"

    assert with_kafka_retries(call, "test", threading.Event()) == "done"
    assert len(calls) == 3


def test_other_errors_fail_immediately() -> None:
    calls = []

    def call() -> None:
        calls.append(1)
        raise KafkaException(KafkaError(KafkaError.INVALID_CONFIG))

    with pytest.raises(KafkaException):
        with_kafka_retries(call, "test", threading.Event())
    assert len(calls) == 1


def test_retries_stop_at_the_deadline() -> None:
    def call() -> None:
        raise KafkaException(KafkaError(KafkaError.COORDINATOR_LOAD_IN_PROGRESS))

    with pytest.raises(KafkaException):
        with_kafka_retries(call, "test", threading.Event(), timeout_s=0.3)


def _failing(times: int):  # type: ignore[no-untyped-def]
    calls = []

    def call() -> str:
        calls.append(1)
        if len(calls) <= times:
            raise KafkaException(KafkaError(KafkaError.NOT_COORDINATOR))
        return "done"

    return call


def test_retries_that_resolve_within_seconds_are_logged_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="sluice.kafka.retries")
    assert with_kafka_retries(_failing(2), "Reading committed offsets", threading.Event()) == "done"
    retries = [r for r in caplog.records if r.name == "sluice.kafka.retries"]
    assert len(retries) == 2
    assert all(r.levelno == logging.DEBUG for r in retries)
    assert "NOT_COORDINATOR" in retries[0].getMessage()


def test_errors_that_persist_are_reported_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(retries, "QUIET_S", 0.0)  # every retry counts as persisting
    caplog.set_level(logging.DEBUG, logger="sluice.kafka.retries")
    assert with_kafka_retries(_failing(3), "Reading committed offsets", threading.Event()) == "done"
    levels = [r.levelno for r in caplog.records if r.name == "sluice.kafka.retries"]
    assert levels == [logging.WARNING, logging.DEBUG, logging.DEBUG]
    warning = next(r for r in caplog.records if r.levelno == logging.WARNING).getMessage()
    assert warning.startswith("Reading committed offsets still fails after 0 s: ")
    assert "NOT_COORDINATOR" in warning
