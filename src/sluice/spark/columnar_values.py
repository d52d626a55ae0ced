"""Columnar forms of the transforms that change a record's key or value.

Kafka converts a sink record before its chain runs, so a key or value step works on the
converted value. Spark can produce that value itself only where conversion is a column
expression with a schema known in advance: ``StringConverter`` (UTF-8; optional string)
and ``ByteArrayConverter`` (optional bytes). From there each step maps a typed column with
a static schema to another (``Typed``): Spark structs for Connect structs, epoch
milliseconds for Timestamp, days for Date, milliseconds of the day for Time — Connect's
physical form, which ``typed_values.value_builder`` turns back into Connect values.

Every output schema is the one the per-record transformation itself builds for the input
schema (it is applied once to a sample record while compiling), so the two paths cannot
disagree on schemas. Values follow the per-record code step by step; a record the column
expressions cannot reproduce exactly (a cast that fails or needs Java's parsing of unusual
text, a null the per-record code passes through with its old schema, a timestamp outside
years 1–9999) is handed to the Python chain (``fallback``), which then gives the same
record or raises the same error under the error policy. Expressions are written so that
they cannot fail in Spark (ANSI mode) on any input, also on rows that fall back.
"""

from __future__ import annotations

import dataclasses
import decimal as _decimal
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sluice.api.data import DATE_TIME_TYPES, Decimal, Schema, Struct, Type, date_time_from_logical
from sluice.api.records import SinkRecord

if TYPE_CHECKING:
    from sluice.spark.columnar import _State

__all__ = ["NotColumnar", "Sides", "decoder", "is_value_step", "operating_side", "spark_type", "value_step"]

_TRANSFORMS = "sluice.transforms."
HOIST_FIELD = "hoist_field.HoistField"
INSERT_FIELD = "insert_field.InsertField"
EXTRACT_FIELD = "extract_field.ExtractField"
REPLACE_FIELD = "replace_field.ReplaceField"
MASK_FIELD = "mask_field.MaskField"
SET_SCHEMA_METADATA = "set_schema_metadata.SetSchemaMetadata"
FLATTEN = "flatten.Flatten"
CAST = "cast.Cast"
TIMESTAMP_CONVERTER = "timestamp_converter.TimestampConverter"
VALUE_TO_KEY = "value_to_key.ValueToKey"
HEADER_FROM = "header_from.HeaderFrom"
VALUE_STEPS = (
    HOIST_FIELD,
    INSERT_FIELD,
    EXTRACT_FIELD,
    REPLACE_FIELD,
    MASK_FIELD,
    SET_SCHEMA_METADATA,
    FLATTEN,
    CAST,
    TIMESTAMP_CONVERTER,
    VALUE_TO_KEY,
    HEADER_FROM,
)

_STRING = "sluice.converters.string.StringConverter"
_BYTES = "sluice.converters.bytearray.ByteArrayConverter"

# Epoch milliseconds Python's datetime can hold (years 1 to 9999).
MIN_MS = -62_135_596_800_000
MAX_MS = 253_402_300_799_999
DAY_MS = 86_400_000
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1


class NotColumnar(Exception):
    """A step without an exact columnar form (the reason is the message)."""


@dataclass
class Sides:
    """While compiling: the static schema of the key and of the value once a step made them
    typed columns (``None``: still the consumed bytes), and the headers added so far."""

    key: Schema | None = None
    value: Schema | None = None
    headers: list[tuple[str, Schema]] = field(default_factory=list)

    def schema(self, side: str) -> Schema | None:
        return self.key if side == "key" else self.value


Step = Callable[["_State", Column], "_State"]


def is_value_step(kind: str) -> bool:
    return bool(_base(kind))


def _base(kind: str) -> str:
    """``cast.Cast`` for ``sluice.transforms.cast.CastValue``."""
    if not kind.startswith(_TRANSFORMS):
        return ""
    name = kind[len(_TRANSFORMS) :]
    for suffix in ("Value", "Key"):
        if name.endswith(suffix) and name[: -len(suffix)] in VALUE_STEPS:
            return name[: -len(suffix)]
    return name if name in VALUE_STEPS else ""


