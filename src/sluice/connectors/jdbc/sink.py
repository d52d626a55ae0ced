"""Confluent's JDBC sink (``io.confluent.connect.jdbc.JdbcSinkConnector``) for PostgreSQL,
MariaDB/MySQL and SQLite.

Each record value (a ``Struct`` with a schema) becomes a row of the table
``table.name.format`` names (``${topic}`` replaced by the record's topic). The configs
are Confluent's, with its names, types, defaults and checks:

* ``insert.mode``: ``insert`` (plain inserts), ``upsert`` (insert or update by primary
  key: PostgreSQL/SQLite ``ON CONFLICT … DO UPDATE``, MariaDB ``ON DUPLICATE KEY UPDATE``)
  or ``update`` (update by primary key, rows that do not exist are left alone).
* ``pk.mode``: ``none``; ``kafka`` (columns ``__connect_topic``, ``__connect_partition``,
  ``__connect_offset``, or the three names of ``pk.fields``); ``record_key`` (the key, a
  primitive named by the one ``pk.fields`` entry, or the fields of a key ``Struct``, all
  or those in ``pk.fields``); ``record_value`` (fields of the value, all or ``pk.fields``).
  ``upsert``/``update`` need a primary key, and ``delete.enabled`` needs ``record_key``.
* ``fields.whitelist`` limits the value fields written (key fields are always written).
* ``auto.create`` creates a missing table from the record's schema (the primary key is
  the key columns); ``auto.evolve`` adds a column for each new optional field, or field
  with a default. Column types follow Confluent's mapping per database (see
  :mod:`sluice.connectors.jdbc.dialect`).
* ``delete.enabled``: a tombstone (null value) deletes the row of its key.
* ``db.timezone``: the time zone ``Timestamp`` values are written in (as wall-clock times).
* ``quote.sql.identifiers``: ``always`` (default) or ``never``.
* ``batch.size``: rows per database batch; ``max.retries``/``retry.backoff.ms``: how often
  and after how long a ``put`` whose database write failed transiently (lost connection,
  deadlock, lock timeout) is retried (the framework redelivers the same records).

How records are written
    ``put`` checks and converts every record first: a record without a value schema
    (schemaless JSON), with a value that is not a ``Struct``, without the key its
    ``pk.mode`` needs, with a null in a required field, or with a type the database
    cannot hold raises :class:`~sluice.api.errors.DataError` — or, when the framework
    gives an errant record reporter (``errors.tolerance``, dead letter queue), is
    reported and left out — before anything of the batch is written. The records are then
    grouped per table and written ``batch.size`` rows at a time with each database's
    fastest path (PostgreSQL ``COPY`` into a staging table and one ``INSERT … SELECT``;
    MariaDB multi-row statements; SQLite ``executemany``), and the transaction is
    committed before ``put`` returns, so everything ``flush``/``pre_commit`` reports as
    safe is in the database. In ``upsert``/``update`` mode only the last record per key
    of a batch is written (the same end state as writing them one by one), which also
    makes a replay after a crash idempotent. A batch the database refuses (a value out of
    range, a duplicate key in ``insert`` mode) is rolled back whole; with a reporter its
    records are then written one by one and those the database refuses are reported.

``task.stats`` counts records written, deleted and reported, batches and commits;
``task.dialect.stats`` which write paths were used (``copy_batches`` on PostgreSQL,
``multi_row_statements`` on MariaDB).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from sluice import __version__
from sluice.api import (
    NO_DEFAULT,
    Config,
    ConfigDef,
    ConfigError,
    ConfigType,
    ConnectError,
    DataError,
    Importance,
    NonEmptyString,
    Range,
    RetriableError,
    Schema,
    SinkConnector,
    SinkRecord,
    SinkTask,
    Struct,
    Task,
    TopicPartition,
    Type,
    Width,
)
from sluice.api.config import LambdaValidator
from sluice.api.data import Date, Decimal, Time, Timestamp
from sluice.connectors.jdbc.dialect import Column, Dialect, timezone

__all__ = ["CONFIG_DEF", "JdbcSinkConnector", "JdbcSinkTask", "TableAlterOrCreateError"]

log = logging.getLogger(__name__)

CONNECTION_URL = "connection.url"
CONNECTION_USER = "connection.user"
CONNECTION_PASSWORD = "connection.password"
DIALECT_NAME = "dialect.name"
CONNECTION_ATTEMPTS = "connection.attempts"
CONNECTION_BACKOFF = "connection.backoff.ms"
INSERT_MODE = "insert.mode"
BATCH_SIZE = "batch.size"
DELETE_ENABLED = "delete.enabled"
REPLACE_NULL_WITH_DEFAULT = "replace.null.with.default"
TABLE_NAME_FORMAT = "table.name.format"
PK_MODE = "pk.mode"
PK_FIELDS = "pk.fields"
FIELDS_WHITELIST = "fields.whitelist"
DB_TIMEZONE = "db.timezone"
AUTO_CREATE = "auto.create"
AUTO_EVOLVE = "auto.evolve"
QUOTE_SQL_IDENTIFIERS = "quote.sql.identifiers"
MAX_RETRIES = "max.retries"
RETRY_BACKOFF_MS = "retry.backoff.ms"

INSERT_MODES = ("insert", "upsert", "update")
PK_MODES = ("none", "kafka", "record_key", "record_value")
QUOTE_METHODS = ("always", "never")
DEFAULT_KAFKA_PK_NAMES = ("__connect_topic", "__connect_partition", "__connect_offset")
DIALECT_NAMES = {
    "PostgreSqlDatabaseDialect": "postgresql",
    "MySqlDatabaseDialect": "mysql",
    "SqliteDatabaseDialect": "sqlite",
}

_CONNECTION = "Connection"
_WRITES = "Writes"
_DATA_MAPPING = "Data Mapping"
_DDL = "DDL Support"
_RETRIES = "Retries"


def _enum(*values: str) -> LambdaValidator:
    """Confluent's EnumValidator: the value in lower or upper case."""
    valid = {v.lower() for v in values} | {v.upper() for v in values}

    def check(name: str, value: Any) -> None:
        if value not in valid:
            raise ConfigError(name, value, "Invalid enumerator")

    return LambdaValidator(check, "[" + ", ".join(values) + "]")


