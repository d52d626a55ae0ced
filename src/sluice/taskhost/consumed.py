"""A sink task's read from Kafka as columns, each made from librdkafka's messages on first
use: a sink that writes values only never pays for its records' timestamps or headers.

A column is one Python list over the messages (a comprehension per attribute), not a loop
that calls eight methods per message and appends to eight lists: that loop cost a sink
task a quarter of its time at a million records a second.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["COLUMNS", "ConsumedBatch", "LazyColumns", "last_offsets"]

#: The columns of a read, as the record pipeline and the dead letter queue name them.
COLUMNS = ("key", "value", "topic", "partition", "offset", "ts_ms", "ts_type", "headers_json")
# librdkafka's timestamp types → the sink rows' (Spark's): create time 0, log append time 1.
_TIMESTAMP_TYPES = {1: 0, 2: 1}


class LazyColumns(Mapping[str, list[Any]]):
    """Named columns, each made by :meth:`_column` on first use and kept."""

    NAMES: tuple[str, ...] = ()

    def __init__(self, made: dict[str, list[Any]] | None = None) -> None:
        self._made: dict[str, list[Any]] = {} if made is None else made

    def __getitem__(self, name: str) -> list[Any]:
        column = self._made.get(name)
        if column is None:
            column = self._made[name] = self._column(name)
        return column

    def _column(self, name: str) -> list[Any]:
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.NAMES)

    def __len__(self) -> int:
        return len(self.NAMES)


class ConsumedBatch(LazyColumns):
    """The messages of one ``consume`` call (errors left out), read as :data:`COLUMNS`:
    ``batch["value"]`` is every message's value, in order. ``headers_json`` holds the
    headers as librdkafka gives them (``None`` for none); ``ts_ms`` is ``None`` where a
    message has no timestamp; ``ts_type`` is 0 for create time, 1 for log append time,
    -1 for none."""

    NAMES = COLUMNS

    def __init__(self, messages: list[Any], topic: str | None = None) -> None:
        """``topic``: the one topic every message comes from, when the caller knows it
        (the task reads a single topic) — its column is then made without a call per message."""
        super().__init__()
        self.messages = messages
        self.rows = len(messages)
        self._topic = topic

    def _column(self, name: str) -> list[Any]:
        messages = self.messages
        if name == "value":
            return [m.value() for m in messages]
        if name == "key":
            return [m.key() for m in messages]
        if name == "topic":
            if self._topic is not None:
                return [self._topic] * self.rows
            return [m.topic() for m in messages]
        if name == "partition":
            return [m.partition() for m in messages]
        if name == "offset":
            return [m.offset() for m in messages]
        if name == "headers_json":
            return [m.headers() for m in messages]
        if name in ("ts_ms", "ts_type"):
            stamps = [m.timestamp() for m in messages]
            self._made["ts_type"] = [_TIMESTAMP_TYPES.get(kind, -1) for kind, _ in stamps]
            self._made["ts_ms"] = [stamp if kind else None for kind, stamp in stamps]
            return self._made[name]
        raise KeyError(name)

    def all_keys_null(self) -> bool:
        """Whether no message has a key (a sink topic's usual case)."""
        return self["key"].count(None) == self.rows


def last_offsets(messages: list[Any], partitions: Mapping[tuple[str, int], Any]) -> dict[tuple[str, int], int]:
    """The offset of the last message of each of ``partitions`` among ``messages`` (those
    without a message left out). Messages are in offset order per partition, so the scan
    runs from the end and stops once every partition was seen: a few messages for a task
    whose partitions all had records, never more than one look at each."""
    last: dict[tuple[str, int], int] = {}
    wanted = len(partitions)
    for message in reversed(messages):
        tp = (message.topic(), message.partition())
        if tp not in last and tp in partitions:
            last[tp] = message.offset()
            if len(last) == wanted:
                break
    return last
