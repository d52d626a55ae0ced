"""The JDBC source connector and task against real PostgreSQL and MariaDB servers
(the ``postgres_server`` / ``mariadb_server`` fixtures), driven directly with a fake
task context and an in-memory offset store: the Connect schema and values of every
supported column type, and the incremental modes picking up only new and changed rows."""

from __future__ import annotations

import datetime as dt
import decimal
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from sluice.api.connector import ConnectorContext
from sluice.api.data import Date, Decimal, Schema, Time, Timestamp
from sluice.api.source import OffsetStorageReader, SourceTaskContext, partition_key
from sluice.connectors.jdbc import JdbcSourceConnector, JdbcSourceTask
from tests.helpers import wait_until
from tests.integration.conftest_databases import execute, is_pg

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("databases")]

UTC = dt.UTC


class MemoryOffsets(OffsetStorageReader):
    """The committed offsets of one connector, as the framework keeps them."""

    def __init__(self) -> None:
        self.data: dict[Any, dict[str, Any] | None] = {}

    def commit(self, records) -> None:
        for r in records:
            self.data[partition_key(r.source_partition)] = r.source_offset

    def offsets(self, partitions):
        return {partition_key(p): self.data.get(partition_key(p)) for p in partitions}


class TaskContext(SourceTaskContext):
    def __init__(self, config: dict[str, str], offsets: MemoryOffsets) -> None:
        self._config, self._offsets = config, offsets

    def configs(self):
        return dict(self._config)

    def offset_storage_reader(self):
        return self._offsets


class ConnectorCtx(ConnectorContext):
    def __init__(self) -> None:
        self.requests = 0
        self.errors: list[BaseException] = []
        self.event = threading.Event()

    def request_task_reconfiguration(self) -> None:
        self.requests += 1

    def raise_error(self, error: BaseException) -> None:
        self.errors.append(error)


@pytest.fixture
def table(server: Any) -> Iterator[str]:
    """A fresh table name, dropped afterwards."""
    name = f"src_{uuid.uuid4().hex[:10]}"
    yield name
    execute(server, f"DROP TABLE IF EXISTS {name}")


def props_for(server: Any, **extra: str) -> dict[str, str]:
    props = {
        "connection.url": server.url,
        "connection.user": server.user,
        "connection.password": server.password,
        "topic.prefix": "it-",
        "poll.interval.ms": "0",
    }
    props.update({k.replace("_", "."): v for k, v in extra.items()})
    return props


def task_config(props: dict[str, str]) -> dict[str, str]:
    """The connector's task config for ``props`` (one task)."""
    connector = JdbcSourceConnector()
    connector.initialize(ConnectorCtx())
    connector.start(props)
    try:
        (config,) = connector.task_configs(1)
    finally:
        connector.stop()
    return config


def start_task(config: dict[str, str], offsets: MemoryOffsets) -> JdbcSourceTask:
    task = JdbcSourceTask()
    task.initialize(TaskContext(config, offsets))
    task.start(config)
    return task


def read_all(config: dict[str, str], offsets: MemoryOffsets) -> list:
    """Start a task from the committed offsets, read until nothing is left, commit, stop."""
    task = start_task(config, offsets)
    try:
        out: list = []
        if config["mode"] == "bulk":
            task._settings.poll_interval_ms = 3_600_000
        for _ in range(1000):
            batch = task._poll_once(task._settings)
            if not batch:
                break
            out.extend(batch)
        offsets.commit(out)
        return out
    finally:
        task.stop()


# ----------------------------------------------------------------------------- every type


def decimal_schema(scale: int, precision: int, optional: bool = True) -> Schema:
    b = Decimal.builder(scale).parameter("connect.decimal.precision", str(precision))
    return (b.optional() if optional else b).build()


