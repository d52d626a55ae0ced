"""The control protocol between the worker (Spark's driver) and a task host, as typed messages.

A *task host* is one long-lived Spark task that runs Connect tasks, many at once, each on
threads of its own. The host connects back to the worker's control server with a
:class:`Hello` of its own; on that *host connection* the worker sends it
:class:`HostTask` messages, each naming one Connect task's launch. For each, the host opens one
more connection, the *task connection*, proves it with that launch's secret, and for the
task's whole life the worker and the task exchange the messages below over it:

* task → worker (:data:`TaskMessage`): :class:`Hello` first, alone (who it is and the
  launch's secret); then :class:`Started`, :class:`SourceOffsets` /
  :class:`SinkOffsets` (to commit), :class:`TopicsSeen`, :class:`SplitReadRequest`,
  :class:`PausedAck`, :class:`Failed`, the task's last :class:`Heartbeat` and, last,
  :class:`Stopped`;
* host → worker, on the host connection: :class:`HostHeartbeat`, every interval, for all
  the host's tasks at once (a worker with hundreds of tasks reads one message per host,
  not one per task);
* worker → task (:data:`WorkerMessage`): the task to run (:data:`TaskLaunch`: a
  :class:`RunSourceTask` or a :class:`RunSinkTask` for the Python task host, a
  :class:`RunJavaTask` for the JVM task host), then :class:`Pause` / :class:`Resume`
  / :class:`Stop`, :class:`Committed` (the answer to an offsets message), :class:`Assign`
  (a sink's partitions changed) and :class:`SplitReadDone`.

The messages are plain values — strings, numbers, booleans, lists, string-keyed maps,
nested messages — so that they travel as JSON (:mod:`sluice.taskhost.wire` frames them),
and a task host written in another language speaks the same protocol. What only the Python
task host understands (a split read's parts) travels as opaque bytes.

Only :mod:`sluice.api`, :mod:`sluice.kafka.topics`, :mod:`sluice.taskhost.tolerance` and
the standard library are imported here: executors load this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sluice.kafka.topics import TopicCreationSpec
from sluice.taskhost.tolerance import ErrorPolicy

__all__ = [
    "PROTOCOL_VERSION",
    "Assign",
    "Committed",
    "Failed",
    "Heartbeat",
    "HostHeartbeat",
    "Hello",
    "HostBootstrap",
    "HostTask",
    "Pause",
    "PausedAck",
    "PluginSpec",
    "Resume",
    "RunJavaTask",
    "RunSinkTask",
    "RunSourceTask",
    "SinkOffsets",
    "SourceOffset",
    "SourceOffsets",
    "SplitReadDone",
    "SplitReadRequest",
    "Started",
    "Stop",
    "Stopped",
    "TaskLaunch",
    "TaskMessage",
    "TaskSpec",
    "TopicPartitionKey",
    "TopicsSeen",
    "Transactions",
    "WorkerMessage",
]

#: The version every frame carries (:mod:`sluice.taskhost.wire`); a frame of another is refused.
PROTOCOL_VERSION = 1

#: A source partition and its offset, as the task gave them (JSON objects).
SourceOffset = tuple[dict[str, Any], dict[str, Any]]
#: A Kafka topic partition: ``(topic, partition)``.
TopicPartitionKey = tuple[str, int]


@dataclass(frozen=True)
class PluginSpec:
    """A plugin to instantiate on the executor: its class path and configs."""

    class_path: str
    configs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskSpec:
    """Everything an executor needs to (re)create one Connect task."""

    connector: str
    task: int
    task_class: str
    task_config: dict[str, str]
    incarnation: str
    key_converter: PluginSpec
    value_converter: PluginSpec
    header_converter: PluginSpec
    errors: ErrorPolicy = field(default_factory=ErrorPolicy)
    # The transformation chain's class and the connector's transforms.*/predicates.* keys,
    # with plugin classes resolved to class paths; None: no transforms.
    transforms: PluginSpec | None = None
    # Source connectors with topic.creation.* settings (and the worker allowing it).
    topic_creation: TopicCreationSpec | None = None
    # sluice.transforms.columnar.enable: a sink chain runs over whole batches where its stages can.
    columnar_transforms: bool = True

    @property
    def host_key(self) -> tuple[str, int]:
        return (self.connector, self.task)


@dataclass(frozen=True)
class HostBootstrap:
    """What a task host needs before it can hear the worker: where the worker listens and
    how to prove its host connection is this host job's. Travels to the executor inside the
    Spark job's closure; everything else comes over the connections."""

    address: tuple[str, int]
    incarnation: str
    secret: str
    heartbeat_interval_ms: int = 2_000


