"""Acceptance (issue 33, item 1): Debezium's PostgreSQL connector runs on Sluice.

``io.debezium:debezium-connector-postgres`` 3.6.1.Final from Maven Central sits in a
directory of ``plugin.path`` as users install it — Debezium's plugin archive, unpacked
there (it bundles the Connect API and Kafka's clients, which Kafka's plugin isolation takes
from the worker instead); its connector runs in the worker and its
task in the JVM task host, streaming from the PostgreSQL server the tooling starts (with
``wal_level=logical``) through ``pgoutput``. The snapshot of existing rows, then inserts,
updates, deletes with their tombstones and a column added mid-stream arrive in
``<prefix>.<schema>.<table>`` as Debezium's documented envelopes (``JsonConverter`` with
schemas); pause and resume, stop and the offsets API work on it; a worker SIGKILLed while
rows are being inserted and then restarted loses no change (Debezium is at-least-once:
repeats only around the kill).
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from confluent_kafka import Consumer, KafkaError

from sluice_devtools.jars import DEBEZIUM_VERSION, debezium_postgres_plugin_archive
from tests import http_client
from tests.helpers import wait_until
from tests.integration.conftest_databases import execute, query
from tests.integration.workers import StandaloneWorker

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("databases")]

POSTGRES_CONNECTOR = "io.debezium.connector.postgresql.PostgresConnector"
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"


@pytest.fixture(scope="module")
def debezium_plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``plugin.path`` directory holding Debezium's plugin archive, unpacked."""
    path = tmp_path_factory.mktemp("debezium-plugins")
    (path / "debezium-connector-postgres").symlink_to(debezium_postgres_plugin_archive(), target_is_directory=True)
    return path


class ChangeTopic:
    """Reads a Debezium topic from its start: each record's key and value, parsed."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic = topic
        self.records: list[tuple[Any, Any]] = []
        self._consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"check-{topic}",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "topic.metadata.refresh.interval.ms": 500,
            }
        )
        self._consumer.subscribe([topic])

    def poll(self) -> list[tuple[Any, Any]]:
        """Reads what arrived since the last call; all records read so far."""
        for message in self._consumer.consume(1000, timeout=0.5):
            error = message.error()
            if error is not None:
                if error.code() in (KafkaError._PARTITION_EOF, KafkaError.UNKNOWN_TOPIC_OR_PART):
                    continue
                raise AssertionError(f"reading {self.topic}: {error}")
            key = json.loads(message.key()) if message.key() is not None else None
            value = json.loads(message.value()) if message.value() is not None else None
            self.records.append((key, value))
        return self.records

    def wait_for(self, count: int, what: str, timeout: float = 120.0) -> list[tuple[Any, Any]]:
        return wait_until(
            lambda: self.poll() if len(self.poll()) >= count else None,
            timeout=timeout,
            message=lambda: f"{what}: {count} records in {self.topic}, read {len(self.records)}",
        )

    def close(self) -> None:
        self._consumer.close()


def _payload(value: dict[str, Any]) -> dict[str, Any]:
    """The envelope of a change event (JsonConverter with schemas: ``{"schema", "payload"}``)."""
    assert set(value) == {"schema", "payload"}, value
    return value["payload"]


def _fields(value: dict[str, Any], part: str) -> list[str]:
    """The field names the event's schema gives ``before`` or ``after``."""
    envelope = {f["field"]: f for f in value["schema"]["fields"]}
    return [f["field"] for f in envelope[part]["fields"]]


def _put(worker: StandaloneWorker, name: str, config: dict[str, str]) -> httpx2.Response:
    return http_client.put(f"{worker.url}/connectors/{name}/config", json=config, timeout=60)


def _connector_state(worker: StandaloneWorker, name: str) -> tuple[str | None, str | None]:
    answer = worker.get(f"/connectors/{name}/status")
    if answer.status_code != 200:
        return None, None
    status = answer.json()
    tasks = status.get("tasks") or [{}]
    return status["connector"]["state"], tasks[0].get("state")


@pytest.fixture
def cdc(postgres_server: Any, unique_name: str) -> Iterator[dict[str, str]]:
    """A schema and table of this test's own, and names for its slot and publication; the
    slot and publication are dropped afterwards (a slot left behind keeps WAL forever)."""
    ident = f"cdc_{unique_name[-8:]}"  # PostgreSQL names (slots too) are short: the unique suffix
    names = {"schema": f"s_{ident}", "slot": f"slot_{ident}", "publication": f"pub_{ident}", "prefix": ident}
    execute(
        postgres_server,
        f"CREATE SCHEMA {names['schema']}",
        f"CREATE TABLE {names['schema']}.customers (id INT PRIMARY KEY, name TEXT NOT NULL)",
        f"INSERT INTO {names['schema']}.customers VALUES (%s, %s)",
        params=[(1, "ada"), (2, "grace"), (3, "edsger")],
    )
    try:
        yield names
    finally:

        def slot_released() -> bool:
            active = query(
                postgres_server,
                f"SELECT active FROM pg_replication_slots WHERE slot_name = '{names['slot']}'",
            )
            return not active or not active[0][0]

        wait_until(slot_released, timeout=60, message="the connector's replication slot released")
        if query(postgres_server, f"SELECT 1 FROM pg_replication_slots WHERE slot_name = '{names['slot']}'"):
            execute(postgres_server, f"SELECT pg_drop_replication_slot('{names['slot']}')")
        execute(postgres_server, f"DROP PUBLICATION IF EXISTS {names['publication']}")