def test_every_postgres_type(postgres_server: Any) -> None:
    server = postgres_server
    name = f"types_{uuid.uuid4().hex[:10]}"
    execute(
        server,
        f"""CREATE TABLE {name} (
        id integer PRIMARY KEY, i2 smallint, i8 bigint NOT NULL, f4 real, f8 double precision,
        num numeric(10,3), anynum numeric, flag boolean, ch char(3), vc varchar(20), tx text, raw bytea,
        day date, tod time, todz time with time zone, at timestamp, atz timestamp with time zone,
        u uuid, js json, jb jsonb, bit1 bit(1), tags text[], span interval, nothing text)""",
    )
    execute(
        server,
        f"""INSERT INTO {name} VALUES (
        1, -32768, 9223372036854775807, 1.5, -2.25, 1234567.891, 3.14159, true, 'ab', 'vc', 'text ✓',
        '\\x00ff'::bytea, '2024-02-29', '23:59:58.123', '10:00:00+02', '2024-02-29 23:59:58.123456',
        '2024-02-29 23:59:58.123456+01', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{{"a": [1, 2]}}',
        '{{"b": true}}', '1', '{{x,y}}', '1 day', NULL)""",
    )
    try:
        (record,) = read_all(task_config(props_for(server, mode="bulk", table_whitelist=name)), MemoryOffsets())
    finally:
        execute(server, f"DROP TABLE {name}")
    assert record.topic == f"it-{name}"
    assert record.source_partition == {"table": name} and record.source_offset is None
    schema = record.value_schema
    assert schema.name == name
    expected = {
        "id": Schema.INT32_SCHEMA,
        "i2": Schema.OPTIONAL_INT16_SCHEMA,
        "i8": Schema.INT64_SCHEMA,
        "f4": Schema.OPTIONAL_FLOAT32_SCHEMA,
        "f8": Schema.OPTIONAL_FLOAT64_SCHEMA,
        "num": decimal_schema(3, 10),
        "anynum": decimal_schema(127, 0),
        "flag": Schema.OPTIONAL_BOOLEAN_SCHEMA,
        "ch": Schema.OPTIONAL_STRING_SCHEMA,
        "vc": Schema.OPTIONAL_STRING_SCHEMA,
        "tx": Schema.OPTIONAL_STRING_SCHEMA,
        "raw": Schema.OPTIONAL_BYTES_SCHEMA,
        "day": Date.builder().optional().build(),
        "tod": Time.builder().optional().build(),
        "todz": Time.builder().optional().build(),
        "at": Timestamp.builder().optional().build(),
        "atz": Timestamp.builder().optional().build(),
        "u": Schema.OPTIONAL_STRING_SCHEMA,
        "js": Schema.OPTIONAL_STRING_SCHEMA,
        "jb": Schema.OPTIONAL_STRING_SCHEMA,
        "bit1": Schema.OPTIONAL_BOOLEAN_SCHEMA,
        "nothing": Schema.OPTIONAL_STRING_SCHEMA,
    }
    # arrays and intervals have no Connect mapping: left out, as Confluent does
    assert [f.name for f in schema.fields()] == list(expected)
    assert {f.name: f.schema for f in schema.fields()} == expected
    v = record.value
    v.validate()
    assert (v.get("id"), v.get("i2"), v.get("i8")) == (1, -32768, 2**63 - 1)
    assert (v.get("f4"), v.get("f8")) == (1.5, -2.25)
    assert v.get("num") == decimal.Decimal("1234567.891")
    assert v.get("anynum") == decimal.Decimal("3.14159").quantize(
        decimal.Decimal(1).scaleb(-127), context=decimal.Context(prec=200)
    )
    assert v.get("flag") is True and v.get("bit1") is True
    assert (v.get("ch"), v.get("vc"), v.get("tx")) == ("ab ", "vc", "text ✓")
    assert v.get("raw") == b"\x00\xff"
    assert v.get("day") == dt.date(2024, 2, 29)
    assert v.get("tod") == dt.time(23, 59, 58, 123000)
    assert v.get("todz") == dt.time(8, 0)  # the UTC time of day
    assert v.get("at") == dt.datetime(2024, 2, 29, 23, 59, 58, 123456, tzinfo=UTC)
    assert v.get("atz") == dt.datetime(2024, 2, 29, 22, 59, 58, 123456, tzinfo=UTC)
    assert v.get("u") == "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
    assert v.get("js") == '{"a": [1, 2]}' and v.get("jb") == '{"b": true}'
    assert v.get("nothing") is None


