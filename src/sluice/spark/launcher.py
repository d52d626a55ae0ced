"""Launches Connect tasks as long-lived Spark tasks (the driver side).

A task host is one Spark job of one partition — ``parallelize([0], 1).mapPartitions(run_task)``
— whose only Spark task hosts a Connect task for its whole life (:mod:`sluice.taskhost.host`).
A plain RDD job, not a DataFrame's: it needs no query planning, code generation or Arrow,
which a fresh JVM would first have to load and warm (delaying a worker's first host), and
its Python worker does not import pandas and Arrow.
Spark places it: a thread slot of ``local[N]`` when the worker embeds Spark, an executor
of any cluster through ``spark.master``. The job's closure carries only where to connect
and the host's secret; once the host connected, the launcher sends it the task to run.
The job's thread waits for it to end and puts :class:`~sluice.spark.inbox.JobEnded` in the
task's inbox, next to what the task sends over its control connection
(:mod:`sluice.spark.control`).

Submitting a job, forking its Python worker and importing the task host take a second or
more, the first time far more (Spark's first job, the Python daemon's start). So hosts are
started ahead of need: the launcher keeps one *standby* host, connected and waiting for a
task, and submits one more host for each task that is waiting for one. A task takes the
standby when there is one — it starts within milliseconds — and otherwise the first host
to connect, whichever job Spark ran first (Spark does not run jobs in the order they were
submitted, and a host must never wait for a slot while a task waits for a host).
:meth:`SparkTaskLauncher.warm_up` starts the first standby and waits for it: a worker
joins its group only after that. A worker that knows it is about to start several tasks (a
standalone worker's connectors) warms up a host for each, started together: each task then
takes one at once, rather than the first taking the standby and the others each waiting a
second or more for a host of its own.

PySpark is not imported here: the session comes from the worker.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import secrets
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

from sluice.spark.control import TaskConnection, control_server
from sluice.spark.inbox import Connected, Inbox, JobEnded
from sluice.spark.split_read import SplitReadResult, run_split_read
from sluice.taskhost.host import run_task
from sluice.taskhost.protocol import Hello, HostBootstrap, TaskLaunch, TaskSpec
from sluice.taskhost.wire import ChannelClosed, WorkerChannel

log = logging.getLogger(__name__)

__all__ = ["HostJob", "Launch", "SparkTaskLauncher", "TaskHostNotReady"]

#: After a host's job failed before it connected, how long before the launcher submits
#: another (a host that cannot start at all must not turn into a busy loop of jobs).
HOST_RETRY_S = 5.0
#: How long closing waits for the jobs of idle hosts to end.
CLOSE_WAIT_S = 10.0
#: How long hosts warmed up for the tasks a worker is about to start (beyond the one
#: standby) wait for them before they are let go.
EXTRA_HOSTS_KEEP_S = 60.0


class TaskHostNotReady(Exception):
    """No task host connected within the time given (:meth:`SparkTaskLauncher.warm_up`)."""


class HostJob:
    """One task host's Spark job; it connects back, then waits for the task it is given."""

    def __init__(self, launcher: SparkTaskLauncher) -> None:
        self.launcher = launcher
        self.bootstrap = HostBootstrap(launcher.server.address, uuid.uuid4().hex, secrets.token_hex(16))
        self.job_group = f"sluice:host:{self.bootstrap.incarnation}"
        self.launch: Launch | None = None  # the task it hosts, once given one (the launcher's lock)
        self.channel: WorkerChannel | None = None  # once it connected, with its hello
        self.hello: Hello | None = None
        self.job_ended = threading.Event()
        self._thread = threading.Thread(target=self._run_job, name="sluice-task-host-job", daemon=True)

    def start(self) -> None:
        self.launcher.server.register(self.bootstrap.incarnation, self.bootstrap.secret, self._on_connect)
        self._thread.start()

    def _on_connect(self, channel: WorkerChannel, hello: Hello) -> None:
        self.channel, self.hello = channel, hello
        self.launcher.host_connected(self)

    def _run_job(self) -> None:
        spark = self.launcher.spark
        bootstrap = self.bootstrap
        error: str | None = None

        def host(rows: Iterator[Any]) -> Iterator[Any]:
            for _ in rows:  # the partition's single driving row
                pass
            yield from run_task(bootstrap)

        try:
            context = spark.sparkContext
            context.setJobGroup(self.job_group, "Sluice task host", interruptOnCancel=True)
            context.parallelize([0], 1).mapPartitions(host).collect()
        except BaseException as exc:  # noqa: BLE001 - the hosted task's supervisor (or the launcher) reports it
            error = _spark_error(exc)
        finally:
            self.launcher.server.unregister(bootstrap.incarnation)
            self.job_ended.set()
            self.launcher.host_ended(self, error)

    def let_go(self) -> None:
        """End a connected host that has no task: it sees its connection close and ends its
        job normally (cancelling the job would have Spark log the interruption)."""
        if self.channel is not None:
            self.channel.close()

    def cancel(self) -> None:
        """Stop the Spark job (its Python worker is killed)."""
        self.launcher.server.unregister(self.bootstrap.incarnation)
        if not self.job_ended.is_set():
            with contextlib.suppress(Exception):  # Spark stopping or stopped: the job is gone with it
                self.launcher.spark.sparkContext.cancelJobGroup(self.job_group)
        channel = self.channel
        if channel is not None:
            channel.close()


