"""Acceptance: file → Kafka → file with two standalone workers, surviving SIGTERM and restart.

One worker runs FileStreamSource, another FileStreamSink, each with its own offsets
file. After a clean stop and restart of both, the sink file holds every line
exactly once, and the topic holds exactly what Kafka Connect would have written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from tests.helpers import wait_until
from tests.integration.workers import StandaloneWorker, write_properties

pytestmark = pytest.mark.integration

JSON = "org.apache.kafka.connect.json.JsonConverter"
STRING = "org.apache.kafka.connect.storage.StringConverter"

# connector-level converter settings, and the bytes Kafka Connect writes for the line "x"
CASES = {
    "json-with-schemas": (
        {"value.converter": JSON, "value.converter.schemas.enable": "true"},
        lambda line: json.dumps(
            {"schema": {"type": "string", "optional": False}, "payload": line},
            separators=(",", ":"),
            ensure_ascii=False,
        ).encode(),
    ),
    "json-without-schemas": (
        {"value.converter": JSON, "value.converter.schemas.enable": "false"},
        lambda line: json.dumps(line, ensure_ascii=False).encode(),
    ),
    "string-converter": (
        {"value.converter": STRING},
        lambda line: line.encode(),
    ),
}


def _topic_values(bootstrap: str, topic: str, expected_count: int) -> list[tuple[bytes | None, bytes | None]]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check-{topic}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    records: list[tuple[bytes | None, bytes | None]] = []
    try:

        def more() -> bool:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                records.append((msg.key(), msg.value()))
            return len(records) >= expected_count

        wait_until(more, timeout=60, message=f"{expected_count} records on {topic}")
        # Nothing beyond what we expect: a short extra read finds no more records.
        extra = consumer.poll(1.0)
        assert extra is None or extra.error() is not None, f"unexpected extra record {extra.value()!r}"
    finally:
        consumer.close()
    return records


@pytest.mark.parametrize("case", list(CASES))
def test_file_source_and_sink_survive_restart(
    case: str, kafka_bootstrap: str, unique_name: str, tmp_path: Path
) -> None:
    converter_props, expected_bytes = CASES[case]
    topic = f"{unique_name}-topic"
    source_file, sink_file = tmp_path / "input.txt", tmp_path / "output.txt"
    source_file.write_bytes(b"")
    source_props = {
        "name": f"{unique_name}-source",
        "connector.class": "FileStreamSource",
        "tasks.max": "1",
        "file": str(source_file),
        "topic": topic,
        **converter_props,
    }
    sink_props = {
        "name": f"{unique_name}-sink",
        "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
        "tasks.max": "1",
        "file": str(sink_file),
        "topics": topic,
        **converter_props,
    }
    source_conf = write_properties(tmp_path / "source.properties", source_props)
    sink_json = tmp_path / "sink.json"
    sink_json.write_text(json.dumps(sink_props))  # a JSON connector file, as connect-standalone accepts

    # Nothing repeated across a clean stop needs the batch under way to finish first (a cold
    # batch on two busy cores can outlast Kafka's 5 s default graceful timeout).
    graceful = {"task.shutdown.graceful.timeout.ms": "30000"}
    source_worker = StandaloneWorker(tmp_path / "w-source", kafka_bootstrap, "source", extra=graceful)
    sink_worker = StandaloneWorker(tmp_path / "w-sink", kafka_bootstrap, "sink", extra=graceful)
    try:
        source_worker.start(source_conf)
        sink_worker.start(sink_json)
        first = [f"{case} line {i} ünïcode" for i in range(3)]
        with source_file.open("a", encoding="utf-8") as out:
            out.writelines(line + "\n" for line in first)
        wait_until(
            lambda: sink_file.exists() and sink_file.read_bytes() == source_file.read_bytes(),
            timeout=120,
            message="the first three lines in the sink file",
        )

        assert source_worker.stop() == 0, source_worker.log()
        assert sink_worker.stop() == 0, sink_worker.log()
        source_worker.start(source_conf)
        sink_worker.start(sink_json)

        second = [f"{case} line {i}" for i in range(3, 6)]
        with source_file.open("a", encoding="utf-8") as out:
            out.writelines(line + "\n" for line in second)
        expected = "".join(line + "\n" for line in first + second).encode()
        wait_until(
            lambda: sink_file.read_bytes() == expected,
            timeout=120,
            message=f"all six lines exactly once in the sink file (now {sink_file.read_bytes()!r})",
        )
        assert source_file.read_bytes() == expected

        records = _topic_values(kafka_bootstrap, topic, 6)
        assert [k for k, _ in records] == [None] * 6
        assert [v for _, v in records] == [expected_bytes(line) for line in first + second]
    finally:
        source_worker.kill()
        sink_worker.kill()
