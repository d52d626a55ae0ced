"""The test connectors (verifiable and mock) driven directly, with fake contexts and a
fake clock (no Spark, no sleeping)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from sluice.api.config import ConfigType
from sluice.api.connector import ConnectorContext
from sluice.api.data import Schema, Struct
from sluice.api.errors import ConnectError
from sluice.api.records import RecordMetadata, SinkRecord, TopicPartition
from sluice.api.source import ExactlyOnceSupport, OffsetStorageReader, SourceTaskContext, partition_key
from sluice.connectors.testing import (
    MockConnector,
    MockSinkConnector,
    MockSinkTask,
    MockSourceConnector,
    MockSourceTask,
    VerifiableSinkConnector,
    VerifiableSinkTask,
    VerifiableSourceConnector,
    VerifiableSourceTask,
    read_report,
    verifiable_source,
)
from sluice.connectors.testing.report import ReportWriter
from sluice.runtime.plugins import Plugins
from tests.helpers import RecordingSinkContext, wait_until

# --------------------------------------------------------------------------- fakes


class FakeClock:
    """A clock that only moves when the task waits."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.now

    def wait(self, seconds: float) -> bool:
        self.waits.append(seconds)
        self.now += seconds
        return False


class FakeOffsetReader(OffsetStorageReader):
    def __init__(self, stored: dict[int, dict[str, Any]] | None = None) -> None:
        self.stored = stored or {}

    def offsets(self, partitions):
        return {partition_key(p): self.stored.get(p["id"]) for p in partitions}


class FakeSourceContext(SourceTaskContext):
    def __init__(self, stored: dict[int, dict[str, Any]] | None = None) -> None:
        self.reader = FakeOffsetReader(stored)

    def configs(self):
        return {}

    def offset_storage_reader(self):
        return self.reader


class FakeConnectorContext(ConnectorContext):
    def __init__(self) -> None:
        self.errors: list[BaseException] = []
        self.failed = threading.Event()

    def request_task_reconfiguration(self):
        pass

    def raise_error(self, error):
        self.errors.append(error)
        self.failed.set()


def source_task(
    report: Path | None = None,
    stored: int | None = None,
    task_id: int = 0,
    clock: FakeClock | None = None,
    **props: str,
) -> VerifiableSourceTask:
    clock = clock or FakeClock()
    task = VerifiableSourceTask(clock=clock, wait=clock.wait)
    task.initialize(FakeSourceContext({task_id: {"seqno": stored}} if stored is not None else {}))
    config = {
        "name": "vsrc",
        "id": str(task_id),
        "topic": "seq",
        "throughput": "-1",
        **{k.replace("_", "."): v for k, v in props.items()},
    }
    if report is not None:
        config["report.file"] = str(report)
    task.start(config)
    return task


@pytest.fixture
def small_polls(monkeypatch):
    monkeypatch.setattr(verifiable_source, "MAX_RECORDS_PER_POLL", 3)


# --------------------------------------------------------------------------- verifiable source


def test_source_connector_gives_each_task_its_id() -> None:
    connector = VerifiableSourceConnector()
    connector.start({"name": "vsrc", "topic": "seq", "throughput": "10", "tasks.max": "3"})
    configs = connector.task_configs(3)
    assert [c["id"] for c in configs] == ["0", "1", "2"]
    assert all(c["topic"] == "seq" and c["throughput"] == "10" and c["name"] == "vsrc" for c in configs)
    assert connector.task_class() is VerifiableSourceTask
    keys = connector.config().config_keys()
    assert keys["throughput"].type is ConfigType.LONG and not keys["throughput"].has_default
    assert keys["report.file"].default_value is None
    errors = {v.name: v.error_messages for v in connector.validate({"name": "vsrc"}).config_values}
    assert errors["topic"] and errors["throughput"] and not errors["report.file"]


