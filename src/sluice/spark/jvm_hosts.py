"""JVM task hosts: where Kafka Connect's own (Java) tasks run, as Spark tasks in the
executors' JVM (the driver side).

A JVM task host is one Spark job of one partition whose function is Java
(``JvmTaskHostFunction``, on ``spark.jars``): submitted from Python as
``JavaRDD.foreachPartition``, it starts in an executor's task thread without a Python
worker, loads Kafka Connect's runtime in a class loader of its own and runs the host
(``TaskHost.java``) until the worker lets it go. It speaks the protocol of the Python task
hosts (:mod:`sluice.taskhost.protocol`): it connects back with its hello, is told of each
task on its host connection, runs each on a connection of its own, and sends the host's
heartbeat. Its tasks are launched, supervised and placed like Python tasks — only their
first message differs (:class:`~sluice.taskhost.protocol.RunJavaTask`).

One host serves all Java tasks: a JVM is there already, and a task in it costs its threads
and Kafka clients, not a process. It is submitted when the first Java task is launched and
kept while the worker runs; a host whose job ended is replaced when a task needs one.

On a cluster, the runtime's jars (Kafka Connect's, from Sluice's cache, and the host's) are
shipped to the executors with the job (``SparkContext.addFile``); the plugins are read from
``plugin.path`` on the executors' machines, which must hold the same directories (a shared
or copied path, as every Kafka Connect worker of a cluster needs its plugins).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping
from typing import Any

from sluice.spark.inbox import Inbox, JobEnded
from sluice.spark.launcher import HOST_RETRY_S, HostJob, Launch
from sluice.spark.session import java_spark_context, jvm_view
from sluice.taskhost.protocol import RunJavaTask

log = logging.getLogger(__name__)

__all__ = ["JvmHostJob", "JvmHostPool"]

HOST_FUNCTION = "sluice.jvmhost.boot.JvmTaskHostFunction"


class JvmHostJob(HostJob):
    """One JVM task host's Spark job."""

    def __init__(self, pool: JvmHostPool) -> None:
        super().__init__(pool)
        self.pool = pool
        self.job_group = f"sluice:jvm-host:{self.bootstrap.incarnation}"

    DESCRIPTION = "Sluice JVM task host"

    def _host_job(self) -> None:
        """Run the host's Spark job until it ends: a JVM task host, whose function is Java."""
        pool, bootstrap = self.pool, self.bootstrap
        jvm = jvm_view(pool.spark)
        rows = jvm.java.util.ArrayList()
        rows.add(0)
        spec = {
            "address": list(bootstrap.address),
            "incarnation": bootstrap.incarnation,
            "secret": bootstrap.secret,
            "heartbeat_interval_ms": bootstrap.heartbeat_interval_ms,
            "runtime": dict(pool.runtime_settings),
        }
        function = getattr(jvm, HOST_FUNCTION)(pool.classpath, json.dumps(spec))
        java_spark_context(pool.spark).parallelize(rows, 1).foreachPartition(function)


class JvmHostPool:
    """The worker's JVM task host, and the Java tasks waiting for it."""

    def __init__(self, spark: Any, server: Any, classpath: str, runtime_settings: Mapping[str, str]) -> None:
        self.spark = spark
        self.server = server
        self.classpath = classpath
        self.runtime_settings = dict(runtime_settings)
        if not str(spark.sparkContext.master).startswith("local"):
            for jar in classpath.split(os.pathsep):
                if jar:
                    spark.sparkContext.addFile(jar)  # the host finds it with SparkFiles.get
        self._lock = threading.Lock()
        self._host: JvmHostJob | None = None  # submitted, maybe connected
        self._connected = False
        self._waiting: list[Launch] = []
        self._running: set[JvmHostJob] = set()
        self._closed = threading.Event()

    def launch(self, task: RunJavaTask, inbox: Inbox) -> Launch:
        """Run ``task`` in the JVM host: at once when it is connected, else once it is."""
        launch = Launch(self, task, inbox, dedicated=False)
        with self._lock:
            host = self._host if self._connected else None
            if host is not None:
                self._attach(launch, host)
            else:
                self._waiting.append(launch)
        if host is not None:
            launch.hand_to(host, self._lock)
        else:
            self._submit_if_needed()
        return launch

    def _submit_if_needed(self) -> None:
        """Submit a host when tasks wait for one and none is starting or up."""
        with self._lock:
            if self._host is not None or not self._waiting or self._closed.is_set():
                return
            host = self._host = JvmHostJob(self)
            self._running.add(host)
        host.start()

    def tasks_of(self, host: HostJob) -> list[Launch]:
        with self._lock:
            return list(host.tasks)

    def host_connected(self, host: HostJob) -> None:
        with self._lock:
            if host is not self._host or self._closed.is_set():
                taken: list[Launch] = []
                surplus = True
            else:
                self._connected, surplus = True, False
                taken, self._waiting = self._waiting, []
                for launch in taken:
                    self._attach(launch, host)
        if surplus:
            host.let_go()
            return
        hello = host.hello
        assert hello is not None
        log.info("A JVM task host is ready: pid %d on %s", hello.pid, hello.host)
        for launch in taken:
            launch.hand_to(host, self._lock)

    def host_lost(self, host: HostJob) -> None:
        """The host's connection ended without the worker ending it: tasks launched from now
        on wait for a new host (its tasks hear of it from their own connections)."""
        with self._lock:
            if host is self._host:
                self._host, self._connected = None, False
        self._submit_if_needed()

    def host_ended(self, host: HostJob, error: str | None) -> None:
        """The host's job ended: its tasks hear why; tasks still waiting get a new host."""
        with self._lock:
            launches = list(host.tasks)
            host.tasks.clear()
            self._running.discard(host)
            if host is self._host:
                if error and not self._connected:
                    # It never connected: the tasks waiting for it fail with the reason (a
                    # host that cannot start would otherwise be submitted again and again).
                    launches += self._waiting
                    self._waiting = []
                self._host, self._connected = None, False
            resubmit = bool(self._waiting) and not self._closed.is_set()
        for launch in launches:
            self.server.unregister(launch.incarnation)
            launch.inbox.put(JobEnded(error))
        if error and launches:
            log.warning("A JVM task host's Spark job ended: %s", error)
        if resubmit and not (error and self._closed.wait(HOST_RETRY_S)):
            self._submit_if_needed()

    def task_left(self, launch: Launch) -> None:
        """A task's connection ended: it no longer runs in the host (which stays)."""
        with self._lock:
            host = launch.host
            if host is not None and launch in host.tasks:
                host.tasks.discard(launch)
                self.server.unregister(launch.incarnation)

    def withdraw(self, launch: Launch) -> None:
        """The task is abandoned: it stops waiting, or leaves the host (its connection is
        closed next, and the host stops the task)."""
        with self._lock:
            launch.withdrawn = True
            if launch in self._waiting:
                self._waiting.remove(launch)
            host = launch.host
            if host is not None and launch in host.tasks:
                host.tasks.discard(launch)
                self.server.unregister(launch.incarnation)

    def close(self, wait_s: float) -> None:
        """Let the host go and wait for its job to end; cancel it if it does not."""
        with self._lock:
            self._closed.set()
            running = list(self._running)
            connected = self._host if self._connected else None
        for host in running:
            if host is connected:
                host.let_go()
            else:
                host.cancel()
        for host in running:
            if not host.job_ended.wait(wait_s):
                host.cancel()

    @staticmethod
    def _attach(launch: Launch, host: HostJob) -> None:
        """(Lock held.)"""
        launch.host = host
        host.tasks.add(launch)
