"""SinkLoop driven without Kafka or a worker: what ``put``, ``pre_commit``, ``open`` and
``close`` receive and when, what the task asks through its context, retries, partition
changes, pause and stop (Kafka's ``WorkerSinkTask``)."""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sluice.api.data import Schema
from sluice.api.errors import RetriableError
from sluice.api.records import SinkBatch, SinkRecord, TimestampType, TopicPartition
from sluice.api.sink import SinkTask, SinkTaskContext
from sluice.taskhost import sink
from sluice.taskhost.protocol import (
    Assign,
    Failed,
    Pause,
    PausedAck,
    Resume,
    RunSinkTask,
    SinkOffsets,
    Started,
    Stop,
    TopicPartitionKey,
    TopicsSeen,
)
from sluice.taskhost.sink import SinkLoop
from tests.unit.taskhost.fakes import EventLog, FakeClients, FakeConsumer, WorkerEnd, task_spec, wait_for

HOUR_MS = 3_600_000
T0, T1, T2 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("t", 2)
#: The task's partitions and where it reads each from; fill() puts 3 records in t-0, 2 in t-1.
ASSIGNMENT: dict[TopicPartitionKey, int] = {("t", 0): 0, ("t", 1): 5}
ALL_READ = {T0: 3, T1: 7}


class SinkScript(EventLog):
    """What a scripted sink task does in its calls (set by the test) and every call it got."""

    def __init__(self) -> None:
        super().__init__()
        self.key = uuid.uuid4().hex
        # raised by the next puts that carry records, one each
        self.put_failures: deque[BaseException] = deque()
        # run by the next puts (with records or not), one each, with the task's context
        self.on_put: deque[Callable[[SinkTaskContext], object]] = deque()
        # what pre_commit returns from the current offsets; None: all of them
        self.commit_only: Callable[[dict[TopicPartition, int]], dict[TopicPartition, int]] | None = None

    def puts(self) -> list[list[SinkRecord]]:
        """The record lists of the puts that carried records."""
        return [records for (records,) in self.of("put") if records]

    def put_offsets(self) -> list[tuple[str, int | None, int]]:
        return [(r.topic, r.kafka_partition, r.kafka_offset) for records in self.puts() for r in records]

    def since(self, marker: str) -> list[str]:
        """The names of the calls after the test's ``marker``."""
        names = self.names()
        return names[names.index(marker) + 1 :]


#: The scripts of running tasks, by their task config's "script" value.
SCRIPTS: dict[str, SinkScript] = {}


class ScriptedSinkTask(SinkTask):
    script: SinkScript

    def start(self, props: dict[str, str]) -> None:
        self.script = SCRIPTS[props["script"]]
        self.script.add("start", props)

    def open(self, partitions: list[TopicPartition]) -> None:
        self.script.add("open", list(partitions))

    def put(self, records: list[SinkRecord]) -> None:
        self.script.add("put", records)
        if self.script.on_put:
            self.script.on_put.popleft()(self.context)
        if records and self.script.put_failures:
            raise self.script.put_failures.popleft()

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        self.script.add("pre_commit", dict(current_offsets))
        chosen = self.script.commit_only
        return dict(current_offsets) if chosen is None else chosen(current_offsets)

    def close(self, partitions: list[TopicPartition]) -> None:
        self.script.add("close", list(partitions))

    def stop(self) -> None:
        self.script.add("stop")


@pytest.fixture
def script() -> Iterator[SinkScript]:
    made = SinkScript()
    SCRIPTS[made.key] = made
    yield made
    del SCRIPTS[made.key]


@pytest.fixture
def no_periodic_commits(monkeypatch: pytest.MonkeyPatch) -> None:
    """pre_commit comes only when the loop pauses, stops, loses a partition or the task asks
    (the interval, and so the idle put([]) too, is an hour)."""
    monkeypatch.setattr(sink, "COMMIT_INTERVAL_MAX_MS", HOUR_MS)


def fill(consumer: FakeConsumer) -> None:
    consumer.add("t", 0, [b"a0", b"a1", b"a2"], keys=[b"k0", b"k1", b"k2"], timestamp_ms=1_000)
    consumer.add("t", 1, [b"b5", b"b6"], start=5, timestamp_ms=2_000)


