"""The driver-side task supervisor with a fake launcher (our own collaborator): it stores
the offsets its task sends only while the task owns its work (zombie fencing), reports
RUNNING once the task started, and FAILED with the reason when the task's host is lost."""

from __future__ import annotations

from sluice.runtime.herder.base import State, TargetState
from sluice.runtime.tasks import TaskHooks, TaskSettings, WorkerSourceTask
from sluice.spark.inbox import Connected, Disconnected, JobEnded
from sluice.storage.memory import MemoryOffsetBackingStore
from sluice.storage.offset_codec import connector_offsets
from sluice.taskhost.protocol import (
    Committed,
    Hello,
    PluginSpec,
    Resume,
    SourceOffsets,
    Started,
    Stop,
    Stopped,
    TaskSpec,
)
from tests.helpers import wait_until
from tests.unit.runtime.launcher_fakes import FakeLaunch, FakeLauncher

STRING = PluginSpec("sluice.converters.string.StringConverter", {})


def _task(store: MemoryOffsetBackingStore, owned: list[bool], reports: list[tuple[State, str | None]]):
    spec = TaskSpec("c", 0, "x.Task", {}, "i", STRING, STRING, STRING)
    hooks = TaskHooks(report=lambda state, trace: reports.append((state, trace)), may_commit=lambda: owned[0])
    launcher = FakeLauncher()
    task = WorkerSourceTask(
        spec,
        TargetState.STARTED,
        lambda: launcher,
        hooks,
        TaskSettings(offset_flush_interval_ms=1000),
        offset_store=store,
        kafka_options={},
    )
    return task, launcher


def _started(launcher: FakeLauncher) -> FakeLaunch:
    launch = wait_until(lambda: launcher.launches and launcher.launches[0], timeout=10, message="launched")
    launch.inbox.put(Connected(Hello("i", "secret", 4242, "host")))
    launch.inbox.put(Started())
    return launch


def test_offsets_are_stored_only_while_the_task_owns_its_work():
    store = MemoryOffsetBackingStore()
    store.start()
    owned = [True]
    reports: list[tuple[State, str | None]] = []
    task, launcher = _task(store, owned, reports)
    task.start()
    launch = _started(launcher)
    wait_until(lambda: launch.connection.of(Resume), timeout=10, message="told to run")
    wait_until(lambda: (State.RUNNING, None) in reports, timeout=10, message="RUNNING")

    launch.inbox.put(SourceOffsets(1, [({"file": "f"}, {"position": 10})]))
    wait_until(lambda: launch.connection.of(Committed), timeout=10, message="answered")
    assert launch.connection.of(Committed)[0] == Committed(1)
    assert connector_offsets(store, "c") == [({"file": "f"}, {"position": 10})]

    owned[0] = False  # a rebalance gave the task to another worker
    launch.inbox.put(SourceOffsets(2, [({"file": "f"}, {"position": 20})]))
    wait_until(lambda: len(launch.connection.of(Committed)) == 2, timeout=10, message="answered")
    assert launch.connection.of(Committed)[1] == Committed(2, fenced=True)
    assert connector_offsets(store, "c") == [({"file": "f"}, {"position": 10})]

    task.stop()
    wait_until(lambda: launch.connection.of(Stop), timeout=10, message="told to stop")
    launch.inbox.put(Stopped())
    launch.inbox.put(JobEnded(None))
    assert task.join(10)
    assert reports[-1] == (State.UNASSIGNED, None)


def test_a_lost_host_fails_the_task_with_the_reason_and_spark_error():
    store = MemoryOffsetBackingStore()
    store.start()
    reports: list[tuple[State, str | None]] = []
    task, launcher = _task(store, [True], reports)
    task.start()
    launch = _started(launcher)
    wait_until(lambda: (State.RUNNING, None) in reports, timeout=10, message="RUNNING")

    launch.inbox.put(Disconnected("connection closed"))
    launch.inbox.put(JobEnded("Python worker exited unexpectedly (crashed)"))
    assert task.join(10)
    state, trace = reports[-1]
    assert state is State.FAILED
    assert trace is not None and "pid 4242 on host" in trace and "ended unexpectedly" in trace
    assert "Python worker exited unexpectedly (crashed)" in trace
    assert launch.cancelled
