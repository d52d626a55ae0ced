"""The ``s3_server`` and ``hdfs_cluster`` fixtures: a real S3 API server and a real HDFS cluster.

Loaded as a plugin (``"tests.integration.conftest_storage"`` in ``pytest_plugins`` of
``tests/conftest.py``). Each is started on first use by a test that asks for its fixture
(never otherwise) by the project's own tooling (:mod:`sluice_devtools.storage_servers`) on
free loopback ports, with its files in a temporary directory, and stopped when the
session ends.

- ``s3_server``: an :class:`~sluice_devtools.storage_servers.S3Server` (s3proxy). Use
  ``endpoint_url``, ``access_key`` (``sluice``), ``secret_key`` (``sluice-secret``),
  ``region`` (``us-east-1``), ``client()`` (a boto3 S3 client, path-style addressing) and
  ``create_bucket(name)``. Buckets are shared by the session: name them per test
  (``unique_name`` lowercased).
- ``hdfs_cluster``: an :class:`~sluice_devtools.storage_servers.HdfsCluster` (a NameNode
  and one DataNode). Use ``hdfs_url`` (``hdfs://127.0.0.1:PORT``, for ``fs.defaultFS``),
  ``webhdfs_url`` (``http://127.0.0.1:PORT``, WebHDFS under ``/webhdfs/v1``) and
  ``config_file`` (the cluster's ``core-site.xml``). Permission checks are off.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sluice_devtools.storage_servers import HdfsCluster, S3Server

START_TIMEOUT = 180.0


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """The session's S3 API server (started on first use, stopped when the session ends)."""
    from sluice_devtools.storage_servers import S3Server

    server = S3Server(tmp_path_factory.mktemp("s3"))
    server.start(timeout=START_TIMEOUT)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def hdfs_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HdfsCluster]:
    """The session's HDFS cluster (started on first use, stopped when the session ends)."""
    from sluice_devtools.storage_servers import HdfsCluster

    cluster = HdfsCluster(tmp_path_factory.mktemp("hdfs"))
    cluster.start(timeout=START_TIMEOUT)
    try:
        yield cluster
    finally:
        cluster.stop()
