"""Acceptance: a standalone worker with ``config.providers`` resolves ``${file:...}``
placeholders for the running connector, while REST keeps showing the placeholder text
(spec 3.7 and endpoint 10 of 1.3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from tests import http_client
from tests.helpers import wait_until
from tests.integration.workers import StandaloneWorker, write_properties

pytestmark = pytest.mark.integration

FILE_PROVIDER = "org.apache.kafka.common.config.provider.FileConfigProvider"


def _read_values(bootstrap: str, topic: str, count: int, diagnostics) -> list[str]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check-{topic}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[str] = []

    def more() -> bool:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            values.append(msg.value().decode("utf-8"))
        return len(values) >= count

    try:
        wait_until(
            more,
            timeout=90,
            message=lambda: f"{count} records on the resolved topic {topic} (got {values}); {diagnostics()}",
        )
    finally:
        consumer.close()
    return values


def test_file_provider_resolves_the_topic_and_rest_shows_the_placeholder(
    kafka_bootstrap: str, unique_name: str, tmp_path: Path
) -> None:
    resolved_topic = f"{unique_name}-resolved"
    secrets = write_properties(tmp_path / "connector-secrets.properties", {"topic": resolved_topic})
    placeholder = f"${{file:{secrets}:topic}}"
    source_file = tmp_path / "input.txt"
    lines = ["first line", "second line", "third line"]
    source_file.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    config = {
        "connector.class": "FileStreamSource",
        "tasks.max": "1",
        "file": str(source_file),
        "topic": placeholder,
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    }

    worker = StandaloneWorker(
        tmp_path / "worker",
        kafka_bootstrap,
        "providers",
        extra={
            "config.providers": "file",
            "config.providers.file.class": FILE_PROVIDER,
        },
    )
    try:
        worker.start()
        created = http_client.post(f"{worker.url}/connectors", json={"name": unique_name, "config": config}, timeout=30)
        assert created.status_code == 201, created.text
        assert created.json()["config"]["topic"] == placeholder

        def diagnostics() -> str:
            status = worker.get(f"/connectors/{unique_name}/status")
            return f"status (tail): {status.text[-3000:]}\nworker log (tail):\n{worker.log()[-3000:]}"

        values = _read_values(kafka_bootstrap, resolved_topic, len(lines), diagnostics)
        assert values == lines

        info = worker.get(f"/connectors/{unique_name}")
        assert info.status_code == 200, info.text
        assert info.json()["config"]["topic"] == placeholder
        assert info.json()["config"]["file"] == str(source_file)

        raw_config = worker.get(f"/connectors/{unique_name}/config")
        assert raw_config.status_code == 200, raw_config.text
        assert raw_config.json() == {**config, "name": unique_name}

        tasks = worker.get(f"/connectors/{unique_name}/tasks")
        assert tasks.status_code == 200, tasks.text
        assert [t["id"] for t in tasks.json()] == [{"connector": unique_name, "task": 0}]
        task_config = tasks.json()[0]["config"]
        assert task_config["topic"] == placeholder, json.dumps(task_config)
        assert resolved_topic not in json.dumps(tasks.json())
        assert worker.task_state(unique_name) == "RUNNING"
    finally:
        worker.kill()
