"""HTTP calls for the tests: ``http_client.get(url, …)`` where one would write ``httpx2.get``.

httpx2's module-level functions build a new client for every call, and with it an SSL
context that loads the system's CA certificates: some 50 ms of CPU per call, even for a
plain ``http://`` URL. The suite's polling loops (a worker's ``/health`` while it starts, a
connector's status) paid that several times a second, on the same two cores as the
workers they waited for. These functions take the same arguments and give the same
answers from one client per way of verifying TLS. As with ``httpx2.get``, every call opens
a connection of its own (a worker restarted on the same port is reached afresh, never
through a connection to the one before it) and no cookie outlives its call.
"""

from __future__ import annotations

import functools
import http.cookiejar
import threading
from typing import Any

import httpx2

__all__ = ["delete", "get", "options", "patch", "post", "put", "request"]

#: By ``verify`` itself (True, False, a CA file or an ``ssl.SSLContext``, hashed by identity),
#: which the key keeps alive.
_clients: dict[object, httpx2.Client] = {}
_lock = threading.Lock()


def _client(verify: Any) -> httpx2.Client:
    with _lock:
        client = _clients.get(verify)
        if client is None:
            # The jar refuses every cookie a server sets; a call's own Cookie header still goes out.
            no_cookies = http.cookiejar.CookieJar(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
            limits = httpx2.Limits(max_keepalive_connections=0)
            client = _clients[verify] = httpx2.Client(verify=verify, cookies=no_cookies, limits=limits)
        return client


def request(method: str, url: str, *, verify: Any = True, **kwargs: Any) -> httpx2.Response:
    """``httpx2.request``, through the shared client for ``verify``."""
    return _client(verify).request(method, url, **kwargs)


get = functools.partial(request, "GET")
options = functools.partial(request, "OPTIONS")
post = functools.partial(request, "POST")
put = functools.partial(request, "PUT")
patch = functools.partial(request, "PATCH")
delete = functools.partial(request, "DELETE")
