"""A source connector's offsets on a distributed worker (Kafka's ConnectorOffsetBackingStore):
the worker's topic unless the connector has one of its own (``offsets.storage.topic``, or a
producer on another cluster); its own topic first, the worker's as fallback and backup."""

from __future__ import annotations

import logging

import pytest

from sluice.runtime.config import WorkerConfig
from sluice.runtime.connector_offsets import ConnectorOffsetStore, ConnectorOffsetStores, client_settings
from sluice.storage import MemoryOffsetBackingStore
from sluice.storage.base import OffsetBackingStore

WORKER = WorkerConfig.distributed(
    {
        "bootstrap.servers": "worker:9092",
        "group.id": "g",
        "config.storage.topic": "configs",
        "offset.storage.topic": "offsets",
        "status.storage.topic": "statuses",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    }
)
ON_WORKERS = {"bootstrap.servers": "worker:9092", "acks": "all"}
ELSEWHERE = {"bootstrap.servers": "other:9092", "security.protocol": "SASL_SSL", "sasl.username": "u", "acks": "all"}


class FailingStore(MemoryOffsetBackingStore):
    def set(self, values: dict[bytes, bytes | None]) -> None:
        raise RuntimeError("the worker's topic is away")


def _stores(worker_store: OffsetBackingStore) -> tuple[ConnectorOffsetStores, list[tuple[str, dict[str, str]]]]:
    made: list[tuple[str, dict[str, str]]] = []

    def make(topic: str, client: dict[str, str]) -> OffsetBackingStore:
        made.append((topic, client))
        return MemoryOffsetBackingStore()

    return ConnectorOffsetStores(WORKER, worker_store, make), made


def test_a_connector_without_a_topic_of_its_own_uses_the_workers_store() -> None:
    worker_store = MemoryOffsetBackingStore()
    stores, made = _stores(worker_store)
    assert stores.for_connector({}, ON_WORKERS) is worker_store
    assert stores.for_connector({"offsets.storage.topic": "offsets"}, ON_WORKERS) is worker_store
    assert stores.topic_of({}, ON_WORKERS) == ("offsets", True)
    assert made == []


def test_its_own_topic_or_another_cluster_gets_a_store_of_its_own_made_once() -> None:
    stores, made = _stores(MemoryOffsetBackingStore())
    own = stores.for_connector({"offsets.storage.topic": "mine"}, ON_WORKERS)
    assert isinstance(own, ConnectorOffsetStore) and own.topic == "mine"
    elsewhere = stores.for_connector({}, ELSEWHERE)
    assert isinstance(elsewhere, ConnectorOffsetStore) and elsewhere.topic == "offsets"
    stores.for_connector({"offsets.storage.topic": "mine"}, ON_WORKERS)
    assert made == [
        ("mine", {"bootstrap.servers": "worker:9092"}),
        ("offsets", {"bootstrap.servers": "other:9092", "security.protocol": "SASL_SSL", "sasl.username": "u"}),
    ]
    assert client_settings(ELSEWHERE) == made[1][1]


def test_reads_prefer_the_connectors_topic_and_writes_reach_both() -> None:
    own, worker_store = MemoryOffsetBackingStore(), MemoryOffsetBackingStore()
    worker_store.set({b"old": b"1", b"both": b"worker"})
    store = ConnectorOffsetStore(own, worker_store, "mine")
    store.set({b"both": b"own", b"new": b"2"})
    assert store.get([b"old", b"both", b"new", b"none"]) == {b"old": b"1", b"both": b"own", b"new": b"2", b"none": None}
    assert store.all() == {b"old": b"1", b"both": b"own", b"new": b"2"}
    assert worker_store.all() == {b"old": b"1", b"both": b"own", b"new": b"2"}  # the backup


def test_a_backup_that_fails_is_logged_and_the_connectors_topic_keeps_the_offsets(
    caplog: pytest.LogCaptureFixture,
) -> None:
    own = MemoryOffsetBackingStore()
    store = ConnectorOffsetStore(own, FailingStore(), "mine")
    with caplog.at_level(logging.WARNING):
        store.set({b"k": b"v"})
    assert own.all() == {b"k": b"v"}
    assert "Could not back up offsets of topic mine" in caplog.text
