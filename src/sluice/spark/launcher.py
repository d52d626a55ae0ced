"""Launches Connect tasks as long-lived Spark tasks (the driver side).

A task host is one Spark job of one partition — ``range(1).mapInArrow(run_task)`` — whose
only Spark task hosts a Connect task for its whole life (:mod:`sluice.taskhost.host`).
Spark places it: a thread slot of ``local[N]`` when the worker embeds Spark, an executor
of any cluster through ``spark.master``. The job's closure carries only where to connect
and the host's secret; once the host connected, the launcher sends it the task to run.
The job's thread waits for it to end and puts :class:`~sluice.spark.inbox.JobEnded` in the
task's inbox, next to what the task sends over its control connection
(:mod:`sluice.spark.control`).

Submitting a job, forking its Python worker and importing the task host take a second or
more, the first time far more (Spark's first job, the Python daemon's start). So the
launcher keeps a *standby* host: a job submitted ahead of need, whose host connected and
waits for a task. A launch takes it when it is ready — the task starts within
milliseconds — and a new standby is submitted in its place. :meth:`SparkTaskLauncher.warm_up`
makes the first one and waits for it: the worker joins its group only after that.

PySpark is not imported here: the session comes from the worker.
"""

from __future__ import annotations

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
from sluice.taskhost.host import TASK_OUTPUT_DDL, run_task
from sluice.taskhost.protocol import Hello, HostBootstrap, TaskLaunch, TaskSpec
from sluice.taskhost.wire import ChannelClosed, WorkerChannel

log = logging.getLogger(__name__)

__all__ = ["Launch", "SparkTaskLauncher", "TaskHostNotReady"]

#: After a standby host's job failed, how long before the next one is submitted (a host
#: that cannot start at all must not turn into a busy loop of failing jobs).
STANDBY_RETRY_S = 5.0


class TaskHostNotReady(Exception):
    """No task host connected within the time given (:meth:`SparkTaskLauncher.warm_up`)."""


class Launch:
    """One task host: its Spark job and, once bound to a task, its connection.

    A launch made for a task is bound from the start; a standby is bound when a task takes
    it. Either way the host gets the task as its first message once both happened: it
    connected, and it is bound."""

    def __init__(self, launcher: SparkTaskLauncher, standby: bool, label: str) -> None:
        self.launcher = launcher
        self.standby = standby
        self.bootstrap = HostBootstrap(
            launcher.server.address, uuid.uuid4().hex, secrets.token_hex(16), standby=standby
        )
        self.job_group = f"sluice:{label}:{self.bootstrap.incarnation}"
        self.task: TaskLaunch | None = None
        self.inbox: Inbox | None = None
        self.connection: TaskConnection = TaskConnection(None)
        self.job_ended = threading.Event()
        self.connected = threading.Event()  # its host connected (bound or not)
        self._parked: tuple[WorkerChannel, Hello] | None = None  # connected, not bound yet
        self._job_error: str | None = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run_job, name=f"sluice-job-{label}", daemon=True)

    # -- binding ----------------------------------------------------------------------

    def bind(self, task: TaskLaunch, inbox: Inbox) -> bool:
        """Give this host ``task``; False when its job has already ended."""
        with self._lock:
            if self.job_ended.is_set() or self.task is not None:
                return False
            self.task, self.inbox = task, inbox
            self.connection.inbox = inbox
            parked, self._parked = self._parked, None
        if parked is not None:
            self._hand_over(*parked)
        return True

    def _on_connect(self, channel: WorkerChannel, hello: Hello) -> None:
        with self._lock:
            bound = self.task is not None
            if not bound:
                self._parked = (channel, hello)
        self.connected.set()
        if bound:
            self._hand_over(channel, hello)
        else:
            log.debug("A standby task host is ready: pid %d on %s", hello.pid, hello.host)

    def _hand_over(self, channel: WorkerChannel, hello: Hello) -> None:
        assert self.task is not None and self.inbox is not None
        try:
            channel.send(self.task)  # the host's first message: the task to run
        except ChannelClosed as exc:
            log.debug("Task %s-%s: its host went away as it connected: %s", *self.task.task.host_key, exc)
        self.connection.attach(channel, hello)
        self.inbox.put(Connected(hello))

    # -- the job ----------------------------------------------------------------------

    def start(self) -> None:
        self.launcher.server.register(self.bootstrap.incarnation, self.bootstrap.secret, self._on_connect)
        self._thread.start()

    def _run_job(self) -> None:
        spark = self.launcher.spark
        bootstrap = self.bootstrap
        error: str | None = None

        def host(batches: Iterator[Any]) -> Iterator[Any]:
            for _ in batches:  # the single driving row of range(1)
                pass
            yield from run_task(bootstrap)

        try:
            description = "Sluice task host (standby)" if self.standby else "Sluice task host"
            spark.sparkContext.setJobGroup(self.job_group, description, interruptOnCancel=True)
            spark.range(0, 1, 1, 1).mapInArrow(host, TASK_OUTPUT_DDL).collect()
        except BaseException as exc:  # noqa: BLE001 - the task's supervisor (or the standby pool) reports it
            error = _spark_error(exc)
        finally:
            self.launcher.server.unregister(bootstrap.incarnation)
            with self._lock:
                self.job_ended.set()
                self._job_error = error
                inbox, parked, self._parked = self.inbox, self._parked, None
            if parked is not None:
                parked[0].close()
            if inbox is not None:
                inbox.put(JobEnded(error))
            else:
                self.launcher.standby_ended(self, error)

    def cancel(self) -> None:
        """Stop the Spark job (its Python worker is killed), e.g. for a task that did not stop in time."""
        self.launcher.server.unregister(self.bootstrap.incarnation)
        if not self.job_ended.is_set():
            with contextlib.suppress(Exception):  # Spark stopping or stopped: the job is gone with it
                self.launcher.spark.sparkContext.cancelJobGroup(self.job_group)
        with self._lock:
            parked, self._parked = self._parked, None
        if parked is not None:
            parked[0].close()
        self.connection.close()


