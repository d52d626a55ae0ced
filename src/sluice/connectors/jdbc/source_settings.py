"""The parsed JDBC source config (:class:`SourceSettings`) and the checks that involve
several keys (Confluent's ``JdbcSourceConnectorValidation``)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sluice.api.config import ConfigValue
from sluice.connectors.jdbc.source_config import (
    BATCH_MAX_ROWS,
    BULK_SPLIT_MIN_ROWS,
    BULK_SPLIT_PARTITIONS,
    CATALOG_PATTERN,
    CONFIG_DEF,
    CONNECTION_ATTEMPTS,
    CONNECTION_BACKOFF_MS,
    CONNECTION_PASSWORD,
    CONNECTION_URL,
    CONNECTION_USER,
    DB_TIMEZONE,
    DIALECT_NAME,
    INCREMENTING_COLUMN_MAPPING,
    INCREMENTING_COLUMN_NAME,
    MODE,
    MODE_INCREMENTING,
    MODE_TIMESTAMP,
    MODE_TIMESTAMP_INCREMENTING,
    MODE_UNSPECIFIED,
    NUMERIC_MAPPING,
    NUMERIC_PRECISION_MAPPING,
    POLL_INTERVAL_MS,
    QUERY,
    QUERY_MASKED,
    QUERY_RETRY_ATTEMPTS,
    QUERY_SUFFIX,
    QUOTE_SQL_IDENTIFIERS,
    SCHEMA_PATTERN,
    TABLE_BLACKLIST,
    TABLE_EXCLUDE_LIST,
    TABLE_INCLUDE_LIST,
    TABLE_POLL_INTERVAL_MS,
    TABLE_TYPES,
    TABLE_WHITELIST,
    TABLES,
    TABLES_FETCHED,
    TASK_CONFIG_DEF,
    TIMESTAMP_COLUMN_NAME,
    TIMESTAMP_COLUMNS_MAPPING,
    TIMESTAMP_DELAY_INTERVAL_MS,
    TIMESTAMP_INITIAL,
    TOPIC_PREFIX,
    VALIDATE_NON_NULL,
)
from sluice.connectors.jdbc.source_validators import parse_zone

__all__ = ["SourceSettings", "check_cross_key_rules"]

_SELECT = re.compile(r"(?is)^SELECT\b")


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
