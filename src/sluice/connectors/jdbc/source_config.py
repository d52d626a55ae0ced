"""Configuration of the JDBC source connector: keys, types and defaults of Confluent's
``io.confluent.connect.jdbc.JdbcSourceConnector`` (10.9), and the checks that involve
several keys.

Only keys whose behaviour Sluice implements are defined; see :mod:`.source` for the list
and for what differs from Confluent's connector.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sluice.api.config import (
    ConfigDef,
    ConfigType,
    ConfigValue,
    Importance,
    Range,
    Recommender,
    ValidString,
    Width,
)
from sluice.api.errors import ConfigError

__all__ = [
    "CONFIG_DEF",
    "MODE_BULK",
    "MODE_INCREMENTING",
    "MODE_TIMESTAMP",
    "MODE_TIMESTAMP_INCREMENTING",
    "TASK_CONFIG_DEF",
    "SourceSettings",
    "check_cross_key_rules",
    "parse_zone",
]

# -- key names --------------------------------------------------------------------------

CONNECTION_URL = "connection.url"
CONNECTION_USER = "connection.user"
CONNECTION_PASSWORD = "connection.password"
CONNECTION_ATTEMPTS = "connection.attempts"
CONNECTION_BACKOFF_MS = "connection.backoff.ms"
TABLE_WHITELIST = "table.whitelist"
TABLE_BLACKLIST = "table.blacklist"
TABLE_INCLUDE_LIST = "table.include.list"
TABLE_EXCLUDE_LIST = "table.exclude.list"
CATALOG_PATTERN = "catalog.pattern"
SCHEMA_PATTERN = "schema.pattern"
NUMERIC_PRECISION_MAPPING = "numeric.precision.mapping"
NUMERIC_MAPPING = "numeric.mapping"
DIALECT_NAME = "dialect.name"
MODE = "mode"
INCREMENTING_COLUMN_NAME = "incrementing.column.name"
TIMESTAMP_COLUMN_NAME = "timestamp.column.name"
TIMESTAMP_COLUMNS_MAPPING = "timestamp.columns.mapping"
INCREMENTING_COLUMN_MAPPING = "incrementing.column.mapping"
TIMESTAMP_INITIAL = "timestamp.initial"
VALIDATE_NON_NULL = "validate.non.null"
QUERY = "query"
QUERY_MASKED = "query.masked"
QUOTE_SQL_IDENTIFIERS = "quote.sql.identifiers"
QUERY_SUFFIX = "query.suffix"
QUERY_RETRY_ATTEMPTS = "query.retry.attempts"
TABLE_TYPES = "table.types"
POLL_INTERVAL_MS = "poll.interval.ms"
BATCH_MAX_ROWS = "batch.max.rows"
TABLE_POLL_INTERVAL_MS = "table.poll.interval.ms"
TOPIC_PREFIX = "topic.prefix"
TIMESTAMP_DELAY_INTERVAL_MS = "timestamp.delay.interval.ms"
DB_TIMEZONE = "db.timezone"
# task-only keys (set by the connector in each task config)
TABLES = "tables"
TABLES_FETCHED = "tables.fetched"
# Sluice's own: bulk reads of large tables split across Spark partitions
BULK_SPLIT_PARTITIONS = "sluice.bulk.split.partitions"
BULK_SPLIT_MIN_ROWS = "sluice.bulk.split.min.rows"

MODE_UNSPECIFIED = ""
MODE_BULK = "bulk"
MODE_TIMESTAMP = "timestamp"
MODE_INCREMENTING = "incrementing"
MODE_TIMESTAMP_INCREMENTING = "timestamp+incrementing"

NUMERIC_MAPPINGS = ("none", "precision_only", "best_fit", "best_fit_eager_double")
QUOTE_METHODS = ("always", "never")

DATABASE_GROUP = "Database"
MODE_GROUP = "Mode"
CONNECTOR_GROUP = "Connector"
SPARK_GROUP = "Spark"

_TOPIC_PREFIX_INVALID = re.compile(r"[^a-zA-Z0-9._-]")
_SELECT = re.compile(r"(?is)^SELECT\b")


# -- validators and recommenders --------------------------------------------------------


class _EnumRecommender(Recommender):
    """A value among a few names, upper or lower case (Confluent's ``EnumRecommender``)."""

    def __init__(self, *values: str) -> None:
        self.values = list(values)
        self._valid = {v.lower() for v in values} | {v.upper() for v in values}

    def __call__(self, name: str, value: Any) -> None:
        if value is not None and str(value) not in self._valid:
            raise ConfigError(name, value, "Invalid enumerator")

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]:
        return list(self.values)

    def __str__(self) -> str:
        return "[" + ", ".join(self.values) + "]"


