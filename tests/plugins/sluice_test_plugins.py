"""Connectors written outside the sluice package, loaded by Python path in tests.

They live in a plain directory that the tests put on ``plugin.path``, the way a
user ships their own connectors.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from sluice.api import (
    ConfigDef,
    ConfigType,
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    Importance,
    Schema,
    SinkConnector,
    SinkRecord,
    SinkTask,
    SourceConnector,
    SourceRecord,
    SourceTask,
    TopicPartition,
)
from sluice.api.metrics import MetricsReporter
from sluice.connectors.file.source import FileStreamSourceConnector


def spark_executor_id() -> str:
    """The id of the Spark executor whose Python worker runs this code.

    PySpark does not tell a Python worker its executor id, so this walks up the process
    tree to the JVM that started the worker: a standalone cluster's executor
    (``CoarseGrainedExecutorBackend --executor-id N``) gives ``N``; the driver's own JVM
    (local mode, ``SparkSubmit``) gives ``driver``. Linux only (``/proc``); ``unknown``
    elsewhere or when no JVM ancestor is found.
    """
    pid = os.getpid()
    for _ in range(16):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().decode(errors="replace").split("\0")
            with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return "unknown"
        if "--executor-id" in args[:-1]:
            return args[args.index("--executor-id") + 1]
        if "org.apache.spark.deploy.SparkSubmit" in args:
            return "driver"
        if parent <= 1:
            return "unknown"
        pid = parent
    return "unknown"


class SequenceSourceTask(SourceTask):
    """Emits ``count`` string records ``<prefix>-<i>``; resumes after its last committed one.

    When the file named by ``fail.marker`` exists, the next poll deletes it and raises,
    so a test can fail the task once and then restart it.
    """

    def start(self, props: dict[str, str]) -> None:
        self.topic = props["topic"]
        self.count = int(props.get("count", "10"))
        self.prefix = props.get("prefix", "seq")
        self.marker = props.get("fail.marker")
        self.report_spark = props.get("report.spark", "false") == "true"
        self.report_executor = props.get("report.executor", "false") == "true"
        committed = self.context.offset_storage_reader().offset({"sequence": self.prefix})
        self.next = int(committed["next"]) if committed else 0

    def poll(self) -> list[SourceRecord] | None:
        if self.marker and os.path.exists(self.marker):
            os.remove(self.marker)
            raise RuntimeError(f"poll failed on purpose (marker {self.marker})")
        if self.next >= self.count:
            time.sleep(0.1)
            return None
        records = []
        suffix = ""
        if self.report_spark:
            # Proof for tests that poll() runs inside a Spark task, on an executor.
            from pyspark import TaskContext

            context = TaskContext.get()
            suffix = f"@spark-stage-{context.stageId()}" if context is not None else "@not-in-spark"
        if self.report_executor:
            suffix += f"@executor-{spark_executor_id()}"
        while self.next < self.count and len(records) < 100:
            records.append(
                SourceRecord(
                    {"sequence": self.prefix},
                    {"next": self.next + 1},
                    self.topic,
                    value_schema=Schema.STRING_SCHEMA,
                    value=f"{self.prefix}-{self.next}{suffix}",
                )
            )
            self.next += 1
        return records

    def stop(self) -> None:
        pass


class SequenceSourceConnector(SourceConnector):
    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)

    def task_class(self) -> type[SourceTask]:
        return SequenceSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define("topic", ConfigType.STRING, importance=Importance.HIGH, documentation="Topic to write to.")
            .define("count", ConfigType.INT, 10, importance=Importance.MEDIUM, documentation="Records to emit.")
            .define("prefix", ConfigType.STRING, "seq", importance=Importance.LOW, documentation="Value prefix.")
            .define(
                "fail.marker",
                ConfigType.STRING,
                None,
                importance=Importance.LOW,
                documentation="Fail one poll while this file exists.",
            )
            .define(
                "report.spark",
                ConfigType.BOOLEAN,
                False,
                importance=Importance.LOW,
                documentation="Append the Spark stage that ran poll() to each value.",
            )
            .define(
                "report.executor",
                ConfigType.BOOLEAN,
                False,
                importance=Importance.LOW,
                documentation="Append the id of the Spark executor that ran poll() to each value "
                "('driver' in local mode).",
            )
        )


class NarrowFileSourceConnector(FileStreamSourceConnector):
    """FileStreamSource whose task configs carry only what its task reads (file, topic,
    batch size), as many connectors' do: a changed converter or transform is not in them."""

    TASK_KEYS = ("file", "topic", "batch.size")

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{k: v for k, v in c.items() if k in self.TASK_KEYS} for c in super().task_configs(max_tasks)]


