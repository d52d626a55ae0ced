"""The PostgreSQL dialect of the JDBC connectors (psycopg 3): catalog queries, Confluent's
type mapping, and batches written with ``COPY`` (through a staging table for upserts,
updates and large deletes)."""

from __future__ import annotations

import datetime as _dt
import hashlib
import weakref
from collections.abc import Sequence
from typing import Any

from sluice.api import ConfigError, DataError, Schema, Type
from sluice.api.data import Date, Decimal, Time, Timestamp
from sluice.connectors.jdbc.dialect_base import (
    Column,
    Dialect,
    connection_error,
    schema_kind,
    strip_type_args,
)

__all__ = ["PostgreSqlDialect"]


class PostgreSqlDialect(Dialect):
    """PostgreSQL through psycopg 3; batches go through ``COPY`` into a staging table."""

    name = "PostgreSQL"
    kind = "postgresql"
    url_kinds = ("postgresql",)
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
            raise connection_error(self, e) from e

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
                    type_name=strip_type_args(full),
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
        kind = schema_kind(schema)
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

    def to_db_value(self, schema: Schema, value: Any, tz: _dt.tzinfo = _dt.UTC) -> Any:
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
