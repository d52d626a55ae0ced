"""The JDBC source connector and task driven directly on SQLite, with a fake task
context (no Spark, no Kafka): modes, offsets and resume, task spreading, the table
monitor, query mode, schemas and config validation."""

from __future__ import annotations

import datetime as dt
import decimal
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from sluice.api.connector import ConnectorContext
from sluice.api.data import Date, Decimal, Schema, Time, Timestamp
from sluice.api.errors import ConfigError, ConnectError
from sluice.api.source import ExactlyOnceSupport, OffsetStorageReader, SourceTaskContext, partition_key
from sluice.connectors.jdbc import JdbcSourceConnector, JdbcSourceTask
from sluice.connectors.jdbc.source import group_partitions
from sluice.connectors.jdbc.source_querier import Offset
from sluice.connectors.jdbc.source_queries import TableId, parse_table_list
from tests.helpers import wait_until

UTC = dt.UTC


class FakeOffsetReader(OffsetStorageReader):
    def __init__(self, stored: dict[Any, dict[str, Any]] | None = None) -> None:
        self.stored = stored or {}
        self.asked: list[dict[str, Any]] = []

    def offsets(self, partitions):
        self.asked.extend(partitions)
        return {partition_key(p): self.stored.get(partition_key(p)) for p in partitions}


class FakeTaskContext(SourceTaskContext):
    def __init__(self, config: dict[str, str], reader: FakeOffsetReader) -> None:
        self._config, self.reader = config, reader

    def configs(self):
        return dict(self._config)

    def offset_storage_reader(self):
        return self.reader


class FakeConnectorContext(ConnectorContext):
    def __init__(self) -> None:
        self.requests = 0
        self.errors: list[BaseException] = []
        self.changed = threading.Event()

    def request_task_reconfiguration(self) -> None:
        self.requests += 1
        self.changed.set()

    def raise_error(self, error: BaseException) -> None:
        self.errors.append(error)


@pytest.fixture
def db(tmp_path: Path):
    path = tmp_path / "source.db"
    conn = sqlite3.connect(path)
    yield path, conn
    conn.close()


def base_props(path: Path, **extra: str) -> dict[str, str]:
    props = {"connection.url": f"jdbc:sqlite:{path}", "topic.prefix": "db-", "poll.interval.ms": "0"}
    props.update({k.replace("_", "."): v for k, v in extra.items()})
    return props


def offsets_of(records) -> dict[Any, dict[str, Any]]:
    """What the framework would commit: the last offset of each partition."""
    out: dict[Any, dict[str, Any]] = {}
    for r in records:
        out[partition_key(r.source_partition)] = r.source_offset
    return out


def start_task(
    props: dict[str, str], stored: dict[Any, dict[str, Any]] | None = None, tables: str | None = None
) -> JdbcSourceTask:
    config = dict(props)
    if tables is not None:
        config["tables"] = tables
    config.setdefault("tables", "")
    config.setdefault("tables.fetched", "true")
    task = JdbcSourceTask()
    task.initialize(FakeTaskContext(config, FakeOffsetReader(stored)))
    task.start(config)
    return task


def drain(task: JdbcSourceTask, limit: int = 100) -> list:
    """Poll until a poll returns nothing. With a bulk mode task, time stands still (each
    table is read once)."""
    out: list = []
    bulk = task._settings is not None and task._settings.mode == "bulk"
    if bulk:
        task._settings.poll_interval_ms = 3_600_000
        frozen = task._clock()
        task._clock = lambda: frozen + 3600
    for _ in range(limit):
        batch = task._poll_once(task._settings) if bulk else task.poll()
        if not batch:
            if bulk:
                task._clock = lambda: frozen + 7200
            return out
        out.extend(batch)
    raise AssertionError("the task kept returning records")


def ids(records, column: str = "id") -> list[int]:
    return [r.value.get(column) for r in records]


# --------------------------------------------------------------------------- modes


