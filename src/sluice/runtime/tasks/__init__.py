"""The driver-side supervisors of Connect tasks (Kafka's ``WorkerTask``,
``WorkerSourceTask`` and ``WorkerSinkTask``, their worker side): :mod:`.base` (life,
phases, target states, status), :mod:`.source` (source offsets, split reads), :mod:`.sink`
(partitions, sink offsets), :mod:`.java` (Java tasks), :mod:`.settings` (what a
supervisor is given)."""

from sluice.runtime.tasks.base import LaunchHandle, Phase, TaskLauncher, WorkerTask, new_incarnation
from sluice.runtime.tasks.java import JavaSinkTask, JavaSourceTask
from sluice.runtime.tasks.settings import StatusListener, TaskHooks, TaskSettings, wants_dedicated_host
from sluice.runtime.tasks.sink import SinkPartitions, TopicListings, WorkerSinkTask
from sluice.runtime.tasks.source import WorkerSourceTask, source_transactions, transactional_id

__all__ = [
    "JavaSinkTask",
    "JavaSourceTask",
    "LaunchHandle",
    "Phase",
    "SinkPartitions",
    "StatusListener",
    "TaskHooks",
    "TaskLauncher",
    "TaskSettings",
    "TopicListings",
    "WorkerSinkTask",
    "WorkerSourceTask",
    "WorkerTask",
    "new_incarnation",
    "source_transactions",
    "transactional_id",
    "wants_dedicated_host",
]