class Launch:
    """One launched task as its supervisor holds it: its connection, and the host that runs
    it once it has one."""

    def __init__(self, launcher: SparkTaskLauncher, task: TaskLaunch, inbox: Inbox) -> None:
        self.launcher = launcher
        self.task = task
        self.inbox = inbox
        self.connection = TaskConnection(inbox)
        self.host: HostJob | None = None  # (the launcher's lock)

    def cancel(self) -> None:
        """Stop the task's host (its Python worker is killed), e.g. for a task that did not
        stop in time; a task still waiting for a host no longer waits."""
        self.launcher.withdraw(self)
        self.connection.close()


def _spark_error(exc: BaseException) -> str:
    """Spark's error, without the JVM stack traces py4j appends to it."""
    text = str(exc).strip() or type(exc).__name__
    lines = text.splitlines()
    kept = [line for line in lines if not line.lstrip().startswith("at ")]
    return "\n".join(kept[:60])


class SparkTaskLauncher:
    """Launches tasks on the worker's Spark session; one per worker."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        conf = spark.sparkContext.getConf()
        host = conf.get("spark.driver.host", "127.0.0.1")
        bind = conf.get("spark.driver.bindAddress", host)
        self.server = control_server(bind, host)
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._waiting: collections.deque[Launch] = collections.deque()  # tasks without a host yet
        self._parked: collections.deque[HostJob] = collections.deque()  # connected, no task yet
        self._starting: set[HostJob] = set()  # submitted, not connected yet
        self._standby = 0  # hosts to keep connected and idle: 1 once warmed up
        self._extra = 0  # hosts warmed up for tasks about to come: not replaced when taken
        self._closed = threading.Event()

    @property
    def slots(self) -> int:
        """How many Spark tasks can run at once (local mode's threads, a cluster's cores)."""
        return int(self.spark.sparkContext.defaultParallelism)

    @property
    def master(self) -> str:
        return str(self.spark.sparkContext.master)

    # -- what the worker and the supervisors call ----------------------------------------

    def warm_up(self, timeout_s: float, hosts: int = 1) -> float:
        """Start ``hosts`` standby hosts together (one at least) and wait until one
        connected: Spark has then run a job, started its Python daemon and imported the task
        host. Returns the seconds it took; raises :class:`TaskHostNotReady` when none
        connected in time.

        One standby is kept from then on. The others are for the tasks the worker is about
        to start: a launch that takes one does not replace it, and those no task took within
        :data:`EXTRA_HOSTS_KEEP_S` are let go."""
        started = time.monotonic()
        with self._lock:
            self._standby = 1
            self._extra = max(0, min(hosts, self.slots) - 1)
        self._submit_needed()
        with self._changed:
            if not self._changed.wait_for(lambda: self._parked or self._closed.is_set(), timeout_s):
                raise TaskHostNotReady(f"No Spark task host connected back within {timeout_s:.0f} s")
        if hosts > 1:
            expiry = threading.Timer(EXTRA_HOSTS_KEEP_S, self._let_go_of_extra_hosts)
            expiry.daemon = True
            expiry.start()
        return time.monotonic() - started

    def launch(self, task: TaskLaunch, inbox: Inbox) -> Launch:
        """Start ``task`` in the standby host when one is connected (at once), else in the
        first host that connects; submit the hosts that keeps needing."""
        launch = Launch(self, task, inbox)
        with self._lock:
            self._extra = max(0, self._extra - 1)  # a host warmed up for it is not replaced
            parked = self._parked.popleft() if self._parked else None
            if parked is not None:
                launch.host = parked
                parked.launch = launch
            else:
                self._waiting.append(launch)
        if parked is not None:
            log.debug("Task %s-%s takes the standby task host", *task.task.host_key)
            self._hand_over(launch, parked)
        self._submit_needed()
        return launch

    def withdraw(self, launch: Launch) -> None:
        """The task is done with its host (cancelled): stop it, or stop waiting for one."""
        with self._lock:
            host = launch.host
            if host is None:
                with contextlib.suppress(ValueError):
                    self._waiting.remove(launch)
        if host is not None:
            host.cancel()

    def close(self) -> None:
        """Keep no standby any more; let the hosts no task has taken go, and wait for their
        jobs to end (Spark stopped under a job still ending logs errors of its own)."""
        with self._lock:
            self._closed.set()
            parked = list(self._parked)
            starting = list(self._starting)
            self._parked.clear()
            self._changed.notify_all()
        for host in parked:
            host.let_go()
        for host in starting:
            host.cancel()  # not connected yet: nothing to tell it
        deadline = time.monotonic() + CLOSE_WAIT_S
        for host in [*parked, *starting]:
            if not host.job_ended.wait(max(0.0, deadline - time.monotonic())):
                host.cancel()

    def run_split_read(self, task: TaskSpec, kafka_options: dict[str, str], parts: list[bytes]) -> SplitReadResult:
        """Read the parts of a split read as one Spark job (:mod:`sluice.spark.split_read`)."""
        return run_split_read(self.spark, task, kafka_options, parts)

    # -- what the hosts' jobs call ---------------------------------------------------------

    def host_connected(self, host: HostJob) -> None:
        """A host connected: it takes the task that has waited longest, or stands by."""
        surplus = False
        with self._lock:
            self._starting.discard(host)
            launch = self._waiting.popleft() if self._waiting else None
            if launch is not None:
                launch.host = host
                host.launch = launch
            elif self._closed.is_set() or len(self._parked) >= self._standby + self._extra:
                surplus = True  # its task went away meanwhile
            else:
                self._parked.append(host)
                self._changed.notify_all()
        if launch is not None:
            self._hand_over(launch, host)
        elif surplus:
            host.let_go()
        else:
            hello = host.hello
            assert hello is not None  # it connected
            log.debug("A standby task host is ready: pid %d on %s", hello.pid, hello.host)

    def host_ended(self, host: HostJob, error: str | None) -> None:
        """A host's job ended: its task hears it; a host no task had is replaced."""
        with self._lock:
            launch = host.launch
            self._starting.discard(host)
            if host in self._parked:
                self._parked.remove(host)
            retry = launch is None and not self._closed.is_set()
        if launch is not None:
            launch.inbox.put(JobEnded(error))
        elif retry:
            if error:
                log.warning(
                    "A task host's Spark job failed before it got a task; another in %.0f s: %s", HOST_RETRY_S, error
                )
                if self._closed.wait(HOST_RETRY_S):
                    return
            self._submit_needed()

    # -- inside ------------------------------------------------------------------------------

    def _let_go_of_extra_hosts(self) -> None:
        """The tasks the extra hosts were warmed up for have come or will not: keep only
        the standby."""
        with self._lock:
            self._extra = 0
            surplus = []
            while len(self._parked) > self._standby:
                surplus.append(self._parked.pop())
        for host in surplus:
            host.let_go()

    def _hand_over(self, launch: Launch, host: HostJob) -> None:
        channel, hello = host.channel, host.hello
        assert channel is not None and hello is not None  # it connected
        try:
            channel.send(launch.task)  # the host's first message: the task to run
        except ChannelClosed as exc:
            log.debug("Task %s-%s: its host went away as it got it: %s", *launch.task.task.host_key, exc)
        launch.connection.attach(channel, hello)
        launch.inbox.put(Connected(hello))

    def _submit_needed(self) -> None:
        """Submit as many hosts as the waiting tasks and the standby need, counting those
        already starting or standing by."""
        with self._lock:
            if self._closed.is_set():
                return
            wanted = len(self._waiting) + self._standby + self._extra
            missing = wanted - len(self._starting) - len(self._parked)
            hosts = [HostJob(self) for _ in range(max(0, missing))]
            self._starting.update(hosts)
        for host in hosts:
            host.start()