class RecordingSinkTask(SinkTask):
    """Appends every record it is given, headers included, as one JSON line to ``record.file``.

    With ``hold.file``, a ``put`` with records first waits (up to two minutes) until that
    file exists: a test can look at the worker while records are in the task's hands.
    With ``lifecycle.file``, ``close`` and ``stop`` each append a line naming themselves.
    With ``report.late=true``, a record whose value is a map with ``"bad": true`` is reported
    to the errant record reporter by the next ``put`` that has records, as a sink writing
    asynchronously learns of a refused record one ``put`` later."""

    HOLD_LIMIT_S = 120.0

    def start(self, props: dict[str, str]) -> None:
        self.path = props["record.file"]
        self.hold = props.get("hold.file")
        self.lifecycle = props.get("lifecycle.file")
        self.report_late = props.get("report.late", "false").lower() == "true"
        self.refused: list[SinkRecord] = []

    def _note(self, event: str) -> None:
        if self.lifecycle:
            with open(self.lifecycle, "a", encoding="utf-8") as out:
                out.write(event + "\n")

    def close(self, partitions: list[TopicPartition]) -> None:
        self._note("close " + ",".join(f"{p.topic}-{p.partition}" for p in sorted(partitions)))

    def put(self, records: list[SinkRecord]) -> None:
        if records and self.refused:
            reporter = self.context.errant_record_reporter()
            assert reporter is not None
            for refused in self.refused:
                reporter.report(refused, ValueError(f"refused late: offset {refused.kafka_offset}"))
            self.refused = []
        if self.report_late:
            self.refused = [r for r in records if isinstance(r.value, dict) and r.value.get("bad")]
        if records and self.hold:
            deadline = time.monotonic() + self.HOLD_LIMIT_S
            while not os.path.exists(self.hold) and time.monotonic() < deadline:
                time.sleep(0.05)
        with open(self.path, "a", encoding="utf-8") as out:
            for r in records:
                headers = [
                    [
                        h.key,
                        h.value.hex() if isinstance(h.value, bytes) else h.value,
                        None if h.schema is None else h.schema.type.value,
                    ]
                    for h in r.headers
                ]
                out.write(
                    json.dumps(
                        {
                            "topic": r.topic,
                            "partition": r.kafka_partition,
                            "offset": r.kafka_offset,
                            "value": r.value,
                            "headers": headers,
                        }
                    )
                    + "\n"
                )

    def stop(self) -> None:
        self._note("stop")


class RecordingSinkConnector(SinkConnector):
    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)

    def task_class(self) -> type[SinkTask]:
        return RecordingSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define(
                "record.file", ConfigType.STRING, importance=Importance.HIGH, documentation="File the records go to."
            )
            .define(
                "hold.file",
                ConfigType.STRING,
                None,
                importance=Importance.LOW,
                documentation="If set, put() waits until this file exists before it writes records.",
            )
            .define(
                "lifecycle.file",
                ConfigType.STRING,
                None,
                importance=Importance.LOW,
                documentation="If set, close() and stop() each append a line naming themselves.",
            )
            .define(
                "report.late",
                ConfigType.BOOLEAN,
                False,
                importance=Importance.LOW,
                documentation="Report records with a value {'bad': true} in the next put with records.",
            )
        )


class WideConfigSourceConnector(SourceConnector):
    """A source with 200 config keys in 8 groups (the console must draw such a plugin's
    form); its task emits nothing."""

    KEYS = 200
    GROUPS = 8

    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)

    def task_class(self) -> type[SourceTask]:
        return SequenceSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return []

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        config = ConfigDef()
        for i in range(self.KEYS):
            group = f"Group {i % self.GROUPS}"
            config.define(
                f"wide.key.{i:03d}",
                ConfigType.INT if i % 3 == 0 else ConfigType.BOOLEAN if i % 3 == 1 else ConfigType.STRING,
                None if i == 7 else (i if i % 3 == 0 else i % 2 == 0 if i % 3 == 1 else f"value {i}"),
                importance=Importance.LOW,
                documentation=f'Wide key number {i} <b>not bold</b> & "quoted".',
                group=group,
                order_in_group=i // self.GROUPS,
                display_name=f"Wide key {i}",
            )
        return config


