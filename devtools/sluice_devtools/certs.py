"""Test TLS material: a private certificate authority and the certificates it signs, written
in every store format Kafka's ``ssl.*`` settings name (PKCS12 keystores and truststores,
PEM files), for the secured broker and the https REST listeners of the tests.

``issue_tls_materials(directory)`` writes, once per directory (an existing set is reused):

- ``ca.pem``: the authority's certificate (what a client trusts);
- ``truststore.p12``: the same as a Java PKCS12 truststore (a trusted-certificate entry);
- ``server.p12``, ``server-key.pem``, ``server-chain.pem``: a server key and certificate for
  ``localhost`` and ``127.0.0.1``;
- ``client.p12``, ``client-key.pem``, ``client-chain.pem``: a client certificate
  (``CN=sluice-client``), for listeners that check client certificates;
- ``other-ca.pem``: an unrelated authority, for "untrusted server" tests.

Every store and the PEM keys are protected by :attr:`TlsMaterials.password`.
"""

from __future__ import annotations

import dataclasses
import datetime
import ipaddress
import ssl
import subprocess
from pathlib import Path

__all__ = ["TlsMaterials", "issue_tls_materials"]

PASSWORD = "sluice-store-secret"
_VALID_DAYS = 3650


@dataclasses.dataclass(frozen=True)
class TlsMaterials:
    """Paths of the files :func:`issue_tls_materials` wrote (see the module docstring)."""

    directory: Path
    password: str

    @property
    def ca_pem(self) -> Path:
        return self.directory / "ca.pem"

    @property
    def other_ca_pem(self) -> Path:
        return self.directory / "other-ca.pem"

    @property
    def truststore_p12(self) -> Path:
        return self.directory / "truststore.p12"

    @property
    def server_p12(self) -> Path:
        return self.directory / "server.p12"

    @property
    def server_key_pem(self) -> Path:
        return self.directory / "server-key.pem"

    @property
    def server_chain_pem(self) -> Path:
        return self.directory / "server-chain.pem"

    @property
    def client_p12(self) -> Path:
        return self.directory / "client.p12"

    @property
    def client_key_pem(self) -> Path:
        return self.directory / "client-key.pem"

    @property
    def client_chain_pem(self) -> Path:
        return self.directory / "client-chain.pem"

    def client_context(self, *, with_client_cert: bool = False) -> ssl.SSLContext:
        """A client's TLS context trusting the test authority, optionally presenting the
        client certificate."""
        context = ssl.create_default_context(cafile=str(self.ca_pem))
        if with_client_cert:
            context.load_cert_chain(str(self.client_chain_pem), str(self.client_key_pem), password=self.password)
        return context

    def java_keystore(self, source: Path, target: Path, kind: str = "JKS", key_password: str | None = None) -> Path:
        """``source`` (one of the PKCS12 stores here) rewritten at ``target`` as a Java KeyStore
        (``kind`` JKS or JCEKS) by the JDK's keytool, under :attr:`password`; its key under
        ``key_password`` of its own when given. Raises RuntimeError when there is no keytool."""
        from sluice.tls.keystores import find_keytool

        keytool = find_keytool()
        if keytool is None:
            raise RuntimeError("No JDK keytool (JAVA_HOME or PATH) to write a Java KeyStore with")
        command = [
            keytool, "-importkeystore", "-noprompt", "-srckeystore", str(source), "-srcstoretype", "PKCS12",
            "-srcstorepass", self.password, "-destkeystore", str(target), "-deststoretype", kind,
            "-deststorepass", self.password,
        ]  # fmt: skip
        if key_password is not None:
            command += ["-srcalias", source.stem, "-destkeypass", key_password]  # the alias each store's key has
        subprocess.run(command, check=True, capture_output=True, stdin=subprocess.DEVNULL)
        return target

    def server_store_settings(self, prefix: str = "") -> dict[str, str]:
        """Kafka's ``ssl.*`` keys for the PKCS12 server keystore and truststore, each key
        after ``prefix`` (``listeners.https.`` for a worker's https listeners)."""
        return {
            f"{prefix}ssl.keystore.type": "PKCS12",
            f"{prefix}ssl.keystore.location": str(self.server_p12),
            f"{prefix}ssl.keystore.password": self.password,
            f"{prefix}ssl.truststore.type": "PKCS12",
            f"{prefix}ssl.truststore.location": str(self.truststore_p12),
            f"{prefix}ssl.truststore.password": self.password,
        }


def issue_tls_materials(directory: Path, password: str = PASSWORD) -> TlsMaterials:
    """Write (or reuse) a CA and server and client certificates in ``directory``."""
    materials = TlsMaterials(Path(directory), password)
    if materials.client_chain_pem.exists():  # written last
        return materials
    materials.directory.mkdir(parents=True, exist_ok=True)

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import pkcs12
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=5)
    later = now + datetime.timedelta(days=_VALID_DAYS)
    secret = password.encode()

    def name(common_name: str) -> x509.Name:
        return x509.Name(
            [
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Sluice tests"),
                x509.NameAttribute(NameOID.COMMON_NAME, common_name),
            ]
        )

    def authority(common_name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (
            x509.CertificateBuilder()
            .subject_name(name(common_name))
            .issuer_name(name(common_name))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(later)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256())
        )
        return key, cert

    ca_key, ca_cert = authority("Sluice test CA")
    _, other_ca_cert = authority("Sluice other CA")

    def leaf(common_name: str, server: bool) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(name(common_name))
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(later)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH]),
                critical=False,
            )
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        )
        if server:
            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                ),
                critical=False,
            )
        return key, builder.sign(ca_key, hashes.SHA256())

    def pem(cert: x509.Certificate) -> bytes:
        return cert.public_bytes(serialization.Encoding.PEM)

    def write(path: Path, data: bytes) -> None:
        path.write_bytes(data)
        path.chmod(0o600)

    write(materials.ca_pem, pem(ca_cert))
    write(materials.other_ca_pem, pem(other_ca_cert))
    write(
        materials.truststore_p12,
        pkcs12.serialize_java_truststore(
            [pkcs12.PKCS12Certificate(ca_cert, b"caroot")],
            serialization.BestAvailableEncryption(secret),
        ),
    )
    for stem, server in (("server", True), ("client", False)):
        key, cert = leaf("localhost" if server else "sluice-client", server)
        write(
            materials.directory / f"{stem}.p12",
            pkcs12.serialize_key_and_certificates(
                stem.encode(), key, cert, [ca_cert], serialization.BestAvailableEncryption(secret)
            ),
        )
        write(
            materials.directory / f"{stem}-key.pem",
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.BestAvailableEncryption(secret),
            ),
        )
        write(materials.directory / f"{stem}-chain.pem", pem(cert) + pem(ca_cert))
    return materials
