"""Connect schemas and values from query results, as Confluent's JDBC source builds them.

Each result column is first described in JDBC terms (:class:`ColumnSpec`: a
``java.sql.Types`` name, nullability, signedness, precision and scale) from what the
Python driver reports about the result — psycopg's result metadata (type OIDs, type
modifiers, and the source table column for nullability), PyMySQL's field packets, and
for SQLite the declared column types — and then mapped the way Confluent's
``GenericDatabaseDialect`` maps JDBC types:

=====================  ===========================================================
BOOLEAN                BOOLEAN (PostgreSQL ``bit(1)`` too)
BIT                    INT8 (MySQL/MariaDB ``TINYINT(1)``/``BOOLEAN``, ``BIT(1)``);
                       PostgreSQL ``bit(2..8)`` INT8, longer BYTES
TINYINT/SMALLINT/...   INT8/INT16/INT32/INT64 (unsigned: the next wider type)
REAL / FLOAT, DOUBLE   FLOAT32 / FLOAT64
NUMERIC                ``numeric.mapping``: none → Decimal; precision_only → INT8..64
                       for scale 0 and precision ≤ 18; best_fit → also FLOAT64 for
                       scale > 0 and precision ≤ 18; best_fit_eager_double → FLOAT64
                       for any scale > 0
DECIMAL                Decimal (MySQL's DECIMAL is reported as DECIMAL, so
                       ``numeric.mapping`` does not apply to it, as with Confluent)
CHAR, VARCHAR, ...     STRING (also PostgreSQL json/jsonb/uuid/xml/enums, MySQL JSON,
                       ENUM, SET)
BINARY, BLOB, ...      BYTES
DATE / TIME            Date / Time logical types
TIMESTAMP              Timestamp; values without a zone are read in ``db.timezone``
=====================  ===========================================================

Columns of other types (arrays, intervals, geometry, ...) are left out of the schema.
Decimals carry the ``scale`` and ``connect.decimal.precision`` parameters; a NUMERIC
without declared precision gets scale 127. A column is optional unless the database
says it is NOT NULL.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sluice.api.data import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp
from sluice.api.errors import DataError

__all__ = ["ColumnSpec", "RowMapper", "describe_mysql", "describe_postgres", "describe_sqlite", "sqlite_spec"]

_UTC = dt.UTC
MAX_INTEGER_TYPE_PRECISION = 18
NUMERIC_TYPE_SCALE_HIGH = 127
PRECISION_PARAMETER = "connect.decimal.precision"


@dataclass
class ColumnSpec:
    """One result column in JDBC terms."""

    name: str
    jdbc_type: str | None  # a java.sql.Types name; None: not supported (left out)
    optional: bool = True
    signed: bool = True
    precision: int = 0
    scale: int | None = None  # None: no scale declared
    type_name: str = ""
    hints: dict[str, Any] = field(default_factory=dict)


Converter = Callable[[Any], Any]


# -- the mapping ---------------------------------------------------------------------------


def _integer_schema(precision: int) -> Schema:
    if precision > 9:
        return Schema.INT64_SCHEMA
    if precision > 4:
        return Schema.INT32_SCHEMA
    if precision > 2:
        return Schema.INT16_SCHEMA
    return Schema.INT8_SCHEMA


def _optional(schema: Schema, optional: bool) -> Schema:
    if not optional or schema.optional:
        return schema
    return Schema(schema.type, optional=True, name=schema.name, version=schema.version, parameters=schema.parameters)


def _decimal_schema(spec: ColumnSpec) -> tuple[Schema, int]:
    scale = spec.scale
    if scale is None or (spec.precision == 0 and scale == 0):
        scale = NUMERIC_TYPE_SCALE_HIGH
    builder = Decimal.builder(scale).parameter(PRECISION_PARAMETER, str(spec.precision))
    if spec.optional:
        builder.optional()
    return builder.build(), scale


def field_schema(spec: ColumnSpec, numeric_mapping: str) -> tuple[Schema, str] | None:
    """The Connect schema of a column and the value kind its converter produces, or None
    for a column that is left out."""
    t = spec.jdbc_type
    opt = spec.optional
    if t is None or t == "NULL":
        return None
    if t == "BOOLEAN":
        return _optional(Schema.BOOLEAN_SCHEMA, opt), "bool"
    if t == "BIT":
        return _optional(Schema.INT8_SCHEMA, opt), "int8"
    if t == "TINYINT":
        return (
            (_optional(Schema.INT8_SCHEMA, opt), "int") if spec.signed else (_optional(Schema.INT16_SCHEMA, opt), "int")
        )
    if t == "SMALLINT":
        return (
            (_optional(Schema.INT16_SCHEMA, opt), "int")
            if spec.signed
            else (_optional(Schema.INT32_SCHEMA, opt), "int")
        )
    if t == "INTEGER":
        return (
            (_optional(Schema.INT32_SCHEMA, opt), "int")
            if spec.signed
            else (_optional(Schema.INT64_SCHEMA, opt), "int")
        )
    if t == "BIGINT":
        return _optional(Schema.INT64_SCHEMA, opt), "int64"
    if t == "REAL":
        return _optional(Schema.FLOAT32_SCHEMA, opt), "float"
    if t in ("FLOAT", "DOUBLE"):
        return _optional(Schema.FLOAT64_SCHEMA, opt), "float"
    if t == "NUMERIC":
        precision, scale = spec.precision, spec.scale
        # A NUMERIC without declared precision (PostgreSQL's unbounded numeric) stays a
        # Decimal in every mapping: its values need not be integers.
        if precision > 0 and scale is not None:
            if numeric_mapping == "precision_only":
                if scale == 0 and precision <= MAX_INTEGER_TYPE_PRECISION:
                    return _optional(_integer_schema(precision), opt), "numeric_int"
            elif numeric_mapping == "best_fit":
                if precision <= MAX_INTEGER_TYPE_PRECISION:
                    if -84 <= scale < 1:
                        return _optional(_integer_schema(precision), opt), "numeric_int"
                    if scale > 0:
                        return _optional(Schema.FLOAT64_SCHEMA, opt), "numeric_float"
            elif numeric_mapping == "best_fit_eager_double":
                if -84 <= scale < 1:
                    if precision <= MAX_INTEGER_TYPE_PRECISION:
                        return _optional(_integer_schema(precision), opt), "numeric_int"
                elif scale > 0:
                    return _optional(Schema.FLOAT64_SCHEMA, opt), "numeric_float"
        schema, _scale = _decimal_schema(spec)
        return schema, "decimal"
    if t == "DECIMAL":
        schema, _scale = _decimal_schema(spec)
        return schema, "decimal"
    if t in (
        "CHAR",
        "VARCHAR",
        "LONGVARCHAR",
        "NCHAR",
        "NVARCHAR",
        "LONGNVARCHAR",
        "CLOB",
        "NCLOB",
        "SQLXML",
        "STRING",
    ):
        return _optional(Schema.STRING_SCHEMA, opt), "string"
    if t in ("BINARY", "VARBINARY", "LONGVARBINARY", "BLOB"):
        return _optional(Schema.BYTES_SCHEMA, opt), "bytes"
    if t == "DATE":
        b = Date.builder()
        return (b.optional() if opt else b).build(), "date"
    if t == "TIME":
        b = Time.builder()
        return (b.optional() if opt else b).build(), "time"
    if t == "TIMESTAMP":
        b = Timestamp.builder()
        return (b.optional() if opt else b).build(), "timestamp"
    return None


# -- value converters -----------------------------------------------------------------------

_DECIMAL_CONTEXT = decimal.Context(prec=1000, rounding=decimal.ROUND_HALF_UP)
_EPOCH_DATE = dt.date(1970, 1, 1)
_INT_RANGES = {
    Schema.INT8_SCHEMA.type: (-(2**7), 2**7 - 1),
    Schema.INT16_SCHEMA.type: (-(2**15), 2**15 - 1),
    Schema.INT32_SCHEMA.type: (-(2**31), 2**31 - 1),
    Schema.INT64_SCHEMA.type: (-(2**63), 2**63 - 1),
}


def _as_int(name: str, value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise DataError(f"Column {name}: {value} is not an integer")
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            try:
                return _as_int(name, decimal.Decimal(value.strip()))
            except decimal.InvalidOperation:
                pass
    if isinstance(value, (bytes, bytearray, memoryview)):
        return int.from_bytes(bytes(value), "big")
    raise DataError(f"Column {name}: cannot read {value!r} as an integer")


def _ranged(name: str, schema: Schema, convert: Converter | None) -> Converter:
    lo, hi = _INT_RANGES[schema.type]

    def check(value: Any) -> Any:
        if value is None:
            return None
        v = convert(value) if convert is not None else value
        if not lo <= v <= hi:
            raise DataError(f"Column {name}: {v} does not fit in {schema.type.name}")
        return v

    return check


def _parse_datetime(name: str, value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if isinstance(value, (int, float)):  # SQLite: seconds since the epoch
        return dt.datetime(1970, 1, 1) + dt.timedelta(seconds=value)
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        try:
            return dt.datetime.fromisoformat(text)
        except ValueError:
            pass
    raise DataError(f"Column {name}: cannot read {value!r} as a timestamp")


def _parse_date(name: str, value: Any) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip()[:10])
        except ValueError:
            pass
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 9999:  # MySQL YEAR
        return dt.date(value, 1, 1)
    raise DataError(f"Column {name}: cannot read {value!r} as a date")


def _parse_time(name: str, value: Any) -> dt.time:
    if isinstance(value, dt.time):
        offset = value.utcoffset() if value.tzinfo is not None else None
        if offset is not None:
            # a time with a zone (PostgreSQL timetz): the UTC time of day
            full = dt.datetime.combine(_EPOCH_DATE, value.replace(tzinfo=None)) - offset
            return full.time()
        return value
    if isinstance(value, dt.timedelta):  # MySQL TIME
        if dt.timedelta(0) <= value < dt.timedelta(days=1):
            return (dt.datetime.min + value).time()
        raise DataError(f"Column {name}: the time {value} is outside of a day")
    if isinstance(value, dt.datetime):
        return value.time()
    if isinstance(value, str):
        try:
            return dt.time.fromisoformat(value.strip())
        except ValueError:
            pass
    raise DataError(f"Column {name}: cannot read {value!r} as a time of day")


def _int_converter(spec: ColumnSpec, schema: Schema, kind: str, driver: str) -> Converter | None:
    name = spec.name
    if spec.hints.get("bit_string"):  # PostgreSQL bit(2..8): the bits as a signed byte

        def from_bits(v: Any) -> int:
            n = int(str(v), 2)
            return n - 256 if n > 127 else n

        return from_bits
    if spec.hints.get("bits") is not None:  # MySQL BIT(1) (bytes)
        return lambda v: int.from_bytes(bytes(v), "big") if isinstance(v, (bytes, bytearray)) else int(v)
    if driver == "sqlite":
        return _ranged(name, schema, lambda v: _as_int(name, v))
    if kind == "numeric_int":
        return lambda v: int(v)
    if kind == "int64" and not spec.signed:
        return _ranged(name, schema, None)  # BIGINT UNSIGNED beyond 2**63-1
    return None


_TRUE_TEXT = {"1", "true", "t", "yes", "y", "on"}


def _as_bool(v: Any) -> bool:
    if isinstance(v, str):
        return v.strip().lower() in _TRUE_TEXT
    return bool(v)


def _zero_date(v: Any) -> bool:
    """MySQL's zero date (``0000-00-00``), which PyMySQL hands over as text."""
    return isinstance(v, str) and v.startswith("0000-00-00")


