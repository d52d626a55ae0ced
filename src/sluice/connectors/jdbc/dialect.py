"""Database dialects of the JDBC connectors: PostgreSQL, MariaDB/MySQL and SQLite.

A :class:`Dialect` knows how to reach one database from a JDBC URL, how to read its
catalog and how to write SQL for it. It is chosen from the URL::

    dialect = Dialect.for_url("jdbc:postgresql://127.0.0.1:5432/sluice", "sluice", "secret")
    conn = dialect.connect()            # a DB-API 2 connection, autocommit off
    dialect.list_tables(conn)           # ["orders", "audit.events", ...]
    dialect.describe_columns(conn, "orders")   # [Column(name="id", type_name="bigint", ...), ...]

URLs
    ``jdbc:postgresql://HOST[:PORT]/DB[?k=v&...]`` (also ``jdbc:postgresql:DB``; port 5432)
    → :class:`PostgreSqlDialect` (psycopg 3). ``jdbc:mariadb://…`` and ``jdbc:mysql://…``
    (port 3306) → :class:`MySqlDialect` (PyMySQL), named ``MariaDB`` or ``MySQL``.
    ``jdbc:sqlite:/path/to.db``, ``jdbc:sqlite:relative.db`` or ``jdbc:sqlite::memory:``
    → :class:`SqliteDialect` (the standard library's ``sqlite3``; every connection to
    ``:memory:`` is a database of its own). Query parameters ``user`` and ``password`` are
    used when the ``user``/``password`` arguments are ``None``; PostgreSQL also takes
    ``currentSchema``, ``sslmode``, ``connectTimeout`` (seconds) and ``ApplicationName``,
    MySQL ``connectTimeout`` (milliseconds, as Connector/J). Anything else raises
    :class:`~sluice.api.errors.ConfigError`.

Attributes
    ``name`` (``"PostgreSQL"``, ``"MariaDB"``, ``"MySQL"``, ``"SQLite"``), ``kind``
    (``"postgresql"``, ``"mysql"``, ``"sqlite"``), ``url``, ``host``, ``port``,
    ``database`` (the file path for SQLite), ``user``, ``quote_identifiers`` (``True``;
    when ``False`` identifiers are written as given, Confluent's
    ``quote.sql.identifiers=never``), ``paramstyle`` (``"format"``: ``%s`` placeholders,
    or ``"qmark"``: ``?``), ``placeholder`` and ``stats`` (a :class:`collections.Counter`
    of the write paths used: ``copy_batches``, ``copy_rows``, ``multi_row_statements``,
    ``executemany_batches``, ``rows_written``, ``rows_deleted``).

Catalog
    ``connect()``: a new DB-API connection with autocommit off (PostgreSQL sessions get
    ``TimeZone`` = the ``timezone`` argument when given). ``quote(identifier)``: the
    identifier quoted for this database (``"x"`` or ```x```, embedded quotes doubled).
    ``table_ref(name)``: a possibly qualified name (``schema.table``, for MySQL
    ``database.table``) split on dots and each part quoted. ``split_table(name)`` →
    ``(schema or None, table)``. ``list_tables(conn, schema_pattern=None,
    table_types=("TABLE",))``: the tables (``"VIEW"`` adds views) as names that
    :meth:`~Dialect.table_ref` accepts — unqualified for tables of the connection's current
    schema/database, ``schema.table`` otherwise; ``schema_pattern`` is a SQL ``LIKE``
    pattern on the schema (database for MySQL; ignored by SQLite), as JDBC's
    ``getTables``. ``describe_columns(conn, table)``: a :class:`Column` per column in table
    order, ``[]`` when the table does not exist. ``table_exists(conn, table)``.
    ``current_timestamp(conn)``: the database's clock (a naive UTC ``datetime``).

SQL for the sink (``fields`` are ``(name, Schema)`` pairs of Connect schemas)
    ``sql_type(schema, key=False)``: the column type for a Connect schema (Confluent's
    mapping; raises :class:`~sluice.api.errors.DataError` for types the database cannot
    hold). ``create_table(table, fields, pk_fields)``, ``alter_add_columns(table, fields)``
    (a list of statements). ``insert(table, key_cols, value_cols)``, ``upsert(...)``
    (PostgreSQL ``INSERT … ON CONFLICT (…) DO UPDATE``, MySQL ``INSERT … ON DUPLICATE KEY
    UPDATE``, SQLite ``INSERT … ON CONFLICT (…) DO UPDATE``), ``update(...)`` (parameters:
    value columns then key columns) and ``delete(table, key_cols)``: single-row
    statements with this dialect's placeholders; the insert parameters are the key
    columns then the value columns. ``to_db_value(schema, value, tz)``: a Connect value
    as the driver takes it (timestamps as naive date-times in ``tz``).

Batched writes (each dialect's fastest path; nothing is committed here)
    ``write_rows(conn, table, mode, key_cols, value_cols, rows)`` with ``mode`` one of
    ``insert``/``upsert``/``update`` and ``rows`` tuples in ``key_cols + value_cols``
    order: PostgreSQL writes upserts and updates with ``COPY`` into a temporary staging
    table and one ``INSERT … SELECT … ON CONFLICT … DO UPDATE`` or ``UPDATE … FROM``, and
    plain inserts with ``COPY`` straight into the table. MySQL sends multi-row
    ``INSERT … VALUES (…),(…) [ON DUPLICATE KEY UPDATE …]``
    statements (updates: into a temporary staging table, then one ``UPDATE … JOIN``);
    SQLite uses ``executemany``. Upsert and update
    batches must not hold a key twice (the sink keeps the last record per key).
    ``delete_rows(conn, table, key_cols, keys)`` deletes by key. Both return the number of
    rows given.
"""

from __future__ import annotations

import collections
import datetime as _dt
import decimal as _decimal
import hashlib
import math
import re
import urllib.parse
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from sluice.api import ConfigError, DataError, Schema, Type
from sluice.api.data import Date, Decimal, Time, Timestamp

__all__ = ["Column", "Dialect", "MySqlDialect", "PostgreSqlDialect", "SqliteDialect"]

WRITE_MODES = ("insert", "upsert", "update")

# Bytes of SQL text per multi-row MySQL statement (the server's max_allowed_packet is
# 16 MiB by default on MariaDB, 64 MiB on MySQL 8).
MYSQL_STATEMENT_BYTES = 4 * 1024 * 1024

