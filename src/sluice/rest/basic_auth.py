"""HTTP basic authentication of the REST API: Kafka's ``BasicAuthSecurityRestExtension``.

Enabled as in Kafka, by naming the extension in ``rest.extension.classes``; the users and
passwords come from the properties file a JAAS configuration names for ``KafkaConnect``:

    KafkaConnect {
      org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
      file="/etc/connect/credentials.properties";
    };

The JAAS file is found, as Kafka finds it, through ``-Djava.security.auth.login.config=…``
in ``KAFKA_OPTS``, or through the worker property ``sluice.rest.jaas.config``. Every request
must then carry one of those users' credentials (``Authorization: Basic …``), the console's
pages and requests forwarded between workers included (a forwarded request carries its
caller's header); only the internal endpoints other workers call with a signed body
(``POST /connectors/{c}/tasks``, ``PUT /connectors/{c}/fence``) are exempt, as in Kafka.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path

import javaproperties
from starlette.types import ASGIApp, Receive, Scope, Send

from sluice.api.errors import ConfigError

__all__ = ["BASIC_AUTH_EXTENSION", "BasicAuthMiddleware", "basic_auth_users"]

BASIC_AUTH_EXTENSION = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
PROPERTY_FILE_LOGIN_MODULE = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
JAAS_WORKER_PROPERTY = "sluice.rest.jaas.config"
_JAAS_SYSTEM_PROPERTY = "-Djava.security.auth.login.config="
_INTERNAL = [("POST", re.compile(r"^/connectors/[^/]+/tasks/?$")), ("PUT", re.compile(r"^/connectors/[^/]+/fence/?$"))]
UNAUTHORIZED = b"User cannot access the resource."


def basic_auth_users(
    worker_props: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> dict[str, str] | None:
    """The users and passwords when ``rest.extension.classes`` names the basic auth
    extension; None when it does not. Raises :class:`ConfigError` saying what is missing."""
    extensions = [c.strip() for c in (worker_props.get("rest.extension.classes") or "").split(",") if c.strip()]
    unknown = [c for c in extensions if c != BASIC_AUTH_EXTENSION]
    if unknown:
        raise ConfigError(
            f"rest.extension.classes: {', '.join(unknown)} not available; Sluice provides {BASIC_AUTH_EXTENSION}"
        )
    if not extensions:
        return None
    env = os.environ if environ is None else environ
    jaas = worker_props.get(JAAS_WORKER_PROPERTY) or _jaas_from_kafka_opts(env.get("KAFKA_OPTS", ""))
    if not jaas:
        raise ConfigError(
            f"{BASIC_AUTH_EXTENSION} needs a JAAS configuration: set "
            f"KAFKA_OPTS={_JAAS_SYSTEM_PROPERTY}<file> or the worker property {JAAS_WORKER_PROPERTY}"
        )
    credentials_file = _credentials_file(Path(jaas))
    try:
        with open(credentials_file, "rb") as fp:
            users = {str(k): str(v) for k, v in javaproperties.load(fp).items()}
    except OSError as exc:
        raise ConfigError(f"The credentials file {credentials_file} (named in {jaas}) cannot be read: {exc}") from None
    return users


def _jaas_from_kafka_opts(kafka_opts: str) -> str | None:
    for option in shlex.split(kafka_opts):
        if option.startswith(_JAAS_SYSTEM_PROPERTY):
            return option[len(_JAAS_SYSTEM_PROPERTY) :]
    return None


def _credentials_file(jaas: Path) -> str:
    try:
        text = jaas.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"The JAAS configuration {jaas} cannot be read: {exc}") from None
    section = re.search(r"\bKafkaConnect\s*\{(.*?)\}\s*;", text, re.DOTALL)
    if section is None:
        raise ConfigError(f"The JAAS configuration {jaas} has no KafkaConnect section")
    body = section.group(1)
    if PROPERTY_FILE_LOGIN_MODULE not in body:
        raise ConfigError(f"The KafkaConnect section of {jaas} does not use {PROPERTY_FILE_LOGIN_MODULE}")
    found = re.search(r'\bfile\s*=\s*"([^"]*)"', body)
    if found is None:
        raise ConfigError(f'The KafkaConnect section of {jaas} names no file="…" of credentials')
    return found.group(1)


class BasicAuthMiddleware:
    """Answers 401 to a request without the credentials of one of ``users``."""

    def __init__(self, app: ASGIApp, users: Mapping[str, str], realm: str = "Kafka Connect") -> None:
        self.app = app
        self.users = dict(users)
        self.challenge = f'Basic realm="{realm}"'.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._internal(scope) or self._allowed(scope):
            await self.app(scope, receive, send)
            return
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"www-authenticate", self.challenge),
                    (b"content-length", str(len(UNAUTHORIZED)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": UNAUTHORIZED})

    @staticmethod
    def _internal(scope: Scope) -> bool:
        return any(scope["method"] == method and pattern.match(scope["path"]) for method, pattern in _INTERNAL)

    def _allowed(self, scope: Scope) -> bool:
        header = next((v for k, v in scope.get("headers") or [] if k == b"authorization"), None)
        if header is None or header[:6].lower() != b"basic ":
            return False
        try:
            user, sep, password = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return False
        expected = self.users.get(user)
        return bool(sep) and expected is not None and hmac.compare_digest(expected.encode(), password.encode())
