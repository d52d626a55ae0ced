"""``exactly.once.source.support`` on a distributed worker: Kafka's values and what each
means for the worker's source tasks."""

from __future__ import annotations

import logging

import pytest

from sluice.api.errors import ConfigError
from sluice.cli.distributed import _announce_exactly_once
from sluice.runtime.config import WorkerConfig

PROPS = {
    "bootstrap.servers": "127.0.0.1:9092",
    "group.id": "g",
    "config.storage.topic": "c",
    "offset.storage.topic": "o",
    "status.storage.topic": "s",
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
}


def _config(value: str | None) -> WorkerConfig:
    extra = {} if value is None else {"exactly.once.source.support": value}
    return WorkerConfig.distributed({**PROPS, **extra})


def test_disabled_is_the_default_and_preparing_is_at_least_once(caplog: pytest.LogCaptureFixture) -> None:
    assert _config(None).get("exactly.once.source.support") == "disabled"
    assert not _config(None).exactly_once_source
    caplog.set_level(logging.INFO)
    _announce_exactly_once(_config("PREPARING"))
    assert "delivered at least once" in caplog.text
    assert not _config("PREPARING").exactly_once_source


def test_enabled_runs_source_tasks_exactly_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    _announce_exactly_once(_config("Enabled"))
    assert "source tasks deliver exactly once" in caplog.text
    assert _config("Enabled").exactly_once_source


def test_another_value_is_refused_as_kafka_refuses_it() -> None:
    with pytest.raises(ConfigError, match=r"exactly.once.source.support.*String must be one of \(case insensitive\)"):
        _config("sometimes")