def _debezium_config(postgres_server: Any, names: dict[str, str]) -> dict[str, str]:
    return {
        "connector.class": POSTGRES_CONNECTOR,
        "tasks.max": "1",
        "database.hostname": postgres_server.host,
        "database.port": str(postgres_server.port),
        "database.user": postgres_server.user,
        "database.password": postgres_server.password,
        "database.dbname": postgres_server.database,
        "topic.prefix": names["prefix"],
        "plugin.name": "pgoutput",
        "slot.name": names["slot"],
        "publication.name": names["publication"],
        "publication.autocreate.mode": "filtered",
        "table.include.list": f"{names['schema']}.customers",
        "key.converter": JSON_CONVERTER,
        "value.converter": JSON_CONVERTER,
    }


def _worker(tmp_path: Path, bootstrap: str, plugin_path: Path) -> StandaloneWorker:
    return StandaloneWorker(
        tmp_path / "worker",
        bootstrap,
        "debezium",
        {"plugin.path": str(plugin_path), "offset.flush.interval.ms": "500"},
    )


def test_snapshot_then_changes_arrive_as_debeziums_envelopes(
    postgres_server: Any,
    kafka_bootstrap: str,
    debezium_plugin_path: Path,
    cdc: dict[str, str],
    unique_name: str,
    tmp_path: Path,
) -> None:
    table = f"{cdc['schema']}.customers"
    name = f"{unique_name}-cdc"
    worker = _worker(tmp_path, kafka_bootstrap, debezium_plugin_path).start()
    topic = ChangeTopic(kafka_bootstrap, f"{cdc['prefix']}.{table}")
    try:
        plugins = worker.get("/connector-plugins").json()
        assert {"class": POSTGRES_CONNECTOR, "type": "source", "version": DEBEZIUM_VERSION} in plugins, plugins
        answer = _put(worker, name, _debezium_config(postgres_server, cdc))
        assert answer.status_code == 201, answer.text
        wait_until(
            lambda: _connector_state(worker, name) == ("RUNNING", "RUNNING"),
            timeout=120,
            message=lambda: f"{name} running: {worker.get(f'/connectors/{name}/status').text}",
        )
        status = worker.get(f"/connectors/{name}/status").json()
        assert status["connector"]["version"] == status["tasks"][0]["version"] == DEBEZIUM_VERSION

        # the snapshot: one read event per existing row
        snapshot = topic.wait_for(3, "the snapshot")
        assert [k["payload"] for k, _ in snapshot] == [{"id": 1}, {"id": 2}, {"id": 3}]
        events = [_payload(v) for _, v in snapshot]
        assert [e["op"] for e in events] == ["r", "r", "r"]
        assert [e["after"] for e in events] == [
            {"id": 1, "name": "ada"},
            {"id": 2, "name": "grace"},
            {"id": 3, "name": "edsger"},
        ]
        assert all(e["before"] is None for e in events)
        source = events[0]["source"]
        assert source["connector"] == "postgresql" and source["version"] == DEBEZIUM_VERSION
        assert (source["db"], source["schema"], source["table"]) == (
            postgres_server.database,
            cdc["schema"],
            "customers",
        )

        # streaming: an insert, an update, a delete and its tombstone
        execute(postgres_server, f"INSERT INTO {table} VALUES (4, 'barbara')")
        execute(postgres_server, f"UPDATE {table} SET name = 'ada lovelace' WHERE id = 1")
        execute(postgres_server, f"DELETE FROM {table} WHERE id = 2")
        changes = topic.wait_for(7, "insert, update, delete and tombstone")[3:]
        (k4, v4), (k1, v1), (k2, v2), (tomb_key, tomb_value) = changes
        assert (k4["payload"], _payload(v4)["op"], _payload(v4)["after"]) == (
            {"id": 4},
            "c",
            {"id": 4, "name": "barbara"},
        )
        assert (k1["payload"], _payload(v1)["op"], _payload(v1)["after"]) == (
            {"id": 1},
            "u",
            {"id": 1, "name": "ada lovelace"},
        )
        deleted = _payload(v2)
        assert (k2["payload"], deleted["op"], deleted["after"]) == ({"id": 2}, "d", None)
        assert deleted["before"]["id"] == 2  # the default replica identity: the key only
        assert (tomb_key["payload"], tomb_value) == ({"id": 2}, None)
        assert _payload(v4)["source"]["lsn"] < _payload(v1)["source"]["lsn"] < deleted["source"]["lsn"]

        # a column added mid-stream: the next event's schema and row carry it
        execute(postgres_server, f"ALTER TABLE {table} ADD COLUMN email TEXT")
        execute(postgres_server, f"INSERT INTO {table} VALUES (5, 'frances', 'fe@example.org')")
        _, v5 = topic.wait_for(8, "the row with the new column")[7]
        assert _payload(v5)["after"] == {"id": 5, "name": "frances", "email": "fe@example.org"}
        assert _fields(v5, "after") == ["id", "name", "email"]

        # the offsets API: Debezium's partition (the server) and its position in the WAL, which
        # reaches the last change delivered once the task's offsets are flushed
        def offsets_at(lsn: int) -> list[dict[str, Any]] | None:
            offsets = worker.get(f"/connectors/{name}/offsets").json().get("offsets") or []
            return offsets if offsets and offsets[0]["offset"].get("lsn", -1) >= lsn else None

        offsets = wait_until(
            lambda: offsets_at(_payload(v5)["source"]["lsn"]), timeout=60, message="the connector's offsets stored"
        )
        assert [o["partition"] for o in offsets] == [{"server": cdc["prefix"]}]

        # pause and resume: a change made while paused arrives after the resume
        assert http_client.put(f"{worker.url}/connectors/{name}/pause", timeout=30).status_code == 202
        wait_until(lambda: _connector_state(worker, name) == ("PAUSED", "PAUSED"), timeout=60, message="paused")
        execute(postgres_server, f"INSERT INTO {table} VALUES (6, 'katherine', NULL)")
        assert http_client.put(f"{worker.url}/connectors/{name}/resume", timeout=30).status_code == 202
        _, v6 = topic.wait_for(9, "the row inserted while paused")[8]
        assert _payload(v6)["after"]["id"] == 6

        # stop: the task ends, its last offsets flushed and kept; deleting the connector
        # releases the slot
        assert http_client.put(f"{worker.url}/connectors/{name}/stop", timeout=30).status_code == 204
        wait_until(lambda: _connector_state(worker, name)[0] == "STOPPED", timeout=60, message="stopped")
        assert offsets_at(_payload(v6)["source"]["lsn"]), worker.get(f"/connectors/{name}/offsets").text
        assert http_client.delete(f"{worker.url}/connectors/{name}", timeout=30).status_code == 204
    finally:
        topic.close()
        assert worker.stop() == 0, worker.log()


