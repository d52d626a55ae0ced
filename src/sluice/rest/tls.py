"""TLS of the REST API: the SSL contexts of ``https`` listeners and of requests to other
workers, from Kafka's ``ssl.*`` worker properties.

Which keys apply is Kafka's rule (``SSLUtils`` over ``AbstractConfig.valuesWithPrefixAllOrNothing``):
an https listener of ``listeners`` reads the ``listeners.https.``-prefixed keys when any key
starts with ``listeners.https.``, and the top-level ``ssl.*`` keys otherwise. It is all or
nothing, never key by key: once one ``listeners.https.`` key is set, the top-level ``ssl.*``
keys are not read for the listener. An https listener of ``admin.listeners`` does the same
with ``admin.listeners.https.``. Requests to other workers (forwarding to the leader) use
the listener keys as a client: the truststore says which servers are trusted, and the
keystore is presented when a server asks for a client certificate.

Stores, as Kafka's keys describe them:

- ``ssl.keystore.type`` PKCS12 (``ssl.keystore.location``, ``ssl.keystore.password``, and
  ``ssl.key.password`` when the key has its own) or PEM (``ssl.keystore.location`` naming a
  file of a private key and its certificate chain, or the key and chain inline in
  ``ssl.keystore.key`` and ``ssl.keystore.certificate.chain``; ``ssl.key.password`` when the
  key is encrypted). A store is read by its content, as Java 9 and later do: the default
  type, JKS, reads a PKCS12 file, and a Java KeyStore (JKS, JCEKS) is rewritten as PKCS12
  by the JDK's ``keytool`` (refused, with the command that converts it, without one).
- ``ssl.truststore.type`` PKCS12 (``ssl.truststore.location``, ``ssl.truststore.password``)
  or PEM (a file of certificates, or ``ssl.truststore.certificates`` inline). Without a
  truststore the keystore's own certificate is trusted, as Jetty uses the keystore as
  truststore; with neither, the system's certificate authorities.

Each certificate of a truststore is trusted as it is, an intermediate or a server's own
certificate included, as Java's trust managers do. A keystore whose certificate is for
server authentication only is not presented as a client certificate (a server asking for
one would refuse it).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import logging
import os
import re
import secrets
import shutil
import ssl
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID

from sluice.api.errors import ConfigError

__all__ = [
    "ADMIN_LISTENERS_HTTPS_PREFIX",
    "LISTENERS_HTTPS_PREFIX",
    "KeyMaterial",
    "SslSettings",
    "WorkerTls",
    "client_context",
    "load_keystore",
    "load_truststore",
    "own_listener_client_context",
    "server_context",
    "ssl_settings",
]

log = logging.getLogger(__name__)

LISTENERS_HTTPS_PREFIX = "listeners.https."
ADMIN_LISTENERS_HTTPS_PREFIX = "admin.listeners.https."

KEYSTORE_TYPE = "ssl.keystore.type"
KEYSTORE_LOCATION = "ssl.keystore.location"
KEYSTORE_PASSWORD = "ssl.keystore.password"
KEY_PASSWORD = "ssl.key.password"
KEYSTORE_KEY = "ssl.keystore.key"
KEYSTORE_CHAIN = "ssl.keystore.certificate.chain"
TRUSTSTORE_TYPE = "ssl.truststore.type"
TRUSTSTORE_LOCATION = "ssl.truststore.location"
TRUSTSTORE_PASSWORD = "ssl.truststore.password"
TRUSTSTORE_CERTIFICATES = "ssl.truststore.certificates"
CLIENT_AUTH = "ssl.client.auth"
PROTOCOL = "ssl.protocol"
ENABLED_PROTOCOLS = "ssl.enabled.protocols"
CIPHER_SUITES = "ssl.cipher.suites"
ENDPOINT_IDENTIFICATION = "ssl.endpoint.identification.algorithm"

# Kafka's defaults (SslConfigs, BrokerSecurityConfigs).
DEFAULT_STORE_TYPE = "JKS"
DEFAULT_PROTOCOL = "TLSv1.3"
DEFAULT_ENABLED_PROTOCOLS = ("TLSv1.2", "TLSv1.3")

_TLS_VERSIONS = {
    "TLSV1": ssl.TLSVersion.TLSv1,
    "TLSV1.1": ssl.TLSVersion.TLSv1_1,
    "TLSV1.2": ssl.TLSVersion.TLSv1_2,
    "TLSV1.3": ssl.TLSVersion.TLSv1_3,
}
# ssl.protocol names the highest version a Java SSLContext of that name speaks.
_PROTOCOL_CEILINGS = {
    "TLS": ssl.TLSVersion.TLSv1_3,
    "SSL": ssl.TLSVersion.TLSv1_3,
    **_TLS_VERSIONS,
}
# Names Java accepts in ssl.enabled.protocols that no modern TLS stack speaks.
_OBSOLETE_PROTOCOLS = {"SSLV2HELLO", "SSLV3"}
_CLIENT_AUTH_MODES = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
# TLS 1.3 suites: OpenSSL picks them on its own (Python's ssl module cannot restrict them).
_TLS13_SUITES = {
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
    "TLS_AES_128_CCM_SHA256",
    "TLS_AES_128_CCM_8_SHA256",
}
_JAVA_KEYSTORE_MAGIC = {b"\xfe\xed\xfe\xed": "JKS", b"\xce\xce\xce\xce": "JCEKS"}
_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.DOTALL)


# --------------------------------------------------------------------------- which keys


@dataclass(frozen=True)
class SslSettings:
    """The ``ssl.*`` settings one listener (or client) uses, without their prefix.

    ``prefix`` is where they came from (``listeners.https.``, ``admin.listeners.https.``,
    or ``""`` for the top-level keys): error messages name the keys as the user wrote them.
    """

    prefix: str
    values: Mapping[str, str]

    def name(self, key: str) -> str:
        """The property as written in the worker's configuration."""
        return self.prefix + key

    def get(self, key: str) -> str | None:
        return self.values.get(key)

    def path(self, key: str) -> str | None:
        """A location or type: unset when missing or blank."""
        value = self.values.get(key)
        return value.strip() if value is not None and value.strip() else None