def _check_timezone(name: str, value: Any) -> None:
    try:
        timezone(value)
    except ConfigError:
        raise ConfigError(name, value, "Invalid time zone identifier") from None


def _check_dialect(name: str, value: Any) -> None:
    if value and value.strip() not in DIALECT_NAMES:
        raise ConfigError(name, value, "Invalid value; supported dialects: " + ", ".join(DIALECT_NAMES))


CONFIG_DEF = (
    ConfigDef()
    .define(
        CONNECTION_URL,
        ConfigType.STRING,
        NO_DEFAULT,
        importance=Importance.HIGH,
        documentation="JDBC connection URL, e.g. jdbc:postgresql://localhost:5432/db, "
        "jdbc:mariadb://localhost:3306/db, jdbc:mysql://localhost:3306/db or jdbc:sqlite:/path/to.db.",
        group=_CONNECTION,
        order_in_group=1,
        width=Width.LONG,
        display_name="JDBC URL",
    )
    .define(
        CONNECTION_USER,
        ConfigType.STRING,
        None,
        importance=Importance.HIGH,
        documentation="JDBC connection user.",
        group=_CONNECTION,
        order_in_group=2,
        width=Width.MEDIUM,
        display_name="JDBC User",
    )
    .define(
        CONNECTION_PASSWORD,
        ConfigType.PASSWORD,
        None,
        importance=Importance.HIGH,
        documentation="JDBC connection password.",
        group=_CONNECTION,
        order_in_group=3,
        width=Width.MEDIUM,
        display_name="JDBC Password",
    )
    .define(
        DIALECT_NAME,
        ConfigType.STRING,
        "",
        _check_dialect,
        importance=Importance.LOW,
        documentation="The database dialect to use. By default (empty) it is chosen from the JDBC URL. "
        "One of: " + ", ".join(DIALECT_NAMES) + ".",
        group=_CONNECTION,
        order_in_group=5,
        width=Width.LONG,
        display_name="Database Dialect",
    )
    .define(
        CONNECTION_ATTEMPTS,
        ConfigType.INT,
        3,
        Range.at_least(1),
        importance=Importance.LOW,
        documentation="Maximum number of attempts to open a database connection.",
        group=_CONNECTION,
        order_in_group=6,
        width=Width.SHORT,
        display_name="JDBC connection attempts",
    )
    .define(
        CONNECTION_BACKOFF,
        ConfigType.LONG,
        10000,
        importance=Importance.LOW,
        documentation="Milliseconds to wait between attempts to open a database connection.",
        group=_CONNECTION,
        order_in_group=7,
        width=Width.SHORT,
        display_name="JDBC connection backoff in milliseconds",
    )
    .define(
        INSERT_MODE,
        ConfigType.STRING,
        "insert",
        _enum(*INSERT_MODES),
        importance=Importance.HIGH,
        documentation="How records are written. 'insert': standard SQL INSERT statements. 'upsert': insert "
        "or update by primary key with the database's upsert statement (needs pk.mode). 'update': "
        "UPDATE statements by primary key (needs pk.mode).",
        group=_WRITES,
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Insert Mode",
    )
    .define(
        BATCH_SIZE,
        ConfigType.INT,
        3000,
        Range.at_least(0),
        importance=Importance.MEDIUM,
        documentation="How many records of a table are written to the database in one batch, when possible.",
        group=_WRITES,
        order_in_group=2,
        width=Width.SHORT,
        display_name="Batch Size",
    )
    .define(
        DELETE_ENABLED,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        documentation="Whether a record with a null value (a tombstone) deletes the row of its key. "
        "Requires pk.mode record_key.",
        group=_WRITES,
        order_in_group=3,
        width=Width.SHORT,
        display_name="Enable deletes",
    )
    .define(
        REPLACE_NULL_WITH_DEFAULT,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="Whether a null field value is written as the field's schema default, when it has one.",
        group=_WRITES,
        order_in_group=5,
        width=Width.MEDIUM,
        display_name="Replace null value with default value",
    )
    .define(
        TABLE_NAME_FORMAT,
        ConfigType.STRING,
        "${topic}",
        NonEmptyString(),
        importance=Importance.MEDIUM,
        documentation="The destination table name; '${topic}' is replaced by the record's topic. "
        "A name with dots is qualified (schema.table).",
        group=_DATA_MAPPING,
        order_in_group=1,
        width=Width.LONG,
        display_name="Table Name Format",
    )
    .define(
        PK_MODE,
        ConfigType.STRING,
        "none",
        _enum(*PK_MODES),
        importance=Importance.HIGH,
        documentation="Where the primary key comes from. 'none': no key. 'kafka': the record's topic, "
        "partition and offset. 'record_key': the record key (a primitive, or fields of a Struct). "
        "'record_value': fields of the record value.",
        group=_DATA_MAPPING,
        order_in_group=2,
        width=Width.MEDIUM,
        display_name="Primary Key Mode",
    )
    .define(
        PK_FIELDS,
        ConfigType.LIST,
        "",
        importance=Importance.MEDIUM,
        documentation="Primary key column names, read according to pk.mode. kafka: none (then "
        "__connect_topic, __connect_partition, __connect_offset) or exactly three names. "
        "record_key: empty for all fields of a Struct key, one name for a primitive key. "
        "record_value: empty for all value fields, or the value fields to use.",
        group=_DATA_MAPPING,
        order_in_group=3,
        width=Width.LONG,
        display_name="Primary Key Fields",
    )
    .define(
        FIELDS_WHITELIST,
        ConfigType.LIST,
        "",
        importance=Importance.MEDIUM,
        documentation="Value fields to write as columns; empty means all of them. Primary key fields are "
        "written whatever this says.",
        group=_DATA_MAPPING,
        order_in_group=4,
        width=Width.LONG,
        display_name="Fields Whitelist",
    )
    .define(
        DB_TIMEZONE,
        ConfigType.STRING,
        "UTC",
        _check_timezone,
        importance=Importance.MEDIUM,
        documentation="Time zone in which Timestamp values are written to the database, e.g. UTC or Europe/Paris.",
        group=_DATA_MAPPING,
        order_in_group=5,
        width=Width.MEDIUM,
        display_name="DB Time Zone",
    )
    .define(
        AUTO_CREATE,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        documentation="Whether a missing destination table is created (CREATE TABLE) from the record schema.",
        group=_DDL,
        order_in_group=1,
        width=Width.SHORT,
        display_name="Auto-Create",
    )
    .define(
        AUTO_EVOLVE,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        documentation="Whether columns missing from the table are added (ALTER TABLE) when a record schema "
        "has new fields; they must be optional or have a default.",
        group=_DDL,
        order_in_group=2,
        width=Width.SHORT,
        display_name="Auto-Evolve",
    )
    .define(
        QUOTE_SQL_IDENTIFIERS,
        ConfigType.STRING,
        "ALWAYS",
        _enum(*QUOTE_METHODS),
        importance=Importance.MEDIUM,
        documentation="When table and column names are quoted in SQL statements: 'always' or 'never'.",
        group=_DDL,
        order_in_group=3,
        width=Width.MEDIUM,
        display_name="Quote Identifiers",
    )
    .define(
        MAX_RETRIES,
        ConfigType.INT,
        10,
        Range.at_least(0),
        importance=Importance.MEDIUM,
        documentation="How many times a failed write is retried before the task fails.",
        group=_RETRIES,
        order_in_group=1,
        width=Width.SHORT,
        display_name="Maximum Retries",
    )
    .define(
        RETRY_BACKOFF_MS,
        ConfigType.INT,
        3000,
        Range.at_least(0),
        importance=Importance.MEDIUM,
        documentation="Milliseconds to wait after a failed write before retrying it.",
        group=_RETRIES,
        order_in_group=2,
        width=Width.SHORT,
        display_name="Retry Backoff (millis)",
    )
)


