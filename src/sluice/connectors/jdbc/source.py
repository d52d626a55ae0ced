"""``io.confluent.connect.jdbc.JdbcSourceConnector`` and its task: tables (or a query) of
PostgreSQL, MariaDB/MySQL or SQLite into Kafka topics.

Configuration: Confluent's keys, types and defaults (:mod:`.source_config`):
``connection.url`` (``jdbc:postgresql://…``, ``jdbc:mariadb://…``, ``jdbc:mysql://…``,
``jdbc:sqlite:…``), ``connection.user``, ``connection.password``, ``connection.attempts``,
``connection.backoff.ms``, ``mode`` (``bulk``, ``incrementing``, ``timestamp``,
``timestamp+incrementing``), ``incrementing.column.name``, ``timestamp.column.name``,
``validate.non.null``, ``timestamp.initial``, ``table.whitelist``/``table.blacklist`` or
``table.include.list``/``table.exclude.list`` with ``incrementing.column.mapping``/
``timestamp.columns.mapping``, ``query`` (or ``query.masked``), ``query.suffix``,
``query.retry.attempts``, ``quote.sql.identifiers``, ``schema.pattern``, ``table.types``
(``TABLE``, ``VIEW``), ``poll.interval.ms`` (5000), ``batch.max.rows`` (1000, Confluent's
default since 10.8.5), ``table.poll.interval.ms`` (60000), ``topic.prefix``,
``timestamp.delay.interval.ms``, ``db.timezone`` (UTC), ``numeric.mapping`` /
``numeric.precision.mapping``, ``tasks.max``.

The connector lists the tables (:class:`TableMonitor`, again every
``table.poll.interval.ms``; a change requests a task reconfiguration), filters them and
spreads them over up to ``tasks.max`` tasks in contiguous groups, each task config
carrying its ``tables`` as Confluent writes them (quoted, comma-separated). A query makes
one task.

A task keeps one querier per table (:mod:`.source_querier`) on one connection. Each
``poll()`` serves the queriers whose poll interval is due, least recently run first:
up to ``batch.max.rows`` rows from the current query of one table, moving on to the
next due table when a query's rows are all read; a query whose rows are not all read
stays open (a streaming cursor) and continues on the next poll, as Confluent's task
does. Queries: bulk ``SELECT * FROM t``; incrementing ``… WHERE inc > ? ORDER BY inc
ASC``; timestamp ``… WHERE ts > ? AND ts < ? ORDER BY ts ASC`` (the upper bound is the
database's clock minus ``timestamp.delay.interval.ms``; several timestamp columns are
``COALESCE``\\ d); timestamp+incrementing ``… WHERE ts < ? AND ((ts = ? AND inc > ?) OR
ts > ?) ORDER BY ts,inc ASC``. In query mode the same criteria are appended to the query.

Records: topic ``topic.prefix`` + table name (query mode: the prefix alone), no key, a
struct value named after the table (unnamed for a query) whose schema is built from the
result's columns (:mod:`.source_schema`), source partition and offset as Confluent's
(:mod:`.source_querier`); offsets are read back from the offset store when the task
starts (protocol 1 partitions first, then the bare table name of older versions).

Bulk reads of large tables run on Spark in parallel (Sluice's own, not in Confluent's
connector): when a bulk-mode table with a single-column integer primary key spans at
least ``sluice.bulk.split.min.rows`` key values, the task asks the framework to read it in
``sluice.bulk.split.partitions`` key ranges (``SourceTaskContext.request_split_read``),
each in a Spark partition of its own (:meth:`JdbcSourceTask.read_split`); tables without
such a key, queries and tables with a ``query.suffix`` are read through the task's cursor.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from sluice import __version__
from sluice.api.config import Config, ConfigDef
from sluice.api.connector import Task
from sluice.api.errors import ConfigError, ConnectError, DataError
from sluice.api.records import SourceRecord
from sluice.api.source import ExactlyOnceSupport, SourceConnector, SourceTask, partition_key
from sluice.connectors.jdbc.dialect import Dialect
from sluice.connectors.jdbc.source_config import (
    CONFIG_DEF,
    CONNECTION_URL,
    INCREMENTING_COLUMN_NAME,
    MODE,
    MODE_BULK,
    MODE_INCREMENTING,
    MODE_TIMESTAMP,
    MODE_TIMESTAMP_INCREMENTING,
    QUERY,
    QUERY_MASKED,
    TABLE_BLACKLIST,
    TABLE_WHITELIST,
    TABLES,
    TABLES_FETCHED,
)
from sluice.connectors.jdbc.source_querier import (
    KeyRange,
    Querier,
    split_key_ranges,
    table_partition,
    table_partition_v0,
)
from sluice.connectors.jdbc.source_queries import (
    ReadSession,
    TableId,
    autoincrement_column,
    check_columns_exist,
    check_not_null,
    connect_or_db_errors,
    db_errors,
    format_table_list,
    is_transient,
    parse_table_list,
)
from sluice.connectors.jdbc.source_settings import SourceSettings, check_cross_key_rules

__all__ = ["JdbcSourceConnector", "JdbcSourceTask", "TableMonitor", "group_partitions"]

log = logging.getLogger(__name__)

STARTUP_LIST_TIMEOUT_S = 10.0
# primary key types a bulk read may be split on (database base type names, lower case)
_INTEGER_TYPES = frozenset({"smallint", "integer", "bigint", "int", "int2", "int4", "int8", "tinyint", "mediumint"})
_MAX_IDLE_WAIT_S = 1.0  # poll() blocks at most this long when nothing is due


def _dialect(settings: SourceSettings) -> Dialect:
    return Dialect.for_url(settings.url, settings.user, settings.password, quote_identifiers=settings.quote_identifiers)


def _connect_with_retries(
    session: ReadSession, attempts: int, backoff_ms: int, stop: threading.Event | None = None
) -> None:
    for attempt in range(1, max(attempts, 1) + 1):
        try:
            session.connect()
            return
        except connect_or_db_errors() as e:
            if attempt >= attempts:
                raise ConnectError(f"Failed to connect to {session.dialect.name} after {attempt} attempts: {e}") from e
            log.info(
                "Unable to connect to the database on attempt %d/%d; retrying in %d ms: %s",
                attempt,
                attempts,
                backoff_ms,
                e,
            )
            if stop is not None:
                if stop.wait(backoff_ms / 1000.0):
                    raise ConnectError("Stopped while connecting to the database") from e
            else:
                time.sleep(backoff_ms / 1000.0)


def group_partitions(elements: Sequence[Any], groups: int) -> list[list[Any]]:
    """``ConnectorUtils.groupPartitions``: ``groups`` contiguous, balanced groups (the
    first ones one longer when the elements do not divide evenly)."""
    if groups <= 0:
        raise ValueError("Number of groups must be positive.")
    per_group, leftover = divmod(len(elements), groups)
    result: list[list[Any]] = []
    index = 0
    for g in range(groups):
        size = per_group + (1 if g < leftover else 0)
        result.append(list(elements[index : index + size]))
        index += size
    return result


# ---------------------------------------------------------------------------- table monitor


class TableMonitor:
    """Lists the tables the connector copies; every ``poll_ms`` looks again and calls
    ``on_change`` when the set changed. Listing errors are logged and retried at the next
    interval, as Confluent's ``TableMonitorThread`` does."""

    def __init__(
        self,
        list_tables: Callable[[], list[TableId]],
        settings: SourceSettings,
        on_change: Callable[[], None],
        on_error: Callable[[BaseException], None],
        poll_ms: int,
    ) -> None:
        self._list = list_tables
        self._settings = settings
        self._on_change = on_change
        self._on_error = on_error
        self._poll_s = max(poll_ms, 1) / 1000.0
        self._tables: list[TableId] | None = None
        self._lock = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="sluice-jdbc-table-monitor", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        with self._lock:
            self._lock.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                changed = self.update()
            except Exception as e:  # the connector fails with it
                log.error("Encountered an unrecoverable error while reading tables from the database", exc_info=True)
                self._on_error(
                    ConnectError(f"Encountered an unrecoverable error while reading tables from the database: {e}")
                )
                return
            if changed and not self._stop.is_set():
                log.info("Tables changed; requesting task reconfiguration")
                self._on_change()
            if self._stop.wait(self._poll_s):
                return

    def update(self) -> bool:
        """Read the tables now; returns whether the filtered set changed."""
        try:
            found = self._list()
        except connect_or_db_errors() as e:
            log.error(
                "Error while trying to get updated table list, ignoring and waiting for next table poll interval: %s", e
            )
            return False
        tables = filter_tables(found, self._settings)
        with self._lock:
            previous, self._tables = self._tables, tables
            self._lock.notify_all()
        return previous != tables

    def tables(self, timeout: float = STARTUP_LIST_TIMEOUT_S) -> list[TableId] | None:
        """The current tables (waiting up to ``timeout`` for the first listing), or None."""
        with self._lock:
            self._lock.wait_for(lambda: self._tables is not None or self._stop.is_set(), timeout)
            tables = self._tables
        if tables is None:
            return None
        by_name: dict[str, list[TableId]] = {}
        for t in tables:
            by_name.setdefault(t.table, []).append(t)
        duplicates = {k: v for k, v in by_name.items() if len(v) > 1}
        if duplicates:
            s = self._settings
            key = (
                f"'{TABLE_WHITELIST}'"
                if s.whitelist
                else f"'{TABLE_BLACKLIST}'"
                if s.blacklist
                else f"'{TABLE_WHITELIST}' or '{TABLE_BLACKLIST}'"
            )
            error = ConnectError(
                "The connector uses the unqualified table name as the topic name and has detected duplicate "
                "unqualified table names. This could lead to mixed data types in the topic and downstream "
                "processing errors. To prevent such processing errors, the JDBC Source connector fails to start "
                f"when it detects duplicate table name configurations. Update the connector's {key} config to "
                "include exactly one table in each of the tables listed below.\n\t"
                + str([[str(t) for t in group] for group in duplicates.values()])
            )
            self._on_error(error)
            raise error
        return tables