def _converter(spec: ColumnSpec, schema: Schema, kind: str, zone: dt.tzinfo, driver: str) -> Converter | None:
    """A function from the driver's value (never None) to the Connect value, or None when
    the driver's value is already right."""
    name = spec.name
    if kind in ("int", "int64", "int8", "numeric_int"):
        return _int_converter(spec, schema, kind, driver)
    if kind == "float":
        return (lambda v: float(v)) if driver == "sqlite" else None
    if kind == "numeric_float":
        return lambda v: float(v)
    if kind == "bool":
        if spec.hints.get("bit_string"):
            return lambda v: str(v) == "1"
        return None if driver == "postgresql" else _as_bool
    if kind == "decimal":
        scale = Decimal.scale(schema)
        quantum = decimal.Decimal(1).scaleb(-scale)

        def to_decimal(v: Any) -> decimal.Decimal:
            if not isinstance(v, decimal.Decimal):
                try:
                    if isinstance(v, float):
                        v = decimal.Decimal(repr(v))
                    elif isinstance(v, (bytes, bytearray)):
                        v = decimal.Decimal(bytes(v).decode().strip())
                    elif isinstance(v, str):
                        v = decimal.Decimal(v.strip())
                    else:
                        v = decimal.Decimal(v)
                except (decimal.InvalidOperation, TypeError, ValueError):
                    raise DataError(f"Column {name}: cannot read {v!r} as a decimal") from None
            if not v.is_finite():
                raise DataError(f"Column {name}: {v} cannot be a Connect Decimal")
            return v.quantize(quantum, context=_DECIMAL_CONTEXT)

        return to_decimal
    if kind == "string":
        if spec.hints.get("text") and driver != "sqlite":
            return None
        return lambda v: (
            v
            if isinstance(v, str)
            else (bytes(v).decode("utf-8", "replace") if isinstance(v, (bytes, bytearray, memoryview)) else str(v))
        )
    if kind == "bytes":
        if spec.hints.get("bit_string"):
            return lambda v: str(v).encode("ascii")
        return lambda v: v if isinstance(v, bytes) else (v.encode("utf-8") if isinstance(v, str) else bytes(v))
    if kind == "date":
        if driver == "postgresql":
            return None
        return lambda v: None if _zero_date(v) else _parse_date(name, v)
    if kind == "time":
        if driver == "postgresql" and not spec.hints.get("with_zone"):
            return None
        return lambda v: _parse_time(name, v)
    if kind == "timestamp":
        if spec.hints.get("with_zone"):
            return lambda v: v.astimezone(_UTC)
        if driver == "postgresql":
            if zone is _UTC:
                return lambda v: v.replace(tzinfo=_UTC)
            return lambda v: v.replace(tzinfo=zone).astimezone(_UTC)
        return lambda v: None if _zero_date(v) else _in_zone(_parse_datetime(name, v), zone)
    raise DataError(f"Column {name}: no conversion for {kind}")