def ssl_settings(worker_props: Mapping[str, str], prefix: str) -> SslSettings:
    """The settings under ``prefix`` when any key starts with it, else the top-level ``ssl.*``
    ones (Kafka's all-or-nothing rule)."""
    prefixed = {k[len(prefix) :]: str(v) for k, v in worker_props.items() if k.startswith(prefix)}
    if prefixed:
        return SslSettings(prefix, prefixed)
    return SslSettings("", {k: str(v) for k, v in worker_props.items() if k.startswith("ssl.")})


# --------------------------------------------------------------------------- stores


@dataclass(frozen=True)
class KeyMaterial:
    """A private key and its certificate chain (the key's own certificate first)."""

    key: Any  # one of cryptography's private key types
    chain: tuple[x509.Certificate, ...]


def load_keystore(settings: SslSettings) -> KeyMaterial | None:
    """The keystore the settings name, or None when they name none. Raises
    :class:`ConfigError` naming the key at fault."""
    store_type = (settings.path(KEYSTORE_TYPE) or DEFAULT_STORE_TYPE).upper()
    location = settings.path(KEYSTORE_LOCATION)
    password = settings.get(KEYSTORE_PASSWORD)
    key_password = settings.get(KEY_PASSWORD)
    inline_key = settings.get(KEYSTORE_KEY)
    inline_chain = settings.get(KEYSTORE_CHAIN)
    name = settings.name
    # The combinations Kafka's DefaultSslEngineFactory accepts, with its reasons.
    if inline_key is not None:
        if store_type != "PEM":
            raise ConfigError(f"{name(KEYSTORE_KEY)} is set, so {name(KEYSTORE_TYPE)} must be PEM, not {store_type}")
        if inline_chain is None:
            raise ConfigError(f"{name(KEYSTORE_KEY)} is set but {name(KEYSTORE_CHAIN)} is not: give its certificates")
        if location is not None:
            raise ConfigError(f"Both {name(KEYSTORE_LOCATION)} and {name(KEYSTORE_KEY)} are set: give one of them")
        if password is not None:
            raise ConfigError(
                f"{name(KEYSTORE_PASSWORD)} cannot be given with a PEM keystore, only {name(KEY_PASSWORD)} may be"
            )
        return _pem_key_material(inline_key, inline_chain, key_password, settings, name(KEYSTORE_KEY))
    if inline_chain is not None:
        raise ConfigError(f"{name(KEYSTORE_CHAIN)} is set but {name(KEYSTORE_KEY)} is not: give the private key too")
    if location is None:
        if password is not None:
            raise ConfigError(f"{name(KEYSTORE_PASSWORD)} is set but {name(KEYSTORE_LOCATION)} is not")
        return None
    if store_type == "PEM":
        if password is not None:
            raise ConfigError(
                f"{name(KEYSTORE_PASSWORD)} cannot be given with a PEM keystore, only {name(KEY_PASSWORD)} may be"
            )
        text = _read_text(location, name(KEYSTORE_LOCATION))
        return _pem_key_material(text, text, key_password, settings, name(KEYSTORE_LOCATION))
    if store_type not in ("JKS", "JCEKS", "PKCS12"):
        raise ConfigError(f"{name(KEYSTORE_TYPE)}={store_type} is not supported: use PKCS12, PEM or JKS")
    if password is None:
        raise ConfigError(f"{name(KEYSTORE_LOCATION)} is set but {name(KEYSTORE_PASSWORD)} is not")
    data = _read_bytes(location, name(KEYSTORE_LOCATION))
    data = _java_keystore_as_pkcs12(data, location, password, name(KEYSTORE_LOCATION), name(KEYSTORE_PASSWORD))
    try:
        store = _load_pkcs12(data, password, location, name(KEYSTORE_LOCATION), name(KEYSTORE_PASSWORD))
    except ConfigError:
        if key_password is None or key_password == password:
            raise
        # A key with its own password (Java allows one): the store may open with that.
        store = _load_pkcs12(data, key_password, location, name(KEYSTORE_LOCATION), name(KEYSTORE_PASSWORD))
    if store.key is None or store.cert is None:
        raise ConfigError(
            f"The keystore {location} ({name(KEYSTORE_LOCATION)}) holds no private key with its certificate"
        )
    chain = (store.cert.certificate, *(c.certificate for c in store.additional_certs))
    return KeyMaterial(store.key, chain)


