"""Java key stores and trust stores, read from Kafka's ``ssl.*`` settings as Kafka's
``DefaultSslEngineFactory`` reads them.

- ``ssl.keystore.type`` PKCS12 (``ssl.keystore.location``, ``ssl.keystore.password``, and
  ``ssl.key.password`` when the key has its own) or PEM (``ssl.keystore.location`` naming a
  file of a private key and its certificate chain, or the key and chain inline in
  ``ssl.keystore.key`` and ``ssl.keystore.certificate.chain``; ``ssl.key.password`` when the
  key is encrypted).
- ``ssl.truststore.type`` PKCS12 (``ssl.truststore.location``, ``ssl.truststore.password``)
  or PEM (a file of certificates, or ``ssl.truststore.certificates`` inline).

A store is read by its content, as Java 9 and later do: the default type, JKS, reads a
PKCS12 file, and a Java KeyStore (JKS, JCEKS) is rewritten as PKCS12 by the JDK's
``keytool`` (refused, with the command that converts it, without one). Kafka's rules on
which keys go together are kept; beyond them, a PEM keystore file may hold a clear key
without ``ssl.key.password`` (Kafka asks for an encrypted one).

Settings are the ``ssl.*`` keys without any prefix; errors are :class:`StoreError`, naming
the key at fault, never showing a password or a key.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import re
import secrets
import shutil
import ssl
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar, cast

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.serialization import pkcs12

__all__ = [
    "DEFAULT_STORE_TYPE",
    "KEYSTORE_CHAIN",
    "KEYSTORE_KEY",
    "KEYSTORE_LOCATION",
    "KEYSTORE_PASSWORD",
    "KEYSTORE_TYPE",
    "KEY_PASSWORD",
    "TRUSTSTORE_CERTIFICATES",
    "TRUSTSTORE_LOCATION",
    "TRUSTSTORE_PASSWORD",
    "TRUSTSTORE_TYPE",
    "KeyMaterial",
    "StoreError",
    "StoreSettings",
    "certificates_pem",
    "find_keytool",
    "read_keystore",
    "read_truststore",
]

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

DEFAULT_STORE_TYPE = "JKS"  # Kafka's default (SslConfigs)
_BINARY_TYPES = ("JKS", "JCEKS", "PKCS12")
_JAVA_KEYSTORE_MAGIC = {b"\xfe\xed\xfe\xed": "JKS", b"\xce\xce\xce\xce": "JCEKS"}
_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.DOTALL)
# Environment variables that hand keytool its passwords: a command line is visible to other users.
_SOURCE_PASSWORD_ENV = "SLUICE_STORE_PASSWORD"
_KEY_PASSWORD_ENV = "SLUICE_KEY_PASSWORD"
_TARGET_PASSWORD_ENV = "SLUICE_TARGET_PASSWORD"
_KEYTOOL_TIMEOUT_S = 60


class StoreError(ValueError):
    """A store cannot be read as the settings describe it. ``key`` is the ``ssl.*`` key at
    fault, without prefix; the message names keys as the user wrote them (with the prefix
    given to :func:`read_keystore` or :func:`read_truststore`)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class KeyMaterial:
    """A private key and its certificate chain (the key's own certificate first)."""

    key: PrivateKeyTypes
    chain: tuple[x509.Certificate, ...]

    def key_pem(self) -> str:
        """The private key as unencrypted PKCS#8 PEM."""
        pem = self.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return pem.decode("ascii")

    def chain_pem(self) -> str:
        return certificates_pem(self.chain)

    @classmethod
    def from_pem(cls, key_pem: str, chain_pem: str) -> KeyMaterial:
        """An unencrypted PEM key and its PEM certificate chain (as :meth:`key_pem` and
        :meth:`chain_pem` give them)."""
        key = serialization.load_pem_private_key(key_pem.encode("ascii"), None)
        return cls(key, tuple(x509.load_pem_x509_certificates(chain_pem.encode("ascii"))))

    def load_into(self, context: ssl.SSLContext) -> None:
        """Present this key and chain from ``context``. Python's ssl module loads keys from
        files only: the key goes to a private temporary file, encrypted with a one-off
        password, for as long as loading takes. Raises :class:`ssl.SSLError` when the key
        does not go with the certificate."""
        one_off = secrets.token_hex(16)
        pem = self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(one_off.encode()),
        ) + self.chain_pem().encode("ascii")
        descriptor, path = tempfile.mkstemp(prefix="sluice-tls-", suffix=".pem")
        try:
            with os.fdopen(descriptor, "wb") as file:
                file.write(pem)
            context.load_cert_chain(path, password=one_off)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)


