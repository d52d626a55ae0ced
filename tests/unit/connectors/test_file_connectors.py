"""FileStream connectors driven directly, with a fake task context (no Spark)."""

from __future__ import annotations

import io
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sluice.api.config import ConfigType, Importance
from sluice.api.data import Schema, SchemaBuilder, Struct
from sluice.api.errors import ConfigError, ConnectError
from sluice.api.records import SinkBatch, SinkRecord
from sluice.api.source import ExactlyOnceSupport, OffsetStorageReader, SourceTaskContext, partition_key
from sluice.connectors.file import (
    FileStreamSinkConnector,
    FileStreamSinkTask,
    FileStreamSourceConnector,
    FileStreamSourceTask,
)
from sluice.connectors.file import source as source_module


class FakeOffsetReader(OffsetStorageReader):
    def __init__(self, stored: dict[str, dict[str, Any]] | None = None) -> None:
        self.stored = stored or {}
        self.asked: list[dict[str, Any]] = []

    def offsets(self, partitions):
        self.asked.extend(partitions)
        return {partition_key(p): self.stored.get(p.get("filename")) for p in partitions}


class FakeContext(SourceTaskContext):
    def __init__(self, reader: FakeOffsetReader | None = None) -> None:
        self.reader = reader or FakeOffsetReader()

    def configs(self):
        return {}

    def offset_storage_reader(self):
        return self.reader


@pytest.fixture(autouse=True)
def short_waits(monkeypatch):
    monkeypatch.setattr(source_module, "_WAIT_SECONDS", 0.05)


def start_task(path: Path | None, stored: int | None = None, **props: str) -> FileStreamSourceTask:
    task = FileStreamSourceTask()
    reader = FakeOffsetReader({str(path): {"position": stored}} if stored is not None else {})
    task.initialize(FakeContext(reader))
    config = {"topic": "lines", **{k.replace("_", "."): v for k, v in props.items()}}
    if path is not None:
        config["file"] = str(path)
    task.start(config)
    return task


def drain(task: FileStreamSourceTask, polls: int = 20) -> list:
    records = []
    for _ in range(polls):
        batch = task.poll()
        if batch:
            records.extend(batch)
        elif records:
            break
    return records


def test_lines_with_every_terminator(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"one\ntwo\r\nthree\rfour\n\nlast-partial")
    task = start_task(path)
    records = drain(task)
    assert [r.value for r in records] == ["one", "two", "three", "four", ""]
    assert [r.source_offset for r in records] == [
        {"position": 4},
        {"position": 9},
        {"position": 15},
        {"position": 20},
        {"position": 21},
    ]
    r = records[0]
    assert r.source_partition == {"filename": str(path)}
    assert r.topic == "lines" and r.kafka_partition is None
    assert r.key_schema is None and r.key is None
    assert r.value_schema == Schema.STRING_SCHEMA and not r.value_schema.optional
    assert abs(r.timestamp - time.time() * 1000) < 60_000
    # the partial line is completed by a later append
    with path.open("ab") as f:
        f.write(b" done\n")
    more = drain(task)
    assert [(r.value, r.source_offset) for r in more] == [("last-partial done", {"position": 39})]
    task.stop()