class _ModeDependents(Recommender):
    """Shows the column keys only for the modes that use them."""

    _TIMESTAMP = {TIMESTAMP_COLUMN_NAME, TIMESTAMP_COLUMNS_MAPPING, VALIDATE_NON_NULL, TIMESTAMP_INITIAL}
    _INCREMENTING = {INCREMENTING_COLUMN_NAME, INCREMENTING_COLUMN_MAPPING, VALIDATE_NON_NULL}

    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool:
        mode = parsed.get(MODE)
        if mode == MODE_BULK:
            return False
        if mode == MODE_TIMESTAMP:
            return name in self._TIMESTAMP
        if mode == MODE_INCREMENTING:
            return name in self._INCREMENTING
        if mode == MODE_TIMESTAMP_INCREMENTING:
            return name in self._TIMESTAMP | self._INCREMENTING
        if mode == MODE_UNSPECIFIED:
            raise ConfigError("Query mode must be specified")
        raise ConfigError(f"Invalid mode: {mode}")


class _Hidden(Recommender):
    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool:
        return False


def _regex_list(name: str, value: Any) -> None:
    for regex in value or []:
        try:
            re.compile(regex.strip())
        except re.error as e:
            raise ConfigError(
                name, value, f"Must be a valid comma-separated list of regular expression patterns: {e}"
            ) from None


def _regex_to_columns(name: str, value: Any) -> None:
    for mapping in value or []:
        parts = mapping.strip().split(":")
        if len(parts) != 2:
            raise ConfigError(name, mapping.strip(), "Invalid format. Expected 'regex:[col1|col2|...]'")
        regex, columns = parts[0].strip(), parts[1].strip()
        try:
            re.compile(regex)
        except re.error as e:
            raise ConfigError(name, regex, f"Invalid regular expression: {e}") from None
        if not (columns.startswith("[") and columns.endswith("]")):
            raise ConfigError(name, columns, "Columns list must be enclosed in square brackets")
        inner = columns[1:-1]
        if not inner.strip():
            raise ConfigError(name, columns, "Columns list cannot be empty")
        if any(not c.strip() for c in inner.split("|")):
            raise ConfigError(name, columns, "Every column name should be non-empty string")


def _regex_to_column(name: str, value: Any) -> None:
    for mapping in value or []:
        parts = mapping.strip().split(":")
        if len(parts) != 2:
            raise ConfigError(name, mapping.strip(), "Invalid format. Expected 'regex:columnName'")
        regex, column = parts[0].strip(), parts[1].strip()
        try:
            re.compile(regex)
        except re.error as e:
            raise ConfigError(name, regex, f"Invalid regular expression: {e}") from None
        if not column:
            raise ConfigError(name, column, "Column name cannot be empty")


def _topic_prefix(name: str, value: Any) -> None:
    if value is None:
        raise ConfigError(name, value, "Topic prefix must not be null.")
    trimmed = str(value).strip()
    if len(trimmed) > 249:
        raise ConfigError(name, value, "Topic prefix length must not exceed max topic name length, 249 chars")
    if _TOPIC_PREFIX_INVALID.search(trimmed):
        raise ConfigError(
            name, value, "Topic prefix must not contain any character other than ASCII alphanumerics, '.', '_' and '-'."
        )


_SHORT_ZONE_IDS = {  # java.time.ZoneId.SHORT_IDS
    "ACT": "Australia/Darwin",
    "AET": "Australia/Sydney",
    "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo",
    "AST": "America/Anchorage",
    "BET": "America/Sao_Paulo",
    "BST": "Asia/Dhaka",
    "CAT": "Africa/Harare",
    "CNT": "America/St_Johns",
    "CST": "America/Chicago",
    "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa",
    "ECT": "Europe/Paris",
    "IET": "America/Indiana/Indianapolis",
    "IST": "Asia/Kolkata",
    "JST": "Asia/Tokyo",
    "MIT": "Pacific/Apia",
    "NET": "Asia/Yerevan",
    "NST": "Pacific/Auckland",
    "PLT": "Asia/Karachi",
    "PNT": "America/Phoenix",
    "PRT": "America/Puerto_Rico",
    "PST": "America/Los_Angeles",
    "SST": "Pacific/Guadalcanal",
    "VST": "Asia/Ho_Chi_Minh",
    "EST": "-05:00",
    "MST": "-07:00",
    "HST": "-10:00",
}
_OFFSET = re.compile(r"^(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?$")


def parse_zone(text: str) -> dt.tzinfo:
    """A time zone from a Java ``ZoneId`` string: a region (``Europe/Paris``), ``UTC``/``Z``,
    an offset (``+02:00``, ``UTC+2``) or one of Java's short ids (``PST``)."""
    value = text.strip()
    if value in ("Z", "UTC", "GMT", "UT"):
        return dt.UTC
    m = _OFFSET.match(value)
    if m:
        sign, hours, minutes, seconds = m.groups()
        delta = dt.timedelta(hours=int(hours), minutes=int(minutes or 0), seconds=int(seconds or 0))
        if delta > dt.timedelta(hours=18):
            raise ValueError(f"offset out of range: {value}")
        return dt.timezone(-delta if sign == "-" else delta)
    try:
        return zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        short = _SHORT_ZONE_IDS.get(value)
        if short is None:
            raise ValueError(f"unknown time zone {value}") from None
        return parse_zone(short)


