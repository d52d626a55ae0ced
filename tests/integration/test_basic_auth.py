"""Acceptance: Kafka's basic authentication extension (``rest.extension.classes`` with the
JAAS ``PropertyFileLoginModule``): requests without credentials or with wrong ones get 401,
good ones work, on the API and the console alike; a two-worker cluster forwards writes with
the caller's credentials; the CLI works with credentials and says when they are missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import http_client
from tests.helpers import wait_until
from tests.integration.workers import (
    BASIC_AUTH_EXTENSION,
    DistributedWorker,
    StandaloneWorker,
    basic_auth_jaas,
    connector_cli,
)

pytestmark = pytest.mark.integration


GOOD = ("alice", "s3cret:with colon")


def _jaas(tmp_path: Path) -> Path:
    return basic_auth_jaas(tmp_path, {GOOD[0]: GOOD[1], "bob": "other"})


def test_requests_need_good_credentials(kafka_bootstrap: str, tmp_path: Path, unique_name: str) -> None:
    jaas = _jaas(tmp_path)
    worker = StandaloneWorker(
        tmp_path / "w",
        kafka_bootstrap,
        "auth",
        {"rest.extension.classes": BASIC_AUTH_EXTENSION},
        auth=GOOD,
        env={"KAFKA_OPTS": f"-Xmx1g -Djava.security.auth.login.config={jaas}"},  # as Kafka's scripts take it
    )
    worker.start()
    try:
        anonymous = http_client.get(worker.url + "/connectors", timeout=10)
        assert anonymous.status_code == 401
        assert anonymous.headers["www-authenticate"].startswith("Basic")
        assert anonymous.text == "User cannot access the resource."
        assert http_client.get(worker.url + "/connectors", auth=("alice", "wrong"), timeout=10).status_code == 401
        assert http_client.get(worker.url + "/connectors", auth=("mallory", GOOD[1]), timeout=10).status_code == 401
        assert http_client.get(worker.url + "/connectors", auth=GOOD, timeout=10).json() == []
        # the console is behind the same door, and makes its calls with the caller's credentials
        assert http_client.get(worker.url + "/ui/", timeout=10).status_code == 401
        page = http_client.get(worker.url + "/ui/", auth=GOOD, timeout=10)
        assert page.status_code == 200 and "<h1>Connectors</h1>" in page.text
        assert http_client.get(worker.url + "/metrics", timeout=10).status_code == 401

        refused = connector_cli("--url", worker.url, "list")
        assert refused.returncode == 1 and "--user NAME:PASSWORD" in refused.stderr, refused.stderr
        assert connector_cli("--url", worker.url, "--user", ":".join(GOOD), "list").returncode == 0
        assert connector_cli("--url", worker.url, "list", env={"SLUICE_USER": ":".join(GOOD)}).returncode == 0
        in_url = worker.url.replace("http://", "http://alice:s3cret%3Awith%20colon@")
        assert connector_cli("--url", in_url, "list").returncode == 0
    finally:
        assert worker.stop() == 0, worker.log()


def test_a_worker_without_its_jaas_configuration_does_not_start(kafka_bootstrap: str, tmp_path: Path) -> None:
    worker = StandaloneWorker(tmp_path, kafka_bootstrap, "no-jaas", {"rest.extension.classes": BASIC_AUTH_EXTENSION})
    with pytest.raises(AssertionError, match="exited with 1"):
        worker.start()
    assert "needs a JAAS configuration" in worker.log()


def test_a_cluster_forwards_writes_with_the_callers_credentials(
    kafka_bootstrap: str, tmp_path: Path, unique_name: str
) -> None:
    jaas = _jaas(tmp_path)
    settings: dict[str, str | None] = {
        "rest.extension.classes": BASIC_AUTH_EXTENSION,
        "sluice.rest.jaas.config": str(jaas),
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    }
    workers = [
        DistributedWorker(tmp_path / f"w{i}", kafka_bootstrap, f"w{i}", unique_name, settings, auth=GOOD)
        for i in (1, 2)
    ]
    for worker in workers:
        worker.start()
    try:

        def leader_known() -> bool:
            return all(
                http_client.get(w.url + "/connectors", auth=GOOD, timeout=10).status_code == 200 for w in workers
            )

        wait_until(leader_known, timeout=60)
        # each worker takes a write: the follower forwards its one to the leader, with the credentials
        for i, worker in enumerate(workers):
            name = f"{unique_name}-{i}"
            r = http_client.put(
                f"{worker.url}/connectors/{name}/config",
                auth=GOOD,
                timeout=60,
                json={"connector.class": "FileStreamSource", "file": str(tmp_path / "in.txt"), "topic": name},
            )
            assert r.status_code == 201, r.text
            refused = http_client.put(
                f"{worker.url}/connectors/{name}-x/config",
                timeout=60,
                json={"connector.class": "FileStreamSource", "topic": name},
            )
            assert refused.status_code == 401
        names = http_client.get(workers[0].url + "/connectors", auth=GOOD, timeout=10).json()
        assert sorted(names) == [f"{unique_name}-0", f"{unique_name}-1"]
    finally:
        for worker in workers:
            worker.stop()
        for worker in workers:
            worker.kill()