_UTC = _dt.UTC


@dataclass(frozen=True)
class Column:
    """One column of a table, as :meth:`Dialect.describe_columns` reads it.

    ``type_name`` is the database's base type name in lower case, without length or
    precision (PostgreSQL ``integer``, ``numeric``, ``character varying``, ``timestamp
    with time zone``, ``integer[]``; MySQL ``int``, ``tinyint``, ``varchar``, ``datetime``;
    SQLite the declared type, e.g. ``integer``, ``text``, ``numeric``); ``full_type`` is
    the complete declaration (``numeric(10,2)``, ``tinyint(1)``, ``int(10) unsigned``).
    ``precision`` is the numeric precision or the character/binary length (JDBC's
    ``COLUMN_SIZE``) when the database records one, ``scale`` the numeric scale.
    ``primary_key`` is the 1-based position in the primary key, ``None`` outside it.
    ``default`` is the default expression's text, ``None`` without one.
    """

    name: str
    type_name: str
    nullable: bool
    precision: int | None = None
    scale: int | None = None
    autoincrement: bool = False
    primary_key: int | None = None
    full_type: str | None = None
    default: str | None = None

    @property
    def is_primary_key(self) -> bool:
        return self.primary_key is not None


# ------------------------------------------------------------------------- URL parsing


@dataclass(frozen=True)
class _Url:
    kind: str  # postgresql | mariadb | mysql | sqlite
    host: str | None
    port: int | None
    database: str
    params: dict[str, str]


def _parse_url(url: str) -> _Url:
    if not isinstance(url, str) or not url.strip():
        raise ConfigError("connection.url", url, "A JDBC URL is required (e.g. jdbc:postgresql://host:5432/db)")
    text = url.strip()
    if not text.lower().startswith("jdbc:"):
        raise ConfigError("connection.url", url, "Not a JDBC URL: it must start with 'jdbc:'")
    rest = text[5:]
    sub, _, tail = rest.partition(":")
    sub = sub.lower()
    if sub == "sqlite":
        path = tail
        if path.startswith("//"):
            path = path[2:]
        path, _, query = path.partition("?")
        if not path:
            raise ConfigError(
                "connection.url", url, "SQLite URLs name a file: jdbc:sqlite:/path/to.db or jdbc:sqlite::memory:"
            )
        return _Url("sqlite", None, None, path, dict(urllib.parse.parse_qsl(query)))
    if sub not in ("postgresql", "mariadb", "mysql"):
        raise ConfigError(
            "connection.url",
            url,
            "Unsupported database: Sluice's JDBC connectors support jdbc:postgresql://, jdbc:mariadb://, "
            "jdbc:mysql:// and jdbc:sqlite: URLs",
        )
    default_port = 5432 if sub == "postgresql" else 3306
    if not tail.startswith("//"):
        if sub != "postgresql" or not tail:
            raise ConfigError("connection.url", url, f"Expected jdbc:{sub}://host[:port]/database")
        database, _, query = tail.partition("?")
        return _Url(sub, "localhost", default_port, urllib.parse.unquote(database), dict(urllib.parse.parse_qsl(query)))
    parts = urllib.parse.urlsplit(tail)
    netloc = parts.netloc
    if "," in netloc:
        raise ConfigError("connection.url", url, "URLs with several hosts are not supported")
    try:
        host = parts.hostname or "localhost"
        port = parts.port or default_port
    except ValueError as e:
        raise ConfigError("connection.url", url, f"Bad host or port: {e}") from None
    params = dict(urllib.parse.parse_qsl(parts.query))
    # properties after ';' (some users write jdbc:mysql://h/db;user=x)
    path = parts.path
    if ";" in path:
        path, _, props = path.partition(";")
        for item in props.split(";"):
            k, _, v = item.partition("=")
            if k:
                params.setdefault(k, v)
    if parts.username:
        params.setdefault("user", urllib.parse.unquote(parts.username))
    if parts.password:
        params.setdefault("password", urllib.parse.unquote(parts.password))
    return _Url(sub, host, port, urllib.parse.unquote(path.lstrip("/")), params)


# ------------------------------------------------------------------------------ helpers


def _schema_kind(schema: Schema) -> str:
    """The logical name when the schema is one of Connect's logical types, else the type name."""
    if schema.name in (Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME):
        return str(schema.name)
    return schema.type.name


def _naive_in(value: _dt.datetime, tz: _dt.tzinfo) -> _dt.datetime:
    """``value`` as a naive wall-clock time in ``tz`` (naive values are taken as UTC)."""
    if value.tzinfo is None or value.utcoffset() is None:
        value = value.replace(tzinfo=_UTC)
    return value.astimezone(tz).replace(tzinfo=None)


def timezone(name: str | None) -> _dt.tzinfo:
    """A tzinfo for a ``db.timezone`` value (``UTC``, ``Europe/Paris``, ``+02:00``)."""
    if not name or name.upper() in ("UTC", "Z", "GMT"):
        return _UTC
    m = re.fullmatch(r"(?:UTC|GMT)?([+-])(\d{1,2}):?(\d{2})?", name.strip())
    if m:
        delta = _dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0))
        return _dt.timezone(delta if m.group(1) == "+" else -delta)
    try:
        return ZoneInfo(name)
    except Exception:
        raise ConfigError("db.timezone", name, "Invalid time zone identifier") from None


def _strip_type_args(full: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\([^)]*\)", "", full)).strip().lower()


def _declared_size(declared: str) -> tuple[int | None, int | None]:
    m = re.search(r"\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)", declared)
    if not m:
        return None, None
    return int(m.group(1)), (int(m.group(2)) if m.group(2) is not None else None)


