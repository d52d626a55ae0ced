"""Configuration of the JDBC sink: Confluent's keys, types, defaults and checks
(:data:`CONFIG_DEF`), the parsed settings (:class:`SinkSettings`), the checks across keys
(:func:`cross_check`) and the dialect the settings name (:func:`make_dialect`). What the
keys mean is described in :mod:`.sink`."""

from __future__ import annotations

from typing import Any

from sluice.api import (
    NO_DEFAULT,
    ConfigDef,
    ConfigError,
    ConfigType,
    Importance,
    NonEmptyString,
    Range,
    Width,
)
from sluice.api.config import LambdaValidator
from sluice.connectors.jdbc.dialect import Dialect, timezone

__all__ = ["CONFIG_DEF", "DEFAULT_KAFKA_PK_NAMES", "SinkSettings", "cross_check", "make_dialect"]

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


class SinkSettings:
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


def make_dialect(settings: SinkSettings) -> Dialect:
    """The dialect of ``connection.url``, checked against ``dialect.name`` when that is set."""
    dialect = Dialect.for_url(
        settings.url, settings.user, settings.password, quote_identifiers=settings.quote_identifiers
    )
    if settings.dialect_name and DIALECT_NAMES[settings.dialect_name] != dialect.kind:
        raise ConfigError(DIALECT_NAME, settings.dialect_name, f"does not match the URL's database ({dialect.name})")
    return dialect
