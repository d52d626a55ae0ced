"""The JDBC sink and its dialects, driven directly on SQLite (no Spark, no servers)."""

from __future__ import annotations

import datetime as dt
import decimal
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from sluice.api import (
    ConfigError,
    ConnectError,
    DataError,
    ErrantRecordReporter,
    RetriableError,
    Schema,
    SchemaBuilder,
    SinkRecord,
    Struct,
    TopicPartition,
)
from sluice.api.data import Date, Decimal, Time, Timestamp
from sluice.connectors.jdbc import Column, Dialect, JdbcSinkConnector, JdbcSinkTask
from sluice.connectors.jdbc.dialect import MySqlDialect, PostgreSqlDialect, SqliteDialect
from sluice.connectors.jdbc.sink import CONFIG_DEF, TableAlterOrCreateError
from tests.helpers import RecordingSinkContext, put_in_chunks

# ------------------------------------------------------------------------------ helpers

VALUE = (
    SchemaBuilder.struct()
    .name("person")
    .field("id", Schema.INT64_SCHEMA)
    .field("name", Schema.STRING_SCHEMA)
    .field("age", Schema.OPTIONAL_INT32_SCHEMA)
    .build()
)
KEY = SchemaBuilder.struct().name("person_key").field("id", Schema.INT64_SCHEMA).build()


class Reporter(ErrantRecordReporter):
    def __init__(self, tolerate: bool = True) -> None:
        self.reported: list[tuple[SinkRecord, BaseException]] = []
        self.tolerate = tolerate

    def report(self, record, error):
        self.reported.append((record, error))
        if not self.tolerate:
            raise ConnectError(f"Tolerance exceeded: {error}")


def person(i: int, name: str | None = None, age: int | None = None, schema: Schema = VALUE) -> Struct:
    s = Struct(schema).put("id", i).put("name", name if name is not None else f"n{i}")
    if age is not None:
        s.put("age", age)
    return s


def rec(
    value: Any,
    *,
    offset: int = 0,
    key: Any = None,
    key_schema: Schema | None = None,
    value_schema: Schema | None | str = "auto",
    topic: str = "people",
    partition: int = 0,
) -> SinkRecord:
    if value_schema == "auto":
        value_schema = value.schema if isinstance(value, Struct) else None
    return SinkRecord(topic, partition, key_schema, key, value_schema, value, offset)


def keyed(i: int, value: Any, offset: int = 0) -> SinkRecord:
    return rec(value, offset=offset, key=Struct(KEY).put("id", i), key_schema=KEY)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "sink.db"


def task_for(db: Path, reporter: Reporter | None = None, **props: Any) -> JdbcSinkTask:
    config = {"connection.url": f"jdbc:sqlite:{db}", "auto.create": "true", "max.retries": "0", "name": "jdbc-sink"}
    config.update({k.replace("_", "."): str(v).lower() if isinstance(v, bool) else str(v) for k, v in props.items()})
    task = JdbcSinkTask()
    task.initialize(RecordingSinkContext(reporter))
    task.start(config)
    return task


def rows(db: Path, table: str = "people", order: str = "id") -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(f'SELECT * FROM "{table}" ORDER BY {order}').fetchall()


def columns(db: Path, table: str = "people") -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return [(r[1], r[2], bool(r[3]), r[5]) for r in conn.execute(f'PRAGMA table_info("{table}")')]


# ------------------------------------------------------------------------------- config


def test_config_names_types_and_defaults_are_confluents():
    keys = CONFIG_DEF.config_keys()
    expected = {
        "connection.url": ("STRING", None),
        "connection.user": ("STRING", None),
        "connection.password": ("PASSWORD", None),
        "insert.mode": ("STRING", "insert"),
        "batch.size": ("INT", 3000),
        "delete.enabled": ("BOOLEAN", False),
        "table.name.format": ("STRING", "${topic}"),
        "pk.mode": ("STRING", "none"),
        "pk.fields": ("LIST", []),
        "fields.whitelist": ("LIST", []),
        "auto.create": ("BOOLEAN", False),
        "auto.evolve": ("BOOLEAN", False),
        "max.retries": ("INT", 10),
        "retry.backoff.ms": ("INT", 3000),
        "db.timezone": ("STRING", "UTC"),
        "quote.sql.identifiers": ("STRING", "ALWAYS"),
    }
    for name, (type_name, default) in expected.items():
        key = keys[name]
        assert key.type.value == type_name, name
        if name != "connection.url":
            assert key.default_value == default, name
    assert not keys["connection.url"].has_default
    assert JdbcSinkConnector().config() is CONFIG_DEF
    assert JdbcSinkConnector().task_class() is JdbcSinkTask


