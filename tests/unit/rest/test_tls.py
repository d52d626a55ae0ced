"""The TLS of the REST API (``sluice.rest.tls``): which ``ssl.*`` keys apply (Kafka's
all-or-nothing prefixes), every store type, the start-up errors, and real handshakes with
https listeners: client authentication modes, mixed and admin listeners, the advertised
URL, forwarding between workers and the console's call back to its own worker."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest

from sluice.api.errors import ConfigError
from sluice.console.app import console_app
from sluice.rest import RestServer, create_app, tls
from sluice.rest.tls import WorkerTls, load_keystore, load_truststore, server_context, ssl_settings
from sluice.runtime.herder.base import RequestForwardError
from sluice.tls import keystores
from sluice_devtools.certs import TlsMaterials, issue_tls_materials
from tests import http_client

from .fake_herder import FakeHerder

SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
USERS = {"alice": "s3cret"}


@pytest.fixture(scope="module")
def materials(tmp_path_factory: pytest.TempPathFactory) -> TlsMaterials:
    return issue_tls_materials(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def pem_keystore(materials: TlsMaterials) -> Path:
    """Kafka's PEM keystore file: the private key and its certificate chain in one file."""
    path = materials.directory / "server-keystore.pem"
    path.write_text(materials.server_key_pem.read_text() + materials.server_chain_pem.read_text())
    return path


def pkcs12_props(materials: TlsMaterials, prefix: str = "listeners.https.", **more: str) -> dict[str, str]:
    return {**materials.server_store_settings(prefix), **{prefix + key: value for key, value in more.items()}}


@contextmanager
def serving(herder: FakeHerder, props: dict[str, str], listeners: str, **options) -> Iterator[RestServer]:
    server = RestServer(herder, listeners, tls=WorkerTls(props), **options)
    server.start()
    try:
        yield server
    finally:
        server.stop()


# --------------------------------------------------------------------------- which keys


def test_listener_keys_are_all_or_nothing(materials: TlsMaterials) -> None:
    top_level = pkcs12_props(materials, prefix="")
    settings = ssl_settings(top_level, "listeners.https.")
    assert settings.prefix == "" and settings.get("ssl.keystore.location") == str(materials.server_p12)
    # one listeners.https. key: the top-level keys are not read at all, not even the keystore
    mixed = {**top_level, "listeners.https.ssl.client.auth": "required"}
    settings = ssl_settings(mixed, "listeners.https.")
    assert settings.prefix == "listeners.https." and dict(settings.values) == {"ssl.client.auth": "required"}
    with pytest.raises(ConfigError, match=r"needs a keystore: set listeners\.https\.ssl\.keystore\.location"):
        server_context(settings)
    # admin listeners have their own prefix, and fall back to the top-level keys, not to listeners.https.
    admin = WorkerTls({**pkcs12_props(materials), "ssl.keystore.location": "/top-level.p12"}).admin_listener_settings
    assert admin.prefix == "" and admin.get("ssl.keystore.location") == "/top-level.p12"
    admin = WorkerTls(pkcs12_props(materials, prefix="admin.listeners.https.")).admin_listener_settings
    assert admin.prefix == "admin.listeners.https." and admin.get("ssl.keystore.location") == str(materials.server_p12)


# --------------------------------------------------------------------------- stores


def test_pkcs12_keystore_and_truststore(materials: TlsMaterials) -> None:
    settings = ssl_settings(pkcs12_props(materials), "listeners.https.")
    keystore = load_keystore(settings)
    assert keystore is not None
    assert keystore.chain[0].subject.rfc4514_string() == "CN=localhost,O=Sluice tests"
    assert [c.subject.rfc4514_string() for c in load_truststore(settings) or []] == ["CN=Sluice test CA,O=Sluice tests"]
    assert isinstance(server_context(settings), ssl.SSLContext)


def test_the_default_type_reads_a_pkcs12_file_as_java_does(materials: TlsMaterials) -> None:
    props = {"ssl.keystore.location": str(materials.server_p12), "ssl.keystore.password": materials.password}
    keystore = load_keystore(ssl_settings(props, "listeners.https."))  # ssl.keystore.type unset: JKS
    assert keystore is not None and len(keystore.chain) == 2


