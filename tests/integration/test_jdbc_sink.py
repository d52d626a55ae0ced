"""The JDBC sink task driven directly against real PostgreSQL and MariaDB servers.

No Kafka and no Spark here: records are built in the test and handed to ``put``; the
tables are read back with the Python drivers. (The pipeline through a worker is tested
end to end elsewhere.)
"""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from typing import Any

import pytest

from sluice.api import (
    ConnectError,
    ErrantRecordReporter,
    RetriableError,
    Schema,
    SchemaBuilder,
    SinkRecord,
    Struct,
    TopicPartition,
)
from sluice.api.data import Date, Decimal, Time, Timestamp
from sluice.connectors.jdbc import JdbcSinkTask
from tests.helpers import RecordingSinkContext, put_in_chunks
from tests.integration.conftest_databases import execute, query

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("databases")]


class Reporter(ErrantRecordReporter):
    def __init__(self) -> None:
        self.reported: list[tuple[SinkRecord, BaseException]] = []

    def report(self, record, error):
        self.reported.append((record, error))


@pytest.fixture
def table(server: Any) -> Any:
    name = f"sink_{uuid.uuid4().hex[:10]}"
    yield name
    execute(server, f"DROP TABLE IF EXISTS {name}")


@pytest.fixture
def pg_table(postgres_server: Any) -> Any:
    name = f"sink_{uuid.uuid4().hex[:10]}"
    yield name
    execute(postgres_server, f"DROP TABLE IF EXISTS {name}")


def start_task(server: Any, table: str, reporter: Reporter | None = None, **props: Any) -> JdbcSinkTask:
    config = {
        "name": "jdbc-sink-it",
        "connection.url": server.url,
        "connection.user": server.user,
        "connection.password": server.password,
        "table.name.format": table,
        "auto.create": "true",
        "max.retries": "1",
        "retry.backoff.ms": "10",
    }
    config.update({k.replace("_", "."): str(v).lower() if isinstance(v, bool) else str(v) for k, v in props.items()})
    task = JdbcSinkTask()
    task.initialize(RecordingSinkContext(reporter))
    task.start(config)
    return task


def is_postgres(server: Any) -> bool:
    return server.url.startswith("jdbc:postgresql:")


# ------------------------------------------------------------------------ every type

ALL_TYPES = (
    SchemaBuilder.struct()
    .name("all_types")
    .field("id", Schema.INT32_SCHEMA)
    .field("i8", Schema.INT8_SCHEMA)
    .field("i16", Schema.INT16_SCHEMA)
    .field("i64", Schema.INT64_SCHEMA)
    .field("f32", Schema.FLOAT32_SCHEMA)
    .field("f64", Schema.FLOAT64_SCHEMA)
    .field("flag", Schema.BOOLEAN_SCHEMA)
    .field("text", Schema.STRING_SCHEMA)
    .field("raw", Schema.BYTES_SCHEMA)
    .field("amount", Decimal.schema(4))
    .field("day", Date.SCHEMA)
    .field("tod", Time.SCHEMA)
    .field("at", Timestamp.SCHEMA)
    .field("o_i32", Schema.OPTIONAL_INT32_SCHEMA)
    .field("o_f64", Schema.OPTIONAL_FLOAT64_SCHEMA)
    .field("o_flag", Schema.OPTIONAL_BOOLEAN_SCHEMA)
    .field("o_text", Schema.OPTIONAL_STRING_SCHEMA)
    .field("o_raw", Schema.OPTIONAL_BYTES_SCHEMA)
    .field("o_amount", Decimal.builder(2).optional().build())
    .field("o_day", Date.builder().optional().build())
    .field("o_tod", Time.builder().optional().build())
    .field("o_at", Timestamp.builder().optional().build())
    .build()
)


def full_row(i: int) -> Struct:
    s = Struct(ALL_TYPES)
    s.put("id", i).put("i8", -128 + i).put("i16", -32768 + i).put("i64", 2**62 + i).put("f32", 0.25 * i)
    s.put("f64", 1e300 / (i + 1)).put("flag", i % 2 == 0).put("text", f"ünïcødé ' \" \\ % {i} ✓")
    s.put("raw", bytes([0, 1, 2, 255, 39, 92]) * (i + 1)).put("amount", decimal.Decimal("-12345678901234.5678"))
    s.put("day", dt.date(1999, 12, 31)).put("tod", dt.time(23, 59, 58, 999000))
    s.put("at", dt.datetime(2024, 2, 29, 12, 34, 56, 789000, tzinfo=dt.UTC))
    s.put("o_i32", 7).put("o_f64", -0.5).put("o_flag", False).put("o_text", "").put("o_raw", b"")
    s.put("o_amount", decimal.Decimal("0.01")).put("o_day", dt.date(1970, 1, 1)).put("o_tod", dt.time(0, 0))
    s.put("o_at", dt.datetime(1970, 1, 1, tzinfo=dt.UTC))
    return s


