"""Table queriers of the JDBC source task: one per table (or one for the query), each
reading in the connector's mode and keeping its offset.

Offsets are Confluent's: the source partition of a table is ``{"protocol": "1", "table":
"<schema or database>.<table>"}`` (``{"table": "<table>"}`` in bulk mode), of a query
``{"query": "query"}``; the offset is ``{"incrementing": <long>}``, ``{"timestamp":
<epoch ms>, "timestamp_nanos": <nanoseconds of the second>}`` or both.
"""

from __future__ import annotations

import datetime as dt
import decimal
import logging
import math
from collections import deque
from dataclasses import dataclass
from typing import Any

from sluice.api.errors import ConnectError, DataError
from sluice.api.records import SourceRecord
from sluice.connectors.jdbc.source_queries import NANOS_PER_SECOND, ReadSession, TableId, datetime_to_nanos
from sluice.connectors.jdbc.source_schema import RowMapper

__all__ = [
    "INCREMENTING_FIELD",
    "TIMESTAMP_FIELD",
    "TIMESTAMP_NANOS_FIELD",
    "Offset",
    "Querier",
    "query_partition",
    "table_partition",
    "table_partition_v0",
]

log = logging.getLogger(__name__)

INCREMENTING_FIELD = "incrementing"
TIMESTAMP_FIELD = "timestamp"
TIMESTAMP_NANOS_FIELD = "timestamp_nanos"
TABLE_NAME_KEY = "table"
QUERY_NAME_KEY = "query"
QUERY_NAME_VALUE = "query"
OFFSET_PROTOCOL_VERSION_KEY = "protocol"
PROTOCOL_VERSION_ONE = "1"

_LONG_MAX = 2**63 - 1


def table_partition(table: TableId) -> dict[str, str]:
    """The source partition of a table (Confluent's offset protocol 1)."""
    return {OFFSET_PROTOCOL_VERSION_KEY: PROTOCOL_VERSION_ONE, TABLE_NAME_KEY: table.fqn}


def table_partition_v0(table: TableId) -> dict[str, str]:
    """The partition of Confluent's protocol 0 (the bare table name): looked up on start
    for offsets written by old versions, and what bulk mode's records carry."""
    return {TABLE_NAME_KEY: table.table}


def query_partition() -> dict[str, str]:
    return {QUERY_NAME_KEY: QUERY_NAME_VALUE}


class Offset:
    """A position in a table: the last timestamp (nanoseconds since the epoch) and/or the
    last incrementing value read."""

    __slots__ = ("timestamp_nanos", "incrementing")

    def __init__(self, timestamp_nanos: int | None = None, incrementing: int | None = None) -> None:
        self.timestamp_nanos = timestamp_nanos
        self.incrementing = incrementing

    def to_map(self) -> dict[str, int]:
        out: dict[str, int] = {}
        if self.incrementing is not None:
            out[INCREMENTING_FIELD] = self.incrementing
        if self.timestamp_nanos is not None:
            out[TIMESTAMP_FIELD] = self.timestamp_nanos // 1_000_000
            out[TIMESTAMP_NANOS_FIELD] = self.timestamp_nanos % NANOS_PER_SECOND
        return out

    @staticmethod
    def from_map(offset: dict[str, Any] | None) -> Offset:
        if not offset:
            return Offset()
        inc = offset.get(INCREMENTING_FIELD)
        millis = offset.get(TIMESTAMP_FIELD)
        nanos_ts = None
        if millis is not None:
            millis = int(millis)
            nanos = offset.get(TIMESTAMP_NANOS_FIELD)
            if nanos is None:
                nanos_ts = millis * 1_000_000
            else:  # java.sql.Timestamp(millis) with setNanos(nanos)
                nanos_ts = (millis // 1000) * NANOS_PER_SECOND + int(nanos)
        return Offset(nanos_ts, int(inc) if inc is not None else None)

    @property
    def begin_nanos(self) -> int:
        return self.timestamp_nanos if self.timestamp_nanos is not None else 0

    @property
    def last_incrementing(self) -> int:
        return self.incrementing if self.incrementing is not None else -1

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Offset)
            and self.timestamp_nanos == other.timestamp_nanos
            and self.incrementing == other.incrementing
        )

    def __repr__(self) -> str:
        return f"Offset({self.to_map()})"


@dataclass(frozen=True)
class KeyRange:
    """A bulk read of the rows of ``table`` with ``low <= column < high`` (no bound where
    it is None): one part of a bulk read split across Spark partitions."""

    table: TableId
    column: str
    low: int | None
    high: int | None


