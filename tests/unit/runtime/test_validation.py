"""Connector config validation as the REST validate endpoint and create use it."""

from __future__ import annotations

import pytest

from sluice.runtime.herder.base import BadRequestError
from sluice.runtime.herder.validation import invalid_config_message, validate_connector_config
from sluice.runtime.plugins import Plugins


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    return Plugins()


def _errors(infos) -> dict[str, list[str]]:
    return {c.value.name: c.value.errors for c in infos.configs if c.value and c.value.errors}


def test_valid_file_source_config(plugins: Plugins) -> None:
    infos = validate_connector_config(
        plugins,
        {
            "name": "src",
            "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
            "file": "/tmp/x",
            "topic": "t",
        },
    )
    assert infos.error_count == 0
    assert infos.name == "org.apache.kafka.connect.file.FileStreamSourceConnector"
    assert infos.groups == [
        "Common",
        "Transforms",
        "Predicates",
        "Error Handling",
        "Topic Creation",
        "Exactly Once Support",
        "offsets.topic",
    ]
    names = [c.definition.name for c in infos.configs if c.definition]
    assert names[:4] == ["name", "connector.class", "connector.plugin.version", "tasks.max"]
    assert {"file", "topic", "batch.size", "errors.tolerance", "exactly.once.support"} <= set(names)
    tasks_max = next(c for c in infos.configs if c.definition and c.definition.name == "tasks.max")
    assert tasks_max.definition.type == "INT" and tasks_max.definition.default_value == "1"
    assert tasks_max.value.value == "1"


def test_missing_topic_and_bad_tasks_max_are_reported(plugins: Plugins) -> None:
    infos = validate_connector_config(plugins, {"name": "src", "connector.class": "FileStreamSource", "tasks.max": "0"})
    errors = _errors(infos)
    assert errors["topic"] == ['Missing required configuration "topic" which has no default value.']
    assert errors["tasks.max"] == ["Invalid value 0 for configuration tasks.max: Value must be at least 1"]
    assert infos.error_count == 2
    message = invalid_config_message(infos)
    assert message.startswith("Connector configuration is invalid and contains the following 2 error(s):\n")
    assert message.endswith("`/connector-plugins/{connectorType}/config/validate`")


def test_sink_needs_exactly_one_of_topics_and_topics_regex(plugins: Plugins) -> None:
    neither = _errors(validate_connector_config(plugins, {"name": "s", "connector.class": "FileStreamSink"}))
    assert neither["topics"] == neither["topics.regex"] == ["Must configure one of topics or topics.regex"]
    both = _errors(
        validate_connector_config(
            plugins, {"name": "s", "connector.class": "FileStreamSink", "topics": "a", "topics.regex": "b.*"}
        )
    )
    assert both["topics"] == ["topics and topics.regex are mutually exclusive options, but both are set."]
    groups = validate_connector_config(
        plugins, {"name": "s", "connector.class": "FileStreamSink", "topics": "a"}
    ).groups
    assert groups == ["Common", "Transforms", "Predicates", "Error Handling"]


def test_transforms_tolerance_and_dead_letter_queue_are_accepted(plugins: Plugins) -> None:
    errors = _errors(
        validate_connector_config(
            plugins,
            {
                "name": "s",
                "connector.class": "FileStreamSink",
                "topics": "a",
                "transforms": "x",
                "transforms.x.type": "org.apache.kafka.connect.transforms.RegexRouter",
                "transforms.x.regex": "a",
                "transforms.x.replacement": "b",
                "errors.tolerance": "all",
                "errors.deadletterqueue.topic.name": "dlq",
            },
        )
    )
    assert not errors


def test_missing_or_unknown_connector_class_is_a_bad_request(plugins: Plugins) -> None:
    with pytest.raises(BadRequestError, match=r"Connector config \{name=x, topic=t\} contains no connector type"):
        validate_connector_config(plugins, {"name": "x", "topic": "t"})
    with pytest.raises(
        BadRequestError,
        match="Failed to find any class that implements Connector and which name "
        "matches NoSuchThing, available connectors are: .*FileStreamSink",
    ):
        validate_connector_config(plugins, {"name": "x", "connector.class": "NoSuchThing"})


def test_connector_class_aliases(plugins: Plugins) -> None:
    for alias in (
        "FileStreamSink",
        "FileStreamSinkConnector",
        "org.apache.kafka.connect.file.FileStreamSinkConnector",
        "sluice.connectors.file.sink.FileStreamSinkConnector",
    ):
        assert plugins.resolve_connector(alias).class_name == "org.apache.kafka.connect.file.FileStreamSinkConnector"