def null_row(i: int) -> Struct:
    s = full_row(i)
    for f in ALL_TYPES.fields():
        if f.name.startswith("o_"):
            s.put(f.name, None)
    return s


def expected(server: Any, struct: Struct) -> tuple:
    out = []
    pg = is_postgres(server)
    for f in ALL_TYPES.fields():
        v = struct.get(f.name)
        if isinstance(v, dt.datetime):
            v = v.astimezone(dt.UTC).replace(tzinfo=None)
        elif isinstance(v, dt.time) and not pg:
            v = dt.timedelta(hours=v.hour, minutes=v.minute, seconds=v.second, microseconds=v.microsecond)
        elif isinstance(v, bool) and not pg:
            v = int(v)
        elif isinstance(v, decimal.Decimal) and f.name == "amount" and not pg:
            v = v.quantize(decimal.Decimal("0.0001"))
        out.append(v)
    return tuple(out)


def test_every_type_round_trips_into_an_auto_created_table(server, table):
    task = start_task(server, table, pk_mode="record_value", pk_fields="id", insert_mode="upsert")
    records = [
        SinkRecord("all", 0, None, None, ALL_TYPES, v, i) for i, v in enumerate([full_row(1), null_row(2), full_row(3)])
    ]
    task.put(records)
    task.stop()
    got = query(server, f"SELECT * FROM {table} ORDER BY id")
    assert got == [expected(server, r.value) for r in records]
    assert task.stats["tables_created"] == 1


def test_postgres_arrays(postgres_server, pg_table):
    table = pg_table
    schema = (
        SchemaBuilder.struct()
        .field("id", Schema.INT32_SCHEMA)
        .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
        .field("points", SchemaBuilder.array(Schema.FLOAT64_SCHEMA).build())
        .build()
    )
    task = start_task(postgres_server, table)
    task.put(
        [
            SinkRecord(
                "t",
                0,
                None,
                None,
                schema,
                Struct(schema).put("id", 1).put("tags", ["a", "b,c", '"q"']).put("points", [1.5, -2.0]),
                0,
            )
        ]
    )
    assert query(postgres_server, f"SELECT * FROM {table}") == [(1, ["a", "b,c", '"q"'], [1.5, -2.0])]
    task.stop()


def test_db_timezone_on_postgres(postgres_server, pg_table):
    table = pg_table
    conn = postgres_server.connect()
    conn.execute(f"CREATE TABLE {table} (id INT PRIMARY KEY, at TIMESTAMP, at_tz TIMESTAMPTZ)")
    conn.commit()
    schema2 = (
        SchemaBuilder.struct()
        .field("id", Schema.INT32_SCHEMA)
        .field("at", Timestamp.SCHEMA)
        .field("at_tz", Timestamp.SCHEMA)
        .build()
    )
    moment = dt.datetime(2024, 7, 1, 12, 0, tzinfo=dt.UTC)
    task = start_task(postgres_server, table, db_timezone="Europe/Paris", auto_create=False)
    task.put(
        [
            SinkRecord(
                "t", 0, None, None, schema2, Struct(schema2).put("id", 1).put("at", moment).put("at_tz", moment), 0
            )
        ]
    )
    (row,) = query(postgres_server, f"SELECT at, at_tz FROM {table}")
    assert row[0] == dt.datetime(2024, 7, 1, 14, 0)  # wall-clock time in db.timezone
    assert row[1] == moment  # the same instant in a timestamptz column
    task.stop()


# ------------------------------------------------------------------------------ upserts

ORDER = (
    SchemaBuilder.struct()
    .name("order")
    .field("id", Schema.INT64_SCHEMA)
    .field("customer", Schema.STRING_SCHEMA)
    .field("qty", Schema.INT32_SCHEMA)
    .field("price", Decimal.schema(2))
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .build()
)
ORDER_KEY = SchemaBuilder.struct().name("order_key").field("id", Schema.INT64_SCHEMA).build()


def order(i: int, version: int, offset: int) -> SinkRecord:
    value = (
        Struct(ORDER)
        .put("id", i)
        .put("customer", f"c{i % 97}")
        .put("qty", version)
        .put("price", decimal.Decimal(i * 3 + version).scaleb(-2))
        .put("note", None if i % 2 else f"v{version}")
    )
    return SinkRecord("orders", i % 3, ORDER_KEY, Struct(ORDER_KEY).put("id", i), ORDER, value, offset)


