"""SourceLoop driven without Kafka or a worker: offsets advance only over what Kafka
acknowledged, ``commit_record``/``commit`` come when Kafka Connect calls them, and pause,
stop and failures go as the worker expects (Kafka's ``WorkerSourceTask``)."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import KafkaError

from sluice.api.config import ConfigDef
from sluice.api.errors import RetriableError
from sluice.api.records import Headers, RecordMetadata, SourceRecord
from sluice.api.source import SourceTask
from sluice.api.transforms import Transformation
from sluice.taskhost import source
from sluice.taskhost.producers import HostProducers, InOrderReports
from sluice.taskhost.protocol import (
    Committed,
    Failed,
    Pause,
    PausedAck,
    PluginSpec,
    Resume,
    RunSourceTask,
    SourceOffsets,
    Started,
    Stop,
)
from sluice.taskhost.source import SourceLoop
from sluice.taskhost.tolerance import ErrorPolicy
from tests.unit.taskhost.fakes import (
    DEADLINE_S,
    EventLog,
    FakeClients,
    FakeKafkaError,
    FakeProducer,
    WorkerEnd,
    task_spec,
    wait_for,
)

# How long an idle poll() waits for records the test queues: short, so that a pause or a
# stop is heard soon, and not zero, so that an idle loop does not spin.
IDLE_POLL_S = 0.02
HOUR_MS = 3_600_000


class SourceScript(EventLog):
    """What a scripted source task's polls return (queued by the test) and every call it got."""

    def __init__(self) -> None:
        super().__init__()
        self.key = uuid.uuid4().hex
        self._polls: deque[list[SourceRecord] | BaseException] = deque()
        self._changed = threading.Condition()

    def queue(self, *records: SourceRecord) -> None:
        """The records of one poll."""
        with self._changed:
            self._polls.append(list(records))
            self._changed.notify_all()

    def queue_error(self, error: BaseException) -> None:
        """A poll that raises ``error``."""
        with self._changed:
            self._polls.append(error)
            self._changed.notify_all()

    def next_poll(self) -> list[SourceRecord] | None:
        with self._changed:
            if not self._polls:
                self._changed.wait(IDLE_POLL_S)
            if not self._polls:
                return None
            polled = self._polls.popleft()
        if isinstance(polled, BaseException):
            raise polled
        return polled


#: The scripts of running tasks, by their task config's "script" value.
SCRIPTS: dict[str, SourceScript] = {}


class ScriptedSourceTask(SourceTask):
    """Polls what its script queued; does not override ``commit_record``."""

    script: SourceScript

    def start(self, props: dict[str, str]) -> None:
        self.script = SCRIPTS[props["script"]]
        self.script.add("start", props)

    def poll(self) -> list[SourceRecord] | None:
        self.script.add("poll")
        return self.script.next_poll()

    def commit(self) -> None:
        self.script.add("commit")

    def stop(self) -> None:
        self.script.add("stop")


class RecordingSourceTask(ScriptedSourceTask):
    """Also records ``commit_record`` (overriding it changes how the loop serves acks)."""

    def commit_record(self, record: SourceRecord, metadata: Any) -> None:
        self.script.add("commit_record", record, metadata)


def record(file: str, position: int, value: str | None = "v", **extra: Any) -> SourceRecord:
    return SourceRecord({"file": file}, {"position": position}, "t", value=value, **extra)


def positions(offsets: SourceOffsets) -> dict[str, int]:
    """An offsets message as {file: position}."""
    return {partition["file"]: offset["position"] for partition, offset in offsets.offsets}


@contextlib.contextmanager
def registered_script() -> Iterator[SourceScript]:
    """A script the tasks started with its key find (``SCRIPTS``), for the test's length."""
    made = SourceScript()
    SCRIPTS[made.key] = made
    try:
        yield made
    finally:
        del SCRIPTS[made.key]