def start(
    worker: WorkerEnd,
    script: SinkScript,
    *,
    filled: bool = True,
    interval_ms: int = 50,
    answer: bool = True,
    task_class: type[SinkTask] = ScriptedSinkTask,
    until_started: bool = True,
) -> FakeConsumer:
    """Launch the task as the worker does (its partitions filled, unless not ``filled``) and
    run its loop until it reported Started (unless not ``until_started``); offsets are
    answered as stored at once, unless the test answers them (not ``answer``)."""
    if answer:
        worker.auto_commit()
    worker.launch(
        RunSinkTask(
            task_spec(task_class, {"script": script.key, "topics": "t"}),
            consumer_config={"bootstrap.servers": "fake:9092"},
            assignment=dict(ASSIGNMENT),
            poll_interval_ms=20,
            offset_flush_interval_ms=interval_ms,
        )
    )
    launch = worker.launched()
    assert isinstance(launch, RunSinkTask)
    clients = FakeClients()
    loop = SinkLoop(launch, worker.control, clients)
    consumer = clients.only_consumer
    if filled:
        fill(consumer)
    worker.start(loop)
    if until_started:
        worker.next(Started)
    return consumer


def all_put(script: SinkScript, count: int = 5) -> None:
    wait_for(lambda: len(script.put_offsets()) >= count, f"{count} records put")
    assert len(script.put_offsets()) == count, script.put_offsets()


def stop(worker: WorkerEnd) -> list[Any]:
    """Stop the task cleanly, answering its last offsets; everything it sent."""
    worker.auto_commit()
    worker.send(Stop())
    return worker.finish()


def failures(sent: list[Any]) -> list[Failed]:
    return [m for m in sent if isinstance(m, Failed)]


def test_put_gets_converted_records_and_pre_commit_decides_what_is_committed(
    worker: WorkerEnd, script: SinkScript
) -> None:
    script.commit_only = lambda current: {T0: 2}  # the task has written t-0 up to offset 1 only
    consumer = start(worker, script, answer=False)
    assert script.names()[:2] == ["start", "open"]
    assert script.of("open") == [([T0, T1],)]
    assert consumer.calls_of("assign") == [[("t", 0, 0), ("t", 1, 5)]]
    assert consumer.settings["group.id"] == "connect-c" and consumer.settings["enable.auto.commit"] is False

    all_put(script)
    records = [r for batch in script.puts() for r in batch]
    assert [(r.topic, r.kafka_partition, r.kafka_offset, r.key, r.value) for r in records] == [
        ("t", 0, 0, "k0", "a0"),
        ("t", 0, 1, "k1", "a1"),
        ("t", 0, 2, "k2", "a2"),
        ("t", 1, 5, None, "b5"),
        ("t", 1, 6, None, "b6"),
    ]
    assert records[0].value_schema == Schema.OPTIONAL_STRING_SCHEMA
    assert (records[0].timestamp, records[0].timestamp_type) == (1_000, TimestampType.CREATE_TIME)
    assert worker.next(TopicsSeen).topics == ["t"]

    first = worker.next(SinkOffsets)
    assert script.of("pre_commit")[0] == (ALL_READ,)  # the positions after the last put
    assert first.offsets == {("t", 0): 2}  # what pre_commit returned, not the positions
    worker.commit(first)
    calls = script.count("pre_commit")
    # Two more pre_commits returning the same: nothing sent (the loop would wait for an answer)
    wait_for(lambda: script.count("pre_commit") >= calls + 2, "two more pre_commit calls")
    assert worker.received(SinkOffsets) == [first]

    script.commit_only = None
    second = worker.next(SinkOffsets)
    assert second.offsets == {("t", 0): 3, ("t", 1): 7} and second.seq == first.seq + 1
    worker.commit(second)
    sent = stop(worker)
    assert not failures(sent)


def test_stop_commits_then_closes_every_partition_then_stops(
    worker: WorkerEnd, script: SinkScript, no_periodic_commits: None
) -> None:
    consumer = start(worker, script, interval_ms=HOUR_MS)
    all_put(script)
    script.add("test: Stop sent")
    sent = stop(worker)
    assert script.since("test: Stop sent") == ["pre_commit", "close", "stop"]
    assert script.of("close") == [([T0, T1],)]
    assert [m.offsets for m in sent if isinstance(m, SinkOffsets)] == [{("t", 0): 3, ("t", 1): 7}]
    assert not failures(sent)
    assert consumer.closed


def test_the_task_pausing_and_resuming_a_partition_pauses_and_resumes_the_consumer(
    worker: WorkerEnd, script: SinkScript
) -> None:
    script.on_put.append(lambda context: context.pause(T0))
    consumer = start(worker, script, filled=False)
    wait_for(lambda: consumer.calls_of("pause"), "the consumer paused")
    assert consumer.calls_of("pause") == [[("t", 0)]]
    fill(consumer)
    all_put(script, 2)
    assert script.put_offsets() == [("t", 1, 5), ("t", 1, 6)]  # t-0's records wait

    script.on_put.append(lambda context: context.resume(T0))
    wait_for(lambda: consumer.calls_of("resume"), "the consumer resumed")
    assert consumer.calls_of("resume") == [[("t", 0)]]
    all_put(script, 5)
    assert script.put_offsets()[2:] == [("t", 0, 0), ("t", 0, 1), ("t", 0, 2)]
    assert not failures(stop(worker))