def test_pem_keystore_file_with_encrypted_key(materials: TlsMaterials, pem_keystore: Path) -> None:
    props = {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(pem_keystore),
        "ssl.key.password": materials.password,
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(materials.ca_pem),
    }
    settings = ssl_settings(props, "listeners.https.")
    keystore = load_keystore(settings)
    assert keystore is not None and len(keystore.chain) == 2
    assert len(load_truststore(settings) or []) == 1
    assert isinstance(server_context(settings), ssl.SSLContext)


def test_pem_keystore_and_truststore_inline(materials: TlsMaterials) -> None:
    def one_line(text: str) -> str:
        # A properties value continued over lines loses its line breaks: the blocks still read.
        return " ".join(text.split())

    props = {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.key": one_line(materials.server_key_pem.read_text()),
        "ssl.keystore.certificate.chain": materials.server_chain_pem.read_text(),
        "ssl.key.password": materials.password,
        "ssl.truststore.type": "PEM",
        "ssl.truststore.certificates": one_line(materials.ca_pem.read_text()),
    }
    settings = ssl_settings(props, "listeners.https.")
    keystore = load_keystore(settings)
    assert keystore is not None and keystore.chain[0].subject.rfc4514_string() == "CN=localhost,O=Sluice tests"
    assert len(load_truststore(settings) or []) == 1
    assert isinstance(server_context(settings), ssl.SSLContext)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"listeners.https.ssl.keystore.password": "wrong"},
            r"listeners\.https\.ssl\.keystore\.location: cannot read the PKCS12 store .*server\.p12: "
            r"wrong password \(listeners\.https\.ssl\.keystore\.password\)",
        ),
        (
            {"listeners.https.ssl.truststore.password": "wrong"},
            r"wrong password \(listeners\.https\.ssl\.truststore\.password\)",
        ),
        (
            {"listeners.https.ssl.keystore.location": "/no/such/keystore.p12"},
            r"listeners\.https\.ssl\.keystore\.location: cannot read /no/such/keystore\.p12: No such file",
        ),
        (
            {"listeners.https.ssl.truststore.location": "/no/such/truststore.p12"},
            r"listeners\.https\.ssl\.truststore\.location: cannot read /no/such/truststore\.p12",
        ),
        (
            {"listeners.https.ssl.keystore.password": None},
            r"listeners\.https\.ssl\.keystore\.location is set but listeners\.https\.ssl\.keystore\.password is not",
        ),
        ({"listeners.https.ssl.keystore.type": "BCFKS"}, r"ssl\.keystore\.type=BCFKS is not supported"),
        ({"listeners.https.ssl.client.auth": "always"}, r"ssl\.client\.auth=always is not one of none, requested"),
        ({"listeners.https.ssl.enabled.protocols": "TLSv9"}, r"ssl\.enabled\.protocols: TLSv9 is not a TLS"),
        ({"listeners.https.ssl.protocol": "QUIC"}, r"ssl\.protocol=QUIC is not a TLS protocol"),
        (
            {"listeners.https.ssl.protocol": "TLSv1.2", "listeners.https.ssl.enabled.protocols": "TLSv1.3"},
            r"No protocol of listeners\.https\.ssl\.enabled\.protocols=TLSv1\.3 is spoken by "
            r"listeners\.https\.ssl\.protocol=TLSv1\.2",
        ),
        (
            {"listeners.https.ssl.cipher.suites": "TLS_NOT_A_SUITE"},
            r"ssl\.cipher\.suites: TLS_NOT_A_SUITE not available",
        ),
    ],
)
def test_a_wrong_setting_is_a_config_error_naming_its_key(
    materials: TlsMaterials, change: dict[str, str | None], message: str
) -> None:
    props = pkcs12_props(materials)
    for key, value in change.items():
        if value is None:
            props.pop(key)
        else:
            props[key] = value
    with pytest.raises(ConfigError, match=message):
        server_context(ssl_settings(props, "listeners.https."))


def test_pem_key_passwords(materials: TlsMaterials, pem_keystore: Path) -> None:
    props = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(pem_keystore)}
    with pytest.raises(
        ConfigError, match=r"ssl\.keystore\.location: the private key is encrypted: set ssl\.key\.password"
    ):
        load_keystore(ssl_settings(props, "x."))
    with pytest.raises(ConfigError, match=r"cannot decrypt the private key: wrong ssl\.key\.password"):
        load_keystore(ssl_settings({**props, "ssl.key.password": "wrong"}, "x."))


