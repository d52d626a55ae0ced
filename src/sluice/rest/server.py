"""Serving the REST API: uvicorn in a background thread, on Kafka-style ``listeners``
(``http`` and ``https``; the SSL contexts come from :mod:`sluice.rest.tls`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import socket
import ssl
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import uvicorn
from starlette.applications import Starlette

from sluice.rest.app import create_app
from sluice.rest.tls import WorkerTls
from sluice.runtime.herder.base import Herder

__all__ = ["Listener", "RestServer", "parse_listener", "parse_listeners"]

log = logging.getLogger(__name__)

DEFAULT_LISTENERS = ("http://:8083",)
PROTOCOL_HTTP = "http"
PROTOCOL_HTTPS = "https"

# How long a closing TLS connection waits for its peer's close_notify (asyncio: 30 s). Idle
# keep-alive clients rarely answer it, and the graceful shutdown waits for every connection.
TLS_SHUTDOWN_TIMEOUT_S = 5.0

# RestServer.LISTENER_PATTERN in Kafka Connect.
_LISTENER_RE = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


@dataclass(frozen=True)
class Listener:
    """One entry of ``listeners``: ``protocol://host:port``; empty host = all interfaces."""

    protocol: str
    host: str
    port: int


def parse_listener(text: str) -> Listener:
    """Parse ``protocol://host:port`` (``http://:8083``, ``https://[::1]:0``, ...)."""
    match = _LISTENER_RE.match(text.strip())
    if not match:
        raise ValueError(f"Could not parse listener {text!r}: expected protocol://host:port, e.g. http://:8083")
    protocol = match.group(1).lower()
    host = match.group(2)
    port = int(match.group(3))
    if protocol not in (PROTOCOL_HTTP, PROTOCOL_HTTPS):
        raise ValueError(f"Listener {text!r}: unknown protocol {protocol!r}; use http or https")
    if not 0 <= port <= 65535:
        raise ValueError(f"Listener {text!r}: port {port} is out of range 0-65535")
    return Listener(protocol, host, port)


def parse_listeners(listeners: str | Sequence[str]) -> list[Listener]:
    """A ``listeners`` value: a comma-separated string or a list of listener strings."""
    items = listeners.split(",") if isinstance(listeners, str) else list(listeners)
    parsed = [parse_listener(item) for item in items if item.strip()]
    if not parsed:
        raise ValueError("No listeners given: expected at least one protocol://host:port")
    return parsed


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket, its connections without Nagle's delay (see :func:`_no_delay`); an
    empty host binds every interface (IPv6 and IPv4 if possible)."""
    return _no_delay(_bind_any(host, port))


def _no_delay(sock: socket.socket) -> socket.socket:
    """Sets TCP_NODELAY on a listening socket, which the connections it accepts inherit.

    asyncio sets it on each connection only for a socket made with ``IPPROTO_TCP``, and
    ``socket.create_server`` makes them with protocol 0: without it, uvicorn's response
    head and body go out as two segments and the second waits for the client's delayed
    ACK — 40 ms on every request of a kept-alive connection after its first."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _bind_any(host: str, port: int) -> socket.socket:
    if not host:
        if socket.has_dualstack_ipv6():
            try:
                return socket.create_server(("", port), family=socket.AF_INET6, dualstack_ipv6=True)
            except OSError:
                pass  # IPv6 present but unusable: fall back to IPv4
        return socket.create_server(("0.0.0.0", port))
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    if not infos:
        raise OSError(f"Cannot resolve listener host {host!r}")
    family, _type, _proto, _canon, addr = infos[0]
    return socket.create_server((addr[0], port), family=family)


class _QuietServer(uvicorn.Server):
    """uvicorn's server, looking whether to exit once a second instead of ten times (an idle
    worker would wake ten times a second for it): :meth:`exit_soon` wakes it at once. Its
    Date header keeps its one-second resolution."""

    _loop: asyncio.AbstractEventLoop | None = None
    _wake: asyncio.Event | None = None

    async def main_loop(self) -> None:
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        ticks = 0
        while not await self.on_tick(ticks):
            ticks = (ticks + 10) % 864_000  # uvicorn's ticks are tenths of a second
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 1.0)

    def exit_soon(self) -> None:
        """Finish the requests in flight and stop (from any thread)."""
        self.should_exit = True
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already closed
                loop.call_soon_threadsafe(wake.set)


