"""Java-style Kafka client security settings, translated for librdkafka and kafka-python."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from sluice.api.errors import ConfigError
from sluice.kafka.security import ClientSecurity, librdkafka_security, parse_jaas_config
from sluice.kafka.settings import librdkafka_config, librdkafka_consumer_config
from sluice_devtools.certs import TlsMaterials, issue_tls_materials

SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TlsMaterials:
    return issue_tls_materials(tmp_path_factory.mktemp("tls"))


def _subjects(pem: str) -> list[str]:
    return [c.subject.rfc4514_string() for c in x509.load_pem_x509_certificates(pem.encode())]


def test_jaas_config_gives_the_login_module_and_its_options() -> None:
    module, options = parse_jaas_config(f'{SCRAM} required username="alice" password="se;cr\\"et" tokenauth=false;')
    assert module == SCRAM
    assert options == {"username": "alice", "password": 'se;cr"et', "tokenauth": "false"}


@pytest.mark.parametrize(
    "text",
    [
        f'{SCRAM} required username="alice"',  # no closing ;
        f'{SCRAM} maybe username="alice";',  # bad control flag
        f'{SCRAM} required username "alice";',  # no =
        f'{SCRAM} required username="alice;',  # unclosed quote
        f'{SCRAM} required username="a"; {PLAIN} required username="b";',  # two modules
    ],
)
def test_malformed_jaas_config_is_refused_without_showing_it(text: str) -> None:
    with pytest.raises(ConfigError, match=r"sasl\.jaas\.config") as caught:
        parse_jaas_config(text)
    assert "alice" not in str(caught.value)


@pytest.mark.parametrize(
    ("mechanism", "module"), [("PLAIN", PLAIN), ("SCRAM-SHA-256", SCRAM), ("SCRAM-SHA-512", SCRAM)]
)
def test_sasl_settings_become_librdkafka_credentials(mechanism: str, module: str) -> None:
    settings = librdkafka_security(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": mechanism,
            "sasl.jaas.config": f'{module} required username="alice" password="alice-secret";',
        }
    )
    assert settings == {
        "security.protocol": "sasl_plaintext",
        "sasl.mechanism": mechanism,
        "sasl.username": "alice",
        "sasl.password": "alice-secret",
    }


def test_login_module_must_match_the_mechanism() -> None:
    with pytest.raises(ConfigError, match="needs the login module .*ScramLoginModule, not .*PlainLoginModule"):
        ClientSecurity.from_java(
            {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "SCRAM-SHA-256",
                "sasl.jaas.config": f'{PLAIN} required username="alice" password="x";',
            },
            "the connector's producer",
        )


def test_kerberos_default_and_oauthbearer_are_refused_by_name() -> None:
    with pytest.raises(
        ConfigError, match=r"GSSAPI for configuration sasl\.mechanism.*PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512"
    ):
        ClientSecurity.from_java({"security.protocol": "SASL_SSL"})
    with pytest.raises(ConfigError, match="OAUTHBEARER"):
        ClientSecurity.from_java({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"})


def test_sasl_without_credentials_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"sasl\.jaas\.config.*needs sasl\.jaas\.config"):
        ClientSecurity.from_java({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN"})
    with pytest.raises(ConfigError, match="no password"):
        ClientSecurity.from_java(
            {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "PLAIN",
                "sasl.jaas.config": f'{PLAIN} required username="alice";',
            }
        )


def test_java_classes_and_unknown_protocols_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"sasl\.login\.callback\.handler\.class.*Java classes"):
        ClientSecurity.from_java({"sasl.login.callback.handler.class": "com.example.Handler"})
    with pytest.raises(ConfigError, match=r"security\.protocol.*SASL_SSL"):
        ClientSecurity.from_java({"security.protocol": "TLS"})


def test_pkcs12_truststore_and_keystore_become_pem_text(tls: TlsMaterials) -> None:
    security = ClientSecurity.from_java(
        {
            "security.protocol": "SSL",
            "ssl.truststore.type": "PKCS12",
            "ssl.truststore.location": str(tls.truststore_p12),
            "ssl.truststore.password": tls.password,
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(tls.client_p12),
            "ssl.keystore.password": tls.password,
        }
    )
    settings = security.librdkafka()
    assert _subjects(settings["ssl.ca.pem"]) == ["CN=Sluice test CA,O=Sluice tests"]
    assert _subjects(settings["ssl.certificate.pem"])[0] == "CN=sluice-client,O=Sluice tests"
    assert "BEGIN PRIVATE KEY" in settings["ssl.key.pem"]
    assert settings["ssl.endpoint.identification.algorithm"] == "https"


def test_pem_files_and_inline_pem(tls: TlsMaterials, tmp_path: Path) -> None:
    keystore = tmp_path / "client.pem"  # key and chain in one file, as Kafka reads a PEM keystore
    keystore.write_bytes(tls.client_key_pem.read_bytes() + tls.client_chain_pem.read_bytes())
    from_files = ClientSecurity.from_java(
        {
            "security.protocol": "SSL",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(tls.ca_pem),
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(keystore),
            "ssl.key.password": tls.password,
            "ssl.endpoint.identification.algorithm": "",
        }
    )
    inline = ClientSecurity.from_java(
        {
            "security.protocol": "SSL",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.certificates": tls.ca_pem.read_text(),
            "ssl.keystore.type": "PEM",
            "ssl.keystore.key": tls.client_key_pem.read_text(),
            "ssl.keystore.certificate.chain": tls.client_chain_pem.read_text(),
            "ssl.key.password": tls.password,
        }
    )
    assert from_files.ca_pem == inline.ca_pem
    assert from_files.certificate_pem == inline.certificate_pem
    assert from_files.key_pem == inline.key_pem
    assert from_files.librdkafka()["ssl.endpoint.identification.algorithm"] == "none"


def test_jks_stores_are_read_through_keytool(tls: TlsMaterials, tmp_path: Path) -> None:
    jks = tls.java_keystore(tls.truststore_p12, tmp_path / "truststore.jks")
    assert jks.read_bytes()[:4] == b"\xfe\xed\xfe\xed"
    # ssl.truststore.type defaults to JKS, as in Kafka
    security = ClientSecurity.from_java(
        {"security.protocol": "SSL", "ssl.truststore.location": str(jks), "ssl.truststore.password": tls.password}
    )
    assert security.ca_pem is not None
    assert _subjects(security.ca_pem) == ["CN=Sluice test CA,O=Sluice tests"]
    with pytest.raises(ConfigError, match=r"ssl\.truststore\.password: client: .*JKS keystore .*: wrong password"):
        ClientSecurity.from_java(
            {"security.protocol": "SSL", "ssl.truststore.location": str(jks), "ssl.truststore.password": "wrong-one"}
        )


def test_stores_are_read_once_for_the_clients_of_one_start_and_again_when_changed(
    tls: TlsMaterials, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sluice.tls import keystores

    reads: list[str] = []
    read_bytes = keystores._read_bytes  # the one place a store file is read

    def counting(path: str, *args: Any) -> bytes:
        reads.append(path)
        return read_bytes(path, *args)

    monkeypatch.setattr(keystores, "_read_bytes", counting)
    truststore = tmp_path / "trusted.pem"
    truststore.write_text(tls.ca_pem.read_text())
    settings = {"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": str(truststore)}
    clients = [ClientSecurity.from_java(settings, client) for client in ("producer", "consumer", "admin")]
    assert len(reads) == 1
    assert {c.ca_pem for c in clients} == {clients[0].ca_pem}
    # the file is replaced (a certificate renewed): the next client reads it again
    replaced = tmp_path / "renewed.pem"
    replaced.write_text(tls.other_ca_pem.read_text())
    replaced.replace(truststore)
    renewed = ClientSecurity.from_java(settings, "producer")
    assert len(reads) == 2
    assert renewed.ca_pem is not None
    assert _subjects(renewed.ca_pem) == _subjects(tls.other_ca_pem.read_text())
    assert _subjects(renewed.ca_pem) != _subjects(clients[0].ca_pem or "")


def test_store_errors_name_the_key(tls: TlsMaterials, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"ssl\.truststore\.password: client: .*: wrong password"):
        ClientSecurity.from_java(
            {
                "security.protocol": "SSL",
                "ssl.truststore.type": "PKCS12",
                "ssl.truststore.location": str(tls.truststore_p12),
                "ssl.truststore.password": "wrong",
            }
        )
    with pytest.raises(ConfigError, match=r"ssl\.truststore\.location: client: cannot read .*none"):
        ClientSecurity.from_java({"security.protocol": "SSL", "ssl.truststore.location": str(tmp_path / "none")})
    with pytest.raises(ConfigError, match=r"ssl\.key\.password: client: .*cannot decrypt the private key"):
        ClientSecurity.from_java(
            {
                "security.protocol": "SSL",
                "ssl.keystore.type": "PEM",
                "ssl.keystore.key": tls.client_key_pem.read_text(),
                "ssl.keystore.certificate.chain": tls.client_chain_pem.read_text(),
                "ssl.key.password": "wrong",
            }
        )


def test_kafka_python_gets_an_ssl_context_that_trusts_the_store(tls: TlsMaterials) -> None:
    security = ClientSecurity.from_java(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": f'{SCRAM} required username="alice" password="alice-secret";',
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(tls.ca_pem),
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(tls.client_p12),
            "ssl.keystore.password": tls.password,
        }
    )
    settings = security.kafka_python()
    context = settings.pop("ssl_context")
    assert settings == {
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "alice",
        "sasl_plain_password": "alice-secret",
        "ssl_check_hostname": True,
    }
    assert isinstance(context, ssl.SSLContext)
    assert [dict(c["subject"][-1])["commonName"] for c in context.get_ca_certs()] == ["Sluice test CA"]


def test_client_configs_carry_translated_security_and_drop_java_only_keys(tls: TlsMaterials) -> None:
    java = {
        "bootstrap.servers": "127.0.0.1:9093",
        "linger.ms": "5",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": f'{PLAIN} required username="alice" password="alice-secret";',
        "ssl.truststore.location": str(tls.truststore_p12),
        "ssl.truststore.password": tls.password,
        "ssl.keymanager.algorithm": "SunX509",
        "ssl.enabled.protocols": "TLSv1.3",
    }
    for settings in (librdkafka_config(java), librdkafka_consumer_config(java)):
        assert settings["sasl.username"] == "alice"
        assert settings["security.protocol"] == "sasl_ssl"
        assert "ssl.ca.pem" in settings
        assert not {"sasl.jaas.config", "ssl.truststore.location", "ssl.keymanager.algorithm"} & set(settings)
    # settings written with librdkafka's own names keep working
    native = librdkafka_config({"security.protocol": "SSL", "ssl.ca.location": str(tls.ca_pem)})
    assert native == {
        "security.protocol": "ssl",
        "ssl.endpoint.identification.algorithm": "https",
        "ssl.ca.location": str(tls.ca_pem),
    }


def test_a_jks_keystore_with_the_key_password_kafka_configs_carry(tls: TlsMaterials, tmp_path: Path) -> None:
    jks = tls.java_keystore(tls.client_p12, tmp_path / "client.jks")
    security = ClientSecurity.from_java(
        {
            "security.protocol": "SSL",
            "ssl.keystore.location": str(jks),
            "ssl.keystore.password": tls.password,
            "ssl.key.password": tls.password,
        }
    )
    assert security.certificate_pem is not None
    assert _subjects(security.certificate_pem)[0] == "CN=sluice-client,O=Sluice tests"
    assert security.key_pem is not None and "BEGIN PRIVATE KEY" in security.key_pem


def test_kafkas_store_rules_hold_for_clients(tls: TlsMaterials) -> None:
    with pytest.raises(
        ConfigError, match=r"\[hidden\] for configuration ssl\.keystore\.password: client: .*cannot be given with a PEM"
    ) as caught:
        ClientSecurity.from_java(
            {
                "security.protocol": "SSL",
                "ssl.keystore.type": "PEM",
                "ssl.keystore.key": tls.client_key_pem.read_text(),
                "ssl.keystore.certificate.chain": tls.client_chain_pem.read_text(),
                "ssl.keystore.password": "store-secret",
            }
        )
    assert "store-secret" not in str(caught.value)
    with pytest.raises(ConfigError, match=r"Invalid value JKS for configuration ssl\.keystore\.type: client: "):
        ClientSecurity.from_java({"security.protocol": "SSL", "ssl.keystore.key": "k"})
