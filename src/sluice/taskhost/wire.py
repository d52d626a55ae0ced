"""The control protocol on the wire: frames of JSON, typed at both ends.

Wire format (version 1), the one place it is defined:

* A connection is a TCP stream of **frames**: a 4-byte big-endian unsigned length, then that
  many bytes of UTF-8 JSON. A frame over 256 MiB ends the connection.
* Each frame is one message: ``{"v": 1, "type": "<name>", "body": {...}}``. ``v`` is the
  protocol version (:data:`~sluice.taskhost.protocol.PROTOCOL_VERSION`), ``type`` the
  message's class name in :mod:`sluice.taskhost.protocol`, ``body`` its fields by name.
* Field values: strings, numbers, booleans and ``null`` as themselves; lists and tuples as
  arrays; string-keyed maps as objects; a map keyed by a tuple (a topic partition) as an
  array of entries, each the key's items followed by the value (``[topic, partition,
  offset]``); bytes as base64 text; a nested message as an object of its fields. A field
  the body leaves out takes its default; a field the receiver does not know is ignored.
* The **handshake**: the first frame a task host sends is a ``Hello`` (at most 64 KiB),
  with the launch's incarnation and secret. The worker decodes no other frame from a
  connection until that secret matched a launch waiting for it, and hands each launch one
  connection. Then the worker sends the task to run (``RunSourceTask`` or
  ``RunSinkTask``), and the first ``Resume``/``Pause``/``Stop`` says whether to start it.

No pickles cross the connection: a task host in another language — the JVM plugin host —
speaks the same protocol. Only the standard library and :mod:`sluice.taskhost.protocol` are
imported here: executors load this module.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import socket
import struct
import threading
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any, Generic, TypeVar, Union, get_args, get_origin

from sluice.taskhost.protocol import PROTOCOL_VERSION, Hello, TaskMessage, WorkerMessage

__all__ = [
    "HELLO_MAX_BYTES",
    "MAX_FRAME_BYTES",
    "TASK_MESSAGES",
    "WORKER_MESSAGES",
    "Channel",
    "ChannelClosed",
    "MessageTypes",
    "ProtocolError",
    "TaskChannel",
    "WorkerChannel",
    "decode",
    "encode",
]

MAX_FRAME_BYTES = 256 * 1024 * 1024
HELLO_MAX_BYTES = 64 * 1024

M = TypeVar("M")
S = TypeVar("S")
R = TypeVar("R")


class ProtocolError(ValueError):
    """A frame that is not a message this end accepts (bad JSON, unknown type, wrong field
    types, another protocol version)."""


class ChannelClosed(Exception):
    """The other end closed the connection or it broke."""


# -- values ---------------------------------------------------------------------------


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    return hints


#: Values that go on the wire as themselves, whatever the field's hint (bytes never do).
_AS_IS = frozenset({str, int, float, bool, type(None)})


def _encode_value(value: Any, hint: Any) -> Any:
    if type(value) in _AS_IS:  # most values: no look at the hint
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _encode_fields(value)
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        branch = next((a for a in get_args(hint) if a is not type(None) and _matches(value, a)), Any)
        return _encode_value(value, branch)
    if hint is bytes:
        return base64.b64encode(value).decode("ascii")
    if origin is dict:
        key_hint, value_hint = get_args(hint)
        if get_origin(key_hint) is tuple:
            return [[*key, _encode_value(item, value_hint)] for key, item in value.items()]
        if value_hint in _AS_IS:  # e.g. a task's totals: nothing to convert
            return {str(key): item for key, item in value.items()}
        return {str(key): _encode_value(item, value_hint) for key, item in value.items()}
    if origin in (list, tuple):
        return [_encode_value(item, h) for item, h in zip(value, _item_hints(hint, len(value)), strict=True)]
    return value


def _matches(value: Any, hint: Any) -> bool:
    origin = get_origin(hint) or hint
    return isinstance(origin, type) and isinstance(value, origin)


def _item_hints(hint: Any, length: int) -> Iterable[Any]:
    args = get_args(hint)
    if get_origin(hint) is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        return args
    return [args[0] if args else Any] * length


def _encode_fields(message: Any) -> dict[str, Any]:
    hints = _hints(type(message))
    return {f.name: _encode_value(getattr(message, f.name), hints[f.name]) for f in dataclasses.fields(message)}


def _fail(where: str, expected: str, raw: Any) -> ProtocolError:
    return ProtocolError(f"{where}: expected {expected}, got {type(raw).__name__} {str(raw)[:80]!r}")


_PLAIN = {str: "a string", bool: "a boolean"}
_NUMBERS = frozenset({int, float})  # JSON's numbers, as ``json`` reads them (bool is not one)


def _decode_value(raw: Any, hint: Any, where: str) -> Any:
    if hint is Any:
        return raw
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        options = get_args(hint)
        if raw is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _decode_value(raw, option, where)
            except ProtocolError as exc:
                errors.append(str(exc))
        raise ProtocolError("; ".join(errors) or f"{where}: no value allowed")
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        if not isinstance(raw, dict):
            raise _fail(where, f"an object ({hint.__name__})", raw)
        return _decode_fields(hint, raw, where)
    if hint in _PLAIN:
        if not isinstance(raw, hint):
            raise _fail(where, _PLAIN[hint], raw)
        return raw
    if hint is int:
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise _fail(where, "an integer", raw)
        return raw
    if hint is float:
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            raise _fail(where, "a number", raw)
        return float(raw)
    if hint is bytes:
        if not isinstance(raw, str):
            raise _fail(where, "base64 text", raw)
        try:
            return base64.b64decode(raw, validate=True)
        except ValueError:
            raise _fail(where, "base64 text", raw) from None
    if origin is dict:
        return _decode_map(raw, hint, where)
    if origin in (list, tuple):
        if not isinstance(raw, list):
            raise _fail(where, "an array", raw)
        item_hints = list(_item_hints(hint, len(raw)))
        if len(item_hints) != len(raw):
            raise _fail(where, f"an array of {len(item_hints)}", raw)
        items = [
            _decode_value(item, h, f"{where}[{i}]") for i, (item, h) in enumerate(zip(raw, item_hints, strict=True))
        ]
        return tuple(items) if origin is tuple else items
    raise ProtocolError(f"{where}: no decoder for {hint!r}")


def _decode_map(raw: Any, hint: Any, where: str) -> dict[Any, Any]:
    key_hint, value_hint = get_args(hint)
    if get_origin(key_hint) is tuple:
        if not isinstance(raw, list):
            raise _fail(where, "an array of entries", raw)
        width = len(get_args(key_hint))
        out = {}
        for i, entry in enumerate(raw):
            if not isinstance(entry, list) or len(entry) != width + 1:
                raise _fail(f"{where}[{i}]", f"an entry of {width + 1} items", entry)
            key = _decode_value(entry[:width], key_hint, f"{where}[{i}]")
            out[key] = _decode_value(entry[width], value_hint, f"{where}[{i}]")
        return out
    if not isinstance(raw, dict):
        raise _fail(where, "an object", raw)
    if value_hint is float and all(type(item) in _NUMBERS for item in raw.values()):
        return {key: float(item) for key, item in raw.items()}  # e.g. a task's totals: no look one by one
    return {key: _decode_value(item, value_hint, f"{where}.{key}") for key, item in raw.items()}


def _decode_fields(cls: type[M], raw: Mapping[str, Any], where: str) -> M:
    hints = _hints(cls)
    values = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name in raw:
            values[f.name] = _decode_value(raw[f.name], hints[f.name], f"{where}.{f.name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ProtocolError(f"{where}: missing field {f.name!r}")
    return cls(**values)


# -- messages -------------------------------------------------------------------------


class MessageTypes(Generic[M]):
    """The messages one end accepts, by name."""

    def __init__(self, *classes: type[M]) -> None:
        self.by_name: dict[str, type[M]] = {cls.__name__: cls for cls in classes}

    def decode(self, payload: bytes) -> M:
        """The message in ``payload``; raises :class:`ProtocolError`."""
        try:
            envelope = json.loads(payload)
        except (UnicodeDecodeError, ValueError) as exc:
            raise ProtocolError(f"not JSON: {exc}") from None
        if not isinstance(envelope, dict):
            raise _fail("frame", "a JSON object", envelope)
        version = envelope.get("v")
        if version != PROTOCOL_VERSION:
            raise ProtocolError(f"protocol version {version!r}; this end speaks version {PROTOCOL_VERSION}")
        name = envelope.get("type")
        cls = self.by_name.get(name) if isinstance(name, str) else None
        if cls is None:
            raise ProtocolError(f"unexpected message type {name!r}; expected one of {sorted(self.by_name)}")
        body = envelope.get("body", {})
        if not isinstance(body, dict):
            raise _fail(f"{name}.body", "an object", body)
        return _decode_fields(cls, body, cls.__name__)


def encode(message: Any) -> bytes:
    """One message as a frame's payload."""
    envelope = {"v": PROTOCOL_VERSION, "type": type(message).__name__, "body": _encode_fields(message)}
    return json.dumps(envelope, separators=(",", ":"), allow_nan=False).encode()


