"""Acceptance: the JDBC connectors end to end on a real standalone worker and Kafka broker,
against real PostgreSQL and MariaDB servers.

1. A table with every column type the source supports goes through
   ``JdbcSourceConnector`` (incrementing mode) into a topic and from there through
   ``JdbcSinkConnector`` (upsert, auto-created table) back into the same database: both
   tables hold the same rows; rows inserted later arrive, and only those.
   A bulk table of 20,000 rows read in 3 key ranges, each in a Spark partition, lands
   on its topic with every row exactly once.
2. The same 10,000 ids produced twice (JsonConverter envelopes) end as exactly 10,000 rows
   with the values of the second pass (upsert is idempotent through Kafka).
3. A malformed record in the middle of good records (a schemaless JSON value, or a struct
   without the pk field): with ``errors.tolerance=all`` the
   good records are written and the bad one is in the dead letter queue; with ``none`` the
   task is FAILED and nothing of the bad record is written.

The worker's converters are StandaloneWorker's: JsonConverter for keys and values, with
``schemas.enable`` left at its default (true), so records carry their Connect schemas.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer

from tests import http_client
from tests.helpers import read_topic, wait_until
from tests.integration.conftest_databases import execute, is_pg, query
from tests.integration.workers import StandaloneWorker

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("databases")]

SOURCE = "io.confluent.connect.jdbc.JdbcSourceConnector"
SINK = "io.confluent.connect.jdbc.JdbcSinkConnector"


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneWorker]:
    w = StandaloneWorker(tmp_path_factory.mktemp("jdbc-pipeline"), kafka_bootstrap, "worker")
    w.start()
    yield w
    assert w.stop() == 0, w.log()


@pytest.fixture
def tables(server: Any) -> Iterator[list[str]]:
    """Two fresh table names, dropped afterwards."""
    names = [f"t_{uuid.uuid4().hex[:10]}" for _ in range(2)]
    yield names
    execute(server, *(f"DROP TABLE IF EXISTS {n}" for n in names))


# ----------------------------------------------------------------------------- helpers


def count(server: Any, table: str) -> int:
    """Rows in ``table``, -1 while it does not exist yet (the sink creates it)."""
    try:
        return int(query(server, f"SELECT COUNT(*) FROM {table}")[0][0])
    except Exception:  # noqa: BLE001 - table not created yet
        return -1


def db_props(server: Any) -> dict[str, str]:
    return {"connection.url": server.url, "connection.user": server.user, "connection.password": server.password}


def create(worker: StandaloneWorker, name: str, config: dict[str, str]) -> None:
    r = http_client.post(f"{worker.url}/connectors", json={"name": name, "config": config}, timeout=30)
    assert r.status_code == 201, r.text


def delete(worker: StandaloneWorker, name: str) -> None:
    http_client.delete(f"{worker.url}/connectors/{name}", timeout=60)


def status(worker: StandaloneWorker, name: str) -> str:
    r = worker.get(f"/connectors/{name}/status")
    return r.text


def task(worker: StandaloneWorker, name: str) -> dict[str, Any]:
    r = worker.get(f"/connectors/{name}/status")
    tasks = r.json().get("tasks", []) if r.status_code == 200 else []
    return tasks[0] if tasks else {}


def normalise(value: Any) -> Any:
    """One representation for what legitimately changes on the way through Connect:

    - bytes come back as ``memoryview``/``bytearray`` from some drivers: compared as bytes;
    - Connect's Time and Timestamp carry milliseconds: times are compared to the millisecond
      (the source rows only hold millisecond values, so this is exact, whatever the precision
      of the auto-created column);
    - DECIMAL/NUMERIC come back with the column's scale (the sink creates e.g. DECIMAL(65,3)
      or NUMERIC without a scale): compared as numbers, ``Decimal('1.500') == Decimal('1.5')``;
    - PyMySQL returns TIME as a ``timedelta``: compared as the time of day it stands for;
    - REAL/FLOAT survive as FLOAT32 and come back as Python floats, and the test values are
      exactly representable, so they compare equal;
    - MariaDB's BOOLEAN is TINYINT(1): JDBC's BIT, which Confluent maps to INT8, so both tables
      hold the integer 0/1.
    """
    if isinstance(value, memoryview | bytearray):
        return bytes(value)
    if isinstance(value, dt.datetime):
        return value.replace(microsecond=value.microsecond // 1000 * 1000)
    if isinstance(value, dt.time):
        return value.replace(microsecond=value.microsecond // 1000 * 1000)
    if isinstance(value, dt.timedelta):  # PyMySQL returns TIME as a duration since midnight
        return normalise((dt.datetime.min + value).time())
    if isinstance(value, decimal.Decimal):
        return value.normalize()
    return value


def rows(server: Any, table: str, columns: list[str], where: str = "") -> list[tuple]:
    got = query(server, f"SELECT {', '.join(columns)} FROM {table} {where} ORDER BY id")
    return [tuple(normalise(v) for v in row) for row in got]


RECORD_SCHEMA = {
    "type": "struct",
    "name": "item",
    "optional": False,
    "fields": [
        {"field": "id", "type": "int64", "optional": False},
        {"field": "name", "type": "string", "optional": False},
        {"field": "amount", "type": "double", "optional": False},
    ],
}


def envelope(i: int, name: str, amount: float) -> bytes:
    return json.dumps({"schema": RECORD_SCHEMA, "payload": {"id": i, "name": name, "amount": amount}}).encode()


def produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for v in values:
        while True:
            try:
                producer.produce(topic, value=v)
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
    assert producer.flush(60) == 0


def sink_config(server: Any, topic: str, table: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": SINK,
        **db_props(server),
        "topics": topic,
        "tasks.max": "1",
        "insert.mode": "upsert",
        "pk.mode": "record_value",
        "pk.fields": "id",
        "auto.create": "true",
        "table.name.format": table,
        **extra,
    }


# ----------------------------------------------------------------------------- 1. round trip


def type_table(server: Any, table: str) -> tuple[list[str], str]:
    """Columns and DDL of a table with every column type the source supports."""
    if is_pg(server):
        ddl = f"""CREATE TABLE {table} (
            id integer PRIMARY KEY, i2 smallint, i4 integer NOT NULL, i8 bigint, num numeric(10,3),
            f4 real, f8 double precision, flag boolean, vc varchar(20), tx text, day date, tod time(3),
            at timestamp(3), raw bytea, nothing text)"""
        columns = ["id", "i2", "i4", "i8", "num", "f4", "f8", "flag", "vc", "tx", "day", "tod", "at", "raw", "nothing"]
    else:
        ddl = f"""CREATE TABLE {table} (
            id int PRIMARY KEY, ti tinyint, i2 smallint, mi mediumint, i4 int NOT NULL, i8 bigint,
            num decimal(10,3), f4 float, f8 double, flag boolean, vc varchar(20), tx text, day date,
            tod time(3), at datetime(3), raw varbinary(16), bl blob, nothing varchar(3))"""
        columns = [
            "id",
            "ti",
            "i2",
            "mi",
            "i4",
            "i8",
            "num",
            "f4",
            "f8",
            "flag",
            "vc",
            "tx",
            "day",
            "tod",
            "at",
            "raw",
            "bl",
            "nothing",
        ]
    return columns, ddl


def type_row(server: Any, i: int, nulls: bool = False) -> tuple:
    flag = (i % 2 == 0) if is_pg(server) else int(i % 2 == 0)
    values: dict[str, Any] = {
        "id": i,
        "ti": -128 + i,
        "i2": -32768 + i,
        "mi": -8388608 + i,
        "i4": 2**31 - 1 - i,
        "i8": -(2**63) + i,
        "num": decimal.Decimal(f"{i}234567.891") if i < 10 else decimal.Decimal("-0.001"),
        "f4": 1.5 + i,
        "f8": -2.25 * i,
        "flag": flag,
        "vc": f"vc {i}",
        "tx": f"text ✓ {i}",
        "day": dt.date(2024, 2, 29) + dt.timedelta(days=i),
        "tod": dt.time(23, 59, 58, 123000 + i * 1000),
        "at": dt.datetime(2024, 2, 29, 23, 59, 58, 123000) + dt.timedelta(hours=i),
        "raw": bytes([0, 255, i % 256]),
        "bl": b"\x01\x02" * i,
        "nothing": None,
    }
    columns, _ = type_table(server, "x")
    if nulls:  # every nullable column NULL
        return tuple(values[c] if c in ("id", "i4") else None for c in columns)
    return tuple(values[c] for c in columns)


def test_round_trip_of_every_type_through_kafka(server, tables, worker, kafka_bootstrap, unique_name):
    source, target = tables
    columns, ddl = type_table(server, source)
    insert = f"INSERT INTO {source} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})"
    first = [type_row(server, i) for i in range(1, 6)] + [type_row(server, 6, nulls=True)]
    execute(server, ddl, insert, params=first)

    topic_prefix = f"{unique_name}-"
    create(
        worker,
        f"{unique_name}-source",
        {
            "connector.class": SOURCE,
            **db_props(server),
            "tasks.max": "1",
            "mode": "incrementing",
            "incrementing.column.name": "id",
            "table.whitelist": source,
            "topic.prefix": topic_prefix,
            "poll.interval.ms": "200",
        },
    )
    create(worker, f"{unique_name}-sink", sink_config(server, f"{topic_prefix}{source}", target))
    try:
        wait_until(
            lambda: count(server, target) >= len(first),
            timeout=180,
            message=lambda: (
                f"{count(server, target)} rows in {target}; "
                f"source {status(worker, unique_name + '-source')}; sink {status(worker, unique_name + '-sink')}"
            ),
        )
        expected = rows(server, source, columns)
        assert [tuple(normalise(v) for v in r) for r in first] == expected  # the source table itself
        assert rows(server, target, columns) == expected

        # incrementing mode: only the new rows are read and written (the old ones are not
        # re-sent: the topic grows by exactly the new rows)
        more = [type_row(server, i) for i in range(7, 10)]
        execute(server, insert, params=more)
        wait_until(
            lambda: count(server, target) >= len(first) + len(more),
            timeout=120,
            message=lambda: f"{count(server, target)} rows in {target}; {status(worker, unique_name + '-sink')}",
        )
        assert rows(server, target, columns) == rows(server, source, columns)
        messages = read_topic(kafka_bootstrap, f"{topic_prefix}{source}", len(first) + len(more))
        ids = [json.loads(m.value())["payload"]["id"] for m in messages]
        assert ids == list(range(1, 10))
        assert task(worker, f"{unique_name}-source").get("state") == "RUNNING"
        assert task(worker, f"{unique_name}-sink").get("state") == "RUNNING"
    finally:
        delete(worker, f"{unique_name}-sink")
        delete(worker, f"{unique_name}-source")


def test_a_large_bulk_table_is_read_in_spark_partitions_every_row_once(
    server, tables, worker, kafka_bootstrap, unique_name
):
    source, _ = tables
    rows_total = 20_000
    execute(
        server,
        f"CREATE TABLE {source} (id bigint PRIMARY KEY, name varchar(40) NOT NULL)",
        f"INSERT INTO {source} (id, name) VALUES (%s, %s)",
        params=[(i, f"name-{i}") for i in range(rows_total)],
    )
    topic = f"{unique_name}-{source}"
    name = f"{unique_name}-bulk"
    create(
        worker,
        name,
        {
            "connector.class": SOURCE,
            **db_props(server),
            "tasks.max": "1",
            "mode": "bulk",
            "table.whitelist": source,
            "topic.prefix": f"{unique_name}-",
            "poll.interval.ms": "3600000",  # one read in this test
            "sluice.bulk.split.partitions": "3",
            "sluice.bulk.split.min.rows": "1000",
        },
    )
    try:
        messages = read_topic(kafka_bootstrap, topic, rows_total, timeout=180)
        payloads = [json.loads(m.value())["payload"] for m in messages]
        assert sorted(p["id"] for p in payloads) == list(range(rows_total))
        assert all(p["name"] == f"name-{p['id']}" for p in payloads)
        said = [
            line
            for line in worker.log_path.read_text(errors="replace").splitlines()
            if f"{name}-0 read {rows_total} records in 3 Spark partitions" in line
        ]
        assert len(said) == 1, worker.log()  # one read: the task instance was not restarted
        assert task(worker, name).get("state") == "RUNNING"
    finally:
        delete(worker, name)


# ----------------------------------------------------------------------------- 2. upsert idempotence


def test_the_same_10000_records_twice_end_as_10000_rows_with_the_last_values(
    server, tables, worker, kafka_bootstrap, unique_name
):
    target = tables[0]
    n = 10_000
    topic = f"{unique_name}-items"
    produce(kafka_bootstrap, topic, [envelope(i, f"first {i}", i * 0.5) for i in range(n)])
    produce(kafka_bootstrap, topic, [envelope(i, f"last {i}", i * 0.25 - 1) for i in range(n)])
    create(worker, f"{unique_name}-sink", sink_config(server, topic, target, **{"batch.size": "3000"}))
    try:

        def done() -> bool:
            if count(server, target) != n:
                return False
            return query(server, f"SELECT COUNT(*) FROM {target} WHERE name LIKE 'last %'")[0][0] == n

        wait_until(
            done,
            timeout=240,
            message=lambda: f"{count(server, target)} rows in {target}; {status(worker, unique_name + '-sink')}",
        )
        got = query(server, f"SELECT id, name, amount FROM {target} ORDER BY id")
        assert got == [(i, f"last {i}", i * 0.25 - 1) for i in range(n)]
        assert task(worker, f"{unique_name}-sink").get("state") == "RUNNING"
    finally:
        delete(worker, f"{unique_name}-sink")


# ----------------------------------------------------------------------------- 3. a malformed record


NO_PK_SCHEMA = {**RECORD_SCHEMA, "fields": RECORD_SCHEMA["fields"][1:]}
BAD = {
    # no schema/payload envelope: JsonConverter (schemas.enable=true) refuses it
    "schemaless": (b'{"id": 50, "name": "schemaless", "amount": 1.0}', "VALUE_CONVERTER"),
    # a well-formed struct without the pk field: the sink refuses it (errant record reporter)
    "no-pk": (json.dumps({"schema": NO_PK_SCHEMA, "payload": {"name": "no pk", "amount": 1.0}}).encode(), "TASK_PUT"),
}


@pytest.fixture(params=list(BAD))
def bad(request: pytest.FixtureRequest) -> tuple[bytes, str]:
    """A malformed record's value and the stage at which Connect refuses it."""
    return BAD[request.param]