class FileMetricsReporter(MetricsReporter):
    """Writes the worker's metrics as JSON lines to ``file.metrics.reporter.path`` every
    ``file.metrics.reporter.interval.ms`` (a reporter with a thread of its own)."""

    def configure(self, configs: dict[str, str]) -> None:
        self.path = configs["file.metrics.reporter.path"]
        self.interval_s = int(configs.get("file.metrics.reporter.interval.ms", "500")) / 1000.0

    def init(self, metrics) -> None:
        import threading

        self.metrics = metrics
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.done.wait(self.interval_s):
            self._write()

    def _write(self) -> None:
        rows = [{"group": m.group, "name": m.name, "tags": m.tags, "value": m.value} for m in self.metrics()]
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(json.dumps(rows) + "\n")

    def close(self) -> None:
        self.done.set()
        self.thread.join(5)
        with open(self.path, "a", encoding="utf-8") as out:
            out.write('"closed"\n')


class CapabilityAnsweringSourceConnector(SequenceSourceConnector):
    """A source connector that answers the exactly-once preflight questions as its config
    says: ``answer`` is SUPPORTED, UNSUPPORTED, ``none`` (returns None), ``raise`` (raises
    with a message) or ``raise-silently`` (raises without one)."""

    def _answer(self, connector_config: dict[str, str], kind: type[Any]) -> Any:
        answer = connector_config.get("answer", "none")
        if answer == "raise":
            raise RuntimeError("cannot tell today")
        if answer == "raise-silently":
            raise RuntimeError()
        return None if answer == "none" else kind(answer)

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport | None:
        return self._answer(connector_config, ExactlyOnceSupport)  # type: ignore[no-any-return]

    def can_define_transaction_boundaries(self, connector_config: dict[str, str]) -> ConnectorTransactionBoundaries:
        return self._answer(connector_config, ConnectorTransactionBoundaries)  # type: ignore[no-any-return]

    def config(self) -> ConfigDef:
        return (
            super()
            .config()
            .define("answer", ConfigType.STRING, "none", importance=Importance.LOW, documentation="What to answer.")
        )


class TransactionBoundarySourceTask(SourceTask):
    """Emits ``batches`` batches of ten seqnos (``0…9``, ``10…19``, …), two batches per poll,
    and ends each batch's transaction after its last record through the task's
    transaction context: batch ``b`` is aborted when ``b % abort.every == abort.every - 1``,
    committed otherwise. Each record's offset is ``{"seqno": n}``; the task resumes after
    the committed one."""

    def start(self, props: dict[str, str]) -> None:
        self.topic = props["topic"]
        self.batches = int(props.get("batches", "30"))
        self.abort_every = int(props.get("abort.every", "3"))
        transactions = self.context.transaction_context()
        if transactions is None:
            raise RuntimeError("this task needs transaction.boundary=connector on an exactly-once worker")
        self.transactions = transactions
        committed = self.context.offset_storage_reader().offset({"source": "boundaries"})
        self.next = int(committed["seqno"]) + 1 if committed else 0

    def poll(self) -> list[SourceRecord] | None:
        if self.next >= self.batches * 10:
            time.sleep(0.1)
            return None
        records: list[SourceRecord] = []
        while self.next < self.batches * 10 and len(records) < 20:
            seqno = self.next
            record = SourceRecord(
                {"source": "boundaries"},
                {"seqno": seqno},
                self.topic,
                value_schema=Schema.STRING_SCHEMA,
                value=str(seqno),
            )
            records.append(record)
            self.next += 1
            if seqno % 10 == 9:
                batch = seqno // 10
                if batch % self.abort_every == self.abort_every - 1:
                    self.transactions.abort_transaction(record)
                else:
                    self.transactions.commit_transaction(record)
        return records

    def stop(self) -> None:
        pass


class TransactionBoundarySourceConnector(SequenceSourceConnector):
    """A connector whose task defines its own transaction boundaries
    (:class:`TransactionBoundarySourceTask`)."""

    def task_class(self) -> type[SourceTask]:
        return TransactionBoundarySourceTask

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport | None:
        return ExactlyOnceSupport.SUPPORTED

    def can_define_transaction_boundaries(self, connector_config: dict[str, str]) -> ConnectorTransactionBoundaries:
        return ConnectorTransactionBoundaries.SUPPORTED

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define("topic", ConfigType.STRING, importance=Importance.HIGH, documentation="Topic to write to.")
            .define("batches", ConfigType.INT, 30, importance=Importance.LOW, documentation="Batches of ten.")
            .define("abort.every", ConfigType.INT, 3, importance=Importance.LOW, documentation="Abort each n-th.")
        )
