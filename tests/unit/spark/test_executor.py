"""The executor side of the data plane, driven directly (no Spark, no JVM): how task
instances are kept or restarted between batches, and what each batch reports."""

from __future__ import annotations

import pyarrow as pa
import pytest

from sluice.api import Schema, SinkTask, SourceRecord, SourceTask, TopicPartition
from sluice.spark import executor
from sluice.spark.executor import PluginSpec, SinkBatchSpec, SourceBatchSpec, TaskSpec, run_sink_batch, run_source_batch
from tests.helpers import wait_until

STRING = PluginSpec("sluice.converters.string.StringConverter", {})
HEADERS = PluginSpec("sluice.converters.simple_header.SimpleHeaderConverter", {})
EVENTS: list[str] = []


class CountingSourceTask(SourceTask):
    """Emits 'v<i>' with offset {"i": i + 1}; fails on a configured value of i."""

    def start(self, props):
        committed = self.context.offset_storage_reader().offset({"p": 1})
        self.i = committed["i"] if committed else 0
        self.fail_at = int(props.get("fail.at", "-1"))
        EVENTS.append(f"start@{self.i}")

    def poll(self):
        if self.i == self.fail_at:
            raise ValueError(f"bad record {self.i}")
        if self.i >= int(self.context.configs()["count"]):
            return None
        self.i += 1
        return [SourceRecord({"p": 1}, {"i": self.i}, "t", value_schema=Schema.STRING_SCHEMA, value=f"v{self.i - 1}")]

    def commit(self):
        EVENTS.append("commit")

    def stop(self):
        EVENTS.append("stop")


class BadValueSourceTask(CountingSourceTask):
    """Like CountingSourceTask, but the value at ``bad.at`` is not a string."""

    def poll(self):
        records = super().poll()
        if records and self.i - 1 == int(self.context.configs()["bad.at"]):
            records = [r.new_record(value=12345) for r in records]
        return records


class PausingSinkTask(SinkTask):
    """Collects values; pauses its partition after the first record; resumes on an empty put."""

    def start(self, props):
        self.seen = []
        EVENTS.append("sink-start")

    def put(self, records):
        if not records:
            EVENTS.append("empty-put")
            self.context.resume(*self.context.assignment())
            return
        self.seen.extend(r.value for r in records)
        self.context.pause(TopicPartition("t", 0))

    def pre_commit(self, offsets):
        return {tp: o for tp, o in offsets.items()}

    def stop(self):
        EVENTS.append("sink-stop")


class FailingSinkTask(SinkTask):
    def start(self, props):
        pass

    def put(self, records):
        if records:
            raise RuntimeError("cannot write")

    def stop(self):
        pass


class Report:
    def __init__(self):
        self.value = []

    def add(self, items):
        self.value.extend(items)


@pytest.fixture(autouse=True)
def clean_registry():
    EVENTS.clear()
    yield
    for key in list(executor._HOSTS):
        executor._HOSTS.pop(key).stop()


def _source_spec(seq, incarnation="a", committed=(), **config):
    task = TaskSpec(
        "c", 0, f"{__name__}.CountingSourceTask", {"count": "5", **config}, incarnation, STRING, STRING, HEADERS
    )
    return SourceBatchSpec(task, seq, list(committed), max_records=2, max_wait_ms=500)


def _values(batches):
    return [v.decode() for b in batches for v in b.column("value").to_pylist()]


def test_source_instance_is_reused_batch_after_batch_and_offsets_reported():
    report = Report()
    assert _values(run_source_batch(_source_spec(0), report)) == ["v0", "v1"]
    assert _values(run_source_batch(_source_spec(1), report)) == ["v2", "v3"]
    assert EVENTS == ["start@0", "commit"]  # one instance; commit() after the first batch's offsets
    assert report.value[0][:5] == (0, 0, [({"p": 1}, {"i": 2})], 2, None) and report.value[0][6] == ["t"]
    assert report.value[1][2] == [({"p": 1}, {"i": 4})] and report.value[1][5] is False


def test_source_restarts_from_committed_offsets_on_new_incarnation_or_gap():
    report = Report()
    list(run_source_batch(_source_spec(0), report))
    # a restart (new incarnation) starts a fresh instance from the committed offsets
    out = _values(run_source_batch(_source_spec(0, "b", committed=[({"p": 1}, {"i": 2})]), report))
    assert out == ["v2", "v3"] and EVENTS == ["start@0", "stop", "start@2"]
    # a batch that is not the successor of the last one served (ran elsewhere) restarts too
    out = _values(run_source_batch(_source_spec(5, "b", committed=[({"p": 1}, {"i": 4})]), report))
    assert out == ["v4"] and EVENTS[-2:] == ["stop", "start@4"] and report.value[-1][5] is True


