"""Read-side SQL of the JDBC source, per database: table identifiers, the statements the
queriers run, sessions set up for reading, streaming cursors and result descriptions.

Everything here takes a :class:`~sluice.connectors.jdbc.dialect.Dialect` (for connecting,
quoting and the catalog) and adds what only the source needs.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import zoneinfo
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sluice.api.errors import ConnectError
from sluice.connectors.jdbc.dialect import Dialect
from sluice.connectors.jdbc.source_schema import ColumnSpec, describe_mysql, describe_postgres, describe_sqlite

__all__ = [
    "ReadSession",
    "TableId",
    "db_errors",
    "format_table_list",
    "parse_table_list",
    "is_transient",
]

log = logging.getLogger(__name__)

_UTC = dt.UTC
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=_UTC)
NANOS_PER_SECOND = 1_000_000_000


# -- table identifiers ---------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class TableId:
    """A table: its schema (PostgreSQL) or database (MySQL/MariaDB), None for SQLite, and name."""

    schema: str | None
    table: str

    @property
    def fqn(self) -> str:
        """The unquoted qualified name (Confluent's offset partition and filter form)."""
        return self.table if self.schema is None else f"{self.schema}.{self.table}"

    def quoted(self, quote: Any) -> str:
        parts = [self.table] if self.schema is None else [self.schema, self.table]
        return ".".join(quote(p) for p in parts)

    def __str__(self) -> str:
        return self.fqn


def _split_identifier(text: str) -> list[str]:
    """Split ``a.b`` / ``"a"."b"`` / ```a`.`b``` into its parts (quotes removed)."""
    parts: list[str] = []
    current: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote is not None:
            if ch == quote:
                if i + 1 < len(text) and text[i + 1] == quote:
                    current.append(ch)
                    i += 2
                    continue
                quote = None
            else:
                current.append(ch)
        elif ch in ('"', "`"):
            quote = ch
        elif ch == ".":
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts


def parse_table(text: str) -> TableId:
    parts = _split_identifier(text.strip())
    if not parts or any(p == "" for p in parts):
        raise ConnectError(f"Invalid table identifier: {text!r}")
    if len(parts) == 1:
        return TableId(None, parts[0])
    return TableId(parts[-2], parts[-1])


def parse_table_list(text: str) -> list[TableId]:
    """The ``tables`` task config: table identifiers separated by commas outside quotes."""
    items: list[str] = []
    current: list[str] = []
    quote: str | None = None
    for ch in text or "":
        if quote is not None:
            current.append(ch)
            if ch == quote:
                quote = None  # a doubled quote re-opens right away
        elif ch in ('"', "`"):
            quote = ch
            current.append(ch)
        elif ch == ",":
            items.append("".join(current))
            current = []
        else:
            current.append(ch)
    items.append("".join(current))
    return [parse_table(item) for item in (i.strip() for i in items) if item]


def format_table_list(tables: Sequence[TableId], quote_char: str | None) -> str:
    """Tables as Confluent writes them into the task config: comma-separated, each part
    quoted with ``quote_char`` (not quoted when it is None: ``quote.sql.identifiers=never``)."""

    def q(part: str) -> str:
        if quote_char is None:
            return part
        return quote_char + part.replace(quote_char, quote_char * 2) + quote_char

    return ",".join(t.quoted(q) for t in tables)


# -- driver errors -----------------------------------------------------------------------------


def db_errors() -> tuple[type[BaseException], ...]:
    """Every installed driver's base error class."""
    errors: list[type[BaseException]] = []
    import sqlite3

    errors.append(sqlite3.Error)
    try:
        import psycopg

        errors.append(psycopg.Error)
    except ImportError:  # pragma: no cover - the driver is a dependency
        pass
    try:
        import pymysql

        errors.append(pymysql.err.Error)
    except ImportError:  # pragma: no cover
        pass
    return tuple(errors)


def connect_or_db_errors(*more: type[BaseException]) -> tuple[type[BaseException], ...]:
    """:class:`ConnectError`, ``more``, and every installed driver's base error class."""
    return (ConnectError, *more, *db_errors())


def _transient_classes() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = []
    import sqlite3

    errors.append(sqlite3.OperationalError)
    try:
        import psycopg

        errors += [
            psycopg.OperationalError,
            psycopg.InterfaceError,
            psycopg.errors.LockNotAvailable,
            psycopg.errors.SerializationFailure,
            psycopg.errors.DeadlockDetected,
            psycopg.errors.UndefinedTable,
            psycopg.errors.UndefinedColumn,
        ]
    except ImportError:  # pragma: no cover
        pass
    try:
        import pymysql

        errors += [pymysql.err.OperationalError, pymysql.err.InterfaceError]
    except ImportError:  # pragma: no cover
        pass
    return tuple(errors)


# MySQL/MariaDB: table or column missing (a table dropped while it is read: the table
# monitor will reconfigure the tasks), lock wait timeout, deadlock
_MYSQL_TRANSIENT_CODES = {1146, 1054, 1205, 1213}


def is_transient(error: BaseException) -> bool:
    """Whether a driver error is worth retrying: lost connections, timeouts, locks, a
    table or column that disappeared; syntax, privilege and data errors are not."""
    if isinstance(error, _transient_classes()):
        return True
    args: tuple[Any, ...] = getattr(error, "args", ())
    module = type(error).__module__
    return module.startswith("pymysql") and bool(args) and args[0] in _MYSQL_TRANSIENT_CODES


# -- time ------------------------------------------------------------------------------------


def datetime_to_nanos(value: dt.datetime | dt.date) -> int:
    """Nanoseconds since the epoch of an aware (or naive UTC) datetime, or of a date's midnight."""
    if not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day)
    if value.tzinfo is None:
        value = value.replace(tzinfo=_UTC)
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * NANOS_PER_SECOND + delta.microseconds * 1000