def test_trailing_carriage_return_waits_for_next_byte(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\r")
    task = start_task(path)
    assert task.poll() is None  # "a\r" could be the start of "a\r\n"
    with path.open("ab") as f:
        f.write(b"\nb\r")
    assert [(r.value, r.source_offset["position"]) for r in drain(task)] == [("a", 3)]
    with path.open("ab") as f:
        f.write(b"c\n")
    assert [(r.value, r.source_offset["position"]) for r in drain(task)] == [("b", 5), ("c", 7)]
    task.stop()


def test_utf8_positions_are_bytes(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes("h\u00e9\n\u2603\nbad\xff\n".encode("utf-8").replace(b"\xc3\xbf", b"\xff"))
    records = drain(start_task(path))
    assert [r.value for r in records] == ["h\u00e9", "\u2603", "bad\ufffd"]
    assert [r.source_offset["position"] for r in records] == [4, 8, 13]


def test_batch_size_caps_each_poll(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("".join(f"line-{i}\n" for i in range(25)))
    task = start_task(path, batch_size="10")
    sizes = []
    values = []
    for _ in range(10):
        batch = task.poll()
        if not batch:
            break
        sizes.append(len(batch))
        values.extend(r.value for r in batch)
    assert sizes == [10, 10, 5]
    assert values == [f"line-{i}" for i in range(25)]


def test_resume_from_stored_position(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("first\nsecond\nthird\n")
    first = drain(start_task(path))
    assert [r.value for r in first] == ["first", "second", "third"]
    stored = first[0].source_offset["position"]
    task = start_task(path, stored=stored)
    resumed = drain(task)
    assert [r.value for r in resumed] == ["second", "third"]
    assert resumed[-1].source_offset == first[-1].source_offset
    assert task.context.offset_storage_reader().asked == [{"filename": str(path)}]
    # altering the offset back to the last line's start re-emits exactly that line
    assert [r.value for r in drain(start_task(path, stored=first[1].source_offset["position"]))] == ["third"]


def test_invalid_stored_position_type(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("x\n")
    task = FileStreamSourceTask()
    task.initialize(FakeContext(FakeOffsetReader({str(path): {"position": "12"}})))
    task.start({"topic": "t", "file": str(path)})
    with pytest.raises(ConnectError, match="^Offset position is the incorrect type$"):
        task.poll()


def test_missing_file_then_created(tmp_path: Path, caplog) -> None:
    path = tmp_path / "later.txt"
    task = start_task(path)
    started = time.monotonic()
    assert task.poll() is None
    assert time.monotonic() - started >= 0.04  # waited (shortened from 1 s for the test)
    assert "Couldn't find file" in caplog.text
    path.write_text("hello\n")
    assert [r.value for r in drain(task)] == ["hello"]
    task.stop()


def test_stop_wakes_a_waiting_poll(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(source_module, "_IDLE_READ_WAIT_SECONDS", 30)
    monkeypatch.setattr(source_module, "_IDLE_READ_WAIT_MAX_SECONDS", 30)
    path = tmp_path / "empty.txt"
    path.write_text("")
    task = start_task(path)
    result: list = []
    poller = threading.Thread(target=lambda: result.append(task.poll()))
    started = time.monotonic()
    poller.start()
    time.sleep(0.1)
    task.stop()
    poller.join(5)
    assert not poller.is_alive() and result == [None]
    assert time.monotonic() - started < 5
    assert task.poll() is None  # stopped tasks return nothing


def test_stdin_has_no_offsets(monkeypatch) -> None:
    import os

    read_fd, write_fd = os.pipe()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.FileIO(read_fd, closefd=True)))
    os.write(write_fd, b"from stdin\nsecond\n")
    task = start_task(None)
    records = drain(task)
    os.close(write_fd)
    assert [r.value for r in records] == ["from stdin", "second"]
    assert all(r.source_partition is None and r.source_offset is None for r in records)


def test_bad_task_config() -> None:
    with pytest.raises(ConnectError, match="FileStreamSourceTask config missing topic setting"):
        FileStreamSourceTask().start({"file": "x"})
    with pytest.raises(ConnectError, match="Invalid FileStreamSourceTask configuration"):
        FileStreamSourceTask().start({"file": "x", "topic": "t", "batch.size": "many"})


# -- source connector -------------------------------------------------------------------


def test_source_connector() -> None:
    c = FileStreamSourceConnector()
    config = {"name": "src", "connector.class": "FileStreamSource", "tasks.max": "5", "file": "/tmp/x", "topic": "t"}
    c.start(config)
    assert c.task_class() is FileStreamSourceTask
    assert c.task_configs(5) == [config]
    assert c.exactly_once_support(config) is ExactlyOnceSupport.SUPPORTED
    assert c.exactly_once_support({"topic": "t"}) is ExactlyOnceSupport.UNSUPPORTED
    assert c.exactly_once_support({"topic": "t", "file": ""}) is ExactlyOnceSupport.UNSUPPORTED
    assert isinstance(c.version(), str) and c.version()
    c.stop()


def test_source_connector_config_def() -> None:
    cd = FileStreamSourceConnector().config()
    assert cd.names() == ["file", "topic", "batch.size"]
    keys = cd.config_keys()
    assert keys["file"].type is ConfigType.STRING and keys["file"].default_value is None
    assert keys["file"].importance is Importance.HIGH
    assert not keys["topic"].has_default and keys["topic"].importance is Importance.HIGH
    assert keys["batch.size"].type is ConfigType.INT and keys["batch.size"].default_value == 2000
    assert keys["batch.size"].importance is Importance.LOW
    assert cd.groups() == []
    errors = {v.name: v.error_messages for v in FileStreamSourceConnector().validate({"topic": ""}).config_values}
    assert errors == {
        "file": [],
        "topic": ["Invalid value  for configuration topic: String must be non-empty"],
        "batch.size": [],
    }
    errors = {v.name: v.error_messages for v in FileStreamSourceConnector().validate({}).config_values}
    assert errors["topic"] == ['Missing required configuration "topic" which has no default value.']


def test_source_alter_offsets() -> None:
    c = FileStreamSourceConnector()
    config = {"file": "/tmp/x", "topic": "t"}
    part = {"filename": "/tmp/x"}
    assert c.alter_offsets(config, {partition_key(part): {"position": 12}}) is True
    assert c.alter_offsets(config, [(part, {"position": 0}), ({"other": 1}, None), (None, None)]) is True
    assert c.alter_offsets(config, {}) is True
    with pytest.raises(ConnectError, match="Offsets cannot be modified if the 'file' configuration is unspecified."):
        c.alter_offsets({"topic": "t"}, {})
    cases = [
        ({"pos": 1}, "Offset objects should either be null or contain the key 'position'"),
        ({"position": "1"}, "The value for the 'position' key in the offset is expected to be a Long value"),
        ({"position": -1}, "The value for the 'position' key in the offset should be a non-negative value"),
    ]
    for offset, message in cases:
        with pytest.raises(ConnectError, match=message):
            c.alter_offsets(config, [(part, offset)])
    with pytest.raises(ConnectError, match="Partition objects cannot be null"):
        c.alter_offsets(config, [(None, {"position": 1})])
    with pytest.raises(ConnectError, match="Partition objects should contain the key 'filename'"):
        c.alter_offsets(config, [({"file": "x"}, {"position": 1})])


# -- sink -------------------------------------------------------------------------------


def _record(value: Any, schema: Schema | None = None, offset: int = 0) -> SinkRecord:
    return SinkRecord("t", 0, None, None, schema, value, offset)


def test_sink_writes_string_forms(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("existing\n")
    task = FileStreamSinkTask()
    task.start({"file": str(path), "topics": "t"})
    schema = (
        SchemaBuilder.struct()
        .field("f1", Schema.INT32_SCHEMA)
        .field("f2", Schema.OPTIONAL_STRING_SCHEMA)
        .field("f3", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    values = [
        "plain",
        None,
        {"k": 1, "k2": "v2"},
        Struct(schema).put("f1", 1).put("f3", "x"),
        ["a", "b"],
        True,
        1.5,
        "h\u00e9",
    ]
    task.put([_record(v) for v in values])
    task.flush({})
    assert path.read_text(encoding="utf-8") == (
        "existing\nplain\nnull\n{k=1, k2=v2}\nStruct{f1=1,f3=x}\n[a, b]\ntrue\n1.5\nh\u00e9\n"
    )
    task.put([])
    task.stop()


def test_sink_batch_writes_the_bytes_put_writes(tmp_path: Path) -> None:
    """put_batch (what the runtime calls) writes from the values column what put writes
    record by record: all strings, and a mix of kinds."""
    struct_schema = SchemaBuilder.struct().field("f", Schema.OPTIONAL_FLOAT32_SCHEMA).build()
    batches = [
        ["plain", "h\u00e9 \U0001f600", "", "line\nbreak"],
        [None, {"k": [1, 2.0]}, Struct(struct_schema).put("f", 0.1), 1e21, -0.0, False, "x"],
        [],
    ]
    written = {}
    for form in ("put", "put_batch"):
        path = tmp_path / f"{form}.txt"
        task = FileStreamSinkTask()
        task.start({"file": str(path), "topics": "t"})
        for values in batches:
            records = [_record(v, offset=i) for i, v in enumerate(values)]
            if form == "put":
                task.put(records)
            else:
                task.put_batch(SinkBatch.of(records))
        task.stop()
        written[form] = path.read_bytes()
    assert written["put_batch"] == written["put"]
    assert written["put"].startswith("plain\nh\u00e9 \U0001f600\n\nline\nbreak\nnull\n".encode())


def test_sink_records_are_in_the_file_once_put_returns(tmp_path: Path) -> None:
    """As Kafka's task (an unbuffered stream), without waiting for the offset flush."""
    path = tmp_path / "out.txt"
    task = FileStreamSinkTask()
    task.start({"file": str(path)})
    task.put([_record("first"), _record("second")])
    assert path.read_text(encoding="utf-8") == "first\nsecond\n"
    task.stop()


def test_sink_stdout_and_injected_stream(capsys) -> None:
    task = FileStreamSinkTask()
    task.start({"topics": "t"})
    task.put([_record("to stdout")])
    task.flush({})
    task.stop()
    assert capsys.readouterr().out == "to stdout\n"
    buf = io.StringIO()
    task = FileStreamSinkTask(buf)
    task.start({"file": "/nonexistent/ignored"})
    task.put([_record("x"), _record(None)])
    assert buf.getvalue() == "x\nnull\n"


def test_sink_cannot_open_file(tmp_path: Path) -> None:
    bad = tmp_path / "missing-dir" / "out.txt"
    with pytest.raises(ConnectError, match=f"^Couldn't find or create file '{bad}' for FileStreamSinkTask$"):
        FileStreamSinkTask().start({"file": str(bad)})


def test_sink_connector() -> None:
    c = FileStreamSinkConnector()
    config = {"name": "sink", "topics": "t", "file": "/tmp/out", "tasks.max": "3"}
    c.start(config)
    assert c.task_class() is FileStreamSinkTask
    configs = c.task_configs(3)
    assert configs == [config, config, config]
    assert configs[0] is not configs[1]
    assert c.alter_offsets(config, {}) is True
    cd = c.config()
    assert cd.names() == ["file"]
    key = cd.config_keys()["file"]
    assert key.default_value is None and key.importance is Importance.HIGH
    assert key.documentation == "Destination filename. If not specified, the standard output will be used"
    with pytest.raises(ConfigError):
        cd.parse({"file": 5})


def test_an_idle_poll_waits_longer_each_time_up_to_the_most_and_less_once_lines_come(
    tmp_path: Path, monkeypatch
) -> None:
    """At the end of the file a poll waits the least (50 ms), then twice as long each time it
    finds nothing, up to the most (Kafka's 1 s); lines bring the wait back to the least
    (shortened here to 1 ms and 16 ms)."""
    monkeypatch.setattr(source_module, "_IDLE_READ_WAIT_SECONDS", 0.001)
    monkeypatch.setattr(source_module, "_IDLE_READ_WAIT_MAX_SECONDS", 0.016)
    path = tmp_path / "in.txt"
    path.write_text("")
    task = start_task(path)
    waits = []
    for _ in range(6):
        assert task.poll() is None
        waits.append(task._idle_wait_s)
    assert waits == [0.002, 0.004, 0.008, 0.016, 0.016, 0.016]
    with path.open("a") as f:
        f.write("hello\n")
    assert [r.value for r in task.poll() or []] == ["hello"]
    assert task._idle_wait_s == 0.001
    task.stop()


def test_a_named_pipe_is_read_as_its_writer_writes(tmp_path: Path) -> None:
    """A pipe has no size to look at (unlike a regular file, whose size says whether lines
    were appended): it is read whenever the task looks."""
    path = tmp_path / "in.fifo"
    os.mkfifo(path)

    def write() -> None:  # a pipe's open waits for its other end: the writer runs beside the task
        fd = os.open(path, os.O_WRONLY)
        os.write(fd, b"one\ntwo\n")
        os.close(fd)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    task = start_task(path)
    assert [r.value for r in drain(task)] == ["one", "two"]
    writer.join(10)
    task.stop()


def test_a_file_that_shrank_is_not_read_again_from_the_start(tmp_path: Path) -> None:
    """As in Kafka: the task reads on from its position, whatever happened before it."""
    path = tmp_path / "in.txt"
    path.write_text("one\ntwo\n")
    task = start_task(path)
    assert [r.value for r in drain(task)] == ["one", "two"]
    path.write_text("x\n")  # truncated, and shorter than the position
    assert task.poll() is None
    with path.open("a") as f:
        f.write("three-and-more\n")
    assert [(r.value, r.source_offset["position"]) for r in drain(task)] == [("and-more", 17)]
    task.stop()