def _errors(config: dict[str, str]) -> dict[str, list[str]]:
    result = JdbcSinkConnector().validate(config)
    return {cv.name: cv.error_messages for cv in result.config_values if cv.error_messages}


def test_validate_refuses_the_combinations_confluent_refuses(db):
    url = f"jdbc:sqlite:{db}"
    errors = _errors({"connection.url": url, "delete.enabled": "true", "pk.mode": "record_value"})
    assert errors["delete.enabled"] == errors["pk.mode"] == ["Deletes are only supported for pk.mode record_key"]
    errors = _errors({"connection.url": url, "insert.mode": "upsert"})
    assert "requires a primary key" in errors["insert.mode"][0] and errors["pk.mode"]
    errors = _errors({"connection.url": url, "insert.mode": "update", "pk.mode": "none"})
    assert errors["insert.mode"]
    errors = _errors({"connection.url": url, "pk.mode": "kafka", "pk.fields": "a,b"})
    assert "exactly three" in errors["pk.fields"][0]
    errors = _errors({"connection.url": url, "insert.mode": "merge"})
    assert errors["insert.mode"] == ["Invalid value merge for configuration insert.mode: Invalid enumerator"]
    errors = _errors({"connection.url": url, "db.timezone": "Mars/Olympus"})
    assert "Invalid time zone identifier" in errors["db.timezone"][0]
    errors = _errors({})
    assert errors["connection.url"]
    # upper case enumerators are Confluent's too; a good config has no errors
    assert (
        _errors({"connection.url": url, "insert.mode": "UPSERT", "pk.mode": "RECORD_KEY", "delete.enabled": "true"})
        == {}
    )


def test_validate_reports_a_database_it_cannot_reach(tmp_path):
    errors = _errors({"connection.url": f"jdbc:sqlite:{tmp_path}/missing/dir/x.db"})
    assert errors["connection.url"][0].startswith("Could not connect to database.")


def test_start_refuses_bad_configs(db):
    with pytest.raises(ConfigError, match="Deletes are only supported"):
        task_for(db, delete_enabled=True, pk_mode="kafka")
    with pytest.raises(ConfigError, match="requires a primary key"):
        task_for(db, insert_mode="upsert")
    with pytest.raises(ConfigError, match="Unsupported database"):
        JdbcSinkTask().start({"connection.url": "jdbc:oracle:thin:@db:1521:x"})
    with pytest.raises(ConfigError):
        JdbcSinkConnector().start({"connection.url": "jdbc:sqlite:x.db", "pk.mode": "kafka", "pk.fields": "x"})
    with pytest.raises(ConfigError, match="does not match"):
        task_for(db, dialect_name="PostgreSqlDatabaseDialect")


def test_connector_hands_its_config_to_every_task(db):
    connector = JdbcSinkConnector()
    connector.start({"connection.url": f"jdbc:sqlite:{db}", "topics": "a"})
    configs = connector.task_configs(3)
    assert len(configs) == 3 and all(c["connection.url"] == f"jdbc:sqlite:{db}" for c in configs)


def test_registered_as_a_plugin_under_confluents_name():
    from importlib.metadata import entry_points

    from sluice.runtime.plugins import KAFKA_CLASS_NAMES

    names = {ep.name: ep.value for ep in entry_points(group="sluice.connectors")}
    assert names["JdbcSinkConnector"] == "sluice.connectors.jdbc:JdbcSinkConnector"
    assert (
        KAFKA_CLASS_NAMES["sluice.connectors.jdbc.sink.JdbcSinkConnector"]
        == "io.confluent.connect.jdbc.JdbcSinkConnector"
    )


# ---------------------------------------------------------------------------- pk modes


def test_insert_without_key_creates_the_table(db):
    task = task_for(db)
    task.put([rec(person(1, age=30), offset=0), rec(person(2), offset=1)])
    assert rows(db) == [(1, "n1", 30), (2, "n2", None)]
    assert columns(db) == [("id", "INTEGER", True, 0), ("name", "TEXT", True, 0), ("age", "INTEGER", False, 0)]
    assert task.stats["tables_created"] == 1
    # insert mode without a key appends: the same records again are new rows
    task.put([rec(person(1, age=30), offset=0)])
    assert len(rows(db)) == 3
    task.stop()