class Dialect:
    """Base class; use :meth:`for_url`. See the module documentation for the API."""

    name = "generic"
    kind = "generic"
    paramstyle = "format"
    placeholder = "%s"
    default_port: int | None = None

    def __init__(
        self,
        url: str,
        user: str | None = None,
        password: str | None = None,
        *,
        quote_identifiers: bool = True,
        _parsed: _Url | None = None,
    ) -> None:
        parsed = _parsed or _parse_url(url)
        self.url = url
        self._parsed = parsed
        self.host = parsed.host
        self.port = parsed.port
        self.database = parsed.database
        self.params = dict(parsed.params)
        self.user = user if user is not None else self.params.get("user")
        self._password = password if password is not None else self.params.get("password")
        self.quote_identifiers = quote_identifiers
        self.stats: collections.Counter[str] = collections.Counter()

    # -- choosing --------------------------------------------------------------------

    @staticmethod
    def for_url(
        url: str, user: str | None = None, password: str | None = None, *, quote_identifiers: bool = True
    ) -> Dialect:
        """The dialect for a JDBC URL (raises :class:`ConfigError` for anything else)."""
        parsed = _parse_url(url)
        cls: type[Dialect]
        if parsed.kind == "postgresql":
            cls = PostgreSqlDialect
        elif parsed.kind in ("mariadb", "mysql"):
            cls = MySqlDialect
        else:
            cls = SqliteDialect
        return cls(url, user, password, quote_identifiers=quote_identifiers, _parsed=parsed)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"

    # -- connections -----------------------------------------------------------------

    def connect(self, timezone: str | None = None) -> Any:
        """A new DB-API connection with autocommit off."""
        raise NotImplementedError

    # -- identifiers -----------------------------------------------------------------

    _quote_char = '"'

    def quote(self, identifier: str) -> str:
        if not self.quote_identifiers:
            return identifier
        q = self._quote_char
        return q + identifier.replace(q, q + q) + q

    def _q(self, identifier: str) -> str:
        """Quoted for a statement executed with parameters (``%`` doubled for ``format``)."""
        text = self.quote(identifier)
        return text.replace("%", "%%") if self.paramstyle == "format" else text

    @staticmethod
    def _parts(name: str) -> list[str]:
        parts = [p for p in name.split(".")]
        if any(p == "" for p in parts):
            raise DataError(f"Invalid table name: {name!r}")
        return parts

    def table_ref(self, name: str) -> str:
        return ".".join(self.quote(p) for p in self._parts(name))

    def _tref(self, name: str) -> str:
        text = self.table_ref(name)
        return text.replace("%", "%%") if self.paramstyle == "format" else text

    def split_table(self, name: str) -> tuple[str | None, str]:
        parts = self._parts(name)
        if len(parts) == 1:
            return None, parts[0]
        return parts[-2], parts[-1]

    def _fold(self, identifier: str) -> str:
        """How the database stores an identifier written unquoted."""
        return identifier

    def _catalog_name(self, identifier: str | None) -> str | None:
        if identifier is None:
            return None
        return identifier if self.quote_identifiers else self._fold(identifier)

    # -- catalog ---------------------------------------------------------------------

    def list_tables(
        self, conn: Any, schema_pattern: str | None = None, table_types: Sequence[str] = ("TABLE",)
    ) -> list[str]:
        raise NotImplementedError

    def describe_columns(self, conn: Any, table: str) -> list[Column]:
        raise NotImplementedError

    def table_exists(self, conn: Any, table: str) -> bool:
        return bool(self.describe_columns(conn, table))

    def current_timestamp(self, conn: Any) -> _dt.datetime:
        raise NotImplementedError

    # -- types -----------------------------------------------------------------------

    def sql_type(self, schema: Schema, key: bool = False) -> str:
        raise NotImplementedError

    def _unsupported(self, schema: Schema) -> DataError:
        what = schema.name or schema.type.name
        return DataError(f"{self.name} dialect does not support type {what}")

    def check_writable(self, schema: Schema) -> None:
        """Raise :class:`DataError` when a column of this schema cannot be written."""
        self.sql_type(schema)

    def to_db_value(self, schema: Schema, value: Any, tz: _dt.tzinfo = _UTC) -> Any:
        if value is None:
            return None
        kind = _schema_kind(schema)
        if kind == Timestamp.LOGICAL_NAME:
            return _naive_in(value, tz)
        if kind == Date.LOGICAL_NAME and isinstance(value, _dt.datetime):
            return value.date()
        if kind == Time.LOGICAL_NAME and isinstance(value, _dt.time) and value.tzinfo is not None:
            return value.replace(tzinfo=None)
        if isinstance(value, (bytearray, memoryview)):
            return bytes(value)
        return value

    def literal(self, schema: Schema, value: Any) -> str:
        """A SQL literal of a Connect value (for ``DEFAULT`` clauses)."""
        if value is None:
            return "NULL"
        kind = _schema_kind(schema)
        if kind == Timestamp.LOGICAL_NAME:
            return "'" + _naive_in(value, _UTC).isoformat(sep=" ") + "'"
        if kind in (Date.LOGICAL_NAME, Time.LOGICAL_NAME):
            return "'" + value.isoformat() + "'"
        if isinstance(value, bool):
            return self._bool_literal(value)
        if isinstance(value, (int, _decimal.Decimal)):
            return str(value)
        if isinstance(value, float):
            if not math.isfinite(value):
                raise DataError(f"Cannot write default value {value} for {self.name}")
            return repr(value)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return self._bytes_literal(bytes(value))
        if isinstance(value, str):
            return "'" + value.replace("'", "''") + "'"
        raise DataError(f"Cannot write a default value of type {type(value).__name__}")

    def _bool_literal(self, value: bool) -> str:
        return "1" if value else "0"

    def _bytes_literal(self, value: bytes) -> str:
        return "X'" + value.hex() + "'"

    # -- DDL -------------------------------------------------------------------------

    def _column_definition(self, name: str, schema: Schema, key: bool) -> str:
        text = f"{self.quote(name)} {self.sql_type(schema, key=key)}"
        if schema.default_value is not None and not key:
            text += " DEFAULT " + self.literal(schema, schema.default_value)
        text += " NOT NULL" if (key or not schema.optional) else " NULL"
        return text

    def create_table(self, table: str, fields: Sequence[tuple[str, Schema]], pk_fields: Sequence[str] = ()) -> str:
        keys = set(pk_fields)
        lines = [self._column_definition(name, schema, name in keys) for name, schema in fields]
        if pk_fields:
            lines.append("PRIMARY KEY(" + ",".join(self.quote(k) for k in pk_fields) + ")")
        return f"CREATE TABLE {self.table_ref(table)} (\n" + ",\n".join(lines) + ")"

    def alter_add_columns(self, table: str, fields: Sequence[tuple[str, Schema]]) -> list[str]:
        if not fields:
            return []
        adds = ",\n".join("ADD " + self._column_definition(n, s, False) for n, s in fields)
        return [f"ALTER TABLE {self.table_ref(table)}\n{adds}"]

    # -- DML -------------------------------------------------------------------------

    def _columns(self, names: Sequence[str]) -> str:
        return ",".join(self._q(n) for n in names)

    def _marks(self, n: int) -> str:
        return ",".join([self.placeholder] * n)

    def insert(self, table: str, key_cols: Sequence[str], value_cols: Sequence[str]) -> str:
        cols = [*key_cols, *value_cols]
        return f"INSERT INTO {self._tref(table)} ({self._columns(cols)}) VALUES ({self._marks(len(cols))})"

    def upsert(self, table: str, key_cols: Sequence[str], value_cols: Sequence[str]) -> str:
        raise NotImplementedError

    def update(self, table: str, key_cols: Sequence[str], value_cols: Sequence[str]) -> str:
        sets = ", ".join(f"{self._q(c)} = {self.placeholder}" for c in value_cols)
        where = " AND ".join(f"{self._q(c)} = {self.placeholder}" for c in key_cols)
        return f"UPDATE {self._tref(table)} SET {sets} WHERE {where}"

    def delete(self, table: str, key_cols: Sequence[str]) -> str:
        where = " AND ".join(f"{self._q(c)} = {self.placeholder}" for c in key_cols)
        return f"DELETE FROM {self._tref(table)} WHERE {where}"

    def statement(self, mode: str, table: str, key_cols: Sequence[str], value_cols: Sequence[str]) -> str:
        if mode == "insert":
            return self.insert(table, key_cols, value_cols)
        if mode == "upsert":
            return self.upsert(table, key_cols, value_cols)
        if mode == "update":
            return self.update(table, key_cols, value_cols)
        raise ValueError(f"unknown write mode {mode!r}")

    # -- batched writes --------------------------------------------------------------

    @staticmethod
    def _check_mode(mode: str, key_cols: Sequence[str]) -> None:
        if mode not in WRITE_MODES:
            raise ValueError(f"unknown write mode {mode!r}")
        if mode != "insert" and not key_cols:
            raise DataError(f"{mode} needs key columns")

    def write_rows(
        self,
        conn: Any,
        table: str,
        mode: str,
        key_cols: Sequence[str],
        value_cols: Sequence[str],
        rows: Sequence[Sequence[Any]],
    ) -> int:
        self._check_mode(mode, key_cols)
        if not rows:
            return 0
        if mode == "update":
            if not value_cols:
                return len(rows)
            n = len(key_cols)
            params = [tuple(r[n:]) + tuple(r[:n]) for r in rows]
        else:
            params = [tuple(r) for r in rows]
        cur = conn.cursor()
        try:
            cur.executemany(self.statement(mode, table, key_cols, value_cols), params)
        finally:
            cur.close()
        self.stats["executemany_batches"] += 1
        self.stats["rows_written"] += len(rows)
        return len(rows)

    def delete_rows(self, conn: Any, table: str, key_cols: Sequence[str], keys: Sequence[Sequence[Any]]) -> int:
        if not keys:
            return 0
        cur = conn.cursor()
        try:
            cur.executemany(self.delete(table, key_cols), [tuple(k) for k in keys])
        finally:
            cur.close()
        self.stats["executemany_batches"] += 1
        self.stats["rows_deleted"] += len(keys)
        return len(keys)


