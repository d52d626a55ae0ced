"""Kafka Connect's ``connect`` group protocol: member metadata and assignments, byte for byte.

Workers of one ``group.id`` join a Kafka consumer-style group whose protocol type is
``connect``. Each offers, in order of preference, the sub-protocols its
``connect.protocol`` setting allows, each with its own metadata:

* ``connect.protocol=sessioned`` (the default): ``sessioned`` (v2), ``compatible`` (v1),
  ``default`` (v0);
* ``connect.protocol=compatible``: ``compatible`` (v1), ``default`` (v0);
* ``connect.protocol=eager``: ``default`` (v0).

The broker picks the first sub-protocol every member offers; versions 1 and 2 are the
incremental cooperative protocol (KIP-415; 2 adds KIP-507's session keys, the bytes are
the same), version 0 the eager one where every rebalance revokes everything.

Encodings (Kafka's ``protocol.types``: big-endian integers, ``STRING`` = int16 length +
UTF-8, ``BYTES`` = int32 length + bytes with -1 for null, ``ARRAY`` = int32 count with -1
for null)::

    metadata v0      version:int16  url:STRING  config_offset:int64
    metadata v1/v2   version:int16  url:STRING  config_offset:int64  allocation:NULLABLE_BYTES
                     (allocation = the member's current assignment, encoded as below, or null)

    assignment v0    version:int16  error:int16  leader:STRING  leader_url:STRING
                     config_offset:int64  assignment:[connector:STRING tasks:[int32]]
    assignment v1/v2 the same, then  revoked:[connector:STRING tasks:[int32]]  delay:int32

In the per-connector entries the task number -1 stands for the connector instance itself.
Readers tolerate missing trailing fields (an absent ``allocation`` is null, absent
``revoked`` is empty, absent ``delay`` is 0) and any header version >= 0, as Kafka's do,
so a v0 assignment decodes with the v1 reader.

The encoder groups each side's entries by connector in first-seen order: connectors first
(each entry starting with -1), then tasks in the order given. Kafka orders the connector
entries by a ``HashSet``'s iteration, so bytes match Java's exactly when an assignment
names at most one connector per side, and decode to the same assignment always.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sluice.api.errors import ConnectError

__all__ = [
    "CONFIG_MISMATCH",
    "CONNECTOR_TASK",
    "CONNECT_PROTOCOL_V0",
    "CONNECT_PROTOCOL_V1",
    "CONNECT_PROTOCOL_V2",
    "NO_ERROR",
    "PROTOCOL_TYPE",
    "Assignment",
    "ConnectProtocolCompatibility",
    "ProtocolError",
    "TaskId",
    "WorkerState",
    "decode_assignment",
    "decode_assignment_with_version",
    "decode_metadata",
    "encode_assignment",
    "encode_metadata",
    "group_protocols",
]

#: The group's protocol type (JoinGroup ``protocol_type``).
PROTOCOL_TYPE = "connect"

CONNECT_PROTOCOL_V0 = 0
CONNECT_PROTOCOL_V1 = 1
CONNECT_PROTOCOL_V2 = 2

#: The task number that stands for the connector instance in an assignment entry.
CONNECTOR_TASK = -1

#: ``Assignment.error``: the assignment is valid.
NO_ERROR = 0
#: ``Assignment.error``: the leader was behind the newest config offset a member reported;
#: members read the config topic to its end and rejoin.
CONFIG_MISMATCH = 1

#: A task: (connector name, task number).
TaskId = tuple[str, int]


class ProtocolError(ConnectError):
    """Bytes that are not a valid Connect group metadata or assignment."""


class ConnectProtocolCompatibility(enum.Enum):
    """``connect.protocol``: which sub-protocols a worker offers (Kafka's enum of that name).

    Each member is the sub-protocol's name on the wire and its version.
    """

    EAGER = ("default", CONNECT_PROTOCOL_V0)
    COMPATIBLE = ("compatible", CONNECT_PROTOCOL_V1)
    SESSIONED = ("sessioned", CONNECT_PROTOCOL_V2)

    def __init__(self, protocol: str, version: int) -> None:
        self.protocol = protocol
        self.version = version

    @classmethod
    def from_config(cls, name: str) -> ConnectProtocolCompatibility:
        """The mode for a ``connect.protocol`` value (``eager``/``compatible``/``sessioned``,
        any case)."""
        for mode in cls:
            if mode.name.lower() == name.strip().lower():
                return mode
        raise ConnectError(f"Unknown Connect protocol compatibility mode: {name}")

    @classmethod
    def from_protocol(cls, protocol: str) -> ConnectProtocolCompatibility:
        """The mode for a sub-protocol name chosen by the broker (``default`` → EAGER)."""
        for mode in cls:
            if mode.protocol == protocol.lower():
                return mode
        raise ConnectError(f"Not found Connect protocol compatibility mode for protocol: {protocol}")

    @classmethod
    def from_version(cls, version: int) -> ConnectProtocolCompatibility:
        for mode in cls:
            if mode.version == version:
                return mode
        raise ConnectError(f"Unknown Connect protocol version: {version}")

    def offered(self) -> list[ConnectProtocolCompatibility]:
        """The sub-protocols this mode offers, most preferred first."""
        order = [
            ConnectProtocolCompatibility.SESSIONED,
            ConnectProtocolCompatibility.COMPATIBLE,
            ConnectProtocolCompatibility.EAGER,
        ]
        return order[order.index(self) :]


@dataclass
class Assignment:
    """One worker's assignment (Kafka's ``ExtendedAssignment``).

    On the wire, from the leader: ``connectors``/``tasks`` are what the worker starts this
    round and ``revoked_*`` what it stops (incremental protocols), or everything it runs
    (eager protocol). :class:`~sluice.runtime.distributed.member.WorkerGroupMember` hands
    its listener the worker's *complete* assignment after the round. ``delay_ms`` > 0 says
    a rebalance is scheduled that far ahead (work of departed workers is being held back).
    """

    error: int
    leader: str | None
    leader_url: str | None
    config_offset: int
    connectors: list[str] = field(default_factory=list)
    tasks: list[TaskId] = field(default_factory=list)
    revoked_connectors: list[str] = field(default_factory=list)
    revoked_tasks: list[TaskId] = field(default_factory=list)
    delay_ms: int = 0

    @property
    def failed(self) -> bool:
        """True when the leader could not assign (``error != NO_ERROR``)."""
        return self.error != NO_ERROR


@dataclass
class WorkerState:
    """A member's metadata: its REST URL, the config topic offset it has read to, and
    (incremental protocols) the assignment it currently runs."""

    url: str
    config_offset: int
    assignment: Assignment | None = None


# ---------------------------------------------------------------------------------------
# Primitive readers and writers (Kafka protocol types)
# ---------------------------------------------------------------------------------------


class _Writer:
    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def int16(self, value: int) -> None:
        self._parts.append(struct.pack(">h", value))

    def int32(self, value: int) -> None:
        self._parts.append(struct.pack(">i", value))

    def int64(self, value: int) -> None:
        self._parts.append(struct.pack(">q", value))

    def string(self, value: str | None, name: str) -> None:
        if value is None:
            raise ProtocolError(f"Missing value for non-nullable field {name}")
        data = value.encode("utf-8")
        if len(data) > 0x7FFF:
            raise ProtocolError(f"String field {name} is longer than 32767 bytes")
        self.int16(len(data))
        self._parts.append(data)

    def nullable_bytes(self, value: bytes | None) -> None:
        if value is None:
            self.int32(-1)
        else:
            self.int32(len(value))
            self._parts.append(value)

    def getvalue(self) -> bytes:
        return b"".join(self._parts)


class _Reader:
    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self._data = bytes(data)
        self._pos = 0

    @property
    def remaining(self) -> int:
        return len(self._data) - self._pos

    def _take(self, size: int, what: str) -> bytes:
        if size < 0 or self._pos + size > len(self._data):
            raise ProtocolError(f"Error reading field '{what}': not enough bytes")
        chunk = self._data[self._pos : self._pos + size]
        self._pos += size
        return chunk

    def int16(self, what: str) -> int:
        return int(struct.unpack(">h", self._take(2, what))[0])

    def int32(self, what: str) -> int:
        return int(struct.unpack(">i", self._take(4, what))[0])

    def int64(self, what: str) -> int:
        return int(struct.unpack(">q", self._take(8, what))[0])

    def string(self, what: str) -> str:
        size = self.int16(what)
        if size < 0:
            raise ProtocolError(f"Error reading field '{what}': string length {size} cannot be negative")
        try:
            return self._take(size, what).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError(f"Error reading field '{what}': {exc}") from None

    def nullable_bytes(self, what: str) -> bytes | None:
        size = self.int32(what)
        if size < 0:
            return None
        return self._take(size, what)

    def array_count(self, what: str) -> int | None:
        count = self.int32(what)
        if count < 0:
            return None
        if count > self.remaining:  # each element takes at least one byte
            raise ProtocolError(f"Error reading field '{what}': array of {count} elements is too long")
        return count


# ---------------------------------------------------------------------------------------
# Connector assignment entries
# ---------------------------------------------------------------------------------------


def _entries(connectors: Iterable[str], tasks: Iterable[TaskId]) -> list[tuple[str, list[int]]]:
    grouped: dict[str, list[int]] = {}
    for connector in dict.fromkeys(connectors):
        grouped.setdefault(connector, []).append(CONNECTOR_TASK)
    for connector, task in tasks:
        grouped.setdefault(connector, []).append(task)
    return list(grouped.items())


def _write_entries(writer: _Writer, connectors: Sequence[str], tasks: Sequence[TaskId]) -> None:
    entries = _entries(connectors, tasks)
    writer.int32(len(entries))
    for connector, ids in entries:
        writer.string(connector, "connector")
        writer.int32(len(ids))
        for task in ids:
            writer.int32(task)


def _read_entries(reader: _Reader, what: str) -> tuple[list[str], list[TaskId]]:
    count = reader.array_count(what)
    connectors: list[str] = []
    tasks: list[TaskId] = []
    for _ in range(count or 0):
        connector = reader.string("connector")
        n = reader.array_count("tasks")
        if n is None:
            raise ProtocolError("Error reading field 'tasks': null array")
        for _ in range(n):
            task = reader.int32("tasks")
            if task == CONNECTOR_TASK:
                connectors.append(connector)
            else:
                tasks.append((connector, task))
    return connectors, tasks


# ---------------------------------------------------------------------------------------
# Assignments
# ---------------------------------------------------------------------------------------


def encode_assignment(assignment: Assignment, version: int) -> bytes:
    """The bytes of ``assignment`` for sub-protocol ``version`` (0, 1 or 2).

    Version 0 has no ``revoked`` and ``delay`` fields (they must be empty/0 to encode it).
    """
    if version not in (CONNECT_PROTOCOL_V0, CONNECT_PROTOCOL_V1, CONNECT_PROTOCOL_V2):
        raise ProtocolError(f"Unknown Connect protocol version: {version}")
    writer = _Writer()
    writer.int16(version)
    writer.int16(assignment.error)
    writer.string(assignment.leader, "leader")
    writer.string(assignment.leader_url, "leader-url")
    writer.int64(assignment.config_offset)
    _write_entries(writer, assignment.connectors, assignment.tasks)
    if version == CONNECT_PROTOCOL_V0:
        if assignment.revoked_connectors or assignment.revoked_tasks or assignment.delay_ms:
            raise ProtocolError("An eager (v0) assignment cannot carry revocations or a delay")
    else:
        _write_entries(writer, assignment.revoked_connectors, assignment.revoked_tasks)
        writer.int32(assignment.delay_ms)
    return writer.getvalue()


def decode_assignment_with_version(data: bytes | bytearray | memoryview) -> tuple[int, Assignment]:
    """``(header version, assignment)`` read from ``data`` (any version, as Kafka reads it)."""
    reader = _Reader(data)
    version = reader.int16("version")
    if version < CONNECT_PROTOCOL_V0:
        raise ProtocolError(f"Unsupported subscription version: {version}")
    error = reader.int16("error")
    leader = reader.string("leader")
    leader_url = reader.string("leader-url")
    offset = reader.int64("config-offset")
    connectors, tasks = _read_entries(reader, "assignment")
    revoked_connectors: list[str] = []
    revoked_tasks: list[TaskId] = []
    delay = 0
    if reader.remaining:
        revoked_connectors, revoked_tasks = _read_entries(reader, "revoked")
    if reader.remaining:
        delay = reader.int32("delay")
    return version, Assignment(
        error=error,
        leader=leader,
        leader_url=leader_url,
        config_offset=offset,
        connectors=connectors,
        tasks=tasks,
        revoked_connectors=revoked_connectors,
        revoked_tasks=revoked_tasks,
        delay_ms=delay,
    )


def decode_assignment(data: bytes | bytearray | memoryview) -> Assignment:
    """The assignment in ``data`` (any version)."""
    return decode_assignment_with_version(data)[1]


# ---------------------------------------------------------------------------------------
# Member metadata
# ---------------------------------------------------------------------------------------


def encode_metadata(state: WorkerState, version: int) -> bytes:
    """A member's JoinGroup metadata for sub-protocol ``version``.

    Version 0 carries the URL and config offset; 1 and 2 add the current assignment
    (encoded with the same version; null when the worker has none).
    """
    if version not in (CONNECT_PROTOCOL_V0, CONNECT_PROTOCOL_V1, CONNECT_PROTOCOL_V2):
        raise ProtocolError(f"Unknown Connect protocol version: {version}")
    writer = _Writer()
    writer.int16(version)
    writer.string(state.url, "url")
    writer.int64(state.config_offset)
    if version != CONNECT_PROTOCOL_V0:
        allocation = None if state.assignment is None else encode_assignment(state.assignment, version)
        writer.nullable_bytes(allocation)
    return writer.getvalue()


def decode_metadata(data: bytes | bytearray | memoryview) -> WorkerState:
    """A member's metadata (any version; a missing or null allocation is ``None``)."""
    reader = _Reader(data)
    version = reader.int16("version")
    if version < CONNECT_PROTOCOL_V0:
        raise ProtocolError(f"Unsupported subscription version: {version}")
    url = reader.string("url")
    offset = reader.int64("config-offset")
    assignment = None
    if reader.remaining:
        allocation = reader.nullable_bytes("allocation")
        if allocation is not None:
            assignment = decode_assignment(allocation)
    return WorkerState(url=url, config_offset=offset, assignment=assignment)


def group_protocols(state: WorkerState, compatibility: ConnectProtocolCompatibility) -> list[tuple[str, bytes]]:
    """The ``(sub-protocol name, metadata)`` pairs a worker offers, most preferred first."""
    return [(mode.protocol, encode_metadata(state, mode.version)) for mode in compatibility.offered()]
