"""Acceptance: a source connector's transform chain on a real worker and broker.

FileStreamSource with ``HoistField$Value`` (field ``content``) then ``InsertField$Value``
(``timestamp.field``): every record on the topic is byte for byte what Apache Kafka
Connect's own transforms and JsonConverter make of the same line (checked with Kafka's
jars through :class:`~sluice_devtools.kafka_reference.KafkaReference`), and the inserted
timestamp equals the Kafka record's timestamp. A sink chain with a negated predicate
filters records as Kafka does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sluice.api.data import Schema
from sluice.api.records import SourceRecord
from sluice_devtools.kafka_reference import KafkaReference
from tests import http_client
from tests.helpers import read_topic, wait_until
from tests.integration.workers import StandaloneWorker

pytestmark = pytest.mark.integration

JSON = "org.apache.kafka.connect.json.JsonConverter"
STRING = "org.apache.kafka.connect.storage.StringConverter"
HOIST = "org.apache.kafka.connect.transforms.HoistField$Value"
INSERT = "org.apache.kafka.connect.transforms.InsertField$Value"


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory):
    w = StandaloneWorker(tmp_path_factory.mktemp("transforms"), kafka_bootstrap, "worker")
    w.start()
    yield w
    assert w.stop() == 0, w.log()


def _create(worker: StandaloneWorker, name: str, config: dict[str, str]) -> None:
    r = http_client.post(f"{worker.url}/connectors", json={"name": name, "config": config}, timeout=30)
    assert r.status_code == 201, r.text


def test_hoist_then_insert_timestamp_writes_what_kafka_connect_writes(worker, kafka_bootstrap, unique_name, tmp_path):
    lines = ["first line", "ünïcödé", "", 'a "quoted" one']
    source_file = tmp_path / "in.txt"
    source_file.write_text("".join(f"{line}\n" for line in lines))
    topic = f"{unique_name}-t"
    _create(
        worker,
        unique_name,
        {
            "connector.class": "FileStreamSource",
            "file": str(source_file),
            "topic": topic,
            "value.converter": JSON,
            "value.converter.schemas.enable": "true",
            "transforms": "hoist,insert",
            "transforms.hoist.type": HOIST,
            "transforms.hoist.field": "content",
            "transforms.insert.type": INSERT,
            "transforms.insert.timestamp.field": "ts",
        },
    )
    messages = read_topic(kafka_bootstrap, topic, len(lines), exact=False)
    with KafkaReference() as kafka:
        for line, message in zip(lines, messages, strict=True):
            _, timestamp = message.timestamp()
            envelope = json.loads(message.value())
            assert envelope["payload"] == {"content": line, "ts": timestamp}
            record = SourceRecord(None, None, topic, None, None, None, Schema.STRING_SCHEMA, line, timestamp)
            record = kafka.transform(HOIST, {"field": "content"}, record)
            record = kafka.transform(INSERT, {"timestamp.field": "ts"}, record)
            expected = kafka.from_connect(
                JSON, {"schemas.enable": "true"}, record.value_schema, record.value, topic=topic
            )
            assert message.value() == expected


def test_sink_chain_with_a_negated_predicate(worker, kafka_bootstrap, unique_name, tmp_path: Path):
    """Filter with a negated TopicNameMatches: the records of the topic that does not match
    are dropped, the others reach the sink."""
    from confluent_kafka import Producer

    keep, drop = f"{unique_name}-keep", f"{unique_name}-drop"
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for i in range(5):
        producer.produce(keep, value=f"k{i}".encode())
        producer.produce(drop, value=f"d{i}".encode())
    assert producer.flush(30) == 0
    sink_file = tmp_path / "out.txt"
    _create(
        worker,
        unique_name,
        {
            "connector.class": "FileStreamSink",
            "file": str(sink_file),
            "topics": f"{keep},{drop}",
            "value.converter": STRING,
            "key.converter": STRING,
            "transforms": "dropSome",
            "transforms.dropSome.type": "org.apache.kafka.connect.transforms.Filter",
            "transforms.dropSome.predicate": "isKeep",
            "transforms.dropSome.negate": "true",
            "predicates": "isKeep",
            "predicates.isKeep.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
            "predicates.isKeep.pattern": ".*-keep",
        },
    )

    def written() -> list[str]:
        return sink_file.read_text().splitlines() if sink_file.exists() else []

    wait_until(lambda: len(written()) >= 5, timeout=90, message=lambda: f"sink wrote {written()}")
    assert sorted(written()) == [f"k{i}" for i in range(5)]
