"""The control channel between the worker (Spark's driver) and its running tasks.

Each running Connect task is one long-lived Spark task. Its Python function connects
back to the worker's control server (:mod:`sluice.spark.control`) and, for the task's
whole life, exchanges the messages below over that one TCP connection:

* task → worker: :class:`Hello` (first, as JSON: who it is and the task's secret),
  :class:`Started`, :class:`SourceOffsets` / :class:`SinkOffsets` (to commit),
  :class:`TopicsSeen`, :class:`SplitReadRequest`, :class:`PausedAck`, :class:`Heartbeat`,
  :class:`Failed` and, last, :class:`Stopped`;
* worker → task: :class:`Pause`, :class:`Resume`, :class:`Stop`, :class:`Committed`
  (the answer to an offsets message), :class:`Assign` (a sink's partitions changed) and
  :class:`SplitReadDone`.

Frames are a 4-byte big-endian length and a payload. The first frame a task sends is
JSON, so that the worker unpickles nothing before the task proved it knows its launch's
secret; every later frame is a pickle of one message. Only :mod:`sluice.api` and the
standard library are imported here: executors load this module.
"""

from __future__ import annotations

import contextlib
import json
import pickle
import socket
import struct
import threading
from dataclasses import dataclass, field
from typing import Any

from sluice.spark.errors import ErrorPolicy
from sluice.spark.topic_creation import TopicCreationSpec

__all__ = [
    "Assign",
    "Channel",
    "ChannelClosed",
    "Committed",
    "Failed",
    "Heartbeat",
    "Hello",
    "LaunchSpec",
    "Pause",
    "PausedAck",
    "PluginSpec",
    "Resume",
    "SinkOffsets",
    "SourceOffsets",
    "SplitReadDone",
    "SplitReadRequest",
    "Started",
    "Stop",
    "Stopped",
    "TaskSpec",
    "TopicsSeen",
]

MAX_FRAME_BYTES = 256 * 1024 * 1024
HELLO_MAX_BYTES = 64 * 1024

# A source partition and its offset, as the task gave them (JSON-able dicts).
SourceOffset = tuple[dict[str, Any], dict[str, Any]]
TopicPartitionKey = tuple[str, int]


@dataclass(frozen=True)
class PluginSpec:
    """A plugin to instantiate on the executor: its Python class path and configs."""

    class_path: str
    configs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskSpec:
    """Everything an executor needs to (re)create one Connect task. Picklable."""

    connector: str
    task: int
    task_class: str
    task_config: dict[str, str]
    incarnation: str
    key_converter: PluginSpec
    value_converter: PluginSpec
    header_converter: PluginSpec
    errors: ErrorPolicy = field(default_factory=ErrorPolicy)
    # The transformation chain's class and the connector's transforms.*/predicates.* keys,
    # with plugin classes resolved to Python paths; None: no transforms.
    transforms: PluginSpec | None = None
    # Source connectors with topic.creation.* settings (and the worker allowing it).
    topic_creation: TopicCreationSpec | None = None

    @property
    def host_key(self) -> tuple[str, int]:
        return (self.connector, self.task)


@dataclass(frozen=True)
class LaunchSpec:
    """One launch of a task as a long-lived Spark task: where its worker listens, the
    secret that proves the connection is this launch's, and what the task loop needs
    beyond the task itself. Travels to the executor inside the Spark job's closure."""

    task: TaskSpec
    kind: str  # "source" | "sink"
    address: tuple[str, int]
    secret: str
    # librdkafka settings of the task's producer (source records, dead letters)
    producer_config: dict[str, str] = field(default_factory=dict)
    # librdkafka settings of a sink task's consumer
    consumer_config: dict[str, str] = field(default_factory=dict)
    # source: the offsets stored when the task was launched
    committed_offsets: list[SourceOffset] = field(default_factory=list)
    # sink: the partitions and where to read each from
    assignment: dict[TopicPartitionKey, int] = field(default_factory=dict)
    # most records handed to the task (poll results written, consumer records per put)
    max_records: int = 500_000
    # how long an idle sink waits for records before calling put([]) (Kafka's poll timeout)
    poll_interval_ms: int = 100
    # how often offsets are sent to the worker to be committed
    offset_flush_interval_ms: int = 60_000
    heartbeat_interval_ms: int = 2_000