def _in_zone(v: dt.datetime, zone: dt.tzinfo) -> dt.datetime:
    return v.replace(tzinfo=zone).astimezone(_UTC) if v.tzinfo is None else v.astimezone(_UTC)


class RowMapper:
    """Turns result rows into Connect structs with one schema (built once per query)."""

    def __init__(
        self,
        schema_name: str | None,
        specs: Sequence[ColumnSpec],
        numeric_mapping: str,
        zone: dt.tzinfo,
        driver: str,
    ) -> None:
        builder = SchemaBuilder.struct()
        if schema_name is not None:
            builder.name(schema_name)
        self.indexes: list[int] = []
        self.converters: list[Converter | None] = []
        self.specs = list(specs)
        for i, spec in enumerate(specs):
            mapped = field_schema(spec, numeric_mapping)
            if mapped is None:
                continue
            schema, kind = mapped
            builder.field(spec.name, schema)
            self.indexes.append(i)
            self.converters.append(_converter(spec, schema, kind, zone, driver))
        self.schema = builder.build()
        self.fields = self.schema.fields()
        self._all = len(self.indexes) == len(specs)
        self._plain = self._all and all(c is None for c in self.converters)
        self._steps = list(zip(self.indexes, self.converters, self.fields, strict=False))

    def values(self, row: Sequence[Any]) -> list[Any]:
        """The Connect values of a row, in field order."""
        if self._plain:
            return list(row)
        out = []
        for index, convert, _field in self._steps:
            v = row[index]
            out.append(v if v is None or convert is None else convert(v))
        return out

    def struct(self, row: Sequence[Any]) -> Struct:
        return self.struct_of_values(self.values(row))

    def struct_of_values(self, values: Sequence[Any]) -> Struct:
        struct = Struct(self.schema)
        put = struct.put
        for f, v in zip(self.fields, values, strict=False):
            put(f, v)
        return struct

    def field_index(self, column: str) -> int | None:
        """The position among the struct's fields of a column (exact name first, then the
        only case-insensitive match), or None."""
        names = [f.name for f in self.fields]
        if column in names:
            return names.index(column)
        matches = [i for i, n in enumerate(names) if n.lower() == column.lower()]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise DataError(
                f"Column {column} not found in columns read from database: {','.join(names)}. Could not fall back "
                "to case-insensitively selecting a column because there were multiple columns whose names "
                f"case-insensitively matched the specified name: {','.join(names[i] for i in matches)}."
            )
        return None


