"""KafkaBasedLog's transactional writes when its producer was fenced: the caller gets the
ConnectError that says so, never the producer's raw fatal error from dropping it."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from sluice.api.errors import ConnectError
from sluice.storage.kafka_log import KafkaBasedLog


def _fenced() -> KafkaException:
    fenced = KafkaError(KafkaError._FENCED, "This instance has been fenced by a newer instance", fatal=True)
    return KafkaException(fenced)


class FencedProducer:
    """A transactional producer a newer one with its id fenced: every call after the
    fencing fails with librdkafka's fatal error, flushing it included."""

    def __init__(self) -> None:
        self.produced: list[Any] = []

    def begin_transaction(self) -> None:
        pass

    def produce(self, topic: str, key: Any = None, value: Any = None) -> None:
        self.produced.append((topic, key, value))

    def commit_transaction(self, timeout: float) -> None:
        raise _fenced()

    def abort_transaction(self, timeout: float) -> None:
        raise _fenced()

    def flush(self, timeout: float) -> int:
        raise _fenced()


def _log_holding(producer: FencedProducer) -> KafkaBasedLog:
    log = KafkaBasedLog("configs", {"bootstrap.servers": "127.0.0.1:9"}, lambda record: None)
    log._transactional, log._transactional_id = producer, "connect-cluster-g"  # as claim_transactions leaves them
    return log


def test_a_fenced_transactional_write_says_fenced_and_drops_the_producer() -> None:
    producer = FencedProducer()
    log = _log_holding(producer)

    with pytest.raises(ConnectError, match="was fenced by a newer producer"):
        log.write_transaction([("k", b"v")], timeout=1.0)

    assert producer.produced == [("configs", "k", b"v")]
    assert log.transactional_id is None  # the next write claims the id again


def test_releasing_a_fatally_failed_producer_does_not_raise() -> None:
    log = _log_holding(FencedProducer())

    log.release_transactions()

    assert log.transactional_id is None