def test_postgres_numeric_mapping_best_fit(postgres_server: Any) -> None:
    server = postgres_server
    name = f"nums_{uuid.uuid4().hex[:10]}"
    execute(
        server,
        f"CREATE TABLE {name} (a numeric(4,0) NOT NULL, b numeric(12,0), c numeric(10,3), d numeric(30,0), e numeric)",
        f"INSERT INTO {name} VALUES (1234, 123456789012, 1.5, 123456789012345678901234567890, 2)",
    )
    try:
        (record,) = read_all(
            task_config(props_for(server, mode="bulk", table_whitelist=name, numeric_mapping="best_fit")),
            MemoryOffsets(),
        )
    finally:
        execute(server, f"DROP TABLE {name}")
    fields = {f.name: f.schema for f in record.value_schema.fields()}
    assert fields["a"] == Schema.INT16_SCHEMA
    assert fields["b"] == Schema.OPTIONAL_INT64_SCHEMA
    assert fields["c"] == Schema.OPTIONAL_FLOAT64_SCHEMA
    assert fields["d"] == decimal_schema(0, 30)
    assert fields["e"].name == Decimal.LOGICAL_NAME  # unbounded: stays a decimal
    v = record.value
    assert (v.get("a"), v.get("b"), v.get("c")) == (1234, 123456789012, 1.5)
    assert v.get("d") == decimal.Decimal("123456789012345678901234567890")


