"""Acceptance (issue 33, item 3): the bundled ``replicator`` — Confluent's
``ReplicatorSourceConnector`` keys, written for Sluice — between two real brokers.

The session's broker (``primary``) and the SASL_SSL broker of the ``databases`` group
(``other``: its PLAINTEXT listener, or its SASL_SSL one for the secured source) are the two
clusters. Checked: records copied byte for byte (key, value, headers, timestamp, partition)
into a renamed topic created with the source's partition count and configs; a topic created
later is picked up; config changes follow; consumer offsets committed to the source cluster;
refused keys named at validation; two clusters replicating each other with provenance
headers and no loop; a worker SIGKILLed mid-stream loses nothing; a secured source.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from tests import http_client
from tests.helpers import wait_until, watermark_offsets
from tests.integration.workers import StandaloneWorker

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("databases")]

REPLICATOR = "io.confluent.connect.replicator.ReplicatorSourceConnector"
BYTES = "io.confluent.connect.replicator.util.ByteArrayConverter"

Record = tuple[bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...], int]


def _replicator(source: str, destination: str, **more: str) -> dict[str, str]:
    return {
        "connector.class": REPLICATOR,
        "tasks.max": "2",
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
        "src.kafka.bootstrap.servers": source,
        "dest.kafka.bootstrap.servers": destination,
        "topic.poll.interval.ms": "1000",
        "topic.config.sync.interval.ms": "1000",
        "confluent.topic.replication.factor": "1",  # Confluent's licence topic: accepted, unused
        **more,
    }


def _create(bootstrap: str, topic: str, partitions: int, **configs: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1, config=configs)])[topic].result(timeout=30)


def _produce(bootstrap: str, topic: str, count: int, partitions: int, tag: str, start: int = 0) -> None:
    """``count`` records spread over ``partitions``: keys (some null), values, two headers
    (one null) and explicit timestamps, so that a byte-for-byte copy is visible."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    # recent enough for the broker's retention (a week by default) to keep them
    base = int(time.time() * 1000) - 3_600_000
    for i in range(start, start + count):
        producer.produce(
            topic,
            value=f"{tag}-value-{i}".encode(),
            key=None if i % 7 == 0 else f"key-{i}".encode(),
            partition=i % partitions,
            headers=[("origin", tag.encode()), ("n", None if i % 5 == 0 else str(i).encode())],
            timestamp=base + i,
        )
        if i % 1000 == 0:
            producer.poll(0)
    assert producer.flush(30) == 0


def _watermarks(consumer: Consumer, topic: str) -> dict[int, tuple[int, int]]:
    """Each partition's low and high watermark now; empty while ``topic`` does not exist."""
    metadata = consumer.list_topics(topic, timeout=30).topics.get(topic)
    if metadata is None or metadata.error is not None:
        return {}
    return {p: watermark_offsets(consumer, topic, p) for p in metadata.partitions}


