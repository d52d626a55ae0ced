"""A source connector that counts: each stream is a counter whose values go to Kafka.

Each stream is a source partition, ``{"stream": <name>}``. After value ``n`` of a stream
its offset is ``{"next": n + 1}``, so a new task instance goes on with the next value.
"""

from __future__ import annotations

import threading
import time

from sluice.api import (
    ConfigDef,
    ConfigType,
    Importance,
    NonEmptyString,
    Range,
    Schema,
    SourceConnector,
    SourceRecord,
    SourceTask,
    ValidList,
)
from sluice_example_counter import __version__

TOPIC_CONFIG = "topic"
STREAMS_CONFIG = "streams"
LIMIT_CONFIG = "limit"
INTERVAL_CONFIG = "interval.ms"

CONFIG_DEF = (
    ConfigDef()
    .define(
        TOPIC_CONFIG,
        ConfigType.STRING,
        validator=NonEmptyString(),
        importance=Importance.HIGH,
        documentation="The topic to write the counts to.",
    )
    .define(
        STREAMS_CONFIG,
        ConfigType.LIST,
        "counter",
        ValidList.any_non_duplicate_values(is_empty_allowed=False, is_null_allowed=False),
        Importance.HIGH,
        "Names of the counters; each is a source partition with an offset of its own.",
    )
    .define(
        LIMIT_CONFIG,
        ConfigType.LONG,
        -1,
        Range.at_least(-1),
        Importance.MEDIUM,
        "How many values each stream counts before it stops (-1: no limit).",
    )
    .define(
        INTERVAL_CONFIG,
        ConfigType.LONG,
        1000,
        Range.at_least(0),
        Importance.LOW,
        "Milliseconds between two values of a stream.",
    )
)


class CounterSourceConnector(SourceConnector):
    """Runs in the worker process: checks the config and shares the streams out to tasks."""

    def __init__(self) -> None:
        # The worker also makes throwaway instances (for version(), config(), validate()):
        # keep the constructor cheap.
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return __version__

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def start(self, props: dict[str, str]) -> None:
        CONFIG_DEF.parse(props)  # a bad value fails the connector now, not its tasks later
        self._props = dict(props)

    def task_class(self) -> type[SourceTask]:
        return CounterSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        streams = CONFIG_DEF.parse(self._props)[STREAMS_CONFIG]
        count = min(max_tasks, len(streams))
        # Task i counts streams i, i + count, i + 2 * count, ...
        return [{**self._props, STREAMS_CONFIG: ",".join(streams[i::count])} for i in range(count)]

    def stop(self) -> None:
        pass  # start() opened nothing


class CounterSourceTask(SourceTask):
    """Runs in a Spark executor. Every call comes from the task's thread, one at a time:
    stop() only once the last poll() has returned."""

    def __init__(self) -> None:
        self._stopping = threading.Event()
        self._next: dict[str, int] = {}

    def start(self, props: dict[str, str]) -> None:
        config = CONFIG_DEF.parse(props)
        self._topic: str = config[TOPIC_CONFIG]
        self._limit: int = config[LIMIT_CONFIG]
        self._interval_s = config[INTERVAL_CONFIG] / 1000
        # Go on after the committed offsets (those stored when the task was launched).
        reader = self.context.offset_storage_reader()
        for stream in config[STREAMS_CONFIG]:
            offset = reader.offset({"stream": stream})
            self._next[stream] = offset["next"] if offset else 0
        self._due = time.monotonic()

    def poll(self) -> list[SourceRecord] | None:
        wait = self._due - time.monotonic()
        if self._stopping.is_set() or wait > 0:
            # poll() is called again at once: wait here, a second at most, so that an idle
            # task does not spin and a pause or a stop never waits long for this poll().
            self._stopping.wait(min(wait, 1.0))
            return None
        counting = [stream for stream, n in self._next.items() if self._limit < 0 or n < self._limit]
        records = [self._count(stream) for stream in counting]
        # Every stream at its limit: look again in a second.
        self._due = time.monotonic() + (self._interval_s if records else 1.0)
        return records

    def _count(self, stream: str) -> SourceRecord:
        n = self._next[stream]
        self._next[stream] = n + 1
        return SourceRecord(
            {"stream": stream},
            {"next": n + 1},
            self._topic,
            key_schema=Schema.STRING_SCHEMA,
            key=stream,
            value_schema=Schema.INT64_SCHEMA,
            value=n,
        )

    def stop(self) -> None:
        self._stopping.set()  # nothing to release; a poll() called after this returns at once