class TableAlterOrCreateError(ConnectError):
    """A table is missing or lacks columns and cannot be created or altered."""


class _Settings:
    """The parsed, cross-checked sink config."""

    def __init__(self, props: dict[str, str]) -> None:
        v = CONFIG_DEF.parse(props)
        self.connector_name = props.get("name", "")
        self.url: str = v[CONNECTION_URL]
        self.user: str | None = v[CONNECTION_USER]
        password = v[CONNECTION_PASSWORD]
        self.password: str | None = password.value if password is not None else None
        self.dialect_name: str = (v[DIALECT_NAME] or "").strip()
        self.connection_attempts: int = v[CONNECTION_ATTEMPTS]
        self.connection_backoff_ms: int = v[CONNECTION_BACKOFF]
        self.insert_mode: str = v[INSERT_MODE].lower()
        self.batch_size: int = max(1, v[BATCH_SIZE])
        self.delete_enabled: bool = v[DELETE_ENABLED]
        self.replace_null_with_default: bool = v[REPLACE_NULL_WITH_DEFAULT]
        self.table_name_format: str = v[TABLE_NAME_FORMAT].strip()
        self.pk_mode: str = v[PK_MODE].lower()
        self.pk_fields: list[str] = list(v[PK_FIELDS])
        self.fields_whitelist: set[str] = set(v[FIELDS_WHITELIST])
        self.db_timezone: str = v[DB_TIMEZONE]
        self.tz = timezone(self.db_timezone)
        self.auto_create: bool = v[AUTO_CREATE]
        self.auto_evolve: bool = v[AUTO_EVOLVE]
        self.quote_identifiers: bool = v[QUOTE_SQL_IDENTIFIERS].lower() == "always"
        self.max_retries: int = v[MAX_RETRIES]
        self.retry_backoff_ms: int = v[RETRY_BACKOFF_MS]
        problems = cross_check(v)
        if problems:
            raise ConfigError(problems[0][1])


