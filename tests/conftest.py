"""Fixtures shared by the whole test suite.

- ``kafka_broker`` / ``kafka_bootstrap``: one real Kafka broker (KRaft, free loopback port)
  per test session, started by the project's own tooling (``sluice_devtools.kafka``) and
  stopped at the end. Set ``SLUICE_TEST_BOOTSTRAP=host:port`` to use an already running
  broker instead (for example one from ``./dev kafka start``).
- ``unique_name``: a topic/connector/group name unique to the test.

Wait on conditions with ``tests.helpers.wait_until``, never with fixed sleeps.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sluice_devtools.kafka import KafkaBroker

# schema_registry, postgres_server, mariadb_server, s3_server, hdfs_cluster,
# opensearch_server, elasticsearch_server: real servers, started only for the tests that
# use them; chromium_browser, page: a headless Chromium driven by Playwright, likewise.
pytest_plugins = [
    "tests.integration.conftest_registry",
    "tests.integration.conftest_databases",
    "tests.integration.conftest_storage",
    "tests.integration.conftest_search",
    "tests.integration.conftest_browser",
    "tests.integration.conftest_secured",
]

BOOTSTRAP_ENV = "SLUICE_TEST_BOOTSTRAP"


#: Files whose tests share nothing costly (each starts what it needs): each test is a group
#: of its own, so the workers share them out.
EACH_TEST_A_GROUP = ("tests/integration/test_bench_smoke.py",)
#: Groups (and files split by test) that take minutes, longest first: handed out before the
#: rest, so that no worker ends the run alone with one of them.
LONG_GROUPS = (
    "storage",
    "databases",
    "tests/integration/test_bench_smoke.py",
    "search",
    "tests/integration/test_distributed.py",
    "tests/integration/test_distributed_bounce.py",
    "browser",
)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's, which reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """``./dev test`` runs the suite on two pytest-xdist workers (``--dist loadgroup
    --no-loadscope-reorder``), each a session of its own with its own broker and servers.
    A test file runs on one worker as a whole (its module fixtures, e.g. a cluster, start
    once); files that use a server that is costly to start say so with an ``xdist_group``
    of the same name (``storage``, ``databases``, ``search``, ``browser``), so that it
    starts once, on one worker, and stops when the group is done (see
    :func:`pytest_runtest_teardown`). Groups are handed out in the order of the items: the
    long ones first, then the other integration tests, then the unit tests (seconds each)."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            path = item.nodeid.split("::", 1)[0]
            item.add_marker(pytest.mark.xdist_group(item.nodeid if path in EACH_TEST_A_GROUP else path))

    def rank(item: pytest.Item) -> tuple[int, int]:
        group = _group(item)
        path = item.nodeid.split("::", 1)[0]
        for place, long_group in enumerate(LONG_GROUPS):
            if long_group in (group, path):
                return (0, place)
        return (1 if path.startswith("tests/integration/") else 2, 0)

    items.sort(key=rank)  # stable: the order within each rank stays as collected


def _group(item: pytest.Item) -> str:
    marker = item.get_closest_marker("xdist_group")
    return str(marker.args[0]) if marker is not None and marker.args else ""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Once this worker's next test belongs to another group (or there is none), the
    servers its group started stop (:mod:`tests.integration.group_servers`), after the
    test's own teardown (and its module's, whose fixtures may use them)."""
    try:
        return (yield)
    finally:
        if nextitem is None or _group(nextitem) != _group(item):
            from tests.integration.group_servers import GROUP_SERVERS

            GROUP_SERVERS.stop_all()


def pytest_sessionfinish() -> None:
    """Servers still running (a session ended early) stop with the session."""
    from tests.integration.group_servers import GROUP_SERVERS

    GROUP_SERVERS.stop_all()


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """The session's Kafka broker (started on first use, stopped when the session ends)."""
    if os.environ.get(BOOTSTRAP_ENV):
        pytest.skip(f"{BOOTSTRAP_ENV} is set: tests use that broker, not one they start")
    from sluice_devtools.kafka import KafkaBroker

    broker = KafkaBroker(tmp_path_factory.mktemp("kafka"))
    broker.start(timeout=120)
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def kafka_bootstrap(request: pytest.FixtureRequest) -> str:
    """``host:port`` of the session's Kafka broker."""
    external = os.environ.get(BOOTSTRAP_ENV)
    if external:
        return external
    broker: KafkaBroker = request.getfixturevalue("kafka_broker")
    return broker.bootstrap


@pytest.fixture
def unique_name(request: pytest.FixtureRequest) -> str:
    """A name unique to this test, valid as a Kafka topic, group and connector name."""
    base = re.sub(r"[^A-Za-z0-9-]+", "-", request.node.name).strip("-")[:80]
    return f"{base}-{uuid.uuid4().hex[:8]}"
