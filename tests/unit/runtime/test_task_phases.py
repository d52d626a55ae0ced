"""The task supervisor's phases, driven through a launcher of our own: what it tells the
task in each, and what it reports when the task or its host does something else."""

from __future__ import annotations

import logging

import pytest

from sluice.runtime.herder.base import State, TargetState
from sluice.runtime.tasks import Phase, TaskHooks, TaskSettings, WorkerSourceTask, base
from sluice.spark.inbox import Connected, Disconnected, JobEnded
from sluice.storage.memory import MemoryOffsetBackingStore
from sluice.taskhost.protocol import (
    Failed,
    Heartbeat,
    Hello,
    Pause,
    PausedAck,
    PluginSpec,
    Resume,
    RunSourceTask,
    SinkOffsets,
    Started,
    Stop,
    Stopped,
    TaskSpec,
    TopicsSeen,
)
from tests.helpers import wait_until
from tests.unit.runtime.launcher_fakes import FakeLaunch, FakeLauncher

STRING = PluginSpec("sluice.converters.string.StringConverter", {})
SPEC = TaskSpec("c", 0, "x.Task", {}, "i", STRING, STRING, STRING)


class Supervised:
    """A source task's supervisor with a fake launcher, and what it reported."""

    def __init__(self, target: TargetState = TargetState.STARTED) -> None:
        self.reports: list[tuple[State, str | None]] = []
        self.topics: list[str] = []
        self.launcher = FakeLauncher()
        store = MemoryOffsetBackingStore()
        store.start()
        hooks = TaskHooks(
            report=lambda state, trace: self.reports.append((state, trace)), record_topic=self.topics.append
        )
        self.task = WorkerSourceTask(
            SPEC, target, lambda: self.launcher, hooks, TaskSettings(offset_flush_interval_ms=250), offset_store=store,
            kafka_options={},
        )  # fmt: skip
        self.task.start()

    def launched(self) -> FakeLaunch:
        return wait_until(lambda: self.launcher.launches and self.launcher.launches[0], timeout=10, message="launch")

    def connected(self) -> FakeLaunch:
        launch = self.launched()
        launch.inbox.put(Connected(Hello("i", "secret", 4242, "host")))
        wait_until(lambda: self.task.phase is Phase.CONNECTED, timeout=10, message="connected")
        return launch

    def reported(self, state: State) -> tuple[State, str | None]:
        return wait_until(
            lambda: next((r for r in reversed(self.reports) if r[0] is state), None), timeout=10, message=str(state)
        )

    def ended(self) -> tuple[State, str | None]:
        assert self.task.join(10), "the supervisor did not end"
        assert self.task.phase is Phase.DONE or self.reports[-1][0] is State.FAILED
        return self.reports[-1]


def test_the_task_to_run_is_launched_with_the_stored_offsets_and_settings() -> None:
    supervised = Supervised()
    launch = supervised.launched()
    assert launch.task == RunSourceTask(SPEC, {}, [], offset_flush_interval_ms=250)
    assert supervised.task.phase is Phase.LAUNCHED
    supervised.task.stop()
    supervised.ended()


def test_a_task_stopped_before_its_host_connected_is_cancelled_and_unassigned() -> None:
    supervised = Supervised()
    launch = supervised.launched()
    supervised.task.stop()
    assert supervised.ended() == (State.UNASSIGNED, None)
    assert launch.cancelled
    assert launch.connection.sent == []


def test_a_launch_that_waits_for_a_slot_is_unassigned_with_why_then_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "SLOT_WAIT_REPORT_S", 0.2)
    supervised = Supervised()
    supervised.launched()
    wait_until(lambda: supervised.task.phase is Phase.WAITING_FOR_SLOT, timeout=10, message="waiting for a slot")
    _, why = supervised.reported(State.UNASSIGNED)
    assert why is not None and "Waiting for a Spark task slot" in why and "local[4] has 4" in why
    launch = supervised.connected()
    launch.inbox.put(Started())
    supervised.reported(State.RUNNING)
    supervised.task.stop()
    wait_until(lambda: launch.connection.of(Stop), timeout=10, message="told to stop")


def test_connected_the_task_is_told_the_target_state_and_reports_it_once_it_holds() -> None:
    supervised = Supervised()
    launch = supervised.connected()
    wait_until(lambda: launch.connection.of(Resume), timeout=10, message="told to run")
    launch.inbox.put(Started())
    supervised.reported(State.RUNNING)

    supervised.task.transition_to(TargetState.PAUSED)
    wait_until(lambda: launch.connection.of(Pause), timeout=10, message="told to pause")
    assert supervised.reports[-1][0] is State.RUNNING  # PAUSED only once the task says it paused
    launch.inbox.put(PausedAck())
    supervised.reported(State.PAUSED)

    supervised.task.transition_to(TargetState.STARTED)
    wait_until(lambda: len(launch.connection.of(Resume)) == 2, timeout=10, message="told to run again")
    wait_until(lambda: supervised.reports[-1][0] is State.RUNNING, timeout=10, message="RUNNING again")

    launch.inbox.host_heartbeat({"poll_total": 5})
    launch.inbox.put(TopicsSeen(["orders"]))
    wait_until(lambda: supervised.topics == ["orders"], timeout=10, message="topic recorded")
    assert supervised.task.series.latest() == {"poll_total": 5}

    supervised.task.stop()
    wait_until(lambda: supervised.task.phase is Phase.STOPPING, timeout=10, message="stopping")
    assert launch.connection.of(Stop) == [Stop()]
    launch.inbox.put(Stopped())
    launch.inbox.put(JobEnded(None))
    assert supervised.ended() == (State.UNASSIGNED, None)


