"""The kafka-python adapter: settings translation and failing to reach a cluster."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from sluice.api.errors import ConnectError
from sluice.runtime.distributed.kafka_group import KafkaGroupClient, client_settings


def test_kafka_keys_become_kafka_python_settings() -> None:
    settings = client_settings(
        {
            "client.id": "worker-7",
            "request.timeout.ms": "40000",
            "reconnect.backoff.max.ms": 1000,
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "PLAIN",
            "retry_backoff_ms": 250,
            "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required;",
            "session.timeout.ms": "10000",
            "bootstrap.servers": "elsewhere:9092",
        }
    )
    assert settings == {
        "client_id": "worker-7",
        "request_timeout_ms": 40000,
        "reconnect_backoff_max_ms": 1000,
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "PLAIN",
        "retry_backoff_ms": 250,
    }
    assert client_settings(None) == {}


class _Handler:
    def group_protocols(self) -> list[tuple[str, bytes]]:
        return []

    def perform_assignment(self, *args: object) -> dict[str, bytes]:
        return {}

    def on_join_complete(self, *args: object) -> None:
        pass

    def on_state_change(self) -> None:
        pass


def test_an_unreachable_cluster_is_a_connect_error() -> None:
    # Something listens but is not Kafka: it hangs up on every connection. (A port nobody
    # listens on would do too, but kafka-python 3.0.12 leaks the sockets of refused
    # connection attempts.)
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def hang_up() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            conn.close()

    thread = threading.Thread(target=hang_up, daemon=True)
    thread.start()
    started = time.monotonic()
    try:
        with pytest.raises(ConnectError, match="Cannot reach the Kafka cluster"):
            KafkaGroupClient(
                handler=_Handler(),
                protocol_type="connect",
                bootstrap_servers=f"127.0.0.1:{server.getsockname()[1]}",
                group_id="g",
                session_timeout_ms=10000,
                heartbeat_interval_ms=3000,
                rebalance_timeout_ms=60000,
                bootstrap_timeout_ms=500,
            )
    finally:
        stop.set()
        thread.join()
        server.close()
    assert time.monotonic() - started < 10