def test_pk_mode_kafka_uses_the_coordinates(db):
    task = task_for(db, pk_mode="kafka", insert_mode="upsert")
    batch = [rec(person(i), offset=10 + i, partition=i % 2) for i in range(4)]
    task.put(batch)
    task.put(batch)  # a replay: the same coordinates, the same rows
    assert rows(db, order="__connect_offset") == [("people", i % 2, 10 + i, i, f"n{i}", None) for i in range(4)]
    cols = columns(db)
    assert [c[0] for c in cols[:3]] == ["__connect_topic", "__connect_partition", "__connect_offset"]
    assert [c[3] for c in cols[:3]] == [1, 2, 3]  # the primary key, in that order
    task.stop()


def test_pk_mode_kafka_with_own_column_names(db):
    task = task_for(db, pk_mode="kafka", pk_fields="t,p,o")
    task.put([rec(person(1), offset=5)])
    # As Confluent: other key columns than the default names come after the value's, by name
    assert rows(db, order="o") == [(1, "n1", None, 5, 0, "people")]
    assert [(c[0], c[3]) for c in columns(db)[3:]] == [("o", 3), ("p", 2), ("t", 1)]


def test_pk_mode_record_key_primitive(db):
    task = task_for(db, pk_mode="record_key", pk_fields="key_id", insert_mode="upsert")
    task.put(
        [
            rec(person(1), key=100, key_schema=Schema.INT64_SCHEMA),
            rec(person(2), key=200, key_schema=Schema.INT64_SCHEMA),
        ]
    )
    assert rows(db, order="key_id") == [(1, "n1", None, 100), (2, "n2", None, 200)]
    assert columns(db)[-1] == ("key_id", "INTEGER", True, 1)
    task.put([rec(person(3), key=100, key_schema=Schema.INT64_SCHEMA)])
    assert rows(db, order="key_id") == [(3, "n3", None, 100), (2, "n2", None, 200)]


def test_pk_mode_record_key_primitive_needs_one_pk_field(db):
    task = task_for(db, pk_mode="record_key")
    with pytest.raises(DataError, match="Need exactly one PK column"):
        task.put([rec(person(1), key=1, key_schema=Schema.INT64_SCHEMA)])


def test_pk_mode_record_key_struct(db):
    task = task_for(db, pk_mode="record_key", insert_mode="upsert")
    task.put([keyed(1, person(1, "a")), keyed(2, person(2, "b"))])
    task.put([keyed(1, person(1, "c"))])
    assert rows(db) == [(1, "c", None), (2, "b", None)]
    assert columns(db)[0] == ("id", "INTEGER", True, 1)


def test_pk_mode_record_key_needs_a_key(db):
    reporter = Reporter()
    task = task_for(db, reporter, pk_mode="record_key", insert_mode="upsert")
    task.put([rec(person(1)), keyed(2, person(2))])
    assert rows(db) == [(2, "n2", None)]
    assert len(reporter.reported) == 1
    assert "requires records with a non-null key" in str(reporter.reported[0][1])


def test_pk_mode_record_value(db):
    task = task_for(db, pk_mode="record_value", pk_fields="id", insert_mode="upsert")
    task.put([rec(person(1, "a", 5)), rec(person(2, "b"))])
    task.put([rec(person(1, "z"))])
    assert rows(db) == [(1, "z", None), (2, "b", None)]
    assert columns(db)[0] == ("id", "INTEGER", True, 1)


def test_pk_mode_record_value_unknown_field(db):
    task = task_for(db, pk_mode="record_value", pk_fields="nope")
    with pytest.raises(DataError, match="does not contain field: nope"):
        task.put([rec(person(1))])


def test_upsert_keeps_the_last_record_of_a_key_in_a_batch(db):
    task = task_for(db, pk_mode="record_key", insert_mode="upsert")
    task.put([keyed(1, person(1, "first")), keyed(2, person(2)), keyed(1, person(1, "last"))])
    assert rows(db) == [(1, "last", None), (2, "n2", None)]
    assert task.stats["records_written"] == 2


def test_update_mode_changes_existing_rows_only(db):
    task = task_for(db, pk_mode="record_key", insert_mode="upsert")
    task.put([keyed(1, person(1, "a")), keyed(2, person(2, "b"))])
    task.stop()
    task = task_for(db, pk_mode="record_key", insert_mode="update")
    task.put([keyed(1, person(1, "A", 9)), keyed(3, person(3, "C"))])
    assert rows(db) == [(1, "A", 9), (2, "b", None)]