def decode(payload: bytes, accepted: MessageTypes[M]) -> M:
    return accepted.decode(payload)


HELLO: MessageTypes[Hello] = MessageTypes(Hello)
TASK_MESSAGES: MessageTypes[TaskMessage] = MessageTypes(*get_args(TaskMessage))
WORKER_MESSAGES: MessageTypes[WorkerMessage] = MessageTypes(*get_args(WorkerMessage))


# -- framing --------------------------------------------------------------------------


class Channel(Generic[S, R]):
    """One end of a task's control connection: sends messages of type ``S`` (from any
    thread), receives messages of type ``R`` (from one thread)."""

    def __init__(self, sock: socket.socket, receives: MessageTypes[R]) -> None:
        self._sock = sock
        self._receives = receives
        self._send_lock = threading.Lock()
        self._closed = False

    def send(self, message: S) -> None:
        self._send_frame(encode(message))

    def recv(self) -> R:
        """The next message; raises :class:`ChannelClosed` when the connection ended, and
        :class:`ProtocolError` for a frame that is not a message this end accepts."""
        return self._receives.decode(self.recv_frame())

    def send_hello(self, hello: Hello) -> None:
        """The handshake's first frame (a task host's, before any other)."""
        self._send_frame(encode(hello))

    def recv_hello(self) -> Hello:
        """The handshake's first frame, read with a small size limit (the worker's end)."""
        return HELLO.decode(self.recv_frame(limit=HELLO_MAX_BYTES))

    def _send_frame(self, payload: bytes) -> None:
        frame = struct.pack(">I", len(payload)) + payload
        with self._send_lock:
            try:
                self._sock.sendall(frame)
            except OSError as exc:
                raise ChannelClosed(str(exc)) from exc

    def recv_frame(self, limit: int = MAX_FRAME_BYTES) -> bytes:
        (length,) = struct.unpack(">I", self._read(4))
        if length > limit:
            raise ChannelClosed(f"frame of {length} bytes is over the limit of {limit}")
        return self._read(length)

    def _read(self, n: int) -> bytes:
        chunks = []
        while n:
            try:
                chunk = self._sock.recv(min(n, 1 << 20))
            except OSError as exc:
                raise ChannelClosed(str(exc)) from exc
            if not chunk:
                raise ChannelClosed("connection closed")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError):  # already broken: closing is all that is left
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()


#: The task host's end: sends task messages, receives the worker's.
TaskChannel = Channel[TaskMessage, WorkerMessage]
#: The worker's end: sends worker messages, receives the task's.
WorkerChannel = Channel[WorkerMessage, TaskMessage]


def task_channel(sock: socket.socket) -> TaskChannel:
    return Channel(sock, WORKER_MESSAGES)


def worker_channel(sock: socket.socket) -> WorkerChannel:
    return Channel(sock, TASK_MESSAGES)


def connect(address: tuple[str, int], timeout_s: float = 30.0) -> TaskChannel:
    """The task host's end of a new connection to the worker at ``address``."""
    sock = socket.create_connection(address, timeout=timeout_s)
    sock.settimeout(None)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return task_channel(sock)