def _records(bootstrap: str, topic: str) -> dict[int, list[Record]]:
    """Every record of ``topic`` now, by partition (read up to each partition's end)."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "replicator-test-reader", "enable.auto.commit": False}
    )
    try:
        marks = _watermarks(consumer, topic)
        out: dict[int, list[Record]] = {p: [] for p in marks}
        remaining = {p: high for p, (low, high) in marks.items() if high > low}
        consumer.assign([TopicPartition(topic, p, 0) for p in remaining])
        while remaining:
            message = wait_until(lambda: consumer.poll(0.5), timeout=60, message=f"records of {topic}")
            if message.error() is not None:
                continue
            p = message.partition()
            out[p].append((message.key(), message.value(), tuple(message.headers() or ()), message.timestamp()[1]))
            if message.offset() + 1 >= remaining.get(p, 0):
                remaining.pop(p, None)
        return out
    finally:
        consumer.close()


def _count(bootstrap: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "replicator-test-counter"})
    try:
        return sum(high - low for low, high in _watermarks(consumer, topic).values())
    finally:
        consumer.close()


def _topic_configs(bootstrap: str, topic: str) -> dict[str, str]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    entries = admin.describe_configs([resource])[resource].result(timeout=30)
    return {name: entry.value for name, entry in entries.items()}


def _create_connector(worker: StandaloneWorker, name: str, config: dict[str, str]) -> None:
    answer = http_client.put(f"{worker.url}/connectors/{name}/config", json=config, timeout=60)
    assert answer.status_code == 201, answer.text


def _running(worker: StandaloneWorker, name: str) -> bool:
    answer = worker.get(f"/connectors/{name}/status")
    if answer.status_code != 200:
        return False
    status = answer.json()
    return status["connector"]["state"] == "RUNNING" and all(t["state"] == "RUNNING" for t in status["tasks"])


def _without_provenance(records: dict[int, list[Record]]) -> dict[int, list[Record]]:
    return {
        p: [(k, v, tuple(h for h in hs if h[0] != "__replicator_id"), ts) for k, v, hs, ts in rs]
        for p, rs in records.items()
    }


def test_replicator_copies_byte_for_byte_follows_topics_and_commits_source_offsets(
    kafka_broker: Any, secured_kafka: Any, tmp_path: Path, unique_name: str
) -> None:
    primary, other = kafka_broker.bootstrap, secured_kafka.bootstrap
    topic, later = f"{unique_name}-orders", f"{unique_name}-orders-later"
    _create(primary, topic, 3, **{"retention.ms": "987654321", "max.message.bytes": "200000"})
    _produce(primary, topic, 600, 3, "a")
    worker = StandaloneWorker(tmp_path / "w", other, "replicator").start()
    try:
        # what Sluice's Replicator does not do is refused, naming the key
        refused = http_client.put(
            f"{worker.url}/connector-plugins/ReplicatorSourceConnector/config/validate",
            json={
                **_replicator(primary, other, **{"topic.whitelist": topic}),
                "name": "refused",
                "offset.timestamps.commit": "true",
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            },
            timeout=60,
        ).json()
        errors = {c["value"]["name"]: c["value"]["errors"] for c in refused["configs"] if c["value"]["errors"]}
        assert set(errors) == {"offset.timestamps.commit", "value.converter"}, errors
        assert "byte for byte" in errors["value.converter"][0]

        name = f"{unique_name}-rep"
        _create_connector(
            worker,
            name,
            _replicator(
                primary,
                other,
                **{"topic.regex": f"{unique_name}-orders.*", "topic.rename.format": "${topic}.replica"},
            ),
        )
        wait_until(lambda: _running(worker, name), timeout=120, message=lambda: worker.log()[-4000:])
        wait_until(lambda: _count(other, f"{topic}.replica") >= 600, timeout=120, message=lambda: worker.log()[-4000:])
        assert _records(other, f"{topic}.replica") == _records(primary, topic)
        configs = _topic_configs(other, f"{topic}.replica")
        assert (configs["retention.ms"], configs["max.message.bytes"]) == ("987654321", "200000")

        # a config changed in the source follows; a topic created later is replicated
        admin = AdminClient({"bootstrap.servers": primary})
        resource = ConfigResource(ConfigResource.Type.TOPIC, topic, set_config={"retention.ms": "123456789"})
        admin.alter_configs([resource])[resource].result(timeout=30)
        _create(primary, later, 2)
        _produce(primary, later, 300, 2, "b")
        _produce(primary, topic, 300, 3, "a", start=600)
        wait_until(
            lambda: _count(other, f"{later}.replica") >= 300 and _count(other, f"{topic}.replica") >= 900,
            timeout=120,
            message=lambda: worker.log()[-4000:],
        )
        assert _records(other, f"{later}.replica") == _records(primary, later)
        assert _records(other, f"{topic}.replica") == _records(primary, topic)
        wait_until(
            lambda: _topic_configs(other, f"{topic}.replica")["retention.ms"] == "123456789",
            timeout=60,
            message="retention.ms synced",
        )

        # the offsets are Connect's ({"topic", "partition"} -> {"offset"}), and committed
        # to the source cluster in the group named after the connector
        offsets = worker.get(f"/connectors/{name}/offsets").json()["offsets"]
        stored = {(o["partition"]["topic"], o["partition"]["partition"]): o["offset"]["offset"] for o in offsets}
        wait_until(
            lambda: len(worker.get(f"/connectors/{name}/offsets").json()["offsets"]) == 5,
            timeout=60,
            message="offsets of five partitions",
        )
        assert all(isinstance(v, int) for v in stored.values())
        reader = Consumer({"bootstrap.servers": primary, "group.id": name, "enable.auto.commit": False})
        try:
            expected = [TopicPartition(topic, p) for p in range(3)] + [TopicPartition(later, p) for p in range(2)]

            def committed_at_end() -> bool:
                done = reader.committed(expected, timeout=30)
                return all(
                    tp.offset == reader.get_watermark_offsets(TopicPartition(tp.topic, tp.partition), timeout=30)[1]
                    for tp in done
                )

            wait_until(committed_at_end, timeout=60, message="source consumer group offsets at the end")
        finally:
            reader.close()
    finally:
        worker.stop()


def test_two_clusters_replicate_each_other_without_loops(
    kafka_broker: Any, secured_kafka: Any, tmp_path: Path, unique_name: str
) -> None:
    primary, other = kafka_broker.bootstrap, secured_kafka.bootstrap
    topic = f"{unique_name}-shared"
    for bootstrap in (primary, other):
        _create(bootstrap, topic, 1)
    # one worker on primary runs both directions: into primary with the worker's producer,
    # out of it with the producer pointed at the other cluster
    worker = StandaloneWorker(tmp_path / "w", primary, "both-ways").start()
    try:
        both = {"topic.whitelist": topic, "provenance.header.enable": "true", "tasks.max": "1"}
        _create_connector(worker, f"{unique_name}-in", _replicator(other, primary, **both))
        _create_connector(
            worker,
            f"{unique_name}-out",
            _replicator(primary, other, **both, **{"producer.override.bootstrap.servers": other}),
        )
        _produce(primary, topic, 50, 1, "primary")
        _produce(other, topic, 70, 1, "other")
        wait_until(
            lambda: _count(primary, topic) >= 120 and _count(other, topic) >= 120,
            timeout=120,
            message=lambda: f"{_count(primary, topic)}/{_count(other, topic)}:\n{worker.log()[-4000:]}",
        )
        # a last record on each side: once each has crossed, every record before it in the
        # partition was read by the other direction (and copied or left as a loop)
        _produce(primary, topic, 1, 1, "primary", start=1000)
        _produce(other, topic, 1, 1, "other", start=1000)

        def crossed(bootstrap: str, tag: str) -> bool:
            values = [v for _, v, _, _ in _records(bootstrap, topic).get(0, [])]
            return f"{tag}-value-1000".encode() in values

        wait_until(
            lambda: crossed(other, "primary") and crossed(primary, "other"),
            timeout=120,
            message=lambda: worker.log()[-4000:],
        )
        for bootstrap in (primary, other):
            values = sorted(v for _, v, _, _ in _records(bootstrap, topic)[0])
            expected = sorted(
                [f"primary-value-{i}".encode() for i in (*range(50), 1000)]
                + [f"other-value-{i}".encode() for i in (*range(70), 1000)]
            )
            assert values == expected  # each record once on each side: nothing looped back
        # the copies carry their provenance: the cluster and topic they came from
        copies = [hs for _, v, hs, _ in _records(other, topic)[0] if v.startswith(b"primary-")]
        origins = {dict(hs)["__replicator_id"].decode().split(",")[1] for hs in copies}
        assert origins == {topic}
    finally:
        worker.stop()


def test_a_worker_killed_mid_stream_loses_nothing(
    kafka_broker: Any, secured_kafka: Any, tmp_path: Path, unique_name: str
) -> None:
    primary, other = kafka_broker.bootstrap, secured_kafka.bootstrap
    topic = f"{unique_name}-stream"
    _create(primary, topic, 2)
    count = 40_000
    _produce(primary, topic, count, 2, "k")
    config = _replicator(primary, other, **{"topic.whitelist": topic, "tasks.max": "1"})
    connector_file = tmp_path / "replicator.json"
    connector_file.write_text(json.dumps({"name": f"{unique_name}-rep", "config": config}))
    worker = StandaloneWorker(tmp_path / "w", other, "killed", {"offset.flush.interval.ms": "500"})
    worker.start(connector_file)
    try:
        wait_until(lambda: _count(other, topic) > 0, timeout=120, message=lambda: worker.log()[-4000:])
        worker.kill()
        copied_before = _count(other, topic)
        worker.start(connector_file)
        # every partition copied to its end: the connector's committed offset is the source's
        # last record (counts alone would take the repeats around the kill for records still
        # to come; offsets are committed for acknowledged records only)
        source = _records(primary, topic)
        last_offsets = {p: len(records) - 1 for p, records in source.items()}  # a new topic: from 0

        def copied_to_the_end() -> bool:
            answer = worker.get(f"/connectors/{unique_name}-rep/offsets")
            if answer.status_code != 200:
                return False
            committed = {
                o["partition"]["partition"]: o["offset"]["offset"]
                for o in answer.json()["offsets"]
                if o["partition"]["topic"] == topic
            }
            return all(committed.get(p) == last for p, last in last_offsets.items())

        wait_until(
            copied_to_the_end,
            timeout=180,
            message=lambda: (
                f"{_count(other, topic)} of {count} copied ({copied_before} before the kill): "
                f"{worker.get(f'/connectors/{unique_name}-rep/offsets').text}\n{worker.log()[-4000:]}"
            ),
        )
        copy = _records(other, topic)
        for partition, records in source.items():
            copied = copy[partition]
            # at least once: every record, in order; a repeat only of one stretch around the kill
            first = copied.index(records[0])
            assert first == 0
            repeated_from = next((i for i in range(1, len(copied)) if copied[i][3] <= copied[i - 1][3]), len(copied))
            resumed = copied[repeated_from:]
            assert copied[:repeated_from] == records[:repeated_from]
            if resumed:
                start = records.index(resumed[0])
                assert resumed == records[start:], f"partition {partition}: not one contiguous stretch"
            else:
                assert copied == records
        assert copied_before < count  # the kill came mid-stream
    finally:
        worker.stop()


def test_a_secured_source_cluster(kafka_broker: Any, secured_kafka: Any, tmp_path: Path, unique_name: str) -> None:
    primary = kafka_broker.bootstrap
    topic = f"{unique_name}-secured"
    _create(secured_kafka.bootstrap, topic, 2)
    _produce(secured_kafka.bootstrap, topic, 500, 2, "s")
    security = secured_kafka.client_properties(mechanism="SCRAM-SHA-512", truststore="PKCS12")
    source = {f"src.kafka.{k}": v for k, v in security.items() if k != "bootstrap.servers"}
    worker = StandaloneWorker(tmp_path / "w", primary, "secured").start()
    try:
        name = f"{unique_name}-rep"
        _create_connector(
            worker,
            name,
            _replicator(secured_kafka.sasl_ssl_bootstrap, primary, **{"topic.whitelist": topic}, **source),
        )
        wait_until(lambda: _count(primary, topic) >= 500, timeout=120, message=lambda: worker.log()[-4000:])
        assert _records(primary, topic) == _records(secured_kafka.bootstrap, topic)

        # a wrong password: the connector fails, saying why
        wrong = {
            **source,
            "src.kafka.sasl.jaas.config": source["src.kafka.sasl.jaas.config"].replace("secret", "wrong"),
        }
        _create_connector(
            worker,
            f"{name}-wrong",
            _replicator(secured_kafka.sasl_ssl_bootstrap, primary, **{"topic.whitelist": topic}, **wrong),
        )

        def failed() -> str | None:
            status = worker.get(f"/connectors/{name}-wrong/status").json()
            return status["connector"].get("trace") if status["connector"]["state"] == "FAILED" else None

        trace = wait_until(failed, timeout=120, message=lambda: worker.log()[-4000:])
        assert "Cannot authenticate" in trace, trace
    finally:
        worker.stop()
