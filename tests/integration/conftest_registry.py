"""The ``schema_registry`` fixture: a real Schema Registry (Apicurio Registry, Confluent-compatible API).

Loaded as a plugin (``pytest_plugins = ["tests.integration.conftest_registry"]`` in
``tests/conftest.py``). The registry is started on first use by a test that asks for the
fixture (never otherwise) by the project's own tooling (:mod:`sluice_devtools.registry`)
on a free loopback port, and stopped when the tests of its group are done
(:mod:`tests.integration.group_servers`). Set
``SLUICE_TEST_SCHEMA_REGISTRY_URL`` to a Confluent-compatible API base URL to use an
already running registry instead (for example the one ``./dev registry start`` prints).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest

from tests.integration.group_servers import GROUP_SERVERS

REGISTRY_URL_ENV = "SLUICE_TEST_SCHEMA_REGISTRY_URL"


@contextlib.contextmanager
def _schema_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    external = os.environ.get(REGISTRY_URL_ENV)
    if external:
        yield external.rstrip("/")
        return
    from sluice_devtools.registry import SchemaRegistry

    registry = SchemaRegistry(tmp_path_factory.mktemp("schema-registry"))
    url = registry.start(timeout=180)
    try:
        yield url
    finally:
        registry.stop()


@pytest.fixture(scope="module")
def schema_registry(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The Confluent-compatible API URL of the group's Schema Registry
    (``http://127.0.0.1:PORT/apis/ccompat/v7``), for ``schema.registry.url``."""
    return GROUP_SERVERS.get("schema-registry", lambda: _schema_registry(tmp_path_factory))
