"""The ``secured_kafka`` fixture: a real Kafka broker with a SASL_SSL listener.

Loaded as a plugin (``"tests.integration.conftest_secured"`` in ``pytest_plugins`` of
``tests/conftest.py``). Started on first use by a test that asks for it (never otherwise)
by the project's own tooling (``KafkaBroker(..., sasl_ssl=True)``), with its files in a
temporary directory, and stopped (by its pid) when the tests of its group are done
(:mod:`tests.integration.group_servers`). It is a broker of its
own, apart from ``kafka_broker``.

Use ``sasl_ssl_bootstrap`` (``127.0.0.1:PORT``), ``client_properties(mechanism=...,
truststore="PKCS12"|"PEM")`` (the Java client settings a Kafka Connect user writes),
``tls`` (the test CA: ``tls.ca_pem``, ``tls.truststore_p12``, ``tls.password``) and
``sluice_devtools.kafka.SASL_USER``/``SASL_PASSWORD`` (``alice``/``alice-secret``, for
PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512). ``bootstrap`` and ``create_topic`` work on its
PLAINTEXT listener.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.integration.group_servers import GROUP_SERVERS, started

if TYPE_CHECKING:
    from sluice_devtools.kafka import KafkaBroker

START_TIMEOUT = 180.0


@pytest.fixture(scope="module")
def secured_kafka(tmp_path_factory: pytest.TempPathFactory) -> KafkaBroker:
    """The group's SASL_SSL broker (started on first use, stopped when the group is done)."""
    from sluice_devtools.kafka import KafkaBroker

    return GROUP_SERVERS.get(
        "secured-kafka",
        lambda: started(KafkaBroker(tmp_path_factory.mktemp("kafka-secured"), sasl_ssl=True), START_TIMEOUT),
    )