def _time_zone(name: str, value: Any) -> None:
    if value is None:
        return
    try:
        parse_zone(str(value))
    except (ValueError, OSError):
        raise ConfigError(
            name,
            value,
            "Invalid time zone. See the list of valid time zones at "
            "https://docs.oracle.com/javase/8/docs/api/java/time/ZoneId.html#shortIds",
        ) from None


_NUMERIC_MAPPING = _EnumRecommender(*NUMERIC_MAPPINGS)
_QUOTE_METHOD = _EnumRecommender(*QUOTE_METHODS)
_MODE_DEPENDENTS = _ModeDependents()


def _define_database(d: ConfigDef) -> None:
    order = iter(range(1, 100))
    d.define(
        CONNECTION_URL,
        ConfigType.STRING,
        "",
        importance=Importance.HIGH,
        documentation="JDBC connection URL, e.g. jdbc:postgresql://localhost:5432/db, "
        "jdbc:mariadb://localhost:3306/db, jdbc:mysql://localhost/db or jdbc:sqlite:test.db.",
        group=DATABASE_GROUP,
        order_in_group=next(order),
        width=Width.LONG,
        display_name="JDBC URL",
        dependents=[TABLE_WHITELIST, TABLE_BLACKLIST],
    )
    d.define(
        CONNECTION_USER,
        ConfigType.STRING,
        None,
        importance=Importance.HIGH,
        documentation="JDBC connection user.",
        group=DATABASE_GROUP,
        order_in_group=next(order),
        width=Width.LONG,
        display_name="JDBC User",
    )
    d.define(
        CONNECTION_PASSWORD,
        ConfigType.PASSWORD,
        None,
        importance=Importance.HIGH,
        documentation="JDBC connection password.",
        group=DATABASE_GROUP,
        order_in_group=next(order),
        width=Width.SHORT,
        display_name="JDBC Password",
    )
    d.define(
        CONNECTION_ATTEMPTS,
        ConfigType.INT,
        3,
        Range.at_least(1),
        importance=Importance.LOW,
        documentation="Maximum number of attempts to retrieve a valid JDBC connection. Must be a positive integer.",
        group=DATABASE_GROUP,
        order_in_group=next(order),
        width=Width.SHORT,
        display_name="JDBC connection attempts",
    )
    d.define(
        CONNECTION_BACKOFF_MS,
        ConfigType.LONG,
        10000,
        importance=Importance.LOW,
        documentation="Backoff time in milliseconds between connection attempts.",
        group=DATABASE_GROUP,
        order_in_group=next(order),
        width=Width.SHORT,
        display_name="JDBC connection backoff in milliseconds",
    )
    d.define(
        TABLE_WHITELIST,
        ConfigType.LIST,
        "",
        importance=Importance.MEDIUM,
        documentation="List of tables to include in copying. If specified, table.blacklist may not be set. "
        "Use a comma-separated list to specify multiple tables.",
        group=DATABASE_GROUP,
        order_in_group=next(order),
        width=Width.LONG,
        display_name="Table Whitelist",
    )
    d.define(
        TABLE_BLACKLIST,
        ConfigType.LIST,
        "",
        importance=Importance.MEDIUM,
        documentation="List of tables to exclude from copying. If specified, table.whitelist may not be set. "
        "Use a comma-separated list to specify multiple tables.",
        group=DATABASE_GROUP,
        order_in_group=next(order),
        width=Width.LONG,
        display_name="Table Blacklist",
    )
    d.define(
        TABLE_INCLUDE_LIST,
        ConfigType.LIST,
        [],
        _regex_list,
        importance=Importance.MEDIUM,
        documentation="Comma-separated regular expressions matched against the fully-qualified names "
        "of the tables to copy (case-sensitive). Cannot be combined with table.whitelist "
        "or table.blacklist.",
        group=DATABASE_GROUP,
        order_in_group=next(order),
        width=Width.LONG,
        display_name="Tables Included (Regex)",
    )
    d.define(
        TABLE_EXCLUDE_LIST,
        ConfigType.LIST,
        [],
        _regex_list,
        importance=Importance.MEDIUM,
        documentation="Comma-separated regular expressions matched against the fully-qualified names "
        "of tables not to copy; applies to the tables table.include.list matches, which "
        "it requires.",
        group=DATABASE_GROUP,
        order_in_group=next(order),
        width=Width.LONG,
        display_name="Tables Excluded (Regex)",
    )
    d.define(
        CATALOG_PATTERN,
        ConfigType.STRING,
        None,
        importance=Importance.MEDIUM,
        documentation="Catalog pattern to fetch table metadata from the database. Null (the default) "
        "does not narrow the search by catalog.",
        group=DATABASE_GROUP,
        order_in_group=next(order),
        width=Width.SHORT,
        display_name="Schema pattern",
    )
    d.define(
        SCHEMA_PATTERN,
        ConfigType.STRING,
        None,
        importance=Importance.HIGH,
        documentation="Schema pattern to fetch table metadata from the database. Null (the default) "
        "fetches the tables of every schema.",
        group=DATABASE_GROUP,
        order_in_group=next(order),
        width=Width.SHORT,
        display_name="Schema pattern",
    )
    d.define(
        NUMERIC_PRECISION_MAPPING,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.LOW,
        documentation="Deprecated: whether to map NUMERIC values by precision to integral types. "
        "Use numeric.mapping instead.",
        group=DATABASE_GROUP,
        order_in_group=next(order),
        width=Width.SHORT,
        display_name="Map Numeric Values By Precision (deprecated)",
    )
    d.define(
        NUMERIC_MAPPING,
        ConfigType.STRING,
        None,
        _NUMERIC_MAPPING,
        importance=Importance.LOW,
        documentation="Map NUMERIC values by precision and optionally scale to integral or decimal types: "
        "none (every NUMERIC is a Connect Decimal), precision_only (NUMERIC(p,0) with "
        "p <= 18 becomes INT8..INT64), best_fit (as precision_only, and NUMERIC(p,s) with "
        "p <= 18 and s > 0 becomes FLOAT64), best_fit_eager_double (every NUMERIC with a "
        "scale becomes FLOAT64).",
        group=DATABASE_GROUP,
        order_in_group=next(order),
        width=Width.SHORT,
        display_name="Map Numeric Values, Integral or Decimal, By Precision and Scale",
        recommender=_NUMERIC_MAPPING,
    )
    d.define(
        DIALECT_NAME,
        ConfigType.STRING,
        "",
        importance=Importance.LOW,
        documentation="The database dialect; empty (the default) chooses it from the connection URL.",
        group=DATABASE_GROUP,
        order_in_group=next(order),
        width=Width.LONG,
        display_name="Database Dialect",
    )


