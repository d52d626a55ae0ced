"""The MariaDB/MySQL dialect of the JDBC connectors (PyMySQL): catalog queries, Confluent's
type mapping, and batches written as multi-row statements of SQL literals."""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import hashlib
import math
from collections.abc import Callable, Sequence
from typing import Any

from sluice.api import DataError, Schema
from sluice.api.data import Date, Decimal, Time, Timestamp
from sluice.connectors.jdbc.dialect_base import (
    Column,
    Dialect,
    connection_error,
    schema_kind,
)

__all__ = ["MySqlDialect"]

# Bytes of SQL text per multi-row MySQL statement (the server's max_allowed_packet is
# 16 MiB by default on MariaDB, 64 MiB on MySQL 8).
MYSQL_STATEMENT_BYTES = 4 * 1024 * 1024


class MySqlDialect(Dialect):
    """MariaDB and MySQL through PyMySQL; batches are multi-row statements."""

    name = "MySQL"
    kind = "mysql"
    url_kinds = ("mariadb", "mysql")
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
            raise connection_error(self, e) from e
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
        kind = schema_kind(schema)
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

    def to_db_value(self, schema: Schema, value: Any, tz: _dt.tzinfo = _dt.UTC) -> Any:
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