def split_key_ranges(table: TableId, column: str, low: int, high: int, parts: int) -> list[KeyRange]:
    """``parts`` contiguous ranges splitting the keys ``low..high`` (inclusive) of ``table``
    as evenly as the integers allow; the first has no lower bound and the last no upper
    one, so together they cover every key, also keys written after ``low`` and ``high``
    were read."""
    span = high - low + 1
    parts = max(1, min(parts, span))
    bounds = [low + span * i // parts for i in range(1, parts)]
    lows: list[int | None] = [None, *bounds]
    highs: list[int | None] = [*bounds, None]
    return [KeyRange(table, column, lo, hi) for lo, hi in zip(lows, highs, strict=True)]


class Querier:
    """Reads one table or the query in one mode; :meth:`fetch` returns up to ``n`` records
    from the current result, starting a new query when there is none."""

    def __init__(
        self,
        session: ReadSession,
        mode: str,
        table: TableId | None,
        query: str | None,
        topic_prefix: str,
        timestamp_columns: list[str],
        incrementing_column: str | None,
        offset: dict[str, Any] | None,
        timestamp_delay_ms: int,
        numeric_mapping: str,
        suffix: str = "",
        quote_identifiers: bool = True,
        key_range: KeyRange | None = None,
    ) -> None:
        self.session = session
        self.key_range = key_range
        self.mode = mode
        self.table = table
        self.query = query
        self.timestamp_columns = (
            [c for c in timestamp_columns if c] if mode in ("timestamp", "timestamp+incrementing") else []
        )
        self.incrementing_column = incrementing_column if mode in ("incrementing", "timestamp+incrementing") else None
        self.timestamp_delay_ms = timestamp_delay_ms
        self.numeric_mapping = numeric_mapping
        self.suffix = suffix
        self.quote_identifiers = quote_identifiers
        if table is not None:
            self.topic = topic_prefix + table.table
            self.partition = table_partition_v0(table) if mode == "bulk" else table_partition(table)
            self.schema_name: str | None = table.table
        else:
            self.topic = topic_prefix
            self.partition = query_partition()
            self.schema_name = None
        self.offset = Offset.from_map(offset)
        self.committed = self.offset
        # When the last query finished (monotonic seconds). Never: due at once, however young
        # the monotonic clock is (it starts near 0 at boot, younger than poll.interval.ms).
        self.last_update = -math.inf
        self.retries = 0
        self._cursor: Any = None
        self._mapper: RowMapper | None = None
        self._rows: deque[Any] = deque()
        self._exhausted = False
        self._pending: tuple[list[Any], int | None] | None = None  # timestamp mode look-ahead
        self._fields: list[Any] = []
        self._ts_index: list[int] = []
        self._inc_index: int | None = None
        self._sql: str | None = None

    def __repr__(self) -> str:
        what = f"table={self.table}" if self.table is not None else "query"
        return f"Querier({what}, mode={self.mode})"

    @property
    def name(self) -> str:
        return self.table.fqn if self.table is not None else "query"

    @property
    def querying(self) -> bool:
        return self._cursor is not None

    # -- statements ----------------------------------------------------------------------

    def _base(self, with_params: bool) -> str:
        s = self.session
        if self.table is not None:
            return "SELECT * FROM " + self.table.quoted(s.quote)
        return s.literal_text(self.query or "", with_params)

    def statement(self) -> tuple[str, list[Any]]:
        """The SQL and parameters of the next query (Confluent's criteria)."""
        s = self.session
        mark = s.placeholder
        inc = s.quote(self.incrementing_column) if self.incrementing_column else None
        params: list[Any] = []
        with_params = bool(self.timestamp_columns or inc)
        sql = self._base(with_params)
        if self.timestamp_columns:
            ts = s.timestamp_expression(self.timestamp_columns)
            end = s.timestamp_param(s.now_nanos() - self.timestamp_delay_ms * 1_000_000)
            begin = s.timestamp_param(self.offset.begin_nanos)
            if inc is not None:
                sql += (
                    f" WHERE {ts} < {mark} AND (({ts} = {mark} AND {inc} > {mark}) OR {ts} > {mark})"
                    f" ORDER BY {ts},{inc} ASC"
                )
                params = [end, begin, self.offset.last_incrementing, begin]
            else:
                sql += f" WHERE {ts} > {mark} AND {ts} < {mark} ORDER BY {ts} ASC"
                params = [begin, end]
        elif inc is not None:
            sql += f" WHERE {inc} > {mark} ORDER BY {inc} ASC"
            params = [self.offset.last_incrementing]
        elif self.key_range is not None:
            key = s.quote(self.key_range.column)
            bounds = [(f"{key} >= {mark}", self.key_range.low), (f"{key} < {mark}", self.key_range.high)]
            bounds = [(text, value) for text, value in bounds if value is not None]
            if bounds:
                sql += " WHERE " + " AND ".join(text for text, _ in bounds)
                params = [value for _, value in bounds]
        if self.suffix:
            sql += " " + s.literal_text(self.suffix, with_params)
        return sql, params

    # -- reading --------------------------------------------------------------------------

    def start(self, fetch_size: int) -> None:
        """Run the next query."""
        sql, params = self.statement()
        if sql != self._sql:
            log.info("Begin using SQL query: %s", sql if self.table is not None else "<query>")
            self._sql = sql
        self.committed = self.offset
        self._cursor = self.session.open_cursor(sql, params, fetch_size)
        self._rows.clear()
        self._exhausted = False
        self._pending = None
        specs = self.session.describe(self._cursor, self.table, self.query)
        self._mapper = RowMapper(self.schema_name, specs, self.numeric_mapping, self.session.zone, self.session.kind)
        self._resolve_offset_columns(self._mapper)

    def _resolve_offset_columns(self, mapper: RowMapper) -> None:
        self._fields = mapper.fields
        names = ",".join(f.name for f in mapper.fields)
        self._ts_index = []
        for column in self.timestamp_columns:
            index = mapper.field_index(column)
            if index is None:
                raise DataError(f"Timestamp column {column} not found in {names}")
            self._ts_index.append(index)
        self._inc_index = None
        if self.incrementing_column:
            index = mapper.field_index(self.incrementing_column)
            if index is None:
                raise DataError(f"Incrementing column {self.incrementing_column} not found in {names}")
            self._inc_index = index

    def _next_row(self, fetch_size: int) -> Any:
        if not self._rows:
            if self._exhausted:
                return None
            batch = self._cursor.fetchmany(fetch_size)
            if not batch:
                self._exhausted = True
                return None
            self._rows.extend(batch)
        return self._rows.popleft()

    def fetch(self, n: int, fetch_size: int) -> tuple[list[SourceRecord], bool]:
        """Up to ``n`` records; the flag says whether the result is exhausted (the query is
        then over: call :meth:`finish`)."""
        if self._cursor is None:
            self.start(fetch_size)
        mapper = self._mapper
        assert mapper is not None
        records: list[SourceRecord] = []
        schema, topic, partition = mapper.schema, self.topic, self.partition
        values_of, struct_of = mapper.values, mapper.struct_of_values
        if self.mode == "bulk":
            while len(records) < n:
                row = self._next_row(fetch_size)
                if row is None:
                    break
                records.append(
                    SourceRecord(partition, None, topic, None, None, None, schema, struct_of(values_of(row)))
                )
        elif self.mode == "timestamp":
            while len(records) < n:
                if self._pending is None:
                    row = self._next_row(fetch_size)
                    if row is None:
                        break
                    values = values_of(row)
                    self._pending = (values, self._timestamp(values))
                current_values, current_ts = self._pending
                row = self._next_row(fetch_size)
                if row is not None:
                    values = values_of(row)
                    self._pending = (values, self._timestamp(values))
                else:
                    self._pending = None
                if (
                    self._pending is None
                    or current_ts is None
                    or self._pending[1] is None
                    or current_ts < self._pending[1]
                ):
                    # every row with this timestamp is read: the offset may move on
                    self.offset = Offset(current_ts, None)
                records.append(
                    SourceRecord(
                        partition, self.offset.to_map(), topic, None, None, None, schema, struct_of(current_values)
                    )
                )
        else:
            while len(records) < n:
                row = self._next_row(fetch_size)
                if row is None:
                    break
                values = values_of(row)
                self.offset = Offset(self._timestamp(values), self._incrementing_value(values))
                records.append(
                    SourceRecord(partition, self.offset.to_map(), topic, None, None, None, schema, struct_of(values))
                )
        exhausted = self._exhausted and not self._rows and self._pending is None
        return records, exhausted

    def _timestamp(self, values: list[Any]) -> int | None:
        """The row's timestamp (its first non-null timestamp column) in nanoseconds."""
        for index in self._ts_index:
            value = values[index]
            if value is not None:
                if isinstance(value, (dt.datetime, dt.date)):
                    return datetime_to_nanos(value)
                name = self._fields[index].name
                raise DataError(f"Timestamp column {name} holds {value!r}, not a timestamp")
        return None

    def _incrementing_value(self, values: list[Any]) -> int | None:
        if self._inc_index is None:
            return None
        value = values[self._inc_index]
        f = self._fields[self._inc_index]
        if value is None:
            raise ConnectError(f"Null value for incrementing column of type: {f.schema.type.name}")
        if isinstance(value, bool) or not isinstance(value, (int, decimal.Decimal)):
            raise ConnectError(f"Invalid type for incrementing column: {f.schema.type.name}")
        if isinstance(value, decimal.Decimal):
            if value > _LONG_MAX:
                raise ConnectError("Decimal value for incrementing column exceeded Long.MAX_VALUE")
            if value != value.to_integral_value():
                raise ConnectError("Scale of Decimal value for incrementing column must be 0")
            return int(value)
        return value

    def finish(self, now: float, reset_offset: bool = False) -> None:
        """End the current query (close its cursor, commit the read transaction) and wait
        for the next poll interval. ``reset_offset`` goes back to the offset the query
        started from (the records read since were not handed over)."""
        cursor, self._cursor = self._cursor, None
        self._rows.clear()
        self._pending = None
        self._mapper = None
        if cursor is not None:
            try:
                cursor.close()
            except Exception:  # the connection may be gone
                log.debug("Error closing cursor", exc_info=True)
        self.session.end_transaction()
        if reset_offset:
            self.offset = self.committed
        self.last_update = now
