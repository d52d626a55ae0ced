"""Acceptance: workers on a SASL_SSL broker, with the client settings a Kafka Connect user
writes (``security.protocol``, ``sasl.jaas.config``, ``ssl.truststore.*``) for the worker's
own clients and, under ``producer.``/``consumer.``, for the connectors'. File data moves end
to end in standalone and distributed mode; a wrong password gives a FAILED task or a
start-up error that names the problem, never a hang."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests import http_client
from tests.helpers import read_topic, wait_until
from tests.integration.conftest_databases import execute
from tests.integration.workers import DistributedWorker, StandaloneWorker

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("databases")]


def _worker_settings(client: dict[str, str], **replace: str) -> dict[str, str | None]:
    """The Java client settings at the top (the worker's own clients) and for the
    connectors' producers and consumers, as a Kafka Connect worker config holds them."""
    client = {**client, **replace}
    security = {k: v for k, v in client.items() if k != "bootstrap.servers"}
    settings: dict[str, str | None] = dict(security)
    for prefix in ("producer.", "consumer."):
        settings.update({prefix + k: v for k, v in security.items()})
    return settings


def _jaas(mechanism: str, password: str) -> str:
    module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
    return f'org.apache.kafka.common.security.{module} required username="alice" password="{password}";'


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _failed_task(worker: StandaloneWorker, connector: str, config: dict[str, str]) -> dict[str, Any]:
    """Create ``connector`` with ``config``; its task 0's status once it is FAILED (within a deadline)."""
    r = http_client.put(f"{worker.url}/connectors/{connector}/config", json=config, timeout=60)
    assert r.status_code == 201, r.text

    def failed() -> dict[str, Any] | None:
        status: dict[str, Any] = worker.get(f"/connectors/{connector}/tasks/0/status").json()
        return status if status.get("state") == "FAILED" else None

    return wait_until(failed, timeout=90, message=lambda: f"task FAILED:\n{worker.log()[-4000:]}")


def _move_file_data(worker: StandaloneWorker, tmp_path: Path, name: str, count: int = 200) -> None:
    source, sink = tmp_path / f"{name}-in.txt", tmp_path / f"{name}-out.txt"
    source.write_text("".join(f"line-{i}\n" for i in range(count)))
    topic = f"{name}-t"
    for connector, config in (
        (f"{name}-src", {"connector.class": "FileStreamSource", "file": str(source), "topic": topic}),
        (f"{name}-sink", {"connector.class": "FileStreamSink", "file": str(sink), "topics": topic}),
    ):
        r = http_client.put(f"{worker.url}/connectors/{connector}/config", json=config, timeout=60)
        assert r.status_code == 201, r.text
    wait_until(
        lambda: len(_lines(sink)) >= count,
        timeout=150,
        message=lambda: f"{count} lines through the secured broker, have {len(_lines(sink))}:\n{worker.log()[-4000:]}",
    )
    assert _lines(sink) == [f"line-{i}" for i in range(count)]


@pytest.mark.parametrize(
    ("mechanism", "truststore"), [("SCRAM-SHA-512", "PKCS12"), ("PLAIN", "PEM")], ids=["scram-pkcs12", "plain-pem"]
)
def test_standalone_worker_moves_file_data_over_sasl_ssl(
    secured_kafka: Any, tmp_path: Path, unique_name: str, mechanism: str, truststore: str
) -> None:
    client = secured_kafka.client_properties(mechanism=mechanism, truststore=truststore)
    worker = StandaloneWorker(tmp_path, client["bootstrap.servers"], "w", extra=_worker_settings(client)).start()
    try:
        _move_file_data(worker, tmp_path, unique_name)
        # GET / shows the cluster id, looked up with the worker's own secured admin client
        assert worker.get("/").json()["kafka_cluster_id"]
    finally:
        assert worker.stop() == 0, worker.log()[-3000:]


def test_distributed_worker_moves_file_data_over_sasl_ssl(secured_kafka: Any, tmp_path: Path, unique_name: str) -> None:
    """Internal topics (librdkafka), group membership (kafka-python) and the connectors'
    clients all on SCRAM-SHA-256 over TLS."""
    client = secured_kafka.client_properties(mechanism="SCRAM-SHA-256", truststore="PKCS12")
    worker = DistributedWorker(
        tmp_path,
        client["bootstrap.servers"],
        "w",
        unique_name,
        extra={
            **_worker_settings(client),
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        },
    ).start(timeout=180)
    try:
        _move_file_data(worker, tmp_path, unique_name)
    finally:
        assert worker.stop() == 0, worker.log()[-3000:]


def test_a_wrong_connector_password_fails_the_task_naming_authentication(
    secured_kafka: Any, tmp_path: Path, unique_name: str
) -> None:
    client = secured_kafka.client_properties(mechanism="SCRAM-SHA-512", truststore="PKCS12")
    worker = StandaloneWorker(tmp_path, client["bootstrap.servers"], "w", extra=_worker_settings(client)).start()
    source = tmp_path / "in.txt"
    source.write_text("a\nb\n")
    try:
        config = {
            "connector.class": "FileStreamSource",
            "file": str(source),
            "topic": f"{unique_name}-t",
            "producer.override.sasl.jaas.config": _jaas("SCRAM-SHA-512", "not-her-password"),
        }
        failed = _failed_task(worker, unique_name, config)
        assert "Authentication failed" in failed["trace"], failed["trace"]
    finally:
        assert worker.stop() == 0, worker.log()[-3000:]


def test_an_untranslatable_setting_fails_the_task_naming_the_key(
    secured_kafka: Any, tmp_path: Path, unique_name: str
) -> None:
    client = secured_kafka.client_properties(mechanism="PLAIN", truststore="PKCS12")
    worker = StandaloneWorker(tmp_path, client["bootstrap.servers"], "w", extra=_worker_settings(client)).start()
    try:
        config = {
            "connector.class": "FileStreamSink",
            "file": str(tmp_path / "out.txt"),
            "topics": f"{unique_name}-t",
            "consumer.override.ssl.truststore.password": "not-the-store-password",
        }
        failed = _failed_task(worker, unique_name, config)
        assert "ssl.truststore.password" in failed["trace"], failed["trace"]
        assert "not-the-store-password" not in failed["trace"]
    finally:
        assert worker.stop() == 0, worker.log()[-3000:]


@pytest.mark.parametrize("mode", ["standalone", "distributed"])
def test_a_wrong_worker_password_stops_the_start_naming_authentication(
    secured_kafka: Any, tmp_path: Path, unique_name: str, mode: str
) -> None:
    client = secured_kafka.client_properties(mechanism="SCRAM-SHA-256", truststore="PEM")
    settings = _worker_settings(client, **{"sasl.jaas.config": _jaas("SCRAM-SHA-256", "not-her-password")})
    kind = StandaloneWorker if mode == "standalone" else DistributedWorker
    args: tuple[str, ...] = ("w",) if mode == "standalone" else ("w", unique_name)
    worker = kind(tmp_path, client["bootstrap.servers"], *args, extra=settings)  # type: ignore[arg-type]
    started = time.monotonic()
    if mode == "distributed":
        # the internal topics cannot be read: the worker must give up and say why
        with pytest.raises(AssertionError, match="exited with") as caught:
            worker.start(timeout=150)
        # named by the worker's own check, not by a store's timeout (librdkafka retries a
        # refused login for ever; a Java client gives up at once)
        assert "Cannot authenticate to the Kafka cluster" in str(caught.value), caught.value
        assert "Authentication failed" in str(caught.value)
        assert time.monotonic() - started < 60
    else:
        # standalone needs Kafka only for its tasks and GET /'s cluster id; it starts, and
        # a connector's task, with the same wrong credentials, fails and says why
        worker.start()
        try:
            source = tmp_path / "in.txt"
            source.write_text("a\n")
            config = {"connector.class": "FileStreamSource", "file": str(source), "topic": f"{unique_name}-t"}
            failed = _failed_task(worker, unique_name, config)
            assert "Authentication failed" in failed["trace"], failed["trace"]
        finally:
            assert worker.stop() == 0, worker.log()[-3000:]


def test_a_split_bulk_read_writes_through_sparks_kafka_sink_over_sasl_ssl(
    secured_kafka: Any, postgres_server: Any, tmp_path: Path, unique_name: str
) -> None:
    """Spark's Kafka sink (a Java client, for split reads) takes the settings as given."""
    client = secured_kafka.client_properties(mechanism="SCRAM-SHA-512", truststore="PKCS12")
    table = f"t_{uuid.uuid4().hex[:10]}"
    rows_total = 3000
    execute(
        postgres_server,
        f"CREATE TABLE {table} (id bigint PRIMARY KEY, name varchar(40) NOT NULL)",
        f"INSERT INTO {table} (id, name) VALUES (%s, %s)",
        params=[(i, f"name-{i}") for i in range(rows_total)],
    )
    worker = StandaloneWorker(tmp_path, client["bootstrap.servers"], "w", extra=_worker_settings(client)).start()
    try:
        r = http_client.put(
            f"{worker.url}/connectors/{unique_name}/config",
            json={
                "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
                "connection.url": postgres_server.url,
                "connection.user": postgres_server.user,
                "connection.password": postgres_server.password,
                "mode": "bulk",
                "table.whitelist": table,
                "topic.prefix": f"{unique_name}-",
                "poll.interval.ms": "3600000",
                "sluice.bulk.split.partitions": "3",
                "sluice.bulk.split.min.rows": "1000",
            },
            timeout=60,
        )
        assert r.status_code == 201, r.text
        # read back on the broker's plaintext listener: what the secured one took
        messages = read_topic(secured_kafka.bootstrap, f"{unique_name}-{table}", rows_total, timeout=180)
        assert sorted(json.loads(m.value())["payload"]["id"] for m in messages) == list(range(rows_total))
        assert f"{unique_name}-0 read {rows_total} records in 3 Spark partitions" in worker.log()
    finally:
        assert worker.stop() == 0, worker.log()[-3000:]
        execute(postgres_server, f"DROP TABLE IF EXISTS {table}")


def test_java_connectors_move_file_data_over_sasl_ssl_and_a_wrong_password_fails_the_task(
    secured_kafka: Any, tmp_path: Path, unique_name: str
) -> None:
    """Kafka's own FileStream connectors (Java, in the JVM task host) with the same worker
    settings: Kafka's producer, consumer and admin client take them as written."""
    from sluice_devtools.jars import kafka_connect_classpath

    _, file_plugin_dir = kafka_connect_classpath()
    client = secured_kafka.client_properties(mechanism="SCRAM-SHA-512", truststore="PKCS12")
    settings = {**_worker_settings(client), "plugin.path": str(file_plugin_dir)}
    worker = StandaloneWorker(tmp_path, client["bootstrap.servers"], "w", extra=settings).start()
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"line-{i}\n" for i in range(200)))
    topic = f"{unique_name}-java"
    java = {"connector.plugin.version": "4.3.1"}
    try:
        for connector, config in (
            ("java-src", {"connector.class": "FileStreamSource", "file": str(source), "topic": topic, **java}),
            ("java-sink", {"connector.class": "FileStreamSink", "file": str(sink), "topics": topic, **java}),
        ):
            r = http_client.put(f"{worker.url}/connectors/{connector}/config", json=config, timeout=60)
            assert r.status_code == 201, r.text
        wait_until(
            lambda: _lines(sink) == [f"line-{i}" for i in range(200)],
            timeout=150,
            message=lambda: f"200 lines through Java tasks, have {len(_lines(sink))}:\n{worker.log()[-4000:]}",
        )
        assert worker.get("/connectors/java-src/status").json()["tasks"][0]["version"] == "4.3.1"
        wrong = {
            "connector.class": "FileStreamSource",
            "file": str(source),
            "topic": f"{topic}-wrong",
            "producer.override.sasl.jaas.config": _jaas("SCRAM-SHA-512", "not-her-password"),
            **java,
        }
        failed = _failed_task(worker, "java-wrong", wrong)
        assert "SaslAuthenticationException" in failed["trace"], failed["trace"]
    finally:
        assert worker.stop() == 0, worker.log()[-3000:]
