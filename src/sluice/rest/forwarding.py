"""Forwarding a request to the worker that can serve it (Kafka's ``HerderRequestHandler``).

A distributed herder raises :class:`RequestForwardError` for writes only the leader may
make, or for work another worker owns. The first worker to see a user's request (no
``forward`` query parameter) forwards it with ``forward=true``, allowing one more hop; a
worker that receives ``forward=true`` forwards with ``forward=false``; one that receives
``forward=false`` gives up with 409, since within two hops the target should have been
found and a miss means the cluster is rebalancing. The target may be the leader (writes
only it makes) or the owner of a connector or task: a follower sends a request for work it
does not run to the leader (first hop), which sends it on to the owner (second hop). When
the worker knows no target (``forward_url`` None: no leader known, or the leader is
rebalancing) it answers 409 ``NO_TARGET``, whatever the herder's message, as Kafka does.

A target reached over https is checked with the worker's TLS settings (its
``listeners.https.ssl.*`` truststore, else the top-level ``ssl.*`` one), and the worker's
keystore is its client certificate, as with Kafka's ``RestClient``. The caller's headers go
along, ``Authorization`` (basic authentication) included.

The target's answer is passed back as it is, except that a ``Location`` naming the target
is rewritten to name this worker: Kafka's first worker builds its own ``201 Created``,
whose relative ``Location`` resolves against the URL the user called.
"""

from __future__ import annotations

import asyncio
import functools
import http.cookiejar
import logging
import ssl
from collections.abc import Callable
from typing import Any

import httpx2
from fastapi import Request
from fastapi.responses import Response

from sluice.api.errors import ConfigError
from sluice.rest.errors import error_response
from sluice.runtime.herder.base import ConnectRestError, RequestForwardError

__all__ = ["forward_request_handler", "internal_request_sender"]

log = logging.getLogger(__name__)

NO_TARGET = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
TOO_MANY_HOPS = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
FORWARD_TIMEOUT_S = 90.0
_HOP_HEADERS = {"host", "content-length", "connection", "transfer-encoding", "keep-alive", "accept-encoding"}


@functools.cache
def _plain_http() -> httpx2.Client:
    """The client forwards over plain http share, made by the first one: ``httpx2.request``
    builds a client for every call, and with it an SSL context that loads the system's CA
    certificates (some 50 ms of CPU, unused on http). As before, no connection outlives its
    forward and no cookie is kept."""
    return httpx2.Client(
        cookies=http.cookiejar.CookieJar(http.cookiejar.DefaultCookiePolicy(allowed_domains=[])),
        limits=httpx2.Limits(max_keepalive_connections=0),
    )


def _verify(url: str, ssl_context: Callable[[], ssl.SSLContext] | None) -> ssl.SSLContext | bool:
    """How a request to ``url`` checks the other worker: with the worker's client context
    over https (made on first use; raises ConfigError when its stores do not load)."""
    if url.lower().startswith("https://") and ssl_context is not None:
        return ssl_context()
    return True


def _send(method: str, url: str, *, verify: ssl.SSLContext | bool, **kwargs: Any) -> httpx2.Response:
    """One forwarded request (https: through a client with the worker's SSL context)."""
    if url.lower().startswith("https://"):
        return httpx2.request(method, url, verify=verify, **kwargs)
    return _plain_http().request(method, url, **kwargs)


async def forward_request_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestForwardError)
    forward = request.query_params.get("forward")
    if forward is not None and forward.lower() != "true":
        log.error("Request %s %s could not find its target worker within two hops", request.method, request.url.path)
        return error_response(409, TOO_MANY_HOPS)
    if exc.forward_url is None:
        return error_response(409, NO_TARGET)
    params: list[tuple[str, str | int | float | bool | None]] = [
        (k, v) for k, v in request.query_params.multi_items() if k != "forward"
    ]
    params.append(("forward", "true" if forward is None else "false"))
    url = exc.forward_url.rstrip("/") + request.url.path
    body = getattr(request.state, "raw_body", None)
    if body is None:
        body = await request.body()
    headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_HEADERS}
    try:
        verify = _verify(url, getattr(request.app.state, "forwarding_ssl_context", None))
    except ConfigError as error:
        log.error("Cannot forward %s %s to %s: %s", request.method, request.url.path, url, error)
        return error_response(500, f"Cannot forward the request to {exc.forward_url}: {error}")
    log.debug("Forwarding %s %s to %s", request.method, request.url.path, url)
    try:
        answer = await asyncio.to_thread(
            _send,
            request.method,
            url,
            params=params,
            content=body or None,
            headers=headers,
            timeout=FORWARD_TIMEOUT_S,
            verify=verify,
        )
    except httpx2.HTTPError as error:
        log.warning("Forwarding %s %s to %s failed: %s", request.method, request.url.path, url, error)
        return error_response(409, f"{TOO_MANY_HOPS}: could not reach {exc.forward_url} ({error})")
    passed = {k: v for k, v in answer.headers.items() if k.lower() in ("content-type", "location")}
    target = exc.forward_url.rstrip("/")
    for key, value in passed.items():
        if key.lower() == "location" and value.startswith(target + "/"):
            passed[key] = str(request.base_url).rstrip("/") + value[len(target) :]
    return Response(answer.content, status_code=answer.status_code, headers=passed)


def internal_request_sender(
    ssl_context: Callable[[], ssl.SSLContext] | None,
) -> Callable[[str, str, bytes | None, dict[str, str]], None]:
    """What a distributed herder calls another worker's internal endpoints with (Kafka's
    ``RestClient``): over https with the worker's TLS settings, as forwarding does. An
    answer of 400 or more raises :class:`ConnectRestError` with the other worker's status
    and message; a worker that cannot be reached raises :class:`ConnectionError`."""

    def send(method: str, url: str, body: bytes | None, headers: dict[str, str]) -> None:
        try:
            answer = _send(
                method,
                url,
                content=body,
                headers={"Accept": "application/json", **headers},
                timeout=FORWARD_TIMEOUT_S,
                verify=_verify(url, ssl_context),
            )
        except httpx2.HTTPError as error:
            raise ConnectionError(f"IO Error trying to forward REST request to {url}: {error}") from error
        if answer.status_code >= 400:
            try:
                message = str(answer.json().get("message"))
            except (ValueError, AttributeError):
                message = answer.text
            raise ConnectRestError(answer.status_code, message)

    return send
