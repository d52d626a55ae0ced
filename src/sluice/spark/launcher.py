"""Launches Connect tasks in task hosts: long-lived Spark tasks, each running many
Connect tasks on threads of its own, as Kafka Connect's worker runs them in one JVM (the
driver side).

A task host is one Spark job of one partition — ``parallelize([0], 1).mapPartitions(run_host)``
— whose only Spark task runs Connect tasks for as long as the worker gives it some
(:mod:`sluice.taskhost.host`). A plain RDD job, not a DataFrame's: it needs no query
planning, code generation or Arrow, which a fresh JVM would first have to load and warm
(delaying a worker's first host), and its Python worker does not import pandas and Arrow.
Spark places it: a thread slot of ``local[N]`` when the worker embeds Spark, an executor
of any cluster through ``spark.master``. The job's closure carries only where to connect
and the host's secret; once the host connected, the launcher tells it of each task it is to
run (:class:`~sluice.taskhost.protocol.HostTask`), and the task connects back on a
connection of its own. The job's thread waits for it to end and puts
:class:`~sluice.spark.inbox.JobEnded` in the inbox of each task it still hosted, next to what
the task sends over its control connection (:mod:`sluice.spark.control`).

**How tasks are spread.** Tasks share hosts: a Connect task costs a host a few threads and
its Kafka clients, where a host of its own would cost a Python process (about 60 MB and a
share of a core while idle). The worker keeps *spread* shared hosts —
``sluice.task.hosts``, by default one per core in local mode (a Python process runs Python
code on one core at a time) and half the slots on a cluster (the others for dedicated tasks
and split reads), never more than Spark's slots — and gives each new task to the connected
one with the fewest tasks. A connector that sets ``sluice.task.host=dedicated`` gets a host of its own
for each of its tasks, let go when the task ends: isolation (a crash, a CPU-heavy plugin,
untrusted code) at a process's cost.

**Ahead of need.** Submitting a job, forking its Python worker and importing the task host
take a second or more, the first time far more (Spark's first job, the Python daemon's
start). So once warmed up the launcher keeps the spread's shared hosts up — with tasks or
empty — and submits one more host for each task that waits for one (a dedicated task when
no shared host is empty). A task placed in a connected host starts within milliseconds, and
the tasks of a connector started together spread over the hosts at once.
:meth:`SparkTaskLauncher.warm_up` starts them together and waits for the first (or as
many as the tasks a standalone worker is about to start): a worker joins its group only
after that.

A host whose task was abandoned (it did not stop in time, or its connection broke while the
host lived on) is *retired*: it takes no new task, and its job is cancelled — its Python
worker killed — once its other tasks have ended.

PySpark is not imported here: the session comes from the worker.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import math
import os
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from sluice.spark.control import TaskConnection, control_server
from sluice.spark.inbox import Connected, Inbox, JobEnded
from sluice.spark.split_read import SplitReadResult, run_split_read
from sluice.taskhost.host import run_host
from sluice.taskhost.protocol import Hello, HostBootstrap, HostHeartbeat, HostTask, RunJavaTask, TaskLaunch, TaskSpec
from sluice.taskhost.wire import ChannelClosed, ProtocolError, WorkerChannel

log = logging.getLogger(__name__)

__all__ = ["HostJob", "Launch", "SparkTaskLauncher", "TaskHostNotReady"]

#: After a host's job failed before it connected, how long before the launcher submits
#: another (a host that cannot start at all must not turn into a busy loop of jobs).
HOST_RETRY_S = 5.0
#: How long closing waits for the jobs of the hosts to end.
CLOSE_WAIT_S = 10.0
#: The most shared hosts a worker keeps by default on a cluster (``sluice.task.hosts`` 0):
#: each is a Python process that stays up while the worker runs.
DEFAULT_SPREAD_MAX = 8


class TaskHostNotReady(Exception):
    """No task host connected within the time given (:meth:`SparkTaskLauncher.warm_up`)."""


class HostOwner(Protocol):
    """What hosts' jobs and launched tasks report to: the launcher of Python task hosts
    (:class:`SparkTaskLauncher`), or the pool of JVM ones
    (:class:`sluice.spark.jvm_hosts.JvmHostPool`)."""

    spark: Any
    server: Any

    def tasks_of(self, host: HostJob) -> list[Launch]: ...

    def host_connected(self, host: HostJob) -> None: ...

    def host_lost(self, host: HostJob) -> None: ...

    def host_ended(self, host: HostJob, error: str | None) -> None: ...

    def task_left(self, launch: Launch) -> None: ...

    def withdraw(self, launch: Launch) -> None: ...


class JavaHosts(Protocol):
    """Where Java tasks run (:class:`sluice.spark.jvm_hosts.JvmHostPool`)."""

    def launch(self, task: RunJavaTask, inbox: Inbox) -> Launch: ...

    def close(self, wait_s: float) -> None: ...


class HostJob:
    """One task host's Spark job; it connects back, then runs the tasks it is given."""

    def __init__(self, launcher: HostOwner) -> None:
        self.launcher = launcher
        self.bootstrap = HostBootstrap(launcher.server.address, uuid.uuid4().hex, secrets.token_hex(16))
        self.job_group = f"sluice:host:{self.bootstrap.incarnation}"
        self.channel: WorkerChannel | None = None  # once it connected, with its hello
        self.hello: Hello | None = None
        self.job_ended = threading.Event()
        # The launcher's lock guards these three.
        self.tasks: set[Launch] = set()  # the tasks it runs (or is about to)
        self.dedicated = False  # it runs one task of a connector that wants a host of its own
        self.retired = False  # a task of it was abandoned: it takes no new one
        self._released = False  # the worker ended (or cancelled) it: its connection's end is no loss
        self._thread = threading.Thread(target=self._run_job, name="sluice-task-host-job", daemon=True)

    @property
    def shared(self) -> bool:
        """It takes new tasks (of connectors that share hosts)."""
        return not self.dedicated and not self.retired

    def start(self) -> None:
        self.launcher.server.register(self.bootstrap.incarnation, self.bootstrap.secret, self._on_connect)
        self._thread.start()

    def _on_connect(self, channel: WorkerChannel, hello: Hello) -> None:
        self.channel, self.hello = channel, hello
        threading.Thread(
            target=self._read_heartbeats, args=(channel,), name=f"sluice-host-{hello.incarnation[:8]}", daemon=True
        ).start()
        self.launcher.host_connected(self)

    def _read_heartbeats(self, channel: WorkerChannel) -> None:
        """Hand each heartbeat of the host to the inboxes of the tasks it runs, until the
        connection ends (the job's end tells the tasks why)."""
        while True:
            try:
                message = channel.recv()
            except ChannelClosed:
                break
            except ProtocolError as exc:
                log.warning("Unreadable message on a task host's connection; no more are read from it: %s", exc)
                break
            if not isinstance(message, HostHeartbeat):
                log.warning("Unexpected message on a task host's connection: %r", message)
                continue
            for launch in self.launcher.tasks_of(self):
                launch.inbox.host_heartbeat(message.metrics.get(launch.incarnation))
        if not self._released:
            # The host is gone (its process or executor died) though its job may not have
            # ended: on a cluster Spark retries it, and the retry, refused, ends it later.
            # No task may be placed in it meanwhile.
            self.launcher.host_lost(self)

    #: The job group's description, as Spark shows it.
    DESCRIPTION = "Sluice task host"

    def _run_job(self) -> None:
        error: str | None = None
        try:
            self.launcher.spark.sparkContext.setJobGroup(self.job_group, self.DESCRIPTION, interruptOnCancel=True)
            self._host_job()
        except BaseException as exc:  # noqa: BLE001 - the hosted tasks' supervisors (or the launcher) report it
            error = _spark_error(exc)
        finally:
            self.launcher.server.unregister(self.bootstrap.incarnation)
            self.job_ended.set()
            self.launcher.host_ended(self, error)

    def _host_job(self) -> None:
        """Run the host's Spark job until it ends: a Python task host."""
        bootstrap = self.bootstrap

        def host(rows: Iterator[Any]) -> Iterator[Any]:
            for _ in rows:  # the partition's single driving row
                pass
            yield from run_host(bootstrap)

        self.launcher.spark.sparkContext.parallelize([0], 1).mapPartitions(host).collect()

    def tell(self, launch: Launch) -> None:
        """Tell the host to run ``launch``'s task (it connects back for it)."""
        channel = self.channel
        assert channel is not None  # it connected
        try:
            channel.send(HostTask(launch.incarnation, launch.secret))
        except ChannelClosed as exc:  # its job's end tells the task
            log.debug("Task %s-%s: its host went away as it got it: %s", *launch.task.task.host_key, exc)

    def let_go(self) -> None:
        """End a host: it sees its connection close and, once its tasks have ended, ends
        its job normally (cancelling the job would have Spark log the interruption)."""
        self._released = True
        if self.channel is not None:
            self.channel.close()

    def cancel(self) -> None:
        """Stop the Spark job (its Python worker is killed, with every task in it)."""
        self._released = True
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

    def __init__(self, launcher: HostOwner, task: TaskLaunch, inbox: Inbox, dedicated: bool) -> None:
        self.launcher = launcher
        self.task = task
        self.inbox = inbox
        self.dedicated = dedicated
        # What the task's own connection proves itself with.
        self.incarnation = uuid.uuid4().hex
        self.secret = secrets.token_hex(16)
        self.connection = TaskConnection(inbox, on_end=self._left)
        self.host: HostJob | None = None  # (the launcher's lock)
        self.withdrawn = False  # (the launcher's lock)

    def _left(self) -> None:
        self.launcher.task_left(self)

    def hand_to(self, host: HostJob, lock: threading.Lock) -> None:
        """Tell ``host`` of the task; its connection, when it comes, gets the task to run
        (unless the task was withdrawn meanwhile: ``lock`` is the owner's, which guards
        :attr:`withdrawn`)."""
        self.launcher.server.register(
            self.incarnation, self.secret, lambda channel, hello: self._connected(channel, hello, lock)
        )
        host.tell(self)

    def _connected(self, channel: WorkerChannel, hello: Hello, lock: threading.Lock) -> None:
        with lock:
            withdrawn = self.withdrawn
        if withdrawn:
            channel.close()
            return
        try:
            channel.send(self.task)  # the task connection's first message: the task to run
        except ChannelClosed as exc:
            log.debug("Task %s-%s: its connection closed as it got the task: %s", *self.task.task.host_key, exc)
        self.connection.attach(channel, hello)
        self.inbox.put(Connected(hello))

    def cancel(self) -> None:
        """Abandon the task, e.g. one that did not stop in time: a task still waiting for
        a host no longer waits; a task in a host of its own has it killed; a task in a
        shared host leaves it, and the host is retired."""
        self.launcher.withdraw(self)
        self.connection.close()


