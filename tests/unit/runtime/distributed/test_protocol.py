"""Kafka Connect's group protocol encodings, against bytes written out by hand from the
schemas of ``ConnectProtocol`` / ``IncrementalCooperativeConnectProtocol``."""

from __future__ import annotations

import struct

import pytest

from sluice.api.errors import ConnectError
from sluice.runtime.distributed.protocol import (
    CONFIG_MISMATCH,
    Assignment,
    ConnectProtocolCompatibility,
    ProtocolError,
    WorkerState,
    decode_assignment,
    decode_assignment_with_version,
    decode_metadata,
    encode_assignment,
    encode_metadata,
    group_protocols,
)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def s(text: str) -> bytes:
    data = text.encode()
    return i16(len(data)) + data


def entry(connector: str, *tasks: int) -> bytes:
    return s(connector) + i32(len(tasks)) + b"".join(i32(t) for t in tasks)


ASSIGNMENT = Assignment(
    error=0,
    leader="connect-1-abc",
    leader_url="http://w1:8083/",
    config_offset=42,
    connectors=["src"],
    tasks=[("src", 0), ("src", 1)],
    revoked_connectors=[],
    revoked_tasks=[("sink", 2)],
    delay_ms=1500,
)

# Header, error, leader, leader-url, config-offset, assignment [src: -1 0 1],
# revoked [sink: 2], delay.
ASSIGNMENT_BODY = (
    i16(0)
    + s("connect-1-abc")
    + s("http://w1:8083/")
    + i64(42)
    + i32(1)
    + entry("src", -1, 0, 1)
    + i32(1)
    + entry("sink", 2)
    + i32(1500)
)


@pytest.mark.parametrize("version", [1, 2])
def test_incremental_assignment_bytes(version: int) -> None:
    assert encode_assignment(ASSIGNMENT, version) == i16(version) + ASSIGNMENT_BODY


def test_eager_assignment_bytes() -> None:
    eager = Assignment(
        error=0, leader="L", leader_url="http://l", config_offset=-1, connectors=["a", "b"], tasks=[("a", 0), ("b", 3)]
    )
    assert encode_assignment(eager, 0) == (
        i16(0) + i16(0) + s("L") + s("http://l") + i64(-1) + i32(2) + entry("a", -1, 0) + entry("b", -1, 3)
    )


def test_eager_assignment_cannot_carry_revocations() -> None:
    with pytest.raises(ProtocolError):
        encode_assignment(ASSIGNMENT, 0)


def test_tasks_of_a_connector_not_assigned_get_their_own_entry() -> None:
    a = Assignment(
        error=0, leader="L", leader_url="u", config_offset=0, connectors=["b"], tasks=[("a", 1), ("b", 0), ("a", 0)]
    )
    data = encode_assignment(a, 1)
    # connectors first ([b: -1]), then tasks in order: b gains 0, a gets its own entry [1, 0].
    assert data == (
        i16(1) + i16(0) + s("L") + s("u") + i64(0) + i32(2) + entry("b", -1, 0) + entry("a", 1, 0) + i32(0) + i32(0)
    )
    back = decode_assignment(data)
    assert back.connectors == ["b"]
    assert back.tasks == [("b", 0), ("a", 1), ("a", 0)]


@pytest.mark.parametrize("version", [0, 1, 2])
def test_assignment_round_trip(version: int) -> None:
    a = Assignment(
        error=CONFIG_MISMATCH,
        leader="L",
        leader_url="http://x",
        config_offset=7,
        connectors=["c1", "c2"],
        tasks=[("c1", 0), ("c3", 5)],
    )
    got_version, back = decode_assignment_with_version(encode_assignment(a, version))
    assert got_version == version
    assert back == a
    assert back.failed


def test_v1_reader_reads_a_v0_assignment_with_defaults() -> None:
    data = i16(0) + i16(0) + s("L") + s("u") + i64(3) + i32(1) + entry("x", -1, 0)
    a = decode_assignment(data)
    assert (a.connectors, a.tasks, a.revoked_connectors, a.revoked_tasks, a.delay_ms) == (["x"], [("x", 0)], [], [], 0)


def test_null_arrays_decode_as_empty() -> None:
    data = i16(1) + i16(0) + s("L") + s("u") + i64(3) + i32(-1) + i32(-1) + i32(0)
    a = decode_assignment(data)
    assert a.connectors == [] and a.tasks == [] and a.revoked_tasks == []