def operating_side(kind: str) -> str:
    """The side a step reads: ``…Key`` variants the key; ValueToKey the value (it writes the key)."""
    return "key" if kind.endswith("Key") and _base(kind) != VALUE_TO_KEY else "value"


# --------------------------------------------------------------------------- types and literals


_PRIMITIVE_SPARK_TYPES: dict[Type, T.DataType] = {
    Type.INT8: T.ByteType(), Type.INT16: T.ShortType(), Type.INT32: T.IntegerType(), Type.INT64: T.LongType(),
    Type.FLOAT32: T.FloatType(), Type.FLOAT64: T.DoubleType(), Type.BOOLEAN: T.BooleanType(),
    Type.STRING: T.StringType(), Type.BYTES: T.BinaryType(),
}  # fmt: skip


def spark_type(schema: Schema) -> T.DataType:
    """The Spark type holding values of ``schema`` in Connect's physical form."""
    if schema.name == Decimal.LOGICAL_NAME:
        raise NotColumnar("Decimal values have no columnar form")
    kind = schema.type
    if kind in _PRIMITIVE_SPARK_TYPES:
        return _PRIMITIVE_SPARK_TYPES[kind]
    if kind is Type.ARRAY:
        return T.ArrayType(spark_type(schema.value_schema()))
    if kind is Type.MAP:
        return T.MapType(spark_type(schema.key_schema()), spark_type(schema.value_schema()))
    return T.StructType([T.StructField(f.name, spark_type(f.schema)) for f in schema.fields()])


def literal(schema: Schema, value: Any) -> Column:
    """A constant of ``schema`` as a column of its Spark type."""
    kind = schema.type
    if value is None:
        return F.lit(None).cast(spark_type(schema))
    if kind is Type.STRUCT:
        return F.struct(*[literal(f.schema, value.get(f)).alias(f.name) for f in schema.fields()])
    if kind is Type.ARRAY:
        if value:
            raise NotColumnar("non-empty array constant")
        return F.array().cast(spark_type(schema))
    if kind is Type.MAP:
        if value:
            raise NotColumnar("non-empty map constant")
        return F.create_map().cast(spark_type(schema))
    return F.lit(date_time_from_logical(schema, value)).cast(spark_type(schema))


def sample(schema: Schema) -> Any:
    """A non-null value of ``schema``, to learn what a transformation makes of the schema."""
    if schema.name in DATE_TIME_TYPES:
        return DATE_TIME_TYPES[schema.name].to_logical(schema, 0)  # the epoch
    if schema.name == Decimal.LOGICAL_NAME:
        return _decimal.Decimal(0)
    kind = schema.type
    if kind is Type.STRUCT:
        struct = Struct(schema)
        for f in schema.fields():
            struct.put(f, sample(f.schema))
        return struct
    if kind is Type.ARRAY:
        return []
    if kind is Type.MAP:
        return {}
    return {Type.STRING: "0", Type.BYTES: b"", Type.BOOLEAN: False, Type.FLOAT32: 0.0, Type.FLOAT64: 0.0}.get(kind, 0)


def _has_defaults(schema: Schema) -> bool:
    if schema.default_value is not None:
        return True
    if schema.type is Type.STRUCT:
        return any(_has_defaults(f.schema) for f in schema.fields())
    if schema.type is Type.ARRAY:
        return _has_defaults(schema.value_schema())
    if schema.type is Type.MAP:
        return _has_defaults(schema.key_schema()) or _has_defaults(schema.value_schema())
    return False


# --------------------------------------------------------------------------- decoding


