"""``org.apache.kafka.connect.tools.VerifiableSourceConnector`` and its task.

Each task emits increasing sequence numbers, keyed by its task id, at a configured
rate, and reports what it sent and what was committed, so that a test can check
end to end — across restarts, rebalances and crashes — that nothing was lost or
duplicated. See ``docs/testing-connectors.md``.

Records: key ``id`` (INT32, the task id); value ``seqno`` (INT64), or with
``complete.record.data=true`` a struct ``{name, task, topic, time_ms, seqno}``.
Source partition ``{"id": <task id>}``, source offset ``{"seqno": <seqno>}`` — the
same as Kafka's, so the offsets of one can be read by the other.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from sluice.api.config import ConfigDef, ConfigType, Importance, NonEmptyString
from sluice.api.connector import Task
from sluice.api.data import Schema, SchemaBuilder, Struct
from sluice.api.errors import ConnectError
from sluice.api.records import RecordMetadata, SourceRecord
from sluice.api.source import ExactlyOnceSupport, SourceConnector, SourceTask
from sluice.connectors.testing.report import (
    REPORT_FILE_CONFIG,
    REPORT_FILE_DOC,
    ReportWriter,
    plugin_version,
)

__all__ = ["VerifiableSourceConnector", "VerifiableSourceTask"]

log = logging.getLogger(__name__)

NAME_CONFIG = "name"
ID_CONFIG = "id"
TOPIC_CONFIG = "topic"
THROUGHPUT_CONFIG = "throughput"
COMPLETE_RECORD_DATA_CONFIG = "complete.record.data"

ID_FIELD = "id"
SEQNO_FIELD = "seqno"

MAX_RECORDS_PER_POLL = 1000
"""Most records one ``poll()`` returns (an unthrottled task returns this many each time)."""
MAX_POLL_WAIT_S = 1.0
"""Longest a ``poll()`` waits for the next record to be due before returning nothing."""

CONFIG_DEF = (
    ConfigDef()
    .define(
        TOPIC_CONFIG,
        ConfigType.STRING,
        validator=NonEmptyString(),
        importance=Importance.HIGH,
        documentation="The topic to produce the sequence numbers to",
    )
    .define(
        THROUGHPUT_CONFIG,
        ConfigType.LONG,
        importance=Importance.HIGH,
        documentation="Records per second that each task produces; a negative value for as fast as "
        "possible, 0 for a single record",
    )
    .define(
        COMPLETE_RECORD_DATA_CONFIG,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.LOW,
        documentation="Make each value a struct {name, task, topic, time_ms, seqno} instead of the bare seqno",
    )
    .define(REPORT_FILE_CONFIG, ConfigType.STRING, None, importance=Importance.MEDIUM, documentation=REPORT_FILE_DOC)
)

COMPLETE_VALUE_SCHEMA = (
    SchemaBuilder.struct()
    .field("name", Schema.STRING_SCHEMA)
    .field("task", Schema.INT32_SCHEMA)
    .field("topic", Schema.STRING_SCHEMA)
    .field("time_ms", Schema.INT64_SCHEMA)
    .field("seqno", Schema.INT64_SCHEMA)
    .build()
)


class VerifiableSourceConnector(SourceConnector):
    """Runs ``tasks.max`` tasks; task ``i`` gets the connector's config plus ``id=i``."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return plugin_version()

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def task_class(self) -> type[Task]:
        return VerifiableSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self._props, ID_CONFIG: str(i)} for i in range(max_tasks)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport | None:
        """Supported: each task's seqnos resume after its committed offset, so records and
        offsets in one transaction repeat nothing. (Kafka's Java VerifiableSource does not
        say, so ``exactly.once.support=required`` refuses it there.)"""
        return ExactlyOnceSupport.SUPPORTED

    def alter_offsets(self, connector_config: dict[str, str], offsets: Any) -> bool:
        return True  # every offset lives in the framework