@pytest.mark.parametrize(
    ("props", "message"),
    [
        # Kafka's DefaultSslEngineFactory rules for PEM stores
        (
            {"ssl.keystore.type": "PEM", "ssl.keystore.location": "k.pem", "ssl.keystore.password": "p"},
            r"ssl\.keystore\.password cannot be given with a PEM keystore, only ssl\.key\.password may be",
        ),
        ({"ssl.keystore.key": "k"}, r"ssl\.keystore\.key is set, so ssl\.keystore\.type must be PEM, not JKS"),
        (
            {"ssl.keystore.type": "PEM", "ssl.keystore.key": "k"},
            r"ssl\.keystore\.key is set but ssl\.keystore\.certificate\.chain is not",
        ),
        ({"ssl.keystore.certificate.chain": "c"}, r"ssl\.keystore\.certificate\.chain is set but ssl\.keystore\.key"),
        ({"ssl.truststore.certificates": "c"}, r"ssl\.truststore\.certificates is set, so ssl\.truststore\.type must"),
        (
            {"ssl.truststore.type": "PEM", "ssl.truststore.location": "t.pem", "ssl.truststore.password": "p"},
            r"ssl\.truststore\.password cannot be given with a PEM truststore",
        ),
        (
            {"ssl.keystore.type": "PEM", "ssl.keystore.key": "no key here", "ssl.keystore.certificate.chain": "c"},
            r"ssl\.keystore\.key: no PEM private key",
        ),
    ],
)
def test_pem_store_rules(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        settings = ssl_settings(props, "listeners.https.")
        load_keystore(settings)
        load_truststore(settings)


@pytest.fixture(scope="module")
def java_keystores(materials: TlsMaterials) -> tuple[Path, Path]:
    """The server keystore and the truststore as Java KeyStores (JKS), made by keytool."""
    if keystores.find_keytool() is None:
        pytest.skip("no JDK keytool")
    made = []
    for source in (materials.server_p12, materials.truststore_p12):
        target = source.with_suffix(".jks")
        if not target.exists():
            materials.java_keystore(source, target)
        made.append(target)
    return made[0], made[1]


def test_a_java_keystore_is_read_through_keytool(materials: TlsMaterials, java_keystores: tuple[Path, Path]) -> None:
    keystore, truststore = java_keystores
    assert keystore.read_bytes()[:4] == b"\xfe\xed\xfe\xed"
    props = {
        "listeners.https.ssl.keystore.type": "JKS",
        "listeners.https.ssl.keystore.location": str(keystore),
        "listeners.https.ssl.keystore.password": materials.password,
        "listeners.https.ssl.truststore.location": str(truststore),
        "listeners.https.ssl.truststore.password": materials.password,
    }
    settings = ssl_settings(props, "listeners.https.")
    loaded = load_keystore(settings)
    assert loaded is not None and loaded.chain[0].subject.rfc4514_string() == "CN=localhost,O=Sluice tests"
    assert [c.subject.rfc4514_string() for c in load_truststore(settings) or []] == ["CN=Sluice test CA,O=Sluice tests"]
    props["listeners.https.ssl.keystore.password"] = "wrong-password"
    with pytest.raises(
        ConfigError,
        match=r"listeners\.https\.ssl\.keystore\.location: cannot read the JKS keystore .*server\.jks: "
        r"wrong password \(listeners\.https\.ssl\.keystore\.password\)",
    ):
        load_keystore(ssl_settings(props, "listeners.https."))


@pytest.mark.parametrize("magic", [b"\xfe\xed\xfe\xed", b"\xce\xce\xce\xce"])
@pytest.mark.parametrize("store", ["keystore", "truststore"])
def test_without_keytool_a_java_keystore_is_refused_with_the_conversion_to_run(
    tmp_path: Path, magic: bytes, store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keystores, "find_keytool", lambda: None)
    path = tmp_path / f"{store}.jks"
    path.write_bytes(magic + b"\x00\x00\x00\x02" + bytes(64))
    props = {f"listeners.https.ssl.{store}.location": str(path), f"listeners.https.ssl.{store}.password": "changeit"}
    with pytest.raises(ConfigError) as raised:
        settings = ssl_settings(props, "listeners.https.")
        load_keystore(settings)
        load_truststore(settings)
    message = str(raised.value)
    assert message.startswith(f"listeners.https.ssl.{store}.location: {path} is a Java")
    assert f"keytool -importkeystore -srckeystore {path} -destkeystore {tmp_path / store}.p12" in message
    assert "-deststoretype PKCS12" in message and f"listeners.https.ssl.{store}.type=PKCS12" in message


def listener_context(materials: TlsMaterials, **more: str) -> ssl.SSLContext:
    return server_context(ssl_settings(pkcs12_props(materials, **more), "listeners.https."))


def test_protocols_and_cipher_suites(materials: TlsMaterials) -> None:
    context = listener_context(materials)  # Kafka's defaults: TLSv1.2,TLSv1.3
    assert (context.minimum_version, context.maximum_version) == (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3)
    context = listener_context(materials, **{"ssl.enabled.protocols": "TLSv1.2"})
    assert (context.minimum_version, context.maximum_version) == (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2)
    context = listener_context(materials, **{"ssl.protocol": "TLSv1.2"})
    assert context.maximum_version == ssl.TLSVersion.TLSv1_2
    # Java's names of suites stand for OpenSSL's; TLS 1.3 suites are left to OpenSSL
    context = listener_context(
        materials, **{"ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_AES_128_GCM_SHA256"}
    )
    tls12 = {c["name"] for c in context.get_ciphers() if c["protocol"] == "TLSv1.2"}
    assert tls12 == {"ECDHE-ECDSA-AES128-GCM-SHA256"}
    assert tls._openssl_cipher_name("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256") == "ECDHE-RSA-CHACHA20-POLY1305"
    assert tls._openssl_cipher_name("TLS_RSA_WITH_AES_256_CBC_SHA") == "AES256-SHA"


@pytest.mark.parametrize(
    ("mode", "verify_mode"),
    [(None, ssl.CERT_NONE), ("none", ssl.CERT_NONE), ("requested", ssl.CERT_OPTIONAL), ("REQUIRED", ssl.CERT_REQUIRED)],
)
def test_client_auth_modes(materials: TlsMaterials, mode: str | None, verify_mode: ssl.VerifyMode) -> None:
    props = pkcs12_props(materials, **({"ssl.client.auth": mode} if mode else {}))
    assert server_context(ssl_settings(props, "listeners.https.")).verify_mode == verify_mode


# --------------------------------------------------------------------------- over the network


def test_an_https_listener_serves_the_api(materials: TlsMaterials) -> None:
    with serving(FakeHerder(), pkcs12_props(materials), "https://127.0.0.1:0") as server:
        assert server.url.startswith("https://127.0.0.1:")
        assert server.advertised_url == server.url
        r = http_client.get(server.url + "/connectors", verify=materials.client_context(), timeout=10)
        assert r.status_code == 200 and r.json() == []
        with pytest.raises(httpx2.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            http_client.get(server.url + "/connectors", timeout=10)  # the system's authorities know nothing of it
        with pytest.raises(httpx2.TransportError):
            http_client.get(server.url.replace("https://", "http://") + "/connectors", timeout=10)


@pytest.mark.parametrize("mode", ["none", "requested", "required"])
def test_client_certificates_by_mode(materials: TlsMaterials, mode: str) -> None:
    props = pkcs12_props(materials, **{"ssl.client.auth": mode})
    with serving(FakeHerder(), props, "https://127.0.0.1:0") as server:
        with_cert = http_client.get(
            server.url + "/", verify=materials.client_context(with_client_cert=True), timeout=10
        )
        assert with_cert.status_code == 200
        if mode == "required":
            with pytest.raises(httpx2.TransportError):
                http_client.get(server.url + "/", verify=materials.client_context(), timeout=10)
        else:
            assert http_client.get(server.url + "/", verify=materials.client_context(), timeout=10).status_code == 200


def test_client_certificates_are_checked_against_the_truststore(materials: TlsMaterials) -> None:
    # a truststore that knows another authority only: the test client's certificate is refused
    props = {
        **pkcs12_props(materials, **{"ssl.client.auth": "required", "ssl.truststore.type": "PEM"}),
        "listeners.https.ssl.truststore.location": str(materials.other_ca_pem),
    }
    del props["listeners.https.ssl.truststore.password"]
    with serving(FakeHerder(), props, "https://127.0.0.1:0") as server, pytest.raises(httpx2.TransportError):
        http_client.get(server.url + "/", verify=materials.client_context(with_client_cert=True), timeout=10)


def test_mixed_and_admin_https_listeners(materials: TlsMaterials, pem_keystore: Path) -> None:
    props = {
        **pkcs12_props(materials),
        # the admin listener has its own keys: a PEM keystore here
        "admin.listeners.https.ssl.keystore.type": "PEM",
        "admin.listeners.https.ssl.keystore.location": str(pem_keystore),
        "admin.listeners.https.ssl.key.password": materials.password,
    }
    herder = FakeHerder()
    with serving(
        herder, props, "http://127.0.0.1:0,https://127.0.0.1:0", admin_listeners="https://127.0.0.1:0"
    ) as server:
        plain, secure = server.urls
        assert plain.startswith("http://") and secure.startswith("https://")
        assert server.advertised_url == plain  # Kafka advertises http when a listener is http
        verify = materials.client_context()
        assert http_client.get(plain + "/connectors", timeout=10).json() == []
        assert http_client.get(secure + "/connectors", verify=verify, timeout=10).json() == []
        admin = f"https://127.0.0.1:{server.admin_ports[0]}"
        assert http_client.get(admin + "/admin/loggers", verify=verify, timeout=10).status_code == 200
        assert http_client.get(secure + "/admin/loggers", verify=verify, timeout=10).status_code == 404


def test_an_https_listener_needs_its_settings(materials: TlsMaterials) -> None:
    with pytest.raises(ValueError, match=r"Listener https://127\.0\.0\.1:0 needs TLS settings"):
        RestServer(FakeHerder(), "https://127.0.0.1:0")
    bad = pkcs12_props(materials, **{"ssl.keystore.password": "wrong"})
    with pytest.raises(ConfigError, match=r"listeners\.https\.ssl\.keystore\.password"):
        RestServer(FakeHerder(), "https://127.0.0.1:0", tls=WorkerTls(bad))  # at construction: a start-up error
    # no https listener: TLS settings are not read at all (as Kafka)
    RestServer(FakeHerder(), "http://127.0.0.1:0", tls=WorkerTls(bad))


@pytest.mark.parametrize(
    ("listeners", "advertised_listener", "url"),
    [
        ("https://h1:8443", None, "https://h1:8443"),
        ("https://h1:8443,http://h2:8083", None, "http://h2:8083"),
        ("https://h1:8443,http://h2:8083", "https", "https://h1:8443"),
        ("http://h2:8083,https://h1:8443", "HTTPS", "https://h1:8443"),
        # no listener of that protocol (a TLS proxy in front): Kafka keeps the first listener's address
        ("http://h2:8083", "https", "https://h2:8083"),
    ],
)
def test_rest_advertised_listener(
    materials: TlsMaterials, listeners: str, advertised_listener: str | None, url: str
) -> None:
    server = RestServer(
        FakeHerder(), listeners, advertised_listener=advertised_listener, tls=WorkerTls(pkcs12_props(materials))
    )
    assert server.advertised_url == url
    assert server.worker_id == url.split("://")[1]


def test_rest_advertised_listener_must_be_http_or_https() -> None:
    with pytest.raises(ValueError, match="rest.advertised.listener=ftp: expected http or https"):
        RestServer(FakeHerder(), "http://h:1", advertised_listener="ftp")


def _worker_app(herder: FakeHerder, props: dict[str, str]):
    worker_tls = WorkerTls(props)
    return create_app(
        herder,
        basic_auth_users=USERS,
        forwarding_ssl_context=worker_tls.client_context,
        mounts={"/ui": console_app(verify=worker_tls.own_listener_client_context())},
    )


def test_a_write_is_forwarded_over_https_with_the_callers_credentials(materials: TlsMaterials) -> None:
    props = pkcs12_props(materials)
    leader_herder, follower_herder = FakeHerder(), FakeHerder()
    with (
        serving(leader_herder, props, "https://127.0.0.1:0", app=_worker_app(leader_herder, props)) as leader,
        serving(follower_herder, props, "https://127.0.0.1:0", app=_worker_app(follower_herder, props)) as follower,
    ):

        def create_through_the_follower(name: str, password: str) -> httpx2.Response:
            follower_herder.raise_next["put_connector_config"] = RequestForwardError(leader.url, "not the leader")
            return http_client.post(
                follower.url + "/connectors",
                json={"name": name, "config": {"connector.class": SINK}},
                auth=("alice", password),
                verify=materials.client_context(),
                timeout=30,
            )

        r = create_through_the_follower("s1", "s3cret")
        assert r.status_code == 201, r.text
        assert r.headers["location"] == follower.url + "/connectors/s1"
        assert "s1" in leader_herder.configs and "s1" not in follower_herder.configs
        # the leader checked the forwarded credentials
        leader_herder_before = dict(leader_herder.configs)
        refused = create_through_the_follower("s2", "wrong")
        assert refused.status_code == 401 and leader_herder.configs == leader_herder_before


def test_forwarding_refuses_a_leader_it_does_not_trust(materials: TlsMaterials, pem_keystore: Path) -> None:
    leader_props = pkcs12_props(materials)
    # the follower trusts another authority only
    follower_props = {
        **leader_props,
        "listeners.https.ssl.truststore.type": "PEM",
        "listeners.https.ssl.truststore.location": str(materials.other_ca_pem),
    }
    del follower_props["listeners.https.ssl.truststore.password"]
    leader_herder, follower_herder = FakeHerder(), FakeHerder()
    with (
        serving(leader_herder, leader_props, "https://127.0.0.1:0") as leader,
        serving(
            follower_herder, follower_props, "http://127.0.0.1:0", app=_worker_app(follower_herder, follower_props)
        ) as follower,
    ):
        follower_herder.raise_next["put_connector_config"] = RequestForwardError(leader.url, "not the leader")
        r = http_client.post(
            follower.url + "/connectors",
            json={"name": "s1", "config": {"connector.class": SINK}},
            auth=("alice", "s3cret"),
            timeout=30,
        )
        assert r.status_code == 409 and "CERTIFICATE_VERIFY_FAILED" in r.json()["message"], r.text
        assert not leader_herder.configs


def test_the_console_calls_its_worker_back_over_https(materials: TlsMaterials) -> None:
    props = pkcs12_props(materials)
    herder = FakeHerder()
    with serving(herder, props, "https://127.0.0.1:0,http://127.0.0.1:0", app=_worker_app(herder, props)) as server:
        for url in server.urls:
            page = http_client.get(
                url + "/ui/", auth=("alice", "s3cret"), verify=materials.client_context(), timeout=30
            )
            assert page.status_code == 200 and "<h1>Connectors</h1>" in page.text, page.text
            assert "No Kafka Connect worker answered" not in page.text


def test_forwarding_presents_the_workers_keystore_as_client_certificate(materials: TlsMaterials) -> None:
    leader_props = pkcs12_props(materials, **{"ssl.client.auth": "required"})
    leader_herder = FakeHerder()
    with serving(leader_herder, leader_props, "https://127.0.0.1:0") as leader:
        for keystore, created in ((materials.client_p12, True), (materials.server_p12, False)):
            # the follower serves http; its listeners.https. keys still make its REST client
            follower_props = {**pkcs12_props(materials), "listeners.https.ssl.keystore.location": str(keystore)}
            follower_herder = FakeHerder()
            app = _worker_app(follower_herder, follower_props)
            with serving(follower_herder, follower_props, "http://127.0.0.1:0", app=app) as follower:
                follower_herder.raise_next["put_connector_config"] = RequestForwardError(leader.url, "not the leader")
                name = f"from-{keystore.stem}"
                r = http_client.post(
                    follower.url + "/connectors",
                    json={"name": name, "config": {"connector.class": SINK}},
                    auth=("alice", "s3cret"),
                    timeout=30,
                )
            # a certificate for server authentication only is not presented, so the leader refuses
            assert (r.status_code == 201) is created, r.text
            assert (name in leader_herder.configs) is created


def test_the_console_works_where_client_certificates_are_requested(materials: TlsMaterials) -> None:
    # the worker's certificate is for server authentication only: the console presents none
    props = pkcs12_props(materials, **{"ssl.client.auth": "requested"})
    herder = FakeHerder()
    with serving(herder, props, "https://127.0.0.1:0", app=_worker_app(herder, props)) as server:
        verify = materials.client_context(with_client_cert=True)
        page = http_client.get(server.url + "/ui/", auth=("alice", "s3cret"), verify=verify, timeout=30)
        assert page.status_code == 200 and "<h1>Connectors</h1>" in page.text, page.text
