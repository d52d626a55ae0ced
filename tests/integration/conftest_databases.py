"""The ``postgres_server`` and ``mariadb_server`` fixtures: real PostgreSQL and MariaDB servers.

Loaded as a plugin (``"tests.integration.conftest_databases"`` in ``pytest_plugins`` of
``tests/conftest.py``). Each server is started on first use by a test that asks for its
fixture (never otherwise) by the project's own tooling (:mod:`sluice_devtools.databases`):
a private server on a free 127.0.0.1 port with its files in a temporary directory,
database ``sluice`` and user/password ``sluice``/``sluice``; it is stopped (and its
directory removed) when the tests of its group are done
(:mod:`tests.integration.group_servers`). On a machine without the server programs the
first start installs the Debian package (``postgresql`` / ``mariadb-server``) with
apt-get, as root or through ``sudo -n``; that takes 10-60 s once.

The fixture value has ``url`` (the JDBC URL for ``connection.url``), ``host``, ``port``,
``database``, ``user``, ``password`` and ``connect()`` (a new psycopg 3 / PyMySQL
connection as that user). It is the :class:`~sluice_devtools.databases.PostgresServer` /
:class:`~sluice_devtools.databases.MariaDbServer` when started here (with ``pid``,
``status()``), a :class:`~sluice_devtools.databases.DatabaseEndpoint` when external.

Use already running servers instead (for example the ones ``./dev postgres start`` and
``./dev mariadb start`` print) by setting:

- ``SLUICE_TEST_POSTGRES_URL``, e.g. ``jdbc:postgresql://127.0.0.1:5432/sluice?user=sluice&password=sluice``
  or ``postgresql://sluice:sluice@127.0.0.1:5432/sluice``;
- ``SLUICE_TEST_MARIADB_URL``, e.g. ``jdbc:mariadb://127.0.0.1:3306/sluice?user=sluice&password=sluice``
  or ``mysql://sluice:sluice@127.0.0.1:3306/sluice``.

User and password default to ``sluice`` when the URL has none; the user needs the right
to create tables in that database.

``server`` runs a test once on each server. ``execute``, ``query`` and ``is_pg`` (plain
functions, imported by the tests) run SQL on a server's fixture value.

``database_work_dir`` gives a test a fresh work directory for a server it starts itself.
As root the servers run as the ``postgres``/``mysql`` system user, which must be able to
reach the directory; pytest's own temporary root (``/tmp/pytest-of-root``) is private
(0700, and pytest resets it to 0700 when any session starts), so as root these
directories are made with :func:`tempfile.mkdtemp` under the system temp directory
instead, and removed afterwards.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.group_servers import GROUP_SERVERS, started

POSTGRES_URL_ENV = "SLUICE_TEST_POSTGRES_URL"
MARIADB_URL_ENV = "SLUICE_TEST_MARIADB_URL"
START_TIMEOUT = 120.0


@contextlib.contextmanager
def server_work_dir(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Path]:
    """A fresh directory for a database server's files (see the module doc for root)."""
    if os.geteuid() != 0:
        yield tmp_path_factory.mktemp(name)
        return
    path = Path(tempfile.mkdtemp(prefix=f"sluice-test-{name}-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def _group_server(tmp_path_factory: pytest.TempPathFactory, kind: str, env: str) -> Iterator[Any]:
    external = os.environ.get(env)
    if external:
        from sluice_devtools.databases import DatabaseEndpoint

        yield DatabaseEndpoint.from_url(external)
        return
    from sluice_devtools.databases import MariaDbServer, PostgresServer

    server_class = PostgresServer if kind == "postgres" else MariaDbServer
    with server_work_dir(tmp_path_factory, kind) as work_dir, started(server_class(work_dir), START_TIMEOUT) as server:
        yield server


@pytest.fixture(scope="module")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The group's PostgreSQL server (started on first use, stopped when the group is done)."""
    return GROUP_SERVERS.get("postgres", lambda: _group_server(tmp_path_factory, "postgres", POSTGRES_URL_ENV))


@pytest.fixture(scope="module")
def mariadb_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The group's MariaDB server (started on first use, stopped when the group is done)."""
    return GROUP_SERVERS.get("mariadb", lambda: _group_server(tmp_path_factory, "mariadb", MARIADB_URL_ENV))


@pytest.fixture
def database_work_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh work directory for a database server the test starts (and stops) itself."""
    with server_work_dir(tmp_path_factory, "db") as path:
        yield path


@pytest.fixture(params=["postgres", "mariadb"])
def server(request: pytest.FixtureRequest) -> Any:
    """The test runs once with the PostgreSQL server and once with the MariaDB server."""
    return request.getfixturevalue(f"{request.param}_server")


def is_pg(server: Any) -> bool:
    return bool(server.url.startswith("jdbc:postgresql:"))


def execute(server: Any, *statements: str, params: list[tuple] | None = None) -> None:
    """Run ``statements`` in one transaction; one with ``%s`` runs once per row of ``params``."""
    conn = server.connect()
    try:
        cur = conn.cursor()
        for sql in statements:
            if params is not None and "%s" in sql:
                cur.executemany(sql, params)
            else:
                cur.execute(sql)
        conn.commit()
    finally:
        conn.close()


def query(server: Any, sql: str) -> list[tuple]:
    conn = server.connect()
    try:
        cur = conn.cursor()
        cur.execute(sql)
        return [tuple(row) for row in cur.fetchall()]
    finally:
        conn.close()
