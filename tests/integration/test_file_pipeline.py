"""Acceptance: file → Kafka → file with two standalone workers, surviving SIGTERM and restart.

One worker runs FileStreamSource connectors, another FileStreamSink connectors (a pair per
converter case, each with its own files and topic), each worker with its own offsets
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


def test_file_source_and_sink_survive_restart(kafka_bootstrap: str, unique_name: str, tmp_path: Path) -> None:
    """Each converter case is a source and a sink connector of its own (its own files and
    topic), all on the same two workers: one restart of the pair covers them all."""
    sources, sinks, topics = {}, {}, {}
    source_files, sink_files = [], []
    for n, (case, (converter_props, _expected)) in enumerate(CASES.items()):
        topic = topics[case] = f"{unique_name}-{case}"
        source_file, sink_file = tmp_path / f"input-{case}.txt", tmp_path / f"output-{case}.txt"
        source_file.write_bytes(b"")
        sources[case], sinks[case] = source_file, sink_file
        source_props = {
            "name": f"{unique_name}-{case}-source",
            "connector.class": "FileStreamSource",
            "tasks.max": "1",
            "file": str(source_file),
            "topic": topic,
            **converter_props,
        }
        sink_props = {
            "name": f"{unique_name}-{case}-sink",
            "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
            "tasks.max": "1",
            "file": str(sink_file),
            "topics": topic,
            **converter_props,
        }
        source_files.append(write_properties(tmp_path / f"source-{case}.properties", source_props))
        if n % 2:  # a JSON connector file, as connect-standalone accepts, next to properties files
            sink_files.append(tmp_path / f"sink-{case}.json")
            sink_files[-1].write_text(json.dumps(sink_props))
        else:
            sink_files.append(write_properties(tmp_path / f"sink-{case}.properties", sink_props))

    def append(lines: dict[str, list[str]]) -> None:
        for case, case_lines in lines.items():
            with sources[case].open("a", encoding="utf-8") as out:
                out.writelines(line + "\n" for line in case_lines)

    def sink_holds(expected: dict[str, bytes]) -> bool:
        return all(sinks[c].exists() and sinks[c].read_bytes() == expected[c] for c in CASES)

    # Nothing repeated across a clean stop needs the batch under way to finish first (a cold
    # batch on two busy cores can outlast Kafka's 5 s default graceful timeout).
    graceful = {"task.shutdown.graceful.timeout.ms": "30000"}
    source_worker = StandaloneWorker(tmp_path / "w-source", kafka_bootstrap, "source", extra=graceful)
    sink_worker = StandaloneWorker(tmp_path / "w-sink", kafka_bootstrap, "sink", extra=graceful)
    try:
        source_worker.start(*source_files)
        sink_worker.start(*sink_files)
        first = {case: [f"{case} line {i} ünïcode" for i in range(3)] for case in CASES}
        append(first)
        wait_until(
            lambda: sink_holds({c: sources[c].read_bytes() for c in CASES}),
            timeout=120,
            message="the first three lines of each case in its sink file",
        )

        assert source_worker.stop() == 0, source_worker.log()
        assert sink_worker.stop() == 0, sink_worker.log()
        source_worker.start(*source_files)
        sink_worker.start(*sink_files)

        second = {case: [f"{case} line {i}" for i in range(3, 6)] for case in CASES}
        append(second)
        expected = {c: "".join(line + "\n" for line in first[c] + second[c]).encode() for c in CASES}
        wait_until(
            lambda: sink_holds(expected),
            timeout=120,
            message=lambda: (
                "all six lines of each case exactly once in its sink file (now "
                f"{ {c: sinks[c].read_bytes() for c in CASES if sinks[c].exists()}!r})"
            ),
        )
        for case, (_props, expected_bytes) in CASES.items():
            assert sources[case].read_bytes() == expected[case]
            records = _topic_values(kafka_bootstrap, topics[case], 6)
            assert [k for k, _ in records] == [None] * 6, case
            assert [v for _, v in records] == [expected_bytes(line) for line in first[case] + second[case]], case
    finally:
        source_worker.kill()
        sink_worker.kill()
