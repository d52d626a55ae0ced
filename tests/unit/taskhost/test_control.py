"""TaskControl, the task host's end of the control connection, over a real socket pair:
when a launch counts as welcomed, and how a connection that ends or carries an unreadable
frame ends every wait for the worker."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import pytest

from sluice.api.source import SourceTask
from sluice.taskhost.control import Heartbeats, TaskControl, WorkerGone
from sluice.taskhost.protocol import HostHeartbeat, Pause, Resume, RunSourceTask, Started, Stop, WorkerMessage
from sluice.taskhost.wire import encode, task_channel, worker_channel
from tests.unit.taskhost.fakes import DEADLINE_S, WorkerEnd, task_spec, wait_for

LAUNCH = RunSourceTask(
    task_spec(SourceTask, {"topic": "t"}),
    producer_config={"bootstrap.servers": "kafka:9092"},
    committed_offsets=[({"file": "a"}, {"position": 3})],
    offset_flush_interval_ms=50,
)


class AnswerWait:
    """``control.committed()`` on a thread of its own (a daemon: a wait that never ends
    fails the test instead of hanging it; the fixture's teardown ends it)."""

    def __init__(self, control: TaskControl) -> None:
        self._control = control
        self._outcome: list[object] = []
        self._thread = threading.Thread(target=self._wait, daemon=True)
        self._thread.start()

    def _wait(self) -> None:
        try:
            self._outcome.append(self._control.committed())
        except WorkerGone as exc:
            self._outcome.append(exc)

    def outcome(self) -> object:
        self._thread.join(DEADLINE_S)
        assert not self._thread.is_alive(), "still waiting for the worker's answer"
        return self._outcome[0]


@pytest.fixture
def worker() -> Iterator[WorkerEnd]:
    with WorkerEnd() as end:
        yield end


@pytest.mark.parametrize(
    ("welcome", "paused", "stopping"),
    [(Resume(), False, False), (Pause(), True, False), (Stop(), False, True)],
    ids=["Resume", "Pause", "Stop"],
)
def test_the_first_resume_pause_or_stop_welcomes_the_launch_it_keeps(
    worker: WorkerEnd, welcome: WorkerMessage, paused: bool, stopping: bool
) -> None:
    control = worker.control
    worker.send(LAUNCH)
    wait_for(lambda: control.launch is not None, "the launch read")
    assert control.launch == LAUNCH  # as sent, through the JSON framing
    assert not control.welcomed.is_set()  # a launch alone does not start the task

    worker.send(welcome)
    assert control.welcomed.wait(DEADLINE_S)
    assert (control.paused, control.stopping) == (paused, stopping)
    assert control.launch == LAUNCH
    assert not control.worker_gone.is_set()


def test_a_closed_connection_ends_a_wait_for_the_workers_answer(worker: WorkerEnd) -> None:
    control = worker.control
    answer = AnswerWait(control)
    worker.close()
    assert isinstance(answer.outcome(), WorkerGone)
    assert control.worker_gone.is_set() and control.stopping
    assert control.welcomed.is_set()  # a host still waiting for its welcome gives up too
    with pytest.raises(WorkerGone):
        control.committed()  # every later wait ends at once


@pytest.mark.parametrize(
    "payload",
    [
        b"{not json",
        json.dumps({"v": 99, "type": "Resume", "body": {}}).encode(),
        encode(Started()),  # a task's message: not one the task end accepts
        json.dumps({"v": 1, "type": "Committed", "body": {"seq": "one"}}).encode(),
    ],
    ids=["not JSON", "another version", "a task message", "a field of the wrong type"],
)
def test_an_unreadable_frame_counts_as_the_worker_gone(worker: WorkerEnd, payload: bytes) -> None:
    control = worker.control
    answer = AnswerWait(control)
    worker.send_frame(payload)
    assert isinstance(answer.outcome(), WorkerGone)
    assert control.worker_gone.is_set() and control.stopping


def test_heartbeat_totals_are_those_that_changed_and_none_after_the_last_heartbeat(worker: WorkerEnd) -> None:
    control = worker.control
    control.meter.poll_total = 3
    first = control.heartbeat_totals()  # the first: every total
    idle = control.heartbeat_totals()  # nothing changed
    control.meter.poll_total = 7
    changed = control.heartbeat_totals()
    control.last_heartbeat()  # as the task ends, on its own connection: every total again
    control.meter.poll_total = 9
    after = control.heartbeat_totals()  # after the last one: nothing more for the host to send
    control.send(Started())
    worker.next(Started)
    assert first is not None and first["poll_total"] == 3 and len(first) > 10
    assert idle is None
    assert changed == {"poll_total": 7}
    assert after is None
    (last,) = (h.metrics for h in worker.heartbeats)
    assert last is not None and last.keys() == first.keys() and last["poll_total"] == 7


def test_one_host_heartbeat_carries_every_task_whose_totals_changed() -> None:
    worker_sock, host_sock = socket.socketpair()
    worker_end, host_end = worker_channel(worker_sock), task_channel(host_sock)
    with WorkerEnd() as busy, WorkerEnd() as idle:
        busy.control.meter.poll_total = 5
        idle.control.heartbeat_totals()  # its first totals went out already
        heartbeats = Heartbeats(0.01, host_end)
        try:
            heartbeats.add("busy-task", busy.control)
            heartbeats.add("idle-task", idle.control)
            first = worker_end.recv()
            second = worker_end.recv()  # nothing changed since: the host is alive, that is all
        finally:
            heartbeats.stop()
            worker_end.close()
            host_end.close()
    assert isinstance(first, HostHeartbeat) and isinstance(second, HostHeartbeat)
    assert list(first.metrics) == ["busy-task"] and first.metrics["busy-task"]["poll_total"] == 5
    assert second.metrics == {}
