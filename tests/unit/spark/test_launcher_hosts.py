"""The launcher's task hosts: started ahead of need, tasks spread over as many shared hosts
as the spread allows (the fewest tasks first), dedicated tasks alone, and a host never holds
a slot a task waits for.

Spark is a fake that runs each submitted job on a thread once one of its ``slots`` is free,
in an order of its own choosing (last submitted first: Spark promises no order). Each job
runs the real task host (:func:`sluice.taskhost.host.run_host`), connected to the launcher's
real control server, with a task loop reduced to its handshake: it records the task it got
and waits until it is told to stop. The launcher is the real one.
"""

from __future__ import annotations

import functools
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sluice.spark import launcher as launcher_module
from sluice.spark.inbox import Connected, Disconnected, Inbox, JobEnded
from sluice.spark.launcher import Launch, SparkTaskLauncher
from sluice.taskhost import host as host_module
from sluice.taskhost.control import TaskControl
from sluice.taskhost.protocol import (
    Heartbeat,
    HostBootstrap,
    PluginSpec,
    Resume,
    RunSourceTask,
    Started,
    Stop,
    TaskSpec,
)
from tests.helpers import wait_until

STRING = PluginSpec("sluice.converters.string.StringConverter", {})


def _task(number: int) -> RunSourceTask:
    return RunSourceTask(TaskSpec("c", number, "x.Task", {}, f"i{number}", STRING, STRING, STRING))


_LAUNCHED: list[Launch] = []


class RecordingLoop:
    """A task loop reduced to its handshake: says it started, waits for the stop."""

    ran: queue.Queue[int] = queue.Queue()  # the numbers of the tasks that ran

    def __init__(self, launch: RunSourceTask, control: TaskControl, *_clients: Any) -> None:
        self.launch = launch
        self.control = control

    def run(self) -> None:
        RecordingLoop.ran.put(self.launch.task.task)
        self.control.meter.poll_total = 100 + self.launch.task.task  # a total of its own
        self.control.send(Started())
        while not self.control.stopping:
            self.control.wait_for_change(1.0)


@pytest.fixture(autouse=True)
def _recording_loops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host_module, "make_loop", RecordingLoop)
    monkeypatch.setattr(RecordingLoop, "ran", queue.Queue())