def decoder(spec: Any) -> tuple[Schema, Callable[[Column], tuple[Column, Column]]]:
    """How Spark reads the bytes a converter would: ``(schema, bytes -> (value, must fall back))``."""
    if spec.class_path == _STRING:
        encoding = spec.configs.get("converter.encoding", spec.configs.get("encoding", "UTF-8"))
        if str(encoding).replace("-", "").replace("_", "").upper() != "UTF8":
            raise NotColumnar(f"StringConverter with encoding {encoding}")

        def read_text(raw: Column) -> tuple[Column, Column]:
            text = raw.cast("string")
            # Spark keeps invalid UTF-8 as it is; Python replaces it: per record (and the
            # column holds null, which Arrow can carry).
            valid = F.is_valid_utf8(text)
            return F.when(valid, text), raw.isNotNull() & ~valid

        return Schema.OPTIONAL_STRING_SCHEMA, read_text
    if spec.class_path == _BYTES:
        return Schema.OPTIONAL_BYTES_SCHEMA, lambda raw: (raw, F.lit(False))
    raise NotColumnar(f"a key or value step needs the converted value, and {spec.class_path} has no columnar form")


# --------------------------------------------------------------------------- steps


def _probe(transformation: Any, sides: Sides) -> SinkRecord:
    """The transformation applied to a sample record with the current schemas."""
    key = sample(sides.key) if sides.key is not None else None
    value = sample(sides.value) if sides.value is not None else None
    record = SinkRecord("t", 0, sides.key, key, sides.value, value, 0, timestamp=0)
    try:
        return transformation.apply(record)
    except Exception as exc:  # noqa: BLE001 - it fails per record too: keep that path
        raise NotColumnar(f"{type(transformation).__name__} fails on these schemas: {exc}") from exc


def value_step(kind: str, transformation: Any, sides: Sides, conditional: bool) -> tuple[Step, str]:
    """The columnar step of a key or value transformation, updating ``sides`` to its output."""
    base = _base(kind)
    operating = operating_side(kind)
    written = "key" if base == VALUE_TO_KEY else operating  # the slot the step's column replaces
    schema = sides.schema(operating)
    assert schema is not None
    if _has_defaults(schema):
        raise NotColumnar("schemas with default values")
    if base == HEADER_FROM and conditional:
        raise NotColumnar("HeaderFrom under a predicate")
    probe = _probe(transformation, sides)
    key_schema, value_schema = probe.key_schema, probe.value_schema
    if conditional and (key_schema != sides.key or value_schema != sides.value):
        raise NotColumnar(f"{type(transformation).__name__} under a predicate changes the schema")
    out = value_schema if operating == "value" else key_schema
    if out is None:
        raise NotColumnar(f"{type(transformation).__name__} leaves the {operating} without a schema")
    make, description = _BUILDERS[base](transformation, schema, out, sides)
    # What the per-record transformation made of the schemas (a side still raw stays None).
    sides.key, sides.value = key_schema, value_schema

    def step(s: _State, applies: Column) -> _State:
        new, fallback, added = make(s, getattr(s, f"{operating}_typed"))
        changes: dict[str, Any] = {"fallback": s.fallback | (applies & fallback)}
        if new is not None:
            if conditional:
                new = F.when(applies, new).otherwise(getattr(s, f"{written}_typed"))
            changes[f"{written}_typed"] = new
        if added:
            changes["added_headers"] = (*s.added_headers, *added)
        return _replace(s, **changes)

    return step, description


def _replace(state: _State, **changes: Any) -> _State:
    return dataclasses.replace(state, **changes)


# Each builder: (transformation, input schema, output schema, sides) ->
#   (make(state, column) -> (new column | None, fall back, added header columns), description)
Make = Callable[["_State", Column], tuple[Column | None, Column, tuple[Column, ...]]]


def _no() -> Column:
    return F.lit(False)


def _require_struct(schema: Schema, what: str) -> None:
    if schema.type is not Type.STRUCT:
        raise NotColumnar(f"{what} on a {schema.type.name} schema")


def _hoist(t: Any, schema: Schema, out: Schema, sides: Sides) -> tuple[Make, str]:
    name = out.fields()[0].name
    return (lambda s, v: (F.struct(v.alias(name)), _no(), ())), f"HoistField {name!r}"


