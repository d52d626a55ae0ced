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

Modules: the keys and the parsed settings are in :mod:`.sink_config`, how records become
rows in :mod:`.sink_rows`, table creation and evolution in :mod:`.sink_tables`; this
module holds the connector and the task (connection, batches, commits, retries).
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, cast

from sluice import __version__
from sluice.api import (
    Config,
    ConfigDef,
    ConnectError,
    DataError,
    RetriableError,
    SinkConnector,
    SinkRecord,
    SinkTask,
    Task,
    TopicPartition,
)
from sluice.api.records import SinkBatch
from sluice.connectors.jdbc.dialect import Dialect
from sluice.connectors.jdbc.sink_config import CONFIG_DEF, CONNECTION_URL, SinkSettings, cross_check, make_dialect
from sluice.connectors.jdbc.sink_rows import WRITE, BatchRow, RecordView, RowPlan, RowPlanner
from sluice.connectors.jdbc.sink_tables import SinkTables, TableAlterOrCreateError, is_transient

__all__ = ["CONFIG_DEF", "JdbcSinkConnector", "JdbcSinkTask", "TableAlterOrCreateError"]

log = logging.getLogger(__name__)


class JdbcSinkConnector(SinkConnector):
    """Writes records to a relational database (PostgreSQL, MariaDB/MySQL, SQLite)."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        SinkSettings(props)  # fail fast on a bad config
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
                settings = SinkSettings(connector_configs)
                dialect = make_dialect(settings)
                conn = dialect.connect()
                conn.close()
            except Exception as e:  # noqa: BLE001 - reported on the URL, as Confluent does
                if url_value is not None:
                    url_value.add_error_message(f"Could not connect to database. {e}")
        return result


# ------------------------------------------------------------------------------- the task


class _Segment:
    """Rows of one table's batch written together: the writes of one plan, then deletes."""

    __slots__ = ("plan", "key_cols", "writes", "deletes")

    def __init__(self, plan: RowPlan | None, key_cols: list[str], coalesce: bool) -> None:
        self.plan = plan
        self.key_cols = key_cols
        self.writes: Any = {} if coalesce else []
        self.deletes: dict[tuple, None] = {}