def load_truststore(settings: SslSettings) -> list[x509.Certificate] | None:
    """The trusted certificates the settings name, or None when they name no truststore."""
    store_type = (settings.path(TRUSTSTORE_TYPE) or DEFAULT_STORE_TYPE).upper()
    location = settings.path(TRUSTSTORE_LOCATION)
    password = settings.get(TRUSTSTORE_PASSWORD)
    inline = settings.get(TRUSTSTORE_CERTIFICATES)
    name = settings.name
    if inline is not None:
        if store_type != "PEM":
            raise ConfigError(
                f"{name(TRUSTSTORE_CERTIFICATES)} is set, so {name(TRUSTSTORE_TYPE)} must be PEM, not {store_type}"
            )
        if location is not None:
            raise ConfigError(
                f"Both {name(TRUSTSTORE_LOCATION)} and {name(TRUSTSTORE_CERTIFICATES)} are set: give one of them"
            )
        if password is not None:
            raise ConfigError(f"{name(TRUSTSTORE_PASSWORD)} cannot be given with a PEM truststore")
        return _pem_certificates(inline, name(TRUSTSTORE_CERTIFICATES))
    if location is None:
        if password is not None:
            raise ConfigError(f"{name(TRUSTSTORE_PASSWORD)} is set but {name(TRUSTSTORE_LOCATION)} is not")
        return None
    if store_type == "PEM":
        if password is not None:
            raise ConfigError(f"{name(TRUSTSTORE_PASSWORD)} cannot be given with a PEM truststore")
        return _pem_certificates(_read_text(location, name(TRUSTSTORE_LOCATION)), name(TRUSTSTORE_LOCATION))
    if store_type not in ("JKS", "JCEKS", "PKCS12"):
        raise ConfigError(f"{name(TRUSTSTORE_TYPE)}={store_type} is not supported: use PKCS12, PEM or JKS")
    data = _read_bytes(location, name(TRUSTSTORE_LOCATION))
    data = _java_keystore_as_pkcs12(data, location, password, name(TRUSTSTORE_LOCATION), name(TRUSTSTORE_PASSWORD))
    store = _load_pkcs12(data, password, location, name(TRUSTSTORE_LOCATION), name(TRUSTSTORE_PASSWORD))
    certificates = [c.certificate for c in store.additional_certs]
    if store.cert is not None:
        certificates.insert(0, store.cert.certificate)
    if not certificates:
        raise ConfigError(f"The truststore {location} ({name(TRUSTSTORE_LOCATION)}) holds no certificate")
    return certificates


