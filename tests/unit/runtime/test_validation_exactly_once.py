"""A distributed worker's exactly-once preflight checks of a source connector's config, as
Kafka's ``DistributedHerder`` makes them (``exactly.once.support=required``,
``transaction.boundary=connector``): a worker without ``exactly.once.source.support=enabled``
says so on ``required``'s key, an enabled one leaves the answer to the connector."""

from __future__ import annotations

from pathlib import Path

import pytest

from sluice.runtime.config.worker import WorkerConfig
from sluice.runtime.herder.validation import WORKER_WITHOUT_EXACTLY_ONCE, validate_connector_config
from sluice.runtime.plugins import Plugins

PLUGINS_DIR = Path(__file__).resolve().parents[2] / "plugins"
CONNECTOR = "sluice_test_plugins.CapabilityAnsweringSourceConnector"
UNEXPECTED = "An unexpected error occurred during validation"


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    return Plugins(plugin_path=[str(PLUGINS_DIR)])


def _errors(
    plugins: Plugins, *, distributed: bool = True, worker: WorkerConfig | None = None, **config: str
) -> dict[str, list[str]]:
    body = {
        "connector.class": CONNECTOR,
        "name": "c",
        "topic": "t",
        **{k.replace("_", "."): v for k, v in config.items()},
    }
    infos = validate_connector_config(plugins, body, worker, distributed=distributed)
    return {c.value.name: c.value.errors for c in infos.configs if c.value and c.value.errors}


@pytest.mark.parametrize(
    ("answer", "connector_error"),
    [
        ("SUPPORTED", None),
        ("UNSUPPORTED", "The connector does not support exactly-once semantics with the provided configuration."),
        ("none", "The connector does not implement the API required for preflight validation of exactly-once"),
        ("raise", f"{UNEXPECTED}: cannot tell today"),
        ("raise-silently", f"{UNEXPECTED}; please see the worker logs for more details."),
    ],
)
def test_required_exactly_once_is_refused_by_the_worker_and_by_a_connector_that_is_not_supported(
    plugins: Plugins, answer: str, connector_error: str | None
) -> None:
    errors = _errors(plugins, exactly_once_support="required", answer=answer)
    support = errors.pop("exactly.once.support")
    assert support[0] == WORKER_WITHOUT_EXACTLY_ONCE
    if connector_error is None:
        assert support[1:] == []
    else:
        assert len(support) == 2 and support[1].startswith(connector_error), support
    assert errors == {}


@pytest.mark.parametrize(
    ("answer", "connector_error"),
    [
        ("SUPPORTED", None),
        ("UNSUPPORTED", "The connector does not support exactly-once semantics with the provided configuration."),
        ("none", "The connector does not implement the API required for preflight validation of exactly-once"),
        ("raise", f"{UNEXPECTED}: cannot tell today"),
    ],
)
def test_a_worker_with_exactly_once_enabled_leaves_required_to_the_connector(
    plugins: Plugins, answer: str, connector_error: str | None
) -> None:
    worker = WorkerConfig.distributed(
        {"bootstrap.servers": "localhost:9092", "group.id": "g", "exactly.once.source.support": "enabled"}
        | {f"{kind}.storage.topic": kind for kind in ("config", "offset", "status")}
        | {f"{kind}.converter": "org.apache.kafka.connect.json.JsonConverter" for kind in ("key", "value")}
    )
    errors = _errors(plugins, worker=worker, exactly_once_support="required", answer=answer)
    if connector_error is None:
        assert errors == {}
    else:
        assert list(errors) == ["exactly.once.support"] and len(errors["exactly.once.support"]) == 1
        assert errors["exactly.once.support"][0].startswith(connector_error)


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ("SUPPORTED", None),
        ("UNSUPPORTED", "The connector does not support connector-defined transaction boundaries"),
        ("none", "This connector has returned a null value from its canDefineTransactionBoundaries method"),
        ("raise", f"{UNEXPECTED}: cannot tell today"),
    ],
)
def test_connector_defined_transaction_boundaries_are_asked_of_the_connector(
    plugins: Plugins, answer: str, error: str | None
) -> None:
    errors = _errors(plugins, transaction_boundary="connector", answer=answer)
    if error is None:
        assert errors == {}
    else:
        assert list(errors) == ["transaction.boundary"] and len(errors["transaction.boundary"]) == 1
        assert errors["transaction.boundary"][0].startswith(error)


def test_requested_poll_and_a_standalone_worker_ask_nothing(plugins: Plugins) -> None:
    assert _errors(plugins, exactly_once_support="requested", transaction_boundary="poll", answer="raise") == {}
    standalone = _errors(
        plugins, distributed=False, exactly_once_support="required", transaction_boundary="connector", answer="raise"
    )
    assert standalone == {}


def test_an_invalid_value_is_only_the_value_error(plugins: Plugins) -> None:
    errors = _errors(plugins, exactly_once_support="always", answer="raise")
    assert list(errors) == ["exactly.once.support"] and len(errors["exactly.once.support"]) == 1
    assert "String must be one of" in errors["exactly.once.support"][0]