def _define_mode(d: ConfigDef) -> None:
    order = iter(range(1, 100))
    d.define(
        MODE,
        ConfigType.STRING,
        MODE_UNSPECIFIED,
        ValidString.in_(MODE_UNSPECIFIED, MODE_BULK, MODE_TIMESTAMP, MODE_INCREMENTING, MODE_TIMESTAMP_INCREMENTING),
        importance=Importance.HIGH,
        documentation="How each table is read on each poll: bulk (the whole table), incrementing "
        "(new rows, by a strictly incrementing column), timestamp (new and modified rows, "
        "by timestamp columns), timestamp+incrementing (both, with unique offsets).",
        group=MODE_GROUP,
        order_in_group=next(order),
        width=Width.MEDIUM,
        display_name="Table Loading Mode",
        dependents=[
            INCREMENTING_COLUMN_NAME,
            TIMESTAMP_COLUMN_NAME,
            INCREMENTING_COLUMN_MAPPING,
            TIMESTAMP_COLUMNS_MAPPING,
            VALIDATE_NON_NULL,
        ],
    )
    d.define(
        INCREMENTING_COLUMN_NAME,
        ConfigType.STRING,
        "",
        importance=Importance.MEDIUM,
        documentation="The strictly incrementing column used to detect new rows. Empty: the table's "
        "auto-incrementing column. The column may not be nullable.",
        group=MODE_GROUP,
        order_in_group=next(order),
        width=Width.MEDIUM,
        display_name="Incrementing Column Name",
        recommender=_MODE_DEPENDENTS,
    )
    d.define(
        TIMESTAMP_COLUMN_NAME,
        ConfigType.LIST,
        "",
        importance=Importance.MEDIUM,
        documentation="One or more timestamp columns (COALESCE of them) used to detect new or modified "
        "rows. At least one should not be nullable.",
        group=MODE_GROUP,
        order_in_group=next(order),
        width=Width.MEDIUM,
        display_name="Timestamp Column Name",
        recommender=_MODE_DEPENDENTS,
    )
    d.define(
        TIMESTAMP_COLUMNS_MAPPING,
        ConfigType.LIST,
        [],
        _regex_to_columns,
        importance=Importance.MEDIUM,
        documentation="Comma-separated 'regex:[col1|col2]' mappings from fully-qualified table names to "
        "timestamp columns; every included table must match exactly one.",
        group=MODE_GROUP,
        order_in_group=next(order),
        width=Width.LONG,
        display_name="Table to timestamp columns mappings",
        recommender=_MODE_DEPENDENTS,
    )
    d.define(
        INCREMENTING_COLUMN_MAPPING,
        ConfigType.LIST,
        [],
        _regex_to_column,
        importance=Importance.MEDIUM,
        documentation="Comma-separated 'regex:column' mappings from fully-qualified table names to "
        "incrementing columns; every included table must match exactly one.",
        group=MODE_GROUP,
        order_in_group=next(order),
        width=Width.LONG,
        display_name="Table to incrementing column mappings",
        recommender=_MODE_DEPENDENTS,
    )
    d.define(
        TIMESTAMP_INITIAL,
        ConfigType.LONG,
        None,
        importance=Importance.LOW,
        documentation="The epoch timestamp (ms) the first timestamp query starts from; -1 for the "
        "current time. Unset: all data is read.",
        group=MODE_GROUP,
        order_in_group=next(order),
        width=Width.MEDIUM,
        display_name="Unix time value of initial timestamp",
        recommender=_MODE_DEPENDENTS,
    )
    d.define(
        VALIDATE_NON_NULL,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="Check that the incrementing and timestamp columns are NOT NULL; the task fails "
        "to start otherwise.",
        group=MODE_GROUP,
        order_in_group=next(order),
        width=Width.SHORT,
        display_name="Validate Non Null",
        recommender=_MODE_DEPENDENTS,
    )
    d.define(
        QUERY,
        ConfigType.STRING,
        "",
        importance=Importance.MEDIUM,
        documentation="A query that selects the rows to copy instead of whole tables. In the incremental "
        "modes a WHERE clause is appended to it, so it may not have one of its own.",
        group=MODE_GROUP,
        order_in_group=next(order),
        width=Width.SHORT,
        display_name="Query",
    )
    d.define(
        QUERY_MASKED,
        ConfigType.PASSWORD,
        "",
        importance=Importance.MEDIUM,
        documentation="Same as 'query' but the query is never logged or shown.",
        group=MODE_GROUP,
        order_in_group=next(order),
        width=Width.SHORT,
        display_name="Query (Masked)",
        recommender=_Hidden(),
    )
    d.define(
        QUOTE_SQL_IDENTIFIERS,
        ConfigType.STRING,
        "always",
        _QUOTE_METHOD,
        importance=Importance.MEDIUM,
        documentation="When to quote table and column names in the statements the connector builds.",
        group=MODE_GROUP,
        order_in_group=next(order),
        width=Width.MEDIUM,
        display_name="Quote Identifiers",
        recommender=_QUOTE_METHOD,
    )
    d.define(
        QUERY_SUFFIX,
        ConfigType.STRING,
        "",
        importance=Importance.LOW,
        documentation="Suffix to append at the end of the generated query.",
        group=MODE_GROUP,
        order_in_group=next(order),
        width=Width.MEDIUM,
        display_name="Query suffix",
    )
    d.define(
        QUERY_RETRY_ATTEMPTS,
        ConfigType.INT,
        -1,
        importance=Importance.LOW,
        documentation="Number of times to retry a failed query; -1 retries forever.",
        group=MODE_GROUP,
        order_in_group=next(order),
        width=Width.MEDIUM,
        display_name="Query Retry Attempts",
    )