def test_source_emits_increasing_seqnos_keyed_by_task(small_polls) -> None:
    task = source_task(task_id=4)
    records = task.poll() + task.poll()
    assert [r.value for r in records] == [0, 1, 2, 3, 4, 5]
    assert {r.key for r in records} == {4}
    assert all(r.key_schema == Schema.INT32_SCHEMA and r.value_schema == Schema.INT64_SCHEMA for r in records)
    assert all(r.topic == "seq" and r.kafka_partition is None for r in records)
    assert [r.source_partition for r in records] == [{"id": 4}] * 6
    assert [r.source_offset for r in records] == [{"seqno": n} for n in range(6)]


def test_source_resumes_after_the_committed_seqno(small_polls) -> None:
    task = source_task(stored=41, task_id=1)
    assert [r.value for r in task.poll()] == [42, 43, 44]
    other = VerifiableSourceTask()
    other.initialize(FakeSourceContext({1: {"seqno": 41}}))  # only task 1's partition has an offset
    other.start({"name": "vsrc", "id": "2", "topic": "seq", "throughput": "-1"})
    assert [r.value for r in other.poll()] == [0, 1, 2]


def test_source_complete_record_data_is_a_struct(small_polls) -> None:
    task = source_task(task_id=1, complete_record_data="true")
    record = task.poll()[0]
    assert isinstance(record.value, Struct)
    assert [record.value.get(f) for f in ("name", "task", "topic", "seqno")] == ["vsrc", 1, "seq", 0]
    assert isinstance(record.value.get("time_ms"), int)


def test_source_rejects_a_bad_config() -> None:
    task = VerifiableSourceTask()
    task.initialize(FakeSourceContext())
    with pytest.raises(ConnectError, match="Invalid VerifiableSourceTask configuration"):
        task.start({"name": "x", "id": "0", "topic": "t", "throughput": "fast"})
    with pytest.raises(ConnectError):
        task.start({"name": "x", "id": "0", "topic": "t"})


def test_throughput_paces_records_on_the_clock() -> None:
    clock = FakeClock()
    task = source_task(clock=clock, throughput="50")
    start = clock.now
    sent = 0
    while clock.now - start < 10.0:
        records = task.poll() or []
        sent += len(records)
        # never ahead of the schedule: record k is due k/50 s after start
        assert sent <= int((clock.now - start) * 50 + 1e-6) + 1
    assert sent == 501  # records 0..500 are due within 10 s
    assert max(clock.waits) <= verifiable_source.MAX_POLL_WAIT_S
    assert all(abs(w - 0.02) < 1e-6 for w in clock.waits if w > 0)  # one record interval each time


def test_throughput_catches_up_in_one_poll_after_a_stall() -> None:
    clock = FakeClock()
    task = source_task(clock=clock, throughput="100")
    assert len(task.poll()) == 1
    clock.now += 0.5  # the framework did not poll for half a second
    assert [r.value for r in task.poll()] == list(range(1, 51))


def test_throughput_zero_sends_one_record_then_idles() -> None:
    clock = FakeClock()
    task = source_task(clock=clock, throughput="0")
    assert [r.value for r in task.poll()] == [0]
    for _ in range(3):
        assert task.poll() is None
    assert clock.waits == [1.0, 1.0, 1.0]


def test_unthrottled_polls_never_wait() -> None:
    clock = FakeClock()
    task = source_task(clock=clock, throughput="-1")
    assert len(task.poll()) == verifiable_source.MAX_RECORDS_PER_POLL
    assert len(task.poll()) == verifiable_source.MAX_RECORDS_PER_POLL
    assert clock.waits == []


def test_stop_ends_a_waiting_poll() -> None:
    task = VerifiableSourceTask()  # the real clock and wait
    task.initialize(FakeSourceContext())
    task.start({"name": "x", "id": "0", "topic": "t", "throughput": "0"})
    assert len(task.poll()) == 1
    result: list[Any] = []
    poller = threading.Thread(target=lambda: result.append(task.poll()))
    poller.start()
    task.stop()
    poller.join(5)
    assert not poller.is_alive() and result == [None]


