"""TransactionalSourceLoop driven without Kafka or a worker (Kafka's
``ExactlyOnceWorkerSourceTask``): a transaction holds a batch's records and their offsets,
``commit_record``/``commit`` come after its commit, an abort keeps both from ever counting,
and a failure or a producer that cannot be initialised fails the task."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import KafkaError

from sluice.api.records import SourceRecord
from sluice.api.source import SourceTask
from sluice.taskhost.protocol import (
    Failed,
    Pause,
    PausedAck,
    Resume,
    RunSourceTask,
    SourceOffsets,
    Started,
    Transactions,
)
from sluice.taskhost.transactional import TransactionalSourceLoop
from tests.unit.taskhost.fakes import (
    FakeClients,
    FakeKafkaError,
    FakeTransactionalProducer,
    WorkerEnd,
    task_spec,
    wait_for,
)
from tests.unit.taskhost.test_source_loop import (
    RecordingSourceTask,
    SourceScript,
    positions,
    record,
    registered_script,
    stop,
)

OFFSETS_TOPIC = "connect-offsets"


@pytest.fixture
def script() -> Iterator[SourceScript]:
    with registered_script() as made:
        yield made


class BoundarySourceTask(RecordingSourceTask):
    """Ends its transactions where records whose value is ``commit`` or ``abort`` say."""

    def poll(self) -> list[SourceRecord] | None:
        polled = super().poll()
        context = self.context.transaction_context()
        assert context is not None
        for polled_record in polled or []:
            if polled_record.value == "commit":
                context.commit_transaction(polled_record)
            elif polled_record.value == "abort":
                context.abort_transaction(polled_record)
        return polled


def start(
    worker: WorkerEnd,
    script: SourceScript,
    boundary: str = "poll",
    task_class: type[SourceTask] = RecordingSourceTask,
    clients: FakeClients | None = None,
    expect_started: bool = True,
) -> FakeTransactionalProducer:
    spec = task_spec(task_class, {"script": script.key})
    worker.launch(
        RunSourceTask(
            spec,
            producer_config={"bootstrap.servers": "fake:9092", "delivery.timeout.ms": str(2**31 - 1)},
            offset_flush_interval_ms=3_600_000,
            transactions=Transactions("group-c-0", boundary, 3_600_000, OFFSETS_TOPIC),
        )
    )
    launch = worker.launched()
    assert isinstance(launch, RunSourceTask)
    loop = TransactionalSourceLoop(launch, worker.control, clients or FakeClients())
    worker.start(loop)
    if expect_started:
        worker.next(Started)
    producer = loop.producer
    assert isinstance(producer, FakeTransactionalProducer)
    return producer


def stored(producer: FakeTransactionalProducer) -> list[tuple[Any, Any]]:
    """The offsets records the task wrote, decoded."""
    return [
        (json.loads(p.key or b"null"), json.loads(p.value) if p.value is not None else None)
        for p in producer.to(OFFSETS_TOPIC)
    ]


def test_each_poll_is_a_transaction_with_its_offsets_and_commits_follow_it(
    worker: WorkerEnd, script: SourceScript
) -> None:
    producer = start(worker, script)
    assert producer.transactions == ["init"]
    settings = producer.settings
    assert settings["transactional.id"] == "group-c-0" and settings["enable.idempotence"] is True
    assert int(settings["delivery.timeout.ms"]) <= 60_000  # librdkafka's rule for transactions

    script.queue(record("a", 1), record("a", 2), record("b", 7))
    first = worker.next(SourceOffsets)
    assert first.written and positions(first) == {"a": 2, "b": 7}
    assert producer.transactions == ["init", "begin", "commit"]
    assert stored(producer) == [(["c", {"file": "a"}], {"position": 2}), (["c", {"file": "b"}], {"position": 7})]
    worker.commit(first)
    wait_for(lambda: script.count("commit") == 1, "commit() after the transaction")
    assert script.count("commit_record") == 3

    script.queue(record("a", 3))
    second = worker.next(SourceOffsets)
    assert positions(second) == {"a": 3} and producer.transactions[-2:] == ["begin", "commit"]
    assert not [m for m in stop(worker) if isinstance(m, Failed)]


def test_an_aborted_transaction_commits_nothing_and_calls_no_commit_record(
    worker: WorkerEnd, script: SourceScript
) -> None:
    producer = start(worker, script, "connector", BoundarySourceTask)
    script.queue(record("a", 1, "x"), record("a", 2, "abort"), record("a", 3, "x"), record("a", 4, "commit"))
    committed = worker.next(SourceOffsets)
    assert positions(committed) == {"a": 4}
    assert producer.transactions == ["init", "begin", "abort", "begin", "commit"]
    assert stored(producer) == [(["c", {"file": "a"}], {"position": 4})]
    worker.commit(committed)
    wait_for(lambda: script.count("commit") == 1, "commit() after the committed transaction")
    assert [r.source_offset["position"] for r, _ in script.of("commit_record")] == [3, 4]
    assert not [m for m in stop(worker) if isinstance(m, Failed)]


def test_a_pause_commits_the_open_transaction(worker: WorkerEnd, script: SourceScript) -> None:
    producer = start(worker, script, "connector", BoundarySourceTask)
    script.queue(record("a", 1, "x"))
    wait_for(lambda: len(producer.produced) == 1, "the record produced")
    assert producer.transactions == ["init", "begin"]
    worker.auto_commit()
    worker.send(Pause())
    worker.next(PausedAck)
    assert producer.transactions == ["init", "begin", "commit"]
    worker.send(Resume())
    assert not [m for m in stop(worker) if isinstance(m, Failed)]


def test_a_failing_poll_aborts_the_open_transaction_and_fails_the_task(worker: WorkerEnd, script: SourceScript) -> None:
    producer = start(worker, script, "connector", BoundarySourceTask)
    script.queue(record("a", 1, "x"))
    wait_for(lambda: len(producer.produced) == 1, "the record produced")
    script.queue_error(RuntimeError("the source broke"))
    failed = worker.next(Failed)
    assert "the source broke" in failed.trace
    assert producer.transactions == ["init", "begin", "abort"]
    assert stored(producer) == [] and script.count("commit_record") == 0


def test_a_producer_that_cannot_fence_fails_the_task_naming_its_transactional_id(
    worker: WorkerEnd, script: SourceScript, monkeypatch: pytest.MonkeyPatch
) -> None:
    refused = FakeKafkaError("Transactional Id authorization failed", KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    clients = FakeClients()
    original = clients.producer

    def refusing(settings: dict[str, Any]) -> Any:
        made = original(settings)
        made.fail_next = refused
        return made

    monkeypatch.setattr(clients, "producer", refusing)
    start(worker, script, clients=clients, expect_started=False)
    failed = worker.next(Failed)
    assert "transactional.id 'group-c-0'" in failed.trace and "authorization failed" in failed.trace
    assert script.count("start") == 0  # fenced first, as Kafka does, before the task starts


def test_a_commit_that_fails_as_the_task_stops_is_not_a_failure(worker: WorkerEnd, script: SourceScript) -> None:
    """A newer instance fenced the stopping one: its last transaction is lost, not delivered
    twice, and the task is not reported FAILED over its successor's status."""
    producer = start(worker, script, "connector", BoundarySourceTask)
    script.queue(record("a", 1, "x"))
    wait_for(lambda: len(producer.produced) == 1, "the record produced")
    producer.fail_next = FakeKafkaError("This instance has been fenced by a newer instance", KafkaError._FENCED)
    sent = stop(worker)
    assert not [m for m in sent if isinstance(m, Failed)]
    assert not [m for m in sent if isinstance(m, SourceOffsets)]
    assert script.count("stop") == 1 and script.count("commit_record") == 0


def test_a_task_writing_to_its_own_offsets_topic_fails_before_writing_there(
    worker: WorkerEnd, script: SourceScript
) -> None:
    producer = start(worker, script)
    script.queue(record("a", 1))
    worker.commit(worker.next(SourceOffsets))
    script.queue(
        SourceRecord({"file": "a"}, {"position": 2}, "t", value="v"),
        SourceRecord({"file": "a"}, {"position": 3}, OFFSETS_TOPIC, value="v"),
    )
    failed = worker.next(Failed)
    assert f"'{OFFSETS_TOPIC}', its own offsets topic" in failed.trace
    assert [p.topic for p in producer.produced] == ["t", OFFSETS_TOPIC]  # the first batch and its offsets
    assert producer.transactions[-1] == "abort" and stored(producer) == [(["c", {"file": "a"}], {"position": 1})]