def test_insert_mode_duplicate_key_is_refused_whole(db):
    task = task_for(db, pk_mode="record_key")
    task.put([keyed(1, person(1))])
    with pytest.raises(ConnectError, match="UNIQUE constraint failed"):
        task.put([keyed(2, person(2)), keyed(1, person(1, "again"))])
    assert rows(db) == [(1, "n1", None)]  # nothing of the failed batch


def test_insert_mode_refused_rows_are_reported_one_by_one(db):
    reporter = Reporter()
    task = task_for(db, reporter, pk_mode="record_key")
    task.put([keyed(1, person(1))])
    dup = keyed(1, person(1, "again"))
    task.put([keyed(2, person(2)), dup, keyed(3, person(3))])
    assert rows(db) == [(1, "n1", None), (2, "n2", None), (3, "n3", None)]
    assert [r for r, _ in reporter.reported] == [dup]


# ----------------------------------------------------------------------------- deletes


def tombstone(i: int, offset: int = 0) -> SinkRecord:
    return SinkRecord("people", 0, KEY, Struct(KEY).put("id", i), None, None, offset)


def test_tombstones_delete_by_key(db):
    task = task_for(db, pk_mode="record_key", insert_mode="upsert", delete_enabled=True)
    task.put([keyed(i, person(i)) for i in range(1, 5)])
    task.put([tombstone(2), tombstone(4), tombstone(99)])
    assert rows(db) == [(1, "n1", None), (3, "n3", None)]
    assert task.stats["records_deleted"] == 3


def test_order_of_writes_and_deletes_in_one_batch(db):
    for mode in ("upsert", "insert"):
        path = db.with_name(f"{mode}.db")
        task = task_for(path, pk_mode="record_key", insert_mode=mode, delete_enabled=True, batch_size=100)
        task.put(
            [
                keyed(1, person(1, "a")),
                tombstone(1),  # written then deleted
                keyed(2, person(2, "b")),
                tombstone(2),
                keyed(2, person(2, "c")),  # re-created
                keyed(3, person(3, "d")),
            ]
        )
        assert rows(path) == [(2, "c", None), (3, "d", None)], mode


def test_tombstone_for_a_missing_table_is_a_no_op(db):
    task = task_for(db, pk_mode="record_key", delete_enabled=True)
    task.put([tombstone(1)])
    assert (
        not Path(db).exists()
        or not sqlite3.connect(db).execute("SELECT name FROM sqlite_master WHERE name = 'people'").fetchall()
    )


def test_tombstones_are_refused_without_delete_enabled(db):
    task = task_for(db, pk_mode="record_key", insert_mode="upsert")
    with pytest.raises(DataError, match="delete.enabled=false"):
        task.put([tombstone(1)])


# ---------------------------------------------------------------------------- DDL


def test_auto_create_off_needs_the_table(db):
    task = task_for(db, auto_create=False)
    with pytest.raises(TableAlterOrCreateError, match="is missing and auto-creation is disabled"):
        task.put([rec(person(1))])
    reporter = Reporter()
    task = task_for(db, reporter, auto_create=False)
    task.put([rec(person(1))])
    assert len(reporter.reported) == 1


def test_auto_create_maps_every_type(db):
    schema = (
        SchemaBuilder.struct()
        .field("i8", Schema.INT8_SCHEMA)
        .field("i16", Schema.INT16_SCHEMA)
        .field("i32", Schema.INT32_SCHEMA)
        .field("i64", Schema.INT64_SCHEMA)
        .field("f32", Schema.FLOAT32_SCHEMA)
        .field("f64", Schema.FLOAT64_SCHEMA)
        .field("b", Schema.BOOLEAN_SCHEMA)
        .field("s", Schema.STRING_SCHEMA)
        .field("raw", Schema.BYTES_SCHEMA)
        .field("dec", Decimal.schema(2))
        .field("day", Date.SCHEMA)
        .field("tod", Time.SCHEMA)
        .field("ts", Timestamp.SCHEMA)
        .field("opt", Schema.OPTIONAL_STRING_SCHEMA)
        .field("dflt", SchemaBuilder.int32().optional().default_value(7).build())
        .build()
    )
    value = (
        Struct(schema)
        .put("i8", -8)
        .put("i16", 16)
        .put("i32", 32)
        .put("i64", 2**40)
        .put("f32", 1.5)
        .put("f64", 2.25)
        .put("b", True)
        .put("s", "héllo")
        .put("raw", b"\x00\xff")
        .put("dec", decimal.Decimal("12.34"))
        .put("day", dt.date(2024, 2, 29))
        .put("tod", dt.time(13, 14, 15, 678000))
        .put("ts", dt.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=dt.UTC))
    )
    task = task_for(db, table_name_format="all_types")
    task.put([rec(value, topic="t")])
    assert rows(db, "all_types", order="i8") == [
        (
            -8,
            16,
            32,
            2**40,
            1.5,
            2.25,
            1,
            "héllo",
            b"\x00\xff",
            12.34,
            "2024-02-29",
            "13:14:15.678",
            "2024-01-02 03:04:05.006",
            None,
            7,
        )
    ]
    types = {name: t for name, t, _, _ in columns(db, "all_types")}
    assert types["raw"] == "BLOB" and types["dec"] == "NUMERIC" and types["ts"] == "TIMESTAMP"
    with sqlite3.connect(db) as conn:
        ddl = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'all_types'").fetchone()[0]
    assert '"dflt" INTEGER DEFAULT 7 NULL' in ddl


