"""Acceptance: https REST listeners on real workers, configured with Kafka's keys.

A standalone worker with a PKCS12 keystore (``listeners.https.ssl.*``) and basic
authentication: 401 without or with wrong credentials, good ones work, on the API, the
worker's console and ``sluice console``; the CLI with ``--url https://…``, ``--ca-cert`` and
credentials. A worker configured with the top-level ``ssl.*`` keys and
``ssl.client.auth=required`` refuses a client without certificate. A PEM keystore. A
two-worker cluster on https forwards a write from the follower to the leader with the
caller's credentials."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from sluice_devtools.certs import TlsMaterials, issue_tls_materials
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

GOOD = ("alice", "s3cret")
ASSIGNMENT = re.compile(r"Assignment of generation \d+: connectors \[[^\]]*\], tasks \[[^\]]*\] \(leader (\S+?)\)")
CONSOLE_LINE = re.compile(r"Console for .* at (http://\S+/ui/)")


@pytest.fixture(scope="module")
def materials(tmp_path_factory: pytest.TempPathFactory) -> TlsMaterials:
    return issue_tls_materials(tmp_path_factory.mktemp("tls"))


def listener_keys(materials: TlsMaterials) -> dict[str, str | None]:
    """A PKCS12 keystore and truststore under Kafka's ``listeners.https.`` prefix."""
    return dict(materials.server_store_settings("listeners.https."))


def basic_auth(tmp_path: Path) -> dict[str, str | None]:
    jaas = basic_auth_jaas(tmp_path, {GOOD[0]: GOOD[1]})
    return {"rest.extension.classes": BASIC_AUTH_EXTENSION, "sluice.rest.jaas.config": str(jaas)}