def _define_connector(d: ConfigDef) -> None:
    order = iter(range(1, 100))
    d.define(
        TABLE_TYPES,
        ConfigType.LIST,
        "TABLE",
        importance=Importance.LOW,
        documentation="The table types to copy: TABLE, VIEW (and on PostgreSQL PARTITIONED TABLE, "
        "MATERIALIZED VIEW, FOREIGN TABLE).",
        group=CONNECTOR_GROUP,
        order_in_group=next(order),
        width=Width.MEDIUM,
        display_name="Table Types",
    )
    d.define(
        POLL_INTERVAL_MS,
        ConfigType.INT,
        5000,
        importance=Importance.HIGH,
        documentation="Frequency in ms to poll for new data in each table.",
        group=CONNECTOR_GROUP,
        order_in_group=next(order),
        width=Width.SHORT,
        display_name="Poll Interval (ms)",
    )
    d.define(
        BATCH_MAX_ROWS,
        ConfigType.INT,
        1000,
        importance=Importance.LOW,
        documentation="Maximum number of rows of one table in a single batch when polling for new data.",
        group=CONNECTOR_GROUP,
        order_in_group=next(order),
        width=Width.SHORT,
        display_name="Max Rows Per Batch",
    )
    d.define(
        TABLE_POLL_INTERVAL_MS,
        ConfigType.LONG,
        60000,
        importance=Importance.LOW,
        documentation="Frequency in ms to look for new or removed tables, which may result in updated "
        "task configurations.",
        group=CONNECTOR_GROUP,
        order_in_group=next(order),
        width=Width.SHORT,
        display_name="Metadata Change Monitoring Interval (ms)",
    )
    d.define(
        TOPIC_PREFIX,
        ConfigType.STRING,
        "",
        _topic_prefix,
        importance=Importance.HIGH,
        documentation="Prefix prepended to table names to name the topics, or with a query the whole topic name.",
        group=CONNECTOR_GROUP,
        order_in_group=next(order),
        width=Width.MEDIUM,
        display_name="Topic Prefix",
    )
    d.define(
        TIMESTAMP_DELAY_INTERVAL_MS,
        ConfigType.LONG,
        0,
        importance=Importance.HIGH,
        documentation="How long after a row with a certain timestamp appears before it is read, to let "
        "transactions with earlier timestamps complete.",
        group=CONNECTOR_GROUP,
        order_in_group=next(order),
        width=Width.MEDIUM,
        display_name="Delay Interval (ms)",
    )
    d.define(
        DB_TIMEZONE,
        ConfigType.STRING,
        "UTC",
        _time_zone,
        importance=Importance.MEDIUM,
        documentation="Time zone of timestamps without a zone in the database, used in time-based "
        "criteria and to read them. Defaults to UTC.",
        group=CONNECTOR_GROUP,
        order_in_group=next(order),
        width=Width.MEDIUM,
        display_name="DB time zone",
    )


