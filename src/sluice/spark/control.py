"""The worker's end of the control channels (:mod:`sluice.taskhost.wire`): one listening
socket per worker process, where every task host it launches connects back — once for the
host, once for each Connect task it runs.

A host job registers its incarnation and a secret before it is submitted, and a task launch
before its host is told of it; the connection that presents both (in its hello, the only
frame decoded before) is handed to that host or launch, once. Everything else is closed
unread.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import socket
import threading
from collections.abc import Callable

from sluice.spark.inbox import Disconnected, Inbox
from sluice.taskhost.protocol import Hello, WorkerMessage
from sluice.taskhost.wire import ChannelClosed, ProtocolError, WorkerChannel, worker_channel

log = logging.getLogger(__name__)

__all__ = ["ControlServer", "TaskConnection", "control_server"]

HELLO_TIMEOUT_S = 10.0


class TaskConnection:
    """One launch's connection as the worker sees it: messages arrive in ``inbox`` (and a
    final :class:`~sluice.spark.inbox.Disconnected`); :meth:`send` talks to the task."""

    def __init__(self, inbox: Inbox, on_end: Callable[[], None] | None = None) -> None:
        self.inbox = inbox
        self.hello: Hello | None = None
        self._channel: WorkerChannel | None = None
        self._lock = threading.Lock()
        self._on_end = on_end  # called once, when the connection ended (either end closed it)

    @property
    def connected(self) -> bool:
        return self._channel is not None

    def attach(self, channel: WorkerChannel, hello: Hello) -> None:
        with self._lock:
            self._channel, self.hello = channel, hello
        threading.Thread(
            target=self._read, args=(channel,), name=f"sluice-control-{hello.incarnation[:8]}", daemon=True
        ).start()

    def _read(self, channel: WorkerChannel) -> None:
        while True:
            try:
                message = channel.recv()
            except ChannelClosed as exc:
                self.inbox.put(Disconnected(str(exc)))
                self._ended()
                return
            except ProtocolError as exc:  # an unreadable frame ends the connection
                channel.close()
                self.inbox.put(Disconnected(f"unreadable message from the task: {exc}"))
                self._ended()
                return
            self.inbox.deliver(message)

    def _ended(self) -> None:
        with self._lock:
            on_end, self._on_end = self._on_end, None
        if on_end is not None:
            on_end()

    def send(self, message: WorkerMessage) -> bool:
        """False when the task is not connected (any more)."""
        channel = self._channel
        if channel is None:
            return False
        try:
            channel.send(message)
        except ChannelClosed:
            return False
        return True

    def close(self) -> None:
        with self._lock:
            channel, self._channel = self._channel, None
        if channel is not None:
            channel.close()
        self._ended()


class ControlServer:
    """Accepts the connections of launched tasks and hands each to its launch."""

    def __init__(self, bind_host: str, advertised_host: str) -> None:
        family = socket.AF_INET6 if ":" in bind_host else socket.AF_INET
        self._sock = socket.socket(family, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((bind_host, 0))
        self._sock.listen(128)
        self.address = (advertised_host, self._sock.getsockname()[1])
        self._pending: dict[str, tuple[str, Callable[[WorkerChannel, Hello], None]]] = {}
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, name="sluice-control-server", daemon=True).start()
        log.debug("Control channel listening on %s:%d", *self.address)

    def register(self, incarnation: str, secret: str, on_connect: Callable[[WorkerChannel, Hello], None]) -> None:
        with self._lock:
            self._pending[incarnation] = (secret, on_connect)

    def unregister(self, incarnation: str) -> None:
        with self._lock:
            self._pending.pop(incarnation, None)

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._greet, args=(conn,), name="sluice-control-hello", daemon=True).start()

    def _greet(self, conn: socket.socket) -> None:
        conn.settimeout(HELLO_TIMEOUT_S)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        channel = worker_channel(conn)
        try:
            hello = channel.recv_hello()
        except (ChannelClosed, ProtocolError, OSError) as exc:
            log.warning("Closing a control connection that did not say hello: %s", exc)
            channel.close()
            return
        with self._lock:
            pending = self._pending.get(hello.incarnation)
            if pending is not None and hmac.compare_digest(pending[0], hello.secret):
                del self._pending[hello.incarnation]  # one connection per launch
            else:
                pending = None
        if pending is None:
            log.warning(
                "Closing a control connection from pid %d on %s: no launch of that task is waiting for it",
                hello.pid,
                hello.host,
            )
            channel.close()
            return
        conn.settimeout(None)
        pending[1](channel, hello)

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._sock.close()


_SERVERS: dict[tuple[str, str], ControlServer] = {}
_SERVERS_LOCK = threading.Lock()


def control_server(bind_host: str, advertised_host: str) -> ControlServer:
    """This process's control server for that address (made on first use)."""
    with _SERVERS_LOCK:
        key = (bind_host, advertised_host)
        server = _SERVERS.get(key)
        if server is None:
            server = _SERVERS[key] = ControlServer(bind_host, advertised_host)
        return server
