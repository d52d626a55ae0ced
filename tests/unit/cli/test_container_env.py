"""``CONNECT_*`` variables as worker properties, as Confluent's cp-kafka-connect image maps
them: its documented ``docker run`` example, the underscore rules, log levels."""

from __future__ import annotations

import pytest

from sluice.cli.container_env import log_levels_from_env, property_name, worker_props_from_env
from sluice.cli.main import main

# Confluent's Kafka Connect quickstart: docker run -e ... confluentinc/cp-kafka-connect
SEED_EXAMPLE = {
    "CONNECT_BOOTSTRAP_SERVERS": "localhost:29092",
    "CONNECT_REST_PORT": "28082",
    "CONNECT_GROUP_ID": "quickstart",
    "CONNECT_CONFIG_STORAGE_TOPIC": "quickstart-config",
    "CONNECT_OFFSET_STORAGE_TOPIC": "quickstart-offsets",
    "CONNECT_STATUS_STORAGE_TOPIC": "quickstart-status",
    "CONNECT_KEY_CONVERTER": "org.apache.kafka.connect.json.JsonConverter",
    "CONNECT_VALUE_CONVERTER": "org.apache.kafka.connect.json.JsonConverter",
    "CONNECT_INTERNAL_KEY_CONVERTER": "org.apache.kafka.connect.json.JsonConverter",
    "CONNECT_INTERNAL_VALUE_CONVERTER": "org.apache.kafka.connect.json.JsonConverter",
    "CONNECT_REST_ADVERTISED_HOST_NAME": "localhost",
    "CONNECT_LOG4J_ROOT_LOGLEVEL": "DEBUG",
    "CONNECT_PLUGIN_PATH": "/usr/share/java",
    "HOME": "/root",
    "KAFKA_HEAP_OPTS": "-Xmx1G",
}


def test_the_seed_example_as_worker_properties() -> None:
    assert worker_props_from_env(SEED_EXAMPLE) == {
        "bootstrap.servers": "localhost:29092",
        "rest.port": "28082",
        "group.id": "quickstart",
        "config.storage.topic": "quickstart-config",
        "offset.storage.topic": "quickstart-offsets",
        "status.storage.topic": "quickstart-status",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "internal.key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "internal.value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "rest.advertised.host.name": "localhost",
        "plugin.path": "/usr/share/java",
    }
    assert log_levels_from_env(SEED_EXAMPLE) == ("DEBUG", {})


@pytest.mark.parametrize(
    ("variable", "prop"),
    [
        ("CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR", "config.storage.replication.factor"),
        ("CONNECT_PRODUCER_MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION", "producer.max.in.flight.requests.per.connection"),
        ("CONNECT_CONFIG_PROVIDERS_FILE_CLASS", "config.providers.file.class"),
        ("CONNECT_SOME__UNDERSCORED_KEY", "some_underscored.key"),
        ("CONNECT_A___DASHED_KEY", "a-dashed.key"),
        ("CONNECT_ACCESS_CONTROL_ALLOW_ORIGIN", "access.control.allow.origin"),
    ],
)
def test_underscores_dashes_and_dots(variable: str, prop: str) -> None:
    assert property_name(variable) == prop


def test_log4j_loggers() -> None:
    env = {"CONNECT_LOG4J_LOGGERS": "org.reflections=ERROR, org.apache.kafka.connect.runtime=warn"}
    assert log_levels_from_env(env) == (None, {"org.reflections": "ERROR", "org.apache.kafka.connect.runtime": "WARN"})
    with pytest.raises(ValueError, match="not logger=LEVEL"):
        log_levels_from_env({"CONNECT_LOG4J_LOGGERS": "org.reflections"})


def test_print_config_shows_the_properties_with_secrets_hidden(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for key in [k for k in __import__("os").environ if k.startswith("CONNECT_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("CONNECT_BOOTSTRAP_SERVERS", "b:9092")
    monkeypatch.setenv("CONNECT_CONSUMER_SASL_JAAS_CONFIG", "secret stuff")
    monkeypatch.setenv("CONNECT_SSL_TRUSTSTORE_PASSWORD", "changeit")
    assert main(["distributed", "--from-env", "--print-config"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "bootstrap.servers=b:9092",
        "consumer.sasl.jaas.config=[hidden]",
        "ssl.truststore.password=[hidden]",
    ]


def test_without_a_file_or_from_env_the_command_says_what_it_needs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["distributed"]) == 2
    assert "give a worker properties file, or --from-env" in capsys.readouterr().err
