"""The control protocol on the wire: every message travels as versioned JSON and comes back
equal; each end accepts only what the other end sends; frames are bounded."""

from __future__ import annotations

import json
import socket
import struct
from typing import Any, get_args

import pytest

from sluice.kafka.topics import TopicCreationGroup, TopicCreationSpec
from sluice.taskhost import protocol, wire
from sluice.taskhost.protocol import (
    Assign,
    Committed,
    Failed,
    Heartbeat,
    Hello,
    HostHeartbeat,
    HostTask,
    Pause,
    PausedAck,
    PluginSpec,
    Resume,
    RunJavaTask,
    RunSinkTask,
    RunSourceTask,
    SinkOffsets,
    SourceOffsets,
    SplitReadDone,
    SplitReadRequest,
    Started,
    Stop,
    Stopped,
    TaskSpec,
    TopicsSeen,
)
from sluice.taskhost.tolerance import ErrorPolicy
from sluice.taskhost.wire import ChannelClosed, ProtocolError

SPEC = TaskSpec(
    connector="orders",
    task=3,
    task_class="example.OrdersTask",
    task_config={"task.class": "example.OrdersTask", "table": "orders"},
    incarnation="abc123",
    key_converter=PluginSpec("sluice.converters.string.StringConverter", {"converter.type": "key"}),
    value_converter=PluginSpec("sluice.converters.json.JsonConverter", {"schemas.enable": "false"}),
    header_converter=PluginSpec("sluice.converters.simple_header.SimpleHeaderConverter"),
    errors=ErrorPolicy(tolerate_all=True, retry_timeout_ms=-1, dead_letter_topic="dlq", context_headers=True),
    transforms=PluginSpec("sluice.transforms.chain.TransformationChain", {"transforms": "a"}),
    topic_creation=TopicCreationSpec(
        (
            TopicCreationGroup("big", 3, 12, ("big-.*",), ("big-tmp",), (("cleanup.policy", "compact"),)),
            TopicCreationGroup("default", -1, -1),
        ),
        {"bootstrap.servers": "127.0.0.1:9092"},
    ),
)

