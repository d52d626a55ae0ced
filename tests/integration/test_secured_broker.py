"""The tooling's SASL_SSL broker (``KafkaBroker(..., sasl_ssl=True)``, ``sluice dev kafka start
--sasl-ssl``), checked with clients that are not Sluice's: librdkafka with its own settings
(``sasl.username``, ``sasl.password``, ``ssl.ca.location``) round-trips a message with every
mechanism, and is refused for a wrong password or an untrusted certificate; the Java client
settings of ``client_properties()`` name the listener, the user and stores that hold the CA."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Message, Producer
from cryptography import x509
from cryptography.hazmat.primitives.serialization import pkcs12

from sluice_devtools import DevToolsError
from sluice_devtools.kafka import SASL_MECHANISMS, SASL_PASSWORD, SASL_USER, KafkaBroker, quiet_client_logger
from tests.helpers import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("databases")]


def _librdkafka(bootstrap: str, mechanism: str, ca: Path, password: str = SASL_PASSWORD) -> dict[str, Any]:
    """librdkafka's own settings for the SASL_SSL listener (not the Java ones)."""
    return {
        "bootstrap.servers": bootstrap,
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": mechanism,
        "sasl.username": SASL_USER,
        "sasl.password": password,
        "ssl.ca.location": str(ca),
        "logger": quiet_client_logger(),
    }


def _round_trip(bootstrap: str, mechanism: str, ca: Path, topic: str) -> None:
    """Produce one record over SASL_SSL and read it back over SASL_SSL."""
    settings = _librdkafka(bootstrap, mechanism, ca)
    value = f"hello over {mechanism}".encode()
    reports: list[tuple[KafkaError | None, Message]] = []
    producer = Producer(settings)
    producer.produce(topic, key=b"k", value=value, on_delivery=lambda err, msg: reports.append((err, msg)))
    assert producer.flush(60) == 0, "the record was not delivered in time"
    assert [err for err, _ in reports] == [None]

    consumer = Consumer(
        {**settings, "group.id": f"{topic}-reader", "auto.offset.reset": "earliest", "enable.auto.commit": False}
    )
    consumer.subscribe([topic])
    try:

        def received() -> Message | None:
            message = consumer.poll(0.5)
            if message is not None and message.error() is not None:
                raise AssertionError(f"consumer error: {message.error()}")
            return message

        message = wait_until(received, timeout=60, message=f"the record over {mechanism}")
    finally:
        consumer.close()
    assert message is not None  # wait_until returns a truthy value
    assert (message.topic(), message.key(), message.value()) == (topic, b"k", value)


def _first_error(settings: dict[str, Any], codes: tuple[int, ...]) -> KafkaError:
    """The first client error with one of ``codes`` a producer with ``settings`` reports."""
    errors: list[KafkaError] = []
    producer = Producer({**settings, "error_cb": errors.append})
    producer.produce("never-delivered", value=b"x")  # makes the client connect now

    def refused() -> KafkaError | None:
        producer.poll(0.1)
        return next((e for e in errors if e.code() in codes), None)

    error = wait_until(refused, timeout=30, message=lambda: f"an error with code {codes}; have {errors}")
    producer.purge()  # nothing may linger in the queue: the client is dropped next
    assert error is not None  # wait_until returns a truthy value
    return error


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sluice_devtools.cli", *args], capture_output=True, text=True, timeout=300
    )


# ---------------------------------------------------------------------------- real clients


@pytest.mark.parametrize("mechanism", SASL_MECHANISMS)
def test_librdkafka_round_trips_a_record_with_each_mechanism(
    secured_kafka: KafkaBroker, unique_name: str, mechanism: str
) -> None:
    secured_kafka.create_topic(unique_name)  # on the PLAINTEXT listener
    _round_trip(secured_kafka.sasl_ssl_bootstrap, mechanism, secured_kafka.tls.ca_pem, unique_name)


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_a_wrong_password_fails_authentication(secured_kafka: KafkaBroker, mechanism: str) -> None:
    settings = _librdkafka(secured_kafka.sasl_ssl_bootstrap, mechanism, secured_kafka.tls.ca_pem, "not-her-password")
    error = _first_error(settings, (KafkaError._AUTHENTICATION,))
    assert "Authentication failed" in error.str(), error.str()


def test_a_client_that_does_not_trust_the_test_ca_is_refused(secured_kafka: KafkaBroker) -> None:
    settings = _librdkafka(secured_kafka.sasl_ssl_bootstrap, "SCRAM-SHA-256", secured_kafka.tls.other_ca_pem)
    error = _first_error(settings, (KafkaError._SSL, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN))
    assert "certificate verify failed" in error.str(), error.str()


# ---------------------------------------------------------------------------- the Java settings


