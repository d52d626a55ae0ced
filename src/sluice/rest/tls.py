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

Stores are read by :mod:`sluice.tls.keystores`, as Kafka reads them: ``ssl.keystore.*``
(PKCS12, PEM, or a Java KeyStore through the JDK's ``keytool``) and ``ssl.truststore.*``.
Without a truststore the keystore's own certificate is trusted, as Jetty uses the keystore
as truststore; with neither, the system's certificate authorities.

Each certificate of a truststore is trusted as it is, an intermediate or a server's own
certificate included, as Java's trust managers do. A keystore whose certificate is for
server authentication only is not presented as a client certificate (a server asking for
one would refuse it).
"""

from __future__ import annotations

import logging
import re
import ssl
from collections.abc import Callable, Mapping

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from sluice.api.errors import ConfigError
from sluice.tls.keystores import (
    KEYSTORE_CHAIN,
    KEYSTORE_KEY,
    KEYSTORE_LOCATION,
    KEYSTORE_PASSWORD,
    KEYSTORE_TYPE,
    KeyMaterial,
    StoreError,
    StoreSettings,
    certificates_pem,
    read_keystore,
    read_truststore,
)

__all__ = [
    "ADMIN_LISTENERS_HTTPS_PREFIX",
    "LISTENERS_HTTPS_PREFIX",
    "KeyMaterial",
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

CLIENT_AUTH = "ssl.client.auth"
PROTOCOL = "ssl.protocol"
ENABLED_PROTOCOLS = "ssl.enabled.protocols"
CIPHER_SUITES = "ssl.cipher.suites"
ENDPOINT_IDENTIFICATION = "ssl.endpoint.identification.algorithm"

# Kafka's defaults (SslConfigs, BrokerSecurityConfigs).
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


# --------------------------------------------------------------------------- which keys


def ssl_settings(worker_props: Mapping[str, str], prefix: str) -> StoreSettings:
    """The settings under ``prefix`` when any key starts with it, else the top-level ``ssl.*``
    ones (Kafka's all-or-nothing rule)."""
    prefixed = {k[len(prefix) :]: str(v) for k, v in worker_props.items() if k.startswith(prefix)}
    if prefixed:
        return StoreSettings(prefix, prefixed)
    return StoreSettings("", {k: str(v) for k, v in worker_props.items() if k.startswith("ssl.")})


# --------------------------------------------------------------------------- stores


def load_keystore(settings: StoreSettings) -> KeyMaterial | None:
    """The keystore the settings name, or None when they name none. Raises
    :class:`ConfigError` naming the key at fault."""
    try:
        return read_keystore(settings.values, settings.prefix)
    except StoreError as error:
        raise ConfigError(str(error)) from None


def load_truststore(settings: StoreSettings) -> list[x509.Certificate] | None:
    """The trusted certificates the settings name, or None when they name no truststore."""
    try:
        return read_truststore(settings.values, settings.prefix)
    except StoreError as error:
        raise ConfigError(str(error)) from None


# --------------------------------------------------------------------------- contexts


def server_context(settings: StoreSettings) -> ssl.SSLContext:
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


def client_context(settings: StoreSettings) -> ssl.SSLContext:
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


def own_listener_client_context(settings: StoreSettings) -> ssl.SSLContext:
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
    context.load_verify_locations(cadata=certificates_pem(certificates))
    # Java trusts every certificate of a truststore as an anchor, not only self-signed roots.
    context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN


def _load_key(context: ssl.SSLContext, keystore: KeyMaterial, settings: StoreSettings) -> None:
    try:
        keystore.load_into(context)
    except ssl.SSLError as exc:
        where = settings.name(KEYSTORE_LOCATION) if settings.path(KEYSTORE_LOCATION) else settings.name(KEYSTORE_KEY)
        raise ConfigError(f"{where}: the private key does not go with its certificate ({exc.reason})") from None


def _set_protocols(context: ssl.SSLContext, settings: StoreSettings) -> None:
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


def _set_cipher_suites(context: ssl.SSLContext, settings: StoreSettings) -> None:
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
    def listener_settings(self) -> StoreSettings:
        return ssl_settings(self._props, LISTENERS_HTTPS_PREFIX)

    @property
    def admin_listener_settings(self) -> StoreSettings:
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
