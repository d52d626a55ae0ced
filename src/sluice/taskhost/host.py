"""The entry point of a task host: what runs inside the Spark task that hosts one Connect
task for its whole life.

:func:`run_task` is the Python function of the host's one-partition Spark job. It connects
to the worker's control server, says who it is (:class:`~sluice.taskhost.protocol.Hello`),
waits for the task to run (the worker starts hosts ahead of need), and runs its loop —
:class:`~sluice.taskhost.source.SourceLoop` or :class:`~sluice.taskhost.sink.SinkLoop` —
until the worker says stop, the task fails, or the worker goes away. A second thread reads the worker's messages
(:class:`~sluice.taskhost.control.TaskControl`), a third sends heartbeats.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections.abc import Callable, Iterator

from sluice.kafka.clients import LIBRDKAFKA, KafkaClients
from sluice.taskhost import wire
from sluice.taskhost.control import Heartbeats, TaskControl, WorkerGone
from sluice.taskhost.loop import TaskLoop
from sluice.taskhost.protocol import Hello, HostBootstrap, RunSinkTask, RunSourceTask, Stopped, TaskLaunch
from sluice.taskhost.sink import SinkLoop
from sluice.taskhost.source import SourceLoop

log = logging.getLogger(__name__)

__all__ = ["LOOPS", "run_task"]

#: The loop that runs each kind of task.
LOOPS: dict[type[TaskLaunch], Callable[..., TaskLoop]] = {RunSourceTask: SourceLoop, RunSinkTask: SinkLoop}


def run_task(bootstrap: HostBootstrap, clients: KafkaClients = LIBRDKAFKA) -> Iterator[bool]:
    """Host one Connect task until it stops; the Spark job's only partition runs this.
    Yields one value, the partition's result: whether the task ended as the worker asked.

    Raises when the worker cannot be reached: the Spark job fails and the worker reports
    the task FAILED with that error."""
    channel = wire.connect(bootstrap.address)
    channel.send_hello(Hello(bootstrap.incarnation, bootstrap.secret, os.getpid(), socket.gethostname()))
    control = TaskControl(channel)
    heartbeats: Heartbeats | None = None
    try:
        # Hosts are started ahead of need: one waits for its task as long as the worker
        # keeps the connection open (it closes it to let the host go).
        control.welcomed.wait()
        launch = control.launch if not control.stopping else None
        if launch is not None:
            # From the task's start: nobody hears them before.
            heartbeats = Heartbeats(control, bootstrap.heartbeat_interval_ms / 1000.0)
            LOOPS[type(launch)](launch, control, clients).run()
        with contextlib.suppress(WorkerGone):
            control.send(Stopped())
    finally:
        if heartbeats is not None:
            heartbeats.stop()
        channel.close()
    yield not control.worker_gone.is_set()