def test_bulk_reads_the_whole_table_on_every_poll(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
    conn.executemany("INSERT INTO users (name) VALUES (?)", [("a",), ("b",)])
    conn.commit()
    task = start_task(base_props(path, mode="bulk"), tables='"users"')
    try:
        first = drain(task)
        assert [r.value.get("name") for r in first] == ["a", "b"]
        assert {r.topic for r in first} == {"db-users"}
        assert first[0].source_partition == {"table": "users"} and first[0].source_offset is None
        assert first[0].key is None and first[0].key_schema is None
        conn.execute("INSERT INTO users (name) VALUES ('c')")
        conn.commit()
        assert [r.value.get("name") for r in drain(task)] == ["a", "b", "c"]
    finally:
        task.stop()


def test_bulk_waits_for_the_poll_interval(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.commit()
    task = start_task(base_props(path, mode="bulk", poll_interval_ms="60000"), tables='"t"')
    now = [1000.0]
    task._clock = lambda: now[0]
    try:
        assert len(task.poll()) == 1
        assert task._poll_once(task._settings) == []
        now[0] += 59
        assert task._poll_once(task._settings) == []
        now[0] += 2
        assert len(task._poll_once(task._settings)) == 1
    finally:
        task.stop()


def test_incrementing_picks_up_only_new_rows_and_resumes_from_offsets(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, what TEXT)")
    conn.executemany("INSERT INTO events (what) VALUES (?)", [("a",), ("b",), ("c",)])
    conn.commit()
    props = base_props(path, mode="incrementing", incrementing_column_name="id")
    task = start_task(props, tables='"events"')
    try:
        records = drain(task)
        assert ids(records) == [1, 2, 3]
        assert records[0].source_partition == {"protocol": "1", "table": "events"}
        assert [r.source_offset for r in records] == [{"incrementing": 1}, {"incrementing": 2}, {"incrementing": 3}]
        conn.execute("UPDATE events SET what = 'changed' WHERE id = 2")  # not seen in this mode
        conn.executemany("INSERT INTO events (what) VALUES (?)", [("d",), ("e",)])
        conn.commit()
        more = drain(task)
        assert ids(more) == [4, 5]
        committed = offsets_of(records + more)
    finally:
        task.stop()
    conn.execute("INSERT INTO events (what) VALUES ('f')")
    conn.commit()
    resumed = start_task(props, committed, tables='"events"')
    try:
        assert ids(drain(resumed)) == [6]
    finally:
        resumed.stop()


def test_incrementing_resumes_from_a_protocol_0_partition(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE events (id INTEGER PRIMARY KEY)")
    conn.executemany("INSERT INTO events (id) VALUES (?)", [(i,) for i in range(1, 6)])
    conn.commit()
    stored = {partition_key({"table": "events"}): {"incrementing": 3}}
    task = start_task(base_props(path, mode="incrementing", incrementing_column_name="id"), stored, '"events"')
    try:
        assert ids(drain(task)) == [4, 5]
        asked = task.context.offset_storage_reader().asked
        assert {"protocol": "1", "table": "events"} in asked and {"table": "events"} in asked
    finally:
        task.stop()


def test_incrementing_column_defaults_to_the_autoincrement_column(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE auto (rid INTEGER PRIMARY KEY, v TEXT)")
    conn.executemany("INSERT INTO auto (v) VALUES (?)", [("x",), ("y",)])
    conn.commit()
    task = start_task(base_props(path, mode="incrementing"), tables='"auto"')
    try:
        assert [r.source_offset for r in drain(task)] == [{"incrementing": 1}, {"incrementing": 2}]
    finally:
        task.stop()


def test_batch_max_rows_limits_each_poll_and_tables_take_turns(db) -> None:
    path, conn = db
    for name in ("a", "b"):
        conn.execute(f"CREATE TABLE {name} (id INTEGER PRIMARY KEY)")
        conn.executemany(f"INSERT INTO {name} (id) VALUES (?)", [(i,) for i in range(1, 6)])
    conn.commit()
    task = start_task(
        base_props(path, mode="incrementing", incrementing_column_name="id", batch_max_rows="2"), tables='"a","b"'
    )
    try:
        polls = []
        for _ in range(10):
            batch = task.poll()
            if not batch:
                break
            polls.append([(r.topic, r.value.get("id")) for r in batch])
        # at most 2 rows of a table per poll; a table's query is read to its end, then the next table
        assert all(len([x for x in p if x[0] == t]) <= 2 for p in polls for t in ("db-a", "db-b"))
        flat = [x for p in polls for x in p]
        assert [i for t, i in flat if t == "db-a"] == [1, 2, 3, 4, 5]
        assert [i for t, i in flat if t == "db-b"] == [1, 2, 3, 4, 5]
        assert polls[0] == [("db-a", 1), ("db-a", 2)]
        # when a's rows end, the same poll moves on to b
        assert ("db-a", 5) in polls[2] and ("db-b", 1) in polls[2]
    finally:
        task.stop()


def _ts(seconds: int, micros: int = 0) -> str:
    value = dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(seconds=seconds, microseconds=micros)
    return value.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _nanos(text: str) -> int:
    value = dt.datetime.fromisoformat(text).replace(tzinfo=UTC)
    delta = value - dt.datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86400 + delta.seconds) * 10**9 + delta.microseconds * 1000


def test_timestamp_mode_picks_up_new_and_changed_rows(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, updated TIMESTAMP NOT NULL)")
    conn.executemany(
        "INSERT INTO items VALUES (?, ?, ?)", [(1, "a", _ts(1, 500_000)), (2, "b", _ts(2)), (3, "c", _ts(3))]
    )
    conn.commit()
    props = base_props(path, mode="timestamp", timestamp_column_name="updated")
    task = start_task(props, tables='"items"')
    try:
        records = drain(task)
        assert ids(records) == [1, 2, 3]
        first = records[0]
        assert first.source_partition == {"protocol": "1", "table": "items"}
        n = _nanos(_ts(1, 500_000))
        assert first.source_offset == {"timestamp": n // 10**6, "timestamp_nanos": n % 10**9}
        assert first.source_offset["timestamp_nanos"] == 500_000_000
        assert first.value.get("updated") == dt.datetime(2024, 1, 1, 0, 0, 1, 500_000, tzinfo=UTC)
        assert drain(task) == []
        conn.execute("UPDATE items SET name = 'b2', updated = ? WHERE id = 2", (_ts(10),))
        conn.execute("INSERT INTO items VALUES (4, 'd', ?)", (_ts(11),))
        conn.commit()
        changed = drain(task)
        assert [(r.value.get("id"), r.value.get("name")) for r in changed] == [(2, "b2"), (4, "d")]
        committed = offsets_of(records + changed)
    finally:
        task.stop()
    conn.execute("INSERT INTO items VALUES (5, 'e', ?)", (_ts(12),))
    conn.commit()
    resumed = start_task(props, committed, tables='"items"')
    try:
        assert ids(drain(resumed)) == [5]
    finally:
        resumed.stop()


def test_timestamp_mode_holds_the_offset_back_within_equal_timestamps(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, updated TIMESTAMP NOT NULL)")
    conn.executemany("INSERT INTO items VALUES (?, ?)", [(1, _ts(1)), (2, _ts(2)), (3, _ts(2)), (4, _ts(3))])
    conn.commit()
    task = start_task(
        base_props(path, mode="timestamp", timestamp_column_name="updated", batch_max_rows="2"), tables='"items"'
    )
    try:
        records = drain(task)
        offsets = [Offset.from_map(r.source_offset).timestamp_nanos for r in records]
        # rows 2 and 3 share a timestamp: row 2's offset stays at row 1's until row 3 is read
        assert offsets == [_nanos(_ts(1)), _nanos(_ts(1)), _nanos(_ts(2)), _nanos(_ts(3))]
    finally:
        task.stop()


def test_timestamp_mode_respects_the_delay(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, updated TIMESTAMP NOT NULL)")
    now = dt.datetime.now(UTC)
    conn.executemany(
        "INSERT INTO items VALUES (?, ?)",
        [
            (1, (now - dt.timedelta(hours=2)).strftime("%Y-%m-%d %H:%M:%S")),
            (2, (now - dt.timedelta(minutes=1)).strftime("%Y-%m-%d %H:%M:%S")),
        ],
    )
    conn.commit()
    task = start_task(
        base_props(path, mode="timestamp", timestamp_column_name="updated", timestamp_delay_interval_ms=str(3600_000)),
        tables='"items"',
    )
    try:
        assert ids(drain(task)) == [1]
    finally:
        task.stop()


def test_timestamp_initial_skips_older_rows(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, updated TIMESTAMP NOT NULL)")
    conn.executemany("INSERT INTO items VALUES (?, ?)", [(1, _ts(1)), (2, _ts(100))])
    conn.commit()
    initial = _nanos(_ts(50)) // 10**6
    task = start_task(
        base_props(path, mode="timestamp", timestamp_column_name="updated", timestamp_initial=str(initial)),
        tables='"items"',
    )
    try:
        assert ids(drain(task)) == [2]
    finally:
        task.stop()


def test_timestamp_incrementing_mode(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, v TEXT, modified TIMESTAMP NOT NULL)")
    conn.executemany("INSERT INTO items VALUES (?, ?, ?)", [(1, "a", _ts(5)), (2, "b", _ts(5)), (3, "c", _ts(6))])
    conn.commit()
    props = base_props(
        path,
        mode="timestamp+incrementing",
        timestamp_column_name="modified",
        incrementing_column_name="id",
        batch_max_rows="1",
    )
    task = start_task(props, tables='"items"')
    try:
        records = drain(task)
        assert ids(records) == [1, 2, 3]
        n = _nanos(_ts(5))
        assert records[1].source_offset == {"incrementing": 2, "timestamp": n // 10**6, "timestamp_nanos": n % 10**9}
        committed = offsets_of(records[:2])  # stopped after row 2
    finally:
        task.stop()
    # a new row with the same timestamp as the offset and a higher id, a changed row, a new row
    conn.execute("INSERT INTO items VALUES (4, 'd', ?)", (_ts(5),))
    conn.execute("UPDATE items SET v = 'a2', modified = ? WHERE id = 1", (_ts(7),))
    conn.commit()
    resumed = start_task(props, committed, tables='"items"')
    try:
        assert [(r.value.get("id"), r.value.get("v")) for r in drain(resumed)] == [(4, "d"), (3, "c"), (1, "a2")]
    finally:
        resumed.stop()


def test_several_timestamp_columns_are_coalesced(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, modified TIMESTAMP, created TIMESTAMP NOT NULL)")
    conn.executemany("INSERT INTO items VALUES (?, ?, ?)", [(1, None, _ts(1)), (2, _ts(9), _ts(2)), (3, None, _ts(3))])
    conn.commit()
    task = start_task(base_props(path, mode="timestamp", timestamp_column_name="modified,created"), tables='"items"')
    try:
        records = drain(task)
        assert ids(records) == [1, 3, 2]
        assert Offset.from_map(records[-1].source_offset).timestamp_nanos == _nanos(_ts(9))
    finally:
        task.stop()


def test_db_timezone_reads_naive_timestamps_in_that_zone(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, at TIMESTAMP NOT NULL)")
    conn.execute("INSERT INTO items VALUES (1, '2024-07-01 12:00:00')")
    conn.commit()
    task = start_task(
        base_props(path, mode="timestamp", timestamp_column_name="at", db_timezone="Europe/Paris"), tables='"items"'
    )
    try:
        (record,) = drain(task)
        assert record.value.get("at") == dt.datetime(2024, 7, 1, 10, 0, tzinfo=UTC)
        assert Offset.from_map(record.source_offset).timestamp_nanos == _nanos("2024-07-01 10:00:00")
        assert drain(task) == []  # the offset is compared in the same zone
    finally:
        task.stop()


def test_nullable_offset_columns_are_refused_unless_validation_is_off(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE loose (id INTEGER, updated TIMESTAMP)")
    conn.execute("INSERT INTO loose VALUES (1, '2024-01-01 00:00:00')")
    conn.commit()
    with pytest.raises(ConnectError, match="nullable"):
        start_task(base_props(path, mode="incrementing", incrementing_column_name="id"), tables='"loose"')
    with pytest.raises(ConnectError, match="nullable"):
        start_task(base_props(path, mode="timestamp", timestamp_column_name="updated"), tables='"loose"')
    task = start_task(
        base_props(path, mode="incrementing", incrementing_column_name="id", validate_non_null="false"),
        tables='"loose"',
    )
    try:
        assert ids(drain(task)) == [1]
    finally:
        task.stop()


def test_a_missing_offset_column_fails_the_task_start(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
    conn.commit()
    with pytest.raises(ConnectError, match="Incrementing column: nope does not exist"):
        start_task(base_props(path, mode="incrementing", incrementing_column_name="nope"), tables='"t"')


# --------------------------------------------------------------------------- query mode


def test_query_mode_appends_the_criteria_and_uses_the_prefix_as_topic(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE a (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
    conn.execute("CREATE TABLE b (a_id INTEGER NOT NULL, score NUMERIC(6,2))")
    conn.executemany("INSERT INTO a VALUES (?, ?)", [(1, "x"), (2, "y"), (3, "z")])
    conn.executemany("INSERT INTO b VALUES (?, ?)", [(1, 1.5), (2, 2.25), (3, 3)])
    conn.commit()
    props = base_props(
        path,
        mode="incrementing",
        incrementing_column_name="id",
        topic_prefix="joined",
        query="SELECT a.id, a.name, b.score FROM a JOIN b ON b.a_id = a.id",
    )
    task = start_task(props)
    try:
        records = drain(task)
        assert ids(records) == [1, 2, 3]
        assert {r.topic for r in records} == {"joined"}
        assert records[0].source_partition == {"query": "query"}
        assert records[0].source_offset == {"incrementing": 1}
        schema = records[0].value_schema
        assert schema.name is None
        assert [f.name for f in schema.fields()] == ["id", "name", "score"]
        assert (
            schema.field("score").schema
            == Decimal.builder(2).parameter("connect.decimal.precision", "6").optional().build()
        )
        assert records[1].value.get("score") == decimal.Decimal("2.25")
        committed = offsets_of(records)
    finally:
        task.stop()
    conn.execute("INSERT INTO a VALUES (4, 'w')")
    conn.execute("INSERT INTO b VALUES (4, 4)")
    conn.commit()
    resumed = start_task(props, committed)
    try:
        assert ids(drain(resumed)) == [4]
    finally:
        resumed.stop()


def test_query_mode_bulk_with_a_where_clause_and_suffix(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(1, "a%"), (2, "b"), (3, "a%")])
    conn.commit()
    task = start_task(
        base_props(
            path,
            mode="bulk",
            topic_prefix="only-a",
            query="SELECT id FROM t WHERE k LIKE 'a%'",
            query_suffix="ORDER BY id DESC",
        )
    )
    try:
        records = drain(task)
        assert ids(records) == [3, 1]
        assert records[0].source_partition == {"query": "query"} and records[0].source_offset is None
    finally:
        task.stop()


# --------------------------------------------------------------------------- schemas


def test_schema_from_sqlite_column_types(db) -> None:
    path, conn = db
    conn.execute(
        "CREATE TABLE everything (id INTEGER PRIMARY KEY, i8 TINYINT NOT NULL, i16 SMALLINT, big BIGINT, "
        "r REAL, dbl DOUBLE, num NUMERIC(10,3), flag BOOLEAN, name VARCHAR(20) NOT NULL, body TEXT, data BLOB, "
        "day DATE, tod TIME, at TIMESTAMP, n TEXT)"
    )
    conn.execute(
        "INSERT INTO everything VALUES (1, -5, 300, 9000000000, 1.5, 2.5, 12.3456, 1, 'x', 'long', X'0102', "
        "'2024-02-29', '10:11:12.345', '2024-02-29 10:11:12.345', NULL)"
    )
    conn.commit()
    task = start_task(base_props(path, mode="bulk"), tables='"everything"')
    try:
        (record,) = drain(task)
    finally:
        task.stop()
    schema = record.value_schema
    assert schema.name == "everything"
    expected = {
        "id": Schema.INT64_SCHEMA,
        "i8": Schema.INT8_SCHEMA,
        "i16": Schema.OPTIONAL_INT16_SCHEMA,
        "big": Schema.OPTIONAL_INT64_SCHEMA,
        "r": Schema.OPTIONAL_FLOAT64_SCHEMA,
        "dbl": Schema.OPTIONAL_FLOAT64_SCHEMA,
        "num": Decimal.builder(3).parameter("connect.decimal.precision", "10").optional().build(),
        "flag": Schema.OPTIONAL_BOOLEAN_SCHEMA,
        "name": Schema.STRING_SCHEMA,
        "body": Schema.OPTIONAL_STRING_SCHEMA,
        "data": Schema.OPTIONAL_BYTES_SCHEMA,
        "day": Date.builder().optional().build(),
        "tod": Time.builder().optional().build(),
        "at": Timestamp.builder().optional().build(),
        "n": Schema.OPTIONAL_STRING_SCHEMA,
    }
    assert {f.name: f.schema for f in schema.fields()} == expected
    v = record.value
    assert v.get("i8") == -5 and v.get("big") == 9_000_000_000 and v.get("flag") is True
    assert v.get("num") == decimal.Decimal("12.346")  # rounded half up to the column's scale
    assert v.get("data") == b"\x01\x02"
    assert v.get("day") == dt.date(2024, 2, 29)
    assert v.get("tod") == dt.time(10, 11, 12, 345000)
    assert v.get("at") == dt.datetime(2024, 2, 29, 10, 11, 12, 345000, tzinfo=UTC)
    assert v.get("n") is None
    record.value.validate()


@pytest.mark.parametrize(
    ("mapping", "expected"),
    [
        ("none", {"p4": "decimal", "p10": "decimal", "money": "decimal"}),
        ("precision_only", {"p4": Schema.INT16_SCHEMA, "p10": Schema.INT64_SCHEMA, "money": "decimal"}),
        ("best_fit", {"p4": Schema.INT16_SCHEMA, "p10": Schema.INT64_SCHEMA, "money": Schema.FLOAT64_SCHEMA}),
    ],
)
def test_numeric_mapping(db, mapping: str, expected: dict[str, Any]) -> None:
    path, conn = db
    conn.execute("CREATE TABLE nums (p4 NUMERIC(4,0) NOT NULL, p10 NUMERIC(10) NOT NULL, money NUMERIC(8,2) NOT NULL)")
    conn.execute("INSERT INTO nums VALUES (1234, 1234567890, 12.5)")
    conn.commit()
    task = start_task(base_props(path, mode="bulk", numeric_mapping=mapping), tables='"nums"')
    try:
        (record,) = drain(task)
    finally:
        task.stop()
    for name, want in expected.items():
        got = record.value_schema.field(name).schema
        if want == "decimal":
            assert got.name == Decimal.LOGICAL_NAME
        else:
            assert got == want
    record.value.validate()
    if mapping == "best_fit":
        assert record.value.get("money") == 12.5 and record.value.get("p10") == 1234567890


# --------------------------------------------------------------------------- connector


def start_connector(props: dict[str, str]) -> tuple[JdbcSourceConnector, FakeConnectorContext]:
    connector = JdbcSourceConnector()
    context = FakeConnectorContext()
    connector.initialize(context)
    connector.start(props)
    return connector, context


def test_tables_are_spread_over_tasks(db) -> None:
    path, conn = db
    for name in ("t1", "t2", "t3", "t4", "t5"):
        conn.execute(f"CREATE TABLE {name} (id INTEGER PRIMARY KEY)")
    conn.commit()
    connector, _ = start_connector(base_props(path, mode="bulk", table_blacklist="t5"))
    try:
        configs = connector.task_configs(2)
        assert [c["tables"] for c in configs] == ['"t1","t2"', '"t3","t4"']
        assert all(c["tables.fetched"] == "true" and c["mode"] == "bulk" for c in configs)
        assert [len(parse_table_list(c["tables"])) for c in connector.task_configs(10)] == [1, 1, 1, 1]
        assert len(connector.task_configs(1)) == 1
    finally:
        connector.stop()


def test_whitelist_and_include_list_choose_tables(db) -> None:
    path, conn = db
    for name in ("orders", "order_items", "users", "tmp_orders"):
        conn.execute(f"CREATE TABLE {name} (id INTEGER PRIMARY KEY)")
    conn.commit()
    connector, _ = start_connector(base_props(path, mode="bulk", table_whitelist="users, orders"))
    try:
        assert [c["tables"] for c in connector.task_configs(5)] == ['"orders"', '"users"']
    finally:
        connector.stop()
    connector, _ = start_connector(
        base_props(
            path,
            mode="incrementing",
            table_include_list="order.*,tmp_.*",
            table_exclude_list=".*items",
            incrementing_column_mapping=".*:id",
        )
    )
    try:
        assert [c["tables"] for c in connector.task_configs(5)] == ['"orders"', '"tmp_orders"']
    finally:
        connector.stop()


def test_group_partitions_matches_connect_utils() -> None:
    assert group_partitions(list(range(5)), 2) == [[0, 1, 2], [3, 4]]
    assert group_partitions(list(range(5)), 3) == [[0, 1], [2, 3], [4]]
    assert group_partitions([], 2) == [[], []]


def test_monitor_notices_new_and_dropped_tables(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE first (id INTEGER PRIMARY KEY)")
    conn.commit()
    connector, context = start_connector(
        base_props(path, mode="bulk", table_blacklist="ignored", table_poll_interval_ms="50")
    )
    try:
        assert [c["tables"] for c in connector.task_configs(3)] == ['"first"']
        assert context.requests == 0 or context.requests == 1  # the first listing may count as a change
        before = context.requests
        conn.execute("CREATE TABLE ignored (id INTEGER PRIMARY KEY)")  # blacklisted: no change
        conn.execute("CREATE TABLE second (id INTEGER PRIMARY KEY)")
        conn.commit()
        wait_until(lambda: context.requests > before, timeout=10, message="no reconfiguration request")
        assert [c["tables"] for c in connector.task_configs(3)] == ['"first"', '"second"']
        before = context.requests
        conn.execute("DROP TABLE first")
        conn.commit()
        wait_until(lambda: context.requests > before, timeout=10, message="no reconfiguration after a drop")
        assert [c["tables"] for c in connector.task_configs(3)] == ['"second"']
        assert context.errors == []
    finally:
        connector.stop()


def test_no_tables_gives_one_task_that_fails_with_confluents_message(db) -> None:
    path, conn = db
    connector, _ = start_connector(base_props(path, mode="bulk", table_whitelist="missing"))
    try:
        (config,) = connector.task_configs(4)
    finally:
        connector.stop()
    assert config["tables"] == "" and config["tables.fetched"] == "true"
    with pytest.raises(ConfigError, match="not assigned a table nor a query"):
        start_task(config)


def test_query_mode_makes_one_task_without_monitoring(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
    conn.commit()
    connector, _ = start_connector(base_props(path, mode="bulk", query="SELECT * FROM t"))
    try:
        assert connector._monitor is None
        (config,) = connector.task_configs(5)
        assert config["tables"] == "" and config["query"] == "SELECT * FROM t"
    finally:
        connector.stop()


def test_table_list_round_trip() -> None:
    tables = parse_table_list('"public"."users","we""ird.name",`db`.`t`,plain')
    assert tables == [
        TableId("public", "users"),
        TableId(None, 'we"ird.name'),
        TableId("db", "t"),
        TableId(None, "plain"),
    ]


def test_offsets_keep_nanoseconds() -> None:
    offset = Offset.from_map({"timestamp": 1_700_000_000_123, "timestamp_nanos": 123_456_789})
    assert offset.timestamp_nanos == 1_700_000_000_123_456_789
    assert offset.to_map() == {"timestamp": 1_700_000_000_123, "timestamp_nanos": 123_456_789}
    before_epoch = Offset(-500_000_000)
    assert before_epoch.to_map() == {"timestamp": -500, "timestamp_nanos": 500_000_000}
    assert Offset.from_map(before_epoch.to_map()) == before_epoch
    assert Offset.from_map({"timestamp": 1500}).timestamp_nanos == 1_500_000_000
    assert Offset(None, 7).to_map() == {"incrementing": 7}


# --------------------------------------------------------------------------- validation


def errors(props: dict[str, str]) -> dict[str, list[str]]:
    result = JdbcSourceConnector().validate({"name": "src", "connector.class": "JdbcSourceConnector", **props})
    return {v.name: v.error_messages for v in result.config_values if v.error_messages}


def test_defaults_are_confluents() -> None:
    definition = JdbcSourceConnector().config()
    defaults = {k.name: k.default_value for k in definition.config_keys().values()}
    assert defaults["poll.interval.ms"] == 5000
    assert defaults["batch.max.rows"] == 1000
    assert defaults["table.poll.interval.ms"] == 60000
    assert defaults["timestamp.delay.interval.ms"] == 0
    assert defaults["db.timezone"] == "UTC"
    assert defaults["mode"] == ""
    assert defaults["validate.non.null"] is True
    assert defaults["table.types"] == ["TABLE"]
    assert defaults["numeric.mapping"] is None
    assert defaults["topic.prefix"] == ""


def test_a_valid_config_passes(db) -> None:
    path, conn = db
    assert errors(base_props(path, mode="incrementing", incrementing_column_name="id", table_whitelist="t")) == {}


def test_query_and_whitelist_are_exclusive(db) -> None:
    path, _ = db
    found = errors(base_props(path, mode="bulk", query="SELECT 1", table_whitelist="t"))
    assert "Do not specify table filtering configs with 'query'" in found["query"][0]
    assert "table.whitelist" in found


def test_whitelist_and_blacklist_are_exclusive(db) -> None:
    path, _ = db
    found = errors(base_props(path, mode="bulk", table_whitelist="a", table_blacklist="b"))
    assert "exclusive" in found["table.whitelist"][0] and "table.blacklist" in found


def test_incrementing_query_needs_the_column(db) -> None:
    path, _ = db
    found = errors(base_props(path, mode="incrementing", query="SELECT 1 AS id"))
    assert "'incrementing.column.name' must be provided" in found["incrementing.column.name"][0]


def test_timestamp_mode_needs_a_column(db) -> None:
    path, _ = db
    found = errors(base_props(path, mode="timestamp", table_whitelist="t"))
    assert "timestamp.column.name" in found


def test_legacy_and_new_filters_do_not_mix(db) -> None:
    path, _ = db
    found = errors(base_props(path, mode="bulk", table_whitelist="a", table_include_list="b.*"))
    assert "Cannot mix legacy and new" in found["table.whitelist"][0]
    assert "table.include.list" in found


def test_a_table_filter_is_required_without_a_query(db) -> None:
    path, _ = db
    found = errors(base_props(path, mode="bulk"))
    assert "At least one table filtering configuration is required" in found["table.whitelist"][0]


def test_exclude_list_needs_an_include_list(db) -> None:
    path, _ = db
    found = errors(base_props(path, mode="bulk", table_exclude_list="x.*"))
    assert "cannot be used without table.include.list" in found["table.exclude.list"][0]


def test_new_style_incrementing_needs_a_mapping(db) -> None:
    path, _ = db
    found = errors(base_props(path, mode="incrementing", table_include_list=".*"))
    assert "Provide 'incrementing.column.mapping'" in found["mode"][0]


def test_single_key_checks(db) -> None:
    path, _ = db
    found = errors(
        base_props(
            path,
            mode="sometimes",
            topic_prefix="bad prefix!",
            db_timezone="Mars/Base",
            numeric_mapping="fuzzy",
            table_include_list="(",
            table_whitelist="t",
        )
    )
    assert "String must be one of" in found["mode"][0]
    assert "Topic prefix must not contain" in found["topic.prefix"][0]
    assert "Invalid time zone" in found["db.timezone"][0]
    assert "Invalid enumerator" in found["numeric.mapping"][0]
    assert "regular expression" in found["table.include.list"][0]


def test_missing_mode_is_reported(db) -> None:
    path, _ = db
    found = errors(base_props(path, table_whitelist="t"))
    assert any("Query mode must be specified" in m for msgs in found.values() for m in msgs)


def test_query_must_be_a_select(db) -> None:
    path, _ = db
    found = errors(base_props(path, mode="bulk", query="DELETE FROM t"))
    assert "Only SELECT statements are supported" in found["query"][0]


def test_a_broken_query_is_reported(db) -> None:
    path, _ = db
    found = errors(base_props(path, mode="bulk", query="SELECT nope FROM missing_table"))
    assert "The configured query is not valid" in found["query"][0]


def test_an_unreachable_database_is_reported(tmp_path: Path) -> None:
    found = errors(base_props(tmp_path / "no" / "such" / "dir.db", mode="bulk", table_whitelist="t"))
    assert "Could not connect to database." in found["connection.url"][0]


def test_connector_start_fails_on_a_bad_config(db) -> None:
    path, _ = db
    connector = JdbcSourceConnector()
    connector.initialize(FakeConnectorContext())
    with pytest.raises(ConnectError, match="configuration error"):
        connector.start(base_props(path, mode="bulk", batch_max_rows="many"))
    with pytest.raises(ConnectError, match="may not be combined"):
        connector.start(base_props(path, mode="bulk", query="SELECT 1", table_whitelist="t"))


def test_plugin_is_registered_under_confluents_class_name() -> None:
    from sluice.runtime.plugins import KAFKA_CLASS_NAMES

    assert (
        KAFKA_CLASS_NAMES["sluice.connectors.jdbc.source.JdbcSourceConnector"]
        == "io.confluent.connect.jdbc.JdbcSourceConnector"
    )


# --------------------------------------------------------------------------- failures


def test_a_failing_query_is_retried_on_a_new_connection(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
    conn.executemany("INSERT INTO t (id) VALUES (?)", [(1,), (2,)])
    conn.commit()
    task = start_task(base_props(path, mode="incrementing", incrementing_column_name="id"), tables='"t"')
    try:
        assert ids(drain(task)) == [1, 2]
        conn.execute("DROP TABLE t")  # the table monitor would reconfigure the tasks
        conn.commit()
        assert task.poll() == []  # logged and retried, not a failure
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
        conn.executemany("INSERT INTO t (id) VALUES (?)", [(2,), (3,)])
        conn.commit()
        assert ids(drain(task)) == [3]  # the offset survived the error
    finally:
        task.stop()


def test_query_retry_attempts_bounds_the_retries(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
    conn.commit()
    task = start_task(
        base_props(path, mode="incrementing", incrementing_column_name="id", query_retry_attempts="2"), tables='"t"'
    )
    try:
        conn.execute("DROP TABLE t")
        conn.commit()
        assert task.poll() == []
        with pytest.raises(ConnectError, match="Failed to query table after retries"):
            task.poll()
    finally:
        task.stop()


def test_unquoted_identifiers(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE plain (id INTEGER PRIMARY KEY)")
    conn.execute("INSERT INTO plain VALUES (7)")
    conn.commit()
    props = base_props(
        path, mode="incrementing", incrementing_column_name="id", table_whitelist="plain", quote_sql_identifiers="never"
    )
    connector, _ = start_connector(props)
    try:
        (config,) = connector.task_configs(1)
    finally:
        connector.stop()
    assert config["tables"] == "plain"
    task = start_task(config)
    try:
        assert ids(drain(task)) == [7]
    finally:
        task.stop()


def test_stop_wakes_an_idle_poll(db, monkeypatch) -> None:
    from sluice.connectors.jdbc import source as source_module

    monkeypatch.setattr(source_module, "_MAX_IDLE_WAIT_S", 30.0)
    path, conn = db
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
    conn.commit()
    task = start_task(base_props(path, mode="bulk", poll_interval_ms="600000"), tables='"t"')
    threading.Timer(0.3, task.stop).start()
    started = dt.datetime.now()
    assert task.poll() == []  # reads the empty table, then waits for the next interval...
    assert task.poll() is None  # ... until stopped
    assert (dt.datetime.now() - started).total_seconds() < 5.0


# ------------------------------------------------------------- bulk reads split on Spark


class SplittingTaskContext(FakeTaskContext):
    """A context that serves split reads the way the Spark executor does: it keeps the parts."""

    def __init__(self, config: dict[str, str], reader: FakeOffsetReader) -> None:
        super().__init__(config, reader)
        self.split_reads: list[list[Any]] = []

    @property
    def supports_split_reads(self) -> bool:
        return True

    def request_split_read(self, parts) -> None:
        self.split_reads.append(list(parts))


def start_splitting_task(props: dict[str, str], tables: str) -> tuple[JdbcSourceTask, SplittingTaskContext]:
    config = {**props, "tables": tables, "tables.fetched": "true"}
    task = JdbcSourceTask()
    context = SplittingTaskContext(config, FakeOffsetReader())
    task.initialize(context)
    task.start(config)
    return task, context


@pytest.mark.parametrize("low, high, parts", [(1, 1000, 4), (-7, 7, 3), (5, 6, 4), (0, 0, 2), (10, 1_000_010, 7)])
def test_key_ranges_cover_every_key_once_and_evenly(low: int, high: int, parts: int) -> None:
    from sluice.connectors.jdbc.source_querier import split_key_ranges
    from sluice.connectors.jdbc.source_queries import TableId

    ranges = split_key_ranges(TableId(None, "t"), "id", low, high, parts)
    assert ranges[0].low is None and ranges[-1].high is None
    assert all(a.high == b.low for a, b in zip(ranges, ranges[1:], strict=False))  # contiguous, no overlap
    sizes = [(r.high if r.high is not None else high + 1) - (r.low if r.low is not None else low) for r in ranges]
    assert sum(sizes) == high - low + 1 and len(ranges) == min(parts, high - low + 1)
    assert max(sizes) - min(sizes) <= 1


def test_a_large_bulk_table_is_read_in_key_ranges_each_yielding_its_rows(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE big (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
    conn.executemany("INSERT INTO big (id, name) VALUES (?, ?)", [(i, f"n{i}") for i in range(1, 1001)])
    conn.commit()
    props = base_props(
        path,
        mode="bulk",
        **{"sluice.bulk.split.partitions": "3", "sluice.bulk.split.min.rows": "500", "batch.max.rows": "100"},
    )
    task, context = start_splitting_task(props, '"big"')
    try:
        assert drain(task) == []  # the task itself reads nothing: it asked for a split read
        (parts,) = context.split_reads
        assert [(p.column, p.low, p.high) for p in parts] == [("id", None, 334), ("id", 334, 667), ("id", 667, None)]
        config = context.configs()
        chunks = [list(JdbcSourceTask.read_split(config, part)) for part in parts]
        assert all(len(chunk) <= 100 for part in chunks for chunk in part)  # batch.max.rows per chunk
        records = [r for part in chunks for chunk in part for r in chunk]
        assert sorted(ids(records)) == list(range(1, 1001))
        assert {r.topic for r in records} == {"db-big"} and records[0].source_partition == {"table": "big"}
        assert records[0].source_offset is None and records[0].value.get("name") == "n1"
        drain(task)  # the next poll interval: split again
        assert len(context.split_reads) == 2
    finally:
        task.stop()


@pytest.mark.parametrize(
    "ddl, extra",
    [
        ("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)", {"sluice.bulk.split.min.rows": "2000"}),  # too small
        ("CREATE TABLE t (code TEXT PRIMARY KEY, name TEXT)", {}),  # no integer key
        ("CREATE TABLE t (a INTEGER, b INTEGER, name TEXT, PRIMARY KEY (a, b))", {}),  # composite key
        ("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)", {"sluice.bulk.split.partitions": "1"}),  # disabled
    ],
)
def test_bulk_tables_that_cannot_or_need_not_be_split_are_read_by_the_task(db, ddl: str, extra: dict[str, str]) -> None:
    path, conn = db
    conn.execute(ddl)
    columns = [row[1] for row in conn.execute("PRAGMA table_info(t)")]
    rows = [tuple(i if c in ("id", "a") else (0 if c == "b" else f"v{i}") for c in columns) for i in range(1000)]
    conn.executemany(f"INSERT INTO t VALUES ({','.join('?' * len(columns))})", rows)
    conn.commit()
    props = base_props(path, mode="bulk", **{"sluice.bulk.split.min.rows": "10", **extra})
    task, context = start_splitting_task(props, '"t"')
    try:
        assert len(drain(task)) == 1000 and context.split_reads == []
    finally:
        task.stop()


def test_without_split_support_a_large_table_is_read_by_the_task(db) -> None:
    path, conn = db
    conn.execute("CREATE TABLE big (id INTEGER PRIMARY KEY)")
    conn.executemany("INSERT INTO big (id) VALUES (?)", [(i,) for i in range(1000)])
    conn.commit()
    task = start_task(base_props(path, mode="bulk", **{"sluice.bulk.split.min.rows": "10"}), tables='"big"')
    try:
        assert sorted(ids(drain(task))) == list(range(1000))
    finally:
        task.stop()


@pytest.mark.parametrize(
    ("mode", "answer"),
    [
        ("incrementing", ExactlyOnceSupport.SUPPORTED),
        ("timestamp", ExactlyOnceSupport.SUPPORTED),
        ("timestamp+incrementing", ExactlyOnceSupport.SUPPORTED),
        ("bulk", ExactlyOnceSupport.UNSUPPORTED),
    ],
)
def test_exactly_once_is_supported_where_offsets_track_the_rows_copied(mode: str, answer: ExactlyOnceSupport) -> None:
    config = {"connection.url": "jdbc:sqlite::memory:", "mode": mode, "topic.prefix": "t-"}
    assert JdbcSourceConnector().exactly_once_support(config) is answer
