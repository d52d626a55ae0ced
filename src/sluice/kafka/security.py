"""Kafka client security settings given the Java way, for the clients Sluice runs in Python.

Kafka Connect users write ``security.protocol``, ``ssl.truststore.*``, ``ssl.keystore.*``,
``sasl.mechanism`` and ``sasl.jaas.config`` for the Java client, at the top of the worker
config (the worker's own clients), under ``producer.``/``consumer.``/``admin.`` and in
``*.override.`` connector settings. Sluice's clients are librdkafka (the data path and the
internal topics) and kafka-python (the worker group member); neither reads Java key stores
or JAAS. :class:`ClientSecurity` reads those settings once, on the worker, and hands each
client what it understands:

- trusted certificates, client certificate and key as PEM text (``ssl.ca.pem``,
  ``ssl.certificate.pem``, ``ssl.key.pem`` for librdkafka; an ``ssl.SSLContext`` for
  kafka-python). PEM text travels inside a task's settings to any Spark executor, where a
  key store path of the worker's disk would not exist;
- the user name and password of a ``PlainLoginModule``/``ScramLoginModule`` JAAS entry.

Stores are read by :mod:`sluice.tls.keystores`, as Kafka reads them: PKCS12 and PEM (files
or the inline ``ssl.keystore.key``, ``ssl.keystore.certificate.chain``,
``ssl.truststore.certificates``); JKS through the JDK's ``keytool`` (a Java key store needs
Java to read). What has no Python equivalent — Kerberos (GSSAPI), OAUTHBEARER, Java callback
or engine classes — is refused with a :class:`~sluice.api.errors.ConfigError` naming the key.
Java-only tuning (key manager algorithms, providers, Java cipher suite names) is ignored: the
TLS libraries choose their own, see docs/compatibility.md.
"""

from __future__ import annotations

import dataclasses
import logging
import ssl
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sluice.api.errors import ConfigError, ConnectError
from sluice.kafka.errors import AUTHENTICATION_ERRORS

if TYPE_CHECKING:
    from confluent_kafka.admin import AdminClient

__all__ = [
    "SECURITY_KEY_PREFIXES",
    "ClientSecurity",
    "check_authentication",
    "librdkafka_security",
    "security_settings",
]

log = logging.getLogger(__name__)

#: Keys of a Java client config that say how it connects securely.
SECURITY_KEY_PREFIXES = ("security.protocol", "ssl.", "sasl.")

_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}
# Java classes a Java client would load; nothing in Python can stand in for them.
_JAVA_CLASS_KEYS = (
    "sasl.client.callback.handler.class",
    "sasl.login.callback.handler.class",
    "sasl.login.class",
    "ssl.engine.factory.class",
)
# librdkafka's own names, accepted as given (settings written for librdkafka keep working).
_LIBRDKAFKA_NATIVE = (
    "sasl.username",
    "sasl.password",
    "ssl.ca.location",
    "ssl.certificate.location",
    "ssl.key.location",
)
_HIDDEN = "[hidden]"
# Store keys whose values an error may show, besides types: the others are passwords and PEM text.
_SHOWN_STORE_KEYS = ("ssl.keystore.location", "ssl.truststore.location")


def security_settings(props: Mapping[str, Any]) -> dict[str, str]:
    """The security keys of a config (``security.protocol``, ``ssl.*``, ``sasl.*``)."""
    return {k: str(v) for k, v in props.items() if k.startswith(SECURITY_KEY_PREFIXES) and v is not None}