def _define_spark(d: ConfigDef) -> None:
    d.define(
        BULK_SPLIT_PARTITIONS,
        ConfigType.INT,
        4,
        Range.at_least(1),
        importance=Importance.LOW,
        documentation="Sluice: in bulk mode, read a table whose single-column integer primary key spans "
        f"at least {BULK_SPLIT_MIN_ROWS} values in this many key ranges, each in a Spark "
        "partition of its own, in parallel. 1 reads every table through the task's one "
        "cursor, as Confluent's connector does.",
        group=SPARK_GROUP,
        order_in_group=1,
        width=Width.SHORT,
        display_name="Bulk split partitions",
    )
    d.define(
        BULK_SPLIT_MIN_ROWS,
        ConfigType.LONG,
        100_000,
        Range.at_least(1),
        importance=Importance.LOW,
        documentation="Sluice: the smallest primary key span (max - min + 1) of a table that bulk mode "
        f"splits across {BULK_SPLIT_PARTITIONS} Spark partitions.",
        group=SPARK_GROUP,
        order_in_group=2,
        width=Width.SHORT,
        display_name="Bulk split minimum rows",
    )


def _base() -> ConfigDef:
    d = ConfigDef()
    _define_database(d)
    _define_mode(d)
    _define_connector(d)
    _define_spark(d)
    return d


CONFIG_DEF = _base()
TASK_CONFIG_DEF = (
    ConfigDef(CONFIG_DEF)
    .define(
        TABLES,
        ConfigType.LIST,
        importance=Importance.HIGH,
        documentation="List of tables for this task to watch for changes.",
    )
    .define_internal(TABLES_FETCHED, ConfigType.BOOLEAN, False, Importance.HIGH)
)


# -- parsed settings ---------------------------------------------------------------------