def _read_bytes(path: str, key: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError as exc:
        raise ConfigError(f"{key}: cannot read {path}: {exc.strerror or exc}") from None


def _read_text(path: str, key: str) -> str:
    try:
        return _read_bytes(path, key).decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{key}: {path} is not a PEM file (it is not text)") from None


def _java_keystore_as_pkcs12(
    data: bytes, path: str, password: str | None, location_key: str, password_key: str
) -> bytes:
    """``data`` itself, unless it is a Java KeyStore (JKS, JCEKS): that one is rewritten as
    PKCS12, with the same password, by the JDK's ``keytool`` (only Java reads the format)."""
    kind = _JAVA_KEYSTORE_MAGIC.get(data[:4])
    if kind is None:
        return data
    keytool = _keytool()
    if keytool is None:
        target = os.path.splitext(path)[0] + ".p12"
        type_key = location_key.replace(".location", ".type")
        raise ConfigError(
            f"{location_key}: {path} is a Java {kind} keystore, which only Java's keytool reads, and there is no "
            f"keytool (JAVA_HOME or PATH). Convert it where there is one: keytool -importkeystore -srckeystore {path} "
            f"-destkeystore {target} -deststoretype PKCS12; then set {location_key}={target} and {type_key}=PKCS12"
        )
    if password is None:
        raise ConfigError(f"{location_key}: {path} is a Java {kind} keystore: set {password_key} to read it")
    with tempfile.TemporaryDirectory(prefix="sluice-tls-") as directory:
        target = os.path.join(directory, "store.p12")
        command = [
            keytool, "-importkeystore", "-noprompt",
            "-srckeystore", path, "-srcstoretype", kind, "-srcstorepass:env", "SLUICE_STORE_PASSWORD",
            "-destkeystore", target, "-deststoretype", "PKCS12", "-deststorepass:env", "SLUICE_STORE_PASSWORD",
        ]  # fmt: skip
        # The password goes through the environment, not the command line other users can see.
        env = {**os.environ, "SLUICE_STORE_PASSWORD": password}
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ConfigError(f"{location_key}: keytool could not read the {kind} keystore {path}: {exc}") from None
        if done.returncode != 0 or not os.path.exists(target):
            output = (done.stdout + done.stderr).strip()
            if "password was incorrect" in output:
                raise ConfigError(
                    f"{location_key}: cannot read the {kind} keystore {path}: wrong password ({password_key})"
                )
            errors = [line for line in output.splitlines() if "error" in line.lower()]
            reason = errors[-1] if errors else f"keytool exited with {done.returncode}"
            raise ConfigError(f"{location_key}: keytool could not read the {kind} keystore {path}: {reason}")
        with open(target, "rb") as converted:
            return converted.read()


def _keytool() -> str | None:
    """The JDK's keytool: in ``$JAVA_HOME/bin``, on PATH, or beside the ``java`` on PATH."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.access(os.path.join(java_home, "bin", "keytool"), os.X_OK):
        return os.path.join(java_home, "bin", "keytool")
    found = shutil.which("keytool")
    if found:
        return found
    java = shutil.which("java")
    if java:
        beside = os.path.join(os.path.dirname(os.path.realpath(java)), "keytool")
        if os.access(beside, os.X_OK):
            return beside
    return None


def _load_pkcs12(
    data: bytes, password: str | None, path: str, location_key: str, password_key: str
) -> pkcs12.PKCS12KeyAndCertificates:
    try:
        return pkcs12.load_pkcs12(data, password.encode() if password is not None else None)
    except ValueError:
        if password is None:
            reason = f"it needs a password: set {password_key}"
        else:
            reason = f"wrong password ({password_key}), or not a PKCS12 file"
        raise ConfigError(f"{location_key}: cannot read the PKCS12 store {path}: {reason}") from None


def _pem_blocks(text: str) -> list[tuple[str, str, bytes]]:
    """``(label, original block, DER bytes)`` of each PEM block. A body may have lost its line
    breaks (a value of a properties file), so they are not needed."""
    blocks = []
    for match in _PEM_BLOCK.finditer(text):
        label, body = match.group(1), match.group(2)
        if ":" in body:  # a legacy encrypted key's headers (Proc-Type, DEK-Info): kept as written
            blocks.append((label, match.group(0), b""))
            continue
        try:
            der = base64.b64decode("".join(body.split()), validate=True)
        except (binascii.Error, ValueError):
            der = b""
        blocks.append((label, match.group(0), der))
    return blocks


def _pem_certificates(text: str, key: str) -> list[x509.Certificate]:
    certificates = []
    for label, _block, der in _pem_blocks(text):
        if label != "CERTIFICATE":
            continue
        try:
            certificates.append(x509.load_der_x509_certificate(der))
        except ValueError:
            raise ConfigError(f"{key}: a CERTIFICATE block cannot be read") from None
    if not certificates:
        raise ConfigError(f"{key}: no PEM certificate (-----BEGIN CERTIFICATE-----) found")
    return certificates


def _pem_key_material(
    key_text: str, chain_text: str, key_password: str | None, settings: SslSettings, key: str
) -> KeyMaterial:
    keys = [(label, block, der) for label, block, der in _pem_blocks(key_text) if label.endswith("PRIVATE KEY")]
    if not keys:
        raise ConfigError(f"{key}: no PEM private key (-----BEGIN PRIVATE KEY-----) found")
    if len(keys) > 1:
        raise ConfigError(f"{key}: expected one private key, found {len(keys)}")
    label, block, der = keys[0]
    password_key = settings.name(KEY_PASSWORD)
    secret = key_password.encode() if key_password is not None else None
    try:
        try:
            private_key = _private_key(label, block, der, secret)
        except TypeError:
            if secret is None:
                raise ConfigError(f"{key}: the private key is encrypted: set {password_key}") from None
            private_key = _private_key(label, block, der, None)  # a password for a clear key: not needed
    except ValueError:
        if secret is not None:
            raise ConfigError(f"{key}: cannot decrypt the private key: wrong {password_key}?") from None
        raise ConfigError(f"{key}: the private key cannot be read") from None
    except UnsupportedAlgorithm as exc:
        raise ConfigError(f"{key}: the private key uses an unsupported algorithm: {exc}") from None
    return KeyMaterial(private_key, tuple(_pem_certificates(chain_text, key)))


def _private_key(label: str, block: str, der: bytes, password: bytes | None) -> Any:
    if der:
        return serialization.load_der_private_key(der, password)
    return serialization.load_pem_private_key(block.encode(), password)


# --------------------------------------------------------------------------- contexts


def server_context(settings: SslSettings) -> ssl.SSLContext:
    """The SSL context of an https listener."""
    keystore = load_keystore(settings)
    if keystore is None:
        raise ConfigError(
            f"An https listener needs a keystore: set {settings.name(KEYSTORE_LOCATION)} "
            f"(with {settings.name(KEYSTORE_PASSWORD)}), or {settings.name(KEYSTORE_TYPE)}=PEM with "
            f"{settings.name(KEYSTORE_KEY)} and {settings.name(KEYSTORE_CHAIN)}"
        )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _set_protocols(context, settings)
    _set_cipher_suites(context, settings)
    _load_key(context, keystore, settings)
    trusted = load_truststore(settings)  # read even when unused: a wrong one fails at start-up
    mode_text = (settings.get(CLIENT_AUTH) or "none").strip().lower()
    mode = _CLIENT_AUTH_MODES.get(mode_text)
    if mode is None:
        raise ConfigError(f"{settings.name(CLIENT_AUTH)}={mode_text} is not one of none, requested, required")
    if mode != ssl.CERT_NONE:
        context.verify_mode = mode
        # Jetty checks client certificates against the keystore when no truststore is given.
        _trust(context, trusted if trusted is not None else [keystore.chain[0]])
    context.set_alpn_protocols(["http/1.1"])
    return context


def client_context(settings: SslSettings) -> ssl.SSLContext:
    """The SSL context of requests to other workers' https listeners (Kafka's RestClient)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _set_protocols(context, settings)
    _set_cipher_suites(context, settings)
    keystore = load_keystore(settings)
    if keystore is not None and _serves_client_auth(keystore):
        _load_key(context, keystore, settings)
    trusted = load_truststore(settings)
    if trusted is None and keystore is not None:
        trusted = [keystore.chain[0]]  # Jetty: the keystore is the truststore when none is given
    if trusted is None:
        context.load_default_certs(ssl.Purpose.SERVER_AUTH)
    else:
        _trust(context, trusted)
    endpoint = settings.get(ENDPOINT_IDENTIFICATION)
    # Kafka's default is https (host name checked); an empty value turns the check off.
    context.check_hostname = endpoint is None or bool(endpoint.strip())
    return context