# ---------------------------------------------------------------------------- PostgreSQL


class PostgreSqlDialect(Dialect):
    """PostgreSQL through psycopg 3; batches go through ``COPY`` into a staging table."""

    name = "PostgreSQL"
    kind = "postgresql"
    paramstyle = "format"
    placeholder = "%s"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.database:
            raise ConfigError("connection.url", self.url, "The URL names no database")
        # staging tables that exist in a connection's session (per connection object)
        self._stages: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()

    def connect(self, timezone: str | None = None) -> Any:
        import psycopg

        kwargs: dict[str, Any] = {
            "host": self.host,
            "port": self.port,
            "dbname": self.database,
            "autocommit": False,
            "connect_timeout": int(self.params.get("connectTimeout") or 10) or 10,
        }
        if self.user is not None:
            kwargs["user"] = self.user
        if self._password is not None:
            kwargs["password"] = self._password
        if self.params.get("sslmode"):
            kwargs["sslmode"] = self.params["sslmode"]
        if self.params.get("ApplicationName"):
            kwargs["application_name"] = self.params["ApplicationName"]
        options = []
        if self.params.get("currentSchema"):
            options.append("-c search_path=" + self.params["currentSchema"].replace(" ", "\\ "))
        if timezone:
            options.append("-c TimeZone=" + timezone.replace(" ", "\\ "))
        if options:
            kwargs["options"] = " ".join(options)
        try:
            return psycopg.connect(**kwargs)
        except psycopg.Error as e:
            raise _connection_error(self, e) from e

    def _fold(self, identifier: str) -> str:
        return identifier.lower()

    def _regclass_arg(self, table: str) -> str:
        # to_regclass parses the text as SQL would: always hand it quoted parts so that
        # the catalog lookup matches how the statements name the table.
        parts = self._parts(table)[-2:]
        return ".".join('"' + self._catalog_name(p).replace('"', '""') + '"' for p in parts)  # type: ignore[union-attr]

    def list_tables(
        self, conn: Any, schema_pattern: str | None = None, table_types: Sequence[str] = ("TABLE",)
    ) -> list[str]:
        kinds: list[str] = []
        for t in table_types:
            t = t.upper()
            if t == "TABLE":
                kinds += ["r", "p"]
            elif t == "VIEW":
                kinds += ["v", "m"]
        sql = (
            "SELECT n.nspname, c.relname, n.nspname = current_schema() "
            "FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind = ANY(%s) AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
            "AND n.nspname NOT LIKE 'pg\\_toast%%' AND n.nspname NOT LIKE 'pg\\_temp\\_%%' "
            "AND (%s::text IS NULL OR n.nspname LIKE %s) "
            "AND has_schema_privilege(n.oid, 'USAGE') "
            "ORDER BY 3 DESC, 1, 2"
        )
        with conn.cursor() as cur:
            cur.execute(sql, (kinds, schema_pattern, schema_pattern))
            rows = cur.fetchall()
        return [t if current else f"{s}.{t}" for s, t, current in rows]

    def describe_columns(self, conn: Any, table: str) -> list[Column]:
        sql = (
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod), t.typname, NOT a.attnotnull, "
            "pg_get_expr(d.adbin, d.adrelid), a.attidentity, a.atttypmod, t.typcategory, "
            "(SELECT k.n FROM pg_catalog.pg_index i, unnest(i.indkey) WITH ORDINALITY AS k(attnum, n) "
            "  WHERE i.indrelid = a.attrelid AND i.indisprimary AND k.attnum = a.attnum) "
            "FROM pg_catalog.pg_attribute a "
            "JOIN pg_catalog.pg_type t ON t.oid = a.atttypid "
            "LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
            "WHERE a.attrelid = to_regclass(%s) AND a.attnum > 0 AND NOT a.attisdropped "
            "ORDER BY a.attnum"
        )
        with conn.cursor() as cur:
            cur.execute(sql, (self._regclass_arg(table),))
            rows = cur.fetchall()
        columns = []
        for name, full, typname, nullable, default, identity, typmod, _category, pk in rows:
            precision = scale = None
            base = typname.lstrip("_")
            if base == "numeric" and typmod is not None and typmod >= 4:
                precision, scale = ((typmod - 4) >> 16) & 0xFFFF, (typmod - 4) & 0xFFFF
            elif base in ("varchar", "bpchar") and typmod is not None and typmod >= 4:
                precision = typmod - 4
            elif base in ("int2", "int4", "int8"):
                precision = {"int2": 5, "int4": 10, "int8": 19}[base]
                scale = 0
            columns.append(
                Column(
                    name=name,
                    type_name=_strip_type_args(full),
                    nullable=bool(nullable),
                    precision=precision,
                    scale=scale,
                    autoincrement=bool(identity) or (default or "").startswith("nextval("),
                    primary_key=int(pk) if pk is not None else None,
                    full_type=full,
                    default=default,
                )
            )
        return columns

    def current_timestamp(self, conn: Any) -> _dt.datetime:
        with conn.cursor() as cur:
            cur.execute("SELECT now() AT TIME ZONE 'UTC'")
            (value,) = cur.fetchone()
        return value

    def sql_type(self, schema: Schema, key: bool = False) -> str:
        kind = _schema_kind(schema)
        mapped = {
            Decimal.LOGICAL_NAME: "DECIMAL",
            Date.LOGICAL_NAME: "DATE",
            Time.LOGICAL_NAME: "TIME",
            Timestamp.LOGICAL_NAME: "TIMESTAMP",
            "INT8": "SMALLINT",
            "INT16": "SMALLINT",
            "INT32": "INT",
            "INT64": "BIGINT",
            "FLOAT32": "REAL",
            "FLOAT64": "DOUBLE PRECISION",
            "BOOLEAN": "BOOLEAN",
            "STRING": "TEXT",
            "BYTES": "BYTEA",
        }.get(kind)
        if mapped is not None:
            return mapped
        if schema.type is Type.ARRAY:
            element = schema.value_schema()
            if element is None or element.type in (Type.ARRAY, Type.MAP, Type.STRUCT):
                raise self._unsupported(schema)
            return self.sql_type(element) + "[]"
        raise self._unsupported(schema)

    def to_db_value(self, schema: Schema, value: Any, tz: _dt.tzinfo = _UTC) -> Any:
        if value is not None and schema.type is Type.ARRAY:
            element = schema.value_schema()
            return [self.to_db_value(element, v, tz) for v in value]
        if isinstance(value, str) and "\x00" in value:
            raise DataError("PostgreSQL text cannot contain NUL (0x00) characters")
        return super().to_db_value(schema, value, tz)

    def _bool_literal(self, value: bool) -> str:
        return "TRUE" if value else "FALSE"

    def _bytes_literal(self, value: bytes) -> str:
        return "'\\x" + value.hex() + "'::bytea"

    def literal(self, schema: Schema, value: Any) -> str:
        if value is not None and schema.type is Type.ARRAY:
            inner = ",".join(self.literal(schema.value_schema(), v) for v in value)
            return f"ARRAY[{inner}]::{self.sql_type(schema)}"
        return super().literal(schema, value)

    def upsert(self, table: str, key_cols: Sequence[str], value_cols: Sequence[str]) -> str:
        return self.insert(table, key_cols, value_cols) + self._on_conflict(key_cols, value_cols)

    def _on_conflict(self, key_cols: Sequence[str], value_cols: Sequence[str]) -> str:
        text = f" ON CONFLICT ({self._columns(key_cols)}) "
        if not value_cols:
            return text + "DO NOTHING"
        return text + "DO UPDATE SET " + ",".join(f"{self._q(c)}=EXCLUDED.{self._q(c)}" for c in value_cols)

    # -- COPY path ---------------------------------------------------------------------

    def _stage_name(self, table: str, cols: Sequence[str]) -> str:
        digest = hashlib.sha1(("\x00".join([table, *cols])).encode()).hexdigest()[:16]
        return f"sluice_stage_{digest}"

    def _ensure_stage(self, conn: Any, cur: Any, table: str, cols: Sequence[str]) -> str:
        stage = self._stage_name(table, cols)
        known = self._stages.setdefault(conn, set())
        if stage not in known:
            # Same column types as the target, no constraints; emptied at every commit.
            # IF NOT EXISTS: the table survives in the session unless its creating
            # transaction was rolled back.
            cur.execute(
                f"CREATE TEMPORARY TABLE IF NOT EXISTS {self.quote(stage) if self.quote_identifiers else stage} "
                f"ON COMMIT DELETE ROWS AS SELECT {','.join(self.quote(c) for c in cols)} "
                f"FROM {self.table_ref(table)} WITH NO DATA"
            )
            known.add(stage)
        return stage

    def forget_stages(self, conn: Any) -> None:
        """Call after a rollback: staging tables created in that transaction are gone."""
        self._stages.pop(conn, None)

    def write_rows(
        self,
        conn: Any,
        table: str,
        mode: str,
        key_cols: Sequence[str],
        value_cols: Sequence[str],
        rows: Sequence[Sequence[Any]],
    ) -> int:
        self._check_mode(mode, key_cols)
        if not rows:
            return 0
        if mode == "update" and not value_cols:
            return len(rows)
        cols = [*key_cols, *value_cols]
        stage_cols = ",".join(self.quote(c) for c in cols)
        target = self.table_ref(table)
        if mode == "insert":
            # Plain inserts need no staging: COPY straight into the table (same
            # constraints, defaults and triggers as INSERT, all or nothing).
            with conn.cursor() as cur, cur.copy(f"COPY {target} ({stage_cols}) FROM STDIN") as copy:
                write = copy.write_row
                for row in rows:
                    write(row)
            self.stats["copy_batches"] += 1
            self.stats["copy_rows"] += len(rows)
            self.stats["rows_written"] += len(rows)
            return len(rows)
        with conn.cursor() as cur:
            stage = self._ensure_stage(conn, cur, table, cols)
            sref = '"' + stage + '"'
            with cur.copy(f"COPY {sref} ({stage_cols}) FROM STDIN") as copy:
                write = copy.write_row
                for row in rows:
                    write(row)
            if mode == "update":
                sets = ", ".join(f"{self.quote(c)} = s.{self.quote(c)}" for c in value_cols)
                where = " AND ".join(f"t.{self.quote(c)} = s.{self.quote(c)}" for c in key_cols)
                sql = f"UPDATE {target} AS t SET {sets} FROM {sref} AS s WHERE {where}"
            else:
                sql = f"INSERT INTO {target} ({stage_cols}) SELECT {stage_cols} FROM {sref}"
                if mode == "upsert":
                    sql += self._on_conflict(key_cols, value_cols).replace("%%", "%")
            cur.execute(sql)
            cur.execute(f"TRUNCATE {sref}")
        self.stats["copy_batches"] += 1
        self.stats["copy_rows"] += len(rows)
        self.stats["rows_written"] += len(rows)
        return len(rows)

    def delete_rows(self, conn: Any, table: str, key_cols: Sequence[str], keys: Sequence[Sequence[Any]]) -> int:
        if not keys:
            return 0
        if len(keys) < 50:
            return super().delete_rows(conn, table, key_cols, keys)
        stage_cols = ",".join(self.quote(c) for c in key_cols)
        with conn.cursor() as cur:
            stage = self._ensure_stage(conn, cur, table, key_cols)
            sref = '"' + stage + '"'
            with cur.copy(f"COPY {sref} ({stage_cols}) FROM STDIN") as copy:
                for key in keys:
                    copy.write_row(key)
            where = " AND ".join(f"t.{self.quote(c)} = s.{self.quote(c)}" for c in key_cols)
            cur.execute(f"DELETE FROM {self.table_ref(table)} AS t USING {sref} AS s WHERE {where}")
            cur.execute(f"TRUNCATE {sref}")
        self.stats["copy_batches"] += 1
        self.stats["copy_rows"] += len(keys)
        self.stats["rows_deleted"] += len(keys)
        return len(keys)