def _struct_of(v: Column, names: list[tuple[str, str]]) -> Column:
    """``struct(v.source AS name, …)`` for ``(name, source)`` pairs."""
    return F.struct(*[v.getField(source).alias(name) for name, source in names])


def _insert(t: Any, schema: Schema, out: Schema, sides: Sides) -> tuple[Make, str]:
    _require_struct(schema, "InsertField")
    kept = [(f.name, f.name) for f in schema.fields()]
    static = t.static_value
    timestamp_spec = t.timestamp_field

    def make(s: _State, v: Column) -> tuple[Column, Column, tuple[Column, ...]]:
        columns = [v.getField(source).alias(name) for name, source in kept]
        fallback = v.isNull()  # passes through with its own schema
        for spec, expr in ((t.topic_field, s.topic), (t.partition_field, s.partition), (t.offset_field, s.offset)):
            if spec is not None:
                columns.append(expr.alias(spec.name))
        if timestamp_spec is not None:
            ts = s.timestamp
            columns.append(ts.alias(timestamp_spec.name))
            out_of_range = (ts < F.lit(MIN_MS)) | (ts > F.lit(MAX_MS))
            fallback = fallback | F.coalesce(out_of_range, F.lit(not timestamp_spec.optional))
        if t.static_field is not None:
            columns.append(F.lit(static).cast("string").alias(t.static_field.name))
        return F.struct(*columns), fallback, ()

    return make, "InsertField " + ", ".join(f.name for f in out.fields()[len(kept) :])


def _extract(t: Any, schema: Schema, out: Schema, sides: Sides) -> tuple[Make, str]:
    _require_struct(schema, "ExtractField")
    steps = list(t.path.steps)

    def make(s: _State, v: Column) -> tuple[Column, Column, tuple[Column, ...]]:
        current = v
        for step in steps:
            current = current.getField(step)
        return current, _no(), ()

    return make, f"ExtractField {'.'.join(steps)!r}"


def _replace_field(t: Any, schema: Schema, out: Schema, sides: Sides) -> tuple[Make, str]:
    _require_struct(schema, "ReplaceField")
    names = [(f.name, t.source_names.get(f.name, f.name)) for f in out.fields()]
    return (lambda s, v: (_struct_of(v, names), v.isNull(), ())), "ReplaceField " + ", ".join(n for n, _ in names)


def _mask(t: Any, schema: Schema, out: Schema, sides: Sides) -> tuple[Make, str]:
    _require_struct(schema, "MaskField")
    masks: dict[str, Column] = {}
    for f in schema.fields():
        if f.name in t.masked_fields:
            try:
                masked = t.masked(sample(f.schema), f.schema)
            except Exception as exc:  # noqa: BLE001 - fails per record: keep that path
                raise NotColumnar(f"MaskField {f.name}: {exc}") from exc
            masks[f.name] = literal(f.schema, masked)

    def make(s: _State, v: Column) -> tuple[Column, Column, tuple[Column, ...]]:
        columns = []
        for f in schema.fields():
            current = v.getField(f.name)
            if f.name in masks:
                current = F.when(current.isNull(), current).otherwise(masks[f.name])
            columns.append(current.alias(f.name))
        return F.struct(*columns), v.isNull(), ()  # a null value fails (requires a struct)

    return make, f"MaskField {sorted(masks)}"


def _set_schema_metadata(t: Any, schema: Schema, out: Schema, sides: Sides) -> tuple[Make, str]:
    return (lambda s, v: (v, _no(), ())), f"SetSchemaMetadata {out.name!r} {out.version!r}"


def _flatten(t: Any, schema: Schema, out: Schema, sides: Sides) -> tuple[Make, str]:
    _require_struct(schema, "Flatten")
    leaves: list[list[str]] = []

    def walk(s: Schema, path: list[str]) -> None:
        for f in s.fields():
            if f.schema.type is Type.STRUCT:
                walk(f.schema, [*path, f.name])
            else:
                leaves.append([*path, f.name])

    walk(schema, [])
    names = [f.name for f in out.fields()]
    if len(names) != len(leaves):  # pragma: no cover - the probe built this schema
        raise NotColumnar("Flatten: unexpected schema")

    def make(s: _State, v: Column) -> tuple[Column, Column, tuple[Column, ...]]:
        columns = []
        for name, path in zip(names, leaves, strict=True):
            current = v
            for step in path:
                current = current.getField(step)
            columns.append(current.alias(name))
        return F.struct(*columns), v.isNull(), ()

    return make, "Flatten"