def own_listener_client_context(settings: SslSettings) -> ssl.SSLContext:
    """The SSL context of a worker's requests to its own https listener (the console calls
    back the listener a page came in by, at the local address it was reached at): the
    worker's own certificate and its truststore are trusted; the host name is not checked,
    since the address is the socket's, not the name in the certificate."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _set_protocols(context, settings)
    keystore = load_keystore(settings)
    trusted = list(load_truststore(settings) or [])
    if keystore is not None:
        if _serves_client_auth(keystore):
            _load_key(context, keystore, settings)
        trusted.insert(0, keystore.chain[0])
    context.check_hostname = False
    if trusted:
        _trust(context, trusted)
    else:
        context.load_default_certs(ssl.Purpose.SERVER_AUTH)
    return context


def _serves_client_auth(keystore: KeyMaterial) -> bool:
    """Whether the keystore's certificate may be a client certificate. One limited to server
    authentication is not presented: a server that asks for a certificate refuses it, when
    it would let a client without one in (``ssl.client.auth=requested``)."""
    try:
        usages = keystore.chain[0].extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return True
    return ExtendedKeyUsageOID.CLIENT_AUTH in usages or ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE in usages


def _trust(context: ssl.SSLContext, certificates: list[x509.Certificate]) -> None:
    pem = "".join(c.public_bytes(serialization.Encoding.PEM).decode("ascii") for c in certificates)
    context.load_verify_locations(cadata=pem)
    # Java trusts every certificate of a truststore as an anchor, not only self-signed roots.
    context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN


def _load_key(context: ssl.SSLContext, keystore: KeyMaterial, settings: SslSettings) -> None:
    """Python's ssl module loads keys from files only: the key goes to a private temporary
    file, encrypted with a one-off password, for as long as loading takes."""
    one_off = secrets.token_hex(16)
    pem = keystore.key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(one_off.encode()),
    ) + b"".join(c.public_bytes(serialization.Encoding.PEM) for c in keystore.chain)
    descriptor, path = tempfile.mkstemp(prefix="sluice-tls-", suffix=".pem")
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(pem)
        context.load_cert_chain(path, password=one_off)
    except ssl.SSLError as exc:
        where = settings.name(KEYSTORE_LOCATION) if settings.path(KEYSTORE_LOCATION) else settings.name(KEYSTORE_KEY)
        raise ConfigError(f"{where}: the private key does not go with its certificate ({exc.reason})") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _set_protocols(context: ssl.SSLContext, settings: SslSettings) -> None:
    """``ssl.enabled.protocols`` within what ``ssl.protocol`` speaks; Python sets a range, from
    the lowest enabled version to the highest."""
    protocol = (settings.get(PROTOCOL) or DEFAULT_PROTOCOL).strip()
    ceiling = _PROTOCOL_CEILINGS.get(protocol.upper())
    if ceiling is None:
        raise ConfigError(f"{settings.name(PROTOCOL)}={protocol} is not a TLS protocol (TLSv1.2, TLSv1.3, TLS)")
    enabled_text = settings.get(ENABLED_PROTOCOLS)
    names = _list(enabled_text) if enabled_text is not None else list(DEFAULT_ENABLED_PROTOCOLS)
    versions = []
    for item in names:
        upper = item.upper()
        if upper in _OBSOLETE_PROTOCOLS:
            log.warning("%s: %s is not supported and is left out", settings.name(ENABLED_PROTOCOLS), item)
        elif upper in _TLS_VERSIONS:
            versions.append(_TLS_VERSIONS[upper])
        else:
            raise ConfigError(f"{settings.name(ENABLED_PROTOCOLS)}: {item} is not a TLS protocol (TLSv1.2, TLSv1.3)")
    allowed = [v for v in versions if v <= ceiling]
    if not allowed:
        raise ConfigError(
            f"No protocol of {settings.name(ENABLED_PROTOCOLS)}={','.join(names)} is spoken by "
            f"{settings.name(PROTOCOL)}={protocol}"
        )
    context.minimum_version = min(allowed)
    context.maximum_version = max(allowed)


def _set_cipher_suites(context: ssl.SSLContext, settings: SslSettings) -> None:
    """``ssl.cipher.suites`` in Java's (IANA) names or OpenSSL's; TLS 1.3 suites are left to
    OpenSSL, which Python cannot restrict."""
    suites = _list(settings.get(CIPHER_SUITES) or "")
    names = [_openssl_cipher_name(s) for s in suites if s.upper() not in _TLS13_SUITES]
    if not names:
        return
    requested = [s for s in suites if s.upper() not in _TLS13_SUITES]
    try:
        context.set_ciphers(":".join(names))
    except ssl.SSLError:
        unknown = requested  # OpenSSL knows none of them
    else:
        # OpenSSL skips the names it does not know as long as one is known.
        active = {cipher["name"] for cipher in context.get_ciphers()}
        unknown = [suite for suite, name in zip(requested, names, strict=True) if name not in active]
    if unknown:
        raise ConfigError(f"{settings.name(CIPHER_SUITES)}: {', '.join(unknown)} not available here")


def _openssl_cipher_name(suite: str) -> str:
    """``TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`` → ``ECDHE-RSA-AES128-GCM-SHA256``; an OpenSSL
    name is returned as it is."""
    match = re.fullmatch(r"TLS_(\w+?)_WITH_(AES_(128|256)_(GCM|CBC)|CHACHA20_POLY1305)_(SHA\d*)", suite.upper())
    if not match:
        return suite
    exchange = "" if match.group(1) == "RSA" else match.group(1).replace("_", "-") + "-"
    if match.group(2) == "CHACHA20_POLY1305":
        return f"{exchange}CHACHA20-POLY1305"
    cipher = f"AES{match.group(3)}" + ("-GCM" if match.group(4) == "GCM" else "")
    return f"{exchange}{cipher}-{match.group(5)}"


def _list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


# --------------------------------------------------------------------------- a worker's TLS


class WorkerTls:
    """The SSL contexts of one worker, from its properties, each built once on first use
    (Kafka reads the REST TLS settings only when an https listener or URL needs them)."""

    def __init__(self, worker_props: Mapping[str, str]) -> None:
        self._props = {str(k): str(v) for k, v in worker_props.items()}
        self._contexts: dict[str, ssl.SSLContext] = {}

    @property
    def listener_settings(self) -> SslSettings:
        return ssl_settings(self._props, LISTENERS_HTTPS_PREFIX)

    @property
    def admin_listener_settings(self) -> SslSettings:
        return ssl_settings(self._props, ADMIN_LISTENERS_HTTPS_PREFIX)

    def listener_context(self) -> ssl.SSLContext:
        """Of the https listeners of ``listeners``."""
        return self._cached("listener", lambda: server_context(self.listener_settings))

    def admin_listener_context(self) -> ssl.SSLContext:
        """Of the https listeners of ``admin.listeners``."""
        return self._cached("admin", lambda: server_context(self.admin_listener_settings))

    def client_context(self) -> ssl.SSLContext:
        """Of requests to other workers (forwarding)."""
        return self._cached("client", lambda: client_context(self.listener_settings))

    def own_listener_client_context(self) -> ssl.SSLContext:
        """Of the worker's requests to its own https listeners (the console)."""
        return self._cached("own", lambda: own_listener_client_context(self.listener_settings))

    def _cached(self, which: str, build: Callable[[], ssl.SSLContext]) -> ssl.SSLContext:
        context = self._contexts.get(which)
        if context is None:
            context = self._contexts[which] = build()
        return context