# -- describing results: PostgreSQL -----------------------------------------------------------

_PG_TYPES: dict[int, tuple[str, dict[str, Any]]] = {
    16: ("BOOLEAN", {}),
    17: ("BINARY", {}),
    18: ("CHAR", {"text": True}),
    19: ("VARCHAR", {"text": True}),
    20: ("BIGINT", {}),
    21: ("SMALLINT", {}),
    23: ("INTEGER", {}),
    25: ("VARCHAR", {"text": True}),
    26: ("BIGINT", {}),
    114: ("STRING", {"json": True}),
    142: ("SQLXML", {}),
    700: ("REAL", {}),
    701: ("DOUBLE", {}),
    1042: ("CHAR", {"text": True}),
    1043: ("VARCHAR", {"text": True}),
    1082: ("DATE", {}),
    1083: ("TIME", {}),
    1114: ("TIMESTAMP", {}),
    1184: ("TIMESTAMP", {"with_zone": True}),
    1266: ("TIME", {"with_zone": True}),
    1560: ("BIT", {}),
    1700: ("NUMERIC", {}),
    2950: ("STRING", {}),
    3802: ("STRING", {"json": True}),
}


def describe_postgres(cursor: Any, conn: Any, type_cache: dict[int, str | None]) -> list[ColumnSpec]:
    """Column specs of a psycopg cursor's current result. ``type_cache`` remembers what
    user-defined types (enums, ``citext``) map to across queries."""
    result = cursor.pgresult
    description = cursor.description or []
    sources: dict[tuple[int, int], int] = {}
    for i in range(len(description)):
        table, column = result.ftable(i), result.ftablecol(i)
        if table and column > 0:
            sources[(table, column)] = i
    not_null: set[int] = set()
    unknown = {c.type_code for c in description if c.type_code not in _PG_TYPES and c.type_code not in type_cache}
    with conn.cursor() as meta:
        if sources:
            rows = meta.execute(
                "SELECT a.attrelid::bigint, a.attnum::int FROM pg_catalog.pg_attribute a "
                "JOIN unnest(%s::oid[], %s::int2[]) AS s(rel, num) ON a.attrelid = s.rel AND a.attnum = s.num "
                "WHERE a.attnotnull",
                ([t for t, _ in sources], [c for _, c in sources]),
            ).fetchall()
            not_null = {sources[(int(t), int(c))] for t, c in rows if (int(t), int(c)) in sources}
        if unknown:
            rows = meta.execute(
                "SELECT oid::bigint, typtype, typcategory FROM pg_catalog.pg_type WHERE oid = ANY(%s::oid[])",
                (sorted(unknown),),
            ).fetchall()
            for oid, typtype, category in rows:
                type_cache[int(oid)] = "VARCHAR" if typtype == "e" or category == "S" else None
            for oid in unknown:
                type_cache.setdefault(oid, None)
    specs = []
    for i, col in enumerate(description):
        oid = col.type_code
        jdbc: str | None
        if oid in _PG_TYPES:
            jdbc, hints = _PG_TYPES[oid]
            hints = dict(hints)
        else:
            jdbc, hints = type_cache.get(oid), {"text": True}
        spec = ColumnSpec(name=col.name, jdbc_type=jdbc, optional=i not in not_null, hints=hints)
        if jdbc == "NUMERIC":
            spec.precision = col.precision or 0
            spec.scale = col.scale if col.precision else None
        elif jdbc == "BIT":
            bits = result.fmod(i)
            bits = bits if bits and bits > 0 else 1
            spec.precision = bits
            spec.hints["bit_string"] = True
            if bits <= 1:
                spec.jdbc_type = "BOOLEAN"
            elif bits > 8:
                spec.jdbc_type = "VARBINARY"
            else:
                spec.hints["bits"] = bits
        specs.append(spec)
    return specs


