"""The SQLite dialect of the JDBC connectors (the standard library's ``sqlite3``): catalog
reads through ``PRAGMA``, the type mapping, and batches written with ``executemany``."""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import math
import re
from collections.abc import Sequence
from typing import Any

from sluice.api import DataError, Schema
from sluice.api.data import Date, Decimal, Time, Timestamp
from sluice.connectors.jdbc.dialect_base import (
    Column,
    Dialect,
    connection_error,
    naive_in,
    schema_kind,
    strip_type_args,
)

__all__ = ["SqliteDialect"]


class SqliteDialect(Dialect):
    """SQLite through the standard library's ``sqlite3``; batches use ``executemany``."""

    name = "SQLite"
    kind = "sqlite"
    url_kinds = ("sqlite",)
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
            raise connection_error(self, e) from e

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
            type_name = strip_type_args(declared)
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
        kind = schema_kind(schema)
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

    def to_db_value(self, schema: Schema, value: Any, tz: _dt.tzinfo = _dt.UTC) -> Any:
        if value is None:
            return None
        kind = schema_kind(schema)
        if kind == Timestamp.LOGICAL_NAME:
            return naive_in(value, tz).isoformat(sep=" ", timespec="milliseconds")
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
        kind = schema_kind(schema)
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


def _declared_size(declared: str) -> tuple[int | None, int | None]:
    m = re.search(r"\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)", declared)
    if not m:
        return None, None
    return int(m.group(1)), (int(m.group(2)) if m.group(2) is not None else None)
