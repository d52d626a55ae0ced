"""The ``opensearch_server`` and ``elasticsearch_server`` fixtures: real search servers.

Loaded as a plugin (``"tests.integration.conftest_search"`` in ``pytest_plugins`` of
``tests/conftest.py``). Each is started on first use by a test that asks for its fixture
(never otherwise) by the project's own tooling (:mod:`sluice_devtools.search_servers`) on
free loopback ports, with its files in a temporary directory, and stopped when the tests
of its group are done (:mod:`tests.integration.group_servers`). Both are single-node
clusters speaking plain HTTP without authentication:

- ``opensearch_server``: an :class:`~sluice_devtools.search_servers.OpenSearchServer`
  (OpenSearch 2.19).
- ``elasticsearch_server``: an :class:`~sluice_devtools.search_servers.ElasticsearchServer`
  (Elasticsearch 8.19, security off). Its distribution has no ``GET /`` and no
  ``/_data_stream`` API (those modules are not in it); data streams are still created by
  writing to a name that matches an index template with ``"data_stream": {}``.

Use ``url`` (``http://127.0.0.1:PORT``, for ``connection.url``), ``distribution``
(``"opensearch"`` / ``"elasticsearch"``), ``version()``, ``request(method, path, body)``
(``(status, decoded JSON)``; ``str`` bodies are sent as is, NDJSON for ``_bulk``),
``refresh(index)``, ``count(index)`` and ``delete_index(pattern)``. The servers are shared
by the group's tests: name indices per test (``unique_name`` lowercased) and delete them after.

``search_work_dir`` gives a test a fresh work directory for a server it starts (and
stops) itself. As root the servers run as the ``opensearch``/``elasticsearch`` system
user, which must reach that directory *for as long as the server runs*; pytest resets its
own temporary root (``/tmp/pytest-of-root``) to 0700 whenever any session starts, which
would cut a running server off its files. So, as for the database servers
(:func:`tests.integration.conftest_databases.server_work_dir`), as root these directories
are made under the system temp directory instead and removed afterwards.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.integration.conftest_databases import server_work_dir
from tests.integration.group_servers import GROUP_SERVERS, started

if TYPE_CHECKING:
    from sluice_devtools.search_servers import ElasticsearchServer, OpenSearchServer

START_TIMEOUT = 180.0


@contextlib.contextmanager
def _search_server(tmp_path_factory: pytest.TempPathFactory, distribution: str) -> Iterator[Any]:
    from sluice_devtools.search_servers import ElasticsearchServer, OpenSearchServer

    server_class = OpenSearchServer if distribution == "opensearch" else ElasticsearchServer
    with (
        server_work_dir(tmp_path_factory, distribution) as work_dir,
        started(server_class(work_dir), START_TIMEOUT) as server,
    ):
        yield server


@pytest.fixture(scope="module")
def opensearch_server(tmp_path_factory: pytest.TempPathFactory) -> OpenSearchServer:
    """The group's OpenSearch node (started on first use, stopped when the group is done)."""
    return GROUP_SERVERS.get("opensearch", lambda: _search_server(tmp_path_factory, "opensearch"))


@pytest.fixture(scope="module")
def elasticsearch_server(tmp_path_factory: pytest.TempPathFactory) -> ElasticsearchServer:
    """The group's Elasticsearch node (started on first use, stopped when the group is done)."""
    return GROUP_SERVERS.get("elasticsearch", lambda: _search_server(tmp_path_factory, "elasticsearch"))


@pytest.fixture
def search_work_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh work directory for a search server the test starts (and stops) itself."""
    with server_work_dir(tmp_path_factory, "search") as path:
        yield path