def _value_to_key(t: Any, schema: Schema, out: Schema, sides: Sides) -> tuple[Make, str]:
    _require_struct(schema, "ValueToKey")
    names = [(n, n) for n in t.fields]
    return (lambda s, v: (_struct_of(v, names), v.isNull(), ())), f"ValueToKey {t.fields}"


def _header_from(t: Any, schema: Schema, out: Schema, sides: Sides) -> tuple[Make, str]:
    _require_struct(schema, "HeaderFrom")
    pairs = list(t.pairs)
    for field_name, header_name in pairs:
        field_schema = schema.field(field_name)
        assert field_schema is not None  # the probe fails otherwise
        sides.headers.append((header_name, field_schema.schema))
    kept = [(f.name, f.name) for f in out.fields()] if t.move else None

    def make(s: _State, v: Column) -> tuple[Column | None, Column, tuple[Column, ...]]:
        added = tuple(v.getField(field_name) for field_name, _ in pairs)
        new = _struct_of(v, kept) if kept is not None else None
        return new, v.isNull(), added

    return make, f"HeaderFrom {[h for _, h in pairs]} ({'move' if t.move else 'copy'})"


# --------------------------------------------------------------------------- Cast

_INTS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}
_FLOATS = (Type.FLOAT32, Type.FLOAT64)
_INTEGER_TEXT = r"\A[+-]?[0-9]{1,18}\z"
_DECIMAL_TEXT = r"\A[+-]?([0-9]{1,20}(\.[0-9]{0,20})?|\.[0-9]{1,20})([eE][+-]?[0-9]{1,3})?\z"


def _wrap(n: Column, bits: int) -> Column:
    """The low ``bits`` bits of a long as a signed number (Java's narrowing): the column form
    of :func:`sluice._java.numbers.narrow`."""
    if bits == 64:
        return n
    m = F.pmod(n, F.lit(1 << bits).cast("long"))
    return F.when(m >= F.lit(1 << (bits - 1)), m - F.lit(1 << bits)).otherwise(m)


def _float_to_long(d: Column, bits: int) -> Column:
    """Java's ``(int)``/``(long)`` of a double (NaN 0, truncated, saturated), then narrowed:
    the column form of :func:`sluice._java.numbers.float_to_int`."""
    wide = 64 if bits == 64 else 32
    lo, hi = -(1 << (wide - 1)), (1 << (wide - 1)) - 1
    n = (
        F.when(F.isnan(d), F.lit(0).cast("long"))
        .when(d >= F.lit(float(hi)), F.lit(hi).cast("long"))
        .when(d <= F.lit(float(lo)), F.lit(lo).cast("long"))
        .otherwise(d.try_cast("long"))
    )
    return _wrap(n, bits) if bits < wide else n


