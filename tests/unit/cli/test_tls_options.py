"""https from the command line, against a REST server of an in-memory herder: ``sluice
connector`` with ``--ca-cert``/``--insecure``/``--client-cert``/``--client-key`` and their
variables, ``sluice console``'s options, and a worker's REST server wired from its
properties (https listener, advertised URL, console callback)."""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from sluice.api.errors import ConfigError
from sluice.cli import main as cli_main
from sluice.cli import manage
from sluice.cli.connect import build_rest_server
from sluice.rest import RestServer
from sluice.rest.server import TLS_SHUTDOWN_TIMEOUT_S
from sluice.rest.tls import WorkerTls
from sluice.runtime.config import WorkerConfig
from sluice_devtools.certs import TlsMaterials, issue_tls_materials
from tests import http_client
from tests.unit.rest.fake_herder import FakeHerder

TLS_ENV = ("SLUICE_URL", "SLUICE_USER", "SLUICE_CA_CERT", "SLUICE_CLIENT_CERT", "SLUICE_CLIENT_KEY")


@pytest.fixture(scope="module")
def materials(tmp_path_factory: pytest.TempPathFactory) -> TlsMaterials:
    return issue_tls_materials(tmp_path_factory.mktemp("tls"))


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*TLS_ENV, "SLUICE_CLIENT_KEY_PASSWORD"):
        monkeypatch.delenv(name, raising=False)


def listener_props(materials: TlsMaterials, **more: str) -> dict[str, str]:
    return {
        **materials.server_store_settings("listeners.https."),
        **{f"listeners.https.{key}": value for key, value in more.items()},
    }