def test_source_reports_sent_records_with_kafkas_fields(tmp_path: Path, small_polls) -> None:
    report = tmp_path / "report.jsonl"
    task = source_task(report, task_id=2)
    task.poll()
    lines = read_report(report)
    assert [line["seqno"] for line in lines] == [0, 1, 2]
    assert all(set(line) == {"name", "task", "topic", "time_ms", "seqno"} for line in lines)
    assert all(line["name"] == "vsrc" and line["task"] == 2 and line["topic"] == "seq" for line in lines)
    raw = report.read_text().splitlines()
    assert raw[0].startswith('{"name": "vsrc", "task": 2, "topic": "seq", "time_ms": ')


def committed(report: Path, task: int | None = None) -> list[int]:
    return [e["seqno"] for e in read_report(report) if e.get("committed") and (task is None or e["task"] == task)]


def test_commit_record_reports_each_acknowledged_seqno_with_kafkas_fields(tmp_path: Path, small_polls) -> None:
    report = tmp_path / "report.jsonl"
    task = source_task(report)
    records = task.poll()
    assert [r.value for r in records] == [0, 1, 2]
    assert committed(report) == []  # sent, not acknowledged yet
    task.commit_record(records[1], RecordMetadata("seq", 0, 41, 1700000000000))
    task.commit_record(records[0], RecordMetadata("seq", 0, 40, 1700000000000))
    assert committed(report) == [1, 0]  # in the order Kafka acknowledged them
    lines = [e for e in read_report(report) if e.get("committed")]
    assert all(set(e) == {"name", "task", "topic", "time_ms", "seqno", "committed"} for e in lines)
    assert all(e["name"] == "vsrc" and e["task"] == 0 and e["topic"] == "seq" for e in lines)


def test_a_new_instance_resumes_after_the_stored_offset(tmp_path: Path, small_polls) -> None:
    report = tmp_path / "report.jsonl"
    first = source_task(report)
    for record in first.poll():
        first.commit_record(record, None)
    first.stop()
    second = source_task(report, stored=2)
    assert [r.value for r in second.poll()] == [3, 4, 5]
    assert committed(report) == [0, 1, 2]


def test_without_a_report_file_lines_go_to_stdout(capsys, small_polls) -> None:
    task = source_task(None, task_id=0)
    task.poll()
    out = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["seqno"] for line in out] == [0, 1, 2]


