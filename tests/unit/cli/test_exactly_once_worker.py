"""``exactly.once.source.support`` on a distributed worker: Kafka's values, and ``enabled``
refused at start (Sluice does not deliver source records exactly once yet)."""

from __future__ import annotations

import logging

import pytest

from sluice.api.errors import ConfigError
from sluice.cli.distributed import _refuse_exactly_once
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
    _refuse_exactly_once(_config(None))
    caplog.set_level(logging.INFO)
    _refuse_exactly_once(_config("PREPARING"))
    assert "delivered at least once" in caplog.text


def test_enabled_stops_the_start_naming_the_key() -> None:
    with pytest.raises(ConfigError, match=r"Invalid value enabled for configuration exactly.once.source.support: "):
        _refuse_exactly_once(_config("Enabled"))


def test_another_value_is_refused_as_kafka_refuses_it() -> None:
    with pytest.raises(ConfigError, match=r"exactly.once.source.support.*String must be one of \(case insensitive\)"):
        _config("sometimes")
