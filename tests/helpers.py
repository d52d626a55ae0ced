"""Helpers shared by the test suite (``from tests.helpers import wait_until``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from sluice.api.data import Struct
from sluice.api.records import SinkBatch, SinkRecord
from sluice.api.sink import ErrantRecordReporter, SinkTask, SinkTaskContext

__all__ = ["typed_form", "wait_until", "watermark_offsets"]

T = TypeVar("T")


def wait_until(
    predicate: Callable[[], T],
    timeout: float = 30.0,
    message: str | Callable[[], str] = "condition not met",
    *,
    interval: float = 0.02,
    max_interval: float = 0.25,
    ignore: tuple[type[BaseException], ...] = (),
) -> T:
    """Poll ``predicate`` until it returns something truthy, and return that value.

    Polls with a short, growing interval up to a deadline, so a test waits exactly as long
    as the condition needs and no longer (never synchronise with fixed sleeps). Exceptions
    of the types in ``ignore`` count as "not yet"; others propagate. On timeout raises
    ``AssertionError`` with ``message`` (a string, or a callable for a message built at
    failure time), the last value and the last ignored exception.
    """
    deadline = time.monotonic() + timeout
    last: object = None
    last_error: BaseException | None = None
    while True:
        try:
            last = predicate()
        except ignore as exc:
            last_error = exc
        else:
            if last:
                return last  # type: ignore[return-value]
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            text = message() if callable(message) else message
            detail = f"; last error: {last_error!r}" if last_error is not None else ""
            raise AssertionError(f"{text} (waited {timeout}s; last value: {last!r}{detail})")
        time.sleep(min(interval, remaining))
        interval = min(interval * 1.5, max_interval)


# What a broker answers about a partition whose leader is still being elected (a topic
# created a moment ago): "not yet", not a failure.
_LEADER_PENDING = frozenset(
    {KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE, KafkaError.UNKNOWN_TOPIC_OR_PART}
)


def watermark_offsets(consumer: Consumer, topic: str, partition: int, timeout: float = 60.0) -> tuple[int, int]:
    """The low and high watermark of ``topic``'s ``partition``, waiting out a leader election.

    A topic another process has just created can be in the metadata before its partitions'
    leaders are, and the broker then refuses the offset request; other errors propagate.
    """

    def ask() -> tuple[int, int] | None:
        try:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=min(timeout, 30))
        except KafkaException as exc:
            if exc.args[0].code() in _LEADER_PENDING:
                return None
            raise
        return low, high

    return wait_until(ask, timeout=timeout, message=f"a leader for {topic}-{partition}")


class RecordingSinkContext(SinkTaskContext):
    """A sink task context for driving a task directly: records the timeouts the task asks
    for and hands out ``reporter`` as its errant record reporter."""

    def __init__(self, reporter: ErrantRecordReporter | None = None) -> None:
        self.reporter = reporter
        self.timeouts: list[int] = []

    def configs(self):
        return {}

    def offset(self, offsets, offset=None):
        pass

    def timeout(self, timeout_ms):
        self.timeouts.append(timeout_ms)

    def assignment(self):
        return set()

    def pause(self, *partitions):
        pass

    def resume(self, *partitions):
        pass

    def request_commit(self):
        pass

    def errant_record_reporter(self):
        return self.reporter


class RecordingReporter(ErrantRecordReporter):
    """An errant record reporter that keeps what it is given, tolerating everything."""

    def __init__(self) -> None:
        self.reported: list[tuple[SinkRecord, BaseException]] = []

    def report(self, record: SinkRecord, error: BaseException) -> None:
        self.reported.append((record, error))


def put_in_chunks(task: SinkTask, records: list[SinkRecord], size: int, *, as_batches: bool) -> None:
    """Hand ``records`` to a sink task ``size`` at a time: to ``put``, or to ``put_batch`` as
    batches of columns only (the records the task asks for are then made from them)."""
    for start in range(0, len(records), size):
        chunk = records[start : start + size]
        if as_batches:
            task.put_batch(SinkBatch.of(chunk).take(list(range(len(chunk)))))
        else:
            task.put(chunk)


def read_topic(bootstrap: str, topic: str, count: int, *, exact: bool = True, timeout: float = 90.0) -> list[Any]:
    """The first ``count`` records of partition 0 of ``topic`` (confluent-kafka messages),
    waiting for them; with ``exact``, a short extra read must find no more."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{topic}", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    messages: list[Any] = []
    try:

        def more() -> bool:
            messages.extend(m for m in consumer.consume(count, 0.5) if m.error() is None)
            return len(messages) >= count

        wait_until(
            more,
            timeout=timeout,
            message=lambda: (
                f"{count} records on {topic}, got {len(messages)} "
                f"(watermarks {consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)})"
            ),
        )
        if exact:
            extra = consumer.poll(1.0)
            assert extra is None or extra.error() is not None, f"unexpected extra record {extra.value()!r}"
    finally:
        consumer.close()
    return messages


def typed_form(value: Any) -> Any:
    """A Connect value with the Python type of every part spelled out, for comparing two
    values exactly: ``1``, ``1.0`` and ``True`` are equal in Python, and so are the
    Structs holding them; ``-0.0`` and ``0.0`` too; NaN is not equal to itself."""
    if isinstance(value, Struct):
        return ("Struct", value.schema, [typed_form(value.get(f)) for f in value.schema.fields()])
    if isinstance(value, list):
        return [typed_form(v) for v in value]
    if isinstance(value, dict):
        return {k: typed_form(v) for k, v in value.items()}
    return (type(value).__name__, repr(value))
