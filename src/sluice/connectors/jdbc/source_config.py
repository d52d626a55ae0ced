r"""Configuration of the JDBC source connector: keys, types and defaults of Confluent's
``io.confluent.connect.jdbc.JdbcSourceConnector`` (10.9), as the :class:`ConfigDef`\ s of
the connector (``CONFIG_DEF``) and of its tasks (``TASK_CONFIG_DEF``).

Only keys whose behaviour Sluice implements are defined; see :mod:`.source` for the list
and for what differs from Confluent's connector. The checks of single keys are in
:mod:`.source_validators`; the parsed settings and the checks that involve several keys
in :mod:`.source_settings`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sluice.api.config import ConfigDef, ConfigType, Importance, Range, Recommender, ValidString, Width
from sluice.api.errors import ConfigError
from sluice.connectors.jdbc.source_validators import (
    EnumRecommender,
    Hidden,
    check_regex_list,
    check_regex_to_column,
    check_regex_to_columns,
    check_time_zone,
    check_topic_prefix,
)

__all__ = [
    "CONFIG_DEF",
    "MODE_BULK",
    "MODE_INCREMENTING",
    "MODE_TIMESTAMP",
    "MODE_TIMESTAMP_INCREMENTING",
    "TASK_CONFIG_DEF",
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


# -- recommenders ----------------------------------------------------------------------


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


_NUMERIC_MAPPING = EnumRecommender(*NUMERIC_MAPPINGS)
_QUOTE_METHOD = EnumRecommender(*QUOTE_METHODS)
_MODE_DEPENDENTS = _ModeDependents()


# -- definitions ------------------------------------------------------------------------


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
        check_regex_list,
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
        check_regex_list,
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
        check_regex_to_columns,
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
        check_regex_to_column,
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
        recommender=Hidden(),
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
        check_topic_prefix,
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
        check_time_zone,
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