def certificates_pem(certificates: Iterable[x509.Certificate]) -> str:
    """Certificates as PEM text, one block after the other."""
    return "".join(c.public_bytes(serialization.Encoding.PEM).decode("ascii") for c in certificates)


@dataclass(frozen=True)
class StoreSettings:
    """Unprefixed ``ssl.*`` settings, and the ``prefix`` they were written under
    (``listeners.https.``, ``admin.listeners.https.``, ``""``), so that messages name a key
    as the user wrote it."""

    prefix: str
    values: Mapping[str, str]

    def name(self, key: str) -> str:
        """The property as written in the user's configuration."""
        return self.prefix + key

    def get(self, key: str) -> str | None:
        """A password or inline PEM: set even when blank, as Kafka's Password is."""
        return self.values.get(key)

    def path(self, key: str) -> str | None:
        """A location or type: unset when missing or blank."""
        value = self.values.get(key)
        return value.strip() if value is not None and value.strip() else None


# --------------------------------------------------------------------------- reading once

_KEYSTORE_KEYS = (KEYSTORE_TYPE, KEYSTORE_LOCATION, KEYSTORE_PASSWORD, KEY_PASSWORD, KEYSTORE_KEY, KEYSTORE_CHAIN)
_TRUSTSTORE_KEYS = (TRUSTSTORE_TYPE, TRUSTSTORE_LOCATION, TRUSTSTORE_PASSWORD, TRUSTSTORE_CERTIFICATES)
_Read = TypeVar("_Read")


class _ReadStores:
    """What stores held, by the settings that name them and their file's stamp (inode, size,
    modification time). The same stores serve several clients and contexts (a task's
    producer, dead letter queue, consumer and admin; a worker's https listener and its
    requests to other workers), and a Java KeyStore costs a keytool run each time it is
    read. A replaced or changed file is read again; a store that cannot be read is not
    remembered, so the next reader gets the same error."""

    LIMIT = 32

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._read: dict[tuple[object, ...], object] = {}

    def get(self, s: StoreSettings, keys: tuple[str, ...], location_key: str, read: Callable[[], _Read]) -> _Read:
        key = (location_key, tuple(s.get(k) for k in keys), _file_stamp(s.path(location_key)))
        with self._lock:
            if key in self._read:
                return cast(_Read, self._read[key])
        value = read()
        with self._lock:
            if len(self._read) >= self.LIMIT:
                self._read.clear()
            self._read[key] = value
        return value


def _file_stamp(path: str | None) -> tuple[int, int, int] | None:
    if path is None:
        return None
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


_READ_STORES = _ReadStores()


# --------------------------------------------------------------------------- keystores


def read_keystore(settings: Mapping[str, str], prefix: str = "") -> KeyMaterial | None:
    """The keystore ``settings`` name, or None when they name none. ``prefix`` is how the
    user's keys begin (``listeners.https.``), for the messages of :class:`StoreError`.
    Read once for the same settings while its file is unchanged (see :class:`_ReadStores`)."""
    s = StoreSettings(prefix, settings)
    return _READ_STORES.get(s, _KEYSTORE_KEYS, KEYSTORE_LOCATION, lambda: _read_keystore(s))