def malformed_pipeline(server, worker, kafka_bootstrap, unique_name, target, tolerance, bad) -> tuple[str, str]:
    topic, dlq = f"{unique_name}-in", f"{unique_name}-dlq"
    values = [envelope(i, f"good {i}", float(i)) for i in range(50)] + [bad[0]]
    values += [envelope(i, f"good {i}", float(i)) for i in range(51, 100)]
    produce(kafka_bootstrap, topic, values)
    create(
        worker,
        f"{unique_name}-sink",
        sink_config(
            server,
            topic,
            target,
            **{
                "errors.tolerance": tolerance,
                "errors.deadletterqueue.topic.name": dlq,
                "errors.deadletterqueue.topic.replication.factor": "1",
                "errors.deadletterqueue.context.headers.enable": "true",
            },
        ),
    )
    return topic, dlq


def test_tolerance_all_writes_the_good_records_and_dead_letters_the_bad_one(
    server, tables, worker, kafka_bootstrap, unique_name, bad
):
    target = tables[0]
    topic, dlq = malformed_pipeline(server, worker, kafka_bootstrap, unique_name, target, "all", bad)
    try:
        wait_until(
            lambda: count(server, target) >= 99,
            timeout=180,
            message=lambda: f"{count(server, target)} rows; {status(worker, unique_name + '-sink')}",
        )
        got = query(server, f"SELECT id, name, amount FROM {target} ORDER BY id")
        assert got == [(i, f"good {i}", float(i)) for i in range(100) if i != 50]
        (dead,) = read_topic(kafka_bootstrap, dlq, 1)
        assert dead.value() == bad[0]
        headers = dict(dead.headers())
        assert headers["__connect.errors.topic"] == topic.encode()
        assert headers["__connect.errors.offset"] == b"50"
        assert headers["__connect.errors.stage"] == bad[1].encode()
        assert task(worker, f"{unique_name}-sink").get("state") == "RUNNING"
    finally:
        delete(worker, f"{unique_name}-sink")