def test_db_timezone_shifts_timestamps(db):
    schema = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).field("ts", Timestamp.SCHEMA).build()
    task = task_for(db, db_timezone="Europe/Paris", table_name_format="tz")
    task.put([rec(Struct(schema).put("id", 1).put("ts", dt.datetime(2024, 7, 1, 12, 0, tzinfo=dt.UTC)))])
    assert rows(db, "tz") == [(1, "2024-07-01 14:00:00.000")]


V2 = (
    SchemaBuilder.struct()
    .name("person")
    .field("id", Schema.INT64_SCHEMA)
    .field("name", Schema.STRING_SCHEMA)
    .field("age", Schema.OPTIONAL_INT32_SCHEMA)
    .field("email", Schema.OPTIONAL_STRING_SCHEMA)
    .field("score", SchemaBuilder.int32().default_value(0).build())
    .build()
)


def test_auto_evolve_adds_optional_columns(db):
    task = task_for(db, auto_evolve=True)
    task.put([rec(person(1))])
    task.put([rec(person(2, schema=V2).put("email", "x@y"), offset=1), rec(person(3), offset=2)])
    assert rows(db) == [(1, "n1", None, None, 0), (2, "n2", None, "x@y", 0), (3, "n3", None, None, 0)]
    assert task.stats["tables_altered"] == 1


def test_auto_evolve_off_refuses_new_fields(db):
    task = task_for(db)
    task.put([rec(person(1))])
    with pytest.raises(
        TableAlterOrCreateError, match=r"missing fields \(email, score\) and auto-evolution is disabled"
    ):
        task.put([rec(person(2, schema=V2))])


def test_auto_evolve_refuses_a_required_field_without_default(db):
    v3 = (
        SchemaBuilder.struct()
        .name("person")
        .field("id", Schema.INT64_SCHEMA)
        .field("name", Schema.STRING_SCHEMA)
        .field("must", Schema.STRING_SCHEMA)
        .build()
    )
    task = task_for(db, auto_evolve=True)
    task.put([rec(person(1))])
    with pytest.raises(TableAlterOrCreateError, match="field must, as the field is not optional"):
        task.put([rec(Struct(v3).put("id", 2).put("name", "x").put("must", "y"))])


def test_existing_table_with_other_case_and_extra_columns(db):
    with sqlite3.connect(db) as conn:
        conn.execute('CREATE TABLE people ("ID" INTEGER PRIMARY KEY, "Name" TEXT, age INT, extra TEXT DEFAULT \'e\')')
    task = task_for(db, auto_create=False, pk_mode="record_value", pk_fields="id", insert_mode="upsert")
    task.put([rec(person(1, age=3))])
    assert rows(db, order="ID") == [(1, "n1", 3, "e")]


def test_fields_whitelist_and_table_name_format(db):
    task = task_for(
        db, fields_whitelist="name", pk_mode="record_value", pk_fields="id", table_name_format="kafka_${topic}"
    )
    task.put([rec(person(1, age=4))])
    assert rows(db, "kafka_people") == [(1, "n1")]


def test_unquoted_identifiers(db):
    task = task_for(db, quote_sql_identifiers="never")
    assert task.dialect.quote("people") == "people"
    task.put([rec(person(1))])
    assert rows(db) == [(1, "n1", None)]


# --------------------------------------------------------------- bad records, batches


def test_schemaless_records_are_refused_clearly(db):
    task = task_for(db)
    with pytest.raises(DataError, match="schemaless"):
        task.put([rec({"id": 1, "name": "x"}, value_schema=None)])
    with pytest.raises(DataError, match="Struct record values"):
        task.put([rec("text", value_schema=Schema.STRING_SCHEMA)])