def _spark_error(exc: BaseException) -> str:
    """Spark's error, without the JVM stack traces py4j appends to it."""
    text = str(exc).strip() or type(exc).__name__
    lines = text.splitlines()
    kept = [line for line in lines if not line.lstrip().startswith("at ")]
    return "\n".join(kept[:60])


class SparkTaskLauncher:
    """Launches tasks on the worker's Spark session; one per worker."""

    def __init__(self, spark: Any, standby: bool = True) -> None:
        self.spark = spark
        conf = spark.sparkContext.getConf()
        host = conf.get("spark.driver.host", "127.0.0.1")
        bind = conf.get("spark.driver.bindAddress", host)
        self.server = control_server(bind, host)
        self._keep_standby = standby
        self._standby: Launch | None = None  # submitted ahead of need; taken once connected
        self._lock = threading.Lock()
        self._closed = False
        self._retry = threading.Event()

    @property
    def slots(self) -> int:
        """How many Spark tasks can run at once (local mode's threads, a cluster's cores)."""
        return int(self.spark.sparkContext.defaultParallelism)

    @property
    def master(self) -> str:
        return str(self.spark.sparkContext.master)

    def warm_up(self, timeout_s: float) -> float:
        """Submit the standby host and wait until it connected: Spark has then run a job,
        started its Python daemon and imported the task host. Returns the seconds it took;
        raises :class:`TaskHostNotReady` when it did not connect in time."""
        started = time.monotonic()
        self._keep_standby = True
        standby = self._ensure_standby()
        if standby is None or not standby.connected.wait(timeout_s):
            raise TaskHostNotReady(f"No Spark task host connected back within {timeout_s:.0f} s")
        return time.monotonic() - started

    def launch(self, task: TaskLaunch, inbox: Inbox) -> Launch:
        """Start ``task`` in the standby host — at once when it is connected, else as soon
        as it connects (its job is ahead of any new one) — and submit the next standby.
        Without a standby, in a host of its own."""
        with self._lock:
            standby, self._standby = self._standby, None
        if standby is not None and standby.bind(task, inbox):
            log.debug(
                "Task %s-%s takes the standby task host (%s)",
                *task.task.host_key,
                "connected" if standby.connected.is_set() else "still starting",
            )
            self._ensure_standby()
            return standby
        launch = Launch(self, standby=False, label=f"{task.task.connector}-{task.task.task}")
        launch.bind(task, inbox)
        launch.start()
        self._ensure_standby()
        return launch

    def _ensure_standby(self) -> Launch | None:
        """Submit a standby host unless one is there (or the launcher keeps none)."""
        with self._lock:
            if self._closed or not self._keep_standby:
                return None
            if self._standby is None:
                self._standby = Launch(self, standby=True, label="standby")
                self._standby.start()
            return self._standby

    def standby_ended(self, launch: Launch, error: str | None) -> None:
        """A standby's job ended before any task took it: replace it (after a pause when
        it failed, so that a host that cannot start does not spin)."""
        with self._lock:
            if self._standby is launch:
                self._standby = None
            closed = self._closed
        if closed:
            return
        if error:
            log.warning(
                "The standby task host's Spark job failed; submitting another in %.0f s: %s", STANDBY_RETRY_S, error
            )
            threading.Thread(target=self._retry_standby, name="sluice-standby-retry", daemon=True).start()
        else:
            self._ensure_standby()

    def _retry_standby(self) -> None:
        if not self._retry.wait(STANDBY_RETRY_S):
            self._ensure_standby()

    def close(self) -> None:
        """Stop keeping a standby host and cancel the one there is."""
        with self._lock:
            self._closed = True
            standby, self._standby = self._standby, None
        self._retry.set()
        if standby is not None:
            standby.cancel()

    def run_split_read(self, task: TaskSpec, kafka_options: dict[str, str], parts: list[bytes]) -> SplitReadResult:
        """Read the parts of a split read as one Spark job (:mod:`sluice.spark.split_read`)."""
        return run_split_read(self.spark, task, kafka_options, parts)