def test_the_task_rewinding_a_partition_seeks_it_before_the_next_read(worker: WorkerEnd, script: SinkScript) -> None:
    consumer = start(worker, script)
    all_put(script)
    script.on_put.append(lambda context: context.offset(T0, 1))
    wait_for(lambda: consumer.calls_of("seek"), "the consumer seeking")
    assert consumer.calls_of("seek") == [[("t", 0, 1)]]
    all_put(script, 7)
    assert script.put_offsets()[5:] == [("t", 0, 1), ("t", 0, 2)]  # read again from offset 1
    sent = stop(worker)
    assert [m.offsets for m in sent if isinstance(m, SinkOffsets)][-1] == {("t", 0): 3, ("t", 1): 7}


def test_the_task_requesting_a_commit_gets_one_without_waiting_for_the_interval(
    worker: WorkerEnd, script: SinkScript, no_periodic_commits: None
) -> None:
    script.on_put.append(lambda context: context.request_commit())
    start(worker, script, interval_ms=HOUR_MS)
    assert worker.next(SinkOffsets).offsets == {("t", 0): 3, ("t", 1): 7}
    assert script.of("pre_commit") == [(ALL_READ,)]
    assert script.names()[-2:] == ["put", "pre_commit"]  # right after the put that asked
    assert not failures(stop(worker))


def test_a_put_raising_retriable_errors_gets_the_same_records_again(worker: WorkerEnd, script: SinkScript) -> None:
    script.put_failures.extend([RetriableError("busy"), RetriableError("still busy")])
    start(worker, script)
    wait_for(lambda: len(script.puts()) >= 3, "three attempts")
    attempts = script.puts()
    assert len(attempts) == 3
    assert attempts[0] == attempts[1] == attempts[2]
    assert len(attempts[0]) == 5
    sent = stop(worker)
    assert not failures(sent)
    assert [m.offsets for m in sent if isinstance(m, SinkOffsets)][-1] == {("t", 0): 3, ("t", 1): 7}


class ColumnSinkTask(ScriptedSinkTask):
    """A sink that writes whole columns: it overrides put_batch, so put is never called."""

    def put(self, records: list[SinkRecord]) -> None:
        raise AssertionError("put() called although put_batch() is overridden")

    def put_batch(self, batch: SinkBatch) -> None:
        self.script.add("put_batch", batch)
        if len(batch) and self.script.put_failures:
            raise self.script.put_failures.popleft()


def test_a_task_with_put_batch_gets_columns_and_after_a_retriable_error_the_same_batch(
    worker: WorkerEnd, script: SinkScript
) -> None:
    script.put_failures.append(RetriableError("busy"))
    start(worker, script, task_class=ColumnSinkTask)
    wait_for(lambda: len([b for (b,) in script.of("put_batch") if len(b)]) >= 2, "a batch put twice")
    first, again = [b for (b,) in script.of("put_batch") if len(b)][:2]
    assert again is first
    assert first.values == ["a0", "a1", "a2", "b5", "b6"]
    assert first.keys == ["k0", "k1", "k2", None, None]
    assert (first.topics, first.partitions, first.offsets) == (["t"] * 5, [0, 0, 0, 1, 1], [0, 1, 2, 5, 6])
    assert first.timestamps == [1_000] * 3 + [2_000] * 2
    assert first.timestamp_types == [TimestampType.CREATE_TIME] * 5
    assert first.headers == [None] * 5
    assert [(r.kafka_offset, r.value) for r in first.records()][3:] == [(5, "b5"), (6, "b6")]
    wait_for(lambda: [b for (b,) in script.of("put_batch") if not len(b)], "an idle put_batch (empty)")
    sent = stop(worker)
    assert not failures(sent)
    assert [m.offsets for m in sent if isinstance(m, SinkOffsets)][-1] == {("t", 0): 3, ("t", 1): 7}


def test_a_put_raising_another_error_fails_the_task_with_its_trace(worker: WorkerEnd, script: SinkScript) -> None:
    script.put_failures.append(ValueError("the sink is down"))
    start(worker, script)
    sent = worker.finish()  # run() returns by itself
    [failed] = failures(sent)
    assert "Traceback" in failed.trace and "ValueError: the sink is down" in failed.trace
    names = script.names()
    failing_put = max(i for i, event in enumerate(script.events) if event[0] == "put" and event[1])
    assert names[failing_put + 1 :] == ["close", "stop"]  # no pre_commit after the failure
    assert not [m for m in sent if isinstance(m, SinkOffsets)]