def test_a_bad_record_fails_its_batch_before_anything_is_written(db):
    task = task_for(db, pk_mode="record_value", pk_fields="id", insert_mode="upsert", batch_size=2)
    task.put([rec(person(0))])
    bad = Struct(VALUE).put("id", 3)  # the required "name" is missing
    batch = [rec(person(1), offset=1), rec(person(2), offset=2), rec(bad, offset=3), rec(person(4), offset=4)]
    with pytest.raises(DataError, match='null used for required field: "name"'):
        task.put(batch)
    assert rows(db) == [(0, "n0", None)]  # never half-written, although batch.size is 2
    # with errors.tolerance=all the bad record is reported and the others written
    reporter = Reporter()
    task = task_for(db, reporter, pk_mode="record_value", pk_fields="id", insert_mode="upsert", batch_size=2)
    task.put(batch)
    assert [r.kafka_offset for r, _ in reporter.reported] == [3]
    assert [r[0] for r in rows(db)] == [0, 1, 2, 4]
    # with errors.tolerance=none the reporter raises: still nothing written
    reporter = Reporter(tolerate=False)
    task = task_for(db, reporter, pk_mode="record_value", pk_fields="id", insert_mode="upsert")
    with pytest.raises(ConnectError, match="Tolerance exceeded"):
        task.put([rec(person(7), offset=7), rec(bad, offset=8)])
    assert [r[0] for r in rows(db)] == [0, 1, 2, 4]


def test_types_the_database_cannot_hold_are_data_errors(db):
    schema = (
        SchemaBuilder.struct()
        .field("id", Schema.INT32_SCHEMA)
        .field("tags", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())
        .build()
    )
    task = task_for(db)
    with pytest.raises(DataError, match="does not support type MAP"):
        task.put([rec(Struct(schema).put("id", 1).put("tags", {"a": "b"}))])
    nan = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).field("x", Schema.FLOAT64_SCHEMA).build()
    with pytest.raises(DataError, match="NaN"):
        task.put([rec(Struct(nan).put("id", 1).put("x", float("nan")), topic="floats")])


def test_batches_of_batch_size(db):
    task = task_for(db, batch_size=2)
    task.put([rec(person(i), offset=i) for i in range(5)])
    assert len(rows(db)) == 5
    assert task.stats["batches"] == 3 and task.stats["commits"] == 1
    assert task.dialect.stats["executemany_batches"] == 3


def test_records_of_several_topics_go_to_their_tables(db):
    task = task_for(db)
    task.put([rec(person(1), topic="a"), rec(person(2), topic="b"), rec(person(3), topic="a")])
    assert rows(db, "a") == [(1, "n1", None), (3, "n3", None)]
    assert rows(db, "b") == [(2, "n2", None)]


def test_replayed_upserts_leave_each_row_once(db):
    task = task_for(db, pk_mode="record_value", pk_fields="id", insert_mode="upsert", batch_size=7)
    batch = [rec(person(i % 40, f"v{i}"), offset=i) for i in range(100)]
    task.put(batch)
    first = rows(db)
    # a crash before the offsets were committed: a new task gets the same records again
    task.stop()
    task = task_for(db, pk_mode="record_value", pk_fields="id", insert_mode="upsert", batch_size=7)
    task.put(batch[50:])
    task.put(batch)
    assert rows(db) == first and len(first) == 40
    assert first[0] == (0, "v80", None)


def test_commit_happens_before_pre_commit_returns(db):
    task = task_for(db)
    task.put([rec(person(1))])
    offsets = {TopicPartition("people", 0): 1}
    assert task.pre_commit(offsets) == offsets
    # another connection sees the row: it is committed
    assert rows(db) == [(1, "n1", None)]


def test_transient_errors_are_retried_then_fail(db, monkeypatch):
    task = task_for(db, max_retries=2, retry_backoff_ms=5)
    task.put([rec(person(0))])
    calls = []

    def locked(*args, **kwargs):
        calls.append(1)
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(task.dialect, "write_rows", locked)
    batch = [rec(person(1), offset=1)]
    for _ in range(2):
        with pytest.raises(RetriableError, match="database is locked"):
            task.put(batch)
    assert task.context.timeouts == [5, 5]
    with pytest.raises(ConnectError, match="exhausting retries"):
        task.put(batch)
    monkeypatch.undo()
    task.put(batch)  # the database works again: the redelivered records are written
    assert rows(db) == [(0, "n0", None), (1, "n1", None)]


# ----------------------------------------------------------------------------- dialects