def _spark_error(exc: BaseException) -> str:
    """Spark's error, without the JVM stack traces py4j appends to it."""
    text = str(exc).strip() or type(exc).__name__
    lines = text.splitlines()
    kept = [line for line in lines if not line.lstrip().startswith("at ")]
    return "\n".join(kept[:60])


def default_spread(spark: Any) -> int:
    """How many shared hosts by default: one per core that runs Spark's tasks — this
    machine's in local mode (the worker's own process is the executor) — or on a cluster
    half the executors' slots, at most :data:`DEFAULT_SPREAD_MAX`."""
    context = spark.sparkContext
    slots = int(context.defaultParallelism)
    if str(context.master).startswith("local"):
        return max(1, min(slots, os.cpu_count() or 1))
    # half the slots: the others for dedicated tasks and split reads (a cluster's slots are
    # its cores, where local mode's are threads, many more than the hosts)
    return max(1, min(slots // 2, DEFAULT_SPREAD_MAX))


class SparkTaskLauncher:
    """Launches tasks on the worker's Spark session; one per worker. ``hosts``: how many
    shared hosts to spread tasks over (``sluice.task.hosts``; 0: one per executor core)."""

    def __init__(self, spark: Any, hosts: int = 0) -> None:
        self.spark = spark
        conf = spark.sparkContext.getConf()
        host = conf.get("spark.driver.host", "127.0.0.1")
        bind = conf.get("spark.driver.bindAddress", host)
        self.server = control_server(bind, host)
        self.spread = min(hosts if hosts > 0 else default_spread(spark), max(1, self.slots))
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._waiting: collections.deque[Launch] = collections.deque()  # tasks without a host yet
        self._connected: list[HostJob] = []  # in the order they connected
        self._starting: set[HostJob] = set()  # submitted, not connected yet
        self._running: set[HostJob] = set()  # every host whose job has not ended
        self._warm = False  # keep the spread's hosts up (once warmed up)
        self._closed = threading.Event()
        #: Where Java tasks run; set by the worker when plugin.path holds Java plugins.
        self.java_hosts: JavaHosts | None = None

    def tasks_of(self, host: HostJob) -> list[Launch]:
        """The tasks ``host`` runs (or is about to)."""
        with self._lock:
            return list(host.tasks)

    @property
    def slots(self) -> int:
        """How many Spark tasks can run at once (local mode's threads, a cluster's cores)."""
        return int(self.spark.sparkContext.defaultParallelism)

    @property
    def master(self) -> str:
        return str(self.spark.sparkContext.master)

    def hosts(self) -> list[tuple[int, bool, bool]]:
        """Each connected host's task count, and whether it is dedicated, or retired (for
        tests and diagnostics)."""
        with self._lock:
            return [(len(h.tasks), h.dedicated, h.retired) for h in self._connected]

    # -- what the worker and the supervisors call ----------------------------------------

    def warm_up(self, timeout_s: float, hosts: int = 1) -> float:
        """Start the shared hosts — as many as tasks spread over, all together — and wait
        until as many as ``hosts`` (the tasks the worker is about to start; one at least, at
        most the spread) connected: Spark has then run a job, started its Python daemon and
        imported the task host. Returns the seconds it took; raises
        :class:`TaskHostNotReady` when not one connected in time (fewer than ``hosts`` in
        time is enough: the others take the tasks as they connect).

        From then on the launcher keeps the spread's hosts up, so that each new task is
        placed at once, and tasks started together spread over them."""
        started = time.monotonic()
        wanted = max(1, min(hosts, self.spread, self.slots))
        with self._lock:
            self._warm = True
        self._submit_needed()
        with self._changed:
            all_up = self._changed.wait_for(lambda: len(self._connected) >= wanted or self._closed.is_set(), timeout_s)
            if not all_up and not self._connected:
                raise TaskHostNotReady(f"No Spark task host connected back within {timeout_s:.0f} s")
        return time.monotonic() - started

    def launch(self, task: TaskLaunch, inbox: Inbox, dedicated: bool = False) -> Launch:
        """Start ``task`` in a connected host when one may take it (at once), else in the
        first that connects; submit the hosts that keeps needing. ``dedicated``: in a host
        of its own."""
        if isinstance(task, RunJavaTask):
            if self.java_hosts is None:
                raise RuntimeError("This worker runs no Java tasks: no Java plugin was found on plugin.path")
            return self.java_hosts.launch(task, inbox)
        launch = Launch(self, task, inbox, dedicated)
        with self._lock:
            host = self._place(launch)
            if host is None:
                self._waiting.append(launch)
        if host is not None:
            log.debug("Task %s-%s goes to a task host with %d other tasks", *task.task.host_key, len(host.tasks) - 1)
            launch.hand_to(host, self._lock)
        self._submit_needed()
        return launch

    def withdraw(self, launch: Launch) -> None:
        """The task is abandoned: it stops waiting for a host, or leaves its host (which is
        retired if the task may still be running there, and cancelled once empty)."""
        with self._lock:
            launch.withdrawn = True
            host = launch.host
            if host is None:
                with contextlib.suppress(ValueError):
                    self._waiting.remove(launch)
                return
            if launch.connection.connected or host.dedicated:
                host.retired = True
            action = self._leave(launch, host)
        if action is not None:
            action()
        self._submit_needed()

    def close(self) -> None:
        """Keep no standby any more; let every host go, and wait for their jobs to end
        (Spark stopped under a job still ending logs errors of its own)."""
        with self._lock:
            self._closed.set()
            connected = list(self._connected)
            starting = list(self._starting)
            running = list(self._running)
            self._connected.clear()
            self._starting.clear()
            self._changed.notify_all()
        for host in connected:
            host.let_go()
        for host in starting:
            host.cancel()  # not connected yet: nothing to tell it
        if self.java_hosts is not None:
            self.java_hosts.close(CLOSE_WAIT_S)
        deadline = time.monotonic() + CLOSE_WAIT_S
        for host in running:
            if not host.job_ended.wait(max(0.0, deadline - time.monotonic())):
                host.cancel()

    def run_split_read(self, task: TaskSpec, kafka_options: dict[str, str], parts: list[bytes]) -> SplitReadResult:
        """Read the parts of a split read as one Spark job (:mod:`sluice.spark.split_read`)."""
        return run_split_read(self.spark, task, kafka_options, parts)

    # -- what the hosts' jobs and the tasks' connections call --------------------------------

    def host_connected(self, host: HostJob) -> None:
        """A host connected: it takes the tasks waiting for it, or stands by."""
        surplus = False
        with self._lock:
            self._starting.discard(host)
            taken = self._take_waiting(host) if not self._closed.is_set() else []
            if not taken:
                if self._closed.is_set() or self._empty_shared(connected_only=True) >= self._empties_wanted():
                    surplus = True  # the tasks it was for went away meanwhile
                else:
                    self._connected.append(host)
                    self._changed.notify_all()
            else:
                self._connected.append(host)
        for launch in taken:
            launch.hand_to(host, self._lock)
        if surplus:
            host.let_go()
        elif not taken:
            hello = host.hello
            assert hello is not None  # it connected
            log.debug("A standby task host is ready: pid %d on %s", hello.pid, hello.host)
        self._submit_needed()

    def host_lost(self, host: HostJob) -> None:
        """A host's connection ended without the worker ending it: the host takes no more
        tasks (those it had hear of it from their own connections), and a standby it was is
        replaced."""
        with self._lock:
            self._forget(host)
        self._submit_needed()

    def host_ended(self, host: HostJob, error: str | None) -> None:
        """A host's job ended: its tasks hear it; a host that had no task is replaced if
        the launcher needs one."""
        with self._lock:
            launches = list(host.tasks)
            host.tasks.clear()
            self._forget(host)
            self._running.discard(host)
            retry = not launches and not self._closed.is_set()
        for launch in launches:
            self.server.unregister(launch.incarnation)
            launch.inbox.put(JobEnded(error))
        if retry:
            if error:
                log.warning(
                    "A task host's Spark job failed before it got a task; another in %.0f s: %s", HOST_RETRY_S, error
                )
                if self._closed.wait(HOST_RETRY_S):
                    return
            self._submit_needed()
        elif launches:
            self._submit_needed()

    def task_left(self, launch: Launch) -> None:
        """A task's connection ended: it no longer runs in its host. A dedicated host is let
        go, a retired one cancelled once empty, and an empty shared host stays as the
        standby unless there is one already."""
        with self._lock:
            host = launch.host
            if host is None:
                return
            action = self._leave(launch, host)
        if action is not None:
            action()
        self._submit_needed()

    # -- inside (the lock held where it says so) ------------------------------------------------

    def _leave(self, launch: Launch, host: HostJob) -> Callable[[], None] | None:
        """(Lock held.) ``launch`` no longer runs in ``host``. Returns what to do with the
        host once the lock is released, if anything: a retired host that is empty is
        cancelled; an empty dedicated one (its task is over) and an empty shared one beyond
        those the spread keeps are let go."""
        if launch in host.tasks:
            host.tasks.discard(launch)
            self.server.unregister(launch.incarnation)
        if host.tasks or host not in self._connected:
            return None  # busy, or dealt with already (let go, cancelled, or its job ended)
        if host.retired:
            action = host.cancel
        elif (
            host.dedicated or self._closed.is_set() or self._empty_shared(connected_only=True) > self._empties_wanted()
        ):
            action = host.let_go
        else:
            return None
        self._forget(host)
        return action

    def _place(self, launch: Launch) -> HostJob | None:
        """(Lock held.) The connected host that takes ``launch`` now, if any: an empty
        shared one for a dedicated task, the shared one with the fewest tasks otherwise."""
        candidates = [h for h in self._connected if h.shared and (not launch.dedicated or not h.tasks)]
        if not candidates:
            return None
        host = min(candidates, key=lambda h: len(h.tasks))
        self._attach(launch, host)
        return host

    def _attach(self, launch: Launch, host: HostJob) -> None:
        """(Lock held.)"""
        launch.host = host
        host.tasks.add(launch)
        if launch.dedicated:
            host.dedicated = True

    def _take_waiting(self, host: HostJob) -> list[Launch]:
        """(Lock held.) The waiting tasks a host that just connected takes: the one that
        waited longest if it is dedicated; else its share of the waiting shared tasks, the
        rest being left to the hosts still starting."""
        if not self._waiting:
            return []
        if self._waiting[0].dedicated:
            launch = self._waiting.popleft()
            self._attach(launch, host)
            return [launch]
        shared = [launch for launch in self._waiting if not launch.dedicated]
        starting = sum(1 for h in self._starting if h.shared)
        share = shared[: math.ceil(len(shared) / (1 + starting))]
        for launch in share:
            self._waiting.remove(launch)
            self._attach(launch, host)
        return share

    def _forget(self, host: HostJob) -> None:
        """(Lock held.) The host takes no task any more."""
        self._starting.discard(host)
        if host in self._connected:
            self._connected.remove(host)

    def _empty_shared(self, connected_only: bool = False) -> int:
        """(Lock held.) Shared hosts without tasks (connected, and starting unless not)."""
        hosts = self._connected if connected_only else [*self._connected, *self._starting]
        return sum(1 for h in hosts if h.shared and not h.tasks)

    def _empties_wanted(self) -> int:
        """(Lock held.) How many empty shared hosts to keep: once warmed up, those that make
        up the spread with the shared hosts that have tasks."""
        busy = sum(1 for h in self._connected if h.shared and h.tasks)
        return max(0, self.spread - busy) if self._warm else 0

    def _submit_needed(self) -> None:
        """Submit as many hosts as the waiting tasks and the standby need, counting those
        already starting or standing by."""
        with self._lock:
            if self._closed.is_set():
                return
            dedicated = sum(1 for launch in self._waiting if launch.dedicated)
            shared_waiting = any(not launch.dedicated for launch in self._waiting)
            any_shared = any(h.shared for h in [*self._connected, *self._starting])
            # Shared tasks wait only while no shared host is connected: the first to connect
            # (a standby, say) takes them.
            for_shared = 1 if shared_waiting and not any_shared else 0
            wanted = max(self._empties_wanted(), for_shared) + dedicated
            missing = wanted - self._empty_shared()
            hosts = [HostJob(self) for _ in range(max(0, missing))]
            self._starting.update(hosts)
            self._running.update(hosts)
        for host in hosts:
            host.start()