# ------------------------------------------------------------------------- MariaDB/MySQL


class MySqlDialect(Dialect):
    """MariaDB and MySQL through PyMySQL; batches are multi-row statements."""

    name = "MySQL"
    kind = "mysql"
    paramstyle = "format"
    placeholder = "%s"
    _quote_char = "`"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self._parsed.kind == "mariadb":
            self.name = "MariaDB"

    def connect(self, timezone: str | None = None) -> Any:
        import pymysql

        timeout_ms = self.params.get("connectTimeout")
        kwargs: dict[str, Any] = {
            "host": self.host,
            "port": self.port,
            "autocommit": False,
            "charset": "utf8mb4",
            "connect_timeout": max(1, int(timeout_ms) // 1000) if timeout_ms else 10,
        }
        if self.database:
            kwargs["database"] = self.database
        if self.user is not None:
            kwargs["user"] = self.user
        if self._password is not None:
            kwargs["password"] = self._password
        try:
            conn = pymysql.connect(**kwargs)
        except pymysql.Error as e:
            raise _connection_error(self, e) from e
        return conn

    def list_tables(
        self, conn: Any, schema_pattern: str | None = None, table_types: Sequence[str] = ("TABLE",)
    ) -> list[str]:
        kinds: list[str] = []
        for t in table_types:
            t = t.upper()
            if t == "TABLE":
                kinds += ["BASE TABLE"]
            elif t == "VIEW":
                kinds += ["VIEW", "SYSTEM VIEW"]
        if not kinds:
            return []
        marks = ",".join(["%s"] * len(kinds))
        if schema_pattern is None:
            where, args = "table_schema = DATABASE()", []
        else:
            where = (
                "table_schema LIKE %s AND table_schema NOT IN "
                "('information_schema', 'mysql', 'performance_schema', 'sys')"
            )
            args = [schema_pattern]
        sql = (
            "SELECT table_schema, table_name, table_schema = DATABASE() FROM information_schema.tables "
            f"WHERE {where} AND table_type IN ({marks}) ORDER BY 3 DESC, 1, 2"
        )
        with conn.cursor() as cur:
            cur.execute(sql, (*args, *kinds))
            rows = cur.fetchall()
        return [t if current else f"{s}.{t}" for s, t, current in rows]

    def describe_columns(self, conn: Any, table: str) -> list[Column]:
        schema, name = self.split_table(table)
        sql = (
            "SELECT c.column_name, c.data_type, c.column_type, c.is_nullable, c.numeric_precision, "
            "c.numeric_scale, c.character_maximum_length, c.extra, c.column_default, k.ordinal_position "
            "FROM information_schema.columns c LEFT JOIN information_schema.key_column_usage k "
            "ON k.table_schema = c.table_schema AND k.table_name = c.table_name "
            "AND k.column_name = c.column_name AND k.constraint_name = 'PRIMARY' "
            "WHERE c.table_schema = COALESCE(%s, DATABASE()) AND c.table_name = %s "
            "ORDER BY c.ordinal_position"
        )
        with conn.cursor() as cur:
            cur.execute(sql, (schema, name))
            rows = cur.fetchall()
        columns = []
        for cname, dtype, ctype, nullable, nprec, nscale, clen, extra, default, pk in rows:
            precision = nprec if nprec is not None else clen
            columns.append(
                Column(
                    name=cname,
                    type_name=str(dtype).lower(),
                    nullable=str(nullable).upper() == "YES",
                    precision=int(precision) if precision is not None else None,
                    scale=int(nscale) if nscale is not None else None,
                    autoincrement="auto_increment" in str(extra or "").lower(),
                    primary_key=int(pk) if pk is not None else None,
                    full_type=str(ctype),
                    default=None if default is None or default == "NULL" else str(default),
                )
            )
        return columns

    def current_timestamp(self, conn: Any) -> _dt.datetime:
        with conn.cursor() as cur:
            cur.execute("SELECT UTC_TIMESTAMP(6)")
            (value,) = cur.fetchone()
        return value

    def sql_type(self, schema: Schema, key: bool = False) -> str:
        kind = _schema_kind(schema)
        if kind == Decimal.LOGICAL_NAME:
            return f"DECIMAL(65,{Decimal.scale(schema)})"
        if kind == "STRING" and key:
            return "VARCHAR(256)"  # TEXT cannot be a key without a prefix length
        mapped = {
            Date.LOGICAL_NAME: "DATE",
            Time.LOGICAL_NAME: "TIME(3)",
            Timestamp.LOGICAL_NAME: "DATETIME(3)",
            "INT8": "TINYINT",
            "INT16": "SMALLINT",
            "INT32": "INT",
            "INT64": "BIGINT",
            "FLOAT32": "FLOAT",
            "FLOAT64": "DOUBLE",
            "BOOLEAN": "TINYINT",
            "STRING": "TEXT",
            "BYTES": "VARBINARY(1024)" if key else "LONGBLOB",
        }.get(kind)
        if mapped is None:
            raise self._unsupported(schema)
        return mapped

    def _column_definition(self, name: str, schema: Schema, key: bool) -> str:
        sql_type = self.sql_type(schema, key=key)
        text = f"{self.quote(name)} {sql_type}"
        if schema.default_value is not None and not key:
            literal = self.literal(schema, schema.default_value)
            # MySQL 8 takes defaults of TEXT/BLOB columns only as expressions
            text += f" DEFAULT ({literal})" if sql_type.endswith(("TEXT", "BLOB")) else f" DEFAULT {literal}"
        text += " NOT NULL" if (key or not schema.optional) else " NULL"
        return text

    def to_db_value(self, schema: Schema, value: Any, tz: _dt.tzinfo = _UTC) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            raise DataError(f"{self.name} cannot store the floating-point value {value}")
        if isinstance(value, bool):
            return int(value)
        return super().to_db_value(schema, value, tz)

    def upsert(self, table: str, key_cols: Sequence[str], value_cols: Sequence[str]) -> str:
        return self.insert(table, key_cols, value_cols) + self._on_duplicate(key_cols, value_cols)

    def _on_duplicate(self, key_cols: Sequence[str], value_cols: Sequence[str]) -> str:
        # With nothing but key columns an existing row stays as it is.
        cols = value_cols or key_cols[:1]
        return " ON DUPLICATE KEY UPDATE " + ",".join(f"{self._q(c)}=VALUES({self._q(c)})" for c in cols)

    def write_rows(
        self,
        conn: Any,
        table: str,
        mode: str,
        key_cols: Sequence[str],
        value_cols: Sequence[str],
        rows: Sequence[Sequence[Any]],
    ) -> int:
        self._check_mode(mode, key_cols)
        if not rows:
            return 0
        if mode == "update" and not value_cols:
            return len(rows)
        cols = [*key_cols, *value_cols]
        target = self.table_ref(table)
        stage = None
        if mode == "update":
            # Multi-row inserts into a temporary staging table (creating one does not end
            # the transaction), then one UPDATE … JOIN.
            stage = "`sluice_stage_" + hashlib.sha1("\x00".join([table, *cols]).encode()).hexdigest()[:16] + "`"
            target, real_target = stage, target
        head = f"INSERT INTO {target} ({','.join(self.quote(c) for c in cols)}) VALUES "
        tail = ""
        if mode == "upsert":
            tail = self._on_duplicate(key_cols, value_cols).replace("%%", "%")
        literal = _mysql_literal(conn)
        with conn.cursor() as cur:
            if stage is not None:
                cur.execute(
                    f"CREATE TEMPORARY TABLE IF NOT EXISTS {stage} AS SELECT "
                    f"{','.join(self.quote(c) for c in cols)} FROM {real_target} LIMIT 0"
                )
            for statement in _chunked_statements(
                head, tail, ("(" + ",".join([literal(v) for v in row]) + ")" for row in rows)
            ):
                cur.execute(statement)
                self.stats["multi_row_statements"] += 1
            if stage is not None:
                on = " AND ".join(f"t.{self.quote(c)} = s.{self.quote(c)}" for c in key_cols)
                sets = ", ".join(f"t.{self.quote(c)} = s.{self.quote(c)}" for c in value_cols)
                cur.execute(f"UPDATE {real_target} AS t JOIN {stage} AS s ON {on} SET {sets}")
                cur.execute(f"DELETE FROM {stage}")
        self.stats["rows_written"] += len(rows)
        return len(rows)

    def delete_rows(self, conn: Any, table: str, key_cols: Sequence[str], keys: Sequence[Sequence[Any]]) -> int:
        if not keys:
            return 0
        literal = _mysql_literal(conn)
        if len(key_cols) == 1:
            head = f"DELETE FROM {self.table_ref(table)} WHERE {self.quote(key_cols[0])} IN ("
            items = (literal(k[0]) for k in keys)
        else:
            head = f"DELETE FROM {self.table_ref(table)} WHERE ({','.join(self.quote(c) for c in key_cols)}) IN ("
            items = ("(" + ",".join([literal(v) for v in k]) + ")" for k in keys)
        with conn.cursor() as cur:
            for statement in _chunked_statements(head, ")", items):
                cur.execute(statement)
                self.stats["multi_row_statements"] += 1
        self.stats["rows_deleted"] += len(keys)
        return len(keys)


def _mysql_literal(conn: Any) -> Callable[[Any], str]:
    """A fast SQL literal function for a PyMySQL connection (dispatch on the exact type,
    the connection's own string escaping, which follows the server's
    NO_BACKSLASH_ESCAPES mode; anything else through ``conn.escape``)."""
    escape_string = getattr(conn, "_escape_string", None)
    if escape_string is None:

        def escape_string(s: str) -> str:
            return conn.escape(s)[1:-1]

    def text(v: str) -> str:
        return "'" + escape_string(v) + "'"

    def floating(v: float) -> str:
        if not math.isfinite(v):
            raise DataError(f"MySQL cannot store the floating-point value {v}")
        s = repr(v)
        return s if "e" in s else s + "e0"

    def quoted_iso(v: Any) -> str:
        return "'" + v.isoformat() + "'"

    encoders: dict[type, Callable[[Any], str]] = {
        type(None): lambda v: "NULL",
        int: str,
        bool: lambda v: "1" if v else "0",
        float: floating,
        str: text,
        bytes: lambda v: "X'" + v.hex() + "'",
        bytearray: lambda v: "X'" + v.hex() + "'",
        _decimal.Decimal: str,
        _dt.date: quoted_iso,
        _dt.time: quoted_iso,
        _dt.datetime: lambda v: "'" + v.isoformat(sep=" ") + "'",
    }
    get = encoders.get
    escape = conn.escape

    def literal(v: Any) -> str:
        encode = get(type(v))
        return encode(v) if encode is not None else escape(v)

    return literal


def _chunked_statements(head: str, tail: str, items: Any, limit: int = MYSQL_STATEMENT_BYTES) -> Any:
    """``head + item,item,… + tail`` statements of at most about ``limit`` characters."""
    chunk: list[str] = []
    size = len(head) + len(tail)
    for item in items:
        if chunk and size + len(item) + 1 > limit:
            yield head + ",".join(chunk) + tail
            chunk, size = [], len(head) + len(tail)
        chunk.append(item)
        size += len(item) + 1
    if chunk:
        yield head + ",".join(chunk) + tail


# -------------------------------------------------------------------------------- SQLite


class SqliteDialect(Dialect):
    """SQLite through the standard library's ``sqlite3``; batches use ``executemany``."""

    name = "SQLite"
    kind = "sqlite"
    paramstyle = "qmark"
    placeholder = "?"

    def connect(self, timezone: str | None = None) -> Any:
        import sqlite3

        path = self.database
        uri = path.startswith("file:")
        try:
            # The default isolation level opens a transaction before every data change,
            # committed only by commit(): autocommit is off for DML.
            return sqlite3.connect(path, uri=uri, timeout=30, check_same_thread=False)
        except sqlite3.Error as e:
            raise _connection_error(self, e) from e

    def _fold(self, identifier: str) -> str:
        return identifier

    def list_tables(
        self, conn: Any, schema_pattern: str | None = None, table_types: Sequence[str] = ("TABLE",)
    ) -> list[str]:
        kinds = [{"TABLE": "table", "VIEW": "view"}.get(t.upper(), "") for t in table_types]
        marks = ",".join("?" * len(kinds))
        cur = conn.execute(
            f"SELECT name FROM sqlite_master WHERE type IN ({marks}) AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
            "ORDER BY name",
            kinds,
        )
        return [r[0] for r in cur.fetchall()]

    def describe_columns(self, conn: Any, table: str) -> list[Column]:
        schema, name = self.split_table(table)
        prefix = self.quote(schema) + "." if schema else ""
        rows = conn.execute(f"PRAGMA {prefix}table_info({_sqlite_string(name)})").fetchall()
        pk_count = sum(1 for r in rows if r[5])
        columns = []
        for _cid, cname, declared, notnull, default, pk in rows:
            declared = declared or ""
            precision, scale = _declared_size(declared)
            type_name = _strip_type_args(declared)
            columns.append(
                Column(
                    name=cname,
                    type_name=type_name,
                    nullable=not notnull and not (pk and type_name == "integer" and pk_count == 1),
                    precision=precision,
                    scale=scale,
                    autoincrement=bool(pk) and pk_count == 1 and type_name == "integer",
                    primary_key=int(pk) if pk else None,
                    full_type=declared,
                    default=default,
                )
            )
        return columns

    def current_timestamp(self, conn: Any) -> _dt.datetime:
        (value,) = conn.execute("SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')").fetchone()
        return _dt.datetime.fromisoformat(value)

    def sql_type(self, schema: Schema, key: bool = False) -> str:
        kind = _schema_kind(schema)
        mapped = {
            Decimal.LOGICAL_NAME: "NUMERIC",
            Date.LOGICAL_NAME: "DATE",
            Time.LOGICAL_NAME: "TIME",
            Timestamp.LOGICAL_NAME: "TIMESTAMP",
            "INT8": "INTEGER",
            "INT16": "INTEGER",
            "INT32": "INTEGER",
            "INT64": "INTEGER",
            "BOOLEAN": "INTEGER",
            "FLOAT32": "REAL",
            "FLOAT64": "REAL",
            "STRING": "TEXT",
            "BYTES": "BLOB",
        }.get(kind)
        if mapped is None:
            raise self._unsupported(schema)
        return mapped

    def to_db_value(self, schema: Schema, value: Any, tz: _dt.tzinfo = _UTC) -> Any:
        if value is None:
            return None
        kind = _schema_kind(schema)
        if kind == Timestamp.LOGICAL_NAME:
            return _naive_in(value, tz).isoformat(sep=" ", timespec="milliseconds")
        if kind == Date.LOGICAL_NAME:
            return (value.date() if isinstance(value, _dt.datetime) else value).isoformat()
        if kind == Time.LOGICAL_NAME:
            return value.replace(tzinfo=None).isoformat(timespec="milliseconds")
        if isinstance(value, _decimal.Decimal):
            return str(value)
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, float) and math.isnan(value):
            raise DataError("SQLite cannot store NaN")
        return super().to_db_value(schema, value, tz)

    def literal(self, schema: Schema, value: Any) -> str:
        kind = _schema_kind(schema)
        if value is not None and kind == Timestamp.LOGICAL_NAME:
            return "'" + self.to_db_value(schema, value) + "'"
        return super().literal(schema, value)

    def alter_add_columns(self, table: str, fields: Sequence[tuple[str, Schema]]) -> list[str]:
        # SQLite adds one column per statement
        return [f"ALTER TABLE {self.table_ref(table)} ADD {self._column_definition(n, s, False)}" for n, s in fields]

    def upsert(self, table: str, key_cols: Sequence[str], value_cols: Sequence[str]) -> str:
        text = self.insert(table, key_cols, value_cols) + f" ON CONFLICT ({self._columns(key_cols)}) "
        if not value_cols:
            return text + "DO NOTHING"
        return text + "DO UPDATE SET " + ",".join(f"{self._q(c)}=excluded.{self._q(c)}" for c in value_cols)


def _sqlite_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _connection_error(dialect: Dialect, error: BaseException) -> Exception:
    from sluice.api import ConnectError

    return ConnectError(f"Could not connect to {dialect.name} at {dialect.url}: {error}")