@dataclass
class SourceSettings:
    """The parsed connector (or task) config."""

    url: str
    user: str | None
    password: str | None
    connection_attempts: int
    connection_backoff_ms: int
    whitelist: list[str]
    blacklist: list[str]
    include_list: list[str]
    exclude_list: list[str]
    catalog_pattern: str | None
    schema_pattern: str | None
    numeric_mapping: str
    dialect_name: str
    mode: str
    incrementing_column: str
    timestamp_columns: list[str]
    timestamp_columns_mapping: list[str]
    incrementing_column_mapping: list[str]
    timestamp_initial: int | None
    validate_non_null: bool
    query: str | None
    query_masked: bool
    quote_identifiers: bool
    query_suffix: str
    query_retry_attempts: int
    table_types: list[str]
    poll_interval_ms: int
    batch_max_rows: int
    table_poll_interval_ms: int
    topic_prefix: str
    timestamp_delay_ms: int
    db_timezone: str
    tables: list[str] = field(default_factory=list)
    tables_fetched: bool = True
    bulk_split_partitions: int = 1
    bulk_split_min_rows: int = 100_000

    @property
    def zone(self) -> dt.tzinfo:
        return parse_zone(self.db_timezone)

    @property
    def uses_timestamp(self) -> bool:
        return self.mode in (MODE_TIMESTAMP, MODE_TIMESTAMP_INCREMENTING)

    @property
    def uses_incrementing(self) -> bool:
        return self.mode in (MODE_INCREMENTING, MODE_TIMESTAMP_INCREMENTING)

    @property
    def uses_regex_filtering(self) -> bool:
        return bool(self.include_list or self.exclude_list)

    @staticmethod
    def parse(props: Mapping[str, Any], task: bool = False) -> SourceSettings:
        values = (TASK_CONFIG_DEF if task else CONFIG_DEF).parse(props)
        password = values[CONNECTION_PASSWORD]
        masked = values[QUERY_MASKED]
        masked_query = masked.value if masked is not None and masked.value else None
        query = masked_query or values[QUERY] or None
        mapping = values[NUMERIC_MAPPING]
        if mapping is None:
            mapping = "precision_only" if values[NUMERIC_PRECISION_MAPPING] else "none"
        settings = SourceSettings(
            url=values[CONNECTION_URL],
            user=values[CONNECTION_USER],
            password=password.value if password is not None else None,
            connection_attempts=values[CONNECTION_ATTEMPTS],
            connection_backoff_ms=values[CONNECTION_BACKOFF_MS],
            whitelist=[t for t in values[TABLE_WHITELIST] if t],
            blacklist=[t for t in values[TABLE_BLACKLIST] if t],
            include_list=[r.strip() for r in values[TABLE_INCLUDE_LIST] if r.strip()],
            exclude_list=[r.strip() for r in values[TABLE_EXCLUDE_LIST] if r.strip()],
            catalog_pattern=values[CATALOG_PATTERN],
            schema_pattern=values[SCHEMA_PATTERN],
            numeric_mapping=mapping.lower(),
            dialect_name=values[DIALECT_NAME] or "",
            mode=values[MODE],
            incrementing_column=values[INCREMENTING_COLUMN_NAME] or "",
            timestamp_columns=[c for c in values[TIMESTAMP_COLUMN_NAME] if c],
            timestamp_columns_mapping=[m.strip() for m in values[TIMESTAMP_COLUMNS_MAPPING] if m.strip()],
            incrementing_column_mapping=[m.strip() for m in values[INCREMENTING_COLUMN_MAPPING] if m.strip()],
            timestamp_initial=values[TIMESTAMP_INITIAL],
            validate_non_null=values[VALIDATE_NON_NULL],
            query=query,
            query_masked=masked_query is not None,
            quote_identifiers=values[QUOTE_SQL_IDENTIFIERS].lower() != "never",
            query_suffix=(values[QUERY_SUFFIX] or "").strip(),
            query_retry_attempts=values[QUERY_RETRY_ATTEMPTS],
            table_types=[t for t in values[TABLE_TYPES] if t] or ["TABLE"],
            poll_interval_ms=values[POLL_INTERVAL_MS],
            batch_max_rows=values[BATCH_MAX_ROWS],
            table_poll_interval_ms=values[TABLE_POLL_INTERVAL_MS],
            topic_prefix=values[TOPIC_PREFIX].strip(),
            timestamp_delay_ms=values[TIMESTAMP_DELAY_INTERVAL_MS],
            db_timezone=values[DB_TIMEZONE],
            bulk_split_partitions=values[BULK_SPLIT_PARTITIONS],
            bulk_split_min_rows=values[BULK_SPLIT_MIN_ROWS],
        )
        if task:
            settings.tables = list(values[TABLES] if values[TABLES] is not None else [])
            settings.tables_fetched = values[TABLES_FETCHED]
        return settings


# -- checks that involve several keys (Confluent's JdbcSourceConnectorValidation) --------


def _is_using_legacy(s: SourceSettings) -> bool:
    return bool(
        s.whitelist
        or s.blacklist
        or s.incrementing_column.strip()
        or (s.timestamp_columns and s.timestamp_columns[0].strip())
    )


def _is_using_new(s: SourceSettings) -> bool:
    return bool(s.include_list or s.exclude_list or s.incrementing_column_mapping or s.timestamp_columns_mapping)


