"""Topic creation for source connectors: ``topic.creation.default.*`` and a named group
with include/exclude patterns and topic configs, on a real worker and broker."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource

from tests import http_client
from tests.helpers import wait_until
from tests.integration.workers import StandaloneWorker

pytestmark = pytest.mark.integration

STRING = "org.apache.kafka.connect.storage.StringConverter"


def _partitions(admin: AdminClient, topic: str) -> int | None:
    # All topics: a metadata request naming a topic may make the broker auto-create it.
    metadata = admin.list_topics(timeout=10).topics.get(topic)
    return None if metadata is None or metadata.error is not None else len(metadata.partitions)


def test_source_topics_are_created_with_their_groups_settings(kafka_bootstrap, unique_name, tmp_path):
    worker = StandaloneWorker(tmp_path / "w", kafka_bootstrap, "w").start()
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    try:
        plain, short = f"{unique_name}-plain", f"{unique_name}-short"
        for name, topic in (("a", plain), ("b", short)):
            source = tmp_path / f"{name}.txt"
            source.write_text("one\ntwo\n")
            r = http_client.post(
                f"{worker.url}/connectors",
                timeout=30,
                json={
                    "name": f"{unique_name}-{name}",
                    "config": {
                        "connector.class": "FileStreamSource",
                        "file": str(source),
                        "topic": topic,
                        "value.converter": STRING,
                        "topic.creation.default.replication.factor": "1",
                        "topic.creation.default.partitions": "3",
                        "topic.creation.groups": "short",
                        "topic.creation.short.include": ".*-short",
                        "topic.creation.short.partitions": "1",
                        "topic.creation.short.retention.ms": "3600000",
                    },
                },
            )
            assert r.status_code == 201, r.text
        wait_until(
            lambda: _partitions(admin, plain) == 3,
            timeout=90,
            message=lambda: f"{plain} has {_partitions(admin, plain)} partitions",
        )
        wait_until(
            lambda: _partitions(admin, short) == 1,
            timeout=90,
            message=lambda: f"{short} has {_partitions(admin, short)} partitions",
        )
        resource = ConfigResource(ConfigResource.Type.TOPIC, short)
        configs = admin.describe_configs([resource])[resource].result(timeout=30)
        assert configs["retention.ms"].value == "3600000"
    finally:
        worker.stop()
        worker.kill()


def test_missing_default_group_settings_fail_validation(kafka_bootstrap, unique_name, tmp_path):
    worker = StandaloneWorker(tmp_path / "w", kafka_bootstrap, "w").start()
    try:
        r = http_client.put(
            f"{worker.url}/connector-plugins/FileStreamSource/config/validate",
            timeout=30,
            json={
                "connector.class": "FileStreamSource",
                "name": unique_name,
                "topic": "t",
                "topic.creation.default.partitions": "3",
            },
        )
        assert r.status_code == 200, r.text
        errors = {c["value"]["name"]: c["value"]["errors"] for c in r.json()["configs"]}
        assert any("topic.creation.default.replication.factor" in e for e in errors["topic.creation.groups"])
    finally:
        worker.stop()
        worker.kill()
