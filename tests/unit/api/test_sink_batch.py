"""SinkBatch and SinkTask.put_batch: a batch's columns and its records describe the same
records, and a task that only has put() gets them as records."""

from __future__ import annotations

import pytest

from sluice.api.data import Schema
from sluice.api.records import Headers, SinkBatch, SinkRecord, TimestampType, TopicPartition
from sluice.api.sink import SinkTask


def _records() -> list[SinkRecord]:
    headers = Headers().add_string("h", "v")
    return [
        SinkRecord("t", 0, None, None, Schema.STRING_SCHEMA, "a", 5, 1_000, TimestampType.CREATE_TIME),
        SinkRecord("t", 1, Schema.STRING_SCHEMA, "k", None, None, 9, None, TimestampType.NO_TIMESTAMP_TYPE, headers),
        SinkRecord("routed", 0, None, None, None, {"x": 1}, 7, 3, TimestampType.LOG_APPEND_TIME, None, "t", 2, 70),
    ]


def test_a_batch_of_records_has_their_columns_and_gives_back_the_same_records() -> None:
    records = _records()
    batch = SinkBatch.of(records)
    assert len(batch) == 3
    assert batch.topics == ["t", "t", "routed"]
    assert batch.partitions == [0, 1, 0]
    assert batch.offsets == [5, 9, 7]
    assert batch.keys == [None, "k", None] and batch.key_schemas == [None, Schema.STRING_SCHEMA, None]
    assert batch.values == ["a", None, {"x": 1}]
    assert batch.timestamps == [1_000, None, 3]
    assert batch.headers == [None, records[1].headers, None]
    assert (batch.original_topics, batch.original_partitions, batch.original_offsets) == (
        ["t", "t", "t"],
        [0, 1, 2],
        [5, 9, 70],
    )
    assert batch.records() is records


def test_records_made_from_columns_equal_the_records_the_columns_came_from() -> None:
    records = _records()
    columns = SinkBatch.of(records)
    batch = SinkBatch(
        columns.topics,
        columns.partitions,
        columns.key_schemas,
        columns.keys,
        columns.value_schemas,
        columns.values,
        columns.offsets,
        columns.timestamps,
        columns.timestamp_types,
        columns.headers,
        columns.original_topics,
        columns.original_partitions,
        columns.original_offsets,
    )
    made = batch.records()
    assert made == records
    assert batch.records() is made  # made once


def test_columns_of_different_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="one entry per record"):
        SinkBatch(["t"], [0], [None], [None], [None], ["v"], [0, 1], [None], ["CreateTime"], [None])


def test_the_default_put_batch_calls_put_with_the_batch_records() -> None:
    class PutOnly(SinkTask):
        def __init__(self) -> None:
            self.puts: list[list[SinkRecord]] = []

        def version(self) -> str:
            return "1"

        def start(self, props: dict[str, str]) -> None:
            pass

        def put(self, records: list[SinkRecord]) -> None:
            self.puts.append(records)

        def stop(self) -> None:
            pass

        def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
            pass

    task = PutOnly()
    batch = SinkBatch.of(_records())
    task.put_batch(batch)
    task.put_batch(SinkBatch.of([]))
    assert task.puts == [batch.records(), []]


def test_with_columns_replaces_some_and_keeps_where_records_were_consumed() -> None:
    batch = SinkBatch.of(_records())
    routed = batch.with_columns(topics=["x", "y", "z"])
    assert routed.topics == ["x", "y", "z"] and routed.values == batch.values
    assert routed.original_topics == ["t", "t", "t"]
    assert [r.topic for r in routed.records()] == ["x", "y", "z"]
    assert [r.original_topic for r in routed.records()] == ["t", "t", "t"]
    assert batch.topics == ["t", "t", "routed"]  # the batch itself is left alone
    with pytest.raises(TypeError, match="unexpected columns: colour"):
        batch.with_columns(colour=["red"] * 3)
    with pytest.raises(ValueError, match="one entry per record"):
        batch.with_columns(topics=["x"])


def test_take_keeps_the_records_at_the_positions_given() -> None:
    records = _records()
    batch = SinkBatch.of(records)
    assert batch.take([2, 0]).records() == [records[2], records[0]]
    assert len(batch.take([])) == 0