def test_every_mariadb_type(mariadb_server: Any) -> None:
    server = mariadb_server
    name = f"types_{uuid.uuid4().hex[:10]}"
    execute(
        server,
        f"""CREATE TABLE {name} (
        id int PRIMARY KEY, ti tinyint, bool1 boolean, tu tinyint unsigned, si smallint, su smallint unsigned,
        mi mediumint, i int NOT NULL, iu int unsigned, bi bigint, f float, d double, dec1 decimal(10,2),
        ch char(3), vc varchar(20), tx text, bl blob, vb varbinary(8), bn binary(3), day date, tod time(3),
        at datetime(6), ts timestamp(3) NULL, yr year, bit1 bit(1), js json, en enum('a','b'), st set('x','y'),
        pt point, nothing varchar(3))""",
    )
    execute(
        server,
        f"""INSERT INTO {name} VALUES (
        1, -128, true, 255, -32768, 65535, -8388608, 2147483647, 4294967295, -9223372036854775808, 1.5,
        -2.25, -12345678.91, 'ab', 'vc', 'text ✓', x'00ff', x'0102', 'ab', '2024-02-29', '23:59:58.123',
        '2024-02-29 23:59:58.123456', '2024-02-29 23:59:58.123', 2024, b'1', '{{"a": 1}}', 'b', 'x,y',
        POINT(1, 2), NULL)""",
    )
    try:
        (record,) = read_all(task_config(props_for(server, mode="bulk", table_whitelist=name)), MemoryOffsets())
    finally:
        execute(server, f"DROP TABLE {name}")
    assert record.topic == f"it-{name}"
    schema = record.value_schema
    assert schema.name == name
    expected = {
        "id": Schema.INT32_SCHEMA,
        "ti": Schema.OPTIONAL_INT8_SCHEMA,
        "bool1": Schema.OPTIONAL_INT8_SCHEMA,  # TINYINT(1) is JDBC's BIT: INT8, as Confluent maps it
        "tu": Schema.OPTIONAL_INT16_SCHEMA,
        "si": Schema.OPTIONAL_INT16_SCHEMA,
        "su": Schema.OPTIONAL_INT32_SCHEMA,
        "mi": Schema.OPTIONAL_INT32_SCHEMA,
        "i": Schema.INT32_SCHEMA,
        "iu": Schema.OPTIONAL_INT64_SCHEMA,
        "bi": Schema.OPTIONAL_INT64_SCHEMA,
        "f": Schema.OPTIONAL_FLOAT32_SCHEMA,
        "d": Schema.OPTIONAL_FLOAT64_SCHEMA,
        "dec1": decimal_schema(2, 10),
        "ch": Schema.OPTIONAL_STRING_SCHEMA,
        "vc": Schema.OPTIONAL_STRING_SCHEMA,
        "tx": Schema.OPTIONAL_STRING_SCHEMA,
        "bl": Schema.OPTIONAL_BYTES_SCHEMA,
        "vb": Schema.OPTIONAL_BYTES_SCHEMA,
        "bn": Schema.OPTIONAL_BYTES_SCHEMA,
        "day": Date.builder().optional().build(),
        "tod": Time.builder().optional().build(),
        "at": Timestamp.builder().optional().build(),
        "ts": Timestamp.builder().optional().build(),
        "yr": Date.builder().optional().build(),
        "bit1": Schema.OPTIONAL_INT8_SCHEMA,
        "js": Schema.OPTIONAL_STRING_SCHEMA,
        "en": Schema.OPTIONAL_STRING_SCHEMA,
        "st": Schema.OPTIONAL_STRING_SCHEMA,
        "nothing": Schema.OPTIONAL_STRING_SCHEMA,
    }
    assert {f.name: f.schema for f in schema.fields()} == expected  # the POINT is left out
    v = record.value
    v.validate()
    assert (v.get("ti"), v.get("bool1"), v.get("tu"), v.get("si"), v.get("su")) == (-128, 1, 255, -32768, 65535)
    assert (v.get("mi"), v.get("i"), v.get("iu"), v.get("bi")) == (-8388608, 2**31 - 1, 2**32 - 1, -(2**63))
    assert (v.get("f"), v.get("d")) == (1.5, -2.25)
    assert v.get("dec1") == decimal.Decimal("-12345678.91")
    assert (v.get("ch"), v.get("vc"), v.get("tx")) == ("ab", "vc", "text ✓")
    assert (v.get("bl"), v.get("vb"), v.get("bn")) == (b"\x00\xff", b"\x01\x02", b"ab\x00")
    assert v.get("day") == dt.date(2024, 2, 29) and v.get("yr") == dt.date(2024, 1, 1)
    assert v.get("tod") == dt.time(23, 59, 58, 123000)
    assert v.get("at") == dt.datetime(2024, 2, 29, 23, 59, 58, 123456, tzinfo=UTC)
    assert v.get("ts") == dt.datetime(2024, 2, 29, 23, 59, 58, 123000, tzinfo=UTC)
    assert v.get("bit1") == 1
    assert v.get("js") == '{"a": 1}' and v.get("en") == "b" and v.get("st") == "x,y"
    assert v.get("nothing") is None


# ------------------------------------------------------------------------ incremental modes


def test_incrementing_mode_reads_only_new_rows(server: Any, table: str) -> None:
    auto = "SERIAL PRIMARY KEY" if is_pg(server) else "INT AUTO_INCREMENT PRIMARY KEY"
    execute(
        server,
        f"CREATE TABLE {table} (id {auto}, name VARCHAR(20) NOT NULL)",
        f"INSERT INTO {table} (name) VALUES (%s)",
        params=[("a",), ("b",), ("c",)],
    )
    config = task_config(props_for(server, mode="incrementing", incrementing_column_name="id", table_whitelist=table))
    offsets = MemoryOffsets()
    first = read_all(config, offsets)
    assert [r.value.get("name") for r in first] == ["a", "b", "c"]
    schema_prefix = "public" if is_pg(server) else server.database
    assert first[0].source_partition == {"protocol": "1", "table": f"{schema_prefix}.{table}"}
    assert [r.source_offset for r in first] == [{"incrementing": i} for i in (1, 2, 3)]
    assert read_all(config, offsets) == []
    execute(
        server,
        f"UPDATE {table} SET name = 'b2' WHERE id = 2",
        f"INSERT INTO {table} (name) VALUES (%s)",
        params=[("d",), ("e",)],
    )
    assert [(r.value.get("id"), r.value.get("name")) for r in read_all(config, offsets)] == [(4, "d"), (5, "e")]