def test_source_failure_keeps_earlier_records_and_reports_the_traceback():
    report = Report()
    out = _values(run_source_batch(_source_spec(0, **{"fail.at": "1"}), report))
    assert out == ["v0"]
    _, _, offsets, count, trace, _, _, _ = report.value[0]
    assert offsets == [({"p": 1}, {"i": 1})] and count == 1
    assert "Traceback" in trace and "ValueError: bad record 1" in trace
    assert ("c", 0) not in executor._HOSTS  # the failed instance was stopped and dropped


def _kafka_batch(values, first_offset=0):
    n = len(values)
    return pa.RecordBatch.from_pydict(
        {
            "key": pa.array([None] * n, pa.binary()),
            "value": pa.array([v.encode() for v in values], pa.binary()),
            "topic": pa.array(["t"] * n),
            "partition": pa.array([0] * n, pa.int32()),
            "offset": pa.array(range(first_offset, first_offset + n), pa.int64()),
            "ts_ms": pa.array([1] * n, pa.int64()),
            "ts_type": pa.array([0] * n, pa.int32()),
            "headers_json": pa.array([None] * n, pa.string()),
        }
    )


def _sink_spec(seq, cls="PausingSinkTask", committed=0, start=0):
    task = TaskSpec("s", 0, f"{__name__}.{cls}", {"topics": "t"}, "x", STRING, STRING, HEADERS)
    return SinkBatchSpec(task, seq, [("t", 0)], {("t", 0): committed}, {("t", 0): start})


def _rows(batches):
    """(kind, topic, partition, offset, trace) of each output row."""
    rows = []
    for b in batches:
        columns = b.to_pydict()
        rows.extend(zip(*(columns[name] for name in ("kind", "topic", "partition", "offset", "trace")), strict=True))
    return rows


def test_sink_commits_what_pre_commit_returns_and_reports_paused_partitions():
    rows = _rows(run_sink_batch(_sink_spec(0), iter([_kafka_batch(["a", "b"])])))
    assert ("commit", "t", 0, 2, None) in rows
    assert ("paused", "t", 0, None, None) in rows
    host = executor._HOSTS[("s", 0)]
    assert host.task.seen == ["a", "b"]
    # an empty batch calls put([]); the task resumes, so no partition is reported paused
    rows = _rows(run_sink_batch(_sink_spec(1, committed=2, start=2), iter([])))
    assert "empty-put" in EVENTS and not [r for r in rows if r[0] == "paused"]


def test_fresh_sink_instance_behind_the_read_position_asks_for_a_rewind():
    rows = _rows(run_sink_batch(_sink_spec(3, committed=5, start=9), iter([_kafka_batch(["x"], 9)])))
    assert rows == [("rewind", "t", 0, 5, None)]


def test_sink_put_failure_is_an_error_row_with_the_traceback():
    rows = _rows(run_sink_batch(_sink_spec(0, cls="FailingSinkTask"), iter([_kafka_batch(["a"])])))
    assert len(rows) == 1 and rows[0][0] == "error"
    assert "RuntimeError: cannot write" in rows[0][4]


def test_a_record_that_fails_to_convert_fails_the_task_after_the_records_before_it():
    json_values = PluginSpec("sluice.converters.json.JsonConverter", {"schemas.enable": "false"})
    task = TaskSpec(
        "c", 0, f"{__name__}.BadValueSourceTask", {"count": "5", "bad.at": "2"}, "a", STRING, json_values, HEADERS
    )
    report = Report()
    out = _values(run_source_batch(SourceBatchSpec(task, 0, [], max_records=5, max_wait_ms=500), report))
    assert out == ['"v0"', '"v1"']  # delivered; the bad third record and everything after it are not
    _, _, offsets, count, trace, _, _, _ = report.value[0]
    assert offsets == [({"p": 1}, {"i": 2})] and count == 2
    assert "DataError" in trace and "Invalid type for STRING: class int" in trace


def test_a_source_host_that_retired_itself_is_replaced_by_a_fresh_instance():
    # A host whose task was paused for longer than IDLE_STOP_S stops itself; the next batch
    # (after a resume) must start a new instance from the committed offsets, not reuse it.
    report = Report()
    assert _values(run_source_batch(_source_spec(0), report)) == ["v0", "v1"]
    host = executor._HOSTS[("c", 0)]
    host._stopping.set()
    host.stop()
    out = _values(run_source_batch(_source_spec(1, committed=[({"p": 1}, {"i": 2})]), report))
    assert out == ["v2", "v3"]
    assert EVENTS == ["start@0", "stop", "start@2"] and report.value[-1][5] is True  # fresh


class SplittingSourceTask(SourceTask):
    """Polls 'head', then asks for a split read of two ranges, then polls 'tail'; each part
    yields 'row<i>' for its range (and fails on a configured row)."""

    def start(self, props):
        self.step = 0
        EVENTS.append("start")

    def poll(self):
        self.step += 1
        if self.step == 1:
            return [SourceRecord({"p": 1}, None, "t", value_schema=Schema.STRING_SCHEMA, value="head")]
        if self.step == 2:
            assert self.context.supports_split_reads
            self.context.request_split_read([(0, 3), (3, 5)])
            return [SourceRecord({"p": 1}, None, "t", value_schema=Schema.STRING_SCHEMA, value="tail")]
        return None

    @classmethod
    def read_split(cls, props, part):
        low, high = part
        for i in range(low, high):
            if str(i) == props.get("fail.row"):
                raise ValueError(f"cannot read row {i}")
            yield [SourceRecord({"p": 1}, None, "t", value_schema=Schema.STRING_SCHEMA, value=f"row{i}")]

    def stop(self):
        EVENTS.append("stop")