# -- worker → task -------------------------------------------------------------------


@dataclass(frozen=True)
class HostTask:
    """On a host connection: run one more Connect task here. The host opens a task
    connection that says :class:`Hello` with this incarnation and secret; the task to run
    arrives on it."""

    incarnation: str
    secret: str


@dataclass(frozen=True)
class Transactions:
    """How a source task delivers exactly once (Kafka's KIP-618): its producer is
    transactional, and the offsets of each transaction's records are written, in Kafka
    Connect's format, to ``offsets_topic`` within the same transaction."""

    transactional_id: str
    # where transactions end: "poll" (after each batch), "interval", "connector"
    boundary: str = "poll"
    # with the "interval" boundary, milliseconds between two commits
    interval_ms: int = 60_000
    offsets_topic: str = "connect-offsets"


@dataclass(frozen=True)
class RunSourceTask:
    """The first message of a source task's connection: the task to run and its settings."""

    task: TaskSpec
    # librdkafka settings of the task's producer (records and dead letters)
    producer_config: dict[str, str] = field(default_factory=dict)
    # the offsets stored when the task was launched
    committed_offsets: list[SourceOffset] = field(default_factory=list)
    # how often offsets are sent to the worker to be committed
    offset_flush_interval_ms: int = 60_000
    # set when the task delivers exactly once
    transactions: Transactions | None = None


@dataclass(frozen=True)
class RunSinkTask:
    """The first message of a sink task's connection: the task, its partitions and where
    to read each from, and its settings."""

    task: TaskSpec
    # librdkafka settings of the task's consumer, and of its dead letter producer
    consumer_config: dict[str, str] = field(default_factory=dict)
    producer_config: dict[str, str] = field(default_factory=dict)
    assignment: dict[TopicPartitionKey, int] = field(default_factory=dict)
    # most consumer records handed to one put()
    max_records: int = 10_000
    # how long an idle task waits for records before calling put([]) (Kafka's poll timeout)
    poll_interval_ms: int = 100
    offset_flush_interval_ms: int = 60_000


@dataclass(frozen=True)
class RunJavaTask:
    """The first message of a Java task's connection (the JVM task host): a task of a
    Kafka Connect plugin, which the host builds as Kafka Connect's worker builds one, from
    the worker's and the connector's configs (converters, transforms, error handling,
    Kafka clients and their overrides). ``task`` names it; its converter and transform
    fields are the Python host's and are not read."""

    task: TaskSpec
    sink: bool
    # the connector's config and the worker's, as Kafka's keys, placeholders resolved
    connector_config: dict[str, str] = field(default_factory=dict)
    worker_config: dict[str, str] = field(default_factory=dict)
    worker_id: str = ""
    # how many tasks the connector has (Kafka checks tasks.max against it)
    task_count: int = 1
    # a source task's offsets stored when it was launched
    committed_offsets: list[SourceOffset] = field(default_factory=list)


@dataclass(frozen=True)
class Pause:
    """Do no more work until :class:`Resume` (answered by :class:`PausedAck`)."""


@dataclass(frozen=True)
class Resume:
    """Run (the first one also says the task may start)."""