# -- task → worker -------------------------------------------------------------------


@dataclass(frozen=True)
class Hello:
    """The first frame: the launch it belongs to and where it runs."""

    incarnation: str
    secret: str
    pid: int
    host: str

    def to_json(self) -> bytes:
        return json.dumps(
            {"incarnation": self.incarnation, "secret": self.secret, "pid": self.pid, "host": self.host}
        ).encode()

    @classmethod
    def from_json(cls, payload: bytes) -> Hello:
        raw = json.loads(payload)
        if not isinstance(raw, dict):
            raise ValueError("hello is not a JSON object")
        return cls(str(raw["incarnation"]), str(raw["secret"]), int(raw["pid"]), str(raw["host"]))


@dataclass(frozen=True)
class Started:
    """The task instance started (``start`` and, for a sink, ``open`` returned)."""


@dataclass(frozen=True)
class SourceOffsets:
    """Offsets of records Kafka acknowledged, to store; answered by :class:`Committed`."""

    seq: int
    offsets: list[SourceOffset]


@dataclass(frozen=True)
class SinkOffsets:
    """Offsets ``pre_commit`` returned, to commit to the connector's consumer group;
    answered by :class:`Committed`."""

    seq: int
    offsets: dict[TopicPartitionKey, int]


@dataclass(frozen=True)
class TopicsSeen:
    """Topics the task used for the first time (written to, or consumed from)."""

    topics: list[str]


@dataclass(frozen=True)
class SplitReadRequest:
    """The task asked to split a read across Spark partitions; answered by :class:`SplitReadDone`."""

    parts: list[Any]


@dataclass(frozen=True)
class PausedAck:
    """The task does no more work until resumed (no ``poll``/``put`` under way)."""


@dataclass(frozen=True)
class Heartbeat:
    """The task is alive; ``metrics`` are its :class:`~sluice.spark.task_metrics.TaskMeter`
    totals so far."""

    metrics: dict[str, float] | None = None


@dataclass(frozen=True)
class Failed:
    """The task failed; its instance is being stopped. ``trace`` becomes the status trace."""

    trace: str


@dataclass(frozen=True)
class Stopped:
    """The last message: the instance stopped (after a :class:`Stop` or a :class:`Failed`)."""


# -- worker → task -------------------------------------------------------------------


@dataclass(frozen=True)
class Pause:
    pass


@dataclass(frozen=True)
class Resume:
    pass


@dataclass(frozen=True)
class Stop:
    pass


@dataclass(frozen=True)
class Committed:
    """The answer to an offsets message: stored (``error`` None), skipped because the
    task no longer owns its work (``fenced``), or failed."""

    seq: int
    error: str | None = None
    fenced: bool = False


@dataclass(frozen=True)
class Assign:
    """A sink task's new partitions and where to read each newly assigned one from."""

    assignment: dict[TopicPartitionKey, int]


@dataclass(frozen=True)
class SplitReadDone:
    failure: str | None = None


# -- framing -------------------------------------------------------------------------


class ChannelClosed(Exception):
    """The other end closed the connection or it broke."""


class Channel:
    """One end of a task's control connection: framed messages, sends from any thread."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._send_lock = threading.Lock()
        self._closed = False

    @classmethod
    def connect(cls, address: tuple[str, int], timeout_s: float = 30.0) -> Channel:
        sock = socket.create_connection(address, timeout=timeout_s)
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(sock)

    def send_raw(self, payload: bytes) -> None:
        frame = struct.pack(">I", len(payload)) + payload
        with self._send_lock:
            try:
                self._sock.sendall(frame)
            except OSError as exc:
                raise ChannelClosed(str(exc)) from exc

    def send(self, message: Any) -> None:
        self.send_raw(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))

    def recv_raw(self, limit: int = MAX_FRAME_BYTES) -> bytes:
        (length,) = struct.unpack(">I", self._read(4))
        if length > limit:
            raise ChannelClosed(f"frame of {length} bytes is over the limit of {limit}")
        return self._read(length)

    def recv(self) -> Any:
        return pickle.loads(self.recv_raw())

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