def cross_check(values: dict[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    """Problems between keys, as ``((keys...), message)``: what Confluent's config and
    validation refuse."""
    out: list[tuple[tuple[str, ...], str]] = []
    pk_mode = (values.get(PK_MODE) or "").lower()
    insert_mode = (values.get(INSERT_MODE) or "").lower()
    if values.get(DELETE_ENABLED) and pk_mode and pk_mode != "record_key":
        out.append(((PK_MODE, DELETE_ENABLED), "Deletes are only supported for pk.mode record_key"))
    if insert_mode in ("upsert", "update") and pk_mode == "none":
        out.append(
            (
                (INSERT_MODE, PK_MODE),
                f"insert.mode {insert_mode} requires a primary key: set pk.mode to kafka, record_key or record_value",
            )
        )
    pk_fields = values.get(PK_FIELDS) or []
    if pk_mode == "kafka" and len(pk_fields) not in (0, 3):
        out.append(
            (
                (PK_FIELDS,),
                "pk.mode kafka needs either no pk.fields (then "
                + ", ".join(DEFAULT_KAFKA_PK_NAMES)
                + f" are used) or exactly three, defined fields are: {list(pk_fields)}",
            )
        )
    return out


class JdbcSinkConnector(SinkConnector):
    """Writes records to a relational database (PostgreSQL, MariaDB/MySQL, SQLite)."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        _Settings(props)  # fail fast on a bad config
        self._props = dict(props)

    def task_class(self) -> type[Task]:
        return JdbcSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def validate(self, connector_configs: dict[str, str]) -> Config:
        result = super().validate(connector_configs)
        by_name = {cv.name: cv for cv in result.config_values}
        values = {name: cv.value for name, cv in by_name.items()}
        for keys, message in cross_check(values):
            for key in keys:
                if key in by_name:
                    by_name[key].add_error_message(message)
        if not any(cv.error_messages for cv in result.config_values):
            url_value = by_name.get(CONNECTION_URL)
            try:
                settings = _Settings(connector_configs)
                dialect = _make_dialect(settings)
                conn = dialect.connect()
                conn.close()
            except Exception as e:  # noqa: BLE001 - reported on the URL, as Confluent does
                if url_value is not None:
                    url_value.add_error_message(f"Could not connect to database. {e}")
        return result


def _make_dialect(settings: _Settings) -> Dialect:
    dialect = Dialect.for_url(
        settings.url, settings.user, settings.password, quote_identifiers=settings.quote_identifiers
    )
    if settings.dialect_name and DIALECT_NAMES[settings.dialect_name] != dialect.kind:
        raise ConfigError(DIALECT_NAME, settings.dialect_name, f"does not match the URL's database ({dialect.name})")
    return dialect


# ------------------------------------------------------------------------------- the task

_WRITE = 0
_DELETE = 1


class _Plan:
    """How records of one (table, key schema, value schema) become rows."""

    __slots__ = ("table", "key_cols", "value_cols", "extract", "delete_key")

    def __init__(
        self,
        table: str,
        key_cols: list[str],
        value_cols: list[str],
        extract: Callable[[SinkRecord], tuple[tuple, tuple]],
    ) -> None:
        self.table = table
        self.key_cols = key_cols
        self.value_cols = value_cols
        self.extract = extract


class _Segment:
    __slots__ = ("plan", "key_cols", "writes", "deletes")

    def __init__(self, plan: _Plan | None, key_cols: list[str], coalesce: bool) -> None:
        self.plan = plan
        self.key_cols = key_cols
        self.writes: Any = {} if coalesce else []
        self.deletes: dict[tuple, None] = {}


def _is_transient(exc: BaseException) -> bool:
    """Worth retrying: a lost connection, deadlock, lock or statement timeout."""
    if isinstance(exc, (ConnectionError, TimeoutError, RetriableError)):
        return True
    names = {c.__name__ for c in type(exc).__mro__}
    return bool(names & {"OperationalError", "InterfaceError"})


class JdbcSinkTask(SinkTask):
    """Writes records to database tables; see the module documentation."""

    def __init__(self) -> None:
        self.settings: _Settings | None = None
        self.dialect: Dialect | None = None
        self._conn: Any = None
        self._tables: dict[str, list[Column]] = {}
        self._plans: dict[tuple, _Plan] = {}
        self._last: tuple | None = None  # (value schema, key schema, table, plan) of the last record
        self._table_for_topic: dict[str, str] = {}
        self._remaining_retries = 0
        self.stats: collections.Counter[str] = collections.Counter()

    def version(self) -> str:
        return __version__

    # -- lifecycle -----------------------------------------------------------------------

    def start(self, props: dict[str, str]) -> None:
        self.settings = _Settings(props)
        self.dialect = _make_dialect(self.settings)
        self._remaining_retries = self.settings.max_retries
        log.info("JDBC sink task writing to %s (%s)", self.dialect.name, self.settings.url)

    def stop(self) -> None:
        self._close()

    def open(self, partitions: list[TopicPartition]) -> None:
        pass

    def close(self, partitions: list[TopicPartition]) -> None:
        pass

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        # put() commits its records before it returns: nothing is left to make durable.
        if self._conn is not None:
            try:
                self._conn.commit()
            except Exception as e:  # noqa: BLE001
                self._close()
                raise ConnectError(f"Commit failed: {e}") from e

    # -- connection ----------------------------------------------------------------------

    def _connection(self) -> Any:
        if self._conn is not None:
            return self._conn
        assert self.settings is not None and self.dialect is not None
        attempts = self.settings.connection_attempts
        for attempt in range(1, attempts + 1):
            try:
                if self.dialect.kind == "postgresql":
                    # the session's TimeZone reads our wall-clock timestamps in db.timezone
                    # when a column is a timestamptz (fixed offsets: PostgreSQL's own sign
                    # convention differs, so the server's setting stays)
                    conn = self.dialect.connect(timezone=_zone_name(self.settings.tz))
                else:
                    conn = self.dialect.connect()
                break
            except Exception as e:  # noqa: BLE001
                if attempt >= attempts:
                    raise RetriableError(f"Could not connect to {self.dialect.name}: {e}") from e
                log.info("Connection attempt %d/%d to %s failed: %s", attempt, attempts, self.dialect.name, e)
                time.sleep(self.settings.connection_backoff_ms / 1000.0)
        if self.dialect.kind == "mysql":
            # for TIMESTAMP columns of existing tables (DATETIME ones take the values as given)
            zone = _fixed_offset(self.settings.tz) or _zone_name(self.settings.tz)
            try:
                with conn.cursor() as cur:
                    cur.execute("SET time_zone = %s", (zone,))
                conn.commit()
            except Exception as e:  # noqa: BLE001 - named zones need the server's time zone tables
                log.info("Could not set the session time zone to %s: %s", zone, e)
                conn.rollback()
        self._conn = conn
        return conn

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.rollback()
            with contextlib.suppress(Exception):
                conn.close()

    def _rollback(self) -> None:
        if self._conn is None:
            return
        try:
            self._conn.rollback()
        except Exception:  # noqa: BLE001
            self._close()
            return
        forget = getattr(self.dialect, "forget_stages", None)
        if forget is not None:
            forget(self._conn)

    # -- put -----------------------------------------------------------------------------

    def _reporter(self) -> Any:
        context = getattr(self, "context", None)
        if context is None:
            return None
        try:
            return context.errant_record_reporter()
        except Exception:  # noqa: BLE001
            return None

    def put(self, records: list[SinkRecord]) -> None:
        if not records:
            return
        assert self.settings is not None
        reporter = self._reporter()
        entries: list[tuple] | None = None
        try:
            entries = self._prepare_all(records, reporter)
            if entries:
                self._write_entries(entries)
                self._connection().commit()
                self.stats["commits"] += 1
        except RetriableError as exc:
            self._rollback()
            self._retry_or_fail(exc, records)
        except ConnectError:  # a record refused without a reporter, or not tolerated
            self._rollback()
            raise
        except Exception as exc:  # a database error
            self._rollback()
            if _is_transient(exc):
                self._retry_or_fail(exc, records)
            if reporter is None or entries is None:
                raise ConnectError(f"Write of {len(records)} records failed: {exc}") from exc
            log.warning("Write of %d records failed (%s); writing them one by one", len(records), exc)
            self._unroll(entries, reporter)
        self._remaining_retries = self.settings.max_retries

    def _retry_or_fail(self, exc: BaseException, records: list[SinkRecord]) -> None:
        """Raise RetriableError while retries remain (the framework redelivers the same
        records after ``retry.backoff.ms``), then ConnectError."""
        assert self.settings is not None
        self._close()
        if self._remaining_retries > 0:
            self._remaining_retries -= 1
            log.warning(
                "Write of %d records failed, remaining retries=%d: %s", len(records), self._remaining_retries, exc
            )
            context = getattr(self, "context", None)
            if context is not None:
                context.timeout(self.settings.retry_backoff_ms)
            raise RetriableError(f"Write of {len(records)} records failed, will retry: {exc}") from exc
        raise ConnectError(f"Write of {len(records)} records failed after exhausting retries: {exc}") from exc

    def _reject(self, record: SinkRecord, error: ConnectError, reporter: Any) -> None:
        if reporter is None:
            raise error
        self.stats["records_reported"] += 1
        reporter.report(record, error)  # raises when errors are not tolerated

    def _prepare_all(self, records: list[SinkRecord], reporter: Any) -> list[tuple[Any, ...]]:
        """Check and convert every record: ``(table, op, key, row, plan, record)`` each."""
        out: list[tuple[Any, ...] | None] = []
        append = out.append
        prepare = self._prepare
        for record in records:
            try:
                append(prepare(record))
            except (DataError, TableAlterOrCreateError) as e:
                self._reject(record, e, reporter)
        return [e for e in out if e is not None]

    def _table_name(self, topic: str) -> str:
        name = self._table_for_topic.get(topic)
        if name is None:
            assert self.settings is not None
            name = self.settings.table_name_format.replace("${topic}", topic)
            self._table_for_topic[topic] = name
        return name

    def _where(self, record: SinkRecord) -> str:
        return (
            f"(topic='{record.topic}',partition={record.kafka_partition},"
            f"offset={record.kafka_offset},timestamp={record.timestamp})"
        )

    def _prepare(self, record: SinkRecord) -> tuple[Any, ...] | None:
        s = self.settings
        assert s is not None
        table = self._table_name(record.topic)
        value = record.value
        if value is None:
            if not s.delete_enabled:
                raise DataError(
                    f"Sink connector '{s.connector_name}' is configured with 'delete.enabled=false' and "
                    f"'pk.mode={s.pk_mode}' and therefore requires records with a non-null Struct value and "
                    f"non-null Struct schema, but found record at {self._where(record)} with a null value."
                )
            return self._prepare_delete(table, record)
        schema = record.value_schema
        if schema is None:
            raise DataError(
                f"The JDBC sink needs records with a value schema, but the record at {self._where(record)} "
                "has none (schemaless data). Use a converter that gives schemas (JsonConverter with "
                "schemas.enable=true, AvroConverter, ...)."
            )
        if schema.type is not Type.STRUCT or not isinstance(value, Struct):
            raise DataError(
                f"The JDBC sink needs Struct record values, but the record at {self._where(record)} has a "
                f"{schema.type.name} value schema."
            )
        key_schema = record.key_schema if s.pk_mode == "record_key" else None
        last = self._last
        if last is not None and last[0] is value.schema and last[1] is key_schema and last[2] == table:
            plan = last[3]  # the common case: the same schemas as the record before
        else:
            plan_key = (table, key_schema, value.schema)
            plan = self._plans.get(plan_key)
            if plan is None:
                plan = self._make_plan(table, record, key_schema, value.schema)
                self._plans[plan_key] = plan
            self._last = (value.schema, key_schema, table, plan)
        key, row = plan.extract(record)
        return (table, _WRITE, key, row, plan, record)

    # -- plans ---------------------------------------------------------------------------

    def _key_fields(
        self, table: str, record: SinkRecord, key_schema: Schema | None, value_schema: Schema | None
    ) -> list[tuple[str, Schema]]:
        s = self.settings
        assert s is not None
        mode = s.pk_mode
        if mode == "none":
            return []
        if mode == "kafka":
            names = s.pk_fields or list(DEFAULT_KAFKA_PK_NAMES)
            return [(names[0], Schema.STRING_SCHEMA), (names[1], Schema.INT32_SCHEMA), (names[2], Schema.INT64_SCHEMA)]
        if mode == "record_key":
            if key_schema is None or record.key is None:
                raise DataError(
                    f"Sink connector '{s.connector_name}' is configured with "
                    f"'delete.enabled={str(s.delete_enabled).lower()}' "
                    f"and 'pk.mode=record_key' and therefore requires records with a non-null key and non-null "
                    f"Struct or primitive key schema, but found record at {self._where(record)} with a "
                    f"{'null' if record.key is None else type(record.key).__name__} key and "
                    f"{'null' if key_schema is None else key_schema.type.name} key schema."
                )
            if key_schema.type.is_primitive:
                if len(s.pk_fields) != 1:
                    raise DataError(
                        "Need exactly one PK column defined since the key schema for records is a primitive "
                        f"type, defined columns are: {s.pk_fields}"
                    )
                return [(s.pk_fields[0], key_schema)]
            if key_schema.type is Type.STRUCT:
                names = s.pk_fields or [f.name for f in key_schema.fields()]
                out = []
                for name in names:
                    f = key_schema.field(name)
                    if f is None:
                        raise DataError(
                            f"PK mode for table '{table}' is record_key with configured PK fields {s.pk_fields}, "
                            f"but record key schema does not contain field: {name}"
                        )
                    out.append((name, f.schema))
                return out
            raise DataError(f"Key schema must be primitive type or Struct, but is of type: {key_schema.type.name}")
        # record_value
        assert value_schema is not None
        names = s.pk_fields or [f.name for f in value_schema.fields()]
        out = []
        for name in names:
            f = value_schema.field(name)
            if f is None:
                raise DataError(
                    f"PK mode for table '{table}' is record_value with configured PK fields {s.pk_fields}, "
                    f"but record value schema does not contain field: {name}"
                )
            out.append((name, f.schema))
        return out

    def _make_plan(self, table: str, record: SinkRecord, key_schema: Schema | None, value_schema: Schema) -> _Plan:
        s = self.settings
        dialect = self.dialect
        assert s is not None and dialect is not None
        key_fields = self._key_fields(table, record, key_schema, value_schema)
        key_names = [n for n, _ in key_fields]
        key_set = set(key_names)
        value_fields = [
            f
            for f in value_schema.fields()
            if f.name not in key_set and (not s.fields_whitelist or f.name in s.fields_whitelist)
        ]
        all_fields: dict[str, Schema] = dict(key_fields)
        for f in value_fields:
            all_fields[f.name] = f.schema
        if not all_fields:
            raise DataError(f"No fields found using key and value schemas for table: {table}")
        # Column order of a created table, as Confluent: the Kafka coordinates, the value's
        # fields in schema order, then any other (key) fields by name.
        ordered: list[str] = [n for n in DEFAULT_KAFKA_PK_NAMES if n in all_fields]
        ordered += [f.name for f in value_schema.fields() if f.name in all_fields and f.name not in ordered]
        ordered += sorted(n for n in all_fields if n not in ordered)
        for name in ordered:
            try:
                dialect.sql_type(all_fields[name], key=name in key_set)
            except DataError as e:
                raise DataError(f"Cannot write field '{name}' of the record at {self._where(record)}: {e}") from None
        fields = [(n, all_fields[n]) for n in ordered]
        columns = self._ensure_table(table, fields, key_names)
        key_cols = [columns[n] for n in key_names]
        value_cols = [columns[f.name] for f in value_fields]
        extract = self._extractor(key_schema, key_fields, value_fields, value_schema)
        return _Plan(table, key_cols, value_cols, extract)

    def _converter(self, schema: Schema) -> Callable[[Any], Any] | None:
        """A function turning a Connect value into what the driver takes; None: as it is."""
        import datetime as dt

        dialect, s = self.dialect, self.settings
        assert dialect is not None and s is not None
        tz = s.tz
        to_db = dialect.to_db_value
        kind = dialect.kind
        name = schema.name
        if name == Timestamp.LOGICAL_NAME:
            if kind != "sqlite" and tz is dt.UTC:
                utc = dt.UTC

                def timestamp_utc(v: Any) -> Any:
                    zone = v.tzinfo
                    if zone is None:
                        return v
                    if zone is not utc:  # converters give UTC: no conversion needed then
                        v = v.astimezone(utc)
                    return v.replace(tzinfo=None)

                return timestamp_utc
            return lambda v: to_db(schema, v, tz)
        if name in (Date.LOGICAL_NAME, Time.LOGICAL_NAME):
            return lambda v: to_db(schema, v, tz)
        if name == Decimal.LOGICAL_NAME:
            return (lambda v: to_db(schema, v, tz)) if kind == "sqlite" else None
        t = schema.type
        if t is Type.BYTES:
            return lambda v: v if type(v) is bytes else bytes(v)
        if t is Type.ARRAY:
            return lambda v: to_db(schema, v, tz)
        if t in (Type.FLOAT32, Type.FLOAT64) and kind != "postgresql":
            return lambda v: to_db(schema, v, tz)
        if t is Type.STRING and kind == "postgresql":

            def no_nul(v: str) -> str:
                if "\x00" in v:
                    raise DataError("PostgreSQL text cannot contain NUL (0x00) characters")
                return v

            return no_nul
        return None

    def _extractor(
        self,
        key_schema: Schema | None,
        key_fields: list[tuple[str, Schema]],
        value_fields: list[Any],
        value_schema: Schema,
    ) -> Callable[[SinkRecord], tuple[tuple, tuple]]:
        """The function turning a record into ``(key values, row)``; the row holds the key
        columns then the value columns, converted for the driver and checked."""
        s = self.settings
        assert s is not None
        mode = s.pk_mode
        where = self._where
        value_schemas = [f.schema for f in value_fields]
        schemas = [sch for _, sch in key_fields] + value_schemas
        names = [n for n, _ in key_fields] + [f.name for f in value_fields]
        n_keys = len(key_fields)
        defaults = [
            (i, sch.default_value)
            for i, sch in enumerate(schemas)
            if sch.default_value is not None and (s.replace_null_with_default or i < n_keys)
        ]
        required = [i for i, sch in enumerate(schemas) if not sch.optional or i < n_keys]
        converters = [(i, c) for i, sch in enumerate(schemas) if (c := self._converter(sch)) is not None]

        def take(positions: list[int]) -> Callable[[Any], tuple]:
            if not positions:
                return lambda values: ()
            if len(positions) == 1:
                p = positions[0]
                return lambda values: (values[p],)
            return itemgetter(*positions)

        take_values = take([f.index for f in value_fields])
        take_key = take([])
        key_is_struct = False
        if mode == "record_value":
            take_key = take([value_schema.field(n).index for n, _ in key_fields])  # type: ignore[union-attr]
        elif mode == "record_key":
            assert key_schema is not None
            key_is_struct = key_schema.type is Type.STRUCT
            if key_is_struct:
                take_key = take([key_schema.field(n).index for n, _ in key_fields])  # type: ignore[union-attr]

        def struct_values(struct: Struct) -> Any:
            if type(struct) is Struct:
                return struct.field_values()
            return [struct.get_without_default(f.name) for f in struct.schema.fields()]

        def key_of(record: SinkRecord, values: Any) -> tuple:
            if mode == "kafka":
                return (record.topic, record.kafka_partition, record.kafka_offset)
            if mode == "record_value":
                return take_key(values)
            if mode == "none":
                return ()
            key = record.key
            if key is None:
                raise DataError(f"The record at {where(record)} has a null key, which pk.mode record_key needs")
            if key_is_struct:
                if not isinstance(key, Struct) or key.schema != key_schema:
                    raise DataError(f"The key of the record at {where(record)} does not match its key schema")
                return take_key(struct_values(key))
            return (key,)

        # "x is None" tests compiled for the positions that matter: faster than "None in
        # row", which compares every value with None (about 1 µs for a decimal.Decimal).
        def any_none(positions: list[int]) -> Callable[[Any], bool]:
            if not positions:
                return lambda row: False
            body = " or ".join(f"row[{int(i)}] is None" for i in positions)
            return eval(f"lambda row: {body}")  # noqa: S307 - built from integers only

        null_default = any_none([i for i, _ in defaults])
        null_required = any_none(required)

        def with_defaults(row: Any) -> list[Any]:
            row = list(row)
            for i, default in defaults:
                if row[i] is None:
                    row[i] = default
            return row

        def null_error(record: SinkRecord, row: Any) -> DataError:
            i = next(i for i in required if row[i] is None)
            return DataError(
                f'Invalid value: null used for required field: "{names[i]}", schema type: '
                f"{schemas[i].type.name} (record at {where(record)})"
            )

        def extract(record: SinkRecord) -> tuple[tuple, tuple]:
            values = struct_values(record.value)
            row: Any = key_of(record, values) + take_values(values)
            if null_default(row):
                row = with_defaults(row)
            if null_required(row):
                raise null_error(record, row)
            if converters:
                row = list(row)
                for i, conv in converters:
                    v = row[i]
                    if v is not None:
                        try:
                            row[i] = conv(v)
                        except DataError as e:
                            raise DataError(
                                f'Cannot write field "{names[i]}" of the record at {where(record)}: {e}'
                            ) from None
                        except (TypeError, ValueError, AttributeError, OverflowError) as e:
                            raise DataError(
                                f'Invalid value for field "{names[i]}" of the record at {where(record)}: {e}'
                            ) from None
                row = tuple(row)
            elif type(row) is list:
                row = tuple(row)
            return row[:n_keys], row

        return extract

    def _prepare_delete(self, table: str, record: SinkRecord) -> tuple | None:
        s = self.settings
        assert s is not None
        key_schema = record.key_schema
        plan_key = (table, key_schema, None)
        plan = self._plans.get(plan_key)
        if plan is None:
            key_fields = self._key_fields(table, record, key_schema, None)
            columns = self._table_columns(table)
            if not columns:
                return None  # no table, so no row to delete
            names = self._match_columns(columns, [n for n, _ in key_fields])
            missing = [n for n, _ in key_fields if n not in names]
            if missing:
                raise TableAlterOrCreateError(f"Table {table} has no key columns {missing} to delete by")
            key_cols = [names[n] for n, _ in key_fields]
            converters = [self._converter(sch) for _, sch in key_fields]
            struct_key = key_schema is not None and key_schema.type is Type.STRUCT
            field_names = [n for n, _ in key_fields]
            where = self._where

            def extract(rec: SinkRecord) -> tuple[tuple, tuple]:
                key = rec.key
                if key is None:
                    raise DataError(f"The tombstone at {where(rec)} has a null key: nothing to delete")
                if struct_key:
                    values = [key.get(n) for n in field_names]
                else:
                    values = [key]
                if any(v is None for v in values):
                    raise DataError(f"The tombstone at {where(rec)} has a null key field")
                out = tuple(c(v) if c is not None else v for c, v in zip(converters, values, strict=False))
                return out, out

            plan = _Plan(table, key_cols, [], extract)
            self._plans[plan_key] = plan
        key, _ = plan.extract(record)
        return (table, _DELETE, key, None, plan, record)

    # -- tables --------------------------------------------------------------------------

    def _table_columns(self, table: str, refresh: bool = False) -> list[Column]:
        if refresh or table not in self._tables:
            assert self.dialect is not None
            conn = self._connection()
            columns = self.dialect.describe_columns(conn, table)
            conn.commit()  # end the catalog read's transaction
            if not columns:
                return []
            self._tables[table] = columns
        return self._tables[table]

    @staticmethod
    def _match_columns(columns: Sequence[Column], names: Sequence[str]) -> dict[str, str]:
        """Field name → column name: the same name, else the only one equal ignoring case."""
        exact = {c.name for c in columns}
        folded: dict[str, list[str]] = {}
        for c in columns:
            folded.setdefault(c.name.lower(), []).append(c.name)
        out = {}
        for n in names:
            if n in exact:
                out[n] = n
            elif len(folded.get(n.lower(), ())) == 1:
                out[n] = folded[n.lower()][0]
        return out

    def _ddl(self, statements: list[str]) -> None:
        assert self.dialect is not None
        conn = self._connection()
        # Commit what the connection has first (nothing, between puts), run the DDL in a
        # transaction of its own.
        conn.commit()
        cur = conn.cursor()
        try:
            for sql in statements:
                log.info("%s: %s", self.dialect.name, sql)
                cur.execute(sql)
        finally:
            cur.close()
        conn.commit()

    def _ensure_table(self, table: str, fields: list[tuple[str, Schema]], key_names: list[str]) -> dict[str, str]:
        s, dialect = self.settings, self.dialect
        assert s is not None and dialect is not None
        names = [n for n, _ in fields]
        try:
            columns = self._table_columns(table)
            if not columns:
                if not s.auto_create:
                    raise TableAlterOrCreateError(f"Table {table} is missing and auto-creation is disabled")
                sql = dialect.create_table(table, fields, key_names if s.pk_mode != "none" else [])
                try:
                    self._ddl([sql])
                    self.stats["tables_created"] += 1
                except Exception as e:  # noqa: BLE001 - maybe created meanwhile by another task
                    if _is_transient(e) and not _exists_error(e):
                        raise
                    self._rollback()
                    if not self._table_columns(table, refresh=True):
                        raise TableAlterOrCreateError(f"Failed to create table {table}: {e}") from e
                columns = self._table_columns(table, refresh=True)
                if not columns:
                    raise TableAlterOrCreateError(f"Table {table} was created but cannot be described")
            matched = self._match_columns(columns, names)
            missing = [(n, sch) for n, sch in fields if n not in matched]
            if missing:
                if not s.auto_evolve:
                    raise TableAlterOrCreateError(
                        f"Table {table} is missing fields ({', '.join(n for n, _ in missing)}) and "
                        "auto-evolution is disabled"
                    )
                for n, sch in missing:
                    if not sch.optional and sch.default_value is None:
                        raise TableAlterOrCreateError(
                            f"Cannot ALTER TABLE {table} to add missing field {n}, as the field is not optional "
                            "and does not have a default value"
                        )
                try:
                    self._ddl(dialect.alter_add_columns(table, missing))
                    self.stats["tables_altered"] += 1
                except Exception as e:  # noqa: BLE001 - maybe altered meanwhile by another task
                    if _is_transient(e) and not _exists_error(e):
                        raise
                    self._rollback()
                columns = self._table_columns(table, refresh=True)
                matched = self._match_columns(columns, names)
                still = [n for n, _ in fields if n not in matched]
                if still:
                    raise TableAlterOrCreateError(f"Failed to amend table {table} to add missing fields: {still}")
            return matched
        except (TableAlterOrCreateError, DataError):
            raise
        except ConnectError:
            raise
        except Exception as e:  # noqa: BLE001
            self._rollback()
            if _is_transient(e):
                raise RetriableError(f"Could not create or alter table {table}: {e}") from e
            raise TableAlterOrCreateError(f"Could not create or alter table {table}: {e}") from e

    # -- writing -------------------------------------------------------------------------

    def _write_entries(self, entries: list[tuple]) -> None:
        """Write prepared records, ``batch.size`` per table at a time (not committed)."""
        s = self.settings
        assert s is not None
        size = s.batch_size
        buffers: dict[str, list[tuple]] = {}
        for entry in entries:
            buf = buffers.get(entry[0])
            if buf is None:
                buf = buffers[entry[0]] = []
            buf.append(entry)
            if len(buf) >= size:
                self._write_table(entry[0], buf)
                buffers[entry[0]] = []
        for table, buf in buffers.items():
            if buf:
                self._write_table(table, buf)

    def _write_table(self, table: str, entries: list[tuple]) -> None:
        """One table's batch, in segments that keep the records' order where it matters: a
        new segment starts when the columns change or a write follows a delete. Within a
        segment the writes go first, then the deletes; in upsert and update mode only the
        last write per key is kept, and a delete drops the writes of its key before it."""
        s, dialect = self.settings, self.dialect
        assert s is not None and dialect is not None
        conn = self._connection()
        mode = s.insert_mode
        coalesce = mode != "insert"
        segments: list[_Segment] = []
        current: _Segment | None = None
        for _table, op, key, row, plan, _record in entries:
            if op == _WRITE:
                if current is None or current.plan is not plan or current.deletes:
                    current = _Segment(plan, plan.key_cols, coalesce)
                    segments.append(current)
                if coalesce:
                    current.writes[key] = row
                else:
                    current.writes.append(row)
            else:
                if current is None or current.key_cols != plan.key_cols:
                    current = _Segment(None, plan.key_cols, coalesce)
                    segments.append(current)
                if coalesce:
                    current.writes.pop(key, None)
                current.deletes[key] = None
        for seg in segments:
            if seg.writes:
                rows = list(seg.writes.values()) if coalesce else seg.writes
                assert seg.plan is not None
                dialect.write_rows(conn, table, mode, seg.plan.key_cols, seg.plan.value_cols, rows)
                self.stats["records_written"] += len(rows)
                self.stats["batches"] += 1
            if seg.deletes:
                dialect.delete_rows(conn, table, seg.key_cols, list(seg.deletes))
                self.stats["records_deleted"] += len(seg.deletes)

    def _unroll(self, entries: list[tuple], reporter: Any) -> None:
        """Write the records one at a time, each committed on its own; report those the
        database refuses (after a batch of them failed)."""
        conn = self._connection()
        for entry in entries:
            try:
                self._write_table(entry[0], [entry])
                conn.commit()
            except Exception as exc:  # noqa: BLE001
                self._rollback()
                if _is_transient(exc):
                    raise ConnectError(f"Write failed: {exc}") from exc
                conn = self._connection()
                self.stats["records_reported"] += 1
                reporter.report(entry[5], ConnectError(f"The database refused the record: {exc}"))
        self.stats["commits"] += 1


def _exists_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "already exists" in text or "duplicate column" in text or "duplicate" in text


def _zone_name(tz: Any) -> str | None:
    """The IANA name of a zone with rules, ``UTC`` for UTC, None for other fixed offsets."""
    import datetime as dt

    if tz is dt.UTC:
        return "UTC"
    key = getattr(tz, "key", None)
    return key if isinstance(key, str) else None


def _fixed_offset(tz: Any) -> str | None:
    """``+HH:MM`` for a fixed-offset zone (UTC included), None for a zone with rules."""
    import datetime as dt

    if isinstance(tz, dt.timezone):
        offset = tz.utcoffset(None)
        total = int(offset.total_seconds()) // 60
        sign = "+" if total >= 0 else "-"
        total = abs(total)
        return f"{sign}{total // 60:02d}:{total % 60:02d}"
    return None