# -- describing results: MariaDB/MySQL ------------------------------------------------------

_NOT_NULL_FLAG, _UNSIGNED_FLAG, _BINARY_CHARSET = 1, 32, 63
_MYSQL_TYPES = {
    0: "DECIMAL",
    246: "DECIMAL",
    1: "TINYINT",
    2: "SMALLINT",
    9: "INTEGER",
    3: "INTEGER",
    8: "BIGINT",
    4: "REAL",
    5: "DOUBLE",
    6: "NULL",
    7: "TIMESTAMP",
    12: "TIMESTAMP",
    10: "DATE",
    14: "DATE",
    11: "TIME",
    13: "DATE",
    16: "BIT",
    245: "LONGVARCHAR",
    247: "CHAR",
    248: "CHAR",
}
_MYSQL_TEXT = {
    15: "VARCHAR",
    253: "VARCHAR",
    254: "CHAR",
    249: "LONGVARCHAR",
    250: "LONGVARCHAR",
    251: "LONGVARCHAR",
    252: "LONGVARCHAR",
}


def describe_mysql(cursor: Any) -> list[ColumnSpec]:
    """Column specs of a PyMySQL cursor's current result (its field packets)."""
    # PyMySQL exposes a result's field packets (flags, charset) only on its private
    # ``_result``; ``cursor.description`` lacks the flags JDBC metadata is built from.
    result = getattr(cursor, "_result", None)
    fields = result.fields if result is not None else []
    specs = []
    for f in fields:
        flags = f.flags
        code = f.type_code
        unsigned = bool(flags & _UNSIGNED_FLAG)
        spec = ColumnSpec(name=f.name, jdbc_type=None, optional=not (flags & _NOT_NULL_FLAG), signed=not unsigned)
        if code in _MYSQL_TEXT:
            binary = f.charsetnr == _BINARY_CHARSET
            if binary:
                spec.jdbc_type = "BINARY" if code == 254 else "BLOB" if code >= 249 and code <= 252 else "VARBINARY"
            else:
                spec.jdbc_type = _MYSQL_TEXT[code]
                spec.hints["text"] = True
        elif code in _MYSQL_TYPES:
            spec.jdbc_type = _MYSQL_TYPES[code]
            if code == 1 and f.length == 1:
                spec.jdbc_type = "BIT"  # TINYINT(1): Connector/J's tinyInt1isBit
            elif code == 16:
                if f.length <= 1:
                    spec.hints["bits"] = 1
                else:
                    spec.jdbc_type = "VARBINARY"
            elif code in (0, 246):
                spec.scale = f.scale
                spec.precision = max(1, f.length - (1 if f.scale > 0 else 0) - (0 if unsigned else 1))
            elif code in (245, 247, 248):
                spec.hints["text"] = True
        specs.append(spec)
    return specs