def _cast(source: Schema, target: Type, v: Column) -> tuple[Column, Column]:
    """``(cast value, must fall back)`` for one value of ``source`` cast to ``target``."""
    kind = source.type
    if source.name is not None:
        # Date, Time, Timestamp cast from their physical value, except to text (formatted).
        if kind not in _INTS:
            raise NotColumnar(f"Cast of {source.name}")
        if target is Type.STRING:
            raise NotColumnar(f"Cast of {source.name} to string")
    out_type = spark_type(Schema(target))
    if kind is Type.STRING:
        if target in _INTS:
            ok = v.rlike(_INTEGER_TEXT)
            n = F.when(ok, v.try_cast("long"))
            bits = _INTS[target]
            in_range = (n >= F.lit(-(1 << (bits - 1)))) & (n < F.lit(1 << (bits - 1))) if bits < 64 else F.lit(True)
            return F.when(ok & in_range, n).cast(out_type), v.isNotNull() & ~F.coalesce(ok & in_range, F.lit(False))
        if target in _FLOATS:
            ok = v.rlike(_DECIMAL_TEXT)
            d = F.when(ok, v.try_cast("double"))
            return d.cast(out_type), v.isNotNull() & ~F.coalesce(ok, F.lit(False))
        if target is Type.BOOLEAN:
            return v.rlike(r"\A(?i:true)\z"), _no()
        return v, _no()
    if kind in _INTS:
        if target in _INTS:
            return _wrap(v.cast("long"), _INTS[target]).cast(out_type), _no()
        if target in _FLOATS:
            risky = kind is Type.INT64 and target is Type.FLOAT32  # Python rounds twice there
            d = v.cast("double")
            fallback = (F.abs(v) > F.lit(1 << 53)) if risky else _no()
            return d.cast(out_type), F.coalesce(fallback, F.lit(False))
        if target is Type.BOOLEAN:
            return v != F.lit(0), _no()
        return v.cast("string"), _no()
    if kind in _FLOATS:
        if target in _INTS:
            return _float_to_long(v.cast("double"), _INTS[target]).cast(out_type), _no()
        if target in _FLOATS:
            return v.cast("double").cast(out_type), _no()
        if target is Type.BOOLEAN:
            d = v.cast("double")
            return F.when(F.isnan(d), F.lit(False)).otherwise((d >= F.lit(1.0)) | (d <= F.lit(-1.0))), _no()
        raise NotColumnar("Cast of a floating point number to string")
    if kind is Type.BOOLEAN:
        if target in _INTS or target in _FLOATS:
            return F.when(v, F.lit(1)).when(~v, F.lit(0)).cast(out_type), _no()
        if target is Type.BOOLEAN:
            return v, _no()
        return F.when(v, F.lit("true")).when(~v, F.lit("false")), _no()
    if kind is Type.BYTES and target is Type.STRING:
        return F.base64(v), _no()
    raise NotColumnar(f"Cast of {kind.name} to {target.name}")


def _cast_step(t: Any, schema: Schema, out: Schema, sides: Sides) -> tuple[Make, str]:
    whole = t.whole_value_type
    if whole is not None:
        if schema.type is Type.STRUCT:
            raise NotColumnar("Cast of a whole struct")

        def cast_whole(s: _State, v: Column) -> tuple[Column, Column, tuple[Column, ...]]:
            new, fallback = _cast(schema, whole, v)
            return new, fallback | v.isNull(), ()  # a null passes through with its own schema

        _cast(schema, whole, F.lit(None))  # raises NotColumnar now, not in a Spark job
        return cast_whole, f"Cast {whole.name}"
    _require_struct(schema, "Cast")
    targets = {f.name: t.casts[f.name] for f in schema.fields() if f.name in t.casts}
    for name, target in targets.items():
        _cast(schema.field(name).schema, target, F.lit(None))  # type: ignore[union-attr]

    def cast_fields(s: _State, v: Column) -> tuple[Column, Column, tuple[Column, ...]]:
        columns = []
        fallback = v.isNull()  # passes through with its own schema
        for f in schema.fields():
            current = v.getField(f.name)
            if f.name in targets:
                current, bad = _cast(f.schema, targets[f.name], current)
                fallback = fallback | bad
            columns.append(current.alias(f.name))
        return F.struct(*columns), fallback, ()

    return cast_fields, "Cast " + ", ".join(f"{n}:{t.name}" for n, t in targets.items())


# --------------------------------------------------------------------------- TimestampConverter


def _saturated_times(n: Column, factor: int) -> Column:
    limit = LONG_MAX // factor
    return (
        F.when(n > F.lit(limit), F.lit(LONG_MAX)).when(n < F.lit(-limit), F.lit(LONG_MIN)).otherwise(n * F.lit(factor))
    )


