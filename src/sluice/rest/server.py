"""Serving the REST API: uvicorn in a background thread, on Kafka-style ``listeners``."""

from __future__ import annotations

import contextlib
import logging
import re
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

import uvicorn
from starlette.applications import Starlette

from sluice.rest.app import create_app
from sluice.runtime.herder.base import Herder

__all__ = ["Listener", "RestServer", "parse_listener", "parse_listeners"]

log = logging.getLogger(__name__)

DEFAULT_LISTENERS = ("http://:8083",)

# RestServer.LISTENER_PATTERN in Kafka Connect.
_LISTENER_RE = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


@dataclass(frozen=True)
class Listener:
    """One entry of ``listeners``: ``protocol://host:port``; empty host = all interfaces."""

    protocol: str
    host: str
    port: int


def parse_listener(text: str) -> Listener:
    """Parse ``http://host:port`` (``http://:8083``, ``http://[::1]:0``, ...)."""
    match = _LISTENER_RE.match(text.strip())
    if not match:
        raise ValueError(f"Could not parse listener {text!r}: expected protocol://host:port, e.g. http://:8083")
    protocol = match.group(1).lower()
    host = match.group(2)
    port = int(match.group(3))
    if protocol == "https":
        raise ValueError(f"Listener {text!r}: https listeners are not supported yet; use http")
    if protocol != "http":
        raise ValueError(f"Listener {text!r}: unknown protocol {protocol!r}; use http")
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
    """A listening socket; an empty host binds every interface (IPv6 and IPv4 if possible)."""
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


class RestServer:
    """Serves :func:`create_app(herder) <sluice.rest.app.create_app>` (or another ``app``) on ``listeners``.

    ``start()`` binds every listener and returns once they listen and uvicorn serves them;
    ``stop()`` shuts down gracefully. A port of 0 picks a free port: read it back from
    :attr:`url`. :attr:`advertised_url` and :attr:`worker_id` are what other workers and
    status records use (``rest.advertised.host.name`` / ``rest.advertised.port``).
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
        self._server: uvicorn.Server | None = None
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
            config = uvicorn.Config(
                self.app,
                log_level=self._log_level,
                log_config=None,  # leave the process's logging configuration alone
                access_log=self._access_log,
                http="h11",
                loop="asyncio",
                lifespan="on",
                server_header=False,
                timeout_graceful_shutdown=self._shutdown_timeout,
            )
            server = uvicorn.Server(config)
            self._server = server
            self._error = None
            thread = threading.Thread(target=self._run, args=(server, sockets), name="sluice-rest-server", daemon=True)
            self._thread = thread
            thread.start()
        # Wait for uvicorn to be serving (or to have died trying).
        deadline = time.monotonic() + self._startup_timeout
        while not server.started:
            if not thread.is_alive():
                self._cleanup_failed_start()
                raise RuntimeError(f"REST server failed to start: {self._error!r}") from self._error
            if time.monotonic() >= deadline:
                self.stop()
                raise RuntimeError(f"REST server did not start within {self._startup_timeout} s")
            thread.join(0.01)
        log.info("REST server listening on %s, advertised as %s", self.url, self.advertised_url)

    def _run(self, server: uvicorn.Server, sockets: list[socket.socket]) -> None:
        try:
            server.run(sockets=sockets)
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
            self._server = None

    def stop(self) -> None:
        """Stop accepting connections, finish in-flight requests, and shut down."""
        with self._lock:
            server, thread = self._server, self._thread
            self._server, self._thread = None, None
        if server is None or thread is None:
            return
        server.should_exit = True
        thread.join(self._shutdown_timeout + 5.0)
        if thread.is_alive():
            log.warning("REST server did not stop in time; forcing it")
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

    @property
    def url(self) -> str:
        """URL of the first listener as bound (``http://localhost:<port>`` for all interfaces)."""
        listener = self.listeners[0]
        return f"{listener.protocol}://{_url_host(listener.host or 'localhost')}:{self._port(0)}"

    @property
    def urls(self) -> list[str]:
        """URLs of every listener as bound."""
        return [
            f"{listener.protocol}://{_url_host(listener.host or 'localhost')}:{self._port(i)}"
            for i, listener in enumerate(self.listeners)
        ]

    @property
    def advertised_url(self) -> str:
        """The URL other workers reach this one at (``RestServer.advertisedUrl``)."""
        listener = self.listeners[0]
        host = self.advertised_host or listener.host or "localhost"
        port = self.advertised_port if self.advertised_port is not None else self._port(0)
        return f"{listener.protocol}://{_url_host(host)}:{port}"

    @property
    def worker_id(self) -> str:
        """``host:port`` of :attr:`advertised_url`, the worker id in status records."""
        return self.advertised_url.split("://", 1)[1]