def test_upsert_of_the_same_10000_records_twice_ends_with_10000_rows(server, table):
    task = start_task(server, table, pk_mode="record_key", insert_mode="upsert")
    batch = [order(i, 1, i) for i in range(10_000)]
    for start in range(0, len(batch), 2500):
        task.put(batch[start : start + 2500])
    assert task.pre_commit({TopicPartition("orders", 0): 10_000}) == {TopicPartition("orders", 0): 10_000}
    task.stop()
    # a replay after a crash: a new task, the same records (in other chunks)
    task = start_task(server, table, pk_mode="record_key", insert_mode="upsert")
    for start in range(0, len(batch), 3000):
        task.put(batch[start : start + 3000])
    task.flush({})
    assert query(server, f"SELECT count(*), count(DISTINCT id), sum(qty) FROM {table}") == [(10_000, 10_000, 10_000)]
    # then new versions of every row: updated in place
    task.put([order(i, 2, 10_000 + i) for i in range(10_000)])
    assert query(server, f"SELECT count(*), min(qty), max(qty) FROM {table}") == [(10_000, 2, 2)]
    assert query(server, f"SELECT id, customer, qty, price, note FROM {table} WHERE id = 4") == [
        (4, "c4", 2, decimal.Decimal("0.14"), "v2")
    ]
    if is_postgres(server):
        # the COPY path: every batch went through COPY into a staging table
        # (4 puts of the replay, then 10,000 records in batches of batch.size=3000)
        assert task.dialect.stats["copy_batches"] == 8 and task.dialect.stats["copy_rows"] == 20_000
        assert task.dialect.stats["executemany_batches"] == 0
    else:
        assert task.dialect.stats["multi_row_statements"] >= 4
        assert task.dialect.stats["executemany_batches"] == 0
    task.stop()


def test_pk_mode_kafka(server, table):
    task = start_task(server, table, pk_mode="kafka", insert_mode="upsert")
    batch = [order(i, 1, 100 + i) for i in range(50)]
    task.put(batch)
    task.put(batch)
    got = query(
        server,
        f"SELECT __connect_topic, __connect_partition, __connect_offset, id FROM {table} ORDER BY __connect_offset",
    )
    assert got == [("orders", i % 3, 100 + i, i) for i in range(50)]
    task.stop()


def test_tombstone_deletes_its_row(server, table):
    task = start_task(server, table, pk_mode="record_key", insert_mode="upsert", delete_enabled=True)
    task.put([order(i, 1, i) for i in range(200)])
    tombstones = [
        SinkRecord("orders", 0, ORDER_KEY, Struct(ORDER_KEY).put("id", i), None, None, 200 + i)
        for i in list(range(0, 200, 2)) + [5, 999]
    ]
    task.put(tombstones[:1])  # one
    assert query(server, f"SELECT count(*) FROM {table} WHERE id = 0") == [(0,)]
    task.put(tombstones[1:])  # many (PostgreSQL deletes a large batch through COPY too)
    assert query(server, f"SELECT count(*) FROM {table}") == [(99,)]
    assert query(server, f"SELECT count(*) FROM {table} WHERE id = 5 OR id % 2 = 0") == [(0,)]
    # a write after a delete of the same key in one batch re-creates the row
    task.put(
        [
            order(7, 1, 500),
            tombstones[-2],
            SinkRecord("orders", 0, ORDER_KEY, Struct(ORDER_KEY).put("id", 7), None, None, 501),
            order(7, 3, 502),
        ]
    )
    assert query(server, f"SELECT qty FROM {table} WHERE id = 7") == [(3,)]
    task.stop()


def test_update_mode(server, table):
    task = start_task(server, table, pk_mode="record_key", insert_mode="upsert")
    task.put([order(i, 1, i) for i in range(10)])
    task.stop()
    task = start_task(server, table, pk_mode="record_key", insert_mode="update")
    task.put([order(i, 5, 100 + i) for i in range(5, 15)])
    assert query(server, f"SELECT id, qty FROM {table} ORDER BY id") == [(i, 1 if i < 5 else 5) for i in range(10)]
    task.stop()