def filter_tables(tables: Sequence[TableId], s: SourceSettings) -> list[TableId]:
    """The tables the connector copies: ``table.include.list``/``table.exclude.list``
    regular expressions on the qualified name, or ``table.whitelist``/``table.blacklist``
    entries that name a table qualified, quoted or by its bare name."""
    if s.uses_regex_filtering:
        include = [re.compile(r) for r in s.include_list]
        exclude = [re.compile(r) for r in s.exclude_list]
        out: list[TableId] = []
        for t in tables:
            name = t.fqn
            matched = any(r.fullmatch(name) for r in include) and not any(r.fullmatch(name) for r in exclude)
            if matched and t not in out:
                out.append(t)
        return out

    def names(t: TableId) -> set[str]:
        return {t.fqn, t.table, t.quoted(lambda p: '"' + p + '"'), t.quoted(lambda p: "`" + p + "`")}

    if s.whitelist:
        wanted = set(s.whitelist)
        return [t for t in tables if names(t) & wanted]
    if s.blacklist:
        unwanted = set(s.blacklist)
        return [t for t in tables if not names(t) & unwanted]
    return list(tables)


# ------------------------------------------------------------------------------- connector


class JdbcSourceConnector(SourceConnector):
    """Copies tables (or the rows of a query) of a relational database into topics."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}
        self._settings: SourceSettings | None = None
        self._dialect: Dialect | None = None
        self._session: ReadSession | None = None
        self._monitor: TableMonitor | None = None
        self._session_lock = threading.Lock()

    def version(self) -> str:
        return __version__

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport | None:
        """Supported in the incrementing and timestamp modes, whose offsets say which rows
        were copied (a transaction holds rows and the offset after them); not in bulk mode,
        which copies whole tables again every poll interval and keeps no offsets."""
        mode = (connector_config.get(MODE) or "").strip().lower()
        if mode in (MODE_INCREMENTING, MODE_TIMESTAMP, MODE_TIMESTAMP_INCREMENTING):
            return ExactlyOnceSupport.SUPPORTED
        return ExactlyOnceSupport.UNSUPPORTED

    def task_class(self) -> type[Task]:
        return JdbcSourceTask

    def start(self, props: dict[str, str]) -> None:
        log.info("Starting JDBC Source Connector")
        try:
            settings = SourceSettings.parse(props)
        except ConfigError as e:
            raise ConnectError(f"Couldn't start JdbcSourceConnector due to configuration error: {e}") from e
        if settings.query is not None and (
            settings.whitelist or settings.blacklist or settings.include_list or settings.exclude_list
        ):
            raise ConnectError("query may not be combined with whole-table copying settings.")
        self._props = dict(props)
        self._settings = settings
        self._dialect = _dialect(settings)
        self._session = ReadSession(self._dialect, settings.zone)
        _connect_with_retries(self._session, settings.connection_attempts, settings.connection_backoff_ms)
        if settings.query is None:
            monitor = TableMonitor(
                self._list_tables, settings, self._request_reconfiguration, self._fail, settings.table_poll_interval_ms
            )
            self._monitor = monitor
            monitor.start()

    def _list_tables(self) -> list[TableId]:
        s = self._settings
        assert s is not None and self._session is not None
        with self._session_lock:
            try:
                return self._session.list_tables(s.schema_pattern, s.table_types)
            except db_errors():
                self._session.close()  # reconnect on the next listing
                raise

    def _request_reconfiguration(self) -> None:
        context = getattr(self, "context", None)
        if context is not None:
            context.request_task_reconfiguration()

    def _fail(self, error: BaseException) -> None:
        context = getattr(self, "context", None)
        if context is not None:
            context.raise_error(error)

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        s = self._settings
        if s is None:
            raise ConnectError("The connector is not started")
        if s.query is not None:
            return [{**self._props, TABLES: "", TABLES_FETCHED: "true"}]
        assert self._monitor is not None and self._dialect is not None
        tables = self._monitor.tables()
        if not tables:
            if tables is None:
                log.warning("The connector has not been able to read the list of tables from the database yet.")
            else:
                log.warning("No tables were found so there's no work to be done.")
            return [{**self._props, TABLES: "", TABLES_FETCHED: "false" if tables is None else "true"}]
        quote_char = self._dialect.quote("x")[0] if s.quote_identifiers else None
        configs = []
        for group in group_partitions(tables, min(len(tables), max(max_tasks, 1))):
            configs.append({**self._props, TABLES: format_table_list(group, quote_char), TABLES_FETCHED: "true"})
        return configs

    def stop(self) -> None:
        log.info("Stopping table monitoring thread")
        if self._monitor is not None:
            self._monitor.stop()
            self._monitor = None
        if self._session is not None:
            with self._session_lock:
                self._session.close()
            self._session = None

    def validate(self, connector_configs: dict[str, str]) -> Config:
        config = super().validate(connector_configs)
        values = {v.name: v for v in config.config_values}
        if any(v.error_messages for v in config.config_values):
            return config
        if not check_cross_key_rules(connector_configs, values):
            return config
        # the database must be reachable (Confluent's validateConnection)
        url_value = values.get(CONNECTION_URL)
        try:
            settings = SourceSettings.parse(connector_configs)
            session = ReadSession(_dialect(settings), settings.zone)
            try:
                session.connect()
                if settings.query is not None:
                    self._validate_query(session, settings)
            finally:
                session.close()
        except _QueryError as e:
            key = QUERY_MASKED if settings.query_masked else QUERY
            if key in values:
                values[key].add_error_message(str(e))
        except connect_or_db_errors(ConfigError) as e:
            if url_value is not None:
                url_value.add_error_message(f"Could not connect to database. {e}")
        return config

    @staticmethod
    def _validate_query(session: ReadSession, settings: SourceSettings) -> None:
        """Prepare the query without reading rows (syntax, tables, columns, privileges)."""
        sql = f"SELECT * FROM ({settings.query}) sluice_validate WHERE 1 = 0"
        try:
            cursor = session.conn.cursor()
            try:
                cursor.execute(sql)
            finally:
                cursor.close()
        except db_errors() as e:
            raise _QueryError(
                "The configured query is not valid and has database/connection errors. Please provide the correct "
                "query by validating the query syntax and the existing table/column names with the database being "
                f"connected ({type(e).__name__}: {str(e).strip()})"
            ) from e
        finally:
            session.rollback()


class _QueryError(Exception):
    pass


# ------------------------------------------------------------------------------------ task


class JdbcSourceTask(SourceTask):
    """Reads its tables (or the query) in the configured mode."""

    def __init__(self) -> None:
        self._settings: SourceSettings | None = None
        self._session: ReadSession | None = None
        self._queriers: list[Querier] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._clock: Callable[[], float] = time.monotonic
        self._split_keys: dict[TableId, str | None] = {}  # a table's split key column, None: none

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        log.info("Starting JDBC source task")
        self._stop = threading.Event()
        try:
            s = SourceSettings.parse(props, task=True)
        except ConfigError as e:
            raise ConfigError(f"Couldn't start JdbcSourceTask due to configuration error: {e}") from e
        self._settings = s
        tables = parse_table_list(",".join(s.tables))
        if not tables and s.query is None:
            if not s.tables_fetched:
                log.info("Started JDBC source task. Waiting for DB tables to be fetched.")
                return
            raise ConfigError(
                "Task is being killed because it was not assigned a table nor a query to execute. If run in table "
                "mode please make sure that the tables exist on the database. If the table does exist on the "
                "database, we recommend using the fully qualified table name."
            )
        if tables and s.query is not None:
            raise ConfigError(
                "Invalid configuration: a JdbcSourceTask cannot have both a table and a query assigned to it"
            )
        if s.mode not in (MODE_BULK, MODE_INCREMENTING, MODE_TIMESTAMP, MODE_TIMESTAMP_INCREMENTING):
            raise ConfigError(MODE, s.mode, "Query mode must be specified")
        session = ReadSession(_dialect(s), s.zone)
        self._session = session
        _connect_with_retries(session, s.connection_attempts, s.connection_backoff_ms, self._stop)

        incremental = s.mode != MODE_BULK
        offsets: dict[Any, Any] = {}
        if incremental:
            partitions: list[dict[str, Any]] = []
            if s.query is not None:
                partitions.append({"query": "query"})
            for t in tables:
                partitions += [table_partition(t), table_partition_v0(t)]
            offsets = self.context.offset_storage_reader().offsets(partitions) if partitions else {}

        inc_mapping = (
            _column_mapping(s.incrementing_column_mapping, tables, "incrementing")
            if s.uses_incrementing and s.incrementing_column_mapping
            else {}
        )
        ts_mapping = (
            _column_mapping(s.timestamp_columns_mapping, tables, "timestamp")
            if s.uses_timestamp and s.timestamp_columns_mapping
            else {}
        )

        def incrementing_of(t: TableId | None) -> str:
            if t is not None and s.uses_regex_filtering:
                return inc_mapping.get(t, "")
            return s.incrementing_column

        def timestamps_of(t: TableId | None) -> list[str]:
            if t is not None and s.uses_regex_filtering:
                value = ts_mapping.get(t)
                return [c.strip() for c in value[1:-1].split("|")] if value else []
            return list(s.timestamp_columns)

        try:
            if tables and incremental:
                columns = session.describe_table(tables[0])
                check_columns_exist(
                    columns,
                    tables[0],
                    incrementing_of(tables[0]) if s.uses_incrementing else None,
                    timestamps_of(tables[0]) if s.uses_timestamp else [],
                )
            targets: list[TableId | None] = list(tables) if tables else [None]
            for target in targets:
                incrementing = incrementing_of(target) if s.uses_incrementing else None
                timestamps = timestamps_of(target) if s.uses_timestamp else []
                if target is not None and incremental:
                    columns = session.describe_table(target)
                    if s.uses_incrementing and not incrementing:
                        incrementing = autoincrement_column(columns)
                        if not incrementing:
                            raise ConnectError(
                                f"Cannot use mode {s.mode} on table {target}: "
                                f"{INCREMENTING_COLUMN_NAME} is not set "
                                "and the table has no auto-incrementing column"
                            )
                    if s.validate_non_null:
                        check_not_null(
                            columns, target, s.uses_incrementing, s.uses_timestamp, incrementing or "", timestamps
                        )
                offset = None
                if incremental:
                    candidates = (
                        [{"query": "query"}]
                        if target is None
                        else [table_partition(target), table_partition_v0(target)]
                    )
                    for p in candidates:
                        offset = offsets.get(partition_key(p))
                        if offset is not None:
                            log.info("Found offset %s for partition %s", offset, p)
                            break
                if offset is None and s.uses_timestamp and s.timestamp_initial is not None:
                    initial = s.timestamp_initial
                    if initial == -1:
                        initial = session.now_nanos() // 1_000_000
                    offset = {"timestamp": initial}
                self._queriers.append(
                    Querier(
                        session,
                        s.mode,
                        target,
                        s.query if target is None else None,
                        s.topic_prefix,
                        timestamps,
                        incrementing,
                        offset,
                        s.timestamp_delay_ms,
                        s.numeric_mapping,
                        s.query_suffix,
                        s.quote_identifiers,
                    )
                )
        except db_errors() as e:
            session.close()
            raise ConnectError(f"Failed trying to validate the tables and columns used for offsets: {e}") from e
        except BaseException:
            session.close()
            raise
        finally:
            session.end_transaction()
        log.info("Started JDBC source task with %d querier(s)", len(self._queriers))

    # -- polling ---------------------------------------------------------------------------

    def poll(self) -> list[SourceRecord] | None:
        s = self._settings
        if s is None or not self._queriers or self._stop.is_set():
            self._stop.wait(_MAX_IDLE_WAIT_S)
            return None
        with self._lock:
            records = self._poll_once(s)
        if records:
            return records
        wait = self._seconds_to_next_due(s)
        if wait > 0:
            self._stop.wait(min(wait, _MAX_IDLE_WAIT_S))
        return records

    def _due(self, s: SourceSettings, now: float) -> list[Querier]:
        interval = s.poll_interval_ms / 1000.0
        ordered = sorted(self._queriers, key=lambda q: (not q.querying, q.last_update, q.name))
        return [q for q in ordered if q.querying or now >= q.last_update + interval]

    def _seconds_to_next_due(self, s: SourceSettings) -> float:
        if not self._queriers:
            return _MAX_IDLE_WAIT_S
        interval = s.poll_interval_ms / 1000.0
        now = self._clock()
        return max(0.0, min(q.last_update + interval for q in self._queriers) - now)

    def _poll_once(self, s: SourceSettings) -> list[SourceRecord]:
        records: list[SourceRecord] = []
        fetch_size = max(s.batch_max_rows, 1)
        for querier in self._due(s, self._clock()):
            if self._stop.is_set():
                break
            try:
                parts = self._split_plan(s, querier)
                if parts:
                    log.info(
                        "Reading %s in %d key ranges of %s, each in a Spark partition",
                        querier.name,
                        len(parts),
                        parts[0].column,
                    )
                    self.context.request_split_read(parts)
                    querier.finish(self._clock())
                    continue
                batch, exhausted = querier.fetch(fetch_size, fetch_size)
            except db_errors() as e:
                self._on_query_error(s, querier, e)
                break
            except (DataError, ConnectError):
                querier.finish(self._clock(), reset_offset=False)
                raise
            querier.retries = 0
            records.extend(batch)
            if exhausted:
                querier.finish(self._clock())
                if not batch:
                    log.debug("No updates for %s", querier)
            else:
                break  # its query stays open: one streaming result at a time
        return records

    def _split_plan(self, s: SourceSettings, querier: Querier) -> list[KeyRange] | None:
        """The key ranges to read a due bulk-mode table in, or None to read it here."""
        table = querier.table
        if (
            s.mode != MODE_BULK
            or table is None
            or querier.querying
            or s.bulk_split_partitions < 2
            or s.query_suffix
            or not self.context.supports_split_reads
        ):
            return None
        session = self._session
        assert session is not None
        if table not in self._split_keys:
            keys = [c for c in session.describe_table(table) if c.is_primary_key]
            integer = len(keys) == 1 and keys[0].type_name.lower() in _INTEGER_TYPES
            self._split_keys[table] = keys[0].name if integer else None
        column = self._split_keys[table]
        if column is None:
            return None
        low, high = session.key_bounds(table, column)
        if low is None or high - low + 1 < s.bulk_split_min_rows:
            return None
        return split_key_ranges(table, column, int(low), int(high), s.bulk_split_partitions)

    @classmethod
    def read_split(cls, props: dict[str, str], part: Any) -> Iterator[list[SourceRecord]]:
        """One key range of a bulk read (:meth:`_split_plan`), on a connection of its own."""
        assert isinstance(part, KeyRange)
        s = SourceSettings.parse(props, task=True)
        session = ReadSession(_dialect(s), s.zone)
        _connect_with_retries(session, s.connection_attempts, s.connection_backoff_ms, threading.Event())
        try:
            querier = Querier(
                session,
                MODE_BULK,
                part.table,
                None,
                s.topic_prefix,
                [],
                None,
                None,
                s.timestamp_delay_ms,
                s.numeric_mapping,
                "",
                s.quote_identifiers,
                key_range=part,
            )
            fetch_size = max(s.batch_max_rows, 1)
            while True:
                records, exhausted = querier.fetch(fetch_size, fetch_size)
                if records:
                    yield records
                if exhausted:
                    break
            querier.finish(time.monotonic())
        except db_errors() as e:
            raise ConnectError(
                f"Error while reading {part.table} where {part.column} in [{part.low}, {part.high}): {e}"
            ) from e
        finally:
            session.close()

    def _on_query_error(self, s: SourceSettings, querier: Querier, error: BaseException) -> None:
        """A failed query: non-transient errors fail the task; others are retried after the
        poll interval (on a new connection), up to ``query.retry.attempts`` times."""
        transient = is_transient(error)
        querier.finish(self._clock())
        assert self._session is not None
        self._session.rollback()
        if not transient:
            log.error("Non-transient SQL exception while running query for %s: %s", querier, error)
            raise ConnectError(f"Error while querying {querier.name}: {error}") from error
        self._session.close()  # reconnect for the next query
        querier.retries += 1
        log.error(
            "SQL exception while running query for %s: %s. Attempting retry %d of %s attempts.",
            querier,
            error,
            querier.retries,
            s.query_retry_attempts,
        )
        if 0 < s.query_retry_attempts <= querier.retries:
            raise ConnectError(f"Failed to query table after retries: {error}") from error

    def stop(self) -> None:
        log.info("Stopping JDBC source task")
        self._stop.set()
        # poll() may be in the middle of a query: let it finish its batch first
        acquired = self._lock.acquire(timeout=30)
        try:
            for querier in self._queriers:
                try:
                    querier.finish(self._clock())
                except Exception:
                    log.debug("Error while closing %s", querier, exc_info=True)
            if self._session is not None:
                self._session.close()
                self._session = None
        finally:
            if acquired:
                self._lock.release()


def _column_mapping(mappings: Sequence[str], tables: Sequence[TableId], what: str) -> dict[TableId, str]:
    """Each table's column(s) from ``regex:columns`` mappings; every table must match exactly one."""
    parsed = [(re.compile(m.split(":", 1)[0].strip()), m.split(":", 1)[1].strip()) for m in mappings]
    out: dict[TableId, str] = {}
    for t in tables:
        matches = [value for regex, value in parsed if regex.fullmatch(t.fqn)]
        if not matches:
            raise ConnectError(
                f"Error while validating {what} column mappings: Included table '{t}' does not match "
                "any of the provided regexes"
            )
        if len(matches) > 1:
            raise ConnectError(
                f"Error while validating {what} column mappings: Included table '{t}' matches more "
                "than one of the provided regexes"
            )
        out[t] = matches[0]
    return out
