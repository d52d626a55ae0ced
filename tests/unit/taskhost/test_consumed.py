"""A sink task's read as columns (ConsumedBatch) and the last offsets per partition."""

from __future__ import annotations

from sluice.taskhost.consumed import COLUMNS, ConsumedBatch, last_offsets
from tests.unit.taskhost.fakes import FakeMessage


def _messages() -> list[FakeMessage]:
    return [
        FakeMessage("a", 0, 10, b"k", b"v0", 1_000),
        FakeMessage("b", 3, 4, None, None, None, [("h", b"1"), ("n", None)]),
        FakeMessage("a", 0, 11, None, b"v1", 1_001),
    ]


def test_columns_hold_each_message_in_order() -> None:
    batch = ConsumedBatch(_messages())
    assert batch.rows == 3
    assert list(batch) == list(COLUMNS)
    assert dict(batch) == {
        "key": [b"k", None, None],
        "value": [b"v0", None, b"v1"],
        "topic": ["a", "b", "a"],
        "partition": [0, 3, 0],
        "offset": [10, 4, 11],
        "ts_ms": [1_000, None, 1_001],
        "ts_type": [0, -1, 0],
        "headers_json": [None, [("h", b"1"), ("n", None)], None],
    }
    assert not batch.all_keys_null()
    assert batch["value"] is batch["value"]  # made once


def test_a_known_single_topic_fills_the_topic_column() -> None:
    messages = [m for m in _messages() if m.topic_name == "a"]
    batch = ConsumedBatch(messages, "a")
    assert batch["topic"] == ["a", "a"]


def test_last_offsets_per_partition_of_the_task() -> None:
    messages = _messages() + [FakeMessage("gone", 0, 99)]  # a partition the task no longer has
    assert last_offsets(messages, {("a", 0): 0, ("b", 3): 0, ("c", 1): 0}) == {("a", 0): 11, ("b", 3): 4}
    assert last_offsets(messages, {("a", 0): 0}) == {("a", 0): 11}
    assert last_offsets([], {("a", 0): 0}) == {}