class StartFailingSinkTask(ScriptedSinkTask):
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        raise ValueError("the sink cannot be reached")


def test_a_start_that_raises_fails_the_task_which_is_still_stopped_but_not_closed(
    worker: WorkerEnd, script: SinkScript
) -> None:
    # As in Kafka Connect: stop() lets the instance release what its start took.
    consumer = start(worker, script, task_class=StartFailingSinkTask, until_started=False)
    sent = worker.finish()  # run() returns by itself
    [failed] = failures(sent)
    assert "ValueError: the sink cannot be reached" in failed.trace
    assert not [m for m in sent if isinstance(m, Started)]
    assert script.names() == ["start", "stop"]
    assert consumer.closed


def test_an_assignment_change_commits_and_closes_what_was_removed_and_opens_what_was_added(
    worker: WorkerEnd, script: SinkScript, no_periodic_commits: None
) -> None:
    consumer = start(worker, script, interval_ms=HOUR_MS)
    all_put(script)
    script.add("test: t-1 removed")
    worker.send(Assign({("t", 0): 0}))
    wait_for(lambda: script.count("close"), "close() of the removed partition")
    assert script.since("test: t-1 removed") == ["pre_commit", "close"]
    assert script.of("pre_commit") == [(ALL_READ,)]  # the removed partition still included
    assert script.of("close") == [([T1],)]
    assert worker.next(SinkOffsets).offsets == {("t", 0): 3, ("t", 1): 7}
    wait_for(lambda: consumer.calls_of("unassign"), "the consumer unassigned")
    assert consumer.calls_of("unassign") == [[("t", 1)]]

    consumer.add("t", 2, [b"c0", b"c1", b"c2", b"c3", b"c4"])
    script.add("test: t-2 added")
    worker.send(Assign({("t", 0): 0, ("t", 2): 3}))
    all_put(script, 7)
    assert script.since("test: t-2 added")[0] == "open"
    assert script.of("open")[-1] == ([T2],)
    assert consumer.calls_of("assign")[-1] == [("t", 2, 3)]
    assert script.put_offsets()[5:] == [("t", 2, 3), ("t", 2, 4)]  # from the offset the Assign gave

    sent = stop(worker)
    assert script.of("close")[-1] == ([T0, T2],)
    assert [m.offsets for m in sent if isinstance(m, SinkOffsets)][-1] == {("t", 2): 5}


def test_the_partition_count_gauge_follows_the_assignment_not_the_commits(
    worker: WorkerEnd, script: SinkScript, no_periodic_commits: None
) -> None:
    """As Kafka's sink-task ``partition-count``: set when partitions are assigned or revoked,
    so it is right before the first commit and after a revocation."""
    start(worker, script, interval_ms=HOUR_MS)
    all_put(script)
    loop = worker.loop
    assert isinstance(loop, SinkLoop)
    assert loop.meter.partition_count == 2
    worker.send(Assign({("t", 0): 0}))
    wait_for(lambda: loop.meter.partition_count == 1, "the gauge after a partition was revoked")
    stop(worker)


def test_pause_stops_reading_commits_and_acknowledges_and_resume_reads_again(
    worker: WorkerEnd, script: SinkScript
) -> None:
    consumer = start(worker, script)
    all_put(script)
    script.add("test: Pause sent")
    worker.send(Pause())
    worker.next(PausedAck)
    assert consumer.calls_of("pause") == [[("t", 0), ("t", 1)]]
    assert "pre_commit" in script.since("test: Pause sent")
    sent = worker.received()
    last_offsets = [m for m in sent if isinstance(m, SinkOffsets)][-1]
    assert last_offsets.offsets == {("t", 0): 3, ("t", 1): 7}
    assert sent.index(last_offsets) < sent.index(worker.received(PausedAck)[0])

    calls = len(script.events)
    consumer.add("t", 0, [b"a3"])
    waits = worker.send_when_waiting(Pause())  # wakes the paused loop: it goes round without a call
    wait_for(lambda: worker.control.waits > waits, "the paused loop woken")
    assert len(script.events) == calls

    worker.send_when_waiting(Resume())
    wait_for(lambda: consumer.calls_of("resume"), "the consumer resumed")
    assert consumer.calls_of("resume") == [[("t", 0), ("t", 1)]]
    all_put(script, 6)
    assert script.put_offsets()[-1] == ("t", 0, 3)
    assert not failures(stop(worker))