def nanos_to_naive(nanos: int, zone: dt.tzinfo) -> dt.datetime:
    """The wall-clock time in ``zone`` (naive, microseconds) of an instant."""
    seconds, rest = divmod(nanos, NANOS_PER_SECOND)
    utc = _EPOCH + dt.timedelta(seconds=seconds, microseconds=rest // 1000)
    return utc.astimezone(zone).replace(tzinfo=None)


def zone_name(zone: dt.tzinfo) -> str:
    """``zone`` as a name PostgreSQL's ``TimeZone`` accepts (fixed offsets in POSIX form)."""
    if zone is _UTC:
        return "UTC"
    if isinstance(zone, zoneinfo.ZoneInfo):
        return zone.key
    offset = zone.utcoffset(None) or dt.timedelta(0)
    sign = "+" if offset >= dt.timedelta(0) else "-"
    total = abs(int(offset.total_seconds()))
    hh, mm = divmod(total // 60, 60)
    posix_sign = "-" if sign == "+" else "+"  # POSIX counts hours west of Greenwich
    if total == 0:
        return "UTC"
    if mm == 0 and total % 60 == 0:
        return f"Etc/GMT{posix_sign}{hh}"  # a zone name Python knows too
    return f"<{sign}{hh:02d}{mm:02d}>{posix_sign}{hh:02d}:{mm:02d}"


def _mysql_offset(zone: dt.tzinfo) -> str:
    offset = dt.datetime.now(_UTC).astimezone(zone).utcoffset() or dt.timedelta(0)
    sign = "+" if offset >= dt.timedelta(0) else "-"
    hh, mm = divmod(abs(int(offset.total_seconds())) // 60, 60)
    return f"{sign}{hh:02d}:{mm:02d}"


# -- a reading session -------------------------------------------------------------------------

_SQLITE_TS_FORMAT = "%Y-%m-%d %H:%M:%f"


class ReadSession:
    """One database connection used by a source task (or the connector) for reading."""

    def __init__(self, dialect: Dialect, zone: dt.tzinfo) -> None:
        self.dialect = dialect
        self.kind = dialect.kind
        self.zone = zone
        self.conn: Any = None
        self._pg_types: dict[int, str | None] = {}
        self._view_seq = 0

    # -- connection ------------------------------------------------------------------

    def connect(self) -> Any:
        if self.conn is not None:
            return self.conn
        if self.kind == "postgresql":
            conn = self.dialect.connect(timezone=zone_name(self.zone))
            from psycopg.types.string import TextLoader

            for name in ("json", "jsonb"):  # the documents' text, as JDBC's getString
                conn.adapters.register_loader(name, TextLoader)
        else:
            conn = self.dialect.connect()
        if self.kind == "mysql":
            self._set_mysql_zone(conn)
        self.conn = conn
        return conn

    def _set_mysql_zone(self, conn: Any) -> None:
        zone = self.zone
        candidates = ["+00:00"] if zone is _UTC else []
        if isinstance(zone, zoneinfo.ZoneInfo):
            candidates.append(zone.key)
        candidates.append(_mysql_offset(zone))
        with conn.cursor() as cur:
            for candidate in candidates:
                try:
                    cur.execute("SET time_zone = %s", (candidate,))
                    if candidate != candidates[0]:
                        log.warning(
                            "The server does not know time zone %s; reading with offset %s", candidates[0], candidate
                        )
                    break
                except Exception:  # noqa: BLE001 - the driver's own error for a zone the server lacks: try the next
                    continue
        conn.commit()

    def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # closing a broken connection
                log.debug("Error closing the connection", exc_info=True)

    def end_transaction(self) -> None:
        """Commit the read transaction (releases snapshots and locks)."""
        if self.conn is None:
            return
        try:
            self.conn.commit()
        except Exception:
            log.warning("Error while committing read transaction", exc_info=True)
            self.close()

    def rollback(self) -> None:
        if self.conn is None:
            return
        try:
            self.conn.rollback()
        except Exception:  # noqa: BLE001 - a rollback on a broken connection: closed, reopened on the next read
            self.close()

    # -- catalog -----------------------------------------------------------------------

    def current_schema(self) -> str | None:
        """The schema (PostgreSQL) or database (MySQL) that unqualified names are in."""
        conn = self.connect()
        if self.kind == "sqlite":
            return None
        with conn.cursor() as cur:
            cur.execute("SELECT current_schema()" if self.kind == "postgresql" else "SELECT DATABASE()")
            row = cur.fetchone()
        return row[0] if row else None

    def list_tables(self, schema_pattern: str | None, table_types: Sequence[str]) -> list[TableId]:
        conn = self.connect()
        try:
            names = self.dialect.list_tables(conn, schema_pattern, table_types)
            current = self.current_schema()
        finally:
            self.end_transaction()
        tables = []
        for name in names:
            schema, table = self.dialect.split_table(name)
            tables.append(TableId(schema if schema is not None else current, table))
        return tables

    def describe_table(self, table: TableId) -> list[Any]:
        conn = self.connect()
        try:
            return list(self.dialect.describe_columns(conn, table.fqn))
        finally:
            self.end_transaction()

    def key_bounds(self, table: TableId, column: str) -> tuple[Any, Any]:
        """``(MIN(column), MAX(column))`` of ``table`` (``(None, None)`` when it is empty)."""
        key = self.quote(column)
        cur = self.connect().cursor()
        try:
            cur.execute(f"SELECT MIN({key}), MAX({key}) FROM {table.quoted(self.quote)}")
            low, high = cur.fetchone()
            return low, high
        finally:
            cur.close()
            self.end_transaction()

    def now_nanos(self) -> int:
        """The database's clock, as nanoseconds since the epoch."""
        value = self.dialect.current_timestamp(self.connect())
        return datetime_to_nanos(value)

    # -- statements --------------------------------------------------------------------

    @property
    def placeholder(self) -> str:
        return self.dialect.placeholder

    def quote(self, identifier: str) -> str:
        text = self.dialect.quote(identifier)
        return text.replace("%", "%%") if self.dialect.paramstyle == "format" else text

    def literal_text(self, text: str, with_params: bool) -> str:
        """User SQL text placed into a statement (``%`` doubled where it would be read as
        a placeholder)."""
        if with_params and self.dialect.paramstyle == "format":
            return text.replace("%", "%%")
        return text

    def timestamp_expression(self, columns: Sequence[str]) -> str:
        quoted = [self.quote(c) for c in columns]
        expr = quoted[0] if len(quoted) == 1 else "COALESCE(" + ",".join(quoted) + ")"
        if self.kind == "sqlite":
            # SQLite keeps date-times as text in several formats: compare a normal form
            return f"strftime('{_SQLITE_TS_FORMAT}', {expr})"
        return expr

    def timestamp_param(self, nanos: int) -> Any:
        naive = nanos_to_naive(nanos, self.zone)
        if self.kind == "sqlite":
            return naive.strftime("%Y-%m-%d %H:%M:%S.") + f"{naive.microsecond // 1000:03d}"
        return naive

    # -- running a query -----------------------------------------------------------------

    def open_cursor(self, sql: str, params: Sequence[Any] | None, fetch_size: int) -> Any:
        """Execute ``sql`` on a cursor that streams its rows (PostgreSQL: a server-side
        cursor; MySQL: an unbuffered cursor)."""
        conn = self.connect()
        if self.kind == "postgresql":
            self._view_seq += 1
            cursor = conn.cursor(name=f"sluice_source_{self._view_seq}")
            cursor.itersize = max(fetch_size, 1)
        elif self.kind == "mysql":
            import pymysql.cursors

            cursor = conn.cursor(pymysql.cursors.SSCursor)
        else:
            cursor = conn.cursor()
        try:
            if params:
                cursor.execute(sql, tuple(params))
            else:
                cursor.execute(sql)
        except BaseException:
            with contextlib.suppress(Exception):
                cursor.close()
            raise
        return cursor

    def describe(self, cursor: Any, table: TableId | None, query: str | None) -> list[ColumnSpec]:
        if self.kind == "postgresql":
            return describe_postgres(cursor, self.conn, self._pg_types)
        if self.kind == "mysql":
            return describe_mysql(cursor)
        names = [d[0] for d in cursor.description or []]
        if table is not None:
            info = [
                (c.name, c.full_type or c.type_name, c.nullable)
                for c in self.dialect.describe_columns(self.conn, table.fqn)
            ]
        else:
            info = self._sqlite_query_info(query or "")
        return describe_sqlite(self.conn, names, info)

    def _sqlite_query_info(self, query: str) -> list[tuple[str, str, bool]]:
        """Declared types of a query's columns, through a temporary view of it."""
        self._view_seq += 1
        view = f"sluice_source_describe_{self._view_seq}"
        conn = self.connect()
        try:
            conn.execute(f'CREATE TEMP VIEW "{view}" AS {query}')
            rows = conn.execute(f'PRAGMA temp.table_info("{view}")').fetchall()
        except Exception as e:  # noqa: BLE001 - SQLite cannot describe this query: its columns are read from the rows
            log.debug("Could not describe the query through a view: %s", e)
            return []
        finally:
            with contextlib.suppress(Exception):
                conn.execute(f'DROP VIEW IF EXISTS temp."{view}"')
        return [(r[1], r[2] or "", not r[3]) for r in rows]


def check_not_null(
    columns: Sequence[Any],
    table: TableId,
    mode_incrementing: bool,
    mode_timestamp: bool,
    incrementing: str,
    timestamps: Sequence[str],
) -> None:
    """Confluent's ``validate.non.null``: the incrementing column may not be nullable, and
    at least one timestamp column must not be."""
    lower_ts = {c.lower() for c in timestamps}
    incrementing_optional = False
    some_timestamp_required = False
    for column in columns:
        if column.name.lower() == incrementing.lower():
            incrementing_optional = column.nullable
        elif column.name.lower() in lower_ts and not column.nullable:
            some_timestamp_required = True
    if mode_incrementing and incrementing_optional:
        raise ConnectError(
            f"Cannot make incremental queries using incrementing column {incrementing} on {table} because this "
            "column is nullable."
        )
    if mode_timestamp and not some_timestamp_required:
        raise ConnectError(
            f"Cannot make incremental queries using timestamp columns {','.join(timestamps)} on {table} because "
            "all of these columns are nullable."
        )


def check_columns_exist(
    columns: Sequence[Any], table: TableId, incrementing: str | None, timestamps: Sequence[str]
) -> None:
    names = {c.name.lower() for c in columns}
    if incrementing and incrementing.lower() not in names:
        raise ConnectError(f"Incrementing column: {incrementing} does not exist in table '{table}'")
    missing = [c for c in timestamps if c.lower() not in names]
    if missing:
        raise ConnectError(f"Timestamp columns: {', '.join(missing)} do not exist in table '{table}'")


def autoincrement_column(columns: Sequence[Any]) -> str | None:
    for column in columns:
        if getattr(column, "autoincrement", False):
            return column.name
    return None