def _read_keystore(s: StoreSettings) -> KeyMaterial | None:
    store_type = (s.path(KEYSTORE_TYPE) or DEFAULT_STORE_TYPE).upper()
    location = s.path(KEYSTORE_LOCATION)
    password = s.get(KEYSTORE_PASSWORD)
    key_password = s.get(KEY_PASSWORD)
    inline_key = s.get(KEYSTORE_KEY)
    inline_chain = s.get(KEYSTORE_CHAIN)
    name = s.name
    # The combinations Kafka's DefaultSslEngineFactory accepts, with its reasons.
    if inline_key is not None:
        if store_type != "PEM":
            raise StoreError(
                KEYSTORE_TYPE, f"{name(KEYSTORE_KEY)} is set, so {name(KEYSTORE_TYPE)} must be PEM, not {store_type}"
            )
        if inline_chain is None:
            raise StoreError(
                KEYSTORE_CHAIN, f"{name(KEYSTORE_KEY)} is set but {name(KEYSTORE_CHAIN)} is not: give its certificates"
            )
        if location is not None:
            raise _location_and_inline(s, KEYSTORE_LOCATION, KEYSTORE_KEY)
        if password is not None:
            raise _pem_keystore_password(s)
        key = _pem_private_key(inline_key, key_password, s, KEYSTORE_KEY)
        return KeyMaterial(key, tuple(_pem_certificates(inline_chain, s, KEYSTORE_CHAIN)))
    if inline_chain is not None:
        raise StoreError(
            KEYSTORE_KEY, f"{name(KEYSTORE_CHAIN)} is set but {name(KEYSTORE_KEY)} is not: give the private key too"
        )
    if location is None:
        if password is not None:
            raise _password_without_location(s, KEYSTORE_PASSWORD, KEYSTORE_LOCATION)
        return None
    if store_type == "PEM":
        if password is not None:
            raise _pem_keystore_password(s)
        text = _read_text(location, s, KEYSTORE_LOCATION)
        key = _pem_private_key(text, key_password, s, KEYSTORE_LOCATION)
        return KeyMaterial(key, tuple(_pem_certificates(text, s, KEYSTORE_LOCATION)))
    _check_binary_type(store_type, s, KEYSTORE_TYPE)
    if password is None:
        raise StoreError(KEYSTORE_PASSWORD, f"{name(KEYSTORE_LOCATION)} is set but {name(KEYSTORE_PASSWORD)} is not")
    data = _read_bytes(location, s, KEYSTORE_LOCATION)
    converted = _java_keystore_as_pkcs12(data, location, password, key_password, s, KEYSTORE_LOCATION)
    if converted is not None:
        store = _load_pkcs12(*converted, location, s, KEYSTORE_LOCATION, KEYSTORE_PASSWORD)
    else:
        try:
            store = _load_pkcs12(data, password, location, s, KEYSTORE_LOCATION, KEYSTORE_PASSWORD)
        except StoreError:
            if key_password is None or key_password == password:
                raise
            # A key with its own password (Java allows one): the store may open with that.
            store = _load_pkcs12(data, key_password, location, s, KEYSTORE_LOCATION, KEYSTORE_PASSWORD)
    if store.key is None or store.cert is None:
        raise StoreError(
            KEYSTORE_LOCATION,
            f"The keystore {location} ({name(KEYSTORE_LOCATION)}) holds no private key with its certificate",
        )
    chain = (store.cert.certificate, *(c.certificate for c in store.additional_certs))
    return KeyMaterial(store.key, chain)


def _pem_keystore_password(s: StoreSettings) -> StoreError:
    return StoreError(
        KEYSTORE_PASSWORD,
        f"{s.name(KEYSTORE_PASSWORD)} cannot be given with a PEM keystore, only {s.name(KEY_PASSWORD)} may be",
    )


def _location_and_inline(s: StoreSettings, location_key: str, inline_key: str) -> StoreError:
    return StoreError(location_key, f"Both {s.name(location_key)} and {s.name(inline_key)} are set: give one of them")


def _password_without_location(s: StoreSettings, password_key: str, location_key: str) -> StoreError:
    return StoreError(location_key, f"{s.name(password_key)} is set but {s.name(location_key)} is not")


# --------------------------------------------------------------------------- truststores


def read_truststore(settings: Mapping[str, str], prefix: str = "") -> list[x509.Certificate] | None:
    """The trusted certificates ``settings`` name, or None when they name no truststore.
    Each certificate of a PKCS12 store is trusted, a key entry's own included, as Java's
    trust managers do. Read once for the same settings while its file is unchanged."""
    s = StoreSettings(prefix, settings)
    certificates = _READ_STORES.get(s, _TRUSTSTORE_KEYS, TRUSTSTORE_LOCATION, lambda: _read_truststore(s))
    return list(certificates) if certificates is not None else None