def _trunc_div(n: Column, d: int) -> Column:
    return F.call_function("div", n, F.lit(d).cast("long"))


def _timestamp_source(schema: Schema) -> str:
    """The representation TimestampConverter reads a value of ``schema`` as (its own rule;
    the probe already failed for schemas it refuses)."""
    if schema.name in DATE_TIME_TYPES:
        return DATE_TIME_TYPES[schema.name].__name__
    if schema.type is Type.INT64:
        return "unix"
    raise NotColumnar(f"TimestampConverter from {schema.type.name.lower()}")


def _timestamp_step(t: Any, schema: Schema, out: Schema, sides: Sides) -> tuple[Make, str]:
    from sluice.spark.columnar import simple_date_format

    if t.field:
        _require_struct(schema, "TimestampConverter")
        if schema.field(t.field) is None:
            raise NotColumnar(f"TimestampConverter: no field {t.field!r}")
        source_schema = schema.field(t.field).schema  # type: ignore[union-attr]
    else:
        source_schema = schema
    source = _timestamp_source(source_schema)
    target = t.target_type
    precision = t.unix_precision
    if source == "string":
        raise NotColumnar("TimestampConverter from text")
    formatter = simple_date_format(t.date_format.to_pattern()) if target == "string" else None

    def raw_millis(v: Column) -> Column:
        n = v.cast("long")
        if source == "Date":
            return n * F.lit(DAY_MS)
        if source == "unix":
            if precision == "seconds":
                return _saturated_times(n, 1000)
            divisor = {"milliseconds": 1, "microseconds": 1000, "nanoseconds": 1_000_000}[precision]
            return n if divisor == 1 else _trunc_div(n, divisor)
        return n

    def convert(v: Column) -> tuple[Column, Column]:
        raw = raw_millis(v)
        in_range = (raw >= F.lit(MIN_MS)) & (raw <= F.lit(MAX_MS))
        if target == "unix":
            if precision == "seconds":
                return _trunc_div(raw, 1000), _no()
            factor = {"milliseconds": 1, "microseconds": 1000, "nanoseconds": 1_000_000}[precision]
            return (raw if factor == 1 else _saturated_times(raw, factor)), _no()
        if target == "Time":
            return F.pmod(raw, F.lit(DAY_MS)).cast("int"), _no()
        bad = v.isNotNull() & ~F.coalesce(in_range, F.lit(False))
        safe = F.when(in_range, raw)
        if target == "Timestamp":
            return safe, bad
        if target == "Date":
            return ((safe - F.pmod(safe, F.lit(DAY_MS))) / F.lit(DAY_MS)).cast("int"), bad
        assert formatter is not None
        return F.when(safe.isNotNull(), formatter(safe)), bad

    if not t.field:

        def whole(s: _State, v: Column) -> tuple[Column, Column, tuple[Column, ...]]:
            new, bad = convert(v)
            return new, bad, ()

        return whole, f"TimestampConverter {source} -> {target}"

    def fields(s: _State, v: Column) -> tuple[Column, Column, tuple[Column, ...]]:
        columns = []
        fallback = _no()
        for f in schema.fields():
            current = v.getField(f.name)
            if f.name == t.field:
                current, fallback = convert(current)
            columns.append(current.alias(f.name))
        return F.when(v.isNotNull(), F.struct(*columns)), fallback, ()

    return fields, f"TimestampConverter {t.field} {source} -> {target}"


_BUILDERS: dict[str, Callable[[Any, Schema, Schema, Sides], tuple[Make, str]]] = {
    HOIST_FIELD: _hoist,
    INSERT_FIELD: _insert,
    EXTRACT_FIELD: _extract,
    REPLACE_FIELD: _replace_field,
    MASK_FIELD: _mask,
    SET_SCHEMA_METADATA: _set_schema_metadata,
    FLATTEN: _flatten,
    CAST: _cast_step,
    TIMESTAMP_CONVERTER: _timestamp_step,
    VALUE_TO_KEY: _value_to_key,
    HEADER_FROM: _header_from,
}
