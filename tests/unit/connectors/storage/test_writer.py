"""When a storage sink commits files, what is in them and which offsets it reports.

The store here keeps committed files in a dict (a test double of our own FileStore); the
real S3 and HDFS stores are tested against real servers in tests/integration.
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sluice.api import ConnectError, SchemaBuilder, SinkRecord, Struct, TopicPartition
from sluice.connectors.storage.config import StorageSettings
from sluice.connectors.storage.formats import format_for
from sluice.connectors.storage.partitioner import make_partitioner, make_timestamp_extractor
from sluice.connectors.storage.s3 import CONFIG_DEF
from sluice.connectors.storage.writer import FileStore, ReadyFile, TopicPartitionWriter

TP = TopicPartition("events", 0)


def schema_v(version: int, with_extra: bool):
    builder = SchemaBuilder.struct().name("Event").version(version).field("id", SchemaBuilder.int64().build())
    if with_extra:
        builder = builder.field("note", SchemaBuilder.string().optional().default_value("none").build())
    return builder.build()


V1 = schema_v(1, False)
V2 = schema_v(2, True)


def event(offset: int, schema=V1, timestamp: int | None = None, **fields) -> SinkRecord:
    value = Struct(schema).put("id", offset)
    for name, field_value in fields.items():
        value.put(name, field_value)
    return SinkRecord("events", 0, None, None, schema, value, offset, timestamp)


class MemoryStore(FileStore):
    def __init__(self) -> None:
        self.commits: list[tuple[list[tuple[str, int, int, list]], int]] = []
        self.fail = False

    def commit(self, tp: TopicPartition, files: list[ReadyFile], next_offset: int) -> None:
        if self.fail:
            raise ConnectError("the store is down")
        contents = []
        for file in files:
            raw = file.local_path.read_bytes().splitlines()
            lines = [json.loads(line) if line.startswith(b"{") else line for line in raw]
            assert len(lines) == file.records
            contents.append((file.directory, file.start_offset, file.end_offset, lines))
        self.commits.append((sorted(contents), next_offset))


class Clock:
    def __init__(self, now: int = 1_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def make_writer(tmp_path: Path, *, clock=None, reported=None, uploads=None, store=None, **overrides: str):
    props = {"s3.bucket.name": "b", "format.class": "JsonFormat", "flush.size": "3", "timezone": "UTC"}
    props.update(overrides)
    values = CONFIG_DEF.parse(props)
    settings = StorageSettings(values)
    partitioner = make_partitioner(values)
    extractor = partitioner.timestamp_extractor
    if extractor is None and values["rotate.interval.ms"] > 0:
        extractor = make_timestamp_extractor(values["timestamp.extractor"], values["timestamp.field"])
    store = store or MemoryStore()
    errors = reported if reported is not None else []
    writer = TopicPartitionWriter(
        TP,
        settings,
        format_for(settings.format_class, props, store="s3"),
        partitioner,
        store,
        tmp_path,
        lambda record, error: errors.append((record.kafka_offset, str(error))),
        extractor,
        clock_ms=clock or Clock(),
        uploads=uploads,
    )
    return writer, store


def test_flush_size_commits_every_n_records_and_moves_the_offset(tmp_path):
    writer, store = make_writer(tmp_path)
    for offset in range(7):
        writer.write(event(offset))
    assert [(c[0][0][1], c[0][0][2], c[1]) for c in store.commits] == [(0, 2, 3), (3, 5, 6)]
    assert store.commits[0][0][0][3] == [{"id": 0}, {"id": 1}, {"id": 2}]
    assert writer.pop_offset_to_commit() == 6
    assert writer.pop_offset_to_commit() is None  # nothing new committed since
    writer.abort()  # record 6 was only in an open file: read again after a restart
    assert len(store.commits) == 2 and not list(tmp_path.iterdir())


def test_all_files_of_a_topic_partition_are_committed_together(tmp_path):
    writer, store = make_writer(tmp_path, **{"partitioner.class": "FieldPartitioner", "partition.field.name": "id"})
    for offset in (10, 11, 12):
        writer.write(event(offset))
    [(files, next_offset)] = store.commits
    assert next_offset == 13
    assert files == [
        ("events/id=10", 10, 10, [{"id": 10}]),
        ("events/id=11", 11, 11, [{"id": 11}]),
        ("events/id=12", 12, 12, [{"id": 12}]),
    ]


def test_rotate_interval_uses_record_time(tmp_path):
    writer, store = make_writer(
        tmp_path, **{"flush.size": "100", "rotate.interval.ms": "1000", "timestamp.extractor": "Record"}
    )
    for offset, ts in enumerate([5_000, 5_400, 5_999, 6_000, 6_500]):
        writer.write(event(offset, timestamp=ts))
    # the record at 6000 is 1000 ms after the file's first: the file is committed before it
    assert [(c[0][0][1], c[0][0][2], c[1]) for c in store.commits] == [(0, 2, 3)]
    writer.tick()  # record time does not move by itself
    assert len(store.commits) == 1


def test_time_based_partitioner_commits_when_records_move_to_the_next_partition(tmp_path):
    writer, store = make_writer(
        tmp_path,
        **{
            "flush.size": "100",
            "rotate.interval.ms": "3600000",
            "partitioner.class": "HourlyPartitioner",
            "locale": "en",
            "timestamp.extractor": "Record",
        },
    )
    hour = 3_600_000
    writer.write(event(0, timestamp=10 * hour + 5))
    writer.write(event(1, timestamp=10 * hour + 900))
    writer.write(event(2, timestamp=11 * hour + 1))
    [(files, next_offset)] = store.commits
    assert files == [("events/year=1970/month=01/day=01/hour=10", 0, 1, [{"id": 0}, {"id": 1}])] and next_offset == 2


def test_scheduled_rotation_commits_on_the_wall_clock_without_new_records(tmp_path):
    clock = Clock(now=60_000 * 1000 + 10)
    writer, store = make_writer(tmp_path, clock=clock, **{"flush.size": "100", "rotate.schedule.interval.ms": "60000"})
    writer.write(event(0))
    writer.tick()
    assert store.commits == []
    clock.now += 59_990  # the next whole minute
    writer.tick()
    assert [(c[0][0][1], c[1]) for c in store.commits] == [(0, 1)]
    assert writer.pop_offset_to_commit() == 1


def test_a_schema_change_commits_the_file_with_compatibility_none(tmp_path):
    writer, store = make_writer(tmp_path, **{"flush.size": "100"})
    writer.write(event(0))
    writer.write(event(1, schema=V2, note="x"))
    writer.write(event(2, schema=V2, note="y"))
    assert [(c[0][0][1], c[0][0][2]) for c in store.commits] == [(0, 0)]


def test_backward_compatibility_projects_older_records_to_the_newer_schema(tmp_path):
    writer, store = make_writer(tmp_path, **{"flush.size": "4", "schema.compatibility": "BACKWARD"})
    writer.write(event(0))  # v1
    writer.write(event(1, schema=V2, note="x"))  # newer: commits the v1 file
    writer.write(event(2))  # older: projected to v2, same file
    writer.write(event(3, schema=V2, note="z"))
    writer.write(event(4))
    writer.write(event(5))
    assert [c[0][0][3] for c in store.commits] == [
        [{"id": 0}],
        [{"id": 1, "note": "x"}, {"id": 2, "note": "none"}, {"id": 3, "note": "z"}, {"id": 4, "note": "none"}],
    ]


def test_schemaless_after_schema_fails_the_task(tmp_path):
    writer, _ = make_writer(tmp_path)
    writer.write(event(0))
    with pytest.raises(ConnectError, match="schema-based and schema-less"):
        writer.write(SinkRecord("events", 0, None, None, None, {"id": 1}, 1))


def test_unplaceable_records_are_reported_and_passed(tmp_path):
    reported: list = []
    writer, store = make_writer(
        tmp_path, reported=reported, **{"partitioner.class": "FieldPartitioner", "partition.field.name": "note"}
    )
    writer.write(event(0, schema=V2, note="a"))
    writer.write(event(1))  # v1 has no field "note"
    writer.write(event(2, schema=V2, note="a"))
    writer.write(event(3, schema=V2, note="a"))
    assert [offset for offset, _ in reported] == [1] and "no field 'note'" in reported[0][1]
    [(files, next_offset)] = store.commits
    assert [(f[1], f[2], len(f[3])) for f in files] == [(0, 3, 3)] and next_offset == 4


def test_null_values(tmp_path):
    reported: list = []
    writer, store = make_writer(tmp_path, reported=reported, **{"behavior.on.null.values": "ignore"})
    writer.write(SinkRecord("events", 0, None, None, V1, None, 0))
    writer.tick()
    assert store.commits == [] and writer.pop_offset_to_commit() == 1  # only skipped records: passed
    failing, _ = make_writer(tmp_path, reported=reported)
    failing.write(SinkRecord("events", 0, None, None, V1, None, 5))
    assert reported and reported[0][0] == 5 and "behavior.on.null.values" in reported[0][1]


def test_a_failed_commit_keeps_the_offset_where_it_was(tmp_path):
    writer, store = make_writer(tmp_path)
    for offset in range(3):
        writer.write(event(offset))
    store.fail = True
    writer.write(event(3))
    writer.write(event(4))
    with pytest.raises(ConnectError, match="down"):
        writer.write(event(5))
    assert writer.pop_offset_to_commit() == 3


def test_a_record_the_format_refuses_is_reported_not_half_written(tmp_path):
    reported: list = []
    writer, store = make_writer(tmp_path, reported=reported, **{"format.class": "ByteArrayFormat"})
    raw = [SinkRecord("events", 0, None, None, None, b"a", 0), SinkRecord("events", 0, None, None, None, "text", 1)]
    raw.append(SinkRecord("events", 0, None, None, None, b"c", 2))
    raw.append(SinkRecord("events", 0, None, None, None, b"d", 3))
    for record in raw:
        writer.write(record)
    assert [offset for offset, _ in reported] == [1]
    [(files, next_offset)] = store.commits
    assert files == [("events/partition=0", 0, 3, [b"a", b"c", b"d"])] and next_offset == 4


class GatedStore(MemoryStore):
    """Commits wait until the test opens the gate."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def commit(self, tp, files, next_offset):
        assert self.gate.wait(10)
        super().commit(tp, files, next_offset)