@pytest.mark.parametrize(
    ("url", "cls", "name", "host", "port", "database"),
    [
        (
            "jdbc:postgresql://db.example:5433/shop?user=u&password=p",
            PostgreSqlDialect,
            "PostgreSQL",
            "db.example",
            5433,
            "shop",
        ),
        ("jdbc:postgresql://localhost/shop", PostgreSqlDialect, "PostgreSQL", "localhost", 5432, "shop"),
        ("jdbc:postgresql:shop", PostgreSqlDialect, "PostgreSQL", "localhost", 5432, "shop"),
        ("jdbc:mariadb://10.0.0.1/shop", MySqlDialect, "MariaDB", "10.0.0.1", 3306, "shop"),
        ("jdbc:mysql://h:3307/shop?user=u", MySqlDialect, "MySQL", "h", 3307, "shop"),
        ("jdbc:sqlite:/var/data/x.db", SqliteDialect, "SQLite", None, None, "/var/data/x.db"),
        ("jdbc:sqlite::memory:", SqliteDialect, "SQLite", None, None, ":memory:"),
    ],
)
def test_dialect_for_url(url, cls, name, host, port, database):
    d = Dialect.for_url(url, None, None)
    assert type(d) is cls and d.name == name and (d.host, d.port, d.database) == (host, port, database)


def test_dialect_credentials_from_url_or_arguments():
    d = Dialect.for_url("jdbc:postgresql://h/db?user=u&password=p", None, None)
    assert d.user == "u"
    d = Dialect.for_url("jdbc:postgresql://h/db?user=u&password=p", "other", "pw")
    assert d.user == "other"


@pytest.mark.parametrize(
    "url", ["jdbc:oracle:thin:@h:1521:x", "postgresql://h/db", "", "jdbc:mysql:db", "jdbc:sqlite:"]
)
def test_dialect_refuses_other_urls(url):
    with pytest.raises(ConfigError):
        Dialect.for_url(url, None, None)


def test_quoting_and_table_refs():
    pg = Dialect.for_url("jdbc:postgresql://h/db", None, None)
    my = Dialect.for_url("jdbc:mariadb://h/db", None, None)
    assert pg.quote('we"ird') == '"we""ird"' and my.quote("we`ird") == "`we``ird`"
    assert pg.table_ref("sales.orders") == '"sales"."orders"' and my.table_ref("shop.orders") == "`shop`.`orders`"
    assert pg.split_table("sales.orders") == ("sales", "orders") and pg.split_table("orders") == (None, "orders")
    never = Dialect.for_url("jdbc:postgresql://h/db", None, None, quote_identifiers=False)
    assert never.table_ref("sales.orders") == "sales.orders"


def test_statements_per_dialect():
    pg = Dialect.for_url("jdbc:postgresql://h/db", None, None)
    my = Dialect.for_url("jdbc:mariadb://h/db", None, None)
    lite = Dialect.for_url("jdbc:sqlite::memory:", None, None)
    assert pg.upsert("t", ["id"], ["a", "b"]) == (
        'INSERT INTO "t" ("id","a","b") VALUES (%s,%s,%s) '
        'ON CONFLICT ("id") DO UPDATE SET "a"=EXCLUDED."a","b"=EXCLUDED."b"'
    )
    assert pg.upsert("t", ["id"], []).endswith('ON CONFLICT ("id") DO NOTHING')
    assert my.upsert("t", ["id"], ["a"]) == (
        "INSERT INTO `t` (`id`,`a`) VALUES (%s,%s) ON DUPLICATE KEY UPDATE `a`=VALUES(`a`)"
    )
    assert lite.upsert("t", ["id"], ["a"]) == (
        'INSERT INTO "t" ("id","a") VALUES (?,?) ON CONFLICT ("id") DO UPDATE SET "a"=excluded."a"'
    )
    assert pg.update("t", ["k1", "k2"], ["a"]) == 'UPDATE "t" SET "a" = %s WHERE "k1" = %s AND "k2" = %s'
    assert lite.delete("t", ["k"]) == 'DELETE FROM "t" WHERE "k" = ?'
    assert pg.insert("t", ["100%"], []) == 'INSERT INTO "t" ("100%%") VALUES (%s)'


