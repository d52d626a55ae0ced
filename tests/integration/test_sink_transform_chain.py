"""Acceptance: sink connectors with a filtering and routing transformation chain.

Two topics go to two FileStreamSinks with the same chain — drop the records of the
``…-drop`` topic (Filter + TopicNameMatches), drop records with a ``skip`` header (Filter +
HasHeaderKey), route the rest (RegexRouter, TimestampRouter) and drop a header
(DropHeaders). One sink reads keys with StringConverter, the other with JsonConverter.
Both write the same lines, and both commit offsets up to the end of both topics, although
every record of one topic and the last records of the other were filtered out.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests import http_client
from tests.helpers import wait_until
from tests.integration.workers import StandaloneWorker

pytestmark = pytest.mark.integration

STRING = "org.apache.kafka.connect.storage.StringConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"
KEEP, DROP = 300, 120


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory):
    w = StandaloneWorker(tmp_path_factory.mktemp("sink-chain"), kafka_bootstrap, "worker")
    w.start()
    yield w
    assert w.stop() == 0, w.log()


def _produce(bootstrap: str, keep: str, drop: str) -> list[str]:
    """Records on both topics; returns the values the chain lets through, in order."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(keep, 1, 1), NewTopic(drop, 1, 1)]).values():
        future.result(30)
    producer = Producer({"bootstrap.servers": bootstrap})
    expected = []
    for i in range(KEEP):
        skip = i % 10 == 3 or i >= KEEP - 5  # the last records of the topic are filtered out too
        headers = [("skip", b"yes")] if skip else [("trace", f"t{i}".encode())]
        producer.produce(keep, value=f"line {i}".encode(), headers=headers)
        if not skip:
            expected.append(f"line {i}")
    for i in range(DROP):
        producer.produce(drop, value=f"dropped {i}".encode())
    assert producer.flush(30) == 0
    return expected


def _sink(worker: StandaloneWorker, name: str, topics: str, file: Path, key_converter: str) -> None:
    config = {
        "connector.class": "FileStreamSink",
        "file": str(file),
        "topics": topics,
        "key.converter": key_converter,
        "key.converter.schemas.enable": "false",
        "value.converter": STRING,
        "transforms": "dropTopic,skip,route,time,strip",
        "transforms.dropTopic.type": "org.apache.kafka.connect.transforms.Filter",
        "transforms.dropTopic.predicate": "isDropTopic",
        "transforms.skip.type": "org.apache.kafka.connect.transforms.Filter",
        "transforms.skip.predicate": "hasSkip",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": "(.*)-keep",
        "transforms.route.replacement": "$1-routed",
        "transforms.time.type": "org.apache.kafka.connect.transforms.TimestampRouter",
        "transforms.time.topic.format": "${topic}-${timestamp}",
        "transforms.time.timestamp.format": "yyyy-MM-dd",
        "transforms.strip.type": "org.apache.kafka.connect.transforms.DropHeaders",
        "transforms.strip.headers": "trace",
        "predicates": "isDropTopic,hasSkip",
        "predicates.isDropTopic.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
        "predicates.isDropTopic.pattern": ".*-drop",
        "predicates.hasSkip.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
        "predicates.hasSkip.name": "skip",
    }
    r = http_client.post(f"{worker.url}/connectors", json={"name": name, "config": config}, timeout=30)
    assert r.status_code == 201, r.text


def _committed(bootstrap: str, group: str, topics: list[str]) -> list[int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        return [tp.offset for tp in consumer.committed([TopicPartition(t, 0) for t in topics], timeout=10)]
    finally:
        consumer.close()


def test_filtering_chain_writes_the_same_lines_whatever_the_key_converter_and_commits_past_filtered_records(
    worker: StandaloneWorker, kafka_bootstrap: str, unique_name: str, tmp_path: Path
) -> None:
    keep, drop = f"{unique_name}-keep", f"{unique_name}-drop"
    expected = _produce(kafka_bootstrap, keep, drop)
    string_keys_file, json_keys_file = tmp_path / "string-keys.txt", tmp_path / "json-keys.txt"
    _sink(worker, f"{unique_name}-string-keys", f"{keep},{drop}", string_keys_file, STRING)
    _sink(worker, f"{unique_name}-json-keys", f"{keep},{drop}", json_keys_file, JSON)

    def lines(path: Path) -> list[str]:
        return path.read_text().splitlines() if path.exists() else []

    for name, path in ((f"{unique_name}-string-keys", string_keys_file), (f"{unique_name}-json-keys", json_keys_file)):
        wait_until(
            lambda path=path: len(lines(path)) >= len(expected),
            timeout=120,
            message=lambda name=name, path=path: (
                f"{len(lines(path))} lines of {name}; {worker.get(f'/connectors/{name}/status').text}"
            ),
        )
        group = f"connect-{name}"
        wait_until(
            lambda group=group: _committed(kafka_bootstrap, group, [keep, drop]) == [KEEP, DROP],
            timeout=60,
            message=lambda group=group: f"{group} committed {_committed(kafka_bootstrap, group, [keep, drop])}",
        )
    assert lines(string_keys_file) == expected
    assert lines(json_keys_file) == lines(string_keys_file)
    for name in (f"{unique_name}-string-keys", f"{unique_name}-json-keys"):
        assert worker.task_state(name) == "RUNNING"