@pytest.fixture
def worker(materials: TlsMaterials, request: pytest.FixtureRequest) -> Iterator[RestServer]:
    client_auth = getattr(request, "param", "none")
    props = listener_props(materials, **{"ssl.client.auth": client_auth})
    server = RestServer(FakeHerder(), "https://127.0.0.1:0", tls=WorkerTls(props))
    server.start()
    yield server
    server.stop()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = manage.run(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_ca_cert_option_and_variable(
    worker: RestServer, materials: TlsMaterials, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run(capsys, "--url", worker.url, "list", "--json")
    assert code == manage.EXIT_UNREACHABLE
    assert "CERTIFICATE_VERIFY_FAILED" in err and "--ca-cert FILE or $SLUICE_CA_CERT" in err
    code, out, err = run(capsys, "--url", worker.url, "--ca-cert", str(materials.ca_pem), "list", "--json")
    assert (code, out.strip()) == (0, "[]"), err
    code, out, err = run(capsys, "list", "--url", worker.url, "--ca-cert", str(materials.ca_pem))  # after the command
    assert code == 0, err
    code, _, err = run(capsys, "--url", worker.url, "--insecure", "list")
    assert code == 0, err
    monkeypatch.setenv("SLUICE_CA_CERT", str(materials.ca_pem))
    code, _, err = run(capsys, "--url", worker.url, "list")
    assert code == 0, err
    # the server's own certificate will do as well, as in a Java truststore
    monkeypatch.setenv("SLUICE_CA_CERT", str(materials.server_chain_pem))
    assert run(capsys, "--url", worker.url, "list")[0] == 0


@pytest.mark.parametrize("worker", ["required"], indirect=True)
def test_client_certificate_options(
    worker: RestServer, materials: TlsMaterials, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ca = str(materials.ca_pem)
    code, _, err = run(capsys, "--url", worker.url, "--ca-cert", ca, "list")
    assert code == manage.EXIT_UNREACHABLE, err
    assert "--client-cert FILE --client-key FILE" in err
    monkeypatch.setenv("SLUICE_CLIENT_KEY_PASSWORD", materials.password)
    cert, key = str(materials.client_chain_pem), str(materials.client_key_pem)
    code, out, err = run(
        capsys, "--url", worker.url, "--ca-cert", ca, "--client-cert", cert, "--client-key", key, "list"
    )
    assert code == 0, err
    monkeypatch.setenv("SLUICE_CLIENT_CERT", cert)
    monkeypatch.setenv("SLUICE_CLIENT_KEY", key)
    assert run(capsys, "--url", worker.url, "--ca-cert", ca, "list")[0] == 0


def test_unusable_tls_files_are_usage_errors(materials: TlsMaterials, tmp_path: Path) -> None:
    with pytest.raises(manage.UsageError, match="--ca-cert /no/such.pem: not a readable PEM file"):
        manage.tls_verify(ca_cert="/no/such.pem")
    with pytest.raises(manage.UsageError, match="--client-key needs --client-cert"):
        manage.tls_verify(client_key=str(materials.client_key_pem))
    with pytest.raises(manage.UsageError, match=r"--client-cert .*: cannot use it with its key"):
        manage.tls_verify(client_cert=str(materials.client_chain_pem), client_key=str(materials.client_key_pem),
                          key_password="wrong")  # fmt: skip
    assert manage.tls_verify() is True
    context = manage.tls_verify(insecure=True)
    assert isinstance(context, ssl.SSLContext) and context.verify_mode == ssl.CERT_NONE


def test_sluice_console_options(materials: TlsMaterials, capsys: pytest.CaptureFixture[str]) -> None:
    parser = cli_main.build_parser({})
    args = parser.parse_args(["console", "--url", "https://h:8443", "--ca-cert", str(materials.ca_pem), "--insecure"])
    assert (args.ca_cert, args.insecure) == (str(materials.ca_pem), True)
    assert cli_main.main(["console", "--ca-cert", "/no/such.pem"]) == 2
    assert "--ca-cert /no/such.pem: not a readable PEM file" in capsys.readouterr().err


def _worker_config(tmp_path: Path, **props: str) -> WorkerConfig:
    return WorkerConfig.standalone(
        {
            "offset.storage.file.filename": str(tmp_path / "offsets"),
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            **props,
        }
    )


def test_a_workers_rest_server_from_its_properties(materials: TlsMaterials, tmp_path: Path) -> None:
    config = _worker_config(
        tmp_path, listeners="http://127.0.0.1:0,https://127.0.0.1:0", **{"rest.advertised.listener": "https"},
        **listener_props(materials),
    )  # fmt: skip
    server = build_rest_server(FakeHerder(), config)
    server.start()
    try:
        plain, secure = server.urls
        assert server.advertised_url == secure and server.worker_id == secure.split("://")[1]
        verify = ssl.create_default_context(cafile=str(materials.ca_pem))
        # the console calls back the listener the page came in by, https included
        for url in (plain, secure):
            page = http_client.get(url + "/ui/", verify=verify, timeout=30)
            assert page.status_code == 200 and "<h1>Connectors</h1>" in page.text, page.text
    finally:
        server.stop()


def test_a_wrong_keystore_stops_the_worker_at_start_up(materials: TlsMaterials, tmp_path: Path) -> None:
    config = _worker_config(
        tmp_path, listeners="https://127.0.0.1:0",
        **listener_props(materials, **{"ssl.keystore.password": "wrong"}),
    )  # fmt: skip
    with pytest.raises(ConfigError, match=r"wrong password \(listeners\.https\.ssl\.keystore\.password\)"):
        build_rest_server(FakeHerder(), config)


def test_idle_https_clients_do_not_hold_up_a_shutdown(materials: TlsMaterials) -> None:
    server = RestServer(FakeHerder(), "https://127.0.0.1:0", tls=WorkerTls(listener_props(materials)))
    server.start()
    with httpx2.Client(verify=ssl.create_default_context(cafile=str(materials.ca_pem))) as idle:
        assert idle.get(server.url + "/").status_code == 200  # its connection stays open, unread
        began = time.monotonic()
        server.stop()
        assert time.monotonic() - began < TLS_SHUTDOWN_TIMEOUT_S + 5
