"""The launcher's task hosts: started ahead of need, each task takes the standby or the
first host that connects, and a host never holds a slot a task waits for.

Spark is a fake that runs each submitted job on a thread once one of its ``slots`` is free,
in an order of its own choosing (last submitted first: Spark promises no order); each
job's host is a minimal one that connects to the launcher's real control server, says
hello, and records the task it is given. The launcher is the real one.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sluice.spark import launcher as launcher_module
from sluice.spark.inbox import Connected, JobEnded
from sluice.spark.launcher import SparkTaskLauncher
from sluice.taskhost import wire
from sluice.taskhost.protocol import Hello, HostBootstrap, PluginSpec, RunSourceTask, TaskSpec
from sluice.taskhost.wire import ChannelClosed
from tests.helpers import wait_until

STRING = PluginSpec("sluice.converters.string.StringConverter", {})


def _task(number: int) -> RunSourceTask:
    return RunSourceTask(TaskSpec("c", number, "x.Task", {}, f"i{number}", STRING, STRING, STRING))


class FakeSpark:
    """Runs a job's function on a thread once a slot is free; jobs waiting for a slot start
    last-submitted-first."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.running = 0
        self.pending: list[Callable[[], None]] = []
        self.lock = threading.Lock()
        self.hosts: queue.Queue[tuple[str, Any]] = queue.Queue()  # (incarnation, the task it got)
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
        # The job's function closes over its host's bootstrap, as the real one's closure carries it.
        cells = [cell.cell_contents for cell in self.function.__closure__ or ()]
        [bootstrap] = [value for value in cells if isinstance(value, HostBootstrap)]
        self.spark.submit(lambda: (_host(self.spark, bootstrap), done.set()), done)
        done.wait()
        return []


def _host(spark: FakeSpark, bootstrap: HostBootstrap) -> None:
    """A task host reduced to its handshake: it reports the task it gets, then waits until
    the worker lets it go."""
    channel = wire.connect(bootstrap.address)
    channel.send_hello(Hello(bootstrap.incarnation, bootstrap.secret, os.getpid(), "test"))
    try:
        spark.hosts.put((bootstrap.incarnation, channel.recv()))
        while True:
            channel.recv()
    except ChannelClosed:
        pass
    finally:
        channel.close()


@pytest.fixture
def make_launcher() -> Iterator[Callable[[int], tuple[SparkTaskLauncher, FakeSpark]]]:
    made: list[SparkTaskLauncher] = []

    def make(slots: int) -> tuple[SparkTaskLauncher, FakeSpark]:
        spark = FakeSpark(slots)
        launcher = SparkTaskLauncher(spark)
        made.append(launcher)
        return launcher, spark

    yield make
    for launcher in made:
        launcher.close()


def _connected(inbox: queue.Queue[Any]) -> Connected:
    item = inbox.get(timeout=10)
    assert isinstance(item, Connected), item
    return item


def test_a_task_takes_the_warm_standby_at_once_and_a_new_standby_follows(make_launcher) -> None:
    launcher, spark = make_launcher(4)
    launcher.warm_up(10)
    assert spark.running == 1  # the standby, connected and idle
    inbox: queue.Queue[Any] = queue.Queue()
    launch = launcher.launch(_task(0), inbox)
    assert launch.host is not None  # given at once: it had connected already
    _connected(inbox)
    incarnation, task = spark.hosts.get(timeout=10)
    assert task == _task(0)
    wait_until(lambda: spark.running == 2, timeout=10, message="the next standby runs")


def test_hosts_warmed_up_for_tasks_to_come_are_taken_at_once_and_not_replaced(make_launcher) -> None:
    """A standalone worker with three tasks to start warms up three hosts together: each
    task takes one as it comes, and only the one standby is submitted after them."""
    launcher, spark = make_launcher(8)
    launcher.warm_up(10, hosts=3)
    wait_until(lambda: spark.running == 3, timeout=10, message="three hosts run")
    inboxes: list[queue.Queue[Any]] = [queue.Queue() for _ in range(3)]
    for number, inbox in enumerate(inboxes):
        launcher.launch(_task(number), inbox)
    for inbox in inboxes:
        _connected(inbox)
    assert sorted(spark.hosts.get(timeout=10)[1].task.task for _ in range(3)) == [0, 1, 2]
    wait_until(lambda: spark.running == 4, timeout=10, message="the next standby runs")
    assert not spark.pending  # the three tasks' hosts and one standby: nothing more


def test_hosts_warmed_up_for_tasks_that_did_not_come_are_let_go(make_launcher, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launcher_module, "EXTRA_HOSTS_KEEP_S", 0.2)
    launcher, spark = make_launcher(8)
    launcher.warm_up(10, hosts=3)
    inbox: queue.Queue[Any] = queue.Queue()
    launcher.launch(_task(0), inbox)  # one of the three tasks came
    _connected(inbox)
    wait_until(lambda: spark.running == 2, timeout=10, message="only the task's host and the standby run")
    assert not spark.pending


def test_hosts_warmed_up_are_no_more_than_the_slots(make_launcher) -> None:
    launcher, spark = make_launcher(2)
    launcher.warm_up(10, hosts=5)
    wait_until(lambda: spark.running == 2, timeout=10, message="two hosts run")
    assert not spark.pending


def test_tasks_launched_together_run_on_as_many_slots_as_they_need(make_launcher) -> None:
    """Two slots, two tasks launched at once: whichever hosts Spark runs first, both tasks
    run; the standby submitted after them waits for a slot instead of holding one."""
    launcher, spark = make_launcher(2)
    launcher.warm_up(10)
    inboxes = [queue.Queue(), queue.Queue()]
    threads = [threading.Thread(target=launcher.launch, args=(_task(i), inboxes[i]), daemon=True) for i in range(2)]
    for thread in threads:
        thread.start()
    for inbox in inboxes:
        _connected(inbox)
    got = sorted(spark.hosts.get(timeout=10)[1].task.task for _ in range(2))
    assert got == [0, 1]
    wait_until(lambda: len(spark.pending) == 1, timeout=10, message="the next standby waits for a slot")
    assert spark.running == 2


def test_a_host_given_no_task_is_let_go_when_the_launcher_closes(make_launcher) -> None:
    launcher, spark = make_launcher(2)
    launcher.warm_up(10)
    launcher.close()
    wait_until(lambda: spark.running == 0, timeout=10, message="the standby's job ended")


def test_a_task_withdrawn_while_waiting_leaves_its_host_to_stand_by(make_launcher) -> None:
    launcher, spark = make_launcher(1)
    launcher.warm_up(10)
    first: queue.Queue[Any] = queue.Queue()
    launcher.launch(_task(0), first)  # takes the standby, the only slot
    _connected(first)
    waiting: queue.Queue[Any] = queue.Queue()
    withdrawn = launcher.launch(_task(1), waiting)  # no slot for its host
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
    inbox: queue.Queue[Any] = queue.Queue()
    launcher.launch(_task(0), inbox)
    assert not isinstance(inbox.get(timeout=10), JobEnded)