def test_tolerance_none_fails_the_task_and_writes_nothing_of_the_bad_record(
    server, tables, worker, kafka_bootstrap, unique_name, bad
):
    target = tables[0]
    _, dlq = malformed_pipeline(server, worker, kafka_bootstrap, unique_name, target, "none", bad)
    try:
        wait_until(
            lambda: task(worker, f"{unique_name}-sink").get("state") == "FAILED",
            timeout=180,
            message=lambda: f"sink {status(worker, unique_name + '-sink')}",
        )
        assert "Tolerance exceeded in error handler" in task(worker, f"{unique_name}-sink")["trace"]
        (dead,) = read_topic(kafka_bootstrap, dlq, 1)  # dead-lettered before the task fails, as Kafka does
        assert dead.value() == bad[0]
        # The batch holding the bad record was never delivered to the sink: the table is
        # either not created at all or holds only rows of records before it.
        written = [i for (i,) in query(server, f"SELECT id FROM {target}")] if count(server, target) >= 0 else []
        assert all(i < 50 for i in written), written
    finally:
        delete(worker, f"{unique_name}-sink")


# ----------------------------------------------------------------------------- 4. SIGKILL mid-load


def test_a_worker_killed_mid_load_and_restarted_leaves_every_row_exactly_once(
    server, tables, kafka_bootstrap, unique_name, tmp_path
):
    """Upsert mode replays what the killed worker had written but not committed; the table
    ends with each record once, holding its value."""
    target = tables[0]
    n = 30_000
    topic = f"{unique_name}-load"
    produce(kafka_bootstrap, topic, [envelope(i, f"row {i}", i * 0.5) for i in range(n)])
    # Small micro-batches so that the load takes many batches and the kill lands inside it.
    extra = {"sluice.sink.batch.max.records": "1000"}
    first = StandaloneWorker(tmp_path / "w", kafka_bootstrap, "w", extra=extra).start()
    name = f"{unique_name}-sink"
    try:
        create(first, name, sink_config(server, topic, target, **{"batch.size": "500"}))
        wait_until(
            lambda: count(server, target) >= 5_000,
            timeout=180,
            message=lambda: f"{count(server, target)} rows; {status(first, name)}",
            ignore=(Exception,),
        )
        first.kill()
        killed_at = count(server, target)
        assert killed_at < n, "the load finished before the kill: make it longer"
    finally:
        first.kill()
    # The same worker directory: its offsets and connector configs survive the kill.
    second = StandaloneWorker(tmp_path / "w", kafka_bootstrap, "w", extra=extra)
    second.start()
    try:
        wait_until(
            lambda: count(server, target) == n,
            timeout=300,
            message=lambda: f"{count(server, target)} rows after the restart; {status(second, name)}",
        )
        got = query(server, f"SELECT id, name, amount FROM {target} ORDER BY id")
        assert got == [(i, f"row {i}", i * 0.5) for i in range(n)]
    finally:
        second.stop()
        second.kill()