def test_background_commits_move_the_offset_only_once_done(tmp_path):
    store = GatedStore()
    with ThreadPoolExecutor(1) as uploads:
        writer, _ = make_writer(tmp_path, uploads=uploads, store=store)
        for offset in range(4):
            writer.write(event(offset))  # the file of 0-2 is being committed; 3 goes on
        assert writer.pop_offset_to_commit() is None and store.commits == []
        store.gate.set()
        writer.drain()
        assert writer.pop_offset_to_commit() == 3
        assert [(c[0][0][1], c[0][0][2]) for c in store.commits] == [(0, 2)]


def test_a_failed_background_commit_fails_the_next_call(tmp_path):
    store = MemoryStore()
    store.fail = True
    with ThreadPoolExecutor(1) as uploads:
        writer, _ = make_writer(tmp_path, uploads=uploads, store=store)
        for offset in range(3):
            writer.write(event(offset))
        with pytest.raises(ConnectError, match="down"):
            writer.drain()
        assert writer.pop_offset_to_commit() is None


@pytest.mark.parametrize("compatibility", ["NONE", "BACKWARD"])
@pytest.mark.parametrize("nulls", ["ignore", "fail"])
def test_values_written_as_a_run_commit_what_records_written_one_by_one_commit(tmp_path, nulls, compatibility):
    records = []
    for offset in range(20):
        record = event(offset)
        if offset % 6 == 5:
            record = record.new_record(value=None)
        elif offset in (3, 4):
            record = record.new_record(value=object())  # no JSON value: reported
        elif offset in (9, 10):
            record = event(offset, V2, note="newer")  # another schema: a new file
        records.append(record)
    outcomes = []
    for path in ("records", "run"):
        reported: list = []
        work = tmp_path / path
        work.mkdir()
        props = {"behavior.on.null.values": nulls, "schema.compatibility": compatibility}
        writer, store = make_writer(work, reported=reported, **props)
        for start in range(0, len(records), 8):
            chunk = records[start : start + 8]
            if path == "records":
                for record in chunk:
                    writer.write(record)
            else:
                writer.write_values(
                    "partition=0",
                    [r.value for r in chunk],
                    [r.value_schema for r in chunk],
                    [r.kafka_offset for r in chunk],
                    chunk.__getitem__,
                )
        outcomes.append((store.commits, reported, writer.pop_offset_to_commit(), writer.record_count))
        writer.abort()
    assert outcomes[0] == outcomes[1]
    commits, reported, _, _ = outcomes[0]
    assert commits and reported