class FakeSpark:
    """Runs a job's function on a thread once a slot is free; jobs waiting for a slot start
    last-submitted-first."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.master = f"local[{slots}]"
        self.running = 0
        self.pending: list[Callable[[], None]] = []
        self.lock = threading.Lock()
        self.sparkContext = self
        self.groups = threading.local()
        self.waiting: dict[str, tuple[Callable[[], None], threading.Event]] = {}  # job group -> job without a slot

    # SparkContext
    @property
    def defaultParallelism(self) -> int:
        return self.slots

    def getConf(self) -> FakeSpark:
        return self

    def get(self, key: str, default: str | None = None) -> str | None:
        return "127.0.0.1" if key in ("spark.driver.host", "spark.driver.bindAddress") else default

    def setJobGroup(self, group: str, *args: Any, **kwargs: Any) -> None:
        self.groups.current = group

    def cancelJobGroup(self, group: str) -> None:
        """A job still waiting for a slot ends (a running one ends when its host is let go)."""
        with self.lock:
            run, done = self.waiting.pop(group, (None, None))
            if run is not None:
                self.pending.remove(run)
        if done is not None:
            done.set()

    # RDD
    def parallelize(self, *args: Any) -> FakeSpark:
        return self

    def mapPartitions(self, function: Callable[[Iterator[Any]], Iterator[Any]]) -> FakeJob:
        return FakeJob(self, function)

    def submit(self, run: Callable[[], None], done: threading.Event) -> None:
        with self.lock:
            self.pending.append(run)
            self.waiting[self.groups.current] = (run, done)
        self._schedule()

    def _schedule(self) -> None:
        with self.lock:
            start = []
            while self.pending and self.running < self.slots:
                run = self.pending.pop()  # the last submitted first
                self.waiting = {group: job for group, job in self.waiting.items() if job[0] is not run}
                start.append(run)
                self.running += 1
        for run in start:
            threading.Thread(target=self._run, args=(run,), daemon=True).start()

    def _run(self, run: Callable[[], None]) -> None:
        try:
            run()
        finally:
            with self.lock:
                self.running -= 1
            self._schedule()


class FakeJob:
    def __init__(self, spark: FakeSpark, function: Callable[[Iterator[Any]], Iterator[Any]]) -> None:
        self.spark = spark
        self.function = function

    def collect(self) -> list[Any]:
        done = threading.Event()
        self.spark.submit(lambda: (list(self.function(iter([0]))), done.set()), done)
        done.wait()
        return []


@pytest.fixture
def make_launcher() -> Iterator[Callable[..., tuple[SparkTaskLauncher, FakeSpark]]]:
    made: list[SparkTaskLauncher] = []

    def make(slots: int, hosts: int = 2) -> tuple[SparkTaskLauncher, FakeSpark]:
        spark = FakeSpark(slots)
        launcher = SparkTaskLauncher(spark, hosts=hosts)
        made.append(launcher)
        return launcher, spark

    yield make
    for launch in _LAUNCHED:
        launch.connection.close()  # as the worker stops its tasks before it closes the launcher
    _LAUNCHED.clear()
    for launcher in made:
        launcher.close()


def _connected(inbox: queue.Queue[Any]) -> Connected:
    item = inbox.get(timeout=10)
    assert isinstance(item, Connected), item
    return item


def _launch(
    launcher: SparkTaskLauncher, number: int, dedicated: bool = False, inbox: Inbox | None = None
) -> tuple[Launch, queue.Queue[Any]]:
    inbox = inbox if inbox is not None else Inbox()
    launch = launcher.launch(_task(number), inbox, dedicated)
    _LAUNCHED.append(launch)
    _connected(inbox)
    launch.connection.send(Resume())  # as its supervisor does: the task may start
    assert isinstance(inbox.get(timeout=10), Started)
    return launch, inbox


def _next(inbox: queue.Queue[Any], kind: type) -> Any:
    """The next item of ``kind`` (others are skipped); queue.Empty after 10 s without one."""
    while True:
        item = inbox.get(timeout=10)
        if isinstance(item, kind):
            return item


def _untouched(inbox: queue.Queue[Any]) -> None:
    """Nothing but heartbeats with totals reached the task: it runs on as before."""
    while not inbox.empty():
        item = inbox.get_nowait()
        assert isinstance(item, Heartbeat), item


def _stop(launch: Launch, inbox: queue.Queue[Any]) -> None:
    """Stop the task as its supervisor does, and wait until it left its host."""
    launch.connection.send(Stop())
    _next(inbox, Disconnected)
    launch.connection.close()


def test_warming_up_starts_the_spread_and_a_task_takes_a_host_at_once(make_launcher) -> None:
    launcher, spark = make_launcher(4, hosts=2)
    launcher.warm_up(10, hosts=2)
    assert launcher.hosts() == [(0, False, False)] * 2  # both connected, idle
    launch, _ = _launch(launcher, 0)
    assert launch.host is not None  # placed at once: hosts were connected
    assert RecordingLoop.ran.get(timeout=10) == 0
    assert sorted(launcher.hosts()) == [(0, False, False), (1, False, False)]
    assert spark.running == 2 and not spark.pending  # no host beyond the spread


def test_one_heartbeat_per_host_keeps_each_of_its_tasks_heard_with_its_own_totals(
    make_launcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launcher_module, "HostBootstrap", functools.partial(HostBootstrap, heartbeat_interval_ms=20))
    launcher, _ = make_launcher(4, hosts=1)
    launcher.warm_up(10)
    totals: dict[int, list[dict[str, float]]] = {0: [], 1: []}
    inboxes = {n: Inbox(on_heartbeat=totals[n].append) for n in totals}
    for number, inbox in inboxes.items():
        _launch(launcher, number, inbox=inbox)
    assert launcher.hosts() == [(2, False, False)]  # both tasks in the one host

    def poll_totals() -> list[float | None]:
        return [next((t["poll_total"] for t in reversed(seen) if "poll_total" in t), None) for seen in totals.values()]

    wait_until(lambda: poll_totals() == [100.0, 101.0], timeout=10, message=lambda: f"each task's totals: {totals}")
    heard = {n: inbox.heard_at for n, inbox in inboxes.items()}
    # the tasks send nothing themselves: their host's heartbeats keep them heard
    wait_until(lambda: all(inboxes[n].heard_at > heard[n] for n in inboxes), timeout=10, message="heard again")


def test_tasks_spread_over_the_shared_hosts_then_share_them(make_launcher) -> None:
    """Two hosts to spread over: the first two tasks get one each, the next go to the host
    with the fewest tasks, and no more hosts are started."""
    launcher, spark = make_launcher(8, hosts=2)
    launcher.warm_up(10, hosts=2)
    for number in range(5):
        _launch(launcher, number)
    assert sorted(count for count, _, _ in launcher.hosts()) == [2, 3]
    assert spark.running == 2 and not spark.pending  # five tasks, two processes


def test_a_dedicated_task_runs_alone_and_its_host_goes_with_it(make_launcher) -> None:
    launcher, spark = make_launcher(8, hosts=1)
    launcher.warm_up(10)
    _launch(launcher, 0)  # the shared host
    alone, inbox = _launch(launcher, 1, dedicated=True)  # no empty host: one is started for it
    _launch(launcher, 2)
    assert sorted(launcher.hosts()) == [(1, True, False), (2, False, False)]
    _stop(alone, inbox)
    wait_until(lambda: spark.running == 1, timeout=10, message="the dedicated host ended")
    assert launcher.hosts() == [(2, False, False)]


def test_a_task_leaving_a_shared_host_leaves_the_others_running(make_launcher) -> None:
    launcher, spark = make_launcher(8, hosts=1)
    launcher.warm_up(10)
    first, first_inbox = _launch(launcher, 0)
    _, second_inbox = _launch(launcher, 1)
    _stop(first, first_inbox)
    assert launcher.hosts() == [(1, False, False)]
    _untouched(second_inbox)
    assert spark.running == 1


def test_hosts_stay_up_when_their_tasks_leave(make_launcher) -> None:
    launcher, spark = make_launcher(8, hosts=2)
    launcher.warm_up(10, hosts=2)
    first, first_inbox = _launch(launcher, 0)
    second, second_inbox = _launch(launcher, 1)
    assert sorted(launcher.hosts()) == [(1, False, False), (1, False, False)]
    _stop(first, first_inbox)
    _stop(second, second_inbox)
    assert launcher.hosts() == [(0, False, False)] * 2  # ready for the next tasks
    assert spark.running == 2


def test_abandoning_a_running_task_retires_its_host_which_goes_once_empty(make_launcher) -> None:
    launcher, spark = make_launcher(8, hosts=1)
    launcher.warm_up(10)
    stuck, _ = _launch(launcher, 0)
    other, other_inbox = _launch(launcher, 1)
    stuck.cancel()  # it did not stop in time: it may still run in its host
    # The retired host keeps its other task; a standby takes its place in the spread.
    wait_until(
        lambda: sorted(launcher.hosts()) == [(0, False, False), (1, False, True)],
        timeout=10,
        message=lambda: f"the host retired and a standby in its place: {launcher.hosts()}",
    )
    _, third_inbox = _launch(launcher, 2)  # not into the retired host: into the standby
    assert sorted(launcher.hosts()) == [(1, False, False), (1, False, True)]
    _stop(other, other_inbox)
    wait_until(lambda: len(launcher.hosts()) == 1, timeout=10, message="the retired host cancelled")
    assert launcher.hosts() == [(1, False, False)]
    _untouched(third_inbox)


def test_a_host_ending_tells_exactly_its_own_tasks(make_launcher) -> None:
    launcher, spark = make_launcher(8, hosts=2)
    launcher.warm_up(10, hosts=2)
    first, first_inbox = _launch(launcher, 0)
    second, second_inbox = _launch(launcher, 1)
    assert first.host is not None and first.host is not second.host
    launcher.host_ended(first.host, "Python worker exited unexpectedly")  # as its job's thread says it
    ended = _next(first_inbox, JobEnded)
    assert ended.error == "Python worker exited unexpectedly"
    _untouched(second_inbox)


def test_a_host_whose_connection_drops_takes_no_new_task(make_launcher) -> None:
    """A host gone without the worker ending it (its executor died) may have a job that has
    not ended yet (Spark retries it on a cluster): a task launched meanwhile goes to another
    host, and a standby replaces the lost one."""
    launcher, _ = make_launcher(8, hosts=1)
    launcher.warm_up(10, hosts=1)
    first, _ = _launch(launcher, 0)
    lost = first.host
    assert lost is not None and lost.channel is not None
    lost.channel.close()  # the connection ends, as when the host's process dies
    wait_until(lambda: launcher.hosts() == [(0, False, False)], timeout=10, message=lambda: f"{launcher.hosts()}")
    second, second_inbox = _launch(launcher, 1)
    assert second.host is not None and second.host is not lost
    _untouched(second_inbox)


def test_warming_up_waits_for_the_hosts_of_the_tasks_to_come(make_launcher) -> None:
    """A standalone worker with three tasks to start and three hosts to spread over waits
    for all three: each task then takes one as it comes."""
    launcher, spark = make_launcher(8, hosts=3)
    launcher.warm_up(10, hosts=3)
    assert len(launcher.hosts()) == 3
    for number in range(3):
        _launch(launcher, number)
    assert sorted(launcher.hosts()) == [(1, False, False)] * 3
    assert spark.running == 3 and not spark.pending


def test_the_spread_is_no_more_than_the_slots(make_launcher) -> None:
    launcher, spark = make_launcher(2, hosts=8)
    assert launcher.spread == 2
    launcher.warm_up(10, hosts=5)
    assert len(launcher.hosts()) == 2
    assert spark.running == 2 and not spark.pending


def test_a_host_given_no_task_is_let_go_when_the_launcher_closes(make_launcher) -> None:
    launcher, spark = make_launcher(2)
    launcher.warm_up(10)
    launcher.close()
    wait_until(lambda: spark.running == 0, timeout=10, message="the standby's job ended")


def test_a_dedicated_task_without_a_slot_waits_and_can_be_withdrawn(make_launcher) -> None:
    launcher, spark = make_launcher(1, hosts=1)
    launcher.warm_up(10)
    _launch(launcher, 0)  # the only slot's host
    waiting = Inbox()
    withdrawn = launcher.launch(_task(1), waiting, dedicated=True)  # no slot for its host
    wait_until(lambda: len(spark.pending) == 1, timeout=10, message="its host waits for a slot")
    withdrawn.cancel()
    assert waiting.empty()


def test_a_host_whose_job_fails_before_it_connects_is_replaced(make_launcher, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launcher_module, "HOST_RETRY_S", 0.01)
    launcher, spark = make_launcher(2)
    failures = [RuntimeError("executor lost")]
    real_collect = FakeJob.collect

    def collect(job: FakeJob) -> list[Any]:
        if failures:
            raise failures.pop()
        return real_collect(job)

    monkeypatch.setattr(FakeJob, "collect", collect)
    assert launcher.warm_up(10) >= 0  # the second host stood by
    _launch(launcher, 0)
