"""The base of the JDBC connectors' database dialects: :class:`Column` (a column as a
dialect reads it from the catalog), JDBC URL parsing, the ``db.timezone`` parser and
:class:`Dialect`, whose SQL is what the databases share; :mod:`.dialect_postgresql`,
:mod:`.dialect_mysql` and :mod:`.dialect_sqlite` override what differs. The API is
described in :mod:`sluice.connectors.jdbc.dialect`, which is where to import it from.
"""

from __future__ import annotations

import collections
import datetime as _dt
import decimal as _decimal
import math
import re
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sluice.api import ConfigError, ConnectError, DataError, Schema
from sluice.api.data import Date, Decimal, Time, Timestamp

__all__ = [
    "WRITE_MODES",
    "Column",
    "Dialect",
    "connection_error",
    "naive_in",
    "schema_kind",
    "strip_type_args",
    "timezone",
]

WRITE_MODES = ("insert", "upsert", "update")


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


def schema_kind(schema: Schema) -> str:
    """The logical name when the schema is one of Connect's logical types, else the type name."""
    if schema.name in (Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME):
        return str(schema.name)
    return schema.type.name


def naive_in(value: _dt.datetime, tz: _dt.tzinfo) -> _dt.datetime:
    """``value`` as a naive wall-clock time in ``tz`` (naive values are taken as UTC)."""
    if value.tzinfo is None or value.utcoffset() is None:
        value = value.replace(tzinfo=_dt.UTC)
    return value.astimezone(tz).replace(tzinfo=None)


def timezone(name: str | None) -> _dt.tzinfo:
    """A tzinfo for a ``db.timezone`` value (``UTC``, ``Europe/Paris``, ``+02:00``)."""
    if not name or name.upper() in ("UTC", "Z", "GMT"):
        return _dt.UTC
    m = re.fullmatch(r"(?:UTC|GMT)?([+-])(\d{1,2}):?(\d{2})?", name.strip())
    if m:
        delta = _dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0))
        return _dt.timezone(delta if m.group(1) == "+" else -delta)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError("db.timezone", name, "Invalid time zone identifier") from None


def strip_type_args(full: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\([^)]*\)", "", full)).strip().lower()


class Dialect:
    """Base class; use :meth:`for_url`. See :mod:`sluice.connectors.jdbc.dialect` for the API."""

    name = "generic"
    kind = "generic"
    paramstyle = "format"
    placeholder = "%s"
    default_port: int | None = None
    # The JDBC subprotocols (``jdbc:<kind>:``) a subclass serves: defining the subclass
    # registers it for them, and :meth:`for_url` picks from that registry.
    url_kinds: ClassVar[tuple[str, ...]] = ()
    _by_url_kind: ClassVar[dict[str, type[Dialect]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for url_kind in cls.url_kinds:
            Dialect._by_url_kind[url_kind] = cls

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
    @staticmethod
    def for_url(
        url: str, user: str | None = None, password: str | None = None, *, quote_identifiers: bool = True
    ) -> Dialect:
        """The dialect for a JDBC URL (raises :class:`ConfigError` for anything else)."""
        parsed = _parse_url(url)
        cls = Dialect._by_url_kind.get(parsed.kind)
        if cls is None:  # its module was not imported: import sluice.connectors.jdbc.dialect
            raise LookupError(f"No dialect is registered for jdbc:{parsed.kind}: URLs")
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

    def to_db_value(self, schema: Schema, value: Any, tz: _dt.tzinfo = _dt.UTC) -> Any:
        if value is None:
            return None
        kind = schema_kind(schema)
        if kind == Timestamp.LOGICAL_NAME:
            return naive_in(value, tz)
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
        kind = schema_kind(schema)
        if kind == Timestamp.LOGICAL_NAME:
            return "'" + naive_in(value, _dt.UTC).isoformat(sep=" ") + "'"
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


def connection_error(dialect: Dialect, error: BaseException) -> Exception:
    """The error a dialect raises when the driver cannot connect."""
    return ConnectError(f"Could not connect to {dialect.name} at {dialect.url}: {error}")