class VerifiableSourceTask(SourceTask):
    """Emits sequence numbers ``0, 1, 2, …`` (or from just after the committed one) and
    reports them. Runs in a Spark executor's Python worker.

    **Rate.** Record ``k`` of an instance (counted from its start) is due ``k /
    throughput`` seconds after :meth:`start`, as Kafka's ``ThroughputThrottler`` paces
    it; each :meth:`poll` returns every record due (at most
    :data:`MAX_RECORDS_PER_POLL`), or waits — up to :data:`MAX_POLL_WAIT_S`, woken by
    :meth:`stop` — for the next one. ``throughput < 0``: :data:`MAX_RECORDS_PER_POLL`
    records per poll, unpaced; ``0``: one record, then nothing (as in Kafka).

    **Resume.** :meth:`start` reads the committed offset of partition ``{"id": id}``
    and continues at the seqno after it.

    **Report** (``report.file``, JSON lines, Kafka's field names):

    * *sent* — ``{"name", "task", "topic", "time_ms", "seqno"}`` for each record, written
      in :meth:`poll` just before the records are returned to the framework. A sent
      record may never reach Kafka (the instance was lost before Kafka acknowledged
      it); it is then sent again by the next instance.
    * *committed* — the same fields plus ``"committed": true``, written from
      :meth:`commit_record`, which the framework calls on the task thread once Kafka
      acknowledged the record — as Kafka's tool prints them from ``commitRecord``. So a
      seqno reported committed is in Kafka; its offset is stored within about a second
      after (``offset.flush.interval.ms``, capped at 1 s). An instance lost before its
      offsets were stored is followed by one that sends (and reports) those seqnos
      again: at least once delivery, never a gap.
    """

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, wait: Callable[[float], object] | None = None
    ) -> None:
        # ``clock`` and ``wait`` are for tests: a fake clock and a wait that advances it.
        self._clock = clock
        self._stopping = threading.Event()
        self._wait = wait if wait is not None else self._stopping.wait
        self._name: str | None = None
        self._id = 0
        self._topic = ""
        self._throughput = -1
        self._complete = False
        self._partition: dict[str, int] = {}
        self._seqno = 0
        self._starting_seqno = 0
        self._start_time = 0.0
        self._report = ReportWriter(None)

    def version(self) -> str:
        return plugin_version()

    def start(self, props: dict[str, str]) -> None:
        try:
            self._name = props.get(NAME_CONFIG)
            self._id = int(props[ID_CONFIG])
            self._topic = props[TOPIC_CONFIG]
            self._throughput = int(str(props[THROUGHPUT_CONFIG]).strip())
        except (KeyError, ValueError) as e:
            raise ConnectError("Invalid VerifiableSourceTask configuration") from e
        self._complete = str(props.get(COMPLETE_RECORD_DATA_CONFIG, "false")).strip().lower() == "true"
        self._report = ReportWriter(props.get(REPORT_FILE_CONFIG)).open()
        self._partition = {ID_FIELD: self._id}
        committed = _committed_seqno(self.context.offset_storage_reader().offset(self._partition))
        self._seqno = 0 if committed is None else committed + 1
        self._starting_seqno = self._seqno
        self._start_time = self._clock()
        self._stopping.clear()
        log.info(
            "Started VerifiableSourceTask %s-%s producing to topic %s resuming from seqno %s",
            self._name,
            self._id,
            self._topic,
            self._starting_seqno,
        )

    # -- polling (the task thread) -----------------------------------------------------

    def poll(self) -> list[SourceRecord] | None:
        """Called repeatedly on the task thread in the executor; returns the records due
        now, or ``None`` after waiting (at most a second) for the next one."""
        if self._stopping.is_set():
            return None
        count = self._due()
        if count <= 0:
            delay = self._next_due_in()
            self._wait(MAX_POLL_WAIT_S if delay is None else max(0.0, min(delay, MAX_POLL_WAIT_S)))
            if self._stopping.is_set():
                return None
            count = self._due()
            if count <= 0:
                return None
        return self._emit(count)

    def _due(self) -> int:
        """How many records may be returned now."""
        if self._throughput < 0:
            return MAX_RECORDS_PER_POLL
        sent = self._seqno - self._starting_seqno
        elapsed = max(0.0, self._clock() - self._start_time)
        total = math.floor(elapsed * self._throughput + 1e-9) + 1  # record 0 is due at once
        return min(total - sent, MAX_RECORDS_PER_POLL)

    def _next_due_in(self) -> float | None:
        """Seconds until the next record is due, ``None`` for never."""
        if self._throughput == 0:
            return None
        sent = self._seqno - self._starting_seqno
        return self._start_time + sent / self._throughput - self._clock()

    def _emit(self, count: int) -> list[SourceRecord]:
        now_ms = int(time.time() * 1000)
        first = self._seqno
        seqnos = range(first, first + count)
        name, task, topic, partition = self._name, self._id, self._topic, self._partition
        self._report.write(
            {"name": name, "task": task, "topic": topic, "time_ms": now_ms, "seqno": seqno} for seqno in seqnos
        )
        if self._complete:
            values: list[Any] = [
                Struct(COMPLETE_VALUE_SCHEMA)
                .put("name", name or "")
                .put("task", task)
                .put("topic", topic)
                .put("time_ms", now_ms)
                .put("seqno", seqno)
                for seqno in seqnos
            ]
            value_schema = COMPLETE_VALUE_SCHEMA
        else:
            values, value_schema = list(seqnos), Schema.INT64_SCHEMA
        records = [
            SourceRecord(partition, {SEQNO_FIELD: seqno}, topic, None, Schema.INT32_SCHEMA, task, value_schema, value)
            for seqno, value in zip(seqnos, values, strict=True)
        ]
        self._seqno = first + count
        return records

    # -- commits (the task thread) -------------------------------------------------------

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        """Called by the framework on the task thread once Kafka acknowledged ``record``:
        reports its seqno committed (Kafka's ``commitRecord``)."""
        offset = record.source_offset or {}
        seqno = offset.get(SEQNO_FIELD)
        if isinstance(seqno, int):
            self._report_committed(seqno, seqno)

    def _report_committed(self, first: int, last: int) -> None:
        now_ms = int(time.time() * 1000)
        name, task, topic = self._name, self._id, self._topic
        self._report.write(
            {"name": name, "task": task, "topic": topic, "time_ms": now_ms, "seqno": seqno, "committed": True}
            for seqno in range(first, last + 1)
        )

    def stop(self) -> None:
        """Called in the executor, on the task thread once the last :meth:`poll`
        returned (from any thread, it also wakes a waiting :meth:`poll`)."""
        self._stopping.set()
        self._report.close()


def _committed_seqno(offset: dict[str, Any] | None) -> int | None:
    if offset is None or offset.get(SEQNO_FIELD) is None:
        return None
    value = offset[SEQNO_FIELD]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConnectError(f"Offset {offset!r} of VerifiableSourceTask holds no integer {SEQNO_FIELD}")
    return value