class RestServer:
    """Serves :func:`create_app(herder) <sluice.rest.app.create_app>` (or another ``app``) on ``listeners``.

    ``start()`` binds every listener and returns once they listen and uvicorn serves them;
    ``stop()`` shuts down gracefully. A port of 0 picks a free port: read it back from
    :attr:`url`. :attr:`advertised_url` and :attr:`worker_id` are what other workers and
    status records use (``rest.advertised.host.name`` / ``rest.advertised.port`` /
    ``rest.advertised.listener``). ``https`` listeners take their SSL context from ``tls``
    (a worker's :class:`~sluice.rest.tls.WorkerTls`), built when the server is made, so
    that a wrong keystore stops the worker at start-up as in Kafka.
    """

    def __init__(
        self,
        herder: Herder | None,
        listeners: str | Sequence[str] = DEFAULT_LISTENERS,
        advertised_host: str | None = None,
        advertised_port: int | None = None,
        *,
        log_level: str = "warning",
        access_log: bool = False,
        shutdown_timeout: int = 30,
        startup_timeout: float = 30.0,
        app: Starlette | None = None,
        admin_listeners: str | Sequence[str] | None = None,
        advertised_listener: str | None = None,
        tls: WorkerTls | None = None,
    ) -> None:
        self.listeners = parse_listeners(listeners)
        # admin.listeners: None = /admin on the REST listeners; [] = disabled; else its own.
        if admin_listeners is None:
            self.admin_listeners: list[Listener] | None = None
        else:
            items = admin_listeners.split(",") if isinstance(admin_listeners, str) else list(admin_listeners)
            self.admin_listeners = [parse_listener(item) for item in items if item.strip()]
        self.advertised_host = advertised_host or None
        self.advertised_port = advertised_port
        self.advertised_protocol = _advertised_protocol(advertised_listener, self.listeners)
        # One SSL context per kind of https listener; None serves plain http.
        self._contexts: list[ssl.SSLContext | None] = [
            _context(listener, tls, admin=False) for listener in self.listeners
        ] + [_context(listener, tls, admin=True) for listener in self.admin_listeners or []]
        if app is None:
            if herder is None:
                raise ValueError("RestServer needs a herder or an app")
            app = create_app(herder)
        self.app = app
        self._log_level = log_level
        self._access_log = access_log
        self._shutdown_timeout = shutdown_timeout
        self._startup_timeout = startup_timeout
        self._sockets: list[socket.socket] = []
        self._ports: list[int] = []
        self._servers: list[_QuietServer] = []
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._lock = threading.Lock()

    # ---- lifecycle

    def start(self) -> None:
        """Bind the listeners and serve; returns once the server accepts connections."""
        with self._lock:
            if self._thread is not None:
                raise RuntimeError("RestServer already started")
            sockets: list[socket.socket] = []
            try:
                for listener in [*self.listeners, *(self.admin_listeners or [])]:
                    sockets.append(_bind(listener.host, listener.port))
            except BaseException:
                for sock in sockets:
                    sock.close()
                raise
            self._sockets = sockets
            ports = [sock.getsockname()[1] for sock in sockets]
            self._ports = ports[: len(self.listeners)]
            self.admin_ports = ports[len(self.listeners) :]
            self.app.state.admin_ports = None if self.admin_listeners is None else set(self.admin_ports)
            # uvicorn takes one SSL context per server: one server per context, all on one
            # event loop, serving the same application.
            groups: dict[int, tuple[ssl.SSLContext | None, list[socket.socket]]] = {}
            for sock, context in zip(sockets, self._contexts, strict=True):
                groups.setdefault(id(context), (context, []))[1].append(sock)
            servers = [
                (self._uvicorn_server(context, lifespan=i == 0), group)
                for i, (context, group) in enumerate(groups.values())
            ]
            self._servers = [server for server, _ in servers]
            self._error = None
            thread = threading.Thread(target=self._run, args=(servers,), name="sluice-rest-server", daemon=True)
            self._thread = thread
            thread.start()
        # Wait for uvicorn to be serving (or to have died trying).
        deadline = time.monotonic() + self._startup_timeout
        while not all(server.started for server in self._servers):
            if not thread.is_alive():
                self._cleanup_failed_start()
                raise RuntimeError(f"REST server failed to start: {self._error!r}") from self._error
            if time.monotonic() >= deadline:
                self.stop()
                raise RuntimeError(f"REST server did not start within {self._startup_timeout} s")
            thread.join(0.01)
        log.info("REST server listening on %s, advertised as %s", ", ".join(self.urls), self.advertised_url)

    def _uvicorn_server(self, context: ssl.SSLContext | None, *, lifespan: bool) -> _QuietServer:
        config = uvicorn.Config(
            self.app,
            log_level=self._log_level,
            log_config=None,  # leave the process's logging configuration alone
            access_log=self._access_log,
            http="h11",
            loop="asyncio",
            lifespan="on" if lifespan else "off",  # the application starts up once
            server_header=False,
            timeout_graceful_shutdown=self._shutdown_timeout,
            ssl_context_factory=None if context is None else (lambda _config, _default: context),
        )
        return _QuietServer(config)

    def _run(self, servers: list[tuple[_QuietServer, list[socket.socket]]]) -> None:
        async def serve_all() -> None:
            await asyncio.gather(*(server.serve(sockets=group) for server, group in servers))

        try:
            with asyncio.Runner(loop_factory=_EventLoop) as runner:
                runner.run(serve_all())
        except BaseException as exc:  # incl. SystemExit from uvicorn's startup failure
            self._error = exc
            log.error("REST server stopped with an error", exc_info=exc)

    def _cleanup_failed_start(self) -> None:
        with self._lock:
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.close()
            self._sockets = []
            self._thread = None
            self._servers = []

    def stop(self) -> None:
        """Stop accepting connections, finish in-flight requests, and shut down."""
        with self._lock:
            servers, thread = self._servers, self._thread
            self._servers, self._thread = [], None
        if not servers or thread is None:
            return
        for server in servers:
            server.exit_soon()
        thread.join(self._shutdown_timeout + 5.0)
        if thread.is_alive():
            log.warning("REST server did not stop in time; forcing it")
            for server in servers:
                server.force_exit = True
            thread.join(5.0)
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.close()
        self._sockets = []

    def __enter__(self) -> RestServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ---- addresses

    def _port(self, index: int = 0) -> int:
        if self._ports:
            return self._ports[index]
        port = self.listeners[index].port
        if port == 0:
            raise RuntimeError("The port of a listener on port 0 is known only after start()")
        return port

    def _listener_url(self, index: int) -> str:
        listener = self.listeners[index]
        return f"{listener.protocol}://{_url_host(listener.host or 'localhost')}:{self._port(index)}"

    @property
    def url(self) -> str:
        """URL of the first listener as bound (``http://localhost:<port>`` for all interfaces)."""
        return self._listener_url(0)

    @property
    def urls(self) -> list[str]:
        """URLs of every listener as bound."""
        return [self._listener_url(i) for i in range(len(self.listeners))]

    @property
    def advertised_url(self) -> str:
        """The URL other workers reach this one at (Kafka's ``RestServer.advertisedUrl``): the
        scheme of ``rest.advertised.listener`` (else http when a listener is http, else https),
        the host and port of the first listener of that protocol unless
        ``rest.advertised.host.name`` / ``rest.advertised.port`` say otherwise."""
        index = next((i for i, lst in enumerate(self.listeners) if lst.protocol == self.advertised_protocol), 0)
        listener = self.listeners[index]
        host = self.advertised_host or listener.host or "localhost"
        port = self.advertised_port if self.advertised_port is not None else self._port(index)
        return f"{self.advertised_protocol}://{_url_host(host)}:{port}"

    @property
    def worker_id(self) -> str:
        """``host:port`` of :attr:`advertised_url`, the worker id in status records."""
        return self.advertised_url.split("://", 1)[1]