@pytest.fixture
def script() -> Iterator[SourceScript]:
    with registered_script() as made:
        yield made


@pytest.fixture(autouse=True)
def no_waiting_for_acks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pausing or stopping loop does not wait for Kafka's acknowledgements (30 s by
    default) unless a test says so with :func:`wait_for_acks`: the fake Kafka acknowledges
    only what the test releases."""
    monkeypatch.setattr(source, "FINAL_FLUSH_S", 0.0)


def wait_for_acks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loop waits for acknowledgements as long as a test would."""
    monkeypatch.setattr(source, "FINAL_FLUSH_S", DEADLINE_S)


@pytest.fixture
def no_periodic_commits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offsets go to the worker only when the loop pauses or stops (the interval is an hour)."""
    monkeypatch.setattr(source, "COMMIT_INTERVAL_MAX_MS", HOUR_MS)


def start(
    worker: WorkerEnd,
    script: SourceScript,
    task_class: type[SourceTask] = ScriptedSourceTask,
    transforms: PluginSpec | None = None,
    interval_ms: int = 50,
    errors: ErrorPolicy | None = None,
    producers: HostProducers | None = None,
    until_started: bool = True,
) -> FakeProducer:
    """Launch the task as the worker does and run its loop until it reported Started
    (unless not ``until_started``); returns the producer it writes with (its own, or one
    of ``producers``)."""
    spec = task_spec(task_class, {"script": script.key}, transforms)
    worker.launch(
        RunSourceTask(
            spec if errors is None else dataclasses.replace(spec, errors=errors),
            producer_config={"bootstrap.servers": "fake:9092"},
            offset_flush_interval_ms=interval_ms,
        )
    )
    launch = worker.launched()
    assert isinstance(launch, RunSourceTask)
    loop = SourceLoop(launch, worker.control, FakeClients(), producers)
    worker.start(loop)
    if until_started:
        worker.next(Started)
    shared = loop.producer
    assert isinstance(shared, InOrderReports)  # a host's producer, whoever polls it
    producer: FakeProducer = shared.producer
    return producer


def produced(producer: FakeProducer, count: int) -> None:
    wait_for(lambda: len(producer.produced) >= count, f"{count} records produced")
    assert len(producer.produced) == count


def stop(worker: WorkerEnd) -> list[Any]:
    """Stop the task cleanly, answering its last offsets; everything it sent."""
    worker.auto_commit()
    worker.send(Stop())
    return worker.finish()


def test_offsets_cover_only_acknowledged_records_and_commit_follows_their_storing(
    worker: WorkerEnd, script: SourceScript
) -> None:
    producer = start(worker, script)
    script.queue(*(record("a", i) for i in range(1, 5)))
    produced(producer, 4)
    assert [p.value for p in producer.produced] == [b"v"] * 4
    assert producer.settings["bootstrap.servers"] == "fake:9092" and producer.settings["acks"] == "all"

    producer.release(2)
    first = worker.next(SourceOffsets)
    assert positions(first) == {"a": 2}  # the 2nd record's offset: the 3rd and 4th wait for Kafka
    assert script.count("commit") == 0  # the loop waits for the worker to store them
    worker.commit(first)
    wait_for(lambda: script.count("commit") == 1, "commit() after the offsets were stored")

    producer.release_all()
    second = worker.next(SourceOffsets)
    assert positions(second) == {"a": 4}
    assert second.seq == first.seq + 1
    worker.commit(second)
    wait_for(lambda: script.count("commit") == 2, "commit() after the second store")

    sent = stop(worker)
    assert [positions(m) for m in sent if isinstance(m, SourceOffsets)] == [{"a": 2}, {"a": 4}]
    assert not [m for m in sent if isinstance(m, Failed)]


def test_each_source_partition_advances_over_its_own_acknowledged_records_in_poll_order(
    worker: WorkerEnd, script: SourceScript
) -> None:
    producer = start(worker, script)
    script.queue(record("a", 1), record("b", 1), record("a", 2), record("b", 2))
    produced(producer, 4)
    producer.release(3)  # a1, b1, a2
    offsets = worker.next(SourceOffsets)
    assert positions(offsets) == {"a": 2, "b": 1}
    worker.commit(offsets)
    producer.release_all()
    offsets = worker.next(SourceOffsets)
    assert positions(offsets) == {"b": 2}  # a's offset did not move: not sent again
    worker.commit(offsets)
    stop(worker)


def test_commit_record_gets_where_kafka_stored_each_record_and_none_for_a_filtered_one(
    worker: WorkerEnd, script: SourceScript
) -> None:
    drop_tombstones = PluginSpec(
        "sluice.transforms.chain.TransformationChain",
        {
            "transforms": "drop",
            "transforms.drop.type": "sluice.transforms.filter.Filter",
            "transforms.drop.predicate": "tombstone",
            "predicates": "tombstone",
            "predicates.tombstone.type": "sluice.transforms.predicates.RecordIsTombstone",
        },
    )
    producer = start(worker, script, RecordingSourceTask, drop_tombstones)
    kept = record("a", 1, "one")
    dropped = record("a", 2, None)
    placed = record("a", 3, "three", kafka_partition=2, timestamp=1234, headers=Headers().add_string("h", "x"))
    script.queue(kept, dropped, placed)
    produced(producer, 2)
    # the filtered record is done with as soon as its poll was handled: before any acknowledgement
    assert script.of("commit_record") == [(dropped, None)]
    assert (producer.produced[1].partition, producer.produced[1].timestamp) == (2, 1234)
    assert producer.produced[1].headers == [("h", b"x")]

    producer.release(1)
    offsets = worker.next(SourceOffsets)
    assert positions(offsets) == {"a": 2}  # the filtered record counts as acknowledged
    calls = script.of("commit_record")
    assert calls[1][0] is kept
    assert calls[1][1] == RecordMetadata("t", 0, 0, FakeProducer.BROKER_TIME_MS)
    worker.commit(offsets)

    producer.release_all()
    worker.commit(worker.next(SourceOffsets))
    wait_for(lambda: script.count("commit_record") == 3, "commit_record for the last record")
    assert script.of("commit_record")[2] == (placed, RecordMetadata("t", 2, 0, 1234))
    stop(worker)
    assert script.count("commit_record") == 3  # once per record


def test_pause_delivers_and_commits_before_its_ack_and_polls_only_after_resume(
    worker: WorkerEnd, script: SourceScript, monkeypatch: pytest.MonkeyPatch
) -> None:
    producer = start(worker, script)
    script.queue(record("a", 1), record("a", 2))
    produced(producer, 2)
    wait_for_acks(monkeypatch)
    worker.auto_commit()
    worker.send(Pause())
    wait_for(producer.waiting.is_set, "the paused loop waiting for acknowledgements")
    assert not worker.received(PausedAck)  # not before what was produced is delivered
    producer.release_all()

    worker.next(PausedAck)
    sent = worker.received()
    offsets = [m for m in sent if isinstance(m, SourceOffsets)]
    assert offsets and positions(offsets[-1]) == {"a": 2}
    assert sent.index(offsets[-1]) < sent.index(worker.received(PausedAck)[0])
    assert script.count("commit") >= 1

    polls = script.count("poll")
    script.queue(record("a", 3))
    waits = worker.send_when_waiting(Pause())  # wakes the paused loop: it goes round without polling
    wait_for(lambda: worker.control.waits > waits, "the paused loop woken")
    assert script.count("poll") == polls
    assert len(producer.produced) == 2

    worker.send_when_waiting(Resume())
    produced(producer, 3)
    producer.release_all()
    stop(worker)


class StartFailingSourceTask(ScriptedSourceTask):
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        raise ValueError("the source cannot be reached")


def test_a_start_that_raises_fails_the_task_which_is_still_stopped(worker: WorkerEnd, script: SourceScript) -> None:
    # As in Kafka Connect: stop() lets the instance release what its start took.
    start(worker, script, task_class=StartFailingSourceTask, until_started=False)
    sent = worker.finish()  # run() returns by itself
    [failed] = [m for m in sent if isinstance(m, Failed)]
    assert "ValueError: the source cannot be reached" in failed.trace
    assert not [m for m in sent if isinstance(m, Started)]
    assert script.names() == ["start", "stop"]


def test_stop_commits_what_kafka_acknowledged_then_stops_the_task(
    worker: WorkerEnd, script: SourceScript, no_periodic_commits: None
) -> None:
    producer = start(worker, script, interval_ms=HOUR_MS)
    script.queue(record("a", 1), record("a", 2))
    produced(producer, 2)
    producer.release(1)
    sent = stop(worker)
    assert [positions(m) for m in sent if isinstance(m, SourceOffsets)] == [{"a": 1}]
    assert not [m for m in sent if isinstance(m, Failed)]
    assert script.names()[-2:] == ["commit", "stop"]


def test_a_stopped_task_closes_its_producer_and_leaves_what_kafka_never_acknowledged_alone(
    worker: WorkerEnd, script: SourceScript, no_periodic_commits: None, caplog: pytest.LogCaptureFixture
) -> None:
    # errors.tolerance=all would skip a record that failed to write, and tell commit_record:
    # a record dropped because the task stopped is neither, and its offset stays unstored
    producer = start(worker, script, RecordingSourceTask, interval_ms=HOUR_MS, errors=ErrorPolicy(tolerate_all=True))
    script.queue(record("a", 1), record("a", 2))
    produced(producer, 2)
    producer.release(1)
    with caplog.at_level(logging.WARNING, logger="sluice.taskhost.source"):
        sent = stop(worker)
    assert producer.closed  # its librdkafka threads end with the task, not with a garbage collection
    assert [positions(m) for m in sent if isinstance(m, SourceOffsets)] == [{"a": 1}]
    # commit_record only for the record Kafka stored, with where it stored it
    assert [(rec.source_offset, meta is not None) for rec, meta in script.of("commit_record")] == [
        ({"position": 1}, True)
    ]
    assert script.names()[-1] == "stop"
    assert "skipping it" not in caplog.text


def test_a_failing_poll_fails_the_task_after_storing_what_was_acknowledged(
    worker: WorkerEnd, script: SourceScript, no_periodic_commits: None
) -> None:
    producer = start(worker, script, interval_ms=HOUR_MS)
    script.queue(record("a", 1), record("a", 2))
    produced(producer, 2)
    producer.release_all()
    worker.auto_commit()
    script.queue_error(RuntimeError("the source is gone"))
    sent = worker.finish()  # run() returns by itself
    failed = [m for m in sent if isinstance(m, Failed)]
    assert len(failed) == 1
    assert "Traceback" in failed[0].trace and "RuntimeError: the source is gone" in failed[0].trace
    offsets = [m for m in sent if isinstance(m, SourceOffsets)]
    assert [positions(m) for m in offsets] == [{"a": 2}]
    assert sent.index(offsets[0]) < sent.index(failed[0])
    assert script.names()[-2:] == ["commit", "stop"]


def test_a_retriable_poll_error_is_polled_again_and_does_not_fail_the_task(
    worker: WorkerEnd, script: SourceScript
) -> None:
    producer = start(worker, script)
    script.queue_error(RetriableError("not yet"))
    script.queue(record("a", 1))
    produced(producer, 1)
    producer.release_all()
    sent = stop(worker)
    assert not [m for m in sent if isinstance(m, Failed)]
    assert [positions(m) for m in sent if isinstance(m, SourceOffsets)][-1] == {"a": 1}


def test_a_failed_delivery_fails_the_task_and_its_offset_is_never_stored(
    worker: WorkerEnd, script: SourceScript
) -> None:
    producer = start(worker, script)
    script.queue(record("a", 1), record("a", 2))
    produced(producer, 2)
    producer.fail(FakeKafkaError("Local: Message timed out"))
    producer.release(1)  # the record after it is acknowledged: still not committable
    worker.auto_commit()
    sent = worker.finish()
    failed = [m for m in sent if isinstance(m, Failed)]
    assert len(failed) == 1 and "Local: Message timed out (topic t)" in failed[0].trace
    assert not [m for m in sent if isinstance(m, SourceOffsets)]
    assert script.names()[-1] == "stop"


def test_a_fatal_producer_error_fails_the_task(worker: WorkerEnd, script: SourceScript) -> None:
    producer = start(worker, script)
    producer.report_client_error(FakeKafkaError("Connection refused", error_code=KafkaError._TRANSPORT))  # logged
    producer.report_client_error(FakeKafkaError("Producer fenced", is_fatal=True))
    worker.auto_commit()
    sent = worker.finish()
    [failed] = [m for m in sent if isinstance(m, Failed)]
    assert failed.trace == "The task's Kafka producer failed: Producer fenced"
    assert script.names()[-1] == "stop"


def test_a_refused_login_fails_the_task_without_waiting_for_its_records(
    worker: WorkerEnd, script: SourceScript, monkeypatch: pytest.MonkeyPatch
) -> None:
    """librdkafka keeps records it cannot deliver after a refused login until they time out;
    a Java producer fails them at once. The task fails without a final flush that waits."""
    wait_for_acks(monkeypatch)
    producer = start(worker, script)
    script.queue(record("a", 1))
    produced(producer, 1)
    producer.report_client_error(
        FakeKafkaError("SASL authentication error: Authentication failed", error_code=KafkaError._AUTHENTICATION)
    )
    sent = worker.finish()
    [failed] = [m for m in sent if isinstance(m, Failed)]
    assert "Authentication failed" in failed.trace
    assert not [timeout for timeout in producer.poll_timeouts if timeout]  # never waited for a report
    assert not [m for m in sent if isinstance(m, SourceOffsets)]  # never acknowledged: not committed
    assert script.names()[-1] == "stop"


def test_a_full_producer_queue_waits_for_acknowledgements(worker: WorkerEnd, script: SourceScript) -> None:
    producer = start(worker, script)
    producer.queue_limit = 2
    script.queue(record("a", 1), record("a", 2), record("a", 3))
    produced(producer, 2)
    polls = producer.poll_calls
    wait_for(lambda: producer.poll_calls >= polls + 2, "the loop waiting for room in the queue")
    assert len(producer.produced) == 2
    producer.release(1)
    produced(producer, 3)
    producer.release_all()
    sent = stop(worker)
    assert [positions(m) for m in sent if isinstance(m, SourceOffsets)][-1] == {"a": 3}


def test_a_fenced_store_calls_no_commit_and_drops_those_offsets(worker: WorkerEnd, script: SourceScript) -> None:
    producer = start(worker, script)
    script.queue(record("a", 1))
    produced(producer, 1)
    producer.release_all()
    fenced = worker.next(SourceOffsets)
    worker.commit(fenced, fenced=True)

    script.queue(record("a", 2))
    produced(producer, 2)
    producer.release_all()
    offsets = worker.next(SourceOffsets)  # the loop went on past the fenced answer...
    assert script.count("commit") == 0  # ...without calling commit()
    assert positions(offsets) == {"a": 2}
    worker.commit(offsets)
    wait_for(lambda: script.count("commit") == 1, "commit() once stored")
    stop(worker)


def test_a_failed_store_sends_the_same_offsets_with_the_next_commit(worker: WorkerEnd, script: SourceScript) -> None:
    producer = start(worker, script)
    script.queue(record("a", 1))
    produced(producer, 1)
    producer.release_all()
    first = worker.next(SourceOffsets)
    worker.send(Committed(first.seq, error="the offsets topic is unavailable"))
    again = worker.next(SourceOffsets)
    assert again.offsets == first.offsets and again.seq == first.seq + 1
    assert script.count("commit") == 0
    assert worker.control.meter.commit_failures == 1
    worker.commit(again)
    wait_for(lambda: script.count("commit") == 1, "commit() once stored")
    stop(worker)


def test_a_resume_that_comes_as_the_paused_loop_is_about_to_wait_is_heard_at_once(
    worker: WorkerEnd, script: SourceScript, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Resume is handled between the paused loop's look at the flags and its wait:
    that wait must end at once, not at its one-second timeout."""
    control = worker.control
    resumed_at: list[float] = []
    real_wait = control.wait_for_change

    def racing_wait(timeout_s: float, since: int | None = None) -> None:
        if control.paused and not resumed_at:  # the loop saw paused and is about to wait
            worker.send(Resume())
            wait_for(lambda: not control.paused, "the Resume handled")
            resumed_at.append(time.monotonic())
        real_wait(timeout_s, since)

    monkeypatch.setattr(control, "wait_for_change", racing_wait)
    start(worker, script)
    worker.send(Pause())
    worker.next(PausedAck)
    polls = script.count("poll")
    wait_for(lambda: script.count("poll") > polls, "polling again after the Resume")
    assert time.monotonic() - resumed_at[0] < 0.5
    stop(worker)