def test_a_paused_connector_launches_nothing_until_resumed() -> None:
    supervised = Supervised(TargetState.PAUSED)
    supervised.reported(State.PAUSED)
    assert supervised.launcher.launches == []
    supervised.task.transition_to(TargetState.STARTED)
    launch = supervised.connected()
    wait_until(lambda: launch.connection.of(Resume), timeout=10, message="told to run")
    supervised.task.stop()


def test_a_failure_the_task_reports_is_its_status_trace() -> None:
    supervised = Supervised()
    launch = supervised.connected()
    launch.inbox.put(Started())
    launch.inbox.put(Failed("Traceback ...\nValueError: bad record"))
    launch.inbox.put(Stopped())
    launch.inbox.put(JobEnded(None))
    assert supervised.ended() == (State.FAILED, "Traceback ...\nValueError: bad record")


def test_a_task_that_stops_unasked_fails() -> None:
    supervised = Supervised()
    launch = supervised.connected()
    launch.inbox.put(Started())
    launch.inbox.put(Stopped())
    launch.inbox.put(JobEnded(None))
    state, trace = supervised.ended()
    assert state is State.FAILED and trace is not None and "stopped without being asked" in trace


def test_a_spark_job_that_ends_under_a_running_task_fails_it_with_sparks_error() -> None:
    supervised = Supervised()
    launch = supervised.connected()
    launch.inbox.put(JobEnded("Job aborted: executor lost"))
    state, trace = supervised.ended()
    assert state is State.FAILED and trace is not None
    assert "ended before the task stopped: Job aborted: executor lost" in trace


def test_a_silent_task_is_failed_as_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "HEARTBEAT_TIMEOUT_S", 0.3)
    supervised = Supervised()
    launch = supervised.connected()
    state, trace = supervised.ended()
    assert state is State.FAILED and trace is not None
    assert "pid 4242 on host" in trace and "sent nothing for" in trace
    assert launch.cancelled


def test_heartbeats_keep_a_task_alive_and_its_totals_without_reaching_the_inbox(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(base, "HEARTBEAT_TIMEOUT_S", 0.5)
    supervised = Supervised()
    launch = supervised.connected()
    launch.inbox.host_heartbeat({"poll_total": 0, "poll_batches": 0})  # before the task started
    launch.inbox.put(Started())
    supervised.reported(State.RUNNING)
    launch.inbox.host_heartbeat({"poll_total": 5})  # only what changed
    assert launch.inbox.empty()  # recorded where it arrived
    assert supervised.task.series.latest() == {"poll_total": 5, "poll_batches": 0}
    for _ in range(8):  # twice the silence that fails a task, in idle host heartbeats only
        launch.inbox.host_heartbeat(None)
        assert launch.inbox.empty()  # the supervisor sleeps on
        supervised.task.join(0.12)
    assert supervised.reports[-1] == (State.RUNNING, None)
    assert supervised.task.series.latest() == {"poll_total": 5, "poll_batches": 0}  # the same totals, again

    # the task's last totals come on its own connection; a host heartbeat read after them
    # was sent before them, and is older
    launch.inbox.deliver(Heartbeat({"poll_total": 9, "poll_batches": 2}))
    launch.inbox.host_heartbeat({"poll_total": 8})
    assert supervised.task.series.latest() == {"poll_total": 9, "poll_batches": 2}
    supervised.task.stop()


def test_a_lost_connection_fails_the_task_with_the_reason() -> None:
    supervised = Supervised()
    launch = supervised.connected()
    launch.inbox.put(Disconnected("connection reset by peer"))
    launch.inbox.put(JobEnded(None))
    state, trace = supervised.ended()
    assert state is State.FAILED and trace is not None and "connection reset by peer" in trace


def test_a_message_of_the_other_kind_of_task_is_logged_not_fatal(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="sluice.runtime.tasks.base")
    supervised = Supervised()
    launch = supervised.connected()
    launch.inbox.put(Started())
    launch.inbox.put(SinkOffsets(1, {("t", 0): 1}))  # a source task's supervisor commits no sink offsets
    wait_until(lambda: "unexpected message" in caplog.text, timeout=10, message="logged")
    assert supervised.reports[-1] == (State.RUNNING, None)
    supervised.task.stop()