@pytest.mark.parametrize("mechanism", SASL_MECHANISMS)
def test_client_properties_name_the_listener_user_and_pkcs12_truststore(
    secured_kafka: KafkaBroker, mechanism: str
) -> None:
    props = secured_kafka.client_properties(mechanism=mechanism)
    module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
    assert props == {
        "bootstrap.servers": secured_kafka.sasl_ssl_bootstrap,
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": mechanism,
        "sasl.jaas.config": f'org.apache.kafka.common.security.{module} required username="{SASL_USER}" '
        f'password="{SASL_PASSWORD}";',
        "ssl.truststore.location": str(secured_kafka.tls.truststore_p12),
        "ssl.truststore.password": secured_kafka.tls.password,
        "ssl.truststore.type": "PKCS12",
    }
    # the truststore opens with that password and trusts the CA that signed the broker's certificate
    store = pkcs12.load_pkcs12(
        Path(props["ssl.truststore.location"]).read_bytes(), props["ssl.truststore.password"].encode()
    )
    ca = x509.load_pem_x509_certificate(secured_kafka.tls.ca_pem.read_bytes())
    assert [c.certificate for c in store.additional_certs] == [ca]


def test_client_properties_with_a_pem_truststore(secured_kafka: KafkaBroker) -> None:
    props = secured_kafka.client_properties(mechanism="SCRAM-SHA-256", truststore="PEM")
    assert props["ssl.truststore.type"] == "PEM"
    assert props["ssl.truststore.location"] == str(secured_kafka.tls.ca_pem)
    assert "ssl.truststore.password" not in props
    assert props["sasl.mechanism"] == "SCRAM-SHA-256"
    # librdkafka takes the same PEM file: the settings describe a listener that works
    assert Path(props["ssl.truststore.location"]).read_text().startswith("-----BEGIN CERTIFICATE-----")


def test_client_properties_refuses_unknown_choices(secured_kafka: KafkaBroker) -> None:
    with pytest.raises(ValueError, match="GSSAPI"):
        secured_kafka.client_properties(mechanism="GSSAPI")
    with pytest.raises(ValueError, match="JKS"):
        secured_kafka.client_properties(truststore="JKS")


def test_the_state_file_records_the_secured_listener(secured_kafka: KafkaBroker) -> None:
    other = KafkaBroker.from_state(secured_kafka.work_dir)
    assert other.sasl_ssl_bootstrap == secured_kafka.sasl_ssl_bootstrap
    assert other.client_properties() == secured_kafka.client_properties()
    status = other.status()
    assert status.address("sasl_ssl_bootstrap") == secured_kafka.sasl_ssl_bootstrap
    assert f"sasl_ssl_bootstrap={secured_kafka.sasl_ssl_bootstrap}" in str(status)
    state = json.loads((secured_kafka.work_dir / "state.json").read_text())
    assert f"127.0.0.1:{state['sasl_ssl_port']}" == secured_kafka.sasl_ssl_bootstrap


def test_a_broker_not_started_or_without_sasl_ssl_says_so(tmp_path: Path) -> None:
    with pytest.raises(DevToolsError, match="has not been started"):
        KafkaBroker(tmp_path / "a", sasl_ssl=True).sasl_ssl_bootstrap  # noqa: B018
    with pytest.raises(DevToolsError, match="has not been started"):
        KafkaBroker(tmp_path / "b", sasl_ssl=True).client_properties()
    with pytest.raises(DevToolsError, match="SASL_SSL"):
        KafkaBroker(tmp_path / "c").tls  # noqa: B018


# ---------------------------------------------------------------------------- the command line


def test_cli_adds_sasl_ssl_to_a_work_dir_first_started_without_it(tmp_path: Path, unique_name: str) -> None:
    """``start --sasl-ssl`` on a storage formatted without SCRAM credentials (a plain
    ``start`` before) still lets SCRAM users in; a running plain broker is not silently
    taken for a secured one."""
    work_dir = tmp_path / "kafka"
    try:
        plain = _cli("kafka", "start", "--dir", str(work_dir), "--timeout", "120")
        assert plain.returncode == 0, plain.stderr
        refused = _cli("kafka", "start", "--sasl-ssl", "--dir", str(work_dir))
        assert refused.returncode == 1
        assert "without a SASL_SSL listener" in refused.stderr, refused.stderr
        assert _cli("kafka", "stop", "--dir", str(work_dir)).returncode == 0

        started = _cli("kafka", "start", "--sasl-ssl", "--dir", str(work_dir), "--timeout", "120")
        assert started.returncode == 0, started.stderr
        lines = started.stdout.splitlines()
        assert lines[0] == plain.stdout.strip()  # first line: the PLAINTEXT bootstrap, kept on restart
        broker = KafkaBroker.from_state(work_dir)
        assert lines[1] == f"sasl_ssl: {broker.sasl_ssl_bootstrap}"
        printed = dict(line.split("=", 1) for line in lines[2:] if not line.startswith("#"))
        assert printed == broker.client_properties()

        status = _cli("kafka", "status", "--dir", str(work_dir))
        assert status.returncode == 0
        assert f"sasl_ssl_bootstrap={broker.sasl_ssl_bootstrap}" in status.stdout

        broker.create_topic(unique_name)
        _round_trip(broker.sasl_ssl_bootstrap, "SCRAM-SHA-256", broker.tls.ca_pem, unique_name)
    finally:
        KafkaBroker(work_dir).stop()