def test_a_stop_while_the_producer_queue_is_full_is_a_clean_stop(
    worker: WorkerEnd, script: SourceScript, caplog: pytest.LogCaptureFixture
) -> None:
    producer = start(worker, script)
    producer.queue_limit = 2
    script.queue(record("a", 1), record("a", 2), record("a", 3))
    produced(producer, 2)
    polls = producer.poll_calls
    wait_for(lambda: producer.poll_calls >= polls + 2, "the loop waiting for room in the queue")
    with caplog.at_level(logging.WARNING, logger="sluice.taskhost.loop"):
        sent = stop(worker)  # Kafka acknowledged nothing: nothing to store
    assert not [m for m in sent if isinstance(m, SourceOffsets | Failed)]
    assert script.names()[-1] == "stop"
    assert "went away" not in caplog.text


def test_a_stop_while_the_producer_queue_is_full_waits_only_for_what_was_produced(
    worker: WorkerEnd, script: SourceScript, monkeypatch: pytest.MonkeyPatch
) -> None:
    wait_for_acks(monkeypatch)
    producer = start(worker, script)
    producer.queue_limit = 2
    script.queue(record("a", 1), record("a", 2), record("a", 3))
    produced(producer, 2)
    producer.queue_limit = 0  # no room for the third, even once the first two are acknowledged
    producer.release_all()
    polls = producer.poll_calls
    wait_for(lambda: producer.poll_calls >= polls + 2, "the loop waiting for room in the queue")
    started = time.monotonic()
    sent = stop(worker)
    assert time.monotonic() - started < DEADLINE_S / 2  # not waiting for the record it never produced
    assert [positions(m) for m in sent if isinstance(m, SourceOffsets)][-1] == {"a": 2}
    assert not [m for m in sent if isinstance(m, Failed)]