def _read_truststore(s: StoreSettings) -> tuple[x509.Certificate, ...] | None:
    store_type = (s.path(TRUSTSTORE_TYPE) or DEFAULT_STORE_TYPE).upper()
    location = s.path(TRUSTSTORE_LOCATION)
    password = s.get(TRUSTSTORE_PASSWORD)
    inline = s.get(TRUSTSTORE_CERTIFICATES)
    name = s.name
    if inline is not None:
        if store_type != "PEM":
            raise StoreError(
                TRUSTSTORE_TYPE,
                f"{name(TRUSTSTORE_CERTIFICATES)} is set, so {name(TRUSTSTORE_TYPE)} must be PEM, not {store_type}",
            )
        if location is not None:
            raise _location_and_inline(s, TRUSTSTORE_LOCATION, TRUSTSTORE_CERTIFICATES)
        if password is not None:
            raise _pem_truststore_password(s)
        return tuple(_pem_certificates(inline, s, TRUSTSTORE_CERTIFICATES))
    if location is None:
        if password is not None:
            raise _password_without_location(s, TRUSTSTORE_PASSWORD, TRUSTSTORE_LOCATION)
        return None
    if store_type == "PEM":
        if password is not None:
            raise _pem_truststore_password(s)
        return tuple(_pem_certificates(_read_text(location, s, TRUSTSTORE_LOCATION), s, TRUSTSTORE_LOCATION))
    _check_binary_type(store_type, s, TRUSTSTORE_TYPE)
    data = _read_bytes(location, s, TRUSTSTORE_LOCATION)
    converted = _java_keystore_as_pkcs12(data, location, password, None, s, TRUSTSTORE_LOCATION)
    data, password = converted if converted is not None else (data, password)
    store = _load_pkcs12(data, password, location, s, TRUSTSTORE_LOCATION, TRUSTSTORE_PASSWORD)
    certificates = [c.certificate for c in store.additional_certs]
    if store.cert is not None:
        certificates.insert(0, store.cert.certificate)
    if not certificates:
        raise StoreError(
            TRUSTSTORE_LOCATION, f"The truststore {location} ({name(TRUSTSTORE_LOCATION)}) holds no certificate"
        )
    return tuple(certificates)


def _pem_truststore_password(s: StoreSettings) -> StoreError:
    return StoreError(TRUSTSTORE_PASSWORD, f"{s.name(TRUSTSTORE_PASSWORD)} cannot be given with a PEM truststore")


# --------------------------------------------------------------------------- files


def _check_binary_type(store_type: str, s: StoreSettings, type_key: str) -> None:
    if store_type not in _BINARY_TYPES:
        raise StoreError(type_key, f"{s.name(type_key)}={store_type} is not supported: use PKCS12, PEM or JKS")


