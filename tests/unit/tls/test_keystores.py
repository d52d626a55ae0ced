"""``sluice.tls.keystores``: Java key stores and trust stores read from Kafka's ``ssl.*``
settings, as Kafka's DefaultSslEngineFactory reads them."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from sluice.tls import keystores
from sluice.tls.keystores import KeyMaterial, StoreError, certificates_pem, read_keystore, read_truststore
from sluice_devtools.certs import TlsMaterials, issue_tls_materials

SERVER = "CN=localhost,O=Sluice tests"
CA = "CN=Sluice test CA,O=Sluice tests"


@pytest.fixture(scope="module")
def materials(tmp_path_factory: pytest.TempPathFactory) -> TlsMaterials:
    return issue_tls_materials(tmp_path_factory.mktemp("tls"))


def subjects(certificates: list[x509.Certificate] | tuple[x509.Certificate, ...] | None) -> list[str]:
    return [c.subject.rfc4514_string() for c in certificates or []]


def pkcs12_settings(materials: TlsMaterials, **more: str) -> dict[str, str]:
    return {**materials.server_store_settings(), **more}


def store_error(settings: dict[str, str], prefix: str = "") -> StoreError:
    with pytest.raises(StoreError) as raised:
        read_keystore(settings, prefix)
        read_truststore(settings, prefix)
    return raised.value


# --------------------------------------------------------------------------- PKCS12 and PEM


def test_no_store_settings_name_no_store() -> None:
    assert read_keystore({}) is None
    assert read_truststore({"ssl.keystore.location": " "}) is None  # a blank location is unset


def test_pkcs12_stores(materials: TlsMaterials) -> None:
    settings = pkcs12_settings(materials)
    keystore = read_keystore(settings)
    assert keystore is not None and subjects(keystore.chain) == [SERVER, CA]
    assert subjects(read_truststore(settings)) == [CA]


def test_the_default_type_reads_a_pkcs12_file_as_java_does(materials: TlsMaterials) -> None:
    settings = pkcs12_settings(materials)
    del settings["ssl.keystore.type"], settings["ssl.truststore.type"]  # JKS, Kafka's default
    assert read_keystore(settings) is not None
    assert subjects(read_truststore(settings)) == [CA]


def test_pem_keystore_file_and_truststore_file(materials: TlsMaterials, tmp_path: Path) -> None:
    keystore_file = tmp_path / "keystore.pem"
    keystore_file.write_text(materials.server_key_pem.read_text() + materials.server_chain_pem.read_text())
    settings = {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(keystore_file),
        "ssl.key.password": materials.password,
        "ssl.truststore.type": "pem",  # the type's case does not matter
        "ssl.truststore.location": str(materials.ca_pem),
    }
    keystore = read_keystore(settings)
    assert keystore is not None and subjects(keystore.chain) == [SERVER, CA]
    assert subjects(read_truststore(settings)) == [CA]


def test_inline_pem_without_line_breaks(materials: TlsMaterials) -> None:
    def one_line(text: str) -> str:
        return " ".join(text.split())  # as a properties value continued over lines reads

    settings = {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.key": one_line(materials.server_key_pem.read_text()),
        "ssl.keystore.certificate.chain": one_line(materials.server_chain_pem.read_text()),
        "ssl.key.password": materials.password,
        "ssl.truststore.type": "PEM",
        "ssl.truststore.certificates": one_line(materials.ca_pem.read_text()),
    }
    keystore = read_keystore(settings)
    assert keystore is not None and subjects(keystore.chain) == [SERVER, CA]
    assert subjects(read_truststore(settings)) == [CA]


def test_key_material_as_pem(materials: TlsMaterials) -> None:
    keystore = read_keystore(pkcs12_settings(materials))
    assert keystore is not None
    key_pem = keystore.key_pem()
    assert key_pem.startswith("-----BEGIN PRIVATE KEY-----")  # unencrypted PKCS#8
    again = serialization.load_pem_private_key(key_pem.encode(), None)
    assert again.public_key() == keystore.key.public_key()
    assert keystore.chain_pem() == certificates_pem(keystore.chain)
    assert subjects(x509.load_pem_x509_certificates(keystore.chain_pem().encode())) == [SERVER, CA]


def test_pem_key_passwords(materials: TlsMaterials) -> None:
    inline = {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.key": materials.server_key_pem.read_text(),
        "ssl.keystore.certificate.chain": materials.server_chain_pem.read_text(),
    }
    error = store_error(inline, "x.")
    assert error.key == "ssl.key.password"
    assert str(error) == "x.ssl.keystore.key: the private key is encrypted: set x.ssl.key.password"
    error = store_error({**inline, "ssl.key.password": "wrong"})
    assert error.key == "ssl.key.password" and "cannot decrypt the private key" in str(error)
    # a password given for a clear key is not needed, and does no harm
    keystore = read_keystore({**inline, "ssl.key.password": materials.password})
    assert keystore is not None
    clear = keystore.key_pem()
    assert read_keystore({**inline, "ssl.keystore.key": clear}) is not None
    assert read_keystore({**inline, "ssl.keystore.key": clear, "ssl.key.password": "anything"}) is not None


def test_a_legacy_encrypted_pem_key(materials: TlsMaterials) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    legacy = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.BestAvailableEncryption(b"legacy-secret"),
    ).decode()
    assert "Proc-Type: 4,ENCRYPTED" in legacy
    keystore = read_keystore(
        {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.key": legacy,
            "ssl.keystore.certificate.chain": materials.server_chain_pem.read_text(),
            "ssl.key.password": "legacy-secret",
        }
    )
    assert keystore is not None and keystore.key.public_key() == key.public_key()


@pytest.mark.parametrize(
    ("settings", "key", "message"),
    [
        # Kafka's DefaultSslEngineFactory rules
        ({"ssl.keystore.key": "k"}, "ssl.keystore.type", "ssl.keystore.key is set, so ssl.keystore.type must be PEM"),
        (
            {"ssl.keystore.type": "PEM", "ssl.keystore.key": "k"},
            "ssl.keystore.certificate.chain",
            "ssl.keystore.key is set but ssl.keystore.certificate.chain is not",
        ),
        (
            {"ssl.keystore.type": "PEM", "ssl.keystore.key": "k", "ssl.keystore.certificate.chain": "c",
             "ssl.keystore.location": "k.pem"},
            "ssl.keystore.location",
            "Both ssl.keystore.location and ssl.keystore.key are set",
        ),
        (
            {"ssl.keystore.type": "PEM", "ssl.keystore.key": "k", "ssl.keystore.certificate.chain": "c",
             "ssl.keystore.password": "p"},
            "ssl.keystore.password",
            "ssl.keystore.password cannot be given with a PEM keystore, only ssl.key.password may be",
        ),
        (
            {"ssl.keystore.type": "PEM", "ssl.keystore.location": "k.pem", "ssl.keystore.password": "p"},
            "ssl.keystore.password",
            "ssl.keystore.password cannot be given with a PEM keystore",
        ),
        ({"ssl.keystore.certificate.chain": "c"}, "ssl.keystore.key", "ssl.keystore.certificate.chain is set but"),
        ({"ssl.keystore.password": "p"}, "ssl.keystore.location", "ssl.keystore.password is set but ssl.keystore.loc"),
        (
            {"ssl.keystore.location": "k.p12"},
            "ssl.keystore.password",
            "ssl.keystore.location is set but ssl.keystore.password is not",
        ),
        (
            {"ssl.keystore.location": "k.p12", "ssl.keystore.type": "BCFKS"},
            "ssl.keystore.type",
            "ssl.keystore.type=BCFKS is not supported",
        ),
        (
            {"ssl.truststore.certificates": "c"},
            "ssl.truststore.type",
            "ssl.truststore.certificates is set, so ssl.truststore.type must be PEM, not JKS",
        ),
        (
            {"ssl.truststore.type": "PEM", "ssl.truststore.certificates": "c", "ssl.truststore.location": "t.pem"},
            "ssl.truststore.location",
            "Both ssl.truststore.location and ssl.truststore.certificates are set",
        ),
        (
            {"ssl.truststore.type": "PEM", "ssl.truststore.location": "t.pem", "ssl.truststore.password": "p"},
            "ssl.truststore.password",
            "ssl.truststore.password cannot be given with a PEM truststore",
        ),
        (
            {"ssl.truststore.password": "p"},
            "ssl.truststore.location",
            "ssl.truststore.password is set but ssl.truststore.location is not",
        ),
        # unreadable values
        (
            {"ssl.keystore.type": "PEM", "ssl.keystore.key": "no key", "ssl.keystore.certificate.chain": "c"},
            "ssl.keystore.key",
            "ssl.keystore.key: no PEM private key",
        ),
        ({"ssl.truststore.type": "PEM", "ssl.truststore.certificates": "none"}, "ssl.truststore.certificates",
         "ssl.truststore.certificates: no PEM certificate"),
        (
            {"ssl.truststore.type": "PEM", "ssl.truststore.certificates": "-----BEGIN CERTIFICATE-----AAAA-----END "
             "CERTIFICATE-----"},
            "ssl.truststore.certificates",
            "ssl.truststore.certificates: a CERTIFICATE block cannot be read",
        ),
    ],
)  # fmt: skip
def test_store_rules_and_the_key_at_fault(settings: dict[str, str], key: str, message: str) -> None:
    error = store_error(settings)
    assert error.key == key
    assert message in str(error)
    prefixed = store_error(settings, "listeners.https.")
    assert prefixed.key == key  # the key without prefix; the message names keys as written
    assert message.replace("ssl.", "listeners.https.ssl.") in str(prefixed)


def test_the_chain_is_checked_as_its_own_key(materials: TlsMaterials) -> None:
    error = store_error(
        {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.key": materials.server_key_pem.read_text(),
            "ssl.keystore.certificate.chain": "no certificate",
            "ssl.key.password": materials.password,
        }
    )
    assert error.key == "ssl.keystore.certificate.chain"
    assert str(error).startswith("ssl.keystore.certificate.chain: no PEM certificate")


def test_file_errors(materials: TlsMaterials, tmp_path: Path) -> None:
    error = store_error({"ssl.truststore.location": str(tmp_path / "none.p12")}, "p.")
    assert error.key == "ssl.truststore.location"
    assert str(error) == f"p.ssl.truststore.location: cannot read {tmp_path / 'none.p12'}: No such file or directory"
    binary = tmp_path / "binary.pem"
    binary.write_bytes(b"\xff\xfe\x00")
    error = store_error({"ssl.truststore.type": "PEM", "ssl.truststore.location": str(binary)})
    assert error.key == "ssl.truststore.location" and "is not a PEM file" in str(error)
    # a truststore as a keystore: no private key
    error = store_error(pkcs12_settings(materials, **{"ssl.keystore.location": str(materials.truststore_p12)}))
    assert error.key == "ssl.keystore.location" and "holds no private key" in str(error)


def test_wrong_pkcs12_passwords_name_the_password_and_never_show_it(materials: TlsMaterials) -> None:
    for store in ("keystore", "truststore"):
        error = store_error(pkcs12_settings(materials, **{f"ssl.{store}.password": "not-the-password"}))
        assert error.key == f"ssl.{store}.password"
        assert f"wrong password (ssl.{store}.password)" in str(error)
        assert "not-the-password" not in str(error) and materials.password not in str(error)
    truststore = {"ssl.truststore.type": "PKCS12", "ssl.truststore.location": str(materials.truststore_p12)}
    error = store_error(truststore)
    assert error.key == "ssl.truststore.password" and "it needs a password: set ssl.truststore.password" in str(error)


def test_a_pkcs12_key_may_open_with_the_key_password(materials: TlsMaterials) -> None:
    # A key with its own password: the store password is wrong, the key's opens the file.
    settings = pkcs12_settings(materials, **{"ssl.keystore.password": "other", "ssl.key.password": materials.password})
    assert isinstance(read_keystore(settings), KeyMaterial)


# --------------------------------------------------------------------------- Java KeyStores


@pytest.fixture(scope="module")
def keytool() -> str:
    found = keystores.find_keytool()
    if found is None:
        pytest.skip("no JDK keytool")
    return found


@pytest.mark.parametrize(("kind", "magic"), [("JKS", b"\xfe\xed\xfe\xed"), ("JCEKS", b"\xce\xce\xce\xce")])
@pytest.mark.usefixtures("keytool")
def test_java_keystores_are_read_through_keytool(
    materials: TlsMaterials, tmp_path: Path, kind: str, magic: bytes
) -> None:
    keystore = materials.java_keystore(materials.server_p12, tmp_path / "server.ks", kind)
    truststore = materials.java_keystore(materials.truststore_p12, tmp_path / "trust.ks", kind)
    assert keystore.read_bytes()[:4] == magic
    settings = {
        "ssl.keystore.location": str(keystore),
        "ssl.keystore.password": materials.password,
        "ssl.key.password": materials.password,  # the same as the store's: Kafka configs often say so
        "ssl.truststore.type": "PKCS12",  # the type names no format: the content says which
        "ssl.truststore.location": str(truststore),
        "ssl.truststore.password": materials.password,
    }
    loaded = read_keystore(settings)
    assert loaded is not None and subjects(loaded.chain) == [SERVER, CA]
    assert subjects(read_truststore(settings)) == [CA]
    error = store_error({**settings, "ssl.keystore.password": "wrong-password"}, "l.")
    assert error.key == "ssl.keystore.password"
    assert str(error) == (
        f"l.ssl.keystore.location: cannot read the {kind} keystore {keystore}: wrong password (l.ssl.keystore.password)"
    )
    truststore_only = {"ssl.truststore.location": str(truststore)}
    error = store_error(truststore_only)
    assert error.key == "ssl.truststore.password" and "set ssl.truststore.password to read it" in str(error)


@pytest.mark.usefixtures("keytool")
def test_a_java_keystores_key_with_its_own_password(materials: TlsMaterials, tmp_path: Path) -> None:
    keystore = materials.java_keystore(materials.server_p12, tmp_path / "server.jks", key_password="key-secret")
    settings = {"ssl.keystore.location": str(keystore), "ssl.keystore.password": materials.password}
    loaded = read_keystore({**settings, "ssl.key.password": "key-secret"})
    assert loaded is not None and subjects(loaded.chain) == [SERVER, CA]
    missing = store_error(settings)
    assert missing.key == "ssl.key.password" and "has a password of its own: set ssl.key.password" in str(missing)
    wrong = store_error({**settings, "ssl.key.password": "wrong-key-secret"})
    assert wrong.key == "ssl.key.password" and "wrong key password (ssl.key.password)" in str(wrong)
    assert "key-secret" not in str(wrong) and materials.password not in str(wrong)


@pytest.mark.parametrize("store", ["keystore", "truststore"])
def test_without_keytool_a_java_keystore_is_refused_with_the_conversion_to_run(
    tmp_path: Path, store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keystores, "find_keytool", lambda: None)
    path = tmp_path / f"{store}.jks"
    path.write_bytes(b"\xfe\xed\xfe\xed" + bytes(64))
    error = store_error({f"ssl.{store}.location": str(path), f"ssl.{store}.password": "changeit"}, "a.")
    assert error.key == f"ssl.{store}.location"
    message = str(error)
    assert message.startswith(f"a.ssl.{store}.location: {path} is a Java JKS keystore")
    assert f"keytool -importkeystore -srckeystore {path} -destkeystore {tmp_path / store}.p12" in message
    assert f"a.ssl.{store}.type=PKCS12" in message and "changeit" not in message


def test_find_keytool_prefers_java_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = tmp_path / "bin" / "keytool"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    assert keystores.find_keytool() == str(tool)