def test_future_versions_are_read_like_v1() -> None:
    data = i16(7) + ASSIGNMENT_BODY + b"trailing fields of a newer version"
    version, a = decode_assignment_with_version(data)
    assert version == 7
    assert a == ASSIGNMENT


@pytest.mark.parametrize(
    "data",
    [
        b"",
        i16(-1) + ASSIGNMENT_BODY,  # negative version
        i16(1) + ASSIGNMENT_BODY[:10],  # truncated
        i16(1) + i16(0) + i16(-3),  # negative string length
        i16(1) + i16(0) + s("L") + s("u") + i64(0) + i32(1_000_000),  # array longer than the data
    ],
)
def test_malformed_assignments_raise(data: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_assignment(data)


def test_empty_assignment_with_null_leader_cannot_be_encoded() -> None:
    with pytest.raises(ProtocolError):
        encode_assignment(Assignment(error=0, leader=None, leader_url=None, config_offset=-1), 1)


# --- metadata -------------------------------------------------------------------------


def test_metadata_v0_bytes() -> None:
    state = WorkerState(url="http://w:8083/", config_offset=12, assignment=ASSIGNMENT)
    assert encode_metadata(state, 0) == i16(0) + s("http://w:8083/") + i64(12)


@pytest.mark.parametrize("version", [1, 2])
def test_metadata_with_assignment_bytes(version: int) -> None:
    state = WorkerState(url="http://w:8083/", config_offset=12, assignment=ASSIGNMENT)
    allocation = i16(version) + ASSIGNMENT_BODY
    assert encode_metadata(state, version) == (
        i16(version) + s("http://w:8083/") + i64(12) + i32(len(allocation)) + allocation
    )
    assert decode_metadata(encode_metadata(state, version)) == state


@pytest.mark.parametrize("version", [1, 2])
def test_metadata_without_assignment_has_null_allocation(version: int) -> None:
    state = WorkerState(url="http://w/", config_offset=-1)
    data = encode_metadata(state, version)
    assert data == i16(version) + s("http://w/") + i64(-1) + i32(-1)
    assert decode_metadata(data) == state


def test_v0_metadata_decodes_without_assignment() -> None:
    assert decode_metadata(i16(0) + s("http://w/") + i64(5)) == WorkerState("http://w/", 5, None)


def test_utf8_urls_and_names() -> None:
    state = WorkerState(
        url="http://wörker:8083/",
        config_offset=1,
        assignment=Assignment(0, "L", "http://wörker:8083/", 1, ["connecteur-é"], [("connecteur-é", 0)]),
    )
    assert decode_metadata(encode_metadata(state, 2)) == state
    assert s("é") == b"\x00\x02\xc3\xa9"


# --- sub-protocols --------------------------------------------------------------------


def test_protocols_offered_per_mode() -> None:
    state = WorkerState(url="u", config_offset=3)
    assert [name for name, _ in group_protocols(state, ConnectProtocolCompatibility.SESSIONED)] == [
        "sessioned",
        "compatible",
        "default",
    ]
    assert [name for name, _ in group_protocols(state, ConnectProtocolCompatibility.COMPATIBLE)] == [
        "compatible",
        "default",
    ]
    assert [name for name, _ in group_protocols(state, ConnectProtocolCompatibility.EAGER)] == ["default"]
    offered = dict(group_protocols(state, ConnectProtocolCompatibility.SESSIONED))
    assert offered["sessioned"][:2] == i16(2)
    assert offered["compatible"][:2] == i16(1)
    assert offered["default"] == i16(0) + s("u") + i64(3)


def test_compatibility_names() -> None:
    C = ConnectProtocolCompatibility
    assert C.from_config("SESSIONED") is C.SESSIONED
    assert C.from_config("eager") is C.EAGER
    assert C.from_protocol("default") is C.EAGER
    assert C.from_protocol("compatible") is C.COMPATIBLE
    assert C.from_version(2) is C.SESSIONED
    assert (C.EAGER.protocol, C.EAGER.version) == ("default", 0)
    with pytest.raises(ConnectError, match="Unknown Connect protocol compatibility mode: cooperative"):
        C.from_config("cooperative")
    with pytest.raises(ConnectError, match="protocol: eager"):
        C.from_protocol("eager")  # the wire name of eager is "default"