class ThreadRecordingSourceTask(RecordingSourceTask):
    """Also records the thread of each ``poll`` and ``commit_record``."""

    def poll(self) -> list[SourceRecord] | None:
        self.script.add("poll thread", threading.get_ident())
        return super().poll()

    def commit_record(self, record: SourceRecord, metadata: Any) -> None:
        self.script.add("commit_record thread", threading.get_ident())
        super().commit_record(record, metadata)


@pytest.fixture
def other_script() -> Iterator[SourceScript]:
    with registered_script() as made:
        yield made


def test_tasks_sharing_a_producer_each_wait_for_their_own_records_and_hear_them_on_their_own_thread(
    worker: WorkerEnd, script: SourceScript, other_script: SourceScript, monkeypatch: pytest.MonkeyPatch
) -> None:
    producers = HostProducers(FakeClients())
    with WorkerEnd() as other:
        shared = start(worker, script, ThreadRecordingSourceTask, producers=producers)
        assert start(other, other_script, ThreadRecordingSourceTask, producers=producers) is shared
        other_script.queue(record("b", 1))
        produced(shared, 1)
        script.queue(record("a", 1))
        produced(shared, 2)
        shared.release(1)  # the other task's record; this task's is still in flight
        shared.poll(0)  # the report served on a thread neither task runs on, as a sibling would

        wait_for_acks(monkeypatch)
        other.auto_commit()
        other.send(Pause())
        other.next(PausedAck)  # not held up by this task's record
        assert positions(other.received(SourceOffsets)[-1]) == {"b": 1}
        assert set(other_script.of("commit_record thread")) <= set(other_script.of("poll thread"))
        assert other_script.count("commit_record thread") == 1
        assert not worker.received(SourceOffsets)

        shared.release_all()
        worker.commit(worker.next(SourceOffsets))
        wait_for(lambda: script.count("commit_record") == 1, "commit_record for this task's record")
        assert set(script.of("commit_record thread")) <= set(script.of("poll thread"))

        stop(other)
        assert not shared.closed  # this task still writes with it
        stop(worker)
        assert shared.closed