class _EventLoop(asyncio.SelectorEventLoop):
    """The server's event loop: TLS connections get :data:`TLS_SHUTDOWN_TIMEOUT_S`."""

    async def create_server(self, *args: Any, **kwargs: Any) -> asyncio.Server:
        if kwargs.get("ssl") is not None and kwargs.get("ssl_shutdown_timeout") is None:
            kwargs["ssl_shutdown_timeout"] = TLS_SHUTDOWN_TIMEOUT_S
        return await super().create_server(*args, **kwargs)


def _advertised_protocol(advertised_listener: str | None, listeners: Sequence[Listener]) -> str:
    """Kafka's ``RestServer.determineAdvertisedProtocol``."""
    if advertised_listener:
        protocol = advertised_listener.strip().lower()
        if protocol not in (PROTOCOL_HTTP, PROTOCOL_HTTPS):
            raise ValueError(f"rest.advertised.listener={advertised_listener}: expected http or https")
        return protocol
    protocols = {listener.protocol for listener in listeners}
    if PROTOCOL_HTTP in protocols or PROTOCOL_HTTPS not in protocols:
        return PROTOCOL_HTTP
    return PROTOCOL_HTTPS


def _context(listener: Listener, tls: WorkerTls | None, *, admin: bool) -> ssl.SSLContext | None:
    if listener.protocol != PROTOCOL_HTTPS:
        return None
    if tls is None:
        raise ValueError(f"Listener https://{_url_host(listener.host)}:{listener.port} needs TLS settings")
    return tls.admin_listener_context() if admin else tls.listener_context()
