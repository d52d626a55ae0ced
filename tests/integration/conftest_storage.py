"""The ``s3_server`` and ``hdfs_cluster`` fixtures: a real S3 API server and a real HDFS cluster.

Loaded as a plugin (``"tests.integration.conftest_storage"`` in ``pytest_plugins`` of
``tests/conftest.py``). Each is started on first use by a test that asks for its fixture
(never otherwise) by the project's own tooling (:mod:`sluice_devtools.storage_servers`) on
free loopback ports, with its files in a temporary directory, and stopped when the tests
of its group are done (:mod:`tests.integration.group_servers`).

- ``s3_server``: an :class:`~sluice_devtools.storage_servers.S3Server` (s3proxy). Use
  ``endpoint_url``, ``access_key`` (``sluice``), ``secret_key`` (``sluice-secret``),
  ``region`` (``us-east-1``), ``client()`` (a boto3 S3 client, path-style addressing) and
  ``create_bucket(name)``. Buckets are shared by the group: name them per test
  (``unique_name`` lowercased).
- ``hdfs_cluster``: an :class:`~sluice_devtools.storage_servers.HdfsCluster` (a NameNode
  and one DataNode). Use ``hdfs_url`` (``hdfs://127.0.0.1:PORT``, for ``fs.defaultFS``),
  ``webhdfs_url`` (``http://127.0.0.1:PORT``, WebHDFS under ``/webhdfs/v1``) and
  ``config_file`` (the cluster's ``core-site.xml``). Permission checks are off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.integration.group_servers import GROUP_SERVERS, started

if TYPE_CHECKING:
    from sluice_devtools.storage_servers import HdfsCluster, S3Server

START_TIMEOUT = 180.0


@pytest.fixture(scope="module")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> S3Server:
    """The group's S3 API server (started on first use, stopped when the group is done)."""
    from sluice_devtools.storage_servers import S3Server

    return GROUP_SERVERS.get("s3", lambda: started(S3Server(tmp_path_factory.mktemp("s3")), START_TIMEOUT))


@pytest.fixture(scope="module")
def hdfs_cluster(tmp_path_factory: pytest.TempPathFactory) -> HdfsCluster:
    """The group's HDFS cluster (started on first use, stopped when the group is done)."""
    from sluice_devtools.storage_servers import HdfsCluster

    return GROUP_SERVERS.get("hdfs", lambda: started(HdfsCluster(tmp_path_factory.mktemp("hdfs")), START_TIMEOUT))