def test_a_worker_killed_mid_stream_loses_no_change(
    postgres_server: Any,
    kafka_bootstrap: str,
    debezium_plugin_path: Path,
    cdc: dict[str, str],
    unique_name: str,
    tmp_path: Path,
) -> None:
    table = f"{cdc['schema']}.customers"
    name = f"{unique_name}-cdc"
    worker = _worker(tmp_path, kafka_bootstrap, debezium_plugin_path).start()
    topic = ChangeTopic(kafka_bootstrap, f"{cdc['prefix']}.{table}")
    ids = range(100, 700)
    writer_error: list[BaseException] = []
    stop_writing = threading.Event()

    def write_rows() -> None:
        try:
            conn = postgres_server.connect()
            try:
                for i in ids:
                    if stop_writing.is_set():
                        return
                    conn.cursor().execute(f"INSERT INTO {table} VALUES (%s, %s)", (i, f"row {i}"))
                    conn.commit()
                    stop_writing.wait(0.01)  # a steady stream, not one burst
            finally:
                conn.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the test's thread
            writer_error.append(exc)

    writer = threading.Thread(target=write_rows, name="rows", daemon=True)
    try:
        answer = _put(worker, name, _debezium_config(postgres_server, cdc))
        assert answer.status_code == 201, answer.text
        topic.wait_for(3, "the snapshot")
        writer.start()
        topic.wait_for(3 + 150, "a part of the stream before the kill")
        worker.kill()  # SIGKILL, rows still being inserted
        worker.start()
        writer.join(120)
        assert not writer.is_alive() and not writer_error, writer_error

        def streamed_ids() -> list[int]:
            return [v["payload"]["after"]["id"] for _, v in topic.poll() if v and v["payload"]["op"] == "c"]

        wait_until(
            lambda: set(streamed_ids()) >= set(ids),
            timeout=120,
            message=lambda: (
                f"every inserted row after the restart; missing {sorted(set(ids) - set(streamed_ids()))[:10]}"
            ),
        )
        seen = streamed_ids()
        # at-least-once: each row in insertion order, and what repeats is one stretch, the
        # rows between the last offsets committed before the kill and the kill
        assert list(dict.fromkeys(seen)) == list(ids)
        repeated = sorted({i for i in seen if seen.count(i) > 1})
        assert all(b == a + 1 for a, b in itertools.pairwise(repeated)), repeated
        wait_until(lambda: _connector_state(worker, name) == ("RUNNING", "RUNNING"), timeout=60, message="running")
        assert http_client.delete(f"{worker.url}/connectors/{name}", timeout=30).status_code == 204
    finally:
        stop_writing.set()
        topic.close()
        worker.kill()
