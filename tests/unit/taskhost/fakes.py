"""Fakes of what a task loop talks to — librdkafka's producer and consumer, the factory that
makes them, and the worker at the other end of the control connection — so that unit tests
drive :class:`~sluice.taskhost.source.SourceLoop` and :class:`~sluice.taskhost.sink.SinkLoop`
without Kafka, Spark or a worker.

The fakes keep librdkafka's threading: delivery reports and error callbacks run on the
thread that calls ``poll``/``flush`` (the task thread), never on the test's. The test
decides when Kafka acknowledges (:meth:`FakeProducer.release`) and what there is to read
(:meth:`FakeConsumer.add`); the worker's end (:class:`WorkerEnd`) speaks the real protocol
over a real socket pair, so framing and :class:`~sluice.taskhost.control.TaskControl` are
the production ones.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol, TypeVar

from confluent_kafka import TIMESTAMP_CREATE_TIME, TIMESTAMP_NOT_AVAILABLE, KafkaError, KafkaException

from sluice.taskhost.control import TaskControl
from sluice.taskhost.loop import TaskLoop
from sluice.taskhost.protocol import (
    Committed,
    Heartbeat,
    PluginSpec,
    Resume,
    SinkOffsets,
    SourceOffsets,
    TaskLaunch,
    TaskMessage,
    TaskSpec,
    WorkerMessage,
)
from sluice.taskhost.wire import ChannelClosed, ProtocolError, TaskChannel, task_channel, worker_channel
from tests.helpers import wait_until

__all__ = [
    "DEADLINE_S",
    "HEADER_CONVERTER",
    "STRING_CONVERTER",
    "EventLog",
    "FakeClients",
    "FakeConsumer",
    "FakeKafkaError",
    "FakeMessage",
    "FakeProducer",
    "FakeTransactionalProducer",
    "ObservedTaskControl",
    "Produced",
    "WorkerEnd",
    "task_spec",
    "wait_for",
]

#: How long a test waits for something the loop should do promptly (generous: the machine
#: is shared; a passing test never waits this long).
DEADLINE_S = 10.0

STRING_CONVERTER = PluginSpec("sluice.converters.string.StringConverter")
HEADER_CONVERTER = PluginSpec("sluice.converters.simple_header.SimpleHeaderConverter")

M = TypeVar("M")
Key = tuple[str, int]  # (topic, partition)


def task_spec(task_class: type, config: dict[str, str], transforms: PluginSpec | None = None) -> TaskSpec:
    """A task of ``task_class`` (loaded by its path, as the loop does) with string keys,
    values and headers."""
    return TaskSpec(
        connector="c",
        task=0,
        task_class=f"{task_class.__module__}.{task_class.__qualname__}",
        task_config=config,
        incarnation="incarnation-1",
        key_converter=STRING_CONVERTER,
        value_converter=STRING_CONVERTER,
        header_converter=HEADER_CONVERTER,
        transforms=transforms,
    )


# -- Kafka ------------------------------------------------------------------------------


@dataclass(frozen=True)
class FakeKafkaError:
    """An error as librdkafka reports it: ``code()``, ``fatal()``, ``str``."""

    reason: str
    error_code: int = KafkaError._MSG_TIMED_OUT  # a delivery that failed, not an authentication
    is_fatal: bool = False

    def code(self) -> int:
        return self.error_code

    def fatal(self) -> bool:
        return self.is_fatal

    def retriable(self) -> bool:
        return False

    def __str__(self) -> str:
        return self.reason


@dataclass
class FakeMessage:
    """A record as librdkafka hands it over: consumed, or in a delivery report."""

    topic_name: str
    partition_id: int
    offset_value: int
    key_bytes: bytes | None = None
    value_bytes: bytes | None = None
    timestamp_ms: int | None = None  # None: no timestamp
    header_pairs: list[tuple[str, bytes | None]] | None = None
    failure: FakeKafkaError | None = None

    def error(self) -> FakeKafkaError | None:
        return self.failure

    def topic(self) -> str:
        return self.topic_name

    def partition(self) -> int:
        return self.partition_id

    def offset(self) -> int:
        return self.offset_value

    def key(self) -> bytes | None:
        return self.key_bytes

    def value(self) -> bytes | None:
        return self.value_bytes

    def timestamp(self) -> tuple[int, int]:
        if self.timestamp_ms is None:
            return TIMESTAMP_NOT_AVAILABLE, -1
        return TIMESTAMP_CREATE_TIME, self.timestamp_ms

    def headers(self) -> list[tuple[str, bytes | None]] | None:
        return self.header_pairs


class DeliveryCallback(Protocol):
    def __call__(self, err: Any, message: Any) -> None: ...


@dataclass
class Produced:
    """One ``produce`` call, and where the fake broker put the record."""

    topic: str
    value: bytes | None
    key: bytes | None
    partition: int | None
    timestamp: int | None
    headers: list[tuple[str, bytes | None]] | None
    on_delivery: DeliveryCallback | None
    landed: FakeMessage


class FakeProducer:
    """librdkafka's producer, acknowledging only what the test releases.

    ``produce`` queues a record; :meth:`release` (or :meth:`fail`) decides the outcome of
    the oldest undecided records; the delivery reports of decided records run on the next
    ``poll``/``flush``, on the thread calling it. ``len()`` is what has no delivery report
    yet. With ``queue_limit`` set, ``produce`` raises ``BufferError`` while that many
    records wait. ``poll`` with a timeout waits up to that long for a report (``waiting``
    is set meanwhile). ``flush`` serves what was decided and waits for nothing more (a
    test never waits for a flush's timeout).
    """

    #: The fake broker's clock, stamped on records produced without a timestamp.
    BROKER_TIME_MS = 1_700_000_000_000

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings
        self.produced: list[Produced] = []
        self.poll_calls = 0
        self.poll_timeouts: list[float | None] = []
        self.waiting = threading.Event()  # set while a poll waits for a report
        self.queue_limit: int | None = None
        self._changed = threading.Condition()
        self._undecided: deque[Produced] = deque()
        self._decided: deque[tuple[Produced, FakeKafkaError | None]] = deque()
        self._client_errors: deque[FakeKafkaError] = deque()
        self._next_offset: dict[Key, int] = {}
        self.closed = False

    # -- what the loop calls ----------------------------------------------------------

    def produce(
        self,
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        on_delivery: DeliveryCallback | None = None,
        partition: int | None = None,
        timestamp: int | None = None,
        headers: list[tuple[str, bytes | None]] | None = None,
    ) -> None:
        with self._changed:
            if self.queue_limit is not None and len(self._undecided) + len(self._decided) >= self.queue_limit:
                raise BufferError("Local: Queue full")
            where = (topic, 0 if partition is None else partition)
            offset = self._next_offset.get(where, 0)
            self._next_offset[where] = offset + 1
            landed = FakeMessage(
                topic, where[1], offset, key, value, timestamp if timestamp else self.BROKER_TIME_MS, headers
            )
            produced = Produced(topic, value, key, partition, timestamp, headers, on_delivery, landed)
            self.produced.append(produced)
            self._undecided.append(produced)

    def poll(self, timeout: float | None = None) -> int:
        with self._changed:
            self.poll_calls += 1
            self.poll_timeouts.append(timeout)
            if timeout and not self._decided and not self._client_errors:
                self.waiting.set()
                try:
                    self._changed.wait(timeout)
                finally:
                    self.waiting.clear()
        return self._serve()

    def flush(self, timeout: float | None = None) -> int:
        self._serve()
        return len(self)

    def __len__(self) -> int:
        with self._changed:
            return len(self._undecided) + len(self._decided)

    def purge(self) -> None:
        """Fail what awaits a delivery report (librdkafka's ``_PURGE_QUEUE``); the reports run
        on the next ``poll``/``flush``/``close``."""
        with self._changed:
            n = len(self._undecided)
        self._decide(n, FakeKafkaError("Local: Purged in queue", KafkaError._PURGE_QUEUE))

    def close(self) -> None:
        """Serve what was decided and end the producer: ``closed`` is set, further use fails."""
        self._serve()
        self.closed = True
        self.produce = self.poll = self.flush = self._closed  # type: ignore[method-assign]

    @staticmethod
    def _closed(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("Producer has been closed")

    # -- what the test calls ----------------------------------------------------------

    def release(self, n: int) -> None:
        """Kafka acknowledges the ``n`` oldest records not yet acknowledged or failed."""
        self._decide(n, None)

    def release_all(self) -> None:
        with self._changed:
            n = len(self._undecided)
        self._decide(n, None)

    def fail(self, error: FakeKafkaError, n: int = 1) -> None:
        """The ``n`` oldest undecided records fail with ``error``."""
        self._decide(n, error)

    def report_client_error(self, error: FakeKafkaError) -> None:
        """librdkafka reports ``error`` through ``error_cb`` on the next ``poll``/``flush``."""
        with self._changed:
            self._client_errors.append(error)
            self._changed.notify_all()

    def _decide(self, n: int, error: FakeKafkaError | None) -> None:
        with self._changed:
            if n > len(self._undecided):
                raise AssertionError(f"cannot decide {n} records: {len(self._undecided)} await a delivery report")
            for _ in range(n):
                self._decided.append((self._undecided.popleft(), error))
            self._changed.notify_all()

    def _serve(self) -> int:
        """Run the decided delivery reports and queued client errors, outside the lock (a
        callback may produce again). Returns how many callbacks ran."""
        with self._changed:
            reports, self._decided = list(self._decided), deque()
            errors, self._client_errors = list(self._client_errors), deque()
        error_cb = self.settings.get("error_cb")
        for client_error in errors:
            if error_cb is not None:
                error_cb(client_error)
        for produced, outcome in reports:
            if produced.on_delivery is not None:
                produced.on_delivery(outcome, produced.landed)
        return len(reports) + len(errors)


def _partitions(partitions: Iterable[Any]) -> list[tuple[str, int, int]]:
    """confluent_kafka ``TopicPartition``s (what the sink loop passes) as plain tuples."""
    return [(tp.topic, tp.partition, tp.offset) for tp in partitions]


def _keys(partitions: Iterable[Any]) -> list[tuple[str, int]]:
    return [(tp.topic, tp.partition) for tp in partitions]


class FakeConsumer:
    """librdkafka's consumer over per-partition message lists the test fills.

    ``consume`` hands out, in offset order per partition, the messages of assigned and
    unpaused partitions from their positions, waiting up to its timeout for some to be
    added. ``calls`` records, in call order, ``("assign" | "seek", [(topic, partition,
    offset), ...])`` and ``("unassign" | "pause" | "resume", [(topic, partition), ...])``.
    """

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings
        self.calls: list[tuple[str, list[tuple[Any, ...]]]] = []
        self.closed = False
        self._changed = threading.Condition()
        self._logs: dict[Key, list[FakeMessage]] = {}
        self._positions: dict[Key, int] = {}  # assigned partitions → next offset to hand out
        self._paused: set[Key] = set()

    # -- what the test calls ----------------------------------------------------------

    def add(
        self,
        topic: str,
        partition: int,
        values: Iterable[bytes | None],
        *,
        keys: Iterable[bytes | None] | None = None,
        start: int | None = None,
        timestamp_ms: int | None = 1_000,
        headers: list[tuple[str, bytes | None]] | None = None,
    ) -> list[FakeMessage]:
        """Append records to a partition: at ``start`` (an empty partition's first offset)
        or after its last record, else from 0."""
        values = list(values)
        key_list = list(keys) if keys is not None else [None] * len(values)
        with self._changed:
            log = self._logs.setdefault((topic, partition), [])
            offset = log[-1].offset_value + 1 if log else (start or 0)
            added = [
                FakeMessage(topic, partition, offset + i, key, value, timestamp_ms, headers)
                for i, (key, value) in enumerate(zip(key_list, values, strict=True))
            ]
            log.extend(added)
            self._changed.notify_all()
        return added

    def calls_of(self, name: str) -> list[list[tuple[Any, ...]]]:
        with self._changed:
            return [partitions for called, partitions in self.calls if called == name]

    # -- what the loop calls ----------------------------------------------------------

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[FakeMessage]:
        deadline = time.monotonic() + max(timeout, 0.0)
        with self._changed:
            while True:
                if self.closed:
                    raise RuntimeError("Consumer closed")
                batch = self._take(num_messages)
                remaining = deadline - time.monotonic()
                if batch or remaining <= 0:
                    return batch
                self._changed.wait(remaining)

    def _take(self, limit: int) -> list[FakeMessage]:
        batch: list[FakeMessage] = []
        for key in sorted(self._positions):
            if key in self._paused:
                continue
            position = self._positions[key]
            ready = [m for m in self._logs.get(key, []) if m.offset_value >= position][: limit - len(batch)]
            if ready:
                batch.extend(ready)
                self._positions[key] = ready[-1].offset_value + 1
        return batch

    def incremental_assign(self, partitions: list[Any]) -> None:
        self._record("assign", _partitions(partitions))
        with self._changed:
            for topic, partition, offset in _partitions(partitions):
                self._positions[(topic, partition)] = max(offset, 0)  # no offset: the earliest
            self._changed.notify_all()

    def incremental_unassign(self, partitions: list[Any]) -> None:
        self._record("unassign", _keys(partitions))
        with self._changed:
            for topic, partition, _ in _partitions(partitions):
                self._positions.pop((topic, partition), None)
                self._paused.discard((topic, partition))

    def pause(self, partitions: list[Any]) -> None:
        self._record("pause", _keys(partitions))
        with self._changed:
            self._paused.update((t, p) for t, p, _ in _partitions(partitions))

    def resume(self, partitions: list[Any]) -> None:
        self._record("resume", _keys(partitions))
        with self._changed:
            self._paused.difference_update((t, p) for t, p, _ in _partitions(partitions))
            self._changed.notify_all()

    def seek(self, partition: Any) -> None:
        self._record("seek", _partitions([partition]))
        with self._changed:
            key = (partition.topic, partition.partition)
            if key not in self._positions:  # as librdkafka: only a partition being fetched
                raise KafkaException(KafkaError(KafkaError._STATE, "Local: Erroneous state"))
            self._positions[key] = partition.offset
            self._changed.notify_all()

    def get_watermark_offsets(
        self, partition: Any, timeout: float | None = None, cached: bool = False
    ) -> tuple[int, int]:
        with self._changed:
            log = self._logs.get((partition.topic, partition.partition), [])
            return (log[0].offset_value, log[-1].offset_value + 1) if log else (0, 0)

    def close(self) -> None:
        with self._changed:
            self.calls.append(("close", []))
            self.closed = True
            self._changed.notify_all()

    def _record(self, name: str, partitions: list[tuple[Any, ...]]) -> None:
        with self._changed:
            self.calls.append((name, partitions))


class FakeTransactionalProducer(FakeProducer):
    """librdkafka's transactional producer: ``transactions`` logs ``init``, ``begin``,
    ``commit`` and ``abort`` in order. A commit acknowledges every record of the
    transaction (Kafka writes them with the commit) and serves their reports; an abort
    fails what awaits a report, as librdkafka purges it. ``fail_next`` makes the next
    transactional call raise ``KafkaException`` with that error."""

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__(settings)
        self.transactions: list[str] = []
        self.fail_next: FakeKafkaError | None = None

    def _call(self, what: str) -> None:
        failure, self.fail_next = self.fail_next, None
        if failure is not None:
            raise KafkaException(failure)
        self.transactions.append(what)

    def init_transactions(self, timeout: float | None = None) -> None:
        self._call("init")

    def begin_transaction(self) -> None:
        self._call("begin")

    def commit_transaction(self, timeout: float | None = None) -> None:
        self._call("commit")
        self.release_all()
        self._serve()

    def abort_transaction(self, timeout: float | None = None) -> None:
        self._call("abort")
        self.purge()
        self._serve()

    def to(self, topic: str) -> list[Produced]:
        """What went to ``topic``, in order."""
        return [p for p in self.produced if p.topic == topic]


class FakeClients:
    """The client factory a loop takes (:class:`~sluice.kafka.clients.KafkaClients`):
    hands out fakes and keeps them for the test to drive."""

    def __init__(self) -> None:
        self.producers: list[FakeProducer] = []
        self.consumers: list[FakeConsumer] = []

    def producer(self, settings: dict[str, Any]) -> FakeProducer:
        made = FakeTransactionalProducer(settings) if "transactional.id" in settings else FakeProducer(settings)
        self.producers.append(made)
        return made

    def consumer(self, settings: dict[str, Any]) -> FakeConsumer:
        made = FakeConsumer(settings)
        self.consumers.append(made)
        return made

    def admin(self, settings: dict[str, Any]) -> Any:
        raise AssertionError("these tests create no topics: no admin client expected")

    @property
    def only_producer(self) -> FakeProducer:
        assert len(self.producers) == 1, f"{len(self.producers)} producers made"
        return self.producers[0]

    @property
    def only_consumer(self) -> FakeConsumer:
        assert len(self.consumers) == 1, f"{len(self.consumers)} consumers made"
        return self.consumers[0]


# -- the worker -------------------------------------------------------------------------


class ObservedTaskControl(TaskControl):
    """The production :class:`TaskControl`, showing when the loop waits for the worker.

    ``waiting`` is set while the loop is in :meth:`wait_for_change`: a message sent once it
    is seen wakes that wait. ``waits`` counts the waits that ended: a test that woke the
    loop sees it went round.
    """

    def __init__(self, channel: TaskChannel) -> None:
        self.waits = 0
        self.waiting = False
        super().__init__(channel)

    def wait_for_change(self, timeout_s: float, since: int | None = None) -> None:
        self.waiting = True
        try:
            super().wait_for_change(timeout_s, since)
        finally:
            self.waiting = False
        self.waits += 1


OffsetsMessage = SourceOffsets | SinkOffsets


class WorkerEnd:
    """The worker's side of one task: a real ``socket.socketpair()`` with the worker's
    channel on one end and the task's (read by an :class:`ObservedTaskControl`) on the
    other, and the thread running the loop under test.

    A reader thread keeps what the task sends (heartbeats apart) in arrival order;
    :meth:`next` hands them out by type. Offsets messages are answered by the test
    (:meth:`commit`), or at once while :meth:`auto_commit` is on. Use it as a context
    manager: leaving it closes the connection — the loop sees its worker gone — and
    checks the loop's thread ended.
    """

    def __init__(self) -> None:
        self.loop: TaskLoop | None = None  # the loop start() runs
        worker_sock, task_sock = socket.socketpair()
        self._sock = worker_sock
        self.channel = worker_channel(worker_sock)
        self.control = ObservedTaskControl(task_channel(task_sock))
        self.heartbeats: list[Heartbeat] = []
        self._changed = threading.Condition()
        self._inbox: list[TaskMessage] = []
        self._handed_out: set[int] = set()  # indices in _inbox that next() returned
        self._auto_commit = False
        self._answered: set[int] = set()  # seq of the offsets messages answered
        self._reader_done = threading.Event()
        self._loop_thread: threading.Thread | None = None
        self._reader = threading.Thread(target=self._read, name="test-worker-end", daemon=True)
        self._reader.start()

    def __enter__(self) -> WorkerEnd:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.channel.close()
        self.control.channel.close()
        self._reader.join(DEADLINE_S)
        if self._loop_thread is not None:
            self._loop_thread.join(DEADLINE_S)
            assert not self._loop_thread.is_alive(), "the loop did not end when its worker went away"

    def _read(self) -> None:
        try:
            while True:
                message = self.channel.recv()
                if isinstance(message, Heartbeat):
                    self.heartbeats.append(message)
                    continue
                with self._changed:
                    self._inbox.append(message)
                    answer = self._auto_commit and self._to_answer(message)
                    self._changed.notify_all()
                if answer:
                    self.channel.send(Committed(answer.seq))
        except (ChannelClosed, ProtocolError):
            pass
        finally:
            self._reader_done.set()
            with self._changed:
                self._changed.notify_all()

    # -- the loop ---------------------------------------------------------------------

    def launch(self, launch: TaskLaunch) -> None:
        """What the worker sends first: the task to run, then the welcome (``Resume``)."""
        self.send(launch)
        self.send(Resume())

    def launched(self) -> TaskLaunch:
        """The launch as the task's end decoded it, once welcomed (what ``run_task`` runs)."""
        assert self.control.welcomed.wait(DEADLINE_S), "the task's end was never welcomed"
        assert self.control.launch is not None
        return self.control.launch

    def start(self, loop: TaskLoop) -> None:
        """Run the loop's ``run()`` on a thread of its own (the task thread)."""
        assert self._loop_thread is None, "one loop per worker end"
        self.loop = loop
        self._loop_thread = threading.Thread(target=loop.run, name="test-task-thread", daemon=True)
        self._loop_thread.start()

    def join(self, timeout: float = DEADLINE_S) -> None:
        """Wait for ``run()`` to return."""
        assert self._loop_thread is not None
        self._loop_thread.join(timeout)
        assert not self._loop_thread.is_alive(), f"run() did not return within {timeout}s"

    def finish(self) -> list[TaskMessage]:
        """After ``run()`` returned: close the task's end and return all it sent (the reader
        has read everything once it sees the end of the stream)."""
        self.join()
        self.control.channel.close()
        assert self._reader_done.wait(DEADLINE_S), "the worker's end did not see the connection end"
        return self.received()

    # -- messages ---------------------------------------------------------------------

    def send(self, message: WorkerMessage) -> None:
        self.channel.send(message)

    def send_when_waiting(self, message: WorkerMessage) -> int:
        """Send ``message`` once the loop waits for the worker (so that it wakes the loop at
        once); returns how many waits had ended before."""
        wait_until(lambda: self.control.waiting, timeout=DEADLINE_S, message="the loop waiting", interval=0.002)
        waits = self.control.waits
        self.send(message)
        return waits

    def send_frame(self, payload: bytes) -> None:
        """A raw frame, as the wire frames messages (for unreadable ones)."""
        self._sock.sendall(struct.pack(">I", len(payload)) + payload)

    def close(self) -> None:
        """The worker goes away."""
        self.channel.close()

    def received(self, kind: type[M] | None = None) -> list[Any]:
        """What the task sent so far (heartbeats apart), in order; only of ``kind`` if given."""
        with self._changed:
            return [m for m in self._inbox if kind is None or isinstance(m, kind)]

    def next(self, kind: type[M], timeout: float = DEADLINE_S) -> M:
        """The oldest message of ``kind`` not handed out before, waiting for it."""

        def find() -> tuple[int, M] | None:
            for i, message in enumerate(self._inbox):
                if i not in self._handed_out and isinstance(message, kind):
                    return i, message
            return None

        deadline = time.monotonic() + timeout
        with self._changed:
            while (found := find()) is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._reader_done.is_set():
                    raise AssertionError(f"no {kind.__name__} from the task; it sent {self._inbox!r}")
                self._changed.wait(remaining)
            self._handed_out.add(found[0])
            return found[1]

    def commit(self, offsets: OffsetsMessage, error: str | None = None, fenced: bool = False) -> None:
        """Answer an offsets message: stored, failed with ``error``, or ``fenced``."""
        with self._changed:
            assert self._to_answer(offsets), f"offsets {offsets.seq} were answered already"
        self.send(Committed(offsets.seq, error, fenced))

    def auto_commit(self) -> None:
        """Answer as stored the offsets messages not answered yet, and from now on every
        one as it arrives."""
        with self._changed:
            self._auto_commit = True
            unanswered = [offsets for m in list(self._inbox) if (offsets := self._to_answer(m))]
        for offsets in unanswered:
            self.send(Committed(offsets.seq))

    def _to_answer(self, message: TaskMessage) -> OffsetsMessage | None:
        """``message`` if it is an offsets message not answered yet (marked answered now);
        called holding ``_changed``."""
        if not isinstance(message, OffsetsMessage) or message.seq in self._answered:
            return None
        self._answered.add(message.seq)
        return message


def wait_for(predicate: Callable[[], Any], what: str) -> Any:
    """:func:`tests.helpers.wait_until` with the fakes' deadline."""
    return wait_until(predicate, timeout=DEADLINE_S, message=what, interval=0.005)


class EventLog:
    """What a scripted task was called with, in order: ``(name, *arguments)`` tuples,
    appended on the task thread, read by the test."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def add(self, name: str, *arguments: Any) -> None:
        self.events.append((name, *arguments))

    def of(self, name: str) -> list[tuple[Any, ...]]:
        """The arguments of each call of ``name``."""
        return [event[1:] for event in list(self.events) if event[0] == name]

    def count(self, name: str) -> int:
        return len(self.of(name))

    def names(self) -> list[str]:
        return [event[0] for event in list(self.events)]
