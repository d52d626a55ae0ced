"""The example connectors of docs/writing-a-connector.md (``examples/counter_connector``),
driven without Spark, directly, with stub contexts, and found as plugins both ways the
guide describes (installed entry points, ``plugin.path``). tests/integration/
test_guide_example.py runs them on a real worker."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

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
from tests.example_packages import install_like_pip
from tests.helpers import RecordingSinkContext
from tests.unit.examples.conftest import COUNTER_EXAMPLE


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