def test_incrementing_mode_finds_the_auto_increment_column(server: Any, table: str) -> None:
    auto = "SERIAL PRIMARY KEY" if is_pg(server) else "INT AUTO_INCREMENT PRIMARY KEY"
    execute(
        server,
        f"CREATE TABLE {table} (rid {auto}, v INT)",
        f"INSERT INTO {table} (v) VALUES (%s)",
        params=[(10,), (20,)],
    )
    config = task_config(props_for(server, mode="incrementing", table_whitelist=table))
    records = read_all(config, MemoryOffsets())
    assert [r.source_offset for r in records] == [{"incrementing": 1}, {"incrementing": 2}]


def _at(seconds: int) -> str:
    return (dt.datetime(2024, 5, 1) + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%d %H:%M:%S.%f")


def test_timestamp_mode_reads_new_and_changed_rows(server: Any, table: str) -> None:
    ts_type = "TIMESTAMP(6)" if is_pg(server) else "DATETIME(6)"
    execute(
        server,
        f"CREATE TABLE {table} (id INT PRIMARY KEY, name VARCHAR(20), modified {ts_type} NOT NULL)",
        f"INSERT INTO {table} VALUES (%s, %s, %s)",
        params=[(1, "a", _at(1)), (2, "b", _at(2)), (3, "c", _at(2))],
    )
    config = task_config(props_for(server, mode="timestamp", timestamp_column_name="modified", table_whitelist=table))
    offsets = MemoryOffsets()
    first = read_all(config, offsets)
    assert [r.value.get("id") for r in first] == [1, 2, 3]
    last = first[-1]
    expected_ms = int((dt.datetime(2024, 5, 1, 0, 0, 2, tzinfo=UTC)).timestamp() * 1000)
    assert last.source_offset == {"timestamp": expected_ms, "timestamp_nanos": 0}
    assert last.value.get("modified") == dt.datetime(2024, 5, 1, 0, 0, 2, tzinfo=UTC)
    assert read_all(config, offsets) == []
    execute(
        server,
        f"UPDATE {table} SET name = 'a2', modified = '{_at(10)}' WHERE id = 1",
        f"INSERT INTO {table} VALUES (%s, %s, %s)",
        params=[(4, "d", _at(11))],
    )
    changed = read_all(config, offsets)
    assert [(r.value.get("id"), r.value.get("name")) for r in changed] == [(1, "a2"), (4, "d")]
    # rows newer than now - timestamp.delay.interval.ms wait
    future = (dt.datetime.now(UTC) + dt.timedelta(hours=1)).replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S")
    execute(server, f"INSERT INTO {table} VALUES (5, 'future', '{future}')")
    assert read_all(config, offsets) == []


def test_timestamp_incrementing_mode(server: Any, table: str) -> None:
    ts_type = "TIMESTAMP(3)" if is_pg(server) else "DATETIME(3)"
    execute(
        server,
        f"CREATE TABLE {table} (id INT PRIMARY KEY, v VARCHAR(10), modified {ts_type} NOT NULL)",
        f"INSERT INTO {table} VALUES (%s, %s, %s)",
        params=[(1, "a", _at(5)), (2, "b", _at(5))],
    )
    config = task_config(
        props_for(
            server,
            mode="timestamp+incrementing",
            timestamp_column_name="modified",
            incrementing_column_name="id",
            table_whitelist=table,
        )
    )
    offsets = MemoryOffsets()
    first = read_all(config, offsets)
    assert [r.value.get("id") for r in first] == [1, 2]
    assert set(first[-1].source_offset) == {"incrementing", "timestamp", "timestamp_nanos"}
    execute(server, f"INSERT INTO {table} VALUES (%s, %s, %s)", params=[(3, "c", _at(5))])  # same timestamp
    execute(server, f"UPDATE {table} SET v = 'a2', modified = '{_at(6)}' WHERE id = 1")
    assert [(r.value.get("id"), r.value.get("v")) for r in read_all(config, offsets)] == [(3, "c"), (1, "a2")]
    assert read_all(config, offsets) == []


def test_db_timezone_for_naive_timestamps(server: Any, table: str) -> None:
    ts_type = "TIMESTAMP" if is_pg(server) else "DATETIME"
    execute(
        server,
        f"CREATE TABLE {table} (id INT PRIMARY KEY, at {ts_type} NOT NULL)",
        f"INSERT INTO {table} VALUES (1, '2024-07-01 12:00:00')",
    )
    config = task_config(
        props_for(server, mode="timestamp", timestamp_column_name="at", table_whitelist=table, db_timezone="+02:00")
    )
    offsets = MemoryOffsets()
    (record,) = read_all(config, offsets)
    assert record.value.get("at") == dt.datetime(2024, 7, 1, 10, 0, tzinfo=UTC)
    assert read_all(config, offsets) == []


# ------------------------------------------------------------------------------ connector


def test_connector_lists_tables_and_notices_new_ones(postgres_server: Any) -> None:
    server = postgres_server
    prefix = f"mon_{uuid.uuid4().hex[:8]}"
    execute(server, f"CREATE TABLE {prefix}_a (id INT PRIMARY KEY)", f"CREATE TABLE {prefix}_b (id INT PRIMARY KEY)")
    connector = JdbcSourceConnector()
    context = ConnectorCtx()
    connector.initialize(context)
    connector.start(
        props_for(server, mode="bulk", table_include_list=f"public\\.{prefix}_.*", table_poll_interval_ms="100")
    )
    try:
        configs = connector.task_configs(5)
        assert [c["tables"] for c in configs] == [f'"public"."{prefix}_a"', f'"public"."{prefix}_b"']
        before = context.requests
        execute(server, f"CREATE TABLE {prefix}_c (id INT PRIMARY KEY)")
        wait_until(lambda: context.requests > before, timeout=15, message="no reconfiguration request")
        assert len(connector.task_configs(5)) == 3
        assert context.errors == []
    finally:
        connector.stop()
        execute(server, *(f"DROP TABLE IF EXISTS {prefix}_{s}" for s in "abc"))


def test_query_mode_on_a_real_database(server: Any, table: str) -> None:
    execute(
        server,
        f"CREATE TABLE {table} (id INT PRIMARY KEY, amount DECIMAL(8,2) NOT NULL)",
        f"INSERT INTO {table} VALUES (%s, %s)",
        params=[(1, "1.50"), (2, "2.50"), (3, "3.50")],
    )
    config = task_config(
        props_for(
            server,
            mode="incrementing",
            incrementing_column_name="id",
            topic_prefix="totals",
            query=f"SELECT id, amount * 2 AS doubled FROM {table}",
        )
    )
    offsets = MemoryOffsets()
    records = read_all(config, offsets)
    assert [(r.topic, r.value.get("id")) for r in records] == [("totals", 1), ("totals", 2), ("totals", 3)]
    assert records[0].source_partition == {"query": "query"}
    assert records[0].value.get("doubled") == decimal.Decimal("3.00")
    execute(server, f"INSERT INTO {table} VALUES (4, 4.5)")
    assert [r.value.get("id") for r in read_all(config, offsets)] == [4]
