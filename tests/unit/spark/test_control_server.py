"""The handshake at the worker's control server: a connection reaches its launch only with
the launch's secret in its first frame, once; anything else is closed before a second
frame is read."""

from __future__ import annotations

import queue
import socket
import struct
from collections.abc import Iterator

import pytest

from sluice.spark.control import ControlServer
from sluice.taskhost import wire
from sluice.taskhost.protocol import Hello, Resume, Started
from sluice.taskhost.wire import ChannelClosed, WorkerChannel


@pytest.fixture
def server() -> Iterator[ControlServer]:
    server = ControlServer("127.0.0.1", "127.0.0.1")
    yield server
    server.close()


def _accepted(server: ControlServer, incarnation: str, secret: str) -> queue.Queue[tuple[WorkerChannel, Hello]]:
    handed: queue.Queue[tuple[WorkerChannel, Hello]] = queue.Queue()
    server.register(incarnation, secret, lambda channel, hello: handed.put((channel, hello)))
    return handed


def _closed_by_the_worker(channel: wire.TaskChannel) -> bool:
    try:
        channel.recv()
    except ChannelClosed:
        return True
    return False


def test_the_launchs_secret_hands_the_connection_to_the_launch_once(server: ControlServer) -> None:
    handed = _accepted(server, "launch-1", "right")
    task = wire.connect(server.address)
    task.send_hello(Hello("launch-1", "right", 99, "executor"))
    worker_end, hello = handed.get(timeout=10)
    assert hello == Hello("launch-1", "right", 99, "executor")
    worker_end.send(Resume())
    assert task.recv() == Resume()
    task.send(Started())
    assert worker_end.recv() == Started()

    second = wire.connect(server.address)  # another attempt of the same launch
    second.send_hello(Hello("launch-1", "right", 100, "executor"))
    assert _closed_by_the_worker(second)
    assert handed.empty()
    for channel in (task, second, worker_end):
        channel.close()


@pytest.mark.parametrize(
    "first_frame",
    [
        wire.encode(Hello("launch-2", "wrong", 1, "h")),  # a wrong secret
        wire.encode(Hello("nobody-waits", "right", 1, "h")),  # no such launch
        wire.encode(Started()),  # not a hello
        b"\x80\x05\x95 a pickle, never unpickled",
    ],
    ids=["wrong secret", "unknown launch", "no hello", "a pickle"],
)
def test_a_connection_without_the_launchs_hello_is_closed(server: ControlServer, first_frame: bytes) -> None:
    handed = _accepted(server, "launch-2", "right")
    sock = socket.create_connection(server.address, timeout=10)
    sock.sendall(struct.pack(">I", len(first_frame)) + first_frame)
    assert _closed_by_the_worker(wire.task_channel(sock))
    assert handed.empty()
    sock.close()
    task = wire.connect(server.address)  # the launch still takes its own connection
    task.send_hello(Hello("launch-2", "right", 1, "h"))
    worker_end, _ = handed.get(timeout=10)
    worker_end.close()
    task.close()