def _read_bytes(path: str, s: StoreSettings, location_key: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError as exc:
        raise StoreError(location_key, f"{s.name(location_key)}: cannot read {path}: {exc.strerror or exc}") from None


def _read_text(path: str, s: StoreSettings, location_key: str) -> str:
    try:
        return _read_bytes(path, s, location_key).decode("utf-8")
    except UnicodeDecodeError:
        raise StoreError(location_key, f"{s.name(location_key)}: {path} is not a PEM file (it is not text)") from None


def _load_pkcs12(
    data: bytes, password: str | None, path: str, s: StoreSettings, location_key: str, password_key: str
) -> pkcs12.PKCS12KeyAndCertificates:
    try:
        return pkcs12.load_pkcs12(data, password.encode() if password is not None else None)
    except ValueError:
        if password is None:
            reason = f"it needs a password: set {s.name(password_key)}"
        else:
            reason = f"wrong password ({s.name(password_key)}), or not a PKCS12 file"
        raise StoreError(
            password_key, f"{s.name(location_key)}: cannot read the PKCS12 store {path}: {reason}"
        ) from None


# --------------------------------------------------------------------------- Java KeyStores


def find_keytool() -> str | None:
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


def _java_keystore_as_pkcs12(
    data: bytes, path: str, password: str | None, key_password: str | None, s: StoreSettings, location_key: str
) -> tuple[bytes, str] | None:
    """None unless ``data`` is a Java KeyStore (JKS, JCEKS); then the store rewritten as PKCS12
    by the JDK's ``keytool`` (only Java reads the format), and the password that opens it.

    ``key_password`` is the keys' own password (a keystore's ``ssl.key.password``), as
    Kafka's key manager takes it; the store password protects them when it is None."""
    kind = _JAVA_KEYSTORE_MAGIC.get(data[:4])
    if kind is None:
        return None
    password_key = location_key.replace(".location", ".password")
    keytool = find_keytool()
    if keytool is None:
        target = os.path.splitext(path)[0] + ".p12"
        type_key = location_key.replace(".location", ".type")
        raise StoreError(
            location_key,
            f"{s.name(location_key)}: {path} is a Java {kind} keystore, which only Java's keytool reads, and there is "
            f"no keytool (JAVA_HOME or PATH). Convert it where there is one: keytool -importkeystore -srckeystore "
            f"{path} -destkeystore {target} -deststoretype PKCS12; then set {s.name(location_key)}={target} and "
            f"{s.name(type_key)}=PKCS12",
        )
    if password is None:
        raise StoreError(
            password_key,
            f"{s.name(location_key)}: {path} is a Java {kind} keystore: set {s.name(password_key)} to read it",
        )
    keytool_run = _Keytool(keytool, kind, path, s, location_key, password_key)
    # The PKCS12 copy gets a password of its own: keytool refuses new stores with short ones.
    target_password = secrets.token_hex(16)
    env = {
        **os.environ,
        _SOURCE_PASSWORD_ENV: password,
        _KEY_PASSWORD_ENV: key_password or "",
        _TARGET_PASSWORD_ENV: target_password,
    }
    with tempfile.TemporaryDirectory(prefix="sluice-keystore-") as directory:
        target = os.path.join(directory, "store.p12")
        command = [
            "-importkeystore", "-noprompt",
            "-srckeystore", path, "-srcstoretype", kind, "-srcstorepass:env", _SOURCE_PASSWORD_ENV,
            "-destkeystore", target, "-deststoretype", "PKCS12", "-deststorepass:env", _TARGET_PASSWORD_ENV,
        ]  # fmt: skip
        if key_password is None or key_password == password:
            keytool_run(command, env)
        else:
            # keytool takes a key's own password for one named entry only, so each key is
            # copied by itself (a keystore's certificate entries are not needed).
            for alias in keytool_run.key_aliases(env):
                keytool_run(
                    [*command, "-srcalias", alias, "-srckeypass:env", _KEY_PASSWORD_ENV,
                     "-destkeypass:env", _TARGET_PASSWORD_ENV],
                    env,
                )  # fmt: skip
        if not os.path.exists(target):
            raise StoreError(
                location_key, f"The keystore {path} ({s.name(location_key)}) holds no private key with its certificate"
            )
        with open(target, "rb") as converted:
            return converted.read(), target_password


class _Keytool:
    """Runs keytool on one Java KeyStore, its failures turned into :class:`StoreError`."""

    def __init__(
        self, keytool: str, kind: str, path: str, s: StoreSettings, location_key: str, password_key: str
    ) -> None:
        self.keytool = keytool
        self.kind = kind
        self.path = path
        self.s = s
        self.location_key = location_key
        self.password_key = password_key

    def __call__(self, arguments: list[str], env: Mapping[str, str]) -> str:
        """keytool's output. English messages, so that failures can be told apart; no input,
        so that a prompt (a key's password) fails instead of waiting."""
        command = [self.keytool, "-J-Duser.language=en", "-J-Duser.country=US", *arguments]
        where = f"{self.s.name(self.location_key)}: "
        try:
            done = subprocess.run(
                command,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=_KEYTOOL_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise StoreError(
                self.location_key, f"{where}keytool could not read the {self.kind} keystore {self.path}: {exc}"
            ) from None
        output = (done.stdout + done.stderr).strip()
        if done.returncode == 0:
            return output
        cannot_read = f"{where}cannot read the {self.kind} keystore {self.path}"
        if "password was incorrect" in output:
            raise StoreError(self.password_key, f"{cannot_read}: wrong password ({self.s.name(self.password_key)})")
        if "Cannot recover key" in output:
            raise StoreError(KEY_PASSWORD, f"{cannot_read}: wrong key password ({self.s.name(KEY_PASSWORD)})")
        if "Too many failures" in output:  # keytool asked for a key's password
            if self.location_key == KEYSTORE_LOCATION:
                raise StoreError(
                    KEY_PASSWORD, f"{cannot_read}: its key has a password of its own: set {self.s.name(KEY_PASSWORD)}"
                )
            raise StoreError(self.location_key, f"{cannot_read}: a key in it has a password of its own")
        errors = [line for line in output.splitlines() if "error" in line.lower()]
        reason = errors[0].removeprefix("keytool error: ") if errors else f"keytool exited with {done.returncode}"
        raise StoreError(
            self.location_key, f"{where}keytool could not read the {self.kind} keystore {self.path}: {reason}"
        )

    def key_aliases(self, env: Mapping[str, str]) -> list[str]:
        """The aliases of the store's private key entries."""
        listing = self(
            ["-list", "-v", "-keystore", self.path, "-storetype", self.kind, "-storepass:env", _SOURCE_PASSWORD_ENV],
            env,
        )
        aliases, alias = [], None
        for line in listing.splitlines():
            if line.startswith("Alias name: "):
                alias = line.removeprefix("Alias name: ")
            elif line.startswith("Entry type: ") and alias is not None:
                if line.removeprefix("Entry type: ").strip() == "PrivateKeyEntry":
                    aliases.append(alias)
                alias = None
        return aliases


# --------------------------------------------------------------------------- PEM


def _pem_blocks(text: str) -> list[tuple[str, str, bytes]]:
    """``(label, original block, DER bytes)`` of each PEM block. A body may have lost its line
    breaks (a value of a properties file), so they are not needed, as in Kafka's PemParser."""
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


def _pem_certificates(text: str, s: StoreSettings, key: str) -> list[x509.Certificate]:
    certificates = []
    for label, _block, der in _pem_blocks(text):
        if label != "CERTIFICATE":
            continue
        try:
            certificates.append(x509.load_der_x509_certificate(der))
        except ValueError:
            raise StoreError(key, f"{s.name(key)}: a CERTIFICATE block cannot be read") from None
    if not certificates:
        raise StoreError(key, f"{s.name(key)}: no PEM certificate (-----BEGIN CERTIFICATE-----) found")
    return certificates


def _pem_private_key(text: str, key_password: str | None, s: StoreSettings, key: str) -> PrivateKeyTypes:
    """The one private key of ``text`` (the value or file of ``key``)."""
    keys = [(label, block, der) for label, block, der in _pem_blocks(text) if label.endswith("PRIVATE KEY")]
    where = s.name(key)
    if not keys:
        raise StoreError(key, f"{where}: no PEM private key (-----BEGIN PRIVATE KEY-----) found")
    if len(keys) > 1:
        raise StoreError(key, f"{where}: expected one private key, found {len(keys)}")
    _label, block, der = keys[0]
    secret = key_password.encode() if key_password is not None else None
    try:
        return _private_key(block, der, secret, s, key)
    except TypeError:
        if secret is None:
            raise StoreError(
                KEY_PASSWORD, f"{where}: the private key is encrypted: set {s.name(KEY_PASSWORD)}"
            ) from None
    return _private_key(block, der, None, s, key)  # a password for a clear key: not needed


def _private_key(block: str, der: bytes, password: bytes | None, s: StoreSettings, key: str) -> PrivateKeyTypes:
    """The key of a PEM block; a TypeError when ``password`` is given for a clear key or
    missing for an encrypted one."""
    where = s.name(key)
    try:
        if der:
            return serialization.load_der_private_key(der, password)
        return serialization.load_pem_private_key(block.encode(), password)
    except ValueError:
        if password is not None:
            raise StoreError(
                KEY_PASSWORD, f"{where}: cannot decrypt the private key: wrong {s.name(KEY_PASSWORD)}?"
            ) from None
        raise StoreError(key, f"{where}: the private key cannot be read") from None
    except UnsupportedAlgorithm as exc:
        raise StoreError(key, f"{where}: the private key uses an unsupported algorithm: {exc}") from None