def test_tasks_in_several_threads_share_a_report_file(tmp_path: Path) -> None:
    report = tmp_path / "shared.jsonl"
    payload = "x" * 3000  # lines far longer than an atomic pipe write

    def write(task: int) -> None:
        writer = ReportWriter(str(report))  # each its own descriptor, as separate processes
        for seqno in range(200):
            writer.write([{"name": "n", "task": task, "seqno": seqno, "pad": payload}] * 3)
        writer.close()

    threads = [threading.Thread(target=write, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = report.read_text().splitlines()
    assert len(lines) == 6 * 200 * 3
    entries = [json.loads(line) for line in lines]  # every line whole
    for task in range(6):
        assert [e["seqno"] for e in entries if e["task"] == task] == [s for s in range(200) for _ in range(3)]


# --------------------------------------------------------------------------- verifiable sink


def sink_record(key: Any, value: Any, offset: int, topic: str = "seq", partition: int = 0) -> SinkRecord:
    return SinkRecord(topic, partition, Schema.INT32_SCHEMA, key, Schema.INT64_SCHEMA, value, offset)


def sink_task(report: Path | None, task_id: int = 1) -> VerifiableSinkTask:
    task = VerifiableSinkTask()
    task.initialize(RecordingSinkContext())
    config = {"name": "vsink", "id": str(task_id), "topics": "seq"}
    if report is not None:
        config["report.file"] = str(report)
    task.start(config)
    return task


def test_sink_connector_gives_each_task_its_id() -> None:
    connector = VerifiableSinkConnector()
    connector.start({"name": "vsink", "topics": "seq"})
    assert [c["id"] for c in connector.task_configs(2)] == ["0", "1"]
    assert connector.task_class() is VerifiableSinkTask
    assert connector.config().names() == ["report.file"]


def test_sink_reports_received_then_flushed(tmp_path: Path) -> None:
    report = tmp_path / "sink.jsonl"
    task = sink_task(report, task_id=1)
    task.put([sink_record(0, 0, 10), sink_record(1, 0, 11), sink_record(0, 1, 12)])
    received = read_report(report)
    assert [(e["task"], e["seqno"], e["offset"]) for e in received] == [(0, 0, 10), (1, 0, 11), (0, 1, 12)]
    assert all(set(e) == {"name", "task", "sinkTask", "topic", "time_ms", "seqno", "offset"} for e in received)
    assert all(e["name"] == "vsink" and e["sinkTask"] == 1 and e["topic"] == "seq" for e in received)

    offsets = {TopicPartition("seq", 0): 13}
    assert task.pre_commit(offsets) == offsets  # pre_commit flushes
    flushed = [e for e in read_report(report) if e.get("flushed")]
    assert [(e["task"], e["seqno"], e["offset"]) for e in flushed] == [(0, 0, 10), (1, 0, 11), (0, 1, 12)]
    task.flush(offsets)  # nothing new: nothing reported twice
    task.put([])
    assert len(read_report(report)) == 6
    task.put([sink_record(1, 1, 13)])
    task.flush(offsets)
    assert [(e["task"], e["seqno"]) for e in read_report(report) if e.get("flushed")][-1] == (1, 1)
    task.stop()


def test_sink_reads_seqnos_from_structs_maps_and_strings(tmp_path: Path) -> None:
    report = tmp_path / "sink.jsonl"
    task = sink_task(report)
    source = source_task(None, task_id=5, complete_record_data="true")
    struct = source.poll()[0].value
    task.put(
        [
            SinkRecord("seq", 0, None, 5, None, struct, 0),
            SinkRecord("seq", 0, None, {"x": 1}, None, {"seqno": 7, "task": 2}, 1),
            SinkRecord("seq", 0, None, "3", None, "42", 2),
            SinkRecord("seq", 0, None, None, None, "not a number", 3),
        ]
    )
    assert [(e["task"], e["seqno"]) for e in read_report(report)] == [
        (5, 0),
        ({"x": 1}, 7),
        (3, 42),
        (None, "not a number"),
    ]


# --------------------------------------------------------------------------- mocks


def test_mock_connector_failure_raises_through_the_context_after_the_delay() -> None:
    connector = MockSourceConnector()
    context = FakeConnectorContext()
    connector.initialize(context)
    connector.start({"name": "m", "mock_mode": "connector-failure", "delay_ms": "20"})
    assert connector.task_configs(5) == [{"name": "m", "mock_mode": "connector-failure", "delay_ms": "20"}]
    wait_until(context.failed.is_set, timeout=10, message="connector failure raised")
    assert isinstance(context.errors[0], RuntimeError)
    assert "MockConnector failed on purpose 20 ms after it started" in str(context.errors[0])
    connector.stop()


def test_mock_connector_stop_cancels_the_failure() -> None:
    connector = MockSinkConnector()
    context = FakeConnectorContext()
    connector.initialize(context)
    connector.start({"mock_mode": "connector-failure"})  # Kafka's default delay: 15 s
    timer = connector._delegate._timer
    assert timer is not None and abs(timer.interval - 15.0) < 1e-9
    connector.stop()
    timer.join(5)
    assert not timer.is_alive() and context.errors == []
    assert connector.task_class() is MockSinkTask


def test_mock_connector_idles_in_other_modes() -> None:
    for config in ({}, {"mock_mode": "task-failure", "delay_ms": "0"}, {"mock_mode": "unknown"}):
        connector = MockSourceConnector()
        connector.initialize(FakeConnectorContext())
        connector.start(config)
        assert connector._delegate._timer is None
        connector.stop()
    with pytest.raises(NotImplementedError):
        MockConnector().task_class()


def test_mock_config_keys_are_kafkas() -> None:
    keys = MockSourceConnector().config().config_keys()
    assert set(keys) == {"mock_mode", "delay_ms"}
    assert keys["delay_ms"].default_value == 15000


def mock_source(clock: FakeClock, **config: str) -> MockSourceTask:
    task = MockSourceTask(clock=clock, wait=clock.wait)
    task.initialize(FakeSourceContext())
    task.start(config)
    return task


def test_mock_source_task_failure_after_the_delay() -> None:
    clock = FakeClock()
    task = mock_source(clock, mock_mode="task-failure", delay_ms="2500")
    assert task.poll() is None and task.poll() is None  # 1 s each
    assert clock.waits == [1.0, 1.0]
    with pytest.raises(RuntimeError, match=r"MockSourceTask failed on purpose 2500 ms after it started"):
        task.poll()  # waits the last 0.5 s, then fails
    assert clock.waits == [1.0, 1.0, 0.5]
    with pytest.raises(RuntimeError):
        task.poll()


def test_mock_source_accepts_delay_dot_ms_and_idles_otherwise() -> None:
    clock = FakeClock()
    task = mock_source(clock, mock_mode="task-failure", **{"delay.ms": "500"})
    with pytest.raises(RuntimeError, match="500 ms"):
        task.poll()
    idle = mock_source(clock, mock_mode="connector-failure", delay_ms="0")
    for _ in range(5):
        assert idle.poll() is None
    with pytest.raises(ConnectError, match="delay_ms"):
        mock_source(clock, mock_mode="task-failure", delay_ms="soon")


def test_mock_sink_task_failure_on_the_first_put_after_the_delay() -> None:
    clock = FakeClock()
    task = MockSinkTask(clock=clock)
    context = RecordingSinkContext()
    task.initialize(context)
    task.start({"mock_mode": "task-failure", "delay_ms": "1000"})
    task.put([sink_record(0, 0, 0)])
    clock.now += 0.999
    task.put([])
    clock.now += 0.001
    with pytest.raises(RuntimeError, match="MockSinkTask failed on purpose 1000 ms after it started"):
        task.put([])
    assert context.timeouts and set(context.timeouts) == {250}

    idle = MockSinkTask(clock=clock)
    idle.initialize(RecordingSinkContext())
    idle.start({})
    clock.now += 100
    idle.put([sink_record(0, 0, 0)])
    assert idle.pre_commit({TopicPartition("t", 0): 1}) == {TopicPartition("t", 0): 1}


# --------------------------------------------------------------------------- registration


@pytest.mark.parametrize(
    ("name", "kafka_name", "kind"),
    [
        ("VerifiableSource", "org.apache.kafka.connect.tools.VerifiableSourceConnector", "source"),
        ("VerifiableSinkConnector", "org.apache.kafka.connect.tools.VerifiableSinkConnector", "sink"),
        (
            "org.apache.kafka.connect.tools.MockSourceConnector",
            "org.apache.kafka.connect.tools.MockSourceConnector",
            "source",
        ),
        ("MockSink", "org.apache.kafka.connect.tools.MockSinkConnector", "sink"),
        (
            "sluice.connectors.testing.mock.MockSinkConnector",
            "org.apache.kafka.connect.tools.MockSinkConnector",
            "sink",
        ),
    ],
)
def test_registered_under_kafkas_class_names(name: str, kafka_name: str, kind: str) -> None:
    desc = Plugins().resolve_connector(name)
    assert (desc.class_name, desc.type) == (kafka_name, kind)


def test_left_out_of_the_plugin_listing_as_in_kafka() -> None:
    listed = {d.class_name for d in Plugins().all()}
    assert "org.apache.kafka.connect.file.FileStreamSinkConnector" in listed
    assert not {n for n in listed if n.startswith("org.apache.kafka.connect.tools.")}


def test_a_report_file_that_cannot_be_written_fails_the_task_at_start(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        source_task(tmp_path / "no-such-dir" / "report.jsonl")
    with pytest.raises(FileNotFoundError):
        sink_task(tmp_path / "no-such-dir" / "report.jsonl")


def test_the_verifiable_source_declares_exactly_once_support() -> None:
    assert VerifiableSourceConnector().exactly_once_support({"topic": "t"}) is ExactlyOnceSupport.SUPPORTED
