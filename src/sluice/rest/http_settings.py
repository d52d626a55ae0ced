"""Worker settings that shape HTTP answers: ``response.http.headers.config`` and
``admin.listeners`` (which listeners serve ``/admin``).

``response.http.headers.config`` is Jetty's HeaderFilter syntax, as Kafka Connect uses it:
comma-separated rules ``<action> <name>: <value>`` with action ``set``, ``add``,
``setDate`` or ``addDate`` (value: milliseconds from now, written as an HTTP date) or
``unset <name>``. Values with commas are double-quoted.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Iterable
from dataclasses import dataclass
from email.utils import formatdate

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["AdminPathGate", "HeaderRule", "ResponseHeadersMiddleware", "parse_header_rules"]

_ACTIONS = {"set", "add", "setdate", "adddate", "unset"}


@dataclass(frozen=True)
class HeaderRule:
    action: str  # lower-case: set, add, setdate, adddate, unset
    name: str
    value: str | None


def parse_header_rules(text: str | None) -> list[HeaderRule]:
    """Parse ``response.http.headers.config``; raises ValueError with the offending rule."""
    if not text or not text.strip():
        return []
    rules = []
    for raw in next(csv.reader([text], skipinitialspace=True)):
        rule = raw.strip()
        if not rule:
            continue
        action, _, rest = rule.partition(" ")
        action_key = action.lower()
        if action_key not in _ACTIONS or not rest.strip():
            raise ValueError(
                f"Invalid header config '{rule}' in response.http.headers.config: expected "
                "'[action] [header name]:[header value]' with action set, add, setDate, addDate or unset"
            )
        if action_key == "unset":
            rules.append(HeaderRule(action_key, rest.strip(), None))
            continue
        name, colon, value = rest.partition(":")
        if not colon or not name.strip():
            raise ValueError(f"Invalid header config '{rule}' in response.http.headers.config: missing ':'")
        value = value.strip()
        if action_key in ("setdate", "adddate"):
            try:
                int(value)
            except ValueError:
                raise ValueError(
                    f"Invalid header config '{rule}' in response.http.headers.config: "
                    f"{action} needs a number of milliseconds"
                ) from None
        rules.append(HeaderRule(action_key, name.strip(), value))
    return rules


class ResponseHeadersMiddleware:
    """Applies the header rules to every HTTP response."""

    def __init__(self, app: ASGIApp, rules: Iterable[HeaderRule]) -> None:
        self.app = app
        self.rules = list(rules)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.rules:
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = self._apply(list(message.get("headers", [])))
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _apply(self, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        for rule in self.rules:
            key = rule.name.lower().encode("latin-1")
            if rule.action in ("set", "setdate", "unset"):
                headers = [(k, v) for k, v in headers if k.lower() != key]
            if rule.action == "unset":
                continue
            value = rule.value or ""
            if rule.action in ("setdate", "adddate"):
                value = formatdate(time.time() + int(value) / 1000.0, usegmt=True)
            headers.append((rule.name.encode("latin-1"), value.encode("latin-1")))
        return headers


class AdminPathGate:
    """Serves ``/admin/...`` only where ``admin.listeners`` says.

    The application's ``state.admin_ports``: None (the default) serves /admin everywhere
    (admin.listeners unset); an empty set nowhere (admin.listeners empty: the admin
    endpoints are disabled); otherwise only on those local ports, which then serve
    nothing but /admin. The REST server sets it once it has bound its listeners.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        application = scope.get("app")
        admin_ports = getattr(getattr(application, "state", None), "admin_ports", None)
        if scope["type"] == "http" and admin_ports is not None:
            path: str = scope["path"]
            is_admin = path == "/admin" or path.startswith("/admin/")
            server = scope.get("server")
            on_admin_port = server is not None and server[1] in admin_ports
            if is_admin != on_admin_port:
                scope = dict(scope)
                # Route to a path nothing serves: the router answers Kafka's plain 404.
                scope["path"] = "/__not_served_on_this_listener__"
                scope["raw_path"] = scope["path"].encode()
        await self.app(scope, receive, send)