@dataclasses.dataclass(frozen=True)
class ClientSecurity:
    """How one Kafka client connects: protocol, SASL credentials and TLS material as PEM."""

    protocol: str = "PLAINTEXT"
    mechanism: str | None = None
    username: str | None = None
    password: str | None = None
    ca_pem: str | None = None
    certificate_pem: str | None = None
    key_pem: str | None = None
    verify_hostname: bool = True
    # librdkafka's own keys, given as such (``sasl.username``, ``ssl.ca.location``, ...).
    native: tuple[tuple[str, str], ...] = ()

    @property
    def uses_ssl(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    @classmethod
    def from_java(cls, props: Mapping[str, Any], client: str = "client") -> ClientSecurity:
        """Read the Java client settings ``props``; ``client`` names the client in errors
        (``the connector's producer``). Raises :class:`ConfigError` naming the key that
        cannot be used."""
        settings = security_settings(props)
        native = tuple((k, settings[k]) for k in _LIBRDKAFKA_NATIVE if k in settings)
        if "ssl.key.location" in settings and "ssl.key.password" in settings:
            native += (("ssl.key.password", settings["ssl.key.password"]),)
        protocol = settings.get("security.protocol", "PLAINTEXT").strip().upper()
        if protocol not in _PROTOCOLS:
            raise ConfigError(
                "security.protocol",
                settings["security.protocol"],
                f"{client}: must be one of {', '.join(_PROTOCOLS)}",
            )
        for key in _JAVA_CLASS_KEYS:
            if settings.get(key, "").strip():
                raise ConfigError(
                    key, settings[key], f"{client}: Java classes cannot be loaded by Sluice's Kafka clients"
                )
        result = cls(protocol=protocol, native=native)
        if result.uses_sasl:
            result = dataclasses.replace(result, **_sasl(settings, client))
        if result.uses_ssl:
            result = dataclasses.replace(result, **_tls(settings, client))
        return result

    def librdkafka(self) -> dict[str, str]:
        """librdkafka settings (``security.protocol``, ``sasl.*``, ``ssl.*.pem``)."""
        out = {"security.protocol": self.protocol.lower()}
        if self.uses_sasl:
            out["sasl.mechanism"] = self.mechanism or ""
            if self.username is not None:
                out["sasl.username"] = self.username
            if self.password is not None:
                out["sasl.password"] = self.password
        if self.uses_ssl:
            out["ssl.endpoint.identification.algorithm"] = "https" if self.verify_hostname else "none"
            if self.ca_pem:
                out["ssl.ca.pem"] = self.ca_pem
            if self.certificate_pem and self.key_pem:
                out["ssl.certificate.pem"] = self.certificate_pem
                out["ssl.key.pem"] = self.key_pem
        out.update(self.native)
        return out

    def kafka_python(self) -> dict[str, Any]:
        """kafka-python client keyword arguments (an ``ssl_context`` for TLS)."""
        out: dict[str, Any] = {"security_protocol": self.protocol}
        native = dict(self.native)
        if self.uses_sasl:
            out["sasl_mechanism"] = self.mechanism
            out["sasl_plain_username"] = self.username or native.get("sasl.username")
            out["sasl_plain_password"] = self.password or native.get("sasl.password")
        if self.uses_ssl:
            out["ssl_context"] = self.ssl_context()
            out["ssl_check_hostname"] = self.verify_hostname
        return out

    def ssl_context(self) -> ssl.SSLContext:
        """A client ``SSLContext`` trusting :attr:`ca_pem` (the system's authorities when
        none is set), presenting the client certificate when there is one."""
        native = dict(self.native)
        context = ssl.create_default_context(
            cafile=native.get("ssl.ca.location") if not self.ca_pem else None, cadata=self.ca_pem
        )
        context.check_hostname = self.verify_hostname
        if self.certificate_pem and self.key_pem:
            from sluice.tls.keystores import KeyMaterial

            KeyMaterial.from_pem(self.key_pem, self.certificate_pem).load_into(context)
        return context


def librdkafka_security(props: Mapping[str, Any], client: str = "client") -> dict[str, str]:
    """librdkafka settings for the security settings of Java client config ``props``."""
    if not security_settings(props):
        return {}
    return ClientSecurity.from_java(props, client).librdkafka()


def check_authentication(client: Mapping[str, Any], timeout_s: float = 15.0) -> AdminClient:
    """Ask the cluster for its metadata once with librdkafka settings ``client``; raise
    :class:`ConnectError` with the client's message when authentication fails. Returns the
    ``AdminClient`` that asked, for the caller to go on with: its connection is made and
    logged in already.

    librdkafka retries a refused login for ever, so the worker's start-up would otherwise
    wait on its internal topics until a timeout that does not say why. An unreachable
    cluster is left to the callers' own waits (this returns after ``timeout_s``)."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    refused: list[Any] = []

    def note_refusal(error: Any) -> None:
        if not refused and error.code() in AUTHENTICATION_ERRORS:
            refused.append(error)

    settings: dict[str, Any] = {**client, "error_cb": note_refusal, "log_level": 3}
    admin = AdminClient(settings)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            admin.list_topics(timeout=min(1.0, max(deadline - time.monotonic(), 0.1)))
            return admin
        except KafkaException:
            pass
        admin.poll(0)  # an AdminClient serves error_cb only when polled
        if refused:
            raise ConnectError(
                f"Cannot authenticate to the Kafka cluster at {client.get('bootstrap.servers')}: {refused[0].str()}"
            )
        if time.monotonic() >= deadline:
            return admin


# ---------------------------------------------------------------------------- SASL


def _sasl(settings: Mapping[str, str], client: str) -> dict[str, Any]:
    mechanism = settings.get("sasl.mechanism", "GSSAPI").strip().upper()
    if mechanism not in _LOGIN_MODULES:
        raise ConfigError(
            "sasl.mechanism",
            mechanism,
            f"{client}: Sluice's Kafka clients support PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512"
            + (
                " (Kerberos, GSSAPI, is Kafka's default when sasl.mechanism is not set)"
                if mechanism == "GSSAPI"
                else ""
            ),
        )
    jaas = settings.get("sasl.jaas.config", "").strip()
    if not jaas:
        if "sasl.username" in settings:  # librdkafka's own keys
            return {"mechanism": mechanism}
        raise ConfigError(
            "sasl.jaas.config",
            None,
            f"{client}: SASL ({mechanism}) needs sasl.jaas.config with {_LOGIN_MODULES[mechanism]} and a "
            "username and password (a JAAS file set with java.security.auth.login.config is not read)",
        )
    module, options = parse_jaas_config(jaas)
    if module != _LOGIN_MODULES[mechanism]:
        raise ConfigError(
            "sasl.jaas.config",
            _HIDDEN,
            f"{client}: sasl.mechanism {mechanism} needs the login module {_LOGIN_MODULES[mechanism]}, not {module}",
        )
    missing = [o for o in ("username", "password") if not options.get(o)]
    if missing:
        raise ConfigError("sasl.jaas.config", _HIDDEN, f"{client}: the login module has no {' or '.join(missing)}")
    return {"mechanism": mechanism, "username": options["username"], "password": options["password"]}


def parse_jaas_config(text: str) -> tuple[str, dict[str, str]]:
    """The login module class and options of a one-entry JAAS configuration, as Kafka's
    ``sasl.jaas.config`` holds it: ``<class> <flag> name="value" ... ;``."""
    pos = 0
    tokens: list[str] = []
    length = len(text)
    while pos < length:
        ch = text[pos]
        if ch.isspace():
            pos += 1
        elif ch in "=;":
            tokens.append(ch)
            pos += 1
        elif ch == '"':
            chars, pos = [], pos + 1
            while pos < length and text[pos] != '"':
                if text[pos] == "\\" and pos + 1 < length:
                    pos += 1
                chars.append(text[pos])
                pos += 1
            if pos >= length:
                raise ConfigError("sasl.jaas.config", _HIDDEN, "a quoted value is not closed")
            tokens.append("\0" + "".join(chars))  # marks a quoted value
            pos += 1
        else:
            start = pos
            while pos < length and not text[pos].isspace() and text[pos] not in '=;"':
                pos += 1
            tokens.append(text[start:pos])
    if len(tokens) < 3 or tokens[-1] != ";":
        raise ConfigError("sasl.jaas.config", _HIDDEN, 'expected "<LoginModule class> required name=\\"value\\" ... ;"')
    module, flag, body = tokens[0], tokens[1], tokens[2:-1]
    if flag.lower() not in ("required", "requisite", "sufficient", "optional"):
        raise ConfigError("sasl.jaas.config", _HIDDEN, f"the login module's control flag {flag!r} is not valid")
    if ";" in body:
        raise ConfigError("sasl.jaas.config", _HIDDEN, "it must hold exactly one login module")
    options: dict[str, str] = {}
    if len(body) % 3:
        raise ConfigError("sasl.jaas.config", _HIDDEN, "options must be name=value pairs")
    for i in range(0, len(body), 3):
        name, equals, value = body[i : i + 3]
        if equals != "=" or name.startswith("\0"):
            raise ConfigError("sasl.jaas.config", _HIDDEN, "options must be name=value pairs")
        options[name] = value.removeprefix("\0")
    return module, options


# ---------------------------------------------------------------------------- TLS


def _stores_as_pem(settings: Mapping[str, str]) -> tuple[str | None, str | None, str | None]:
    """The trusted certificates, the client chain and its key, as PEM (each ``None`` when
    not set). Raises :class:`~sluice.tls.keystores.StoreError`."""
    # Imported here: cryptography is loaded only by clients that use TLS.
    from sluice.tls.keystores import certificates_pem, read_keystore, read_truststore

    # Without a truststore, the TLS library's default authorities, as the JDK's cacerts for Java.
    truststore = read_truststore(settings)
    keystore = read_keystore(settings)
    return (
        certificates_pem(truststore) if truststore is not None else None,
        keystore.chain_pem() if keystore is not None else None,
        keystore.key_pem() if keystore is not None else None,
    )


def _tls(settings: Mapping[str, str], client: str) -> dict[str, Any]:
    from sluice.tls.keystores import DEFAULT_STORE_TYPE, StoreError

    algorithm = settings.get("ssl.endpoint.identification.algorithm", "https").strip().lower()
    if algorithm not in ("https", ""):
        raise ConfigError("ssl.endpoint.identification.algorithm", algorithm, f"{client}: must be https or empty")
    try:
        ca_pem, certificate_pem, key_pem = _stores_as_pem(settings)
    except StoreError as error:
        value = settings.get(error.key)
        if error.key.endswith(".type"):
            value = value or DEFAULT_STORE_TYPE
        elif value is not None and error.key not in _SHOWN_STORE_KEYS:
            value = _HIDDEN
        # The message may begin with the key the ConfigError names already.
        raise ConfigError(error.key, value, f"{client}: {str(error).removeprefix(error.key + ': ')}") from None
    return {
        "verify_hostname": algorithm == "https",
        "ca_pem": ca_pem,
        "certificate_pem": certificate_pem,
        "key_pem": key_pem,
    }
