"""The JDBC sink's tables (as Confluent's ``DbStructure``): their columns as last read from
the catalog, and a table created (``auto.create``) or given the columns it lacks
(``auto.evolve``) before records of a schema are written to it. Also which database
errors are transient, for the task's retries."""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable, Sequence
from typing import Any

from sluice.api import ConnectError, DataError, RetriableError, Schema
from sluice.connectors.jdbc.dialect import Column, Dialect
from sluice.connectors.jdbc.sink_config import SinkSettings

__all__ = ["SinkTables", "TableAlterOrCreateError", "is_transient", "match_columns"]

log = logging.getLogger(__name__)


class TableAlterOrCreateError(ConnectError):
    """A table is missing or lacks columns and cannot be created or altered."""


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: a lost connection, deadlock, lock or statement timeout."""
    if isinstance(exc, (ConnectionError, TimeoutError, RetriableError)):
        return True
    names = {c.__name__ for c in type(exc).__mro__}
    return bool(names & {"OperationalError", "InterfaceError"})


def match_columns(columns: Sequence[Column], names: Sequence[str]) -> dict[str, str]:
    """Field name → column name: the same name, else the only one equal ignoring case."""
    exact = {c.name for c in columns}
    folded: dict[str, list[str]] = {}
    for c in columns:
        folded.setdefault(c.name.lower(), []).append(c.name)
    out = {}
    for n in names:
        if n in exact:
            out[n] = n
        elif len(folded.get(n.lower(), ())) == 1:
            out[n] = folded[n.lower()][0]
    return out


class SinkTables:
    """The tables one task writes to. ``connection`` gives the task's open connection (it
    connects when there is none), ``rollback`` rolls it back; ``stats`` counts the tables
    created and altered."""

    def __init__(
        self,
        settings: SinkSettings,
        dialect: Dialect,
        connection: Callable[[], Any],
        rollback: Callable[[], None],
        stats: collections.Counter[str],
    ) -> None:
        self.settings = settings
        self.dialect = dialect
        self._connection = connection
        self._rollback = rollback
        self._stats = stats
        self._tables: dict[str, list[Column]] = {}

    def columns(self, table: str, refresh: bool = False) -> list[Column]:
        """The table's columns (read once, again with ``refresh``); ``[]`` when it does not exist."""
        if refresh or table not in self._tables:
            conn = self._connection()
            columns = self.dialect.describe_columns(conn, table)
            conn.commit()  # end the catalog read's transaction
            if not columns:
                return []
            self._tables[table] = columns
        return self._tables[table]

    def ensure(self, table: str, fields: list[tuple[str, Schema]], key_names: list[str]) -> dict[str, str]:
        """Create or amend the table so that it has a column per field; returns field name →
        column name."""
        s, dialect = self.settings, self.dialect
        names = [n for n, _ in fields]
        try:
            columns = self.columns(table)
            if not columns:
                if not s.auto_create:
                    raise TableAlterOrCreateError(f"Table {table} is missing and auto-creation is disabled")
                sql = dialect.create_table(table, fields, key_names if s.pk_mode != "none" else [])
                try:
                    self._ddl([sql])
                    self._stats["tables_created"] += 1
                except Exception as e:  # maybe created meanwhile by another task
                    if is_transient(e) and not _exists_error(e):
                        raise
                    self._rollback()
                    if not self.columns(table, refresh=True):
                        raise TableAlterOrCreateError(f"Failed to create table {table}: {e}") from e
                columns = self.columns(table, refresh=True)
                if not columns:
                    raise TableAlterOrCreateError(f"Table {table} was created but cannot be described")
            matched = match_columns(columns, names)
            missing = [(n, sch) for n, sch in fields if n not in matched]
            if missing:
                if not s.auto_evolve:
                    raise TableAlterOrCreateError(
                        f"Table {table} is missing fields ({', '.join(n for n, _ in missing)}) and "
                        "auto-evolution is disabled"
                    )
                for n, sch in missing:
                    if not sch.optional and sch.default_value is None:
                        raise TableAlterOrCreateError(
                            f"Cannot ALTER TABLE {table} to add missing field {n}, as the field is not optional "
                            "and does not have a default value"
                        )
                try:
                    self._ddl(dialect.alter_add_columns(table, missing))
                    self._stats["tables_altered"] += 1
                except Exception as e:  # maybe altered meanwhile by another task
                    if is_transient(e) and not _exists_error(e):
                        raise
                    self._rollback()
                columns = self.columns(table, refresh=True)
                matched = match_columns(columns, names)
                still = [n for n, _ in fields if n not in matched]
                if still:
                    raise TableAlterOrCreateError(f"Failed to amend table {table} to add missing fields: {still}")
            return matched
        except (TableAlterOrCreateError, DataError):
            raise
        except ConnectError:
            raise
        except Exception as e:
            self._rollback()
            if is_transient(e):
                raise RetriableError(f"Could not create or alter table {table}: {e}") from e
            raise TableAlterOrCreateError(f"Could not create or alter table {table}: {e}") from e

    def _ddl(self, statements: list[str]) -> None:
        conn = self._connection()
        # Commit what the connection has first (nothing, between puts), run the DDL in a
        # transaction of its own.
        conn.commit()
        cur = conn.cursor()
        try:
            for sql in statements:
                log.info("%s: %s", self.dialect.name, sql)
                cur.execute(sql)
        finally:
            cur.close()
        conn.commit()


def _exists_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "already exists" in text or "duplicate column" in text or "duplicate" in text