def test_https_with_basic_auth(kafka_bootstrap: str, tmp_path: Path, materials: TlsMaterials) -> None:
    worker = StandaloneWorker(
        tmp_path / "w",
        kafka_bootstrap,
        "tls-auth",
        {**basic_auth(tmp_path), **listener_keys(materials)},
        auth=GOOD,
        scheme="https",
        verify=materials.client_context(),
    )
    worker.start()
    try:
        verify = materials.client_context()
        assert worker.url.startswith("https://")
        anonymous = http_client.get(worker.url + "/connectors", verify=verify, timeout=10)
        assert anonymous.status_code == 401 and anonymous.text == "User cannot access the resource."
        wrong = http_client.get(worker.url + "/connectors", auth=("alice", "wrong"), verify=verify, timeout=10)
        assert wrong.status_code == 401
        assert http_client.get(worker.url + "/connectors", auth=GOOD, verify=verify, timeout=10).json() == []
        with pytest.raises(httpx2.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            http_client.get(worker.url + "/connectors", auth=GOOD, timeout=10)  # not a certificate the system knows
        # the worker's console calls the worker back over https, with the caller's credentials
        assert http_client.get(worker.url + "/ui/", verify=verify, timeout=10).status_code == 401
        page = http_client.get(worker.url + "/ui/", auth=GOOD, verify=verify, timeout=30)
        assert page.status_code == 200 and "<h1>Connectors</h1>" in page.text, page.text
        assert "No Kafka Connect worker answered" not in page.text

        # the CLI: the authority with --ca-cert or $SLUICE_CA_CERT, credentials with --user or $SLUICE_USER
        untrusted = connector_cli("--url", worker.url, "--user", ":".join(GOOD), "list")
        assert untrusted.returncode == 3 and "--ca-cert FILE" in untrusted.stderr, untrusted.stderr
        ca = str(materials.ca_pem)
        trusted = connector_cli("--url", worker.url, "--ca-cert", ca, "--user", ":".join(GOOD), "list", "--json")
        assert trusted.returncode == 0 and trusted.stdout.strip() == "[]", trusted.stderr
        anonymous_cli = connector_cli("--url", worker.url, "--ca-cert", ca, "list")
        assert anonymous_cli.returncode == 1 and "--user NAME:PASSWORD" in anonymous_cli.stderr
        env = {"SLUICE_URL": worker.url, "SLUICE_CA_CERT": ca, "SLUICE_USER": ":".join(GOOD)}
        assert connector_cli("list", env=env).returncode == 0

        # sluice console in front of the https worker
        console = subprocess.Popen(
            [sys.executable, "-m", "sluice.cli.main", "console", "--url", worker.url, "--ca-cert", ca, "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=(tmp_path / "console.log").open("ab"),
            text=True,
        )
        try:
            assert console.stdout is not None
            found = CONSOLE_LINE.search(console.stdout.readline())  # printed once it serves
            assert found, (tmp_path / "console.log").read_text()
            page = http_client.get(found.group(1), auth=GOOD, timeout=30)
            assert page.status_code == 200 and "<h1>Connectors</h1>" in page.text, page.text
            assert http_client.get(found.group(1), timeout=30).status_code == 401  # the worker's answer, passed on
        finally:
            console.send_signal(signal.SIGTERM)
            assert console.wait(30) == 0
    finally:
        assert worker.stop() == 0, worker.log()


def test_client_certificates_required(kafka_bootstrap: str, tmp_path: Path, materials: TlsMaterials) -> None:
    # the top-level ssl.* keys (no listeners.https. key), keystore type left to its default
    top_level: dict[str, str | None] = {
        "ssl.keystore.location": str(materials.server_p12),
        "ssl.keystore.password": materials.password,
        "ssl.truststore.location": str(materials.truststore_p12),
        "ssl.truststore.password": materials.password,
        "ssl.client.auth": "required",
    }
    worker = StandaloneWorker(
        tmp_path / "w",
        kafka_bootstrap,
        "tls-client-auth",
        top_level,
        scheme="https",
        verify=materials.client_context(with_client_cert=True),
    )
    worker.start()
    try:
        with pytest.raises(httpx2.TransportError):
            http_client.get(worker.url + "/connectors", verify=materials.client_context(), timeout=10)
        r = http_client.get(
            worker.url + "/connectors", verify=materials.client_context(with_client_cert=True), timeout=10
        )
        assert r.status_code == 200 and r.json() == []
        ca = str(materials.ca_pem)
        refused = connector_cli("--url", worker.url, "--ca-cert", ca, "list")
        assert refused.returncode == 3 and "--client-cert FILE" in refused.stderr, refused.stderr
        accepted = connector_cli(
            "--url", worker.url, "--ca-cert", ca,
            "--client-cert", str(materials.client_chain_pem), "--client-key", str(materials.client_key_pem),
            "list",
            env={"SLUICE_CLIENT_KEY_PASSWORD": materials.password},
        )  # fmt: skip
        assert accepted.returncode == 0, accepted.stderr
    finally:
        assert worker.stop() == 0, worker.log()


def test_pem_keystore(kafka_bootstrap: str, tmp_path: Path, materials: TlsMaterials) -> None:
    keystore = tmp_path / "keystore.pem"  # Kafka's PEM keystore file: the key, then its certificate chain
    keystore.write_text(materials.server_key_pem.read_text() + materials.server_chain_pem.read_text())
    settings: dict[str, str | None] = {
        "listeners.https.ssl.keystore.type": "PEM",
        "listeners.https.ssl.keystore.location": str(keystore),
        "listeners.https.ssl.key.password": materials.password,
        # the trusted authorities inline, across lines of the properties file
        "listeners.https.ssl.truststore.type": "PEM",
        "listeners.https.ssl.truststore.certificates": materials.ca_pem.read_text(),
        "listeners.https.ssl.client.auth": "requested",
    }
    worker = StandaloneWorker(
        tmp_path / "w", kafka_bootstrap, "tls-pem", settings, scheme="https", verify=materials.client_context()
    )
    worker.start()
    try:
        for verify in (materials.client_context(), materials.client_context(with_client_cert=True)):
            assert http_client.get(worker.url + "/connectors", verify=verify, timeout=10).json() == []
        page = http_client.get(worker.url + "/ui/", verify=materials.client_context(), timeout=30)
        assert page.status_code == 200 and "<h1>Connectors</h1>" in page.text, page.text
    finally:
        assert worker.stop() == 0, worker.log()


def test_a_cluster_on_https_forwards_writes_with_credentials(
    kafka_bootstrap: str, tmp_path: Path, materials: TlsMaterials, unique_name: str
) -> None:
    settings: dict[str, str | None] = {
        **basic_auth(tmp_path),
        **listener_keys(materials),
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    }
    verify = materials.client_context()
    workers = [
        DistributedWorker(
            tmp_path / f"w{i}",
            kafka_bootstrap,
            f"w{i}",
            unique_name,
            settings,
            auth=GOOD,
            scheme="https",
            verify=verify,
        )
        for i in (1, 2)
    ]
    for worker in workers:
        worker.start(timeout=180)
    try:

        def agreed_leader() -> str | None:
            leaders = set()
            for worker in workers:
                found = ASSIGNMENT.findall(worker.log_path.read_text(errors="replace"))
                leaders.add(found[-1].rstrip("/") if found else None)
            return leaders.pop() if len(leaders) == 1 and None not in leaders else None

        leader_url = wait_until(agreed_leader, timeout=120, message="the workers never agreed on a leader")
        assert leader_url.startswith("https://127.0.0.1:")  # the advertised URL is the https listener's
        (follower,) = [w for w in workers if w.url != leader_url]
        (leader,) = [w for w in workers if w.url == leader_url]
        body = {"name": unique_name, "config": {"connector.class": "FileStreamSource", "topic": unique_name}}
        refused = http_client.post(follower.url + "/connectors", json=body, verify=verify, timeout=60)
        assert refused.status_code == 401
        created = http_client.post(follower.url + "/connectors", json=body, auth=GOOD, verify=verify, timeout=60)
        assert created.status_code == 201, created.text
        assert created.headers["location"] == f"{follower.url}/connectors/{unique_name}"
        assert leader.get("/connectors").json() == [unique_name]
    finally:
        for worker in workers:
            worker.stop()
        for worker in workers:
            worker.kill()
