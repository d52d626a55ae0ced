"""The entry point of a task host: what runs inside the long-lived Spark task that hosts
Connect tasks, many at once, as Kafka Connect's worker hosts them in one JVM.

:func:`run_host` is the Python function of the host's one-partition Spark job. It connects
to the worker's control server and says who it is (:class:`~sluice.taskhost.protocol.Hello`);
on that host connection the worker sends a :class:`~sluice.taskhost.protocol.HostTask` for
each Connect task it gives the host (hosts are started ahead of need and wait for their
first). Each task runs on a thread of its own (:class:`HostedTask`) with a connection of its
own: it says hello with its launch's secret, receives the task to run, and runs its loop —
:class:`~sluice.taskhost.source.SourceLoop` or :class:`~sluice.taskhost.sink.SinkLoop` —
until the worker says stop, the task fails, or the worker goes away. Source tasks with the
same producer settings write through one producer
(:class:`~sluice.taskhost.producers.HostProducers`). A task that raises
fails only itself; its siblings keep running. Each task's connection has a reader thread
(:class:`~sluice.taskhost.control.TaskControl`); one thread per host sends the host's
heartbeat, for all its tasks, on the host connection
(:class:`~sluice.taskhost.control.Heartbeats`).

The host ends once the worker closed its host connection (it lets an idle host go that
way, and a worker that went away closes everything) and its tasks have all ended.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Iterator

from sluice.kafka.clients import LIBRDKAFKA, KafkaClients
from sluice.taskhost import wire
from sluice.taskhost.control import Heartbeats, TaskControl, WorkerGone
from sluice.taskhost.loop import TaskLoop, format_trace
from sluice.taskhost.plugins import collect_less_often
from sluice.taskhost.producers import HostProducers
from sluice.taskhost.protocol import (
    Failed,
    Hello,
    HostBootstrap,
    HostTask,
    RunSinkTask,
    RunSourceTask,
    Stopped,
    TaskLaunch,
)
from sluice.taskhost.sink import SinkLoop
from sluice.taskhost.source import SourceLoop
from sluice.taskhost.transactional import TransactionalSourceLoop
from sluice.taskhost.wire import ChannelClosed, ProtocolError

log = logging.getLogger(__name__)

__all__ = ["HostedTask", "make_loop", "run_host"]


def make_loop(launch: TaskLaunch, control: TaskControl, clients: KafkaClients, producers: HostProducers) -> TaskLoop:
    """The loop that runs the task ``launch`` describes."""
    if isinstance(launch, RunSourceTask):
        if launch.transactions is not None:
            return TransactionalSourceLoop(launch, control, clients, producers)
        return SourceLoop(launch, control, clients, producers)
    if isinstance(launch, RunSinkTask):
        return SinkLoop(launch, control, clients)
    raise TypeError(f"not a task launch: {launch!r}")


class HostedTask:
    """One Connect task in a host: its connection, and the thread that runs it."""

    def __init__(
        self,
        bootstrap: HostBootstrap,
        order: HostTask,
        heartbeats: Heartbeats,
        clients: KafkaClients,
        producers: HostProducers,
    ) -> None:
        self.bootstrap = bootstrap
        self.order = order
        self.heartbeats = heartbeats
        self.clients = clients
        self.producers = producers
        self.thread = threading.Thread(target=self._run, name=f"sluice-task-{order.incarnation[:8]}", daemon=True)

    def _run(self) -> None:
        try:
            channel = wire.connect(self.bootstrap.address)
            channel.send_hello(Hello(self.order.incarnation, self.order.secret, os.getpid(), socket.gethostname()))
        except (OSError, ChannelClosed) as exc:
            # The worker hears it as a task whose connection never came: it reports it.
            log.warning("A task could not connect to the worker: %s", exc)
            return
        control = TaskControl(channel)
        try:
            control.welcomed.wait()
            launch = control.launch if not control.stopping else None
            if launch is not None:
                self.heartbeats.add(self.order.incarnation, control)  # from the task's start
                try:
                    try:
                        loop = make_loop(launch, control, self.clients, self.producers)
                    except Exception as exc:  # noqa: BLE001 - a task that cannot be built (its producer refused a setting) FAILS with the trace
                        log.warning("Task %s-%s could not be built: %s", launch.task.connector, launch.task.task, exc)
                        with contextlib.suppress(WorkerGone):
                            control.send(Failed(format_trace(exc)))
                    else:
                        loop.run()
                finally:
                    self.heartbeats.remove(self.order.incarnation)
            with contextlib.suppress(WorkerGone):
                control.send(Stopped())
        finally:
            channel.close()


def run_host(bootstrap: HostBootstrap, clients: KafkaClients = LIBRDKAFKA) -> Iterator[bool]:
    """Host Connect tasks until the worker lets the host go and they have all ended; the
    Spark job's only partition runs this, and yields one value (the partition's result).

    Raises when the worker cannot be reached: the Spark job fails, and the worker reports
    the tasks it had given this host FAILED with that error."""
    collect_less_often()
    channel = wire.connect(bootstrap.address)
    channel.send_hello(Hello(bootstrap.incarnation, bootstrap.secret, os.getpid(), socket.gethostname()))
    heartbeats = Heartbeats(bootstrap.heartbeat_interval_ms / 1000.0, channel)
    producers = HostProducers(clients)
    tasks: list[HostedTask] = []
    try:
        while True:
            try:
                order = channel.recv()
            except ChannelClosed:
                break
            except ProtocolError:
                log.exception("Unreadable message from the worker on the host connection")
                break
            if not isinstance(order, HostTask):
                log.warning("Unexpected message on the host connection: %r", order)
                continue
            task = HostedTask(bootstrap, order, heartbeats, clients, producers)
            tasks = [t for t in tasks if t.thread.is_alive()]
            tasks.append(task)
            task.thread.start()
        for task in tasks:
            task.thread.join()
    finally:
        heartbeats.stop()
        channel.close()
    yield True