def test_auto_evolve_adds_a_column(server, table):
    task = start_task(server, table, pk_mode="record_key", insert_mode="upsert", auto_evolve=True)
    task.put([order(1, 1, 0)])
    v2 = (
        SchemaBuilder.struct()
        .name("order")
        .field("id", Schema.INT64_SCHEMA)
        .field("customer", Schema.STRING_SCHEMA)
        .field("qty", Schema.INT32_SCHEMA)
        .field("price", Decimal.schema(2))
        .field("note", Schema.OPTIONAL_STRING_SCHEMA)
        .field("shipped", Timestamp.builder().optional().build())
        .field("priority", SchemaBuilder.int16().default_value(3).build())
        .field("label", SchemaBuilder.string().default_value("n/a").build())
        .build()
    )
    value = (
        Struct(v2)
        .put("id", 2)
        .put("customer", "x")
        .put("qty", 1)
        .put("price", decimal.Decimal("1.00"))
        .put("shipped", dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    )
    task.put([SinkRecord("orders", 0, ORDER_KEY, Struct(ORDER_KEY).put("id", 2), v2, value, 1), order(3, 1, 2)])
    assert query(server, f"SELECT id, shipped, priority, label FROM {table} ORDER BY id") == [
        (1, None, 3, "n/a"),
        (2, dt.datetime(2024, 1, 1), 3, "n/a"),
        (3, None, 3, "n/a"),
    ]
    assert task.stats["tables_altered"] == 1
    task.stop()


# ------------------------------------------------------------------------- failures


def test_a_batch_the_database_refuses_is_never_half_written(server, table):
    task = start_task(server, table, pk_mode="record_key", insert_mode="insert")
    task.put([order(1, 1, 0)])
    batch = [order(2, 1, 1), order(3, 1, 2), order(1, 9, 3), order(4, 1, 4)]  # id 1 exists already
    with pytest.raises(ConnectError):
        task.put(batch)
    assert query(server, f"SELECT id FROM {table} ORDER BY id") == [(1,)]
    task.stop()
    # with a dead letter queue the refused record is reported, the others written
    reporter = Reporter()
    task = start_task(server, table, reporter, pk_mode="record_key", insert_mode="insert")
    task.put(batch)
    assert query(server, f"SELECT id, qty FROM {table} ORDER BY id") == [(1, 1), (2, 1), (3, 1), (4, 1)]
    assert [r.kafka_offset for r, _ in reporter.reported] == [3]
    task.stop()


def test_a_lost_connection_is_retried(postgres_server, pg_table):
    table = pg_table
    task = start_task(postgres_server, table, pk_mode="record_key", insert_mode="upsert")
    task.put([order(1, 1, 0)])
    pid = task._conn.info.backend_pid
    admin = postgres_server.connect(autocommit=True)
    admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    admin.close()
    batch = [order(2, 1, 1), order(3, 1, 2)]
    with pytest.raises(RetriableError):
        task.put(batch)
    assert task.context.timeouts == [10]
    task.put(batch)  # the framework redelivers the same records
    assert query(postgres_server, f"SELECT id FROM {table} ORDER BY id") == [(1,), (2,), (3,)]
    task.stop()


# ------------------------------------------------------------------------ batches


def mixed_rows(topic: str) -> list[SinkRecord]:
    """Two partitions' records of ALL_TYPES keyed by id: one key twice (the database refuses the
    batch in insert mode, then the second write), a null in a required field, a tombstone."""
    records = []
    for offset in range(12):
        for partition in range(2):
            i = offset * 2 + partition
            key: Any = i if i != 17 else 4  # id 4 again: a duplicate key
            value: Any = full_row(key) if i % 3 else null_row(key)
            if i == 9:
                value = Struct(ALL_TYPES)  # all set but the required "text"
                for field in ALL_TYPES.fields():
                    if field.name != "text":
                        value.put(field, full_row(i).get(field.name))
            elif i == 20:
                value = None  # deletes id 6, written at offset 3
                key = 6
            records.append(SinkRecord(topic, partition, Schema.INT32_SCHEMA, key, ALL_TYPES, value, offset, 1_000 + i))
    return records


def test_the_batch_path_writes_the_rows_the_record_path_writes(server):
    found = {}
    for path in ("records", "batches"):
        table = f"sink_{path}_{uuid.uuid4().hex[:8]}"
        reporter = Reporter()
        task = start_task(
            server, table, reporter, pk_mode="record_key", pk_fields="id", delete_enabled=True, insert_mode="insert"
        )
        try:
            put_in_chunks(task, mixed_rows("orders"), 10, as_batches=path == "batches")
        finally:
            task.stop()
        rows = query(server, f"SELECT * FROM {table} ORDER BY id")
        execute(server, f"DROP TABLE IF EXISTS {table}")
        reported = [(r.kafka_partition, r.kafka_offset, str(e).replace(table, "TABLE")) for r, e in reporter.reported]
        found[path] = (rows, reported)
    rows, reported = found["records"]
    assert found["batches"] == (rows, reported)
    assert [row[0] for row in rows] == [i for i in range(24) if i not in (6, 9, 17, 20)]
    assert [(p, o) for p, o, _ in reported] == [(1, 4), (1, 8)]  # the null, the duplicate
    assert "null used for required field" in reported[0][2] and "refused" in reported[1][2]
