"""The example connectors of docs/writing-a-connector.md (``examples/counter_connector``),
driven without Spark: first directly, with stub contexts, then through the executor code
that runs tasks on Spark (``sluice.spark.executor``), and found as plugins both ways the
guide describes (installed entry points, ``plugin.path``)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from sluice_example_counter import (
    CounterSourceConnector,
    CounterSourceTask,
    LineFileSinkConnector,
    LineFileSinkTask,
)

from sluice.api import (
    ConfigError,
    OffsetStorageReader,
    SinkRecord,
    SourceTaskContext,
    TopicPartition,
)
from sluice.api.source import partition_key
from sluice.runtime.plugins import Plugins
from sluice.spark import executor
from sluice.spark.executor import PluginSpec, SinkBatchSpec, SourceBatchSpec, TaskSpec, run_sink_batch, run_source_batch
from tests.example_packages import install_like_pip
from tests.helpers import RecordingSinkContext, wait_until
from tests.unit.examples.conftest import COUNTER_EXAMPLE

STRING = PluginSpec("sluice.converters.string.StringConverter", {})
HEADERS = PluginSpec("sluice.converters.simple_header.SimpleHeaderConverter", {})


class Offsets(OffsetStorageReader):
    def __init__(self, committed: dict[str, int] | None = None) -> None:
        self._offsets = {partition_key({"stream": s}): {"next": n} for s, n in (committed or {}).items()}

    def offsets(self, partitions: list[dict[str, Any]]) -> dict[Any, dict[str, Any] | None]:
        return {partition_key(p): self._offsets.get(partition_key(p)) for p in partitions}


class SourceContext(SourceTaskContext):
    def __init__(self, props: dict[str, str], reader: OffsetStorageReader) -> None:
        self.props, self.reader = props, reader

    def configs(self) -> dict[str, str]:
        return dict(self.props)

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self.reader


def _source_task(props: dict[str, str], committed: dict[str, int] | None = None) -> CounterSourceTask:
    task = CounterSourceTask()
    task.initialize(SourceContext(props, Offsets(committed)))
    task.start(props)
    return task


def _counts(records: list[Any]) -> list[tuple[str, int, dict[str, Any], dict[str, Any]]]:
    return [(r.key, r.value, r.source_partition, r.source_offset) for r in records]


@pytest.fixture(autouse=True)
def no_task_instances_left():
    yield
    for key in list(executor._HOSTS):
        executor._HOSTS.pop(key).stop()


# -- the source, directly -----------------------------------------------------------------


def test_the_source_connector_checks_its_config_and_shares_the_streams_out():
    connector = CounterSourceConnector()
    errors = {v.name: v.error_messages for v in connector.validate({"streams": "a,a"}).config_values}
    assert errors["topic"] and errors["streams"] and not errors["limit"]
    with pytest.raises(ConfigError):
        connector.start({"topic": "t", "limit": "-2"})

    connector.start({"name": "c", "topic": "t", "streams": "apples,pears,plums"})
    assert [c["streams"] for c in connector.task_configs(2)] == ["apples,plums", "pears"]
    assert [c["streams"] for c in connector.task_configs(8)] == ["apples", "pears", "plums"]
    assert all(c["topic"] == "t" and c["name"] == "c" for c in connector.task_configs(2))
    assert connector.task_class() is CounterSourceTask


def test_the_source_task_counts_each_stream_and_goes_on_after_the_committed_offsets():
    props = {"topic": "t", "streams": "apples,pears", "interval.ms": "0", "limit": "9"}
    task = _source_task(props, committed={"pears": 7})
    assert _counts(task.poll()) == [
        ("apples", 0, {"stream": "apples"}, {"next": 1}),
        ("pears", 7, {"stream": "pears"}, {"next": 8}),
    ]
    assert [r.value for r in task.poll()] == [1, 8]
    assert [r.value for r in task.poll()] == [2]  # pears reached its limit
    record = task.poll()[0]
    assert (record.topic, record.key_schema.type.name, record.value_schema.type.name) == ("t", "STRING", "INT64")
    task.stop()


def test_an_idle_poll_waits_and_stop_from_another_thread_wakes_it():
    task = _source_task({"topic": "t", "interval.ms": "60000"})
    assert [r.value for r in task.poll()] == [0]
    started = time.monotonic()
    assert task.poll() is None  # the next value is due in a minute: one poll waits one second
    assert 0.9 <= time.monotonic() - started < 5
    returned = threading.Event()
    poller = threading.Thread(target=lambda: (task.poll(), returned.set()))
    poller.start()
    time.sleep(0.2)
    started = time.monotonic()
    task.stop()
    assert returned.wait(5) and time.monotonic() - started < 0.5
    poller.join()
    assert task.poll() is None  # a stopped task returns nothing, at once


# -- the sink, directly ---------------------------------------------------------------------


def test_the_sink_connector_has_one_task_whatever_tasks_max_says():
    connector = LineFileSinkConnector()
    errors = {v.name: v.error_messages for v in connector.validate({"topics": "t"}).config_values}
    assert errors["file"]
    connector.start({"name": "s", "topics": "t", "file": "/tmp/x"})
    assert connector.task_configs(4) == [{"name": "s", "topics": "t", "file": "/tmp/x"}]
    assert connector.task_class() is LineFileSinkTask


def test_the_sink_task_appends_lines_and_makes_them_durable_before_the_commit(tmp_path: Path):
    out = tmp_path / "out.txt"
    out.write_text("earlier\n")
    task = LineFileSinkTask()
    task.initialize(RecordingSinkContext())
    task.start({"file": str(out)})
    tp = TopicPartition("t", 0)
    task.put([SinkRecord("t", 0, None, "apples", None, "0", 5), SinkRecord("t", 0, None, "pears", None, "3", 6)])
    assert task.pre_commit({tp: 7}) == {tp: 7}  # the default: flush(), then commit everything
    assert out.read_text() == "earlier\napples 0\npears 3\n"
    task.put([])
    task.stop()
    task.stop()  # a second stop() is harmless
    assert out.read_text().endswith("pears 3\n")


# -- through the executor (what runs inside Spark's Python workers) -------------------------------


class Report:
    def __init__(self) -> None:
        self.value: list[Any] = []

    def add(self, items: list[Any]) -> None:
        self.value.extend(items)


def _source_batch(seq: int, incarnation: str, committed: list[Any], **config: str) -> SourceBatchSpec:
    props = {"topic": "counts", "streams": "apples,pears", "interval.ms": "0", "limit": "3", **config}
    task = TaskSpec(
        "counter", 0, "sluice_example_counter.CounterSourceTask", props, incarnation, STRING, STRING, HEADERS
    )
    return SourceBatchSpec(task, seq, committed, max_records=4, max_wait_ms=5000)


def _rows(batches: Any) -> list[tuple[str, str]]:
    return [(b["key"].decode(), b["value"].decode()) for batch in batches for b in batch.to_pylist()]


def test_the_source_task_runs_batch_after_batch_and_a_new_instance_resumes_from_the_offsets():
    report = Report()
    first = _rows(run_source_batch(_source_batch(0, "a", []), report))
    assert first == [("apples", "0"), ("pears", "0"), ("apples", "1"), ("pears", "1")]
    _task, _seq, offsets, count, failure, fresh, topics, _split = report.value[-1]
    assert (count, failure, fresh, topics) == (4, None, True, ["counts"])
    assert sorted(offsets, key=str) == [({"stream": "apples"}, {"next": 2}), ({"stream": "pears"}, {"next": 2})]
    # The worker stores those offsets; a restart (new incarnation) starts a new instance from them.
    second = _rows(run_source_batch(_source_batch(0, "b", offsets), report))
    assert second == [("apples", "2"), ("pears", "2")]
    assert report.value[-1][5] is True  # a fresh instance


def _kafka_rows(values: list[tuple[str, str]], first_offset: int = 0) -> pa.RecordBatch:
    n = len(values)
    return pa.RecordBatch.from_pydict(
        {
            "key": pa.array([k.encode() for k, _ in values], pa.binary()),
            "value": pa.array([v.encode() for _, v in values], pa.binary()),
            "topic": pa.array(["counts"] * n),
            "partition": pa.array([0] * n, pa.int32()),
            "offset": pa.array(range(first_offset, first_offset + n), pa.int64()),
            "ts_ms": pa.array([1] * n, pa.int64()),
            "ts_type": pa.array([0] * n, pa.int32()),
            "headers_json": pa.array([None] * n, pa.string()),
        }
    )


def _sink_batch(seq: int, path: Path, start: int) -> SinkBatchSpec:
    props = {"topics": "counts", "file": str(path)}
    task = TaskSpec("lines", 0, "sluice_example_counter.LineFileSinkTask", props, "a", STRING, STRING, HEADERS)
    return SinkBatchSpec(task, seq, [("counts", 0)], {("counts", 0): start}, {("counts", 0): start})


def test_the_sink_task_writes_each_batch_and_reports_the_offsets_to_commit(tmp_path: Path):
    out = tmp_path / "counts.txt"
    rows = list(run_sink_batch(_sink_batch(0, out, 0), iter([_kafka_rows([("apples", "0"), ("pears", "0")])])))
    commits = [r for batch in rows for r in batch.to_pylist() if r["kind"] == "commit"]
    assert [(r["topic"], r["partition"], r["offset"]) for r in commits] == [("counts", 0, 2)]
    assert out.read_text() == "apples 0\npears 0\n"  # flushed before the offsets were reported
    list(run_sink_batch(_sink_batch(1, out, 2), iter([_kafka_rows([("apples", "1")], 2)])))
    assert out.read_text() == "apples 0\npears 0\napples 1\n"
    assert executor.stop_host("lines", 0, "a")


# -- found as plugins ------------------------------------------------------------------------------


def test_the_package_s_entry_points_make_the_connectors_known_by_their_aliases(tmp_path, monkeypatch):
    with pytest.raises(Exception, match="CounterSource"):
        Plugins().resolve_connector("CounterSource")
    monkeypatch.syspath_prepend(str(install_like_pip(COUNTER_EXAMPLE, tmp_path / "site")))
    plugins = Plugins()
    for alias, cls, kind in [
        ("CounterSource", CounterSourceConnector, "source"),
        ("LineFileSinkConnector", LineFileSinkConnector, "sink"),
    ]:
        desc = plugins.resolve_connector(alias)
        assert (desc.class_name, desc.type, desc.version) == (f"{cls.__module__}.{cls.__name__}", kind, "0.1.0")
    assert not plugins.load_errors


def test_a_plugin_path_directory_makes_the_connectors_known_too():
    plugins = Plugins([str(COUNTER_EXAMPLE / "src")])
    assert {d.class_name for d in plugins.connectors()} >= {
        "sluice_example_counter.source.CounterSourceConnector",
        "sluice_example_counter.sink.LineFileSinkConnector",
    }
    assert plugins.resolve_connector("LineFileSink").cls is LineFileSinkConnector
    assert plugins.plugin_path == [str((COUNTER_EXAMPLE / "src").resolve())]


def test_a_waiting_poll_does_not_hold_up_a_stop_through_the_executor():
    spec = _source_batch(0, "a", [], **{"interval.ms": "60000", "limit": "-1"})
    report = Report()
    assert _rows(run_source_batch(spec, report)) == [("apples", "0"), ("pears", "0")]
    host = executor._HOSTS[("counter", 0)]
    wait_until(lambda: host._in_poll, timeout=5, message="a poll() under way")
    started = time.monotonic()
    assert executor.stop_host("counter", 0, "a")
    assert time.monotonic() - started < 1.0
    assert not host._thread.is_alive()
