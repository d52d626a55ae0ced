"""How the JDBC sink turns records into rows: per (table, key schema, value schema) a
:class:`RowPlan` (the key and value columns, the table created or amended to hold them)
with a function that takes a record's values, applies defaults, checks required fields
and converts each value for the driver. :meth:`RowPlanner.prepare` gives each record's
entry ``(table, op, key, row, plan, record)``, ``op`` being :data:`WRITE` or
:data:`DELETE` (a tombstone, with ``delete.enabled``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from operator import itemgetter
from typing import Any, NamedTuple

from sluice.api import DataError, Schema, SinkRecord, Struct, Type
from sluice.api.data import Date, Decimal, Time, Timestamp
from sluice.connectors.jdbc.dialect import Dialect
from sluice.connectors.jdbc.sink_config import DEFAULT_KAFKA_PK_NAMES, SinkSettings
from sluice.connectors.jdbc.sink_tables import SinkTables, TableAlterOrCreateError, match_columns

__all__ = ["DELETE", "WRITE", "BatchRow", "RecordView", "RowPlan", "RowPlanner", "record_position"]

WRITE = 0
DELETE = 1


class BatchRow(NamedTuple):
    """Record ``row`` of a :class:`~sluice.api.records.SinkBatch`, read from its columns
    (``zip`` of them makes these without a :class:`SinkRecord` each)."""

    row: int
    topic: str
    kafka_partition: int | None
    kafka_offset: int
    timestamp: int | None
    key_schema: Schema | None
    key: Any
    value_schema: Schema | None
    value: Any


RecordView = SinkRecord | BatchRow
"""What the row planner reads a record as: the eight attributes both have."""


class RowPlan:
    """How records of one (table, key schema, value schema) become rows."""

    __slots__ = ("table", "key_cols", "value_cols", "extract")

    def __init__(
        self,
        table: str,
        key_cols: list[str],
        value_cols: list[str],
        extract: Callable[[RecordView], tuple[tuple, tuple]],
    ) -> None:
        self.table = table
        self.key_cols = key_cols
        self.value_cols = value_cols
        self.extract = extract


def record_position(record: RecordView) -> str:
    """Where a record comes from, for error messages."""
    return (
        f"(topic='{record.topic}',partition={record.kafka_partition},"
        f"offset={record.kafka_offset},timestamp={record.timestamp})"
    )


class RowPlanner:
    """Prepares the records of one task, keeping a plan per table and schemas."""

    def __init__(self, settings: SinkSettings, dialect: Dialect, tables: SinkTables) -> None:
        self.settings = settings
        self.dialect = dialect
        self.tables = tables
        self._plans: dict[tuple, RowPlan] = {}
        self._last: tuple | None = None  # (value schema, key schema, table, plan) of the last record
        self._table_for_topic: dict[str, str] = {}

    def prepare(self, record: RecordView) -> tuple[Any, ...] | None:
        """The record's entry; None for a tombstone of a table that does not exist. Raises
        :class:`DataError` or :class:`TableAlterOrCreateError` for a record that cannot be
        written."""
        s = self.settings
        table = self._table_name(record.topic)
        value = record.value
        if value is None:
            if not s.delete_enabled:
                raise DataError(
                    f"Sink connector '{s.connector_name}' is configured with 'delete.enabled=false' and "
                    f"'pk.mode={s.pk_mode}' and therefore requires records with a non-null Struct value and "
                    f"non-null Struct schema, but found record at {record_position(record)} with a null value."
                )
            return self._prepare_delete(table, record)
        schema = record.value_schema
        if schema is None:
            raise DataError(
                f"The JDBC sink needs records with a value schema, but the record at {record_position(record)} "
                "has none (schemaless data). Use a converter that gives schemas (JsonConverter with "
                "schemas.enable=true, AvroConverter, ...)."
            )
        if schema.type is not Type.STRUCT or not isinstance(value, Struct):
            raise DataError(
                f"The JDBC sink needs Struct record values, but the record at {record_position(record)} has a "
                f"{schema.type.name} value schema."
            )
        key_schema = record.key_schema if s.pk_mode == "record_key" else None
        last = self._last
        if last is not None and last[0] is value.schema and last[1] is key_schema and last[2] == table:
            plan = last[3]  # the common case: the same schemas as the record before
        else:
            plan_key = (table, key_schema, value.schema)
            plan = self._plans.get(plan_key)
            if plan is None:
                plan = self._make_plan(table, record, key_schema, value.schema)
                self._plans[plan_key] = plan
            self._last = (value.schema, key_schema, table, plan)
        key, row = plan.extract(record)
        return (table, WRITE, key, row, plan, record)

    def _table_name(self, topic: str) -> str:
        name = self._table_for_topic.get(topic)
        if name is None:
            name = self.settings.table_name_format.replace("${topic}", topic)
            self._table_for_topic[topic] = name
        return name

    # -- plans ---------------------------------------------------------------------------

    def _key_fields(
        self, table: str, record: RecordView, key_schema: Schema | None, value_schema: Schema | None
    ) -> list[tuple[str, Schema]]:
        s = self.settings
        mode = s.pk_mode
        if mode == "none":
            return []
        if mode == "kafka":
            names = s.pk_fields or list(DEFAULT_KAFKA_PK_NAMES)
            return [(names[0], Schema.STRING_SCHEMA), (names[1], Schema.INT32_SCHEMA), (names[2], Schema.INT64_SCHEMA)]
        if mode == "record_key":
            if key_schema is None or record.key is None:
                raise DataError(
                    f"Sink connector '{s.connector_name}' is configured with "
                    f"'delete.enabled={str(s.delete_enabled).lower()}' "
                    f"and 'pk.mode=record_key' and therefore requires records with a non-null key and non-null "
                    f"Struct or primitive key schema, but found record at {record_position(record)} with a "
                    f"{'null' if record.key is None else type(record.key).__name__} key and "
                    f"{'null' if key_schema is None else key_schema.type.name} key schema."
                )
            if key_schema.type.is_primitive:
                if len(s.pk_fields) != 1:
                    raise DataError(
                        "Need exactly one PK column defined since the key schema for records is a primitive "
                        f"type, defined columns are: {s.pk_fields}"
                    )
                return [(s.pk_fields[0], key_schema)]
            if key_schema.type is Type.STRUCT:
                names = s.pk_fields or [f.name for f in key_schema.fields()]
                out = []
                for name in names:
                    f = key_schema.field(name)
                    if f is None:
                        raise DataError(
                            f"PK mode for table '{table}' is record_key with configured PK fields {s.pk_fields}, "
                            f"but record key schema does not contain field: {name}"
                        )
                    out.append((name, f.schema))
                return out
            raise DataError(f"Key schema must be primitive type or Struct, but is of type: {key_schema.type.name}")
        # record_value
        assert value_schema is not None
        names = s.pk_fields or [f.name for f in value_schema.fields()]
        out = []
        for name in names:
            f = value_schema.field(name)
            if f is None:
                raise DataError(
                    f"PK mode for table '{table}' is record_value with configured PK fields {s.pk_fields}, "
                    f"but record value schema does not contain field: {name}"
                )
            out.append((name, f.schema))
        return out

    def _make_plan(self, table: str, record: RecordView, key_schema: Schema | None, value_schema: Schema) -> RowPlan:
        s = self.settings
        dialect = self.dialect
        key_fields = self._key_fields(table, record, key_schema, value_schema)
        key_names = [n for n, _ in key_fields]
        key_set = set(key_names)
        value_fields = [
            f
            for f in value_schema.fields()
            if f.name not in key_set and (not s.fields_whitelist or f.name in s.fields_whitelist)
        ]
        all_fields: dict[str, Schema] = dict(key_fields)
        for f in value_fields:
            all_fields[f.name] = f.schema
        if not all_fields:
            raise DataError(f"No fields found using key and value schemas for table: {table}")
        # Column order of a created table, as Confluent: the Kafka coordinates, the value's
        # fields in schema order, then any other (key) fields by name.
        ordered: list[str] = [n for n in DEFAULT_KAFKA_PK_NAMES if n in all_fields]
        ordered += [f.name for f in value_schema.fields() if f.name in all_fields and f.name not in ordered]
        ordered += sorted(n for n in all_fields if n not in ordered)
        for name in ordered:
            try:
                dialect.sql_type(all_fields[name], key=name in key_set)
            except DataError as e:
                raise DataError(
                    f"Cannot write field '{name}' of the record at {record_position(record)}: {e}"
                ) from None
        fields = [(n, all_fields[n]) for n in ordered]
        columns = self.tables.ensure(table, fields, key_names)
        key_cols = [columns[n] for n in key_names]
        value_cols = [columns[f.name] for f in value_fields]
        extract = self._extractor(key_schema, key_fields, value_fields, value_schema)
        return RowPlan(table, key_cols, value_cols, extract)

    def _converter(self, schema: Schema) -> Callable[[Any], Any] | None:
        """A function turning a Connect value into what the driver takes; None: as it is."""
        dialect, s = self.dialect, self.settings
        tz = s.tz
        to_db = dialect.to_db_value
        kind = dialect.kind
        name = schema.name
        if name == Timestamp.LOGICAL_NAME:
            if kind != "sqlite" and tz is dt.UTC:
                utc = dt.UTC

                def timestamp_utc(v: Any) -> Any:
                    zone = v.tzinfo
                    if zone is None:
                        return v
                    if zone is not utc:  # converters give UTC: no conversion needed then
                        v = v.astimezone(utc)
                    return v.replace(tzinfo=None)

                return timestamp_utc
            return lambda v: to_db(schema, v, tz)
        if name in (Date.LOGICAL_NAME, Time.LOGICAL_NAME):
            return lambda v: to_db(schema, v, tz)
        if name == Decimal.LOGICAL_NAME:
            return (lambda v: to_db(schema, v, tz)) if kind == "sqlite" else None
        t = schema.type
        if t is Type.BYTES:
            return lambda v: v if type(v) is bytes else bytes(v)
        if t is Type.ARRAY:
            return lambda v: to_db(schema, v, tz)
        if t in (Type.FLOAT32, Type.FLOAT64) and kind != "postgresql":
            return lambda v: to_db(schema, v, tz)
        if t is Type.STRING and kind == "postgresql":

            def no_nul(v: str) -> str:
                if "\x00" in v:
                    raise DataError("PostgreSQL text cannot contain NUL (0x00) characters")
                return v

            return no_nul
        return None

    def _extractor(
        self,
        key_schema: Schema | None,
        key_fields: list[tuple[str, Schema]],
        value_fields: list[Any],
        value_schema: Schema,
    ) -> Callable[[RecordView], tuple[tuple, tuple]]:
        """The function turning a record into ``(key values, row)``; the row holds the key
        columns then the value columns, converted for the driver and checked."""
        s = self.settings
        mode = s.pk_mode
        where = record_position
        value_schemas = [f.schema for f in value_fields]
        schemas = [sch for _, sch in key_fields] + value_schemas
        names = [n for n, _ in key_fields] + [f.name for f in value_fields]
        n_keys = len(key_fields)
        defaults = [
            (i, sch.default_value)
            for i, sch in enumerate(schemas)
            if sch.default_value is not None and (s.replace_null_with_default or i < n_keys)
        ]
        required = [i for i, sch in enumerate(schemas) if not sch.optional or i < n_keys]
        converters = [(i, c) for i, sch in enumerate(schemas) if (c := self._converter(sch)) is not None]

        def take(positions: list[int]) -> Callable[[Any], tuple]:
            if not positions:
                return lambda values: ()
            if len(positions) == 1:
                p = positions[0]
                return lambda values: (values[p],)
            return itemgetter(*positions)

        take_values = take([f.index for f in value_fields])
        take_key = take([])
        key_is_struct = False
        if mode == "record_value":
            take_key = take([value_schema.field(n).index for n, _ in key_fields])  # type: ignore[union-attr]
        elif mode == "record_key":
            assert key_schema is not None
            key_is_struct = key_schema.type is Type.STRUCT
            if key_is_struct:
                take_key = take([key_schema.field(n).index for n, _ in key_fields])  # type: ignore[union-attr]

        def struct_values(struct: Struct) -> Any:
            if type(struct) is Struct:
                return struct.field_values()
            return [struct.get_without_default(f.name) for f in struct.schema.fields()]

        def key_of(record: RecordView, values: Any) -> tuple:
            if mode == "kafka":
                return (record.topic, record.kafka_partition, record.kafka_offset)
            if mode == "record_value":
                return take_key(values)
            if mode == "none":
                return ()
            key = record.key
            if key is None:
                raise DataError(f"The record at {where(record)} has a null key, which pk.mode record_key needs")
            if key_is_struct:
                if not isinstance(key, Struct) or key.schema != key_schema:
                    raise DataError(f"The key of the record at {where(record)} does not match its key schema")
                return take_key(struct_values(key))
            return (key,)

        # "x is None" tests compiled for the positions that matter: faster than "None in
        # row", which compares every value with None (about 1 µs for a decimal.Decimal).
        def any_none(positions: list[int]) -> Callable[[Any], bool]:
            if not positions:
                return lambda row: False
            body = " or ".join(f"row[{int(i)}] is None" for i in positions)
            return eval(f"lambda row: {body}")  # built from integers only

        null_default = any_none([i for i, _ in defaults])
        null_required = any_none(required)

        def with_defaults(row: Any) -> list[Any]:
            row = list(row)
            for i, default in defaults:
                if row[i] is None:
                    row[i] = default
            return row

        def null_error(record: RecordView, row: Any) -> DataError:
            i = next(i for i in required if row[i] is None)
            return DataError(
                f'Invalid value: null used for required field: "{names[i]}", schema type: '
                f"{schemas[i].type.name} (record at {where(record)})"
            )

        def extract(record: RecordView) -> tuple[tuple, tuple]:
            values = struct_values(record.value)
            row: Any = key_of(record, values) + take_values(values)
            if null_default(row):
                row = with_defaults(row)
            if null_required(row):
                raise null_error(record, row)
            if converters:
                row = list(row)
                for i, conv in converters:
                    v = row[i]
                    if v is not None:
                        try:
                            row[i] = conv(v)
                        except DataError as e:
                            raise DataError(
                                f'Cannot write field "{names[i]}" of the record at {where(record)}: {e}'
                            ) from None
                        except (TypeError, ValueError, AttributeError, OverflowError) as e:
                            raise DataError(
                                f'Invalid value for field "{names[i]}" of the record at {where(record)}: {e}'
                            ) from None
                row = tuple(row)
            elif type(row) is list:
                row = tuple(row)
            return row[:n_keys], row

        return extract

    def _prepare_delete(self, table: str, record: RecordView) -> tuple | None:
        key_schema = record.key_schema
        plan_key = (table, key_schema, None)
        plan = self._plans.get(plan_key)
        if plan is None:
            key_fields = self._key_fields(table, record, key_schema, None)
            columns = self.tables.columns(table)
            if not columns:
                return None  # no table, so no row to delete
            names = match_columns(columns, [n for n, _ in key_fields])
            missing = [n for n, _ in key_fields if n not in names]
            if missing:
                raise TableAlterOrCreateError(f"Table {table} has no key columns {missing} to delete by")
            key_cols = [names[n] for n, _ in key_fields]
            converters = [self._converter(sch) for _, sch in key_fields]
            struct_key = key_schema is not None and key_schema.type is Type.STRUCT
            field_names = [n for n, _ in key_fields]
            where = record_position

            def extract(rec: RecordView) -> tuple[tuple, tuple]:
                key = rec.key
                if key is None:
                    raise DataError(f"The tombstone at {where(rec)} has a null key: nothing to delete")
                if struct_key:
                    values = [key.get(n) for n in field_names]
                else:
                    values = [key]
                if any(v is None for v in values):
                    raise DataError(f"The tombstone at {where(rec)} has a null key field")
                out = tuple(c(v) if c is not None else v for c, v in zip(converters, values, strict=False))
                return out, out

            plan = RowPlan(table, key_cols, [], extract)
            self._plans[plan_key] = plan
        key, _ = plan.extract(record)
        return (table, DELETE, key, None, plan, record)