def check_cross_key_rules(props: Mapping[str, Any], values: dict[str, ConfigValue]) -> bool:
    """Add Confluent's multi-key errors to ``values``; returns whether the config passed.

    Run only when every key parsed on its own. The order and the stop-at-first-failing
    group follow Confluent's validation, so the same config reports the same errors.
    """

    def error(key: str, message: str) -> None:
        if key in values:
            values[key].add_error_message(message)

    s = SourceSettings.parse(props)
    # query / query.masked
    raw_query = props.get(QUERY) or ""
    masked = values[QUERY_MASKED].value if QUERY_MASKED in values else None
    masked_text = masked.value if masked is not None and getattr(masked, "value", None) else ""
    if str(raw_query).strip() and masked_text:
        message = "Both 'query' and 'query.masked' configs cannot be set at the same time. Please use only one of them."
        error(QUERY, message)
        error(QUERY_MASKED, message)
        return False
    # legacy/new filtering configs (not in query mode)
    if s.query is None:
        legacy, new = _is_using_legacy(s), _is_using_new(s)
        if legacy and new:
            message = (
                "Cannot mix legacy and new configuration approaches. Legacy configurations (table.whitelist, "
                "table.blacklist, timestamp.column.name, incrementing.column.name) cannot be used together "
                "with new configurations (table.include.list, table.exclude.list, timestamp.columns.mapping, "
                "incrementing.column.mapping). Please choose one approach: either use all legacy "
                "configurations or all new configurations."
            )
            for key, present in (
                (TABLE_WHITELIST, s.whitelist),
                (TABLE_BLACKLIST, s.blacklist),
                (TABLE_INCLUDE_LIST, s.include_list),
                (TABLE_EXCLUDE_LIST, s.exclude_list),
                (TIMESTAMP_COLUMN_NAME, s.timestamp_columns and s.timestamp_columns[0].strip()),
                (TIMESTAMP_COLUMNS_MAPPING, s.timestamp_columns_mapping),
                (INCREMENTING_COLUMN_NAME, s.incrementing_column.strip()),
                (INCREMENTING_COLUMN_MAPPING, s.incrementing_column_mapping),
            ):
                if present:
                    error(key, message)
            return False
        if not legacy and not new:
            message = (
                "At least one table filtering configuration is required. Provide one of: "
                f"{TABLE_WHITELIST}, {TABLE_BLACKLIST}, {TABLE_INCLUDE_LIST}, or {TABLE_EXCLUDE_LIST}."
            )
            for key in (TABLE_WHITELIST, TABLE_BLACKLIST, TABLE_INCLUDE_LIST, TABLE_EXCLUDE_LIST):
                error(key, message)
            return False
        if s.whitelist and s.blacklist:
            message = f"{TABLE_WHITELIST} and {TABLE_BLACKLIST} are exclusive."
            error(TABLE_WHITELIST, message)
            error(TABLE_BLACKLIST, message)
            return False
    else:
        if s.whitelist or s.blacklist or s.include_list or s.exclude_list:
            message = (
                "Do not specify table filtering configs with 'query'. Remove table.whitelist / "
                "table.blacklist / table.include.list / table.exclude.list when using query mode or "
                "'query' when using table filtering mode."
            )
            error(QUERY, message)
            error(QUERY_MASKED, message)
            for key, present in (
                (TABLE_WHITELIST, s.whitelist),
                (TABLE_BLACKLIST, s.blacklist),
                (TABLE_INCLUDE_LIST, s.include_list),
                (TABLE_EXCLUDE_LIST, s.exclude_list),
            ):
                if present:
                    error(key, message)
            return False
        key = QUERY_MASKED if s.query_masked else QUERY
        if not _SELECT.match(s.query.strip()):
            error(
                key,
                f"Only SELECT statements are supported for '{key}'. Please provide a statement that "
                "starts with SELECT.",
            )
            return False
        if s.uses_incrementing and not s.incrementing_column.strip():
            error(
                INCREMENTING_COLUMN_NAME,
                f"'{INCREMENTING_COLUMN_NAME}' must be provided when using mode '{MODE_INCREMENTING}' or "
                f"'{MODE_TIMESTAMP_INCREMENTING}' with a custom query. The incrementing column cannot be "
                "auto-discovered in query mode because there is no table to inspect.",
            )
            return False
    if s.mode == MODE_UNSPECIFIED:
        error(MODE, "Query mode must be specified")
        return False
    if s.uses_timestamp and s.query is None and not _is_using_new(s) and not s.timestamp_columns:
        error(TIMESTAMP_COLUMN_NAME, f"'{TIMESTAMP_COLUMN_NAME}' must be provided when using mode '{s.mode}'.")
        return False
    if s.uses_timestamp and s.query is not None and not s.timestamp_columns:
        error(TIMESTAMP_COLUMN_NAME, f"'{TIMESTAMP_COLUMN_NAME}' must be provided when using mode '{s.mode}'.")
        return False
    if s.query is None and _is_using_new(s):
        if s.exclude_list and not s.include_list:
            error(
                TABLE_EXCLUDE_LIST,
                f"{TABLE_EXCLUDE_LIST} cannot be used without {TABLE_INCLUDE_LIST}. "
                "Exclude list only applies to tables that match the include list.",
            )
            return False
        if s.uses_timestamp and not s.timestamp_columns_mapping:
            error(
                MODE,
                f"Timestamp column configuration must be provided when using mode '{MODE_TIMESTAMP}' "
                f"or '{MODE_TIMESTAMP_INCREMENTING}'. Provide 'timestamp.columns.mapping'.",
            )
            return False
        if not s.uses_timestamp and s.timestamp_columns_mapping:
            error(
                MODE,
                "Timestamp column configurations should not be provided if mode is not "
                f"'{MODE_TIMESTAMP}' or '{MODE_TIMESTAMP_INCREMENTING}'. Remove 'timestamp.columns.mapping'.",
            )
            return False
        if s.uses_incrementing and not s.incrementing_column_mapping:
            error(
                MODE,
                "Incrementing column configuration must be provided when using mode "
                f"'{MODE_INCREMENTING}' or '{MODE_TIMESTAMP_INCREMENTING}'. "
                "Provide 'incrementing.column.mapping'.",
            )
            return False
        if not s.uses_incrementing and s.incrementing_column_mapping:
            error(
                MODE,
                "Incrementing column configurations should not be provided if mode is not "
                f"'{MODE_INCREMENTING}' or '{MODE_TIMESTAMP_INCREMENTING}'. "
                "Remove 'incrementing.column.mapping'.",
            )
            return False
    return True
