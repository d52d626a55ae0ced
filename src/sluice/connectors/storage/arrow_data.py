"""Connect schemas and values → Apache Arrow, for the storage sinks' Parquet files.

The column types are those of the Parquet files Confluent's sinks write (Connect → Avro
through ``AvroData``, then Avro → Parquet through parquet-avro):

* INT8, INT16, INT32 → ``int32``; INT64 → ``int64``; FLOAT32 → ``float32``; FLOAT64 →
  ``float64``; BOOLEAN → ``bool``; STRING → ``string``; BYTES → ``binary``;
* ``Decimal`` → ``decimal128(precision, scale)``; ``Date`` → ``date32``; ``Time`` →
  ``time32[ms]``; ``Timestamp`` → ``timestamp[ms, tz=UTC]``;
* ARRAY → ``list``; MAP with STRING keys → ``map<string, value>``; a MAP with other keys →
  ``list<struct<key, value>>`` (AvroData's array of ``MapEntry`` records); STRUCT → ``struct``;
* an optional schema is a nullable field, a required one a non-nullable field.

Values are converted as ``AvroData.fromConnectData`` reads them: a null struct field takes
its schema default, a null required field, a value of the wrong type, a decimal with another
scale than the schema's or more digits than the column's precision are
:class:`~sluice.api.errors.DataError`.

Deviation from Confluent: a Decimal schema without a ``connect.decimal.precision``
parameter gets precision 38, not AvroData's 64 — Spark and Hive read decimals of at most
38 digits (a larger precision parameter is kept, as ``decimal256``).
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import operator
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from sluice._java.names import class_string
from sluice.api.data import Date, Decimal, Schema, Struct, Time, Timestamp, Type
from sluice.api.errors import DataError

__all__ = [
    "DECIMAL_PRECISION_PARAMETER",
    "DEFAULT_DECIMAL_PRECISION",
    "arrow_field",
    "arrow_schema",
    "arrow_type",
    "row_converter",
    "value_converter",
]

DECIMAL_PRECISION_PARAMETER = "connect.decimal.precision"
DEFAULT_DECIMAL_PRECISION = 38

Converter = Callable[[Any], Any]

_INT_RANGES = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}

_PRIMITIVE_TYPES: dict[Type, pa.DataType] = {
    Type.INT8: pa.int32(),
    Type.INT16: pa.int32(),
    Type.INT32: pa.int32(),
    Type.INT64: pa.int64(),
    Type.FLOAT32: pa.float32(),
    Type.FLOAT64: pa.float64(),
    Type.BOOLEAN: pa.bool_(),
    Type.STRING: pa.string(),
    Type.BYTES: pa.binary(),
}

_EPOCH_DATE = _dt.date(1970, 1, 1)

# -- types ------------------------------------------------------------------------------


def decimal_precision(schema: Schema) -> int:
    """The precision of a Decimal column: the ``connect.decimal.precision`` parameter, else 38."""
    text = (schema.parameters or {}).get(DECIMAL_PRECISION_PARAMETER)
    if text is None:
        return DEFAULT_DECIMAL_PRECISION
    try:
        precision = int(text)
    except ValueError:
        raise DataError(f"Invalid {DECIMAL_PRECISION_PARAMETER} parameter in Decimal schema: {text}") from None
    if not 1 <= precision <= 76:
        raise DataError(f"Unsupported decimal precision {precision}: Parquet columns hold 1 to 76 digits")
    return precision


def arrow_type(schema: Schema) -> pa.DataType:
    """The Arrow type of a Connect schema."""
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        precision, scale = decimal_precision(schema), Decimal.scale(schema)
        if scale > precision:
            raise DataError(f"Decimal scale {scale} is larger than its precision {precision}")
        return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
    if name == Date.LOGICAL_NAME:
        return pa.date32()
    if name == Time.LOGICAL_NAME:
        return pa.time32("ms")
    if name == Timestamp.LOGICAL_NAME:
        return pa.timestamp("ms", tz="UTC")
    t = schema.type
    primitive = _PRIMITIVE_TYPES.get(t)
    if primitive is not None:
        return primitive
    if t is Type.ARRAY:
        vs = _required_schema(schema.value_schema(), "array element")
        return pa.list_(pa.field("element", arrow_type(vs), nullable=vs.optional))
    if t is Type.MAP:
        ks = _required_schema(schema.key_schema(), "map key")
        vs = _required_schema(schema.value_schema(), "map value")
        if ks.type is Type.STRING and ks.name is None:
            return pa.map_(pa.string(), pa.field("value", arrow_type(vs), nullable=vs.optional))
        entry = pa.struct([arrow_field("key", ks), arrow_field("value", vs)])
        return pa.list_(pa.field("element", entry, nullable=False))
    if t is Type.STRUCT:
        return pa.struct([arrow_field(f.name, f.schema) for f in schema.fields()])
    raise DataError(f"Unsupported schema type {t.name} for Parquet")


def arrow_field(name: str, schema: Schema) -> pa.Field:
    """The Arrow field of a struct field: nullable exactly when the schema is optional."""
    return pa.field(name, arrow_type(schema), nullable=schema.optional)


def arrow_schema(schema: Schema | None) -> pa.Schema:
    """The Arrow schema of a Parquet file of values with this (STRUCT) schema."""
    if schema is None or schema.type is not Type.STRUCT:
        what = "no schema" if schema is None else f"a {schema.type.name} schema"
        raise DataError(f"Parquet files hold Struct values; the records have {what}")
    return pa.schema([arrow_field(f.name, f.schema) for f in schema.fields()])


def _required_schema(schema: Schema | None, what: str) -> Schema:
    if schema is None:
        raise DataError(f"A {what} without a schema cannot be written to Parquet")
    return schema


# -- values ------------------------------------------------------------------------------


def value_converter(schema: Schema, path: str = "value", *, use_default: bool = False) -> Converter:
    """A function turning a Connect value of ``schema`` into what ``pa.array(values,
    arrow_type(schema))`` takes, checking it: raises DataError for a null required value
    (after the schema default when ``use_default``, as for struct fields), a value of the
    wrong type or a decimal that does not fit. ``path`` names the value in messages."""
    present = _present_converter(schema, path)
    optional = schema.optional
    default = schema.default_value if use_default else None
    converted_default = present(default) if default is not None else None

    def null(value: Any) -> Any:
        if default is not None:
            return converted_default
        if optional:
            return None
        raise DataError(f'Cannot write null to the required Parquet column "{path}"')

    fast = _fast_path(schema)
    if fast is not None:
        check_type, lo, hi = fast
        if check_type is int:

            def int_value(value: Any) -> Any:
                if type(value) is int and lo <= value <= hi:
                    return value
                return null(value) if value is None else present(value)

            return int_value

        def typed_value(value: Any) -> Any:
            if type(value) is check_type:
                return value
            return null(value) if value is None else present(value)

        return typed_value

    def any_value(value: Any) -> Any:
        return null(value) if value is None else present(value)

    return any_value


def row_converter(schema: Schema) -> Callable[[Struct], tuple[Any, ...]]:
    """A function turning a Struct of ``schema`` into the tuple of its converted field
    values (one per column), raising DataError before returning anything if one does not
    fit."""
    # Generated per schema, so that a value needing no conversion costs one inline type
    # check and no call (the converter is called for anything else: nulls, defaults, errors).
    namespace: dict[str, Any] = {}
    lines = ["def row(struct):", "    values = struct.field_values()"]
    names = []
    for i, f in enumerate(schema.fields()):
        v, c = f"v{i}", f"c{i}"
        namespace[c] = value_converter(f.schema, f.name, use_default=True)
        fast = _fast_path(f.schema)
        lines.append(f"    {v} = values[{i}]")
        if fast is None:
            lines.append(f"    {v} = {c}({v})")
        elif fast[0] is int:
            lines.append(f"    if type({v}) is not int or not {fast[1]} <= {v} <= {fast[2]}: {v} = {c}({v})")
        else:
            namespace[f"t{i}"] = fast[0]
            lines.append(f"    if type({v}) is not t{i}: {v} = {c}({v})")
        names.append(v)
    lines.append("    return (" + "".join(n + ", " for n in names) + ")")
    exec("\n".join(lines), namespace)  # code built above from field indexes only
    row: Callable[[Struct], tuple[Any, ...]] = namespace["row"]
    return row


def _fast_path(schema: Schema) -> tuple[type, int, int] | None:
    """(class, lo, hi) when a value of exactly that class (within [lo, hi] for ints) is
    written as it is."""
    if schema.name in (Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME):
        return None
    t = schema.type
    if t in _INT_RANGES:
        lo, hi = _INT_RANGES[t]
        return int, lo, hi
    if t in (Type.FLOAT32, Type.FLOAT64):
        return float, 0, 0
    if t is Type.BOOLEAN:
        return bool, 0, 0
    if t is Type.STRING:
        return str, 0, 0
    if t is Type.BYTES:
        return bytes, 0, 0
    return None


def _wrong_type(path: str, schema: Schema, value: Any) -> DataError:
    what = schema.name if schema.name in _LOGICAL_NAMES else schema.type.name
    return DataError(f'Invalid value for the {what} Parquet column "{path}": {class_string(value)} {value!r:.80}')


_LOGICAL_NAMES = (Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME)


def _present_converter(schema: Schema, path: str) -> Converter:
    """The converter of a non-null value of ``schema``."""
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        return _decimal_converter(schema, path)
    if name == Date.LOGICAL_NAME:

        def date_value(value: Any) -> Any:
            if type(value) is _dt.date:
                return value
            if isinstance(value, _dt.datetime):  # Connect accepts a datetime at midnight UTC
                return _EPOCH_DATE + _dt.timedelta(days=Date.from_logical(schema, value))
            raise _wrong_type(path, schema, value)

        return date_value
    if name == Time.LOGICAL_NAME:

        def time_value(value: Any) -> Any:
            if isinstance(value, (_dt.time, _dt.datetime)):
                return Time.from_logical(schema, value)
            raise _wrong_type(path, schema, value)

        return time_value
    if name == Timestamp.LOGICAL_NAME:

        def timestamp_value(value: Any) -> Any:
            if isinstance(value, _dt.date):
                return Timestamp.from_logical(schema, value)
            raise _wrong_type(path, schema, value)

        return timestamp_value
    t = schema.type
    if t in _INT_RANGES:
        lo, hi = _INT_RANGES[t]

        def int_value(value: Any) -> Any:
            if isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi:
                return int(value)
            raise _wrong_type(path, schema, value)

        return int_value
    if t is Type.FLOAT32 or t is Type.FLOAT64:

        def float_value(value: Any) -> Any:
            if isinstance(value, (float, int)) and not isinstance(value, bool):
                return float(value)
            raise _wrong_type(path, schema, value)

        return float_value
    if t is Type.BOOLEAN:

        def bool_value(value: Any) -> Any:
            if isinstance(value, bool):
                return bool(value)
            raise _wrong_type(path, schema, value)

        return bool_value
    if t is Type.STRING:

        def str_value(value: Any) -> Any:
            if isinstance(value, str):
                return str(value)
            raise _wrong_type(path, schema, value)

        return str_value
    if t is Type.BYTES:

        def bytes_value(value: Any) -> Any:
            if isinstance(value, (bytes, bytearray, memoryview)):
                return bytes(value)
            raise _wrong_type(path, schema, value)

        return bytes_value
    if t is Type.ARRAY:
        vs = _required_schema(schema.value_schema(), "array element")
        element = value_converter(vs, path + "[]")

        def array_value(value: Any) -> Any:
            if isinstance(value, (list, tuple)):
                return [element(v) for v in value]
            raise _wrong_type(path, schema, value)

        return array_value
    if t is Type.MAP:
        return _map_converter(schema, path)
    if t is Type.STRUCT:
        return _struct_converter(schema, path)
    raise DataError(f"Unsupported schema type {t.name} for Parquet")


def _decimal_converter(schema: Schema, path: str) -> Converter:
    precision, scale = decimal_precision(schema), Decimal.scale(schema)
    exponent = -scale

    def decimal_value(value: Any) -> Any:
        if not isinstance(value, _decimal.Decimal):
            raise _wrong_type(path, schema, value)
        if not value.is_finite():
            raise DataError(f'Decimal value {value} of the Parquet column "{path}" is not finite')
        _, digits, value_exponent = value.as_tuple()
        if value_exponent != exponent:
            raise DataError(
                f'Decimal value {value} of the Parquet column "{path}" has scale {-int(value_exponent)}, '
                f"the schema scale {scale}"
            )
        # (0,) is zero's one digit; more digits than the precision do not fit the column
        if len(digits) > precision:
            raise DataError(
                f'Decimal value {value} of the Parquet column "{path}" has {len(digits)} digits, '
                f"more than the column's precision {precision}"
            )
        return value

    return decimal_value


def _map_converter(schema: Schema, path: str) -> Converter:
    ks = _required_schema(schema.key_schema(), "map key")
    vs = _required_schema(schema.value_schema(), "map value")
    value_conv = value_converter(vs, path + "{}")
    if ks.type is Type.STRING and ks.name is None:

        def string_map_value(value: Any) -> Any:
            if not isinstance(value, dict):
                raise _wrong_type(path, schema, value)
            out = []
            for k, v in value.items():
                if not isinstance(k, str):
                    raise DataError(f'Invalid key of the Parquet map column "{path}": {class_string(k)}')
                out.append((k, value_conv(v)))
            return out

        return string_map_value
    key_conv = value_converter(ks, path + "{key}")

    def entries_value(value: Any) -> Any:
        if not isinstance(value, dict):
            raise _wrong_type(path, schema, value)
        return [(key_conv(k), value_conv(v)) for k, v in value.items()]

    return entries_value


def _struct_converter(schema: Schema, path: str) -> Converter:
    fields = schema.fields()
    convs = [value_converter(f.schema, f"{path}.{f.name}", use_default=True) for f in fields]
    call = operator.call

    def struct_value(value: Any) -> Any:
        if not isinstance(value, Struct):
            raise _wrong_type(path, schema, value)
        if value.schema is not schema and value.schema != schema:
            raise DataError(f'Struct value of the Parquet column "{path}" has another schema than the column')
        return tuple(map(call, convs, value.field_values()))

    return struct_value
