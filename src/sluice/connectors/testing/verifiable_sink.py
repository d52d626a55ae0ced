"""``org.apache.kafka.connect.tools.VerifiableSinkConnector`` and its task: the
counterpart of the verifiable source, reporting each record it receives and each
record it flushes. See ``docs/testing-connectors.md``."""

from __future__ import annotations

import time
from typing import Any

from sluice.api.config import ConfigDef, ConfigType, Importance
from sluice.api.connector import Task
from sluice.api.data import Struct
from sluice.api.errors import ConnectError
from sluice.api.records import SinkRecord, TopicPartition
from sluice.api.sink import SinkConnector, SinkTask
from sluice.connectors.testing.report import REPORT_FILE_CONFIG, REPORT_FILE_DOC, ReportWriter, plugin_version

__all__ = ["VerifiableSinkConnector", "VerifiableSinkTask"]

NAME_CONFIG = "name"
ID_CONFIG = "id"

CONFIG_DEF = ConfigDef().define(
    REPORT_FILE_CONFIG, ConfigType.STRING, None, importance=Importance.MEDIUM, documentation=REPORT_FILE_DOC
)


class VerifiableSinkConnector(SinkConnector):
    """Runs ``tasks.max`` tasks; task ``i`` gets the connector's config plus ``id=i``."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return plugin_version()

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def task_class(self) -> type[Task]:
        return VerifiableSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self._props, ID_CONFIG: str(i)} for i in range(max_tasks)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def alter_offsets(self, connector_config: dict[str, str], offsets: Any) -> bool:
        return True  # the consumer group's offsets are all there is


class VerifiableSinkTask(SinkTask):
    """Reports every record it is given and every record it flushed. Runs in a Spark
    executor's Python worker.

    Report (``report.file``, JSON lines, Kafka's field names):

    * *received*, from :meth:`put`, one per record: ``{"name": <sink connector>, "task":
      <record key: the source task id>, "sinkTask": <this task's id>, "topic", "time_ms",
      "seqno": <record value>, "offset": <Kafka offset>}``;
    * *flushed*, from :meth:`flush`, for every record received since the previous flush:
      the same line with a new ``time_ms`` and ``"flushed": true``.

    Sluice calls ``pre_commit`` — which calls :meth:`flush` — about every
    ``offset.flush.interval.ms`` (capped at 1 s), before partitions are closed, on pause
    and on a clean stop, and commits the offsets it returns to the consumer group right
    after. So
    every record whose offset the group holds was reported flushed, and a record
    reported flushed is either committed or (a crash between the flush and the commit)
    delivered and flushed again. Record values may be the bare seqno (the verifiable
    source's default), a struct or map with a ``seqno`` field
    (``complete.record.data=true``) or a decimal string (with ``StringConverter``): the
    report holds the seqno as a number in each case; keys likewise.
    """

    def __init__(self) -> None:
        self._name: str | None = None
        self._id = 0
        self._report = ReportWriter(None)
        self._unflushed: list[dict[str, Any]] = []

    def version(self) -> str:
        return plugin_version()

    def start(self, props: dict[str, str]) -> None:
        try:
            self._name = props.get(NAME_CONFIG)
            self._id = int(props[ID_CONFIG])
        except (KeyError, ValueError) as e:
            raise ConnectError("Invalid VerifiableSinkTask configuration") from e
        self._report = ReportWriter(props.get(REPORT_FILE_CONFIG)).open()
        self._unflushed = []

    def put(self, records: list[SinkRecord]) -> None:
        if not records:
            return
        now_ms = int(time.time() * 1000)
        name, sink_task = self._name, self._id
        entries = [
            {
                "name": name,
                "task": _number(r.key),
                "sinkTask": sink_task,
                "topic": r.topic,
                "time_ms": now_ms,
                "seqno": _seqno(r.value),
                "offset": r.kafka_offset,
            }
            for r in records
        ]
        self._report.write(entries)
        self._unflushed.extend(entries)

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        if not self._unflushed:
            return
        now_ms = int(time.time() * 1000)
        flushed, self._unflushed = self._unflushed, []
        self._report.write({**entry, "time_ms": now_ms, "flushed": True} for entry in flushed)

    def stop(self) -> None:
        self._report.close()


def _number(value: Any) -> Any:
    """A decimal string as its number (keys and values read with StringConverter)."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return value
    return value


def _seqno(value: Any) -> Any:
    if isinstance(value, Struct):
        field = value.schema.field("seqno")
        return value.get("seqno") if field is not None else str(value)
    if isinstance(value, dict) and "seqno" in value:
        return value["seqno"]
    return _number(value)