@dataclass(frozen=True)
class Stop:
    """Stop the task: commit what may be committed, call its ``stop()``, say :class:`Stopped`."""


@dataclass(frozen=True)
class Committed:
    """The answer to an offsets message: stored (``error`` None), skipped because the
    task no longer owns its work (``fenced``), or failed."""

    seq: int
    error: str | None = None
    fenced: bool = False


@dataclass(frozen=True)
class Assign:
    """A sink task's new partitions and where to read each newly assigned one from."""

    assignment: dict[TopicPartitionKey, int]


@dataclass(frozen=True)
class SplitReadDone:
    """The answer to a :class:`SplitReadRequest`: read and stored, or ``failure``."""

    failure: str | None = None


TaskLaunch = RunSourceTask | RunSinkTask | RunJavaTask
WorkerMessage = (
    HostTask | RunSourceTask | RunSinkTask | RunJavaTask | Pause | Resume | Stop | Committed | Assign | SplitReadDone
)


# -- task → worker -------------------------------------------------------------------


@dataclass(frozen=True)
class Hello:
    """The first frame of each connection a task host opens, alone: the host job or the
    task launch it belongs to, and where it runs. The worker decodes nothing else from a
    connection before the secret matched."""

    incarnation: str
    secret: str
    pid: int
    host: str


@dataclass(frozen=True)
class Started:
    """The task instance started (``start`` and, for a sink, ``open`` returned)."""


@dataclass(frozen=True)
class SourceOffsets:
    """Offsets of records Kafka acknowledged, to store; answered by :class:`Committed`.
    With ``written``, the task already wrote them to the offsets topic (in a committed
    transaction): the worker only takes note of them."""

    seq: int
    offsets: list[SourceOffset]
    written: bool = False


@dataclass(frozen=True)
class SinkOffsets:
    """Offsets ``pre_commit`` returned, to commit to the connector's consumer group;
    answered by :class:`Committed`."""

    seq: int
    offsets: dict[TopicPartitionKey, int]


@dataclass(frozen=True)
class TopicsSeen:
    """Topics the task used for the first time (written to, or consumed from)."""

    topics: list[str]


@dataclass(frozen=True)
class SplitReadRequest:
    """The task asked to split a read across Spark partitions; answered by
    :class:`SplitReadDone`. Each part is as the task host serialised it (a pickle, for the
    Python task host): the worker hands the parts on to the split read's executors as they
    are, and never decodes them."""

    parts: list[bytes]


@dataclass(frozen=True)
class PausedAck:
    """The task does no more work until resumed (no ``poll``/``put`` under way)."""


@dataclass(frozen=True)
class Heartbeat:
    """On a task connection: the task's last totals, all of its
    :class:`~sluice.taskhost.metering.TaskMeter`'s, sent as it ends (before
    :class:`Failed`, if it failed). The worker merges them; a heartbeat with none (None)
    says only that the task is alive. While the task runs, its host's
    :class:`HostHeartbeat` carries its totals."""

    metrics: dict[str, float] | None = None


@dataclass(frozen=True)
class HostHeartbeat:
    """On the host connection, every ``heartbeat_interval_ms``: the host and every task it
    runs are alive. ``metrics``: by task (its launch's incarnation), the totals that changed
    since that task's last heartbeat — all of them in its first; a task with none changed
    is left out. A task's last totals come in its own :class:`Heartbeat` as it ends."""

    metrics: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class Failed:
    """The task failed; its instance is being stopped. ``trace`` becomes the status trace."""

    trace: str


@dataclass(frozen=True)
class Stopped:
    """The last message: the instance stopped (after a :class:`Stop` or a :class:`Failed`)."""


TaskMessage = (
    Started
    | SourceOffsets
    | SinkOffsets
    | TopicsSeen
    | SplitReadRequest
    | PausedAck
    | Heartbeat
    | HostHeartbeat
    | Failed
    | Stopped
)