EVERY_MESSAGE: list[Any] = [
    RunSourceTask(SPEC, {"linger.ms": "5"}, [({"file": "a"}, {"position": 10}), ({"file": "b"}, {"n": [1, 2]})], 250),
    RunSinkTask(SPEC, {"group.id": "connect-orders"}, {"acks": "all"}, {("t", 0): 5, ("t", 1): 0}, 100, 50, 1000),
    RunJavaTask(
        SPEC,
        True,
        {"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "topics": "t"},
        {"bootstrap.servers": "127.0.0.1:9092"},
        "127.0.0.1:8083",
        2,
        [({"filename": "a"}, {"position": 3})],
    ),
    Pause(),
    Resume(),
    Stop(),
    Committed(7),
    Committed(8, error="the store is down"),
    Committed(9, fenced=True),
    Assign({("t", 2): 42}),
    SplitReadDone(),
    SplitReadDone("part 2 failed"),
    Hello("abc123", "s3cret", 4242, "executor-1"),
    Started(),
    SourceOffsets(1, [({"file": "a"}, {"position": 11})]),
    SinkOffsets(2, {("t", 0): 6, ("u", 3): 17}),
    TopicsSeen(["t", "u"]),
    SplitReadRequest([b"\x80\x05part-1", b""]),
    PausedAck(),
    Heartbeat({"poll_total": 10, "poll_time_ms": 1.5}),
    Heartbeat(),
    HostHeartbeat({"0f3a": {"poll_total": 10.0}, "9c1e": {"put_batches": 2.0}}),
    HostHeartbeat(),
    Failed("Traceback (most recent call last):\n  ...\nValueError: no\n"),
    Stopped(),
    HostTask("0123abcd", "s3cret"),
]


def _accepting(message: Any) -> wire.MessageTypes[Any]:
    return wire.MessageTypes(type(message))


@pytest.mark.parametrize("message", EVERY_MESSAGE, ids=lambda m: type(m).__name__)
def test_every_message_comes_back_equal(message: Any) -> None:
    assert wire.decode(wire.encode(message), _accepting(message)) == message


def test_every_message_type_is_covered() -> None:
    covered = {type(m) for m in EVERY_MESSAGE}
    assert set(get_args(protocol.TaskMessage)) | set(get_args(protocol.WorkerMessage)) | {Hello} == covered


def test_a_frame_is_versioned_json_that_another_language_can_read() -> None:
    frame = json.loads(wire.encode(SinkOffsets(2, {("t", 0): 6})))
    assert frame == {"v": 1, "type": "SinkOffsets", "body": {"seq": 2, "offsets": [["t", 0, 6]]}}
    launch = json.loads(wire.encode(EVERY_MESSAGE[0]))["body"]
    assert launch["committed_offsets"][0] == [{"file": "a"}, {"position": 10}]
    assert launch["task"]["errors"]["dead_letter_topic"] == "dlq"
    assert launch["task"]["topic_creation"]["groups"][0]["topic_configs"] == [["cleanup.policy", "compact"]]
    parts = json.loads(wire.encode(SplitReadRequest([b"\x00\xff"])))["body"]["parts"]
    assert parts == ["AP8="]  # bytes as base64 text


def test_each_end_accepts_only_what_the_other_end_sends() -> None:
    with pytest.raises(ProtocolError, match="unexpected message type 'Resume'"):
        wire.decode(wire.encode(Resume()), wire.TASK_MESSAGES)
    with pytest.raises(ProtocolError, match="unexpected message type 'SourceOffsets'"):
        wire.decode(wire.encode(SourceOffsets(1, [])), wire.WORKER_MESSAGES)
    with pytest.raises(ProtocolError, match="unexpected message type 'Hello'"):
        wire.decode(wire.encode(Hello("a", "b", 1, "h")), wire.TASK_MESSAGES)


@pytest.mark.parametrize(
    ("payload", "error"),
    [
        (b"\x80\x04K\x01.", "not JSON"),
        (b"[1, 2]", "expected a JSON object"),
        (b'{"v": 2, "type": "Started", "body": {}}', "protocol version 2; this end speaks version 1"),
        (b'{"type": "Started", "body": {}}', "protocol version None"),
        (b'{"v": 1, "type": "Exploit", "body": {}}', "unexpected message type 'Exploit'"),
        (b'{"v": 1, "type": "SourceOffsets", "body": {"offsets": []}}', "missing field 'seq'"),
        (
            b'{"v": 1, "type": "SourceOffsets", "body": {"seq": "1", "offsets": []}}',
            "SourceOffsets.seq: expected an integer",
        ),
        (b'{"v": 1, "type": "SourceOffsets", "body": {"seq": true, "offsets": []}}', "expected an integer"),
        (b'{"v": 1, "type": "SinkOffsets", "body": {"seq": 1, "offsets": [["t", 0]]}}', "an entry of 3 items"),
        (b'{"v": 1, "type": "SinkOffsets", "body": {"seq": 1, "offsets": [["t", "0", 5]]}}', "expected an integer"),
        (b'{"v": 1, "type": "SplitReadRequest", "body": {"parts": ["not base64!"]}}', "expected base64 text"),
        (b'{"v": 1, "type": "Failed", "body": {"trace": null}}', "Failed.trace: expected a string"),
        (b'{"v": 1, "type": "Heartbeat", "body": {"metrics": {"a": 1, "b": true}}}', "metrics.b: expected a number"),
        (b'{"v": 1, "type": "Heartbeat", "body": {"metrics": {"a": "1"}}}', "metrics.a: expected a number"),
        (
            b'{"v": 1, "type": "HostHeartbeat", "body": {"metrics": {"t": {"a": "1"}}}}',
            "metrics.t.a: expected a number",
        ),
    ],
)
def test_a_frame_that_is_not_a_valid_message_is_refused_with_the_reason(payload: bytes, error: str) -> None:
    with pytest.raises(ProtocolError, match=error):
        wire.decode(payload, wire.TASK_MESSAGES)


def test_fields_a_newer_peer_adds_are_ignored_and_missing_ones_take_their_defaults() -> None:
    payload = b'{"v": 1, "type": "Committed", "body": {"seq": 4, "since": "v2"}}'
    assert wire.decode(payload, wire.WORKER_MESSAGES) == Committed(4)


def test_values_json_cannot_carry_are_refused_when_sent() -> None:
    with pytest.raises(ValueError, match="JSON compliant"):
        wire.encode(Heartbeat({"lag": float("nan")}))


# -- the channel ------------------------------------------------------------------------


@pytest.fixture
def ends() -> Any:
    worker_sock, task_sock = socket.socketpair()
    worker_end, task_end = wire.worker_channel(worker_sock), wire.task_channel(task_sock)
    yield worker_end, task_end, worker_sock, task_sock
    worker_end.close()
    task_end.close()


def test_messages_cross_the_channel_typed_both_ways(ends: Any) -> None:
    worker_end, task_end, _, _ = ends
    task_end.send_hello(Hello("abc", "secret", 7, "host"))
    assert worker_end.recv_hello() == Hello("abc", "secret", 7, "host")
    worker_end.send(EVERY_MESSAGE[1])
    worker_end.send(Resume())
    assert task_end.recv() == EVERY_MESSAGE[1]
    assert task_end.recv() == Resume()
    task_end.send(SinkOffsets(1, {("t", 0): 6}))
    assert worker_end.recv() == SinkOffsets(1, {("t", 0): 6})


def test_a_hello_over_its_size_limit_ends_the_connection_unread(ends: Any) -> None:
    worker_end, _, _, task_sock = ends
    task_sock.sendall(struct.pack(">I", wire.HELLO_MAX_BYTES + 1) + b"x" * 16)
    with pytest.raises(ChannelClosed, match="over the limit"):
        worker_end.recv_hello()


def test_a_closed_connection_is_reported_as_closed(ends: Any) -> None:
    worker_end, task_end, _, task_sock = ends
    task_sock.sendall(struct.pack(">I", 100) + b"{")  # a frame cut short
    task_end.close()
    with pytest.raises(ChannelClosed):
        worker_end.recv()
    with pytest.raises(ChannelClosed):
        task_end.send(Started())