class JdbcSinkTask(SinkTask):
    """Writes records to database tables; see the module documentation."""

    def __init__(self) -> None:
        self.settings: SinkSettings | None = None
        self.dialect: Dialect | None = None
        self._conn: Any = None
        self._rows: RowPlanner | None = None
        self._remaining_retries = 0
        self.stats: collections.Counter[str] = collections.Counter()

    def version(self) -> str:
        return __version__

    # -- lifecycle -----------------------------------------------------------------------

    def start(self, props: dict[str, str]) -> None:
        self.settings = SinkSettings(props)
        self.dialect = make_dialect(self.settings)
        tables = SinkTables(self.settings, self.dialect, self._connection, self._rollback, self.stats)
        self._rows = RowPlanner(self.settings, self.dialect, tables)
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
            except Exception as e:
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
            except Exception as e:
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
        except Exception:  # noqa: BLE001 - a rollback on a broken connection: closed, reopened on the next put
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
        except Exception:  # noqa: BLE001 - a context without one: errant records fail the task
            return None

    def put(self, records: list[SinkRecord]) -> None:
        self._write(records, _itself)

    def put_batch(self, batch: SinkBatch) -> None:
        """As :meth:`put`, each record read from the batch's columns as a :class:`BatchRow`
        (a tuple); a :class:`SinkRecord` is made only for a record that is reported."""
        rows = list(
            map(
                BatchRow._make,
                zip(
                    range(len(batch)),
                    batch.topics,
                    batch.partitions,
                    batch.offsets,
                    batch.timestamps,
                    batch.key_schemas,
                    batch.keys,
                    batch.value_schemas,
                    batch.values,
                    strict=True,
                ),
            )
        )
        self._write(rows, lambda row: batch.records()[cast(BatchRow, row).row])

    def _write(self, records: Sequence[RecordView], record_of: Callable[[RecordView], SinkRecord]) -> None:
        """Checks, converts and writes one put's records, committed before it returns;
        ``record_of`` gives the :class:`SinkRecord` of one of them, for the reporter."""
        if not records:
            return
        assert self.settings is not None
        reporter = self._reporter()
        entries: list[tuple] | None = None
        try:
            entries = self._prepare_all(records, reporter, record_of)
            if entries:
                self._write_entries(entries)
                self._connection().commit()
                self.stats["commits"] += 1
        except RetriableError as exc:
            self._rollback()
            self._retry_or_fail(exc, len(records))
        except ConnectError:  # a record refused without a reporter, or not tolerated
            self._rollback()
            raise
        except Exception as exc:  # a database error
            self._rollback()
            if is_transient(exc):
                self._retry_or_fail(exc, len(records))
            if reporter is None or entries is None:
                raise ConnectError(f"Write of {len(records)} records failed: {exc}") from exc
            log.warning("Write of %d records failed (%s); writing them one by one", len(records), exc)
            self._unroll(entries, reporter, record_of)
        self._remaining_retries = self.settings.max_retries

    def _retry_or_fail(self, exc: BaseException, records: int) -> None:
        """Raise RetriableError while retries remain (the framework redelivers the same
        records after ``retry.backoff.ms``), then ConnectError."""
        assert self.settings is not None
        self._close()
        if self._remaining_retries > 0:
            self._remaining_retries -= 1
            log.warning("Write of %d records failed, remaining retries=%d: %s", records, self._remaining_retries, exc)
            context = getattr(self, "context", None)
            if context is not None:
                context.timeout(self.settings.retry_backoff_ms)
            raise RetriableError(f"Write of {records} records failed, will retry: {exc}") from exc
        raise ConnectError(f"Write of {records} records failed after exhausting retries: {exc}") from exc

    def _reject(self, record: SinkRecord, error: ConnectError, reporter: Any) -> None:
        if reporter is None:
            raise error
        self.stats["records_reported"] += 1
        reporter.report(record, error)  # raises when errors are not tolerated

    def _prepare_all(
        self, records: Sequence[RecordView], reporter: Any, record_of: Callable[[RecordView], SinkRecord]
    ) -> list[tuple[Any, ...]]:
        """Check and convert every record: ``(table, op, key, row, plan, record)`` each."""
        assert self._rows is not None
        out: list[tuple[Any, ...] | None] = []
        append = out.append
        prepare = self._rows.prepare
        for record in records:
            try:
                append(prepare(record))
            except (DataError, TableAlterOrCreateError) as e:
                self._reject(record_of(record), e, reporter)
        return [e for e in out if e is not None]

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
            if op == WRITE:
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

    def _unroll(self, entries: list[tuple], reporter: Any, record_of: Callable[[RecordView], SinkRecord]) -> None:
        """Write the records one at a time, each committed on its own; report those the
        database refuses (after a batch of them failed)."""
        conn = self._connection()
        for entry in entries:
            try:
                self._write_table(entry[0], [entry])
                conn.commit()
            except Exception as exc:
                self._rollback()
                if is_transient(exc):
                    raise ConnectError(f"Write failed: {exc}") from exc
                conn = self._connection()
                self.stats["records_reported"] += 1
                reporter.report(record_of(entry[5]), ConnectError(f"The database refused the record: {exc}"))
        self.stats["commits"] += 1


def _itself(record: RecordView) -> SinkRecord:
    return cast(SinkRecord, record)  # put's records are SinkRecords


def _zone_name(tz: Any) -> str | None:
    """The IANA name of a zone with rules, ``UTC`` for UTC, None for other fixed offsets."""
    if tz is dt.UTC:
        return "UTC"
    key = getattr(tz, "key", None)
    return key if isinstance(key, str) else None


def _fixed_offset(tz: Any) -> str | None:
    """``+HH:MM`` for a fixed-offset zone (UTC included), None for a zone with rules."""
    if isinstance(tz, dt.timezone):
        offset = tz.utcoffset(None)
        total = int(offset.total_seconds()) // 60
        sign = "+" if total >= 0 else "-"
        total = abs(total)
        return f"{sign}{total // 60:02d}:{total % 60:02d}"
    return None