def test_a_fatal_error_of_a_shared_producer_fails_every_task_on_it(
    worker: WorkerEnd, script: SourceScript, other_script: SourceScript
) -> None:
    producers = HostProducers(FakeClients())
    with WorkerEnd() as other:
        shared = start(worker, script, producers=producers)
        start(other, other_script, producers=producers)
        shared.report_client_error(FakeKafkaError("Producer fenced", is_fatal=True))
        for end in (worker, other):
            end.auto_commit()
            [failed] = [m for m in end.finish() if isinstance(m, Failed)]
            assert failed.trace == "The task's Kafka producer failed: Producer fenced"
        assert shared.closed


class FailsOnBad(Transformation[SourceRecord]):
    """Raises for a record whose value is "bad"."""

    def config(self) -> ConfigDef:
        return ConfigDef()

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        if record.value == "bad":
            raise ValueError("a bad record")
        return record


def test_the_dead_letter_of_a_record_that_fails_the_task_is_delivered_before_it_stops(
    worker: WorkerEnd, script: SourceScript, monkeypatch: pytest.MonkeyPatch
) -> None:
    fails_on_bad = PluginSpec(
        "sluice.transforms.chain.TransformationChain",
        {"transforms": "bad", "transforms.bad.type": f"{FailsOnBad.__module__}.{FailsOnBad.__qualname__}"},
    )
    wait_for_acks(monkeypatch)
    producer = start(worker, script, transforms=fails_on_bad, errors=ErrorPolicy(dead_letter_topic="dlq"))
    script.queue(record("a", 1), record("a", 2, "bad"))
    produced(producer, 2)
    assert [p.topic for p in producer.produced] == ["t", "dlq"]
    wait_for(producer.waiting.is_set, "the failing task waiting for its records' acknowledgements")
    producer.release(1)  # the record before it
    polls = producer.poll_calls
    wait_for(lambda: producer.poll_calls >= polls + 3, "the task still waiting, for the dead letter")
    assert not producer.closed and not worker.received(Failed)
    producer.release_all()  # the dead letter
    worker.auto_commit()
    sent = worker.finish()
    assert [positions(m) for m in sent if isinstance(m, SourceOffsets)] == [{"a": 1}]  # never past the bad one
    [failed] = [m for m in sent if isinstance(m, Failed)]
    assert "a bad record" in failed.trace
    assert not producer.waiting.is_set() and not len(producer)