def _split_spec(seq, **config):
    task = TaskSpec("c", 0, f"{__name__}.SplittingSourceTask", dict(config), "a", STRING, STRING, HEADERS)
    return SourceBatchSpec(task, seq, [], max_records=10, max_wait_ms=2000)


def test_a_split_read_ends_the_batch_and_its_parts_are_read_on_their_own_then_polling_goes_on():
    report = Report()
    first = _split_spec(0)
    assert _values(run_source_batch(first, report)) == ["head"]
    assert report.value[0][7] == [(0, 3), (3, 5)] and report.value[0][4] is None

    parts = Report()
    out = [
        _values(executor.run_split_part(executor.SplitPartSpec(first.task, 0, i, part), parts))
        for i, part in enumerate(report.value[0][7])
    ]
    assert out == [["row0", "row1", "row2"], ["row3", "row4"]]
    assert [(e[2], e[4], e[5], e[6]) for e in parts.value] == [(0, 3, None, ["t"]), (1, 2, None, ["t"])]

    # the records polled after the request come in the next batch, from the same instance
    assert _values(run_source_batch(_split_spec(1), report)) == ["tail"]
    assert EVENTS == ["start"] and report.value[1][5] is False and report.value[1][7] == []


def test_a_failing_part_reports_the_rows_before_it_and_its_trace():
    spec = _split_spec(0, **{"fail.row": "4"}).task
    report = Report()
    out = _values(executor.run_split_part(executor.SplitPartSpec(spec, 0, 1, (3, 5)), report))
    ((_, _, index, _, count, trace, _),) = report.value
    assert out == ["row3"] and index == 1 and count == 1 and "cannot read row 4" in trace


class EndlessSourceTask(SourceTask):
    """Polls one record each call, forever; counts its polls."""

    def start(self, props):
        self.polls = 0

    def poll(self):
        self.polls += 1
        return [SourceRecord({"p": 1}, {"i": self.polls}, "t", value_schema=Schema.STRING_SCHEMA, value="x")]

    def stop(self):
        pass


def test_a_paused_source_instance_polls_no_more_until_its_next_batch():
    task = TaskSpec("e", 0, f"{__name__}.EndlessSourceTask", {}, "a", STRING, STRING, HEADERS)
    report = Report()
    list(run_source_batch(SourceBatchSpec(task, 0, [], max_records=3, max_wait_ms=500), report))
    host = executor._HOSTS[("e", 0)]
    assert executor.pause_host("e", 0, "a", timeout_s=5.0)
    polls = host.task.polls
    # The poll thread is parked: it would notify the gate after another poll.
    with host._gate:
        assert not host._gate.wait_for(lambda: host.task.polls != polls, timeout=0.5)
    assert host.task.polls == polls
    assert not executor.pause_host("e", 0, "another incarnation", timeout_s=1.0)
    # The next batch resumes polling.
    out = _values(run_source_batch(SourceBatchSpec(task, 1, [], max_records=3, max_wait_ms=2000), report))
    assert len(out) == 3
    # Three records left the bounded queue, so the poll thread polls at least three more times.
    wait_until(lambda: host.task.polls >= polls + 3, timeout=10, message="polling again")


class TimeoutSinkTask(SinkTask):
    """Asks for a call within 250 ms at start and after each put; records the calls."""

    def start(self, props):
        EVENTS.append("sink-start")
        self.context.timeout(250)

    def put(self, records):
        EVENTS.append(f"put:{len(records)}")
        self.context.timeout(250)

    def pre_commit(self, offsets):
        EVENTS.append("pre-commit")
        return {}

    def stop(self):
        pass


def test_a_start_only_batch_starts_the_sink_without_put_and_reports_the_timeout_it_asked_for():
    task = TaskSpec("s", 0, f"{__name__}.TimeoutSinkTask", {"topics": "t"}, "x", STRING, STRING, HEADERS)
    rows = _rows(run_sink_batch(SinkBatchSpec(task, 0, [("t", 0)], {("t", 0): 0}, {}, start_only=True), iter([])))
    assert EVENTS == ["sink-start"] and rows == [("timeout", None, None, 250, None)]
    # An idle put: put([]) and pre_commit, and the timeout asked for again.
    rows = _rows(run_sink_batch(SinkBatchSpec(task, 1, [("t", 0)], {("t", 0): 0}, {}), iter([])))
    assert EVENTS == ["sink-start", "put:0", "pre-commit"] and rows == [("timeout", None, None, 250, None)]