def test_type_mapping_per_dialect():
    pg = Dialect.for_url("jdbc:postgresql://h/db", None, None)
    my = Dialect.for_url("jdbc:mariadb://h/db", None, None)
    lite = Dialect.for_url("jdbc:sqlite::memory:", None, None)
    cases = [
        (Schema.INT8_SCHEMA, "SMALLINT", "TINYINT", "INTEGER"),
        (Schema.INT32_SCHEMA, "INT", "INT", "INTEGER"),
        (Schema.INT64_SCHEMA, "BIGINT", "BIGINT", "INTEGER"),
        (Schema.FLOAT32_SCHEMA, "REAL", "FLOAT", "REAL"),
        (Schema.FLOAT64_SCHEMA, "DOUBLE PRECISION", "DOUBLE", "REAL"),
        (Schema.BOOLEAN_SCHEMA, "BOOLEAN", "TINYINT", "INTEGER"),
        (Schema.STRING_SCHEMA, "TEXT", "TEXT", "TEXT"),
        (Schema.BYTES_SCHEMA, "BYTEA", "LONGBLOB", "BLOB"),
        (Decimal.schema(3), "DECIMAL", "DECIMAL(65,3)", "NUMERIC"),
        (Date.SCHEMA, "DATE", "DATE", "DATE"),
        (Time.SCHEMA, "TIME", "TIME(3)", "TIME"),
        (Timestamp.SCHEMA, "TIMESTAMP", "DATETIME(3)", "TIMESTAMP"),
    ]
    for schema, p, m, s in cases:
        assert (pg.sql_type(schema), my.sql_type(schema), lite.sql_type(schema)) == (p, m, s)
    assert my.sql_type(Schema.STRING_SCHEMA, key=True) == "VARCHAR(256)"
    assert pg.sql_type(SchemaBuilder.array(Schema.INT32_SCHEMA).build()) == "INT[]"
    with pytest.raises(DataError):
        my.sql_type(SchemaBuilder.array(Schema.INT32_SCHEMA).build())


def test_sqlite_catalog(tmp_path):
    d = Dialect.for_url(f"jdbc:sqlite:{tmp_path}/c.db", None, None)
    conn = d.connect()
    conn.execute("CREATE TABLE b (id INTEGER PRIMARY KEY, amount NUMERIC(10,2) NOT NULL, note VARCHAR(20) DEFAULT 'x')")
    conn.execute("CREATE TABLE a (k1 TEXT, k2 INT, PRIMARY KEY (k2, k1))")
    conn.execute("CREATE VIEW v AS SELECT * FROM a")
    conn.commit()
    assert d.list_tables(conn) == ["a", "b"]
    assert d.list_tables(conn, table_types=("TABLE", "VIEW")) == ["a", "b", "v"]
    assert d.describe_columns(conn, "b") == [
        Column("id", "integer", False, None, None, True, 1, "INTEGER", None),
        Column("amount", "numeric", False, 10, 2, False, None, "NUMERIC(10,2)", None),
        Column("note", "varchar", True, 20, None, False, None, "VARCHAR(20)", "'x'"),
    ]
    assert [(c.name, c.primary_key) for c in d.describe_columns(conn, "a")] == [("k1", 2), ("k2", 1)]
    assert d.describe_columns(conn, "missing") == [] and not d.table_exists(conn, "missing")
    assert abs((d.current_timestamp(conn) - dt.datetime.utcnow()).total_seconds()) < 5
    conn.close()


@pytest.mark.parametrize("pk_mode", ["record_key", "kafka", "record_value"])
def test_a_batch_writes_the_rows_its_records_write(tmp_path, pk_mode):
    """SQLite here; PostgreSQL and MariaDB in tests/integration/test_jdbc_sink.py."""
    records = []
    for offset in range(16):
        i = offset % 11  # ids 0-4 twice: the database refuses their batch in insert mode
        value: Any = person(i, age=offset)
        if offset == 6:
            value = Struct(VALUE).put("id", i)  # the required "name" is missing
        elif offset == 13 and pk_mode == "record_key":
            value = None  # deletes id 2
        records.append(keyed(i, value, offset=offset) if pk_mode == "record_key" else rec(value, offset=offset))
    found = []
    for path in ("records", "batches"):
        db = tmp_path / f"{path}.db"
        reporter = Reporter()
        props: dict[str, Any] = {"pk_mode": pk_mode, "insert_mode": "insert"}
        if pk_mode == "record_key":
            props["delete_enabled"] = True
        elif pk_mode == "record_value":
            props["pk_fields"] = "id"
        task = task_for(db, reporter, **props)
        put_in_chunks(task, records, 5, as_batches=path == "batches")
        task.stop()
        found.append((rows(db, order="1, 2"), [(r.kafka_offset, str(e)) for r, e in reporter.reported]))
    assert found[0] == found[1]
    assert found[0][1] and found[0][1][0][0] == 6
