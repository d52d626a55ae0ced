"""Launches Connect tasks as long-lived Spark tasks (the driver side).

A launch is one Spark job of one partition — ``range(1).mapInArrow(run_task)`` — whose
only Spark task hosts the Connect task for its whole life (:mod:`sluice.taskhost.host`).
Spark places it: a thread slot of ``local[N]`` when the worker embeds Spark, an executor
of any cluster through ``spark.master``. The job's closure carries only where to connect
and the launch's secret; once the host connected, the launch sends it the task to run.
The job's thread waits for it to end and puts :class:`~sluice.spark.inbox.JobEnded` in the
task's inbox, next to what the task sends over its control connection
(:mod:`sluice.spark.control`).

PySpark is not imported here: the session comes from the worker.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import threading
from collections.abc import Iterator
from typing import Any

from sluice.spark.control import TaskConnection, control_server
from sluice.spark.inbox import Connected, Inbox, JobEnded
from sluice.spark.split_read import SplitReadResult, run_split_read
from sluice.taskhost.host import TASK_OUTPUT_DDL, run_task
from sluice.taskhost.protocol import Hello, HostBootstrap, TaskLaunch, TaskSpec
from sluice.taskhost.wire import ChannelClosed, WorkerChannel

log = logging.getLogger(__name__)

__all__ = ["Launch", "SparkTaskLauncher"]


def _job_group(task: TaskSpec) -> str:
    return f"sluice:{task.connector}:{task.task}:{task.incarnation}"


class Launch:
    """One launched task: its connection and its Spark job."""

    def __init__(self, launcher: SparkTaskLauncher, task: TaskLaunch, inbox: Inbox) -> None:
        self.launcher = launcher
        self.task = task
        self.inbox = inbox
        self.connection = TaskConnection(inbox)
        self.job_ended = threading.Event()
        self.bootstrap = HostBootstrap(launcher.server.address, task.task.incarnation, secrets.token_hex(16))
        self._thread = threading.Thread(
            target=self._run_job, name=f"sluice-job-{task.task.connector}-{task.task.task}", daemon=True
        )

    def _attach(self, channel: WorkerChannel, hello: Hello) -> None:
        try:
            channel.send(self.task)  # the host's first message: the task to run
        except ChannelClosed as exc:
            log.debug("Task %s-%s: its host went away as it connected: %s", *self.task.task.host_key, exc)
        self.connection.attach(channel, hello)
        self.inbox.put(Connected(hello))

    def start(self) -> None:
        self.launcher.server.register(self.bootstrap.incarnation, self.bootstrap.secret, self._attach)
        self._thread.start()

    def _run_job(self) -> None:
        spark = self.launcher.spark
        bootstrap = self.bootstrap
        task = self.task.task
        error: str | None = None

        def host(batches: Iterator[Any]) -> Iterator[Any]:
            for _ in batches:  # the single driving row of range(1)
                pass
            yield from run_task(bootstrap)

        try:
            spark.sparkContext.setJobGroup(
                _job_group(task), f"Connect task {task.connector}-{task.task}", interruptOnCancel=True
            )
            spark.range(0, 1, 1, 1).mapInArrow(host, TASK_OUTPUT_DDL).collect()
        except BaseException as exc:  # noqa: BLE001 - the task's supervisor reports it
            error = _spark_error(exc)
        finally:
            self.launcher.server.unregister(bootstrap.incarnation)
            self.job_ended.set()
            self.inbox.put(JobEnded(error))

    def cancel(self) -> None:
        """Stop the Spark job (its Python worker is killed), e.g. for a task that did not stop in time."""
        self.launcher.server.unregister(self.bootstrap.incarnation)
        if not self.job_ended.is_set():
            with contextlib.suppress(Exception):  # Spark stopping or stopped: the job is gone with it
                self.launcher.spark.sparkContext.cancelJobGroup(_job_group(self.task.task))
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

    @property
    def slots(self) -> int:
        """How many Spark tasks can run at once (local mode's threads, a cluster's cores)."""
        return int(self.spark.sparkContext.defaultParallelism)

    @property
    def master(self) -> str:
        return str(self.spark.sparkContext.master)

    def launch(self, task: TaskLaunch, inbox: Inbox) -> Launch:
        """Submit the task's Spark job; its host gets ``task`` once it connected."""
        launch = Launch(self, task, inbox)
        launch.start()
        return launch

    def run_split_read(self, task: TaskSpec, kafka_options: dict[str, str], parts: list[bytes]) -> SplitReadResult:
        """Read the parts of a split read as one Spark job (:mod:`sluice.spark.split_read`)."""
        return run_split_read(self.spark, task, kafka_options, parts)