# -- describing results: SQLite ------------------------------------------------------------------


def sqlite_spec(name: str, declared: str, nullable: bool) -> ColumnSpec:
    """A column spec from an SQLite declared type (SQLite has no other type information)."""
    text = (declared or "").strip().upper()
    m = re.search(r"\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)", text)
    precision = int(m.group(1)) if m else 0
    scale = int(m.group(2)) if m and m.group(2) is not None else (0 if m else None)
    base = re.sub(r"\(.*", "", text).strip()
    spec = ColumnSpec(name=name, jdbc_type="VARCHAR", optional=nullable, type_name=base.lower())
    if "BOOL" in base:
        spec.jdbc_type = "BOOLEAN"
    elif base.startswith("TINYINT"):
        spec.jdbc_type = "TINYINT"
    elif base.startswith("SMALLINT"):
        spec.jdbc_type = "SMALLINT"
    elif "INT" in base:
        spec.jdbc_type = "BIGINT"  # SQLite integers are 64-bit
    elif base in ("DATETIME", "TIMESTAMP") or base.startswith("TIMESTAMP"):
        spec.jdbc_type = "TIMESTAMP"
    elif base == "DATE":
        spec.jdbc_type = "DATE"
    elif base.startswith("TIME"):
        spec.jdbc_type = "TIME"
    elif any(k in base for k in ("CHAR", "CLOB", "TEXT")):
        spec.jdbc_type = "VARCHAR"
    elif "BLOB" in base or "BINARY" in base:
        spec.jdbc_type = "BLOB"
    elif any(k in base for k in ("REAL", "FLOA", "DOUB")):
        spec.jdbc_type = "DOUBLE"
    elif "DEC" in base or "NUMERIC" in base:
        spec.jdbc_type = "NUMERIC"
        spec.precision, spec.scale = precision, scale
    elif base == "":
        spec.jdbc_type = "VARCHAR"  # no declared type (an expression): read as text
    else:
        spec.jdbc_type = "NUMERIC"  # SQLite's NUMERIC affinity
        spec.precision, spec.scale = precision, scale
    return spec


def describe_sqlite(conn: Any, names: Sequence[str], table_info: Sequence[tuple[str, str, bool]]) -> list[ColumnSpec]:
    """Column specs for an SQLite result whose columns are ``names``, given
    ``(name, declared type, nullable)`` of the table or view it reads."""
    by_name = {n: (d, nullable) for n, d, nullable in table_info}
    specs = []
    for i, name in enumerate(names):
        if i < len(table_info) and table_info[i][0] == name:
            declared, nullable = table_info[i][1], table_info[i][2]
        else:
            declared, nullable = by_name.get(name, ("", True))
        specs.append(sqlite_spec(name, declared, nullable))
    return specs
