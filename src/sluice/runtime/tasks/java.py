"""The supervisors of Java tasks: tasks of Kafka Connect's own plugins, which run in the
JVM task host (:mod:`sluice.spark.jvm_hosts`) and are built there as Kafka Connect's worker
builds them. Supervised like Python tasks — launched, placed, given their target state,
reported and fenced by the same code — they differ in their launch message
(:class:`~sluice.taskhost.protocol.RunJavaTask`: the connector's and the worker's configs,
from which Kafka's classes make the converters, transforms and clients) and, for sinks, in
who assigns partitions: Kafka's consumer group protocol, as in Kafka Connect, so a Java
sink task commits its consumer offsets itself."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from sluice.runtime.tasks.base import WorkerTask
from sluice.runtime.tasks.source import WorkerSourceTask
from sluice.taskhost.protocol import RunJavaTask

__all__ = ["JavaSinkTask", "JavaSourceTask"]


class JavaSourceTask(WorkerSourceTask):
    """Supervises a Java source task: stores the offsets Kafka's offset writer flushes."""

    HOST_KIND: ClassVar[str] = "JVM task host"

    def __init__(self, *args: Any, launch: RunJavaTask, **kw: Any) -> None:
        super().__init__(*args, kafka_options={}, **kw)
        self._java_launch = launch

    def _launch_message(self) -> RunJavaTask:  # type: ignore[override]
        return dataclasses.replace(self._java_launch, committed_offsets=list(self.committed.values()))


class JavaSinkTask(WorkerTask):
    """Supervises a Java sink task (its partitions and offsets are its consumer group's)."""

    kind = "sink"
    HOST_KIND: ClassVar[str] = "JVM task host"

    def __init__(self, *args: Any, launch: RunJavaTask, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._java_launch = launch

    def _launch_message(self) -> RunJavaTask:
        return self._java_launch
