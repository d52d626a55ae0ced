"""Kafka Connect's data model: schemas, structs and the schema builder.

Mirrors ``org.apache.kafka.connect.data``. A :class:`Schema` is immutable once
built; :class:`SchemaBuilder` builds one fluently, as in Java::

    schema = (SchemaBuilder.struct().name("com.example.User")
              .field("id", Schema.INT64_SCHEMA)
              .field("email", Schema.OPTIONAL_STRING_SCHEMA)
              .build())
    value = Struct(schema).put("id", 42).put("email", None)
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import enum
from collections.abc import Mapping
from typing import Any

from sluice._java.dates import java_date_string
from sluice._java.names import class_string
from sluice._java.text import java_double_string, java_float_string
from sluice.api.errors import DataError

__all__ = [
    "Date",
    "Decimal",
    "Field",
    "Schema",
    "SchemaBuilder",
    "Struct",
    "Time",
    "Timestamp",
    "Type",
    "java_double_string",
    "java_float_string",
    "java_string",
    "schema_type_of",
]


class Type(enum.Enum):
    """Schema types; the value is the lower-case name JsonConverter writes."""

    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float"
    FLOAT64 = "double"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"

    @property
    def is_primitive(self) -> bool:
        return self not in (Type.ARRAY, Type.MAP, Type.STRUCT)


_INT_RANGES = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}


class Field:
    """A named, indexed field of a struct schema."""

    __slots__ = ("name", "index", "schema")

    def __init__(self, name: str, index: int, schema: Schema) -> None:
        self.name = name
        self.index = index
        self.schema = schema

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Field)
            and self.name == other.name
            and self.index == other.index
            and self.schema == other.schema
        )

    def __hash__(self) -> int:
        return hash((self.name, self.index))

    def __repr__(self) -> str:
        return f"Field{{name={self.name}, index={self.index}, schema={self.schema}}}"


class Schema:
    """An immutable Connect schema. Build non-trivial ones with :class:`SchemaBuilder`."""

    # Filled in after the class body: BOOLEAN_SCHEMA, OPTIONAL_STRING_SCHEMA, ...
    INT8_SCHEMA: Schema
    INT16_SCHEMA: Schema
    INT32_SCHEMA: Schema
    INT64_SCHEMA: Schema
    FLOAT32_SCHEMA: Schema
    FLOAT64_SCHEMA: Schema
    BOOLEAN_SCHEMA: Schema
    STRING_SCHEMA: Schema
    BYTES_SCHEMA: Schema
    OPTIONAL_INT8_SCHEMA: Schema
    OPTIONAL_INT16_SCHEMA: Schema
    OPTIONAL_INT32_SCHEMA: Schema
    OPTIONAL_INT64_SCHEMA: Schema
    OPTIONAL_FLOAT32_SCHEMA: Schema
    OPTIONAL_FLOAT64_SCHEMA: Schema
    OPTIONAL_BOOLEAN_SCHEMA: Schema
    OPTIONAL_STRING_SCHEMA: Schema
    OPTIONAL_BYTES_SCHEMA: Schema

    def __init__(
        self,
        type: Type,
        optional: bool = False,
        default_value: Any = None,
        name: str | None = None,
        version: int | None = None,
        doc: str | None = None,
        parameters: Mapping[str, str] | None = None,
        fields: list[Field] | None = None,
        key_schema: Schema | None = None,
        value_schema: Schema | None = None,
    ) -> None:
        self.type = type
        self.optional = optional
        self.default_value = default_value
        self.name = name
        self.version = version
        self.doc = doc
        self.parameters = dict(parameters) if parameters else None
        self._fields = list(fields) if fields is not None else None
        self._fields_by_name = {f.name: f for f in self._fields} if self._fields else {}
        self._key_schema = key_schema
        self._value_schema = value_schema

    @property
    def is_optional(self) -> bool:
        return self.optional

    def fields(self) -> list[Field]:
        if self.type is not Type.STRUCT:
            raise DataError("Cannot list fields on non-struct type")
        return list(self._fields or [])

    def field(self, name: str) -> Field | None:
        if self.type is not Type.STRUCT:
            raise DataError("Cannot look up fields on non-struct type")
        return self._fields_by_name.get(name)

    def key_schema(self) -> Schema:
        """The key schema of a MAP. Kafka's ``Values`` can build maps whose keys have no
        common schema (``SchemaBuilder.mapOfNull()``); for those this is ``None``."""
        if self.type is not Type.MAP:
            raise DataError("Cannot look up key schema on non-map type")
        return self._key_schema  # type: ignore[return-value]

    def value_schema(self) -> Schema:
        """The element schema of an ARRAY or value schema of a MAP; ``None`` for the
        arrays and maps of mixed values Kafka's ``Values`` builds (``arrayOfNull()``)."""
        if self.type not in (Type.MAP, Type.ARRAY):
            raise DataError("Cannot look up value schema on non-array and non-map type")
        return self._value_schema  # type: ignore[return-value]

    def schema(self) -> Schema:
        return self

    def _identity(self) -> tuple[Any, ...]:
        return (
            self.type,
            self.optional,
            _freeze(self.default_value),
            self.name,
            self.version,
            self.doc,
            tuple(sorted(self.parameters.items())) if self.parameters else None,
            tuple(self._fields) if self._fields is not None else None,
            self._key_schema,
            self._value_schema,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schema) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash((self.type, self.optional, self.name, self.version))

    def __repr__(self) -> str:
        if self.name:
            return f"Schema{{{self.name}:{self.type.name}}}"
        return f"Schema{{{self.type.name}}}"

    # -- validation ---------------------------------------------------------------

    @staticmethod
    def validate_value(schema: Schema | None, value: Any, field: Field | None = None) -> None:
        """Raise :class:`DataError` if ``value`` does not fit ``schema``.

        Mirrors ``ConnectSchema.validateValue``: ``None`` is accepted only by an
        optional schema (a default does not make ``None`` valid here; :meth:`Struct.validate`
        skips unset fields that have a default), logical types require their Python class
        (``decimal.Decimal``, ``datetime.date``, ``datetime.time``, ``datetime.datetime``),
        and a nested struct is validated recursively.
        """
        location = f'field: "{field.name}"' if field is not None else "value"
        if value is None:
            if schema is not None and not schema.optional:
                raise DataError(f"Invalid value: null used for required {location}, schema type: {schema.type.name}")
            return
        if schema is None:
            return
        t = schema.type
        logical = _LOGICAL_TYPE_CLASSES.get(schema.name) if schema.name is not None else None
        ok: bool
        if logical is not None:
            ok = isinstance(value, logical)
        elif t in _INT_RANGES:
            lo, hi = _INT_RANGES[t]
            ok = isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi
        elif t in (Type.FLOAT32, Type.FLOAT64):
            ok = isinstance(value, float)
        elif t is Type.BOOLEAN:
            ok = isinstance(value, bool)
        elif t is Type.STRING:
            ok = isinstance(value, str)
        elif t is Type.BYTES:
            ok = isinstance(value, (bytes, bytearray, memoryview))
        elif t is Type.ARRAY:
            ok = isinstance(value, list)
        elif t is Type.MAP:
            ok = isinstance(value, dict)
        else:
            ok = isinstance(value, Struct)
        if not ok:
            named = f' "{schema.name}"' if schema.name is not None else ""
            raise DataError(
                f"Invalid Java object for schema{named} with type {t.name}: {class_string(value)} for {location}"
            )
        if t is Type.STRUCT:
            if value.schema is not schema and value.schema != schema:
                raise DataError("Struct schemas do not match.")
            value.validate()
        elif t is Type.ARRAY:
            vs = schema.value_schema()
            for item in value:
                Schema.validate_value(vs, item)
        elif t is Type.MAP:
            ks, vs = schema.key_schema(), schema.value_schema()
            for k, v in value.items():
                Schema.validate_value(ks, k)
                Schema.validate_value(vs, v)


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


# Logical types map a schema name to the Python class its values must have. The
# logical-type helpers (Decimal, Date, Time, Timestamp) register themselves here.
_LOGICAL_TYPE_CLASSES: dict[str, type | tuple[type, ...]] = {}

for _t in Type:
    if _t.is_primitive:
        _name = "FLOAT32" if _t is Type.FLOAT32 else "FLOAT64" if _t is Type.FLOAT64 else _t.name
        setattr(Schema, f"{_name}_SCHEMA", Schema(_t))
        setattr(Schema, f"OPTIONAL_{_name}_SCHEMA", Schema(_t, optional=True))


class SchemaBuilder:
    """Fluent builder for :class:`Schema`, as ``org.apache.kafka.connect.data.SchemaBuilder``."""

    def __init__(self, type: Type) -> None:
        self.type = type
        self._optional = False
        self._default: Any = None
        self._name: str | None = None
        self._version: int | None = None
        self._doc: str | None = None
        self._parameters: dict[str, str] = {}
        self._fields: list[Field] = [] if type is Type.STRUCT else []
        self._key: Schema | None = None
        self._value: Schema | None = None

    # factories
    @staticmethod
    def int8() -> SchemaBuilder:
        return SchemaBuilder(Type.INT8)

    @staticmethod
    def int16() -> SchemaBuilder:
        return SchemaBuilder(Type.INT16)

    @staticmethod
    def int32() -> SchemaBuilder:
        return SchemaBuilder(Type.INT32)

    @staticmethod
    def int64() -> SchemaBuilder:
        return SchemaBuilder(Type.INT64)

    @staticmethod
    def float32() -> SchemaBuilder:
        return SchemaBuilder(Type.FLOAT32)

    @staticmethod
    def float64() -> SchemaBuilder:
        return SchemaBuilder(Type.FLOAT64)

    @staticmethod
    def bool() -> SchemaBuilder:
        return SchemaBuilder(Type.BOOLEAN)

    @staticmethod
    def string() -> SchemaBuilder:
        return SchemaBuilder(Type.STRING)

    @staticmethod
    def bytes() -> SchemaBuilder:
        return SchemaBuilder(Type.BYTES)

    @staticmethod
    def struct() -> SchemaBuilder:
        return SchemaBuilder(Type.STRUCT)

    @staticmethod
    def array(value_schema: Schema) -> SchemaBuilder:
        b = SchemaBuilder(Type.ARRAY)
        b._value = value_schema
        return b

    @staticmethod
    def map(key_schema: Schema, value_schema: Schema) -> SchemaBuilder:
        b = SchemaBuilder(Type.MAP)
        b._key, b._value = key_schema, value_schema
        return b

    # properties
    def optional(self) -> SchemaBuilder:
        self._optional = True
        return self

    def required(self) -> SchemaBuilder:
        self._optional = False
        return self

    def default_value(self, value: Any) -> SchemaBuilder:
        Schema.validate_value(self.build(), value)
        self._default = value
        return self

    def name(self, name: str) -> SchemaBuilder:
        self._name = name
        return self

    def version(self, version: int) -> SchemaBuilder:
        self._version = version
        return self

    def doc(self, doc: str) -> SchemaBuilder:
        self._doc = doc
        return self

    def parameter(self, name: str, value: str) -> SchemaBuilder:
        self._parameters[name] = value
        return self

    def parameters(self, params: Mapping[str, str]) -> SchemaBuilder:
        self._parameters.update(params)
        return self

    def field(self, name: str, schema: Schema) -> SchemaBuilder:
        if self.type is not Type.STRUCT:
            raise DataError("Cannot create fields on type " + self.type.name)
        if not name:
            raise DataError("fieldName cannot be null.")
        if any(f.name == name for f in self._fields):
            raise DataError(f"Cannot create field because of field name duplication {name}")
        self._fields.append(Field(name, len(self._fields), schema))
        return self

    def schema(self) -> Schema:
        """The schema built so far (``SchemaBuilder.schema()`` in Java)."""
        return self.build()

    def build(self) -> Schema:
        return Schema(
            self.type,
            optional=self._optional,
            default_value=self._default,
            name=self._name,
            version=self._version,
            doc=self._doc,
            parameters=self._parameters or None,
            fields=list(self._fields) if self.type is Type.STRUCT else None,
            key_schema=self._key,
            value_schema=self._value,
        )


class Struct:
    """A structured record value with a STRUCT :class:`Schema`."""

    __slots__ = ("schema", "_values")

    def __init__(self, schema: Schema) -> None:
        if schema.type is not Type.STRUCT:
            raise DataError("Not a struct schema: " + repr(schema))
        self.schema = schema
        self._values: list[Any] = [None] * len(schema.fields())

    @classmethod
    def from_converted(cls, schema: Schema, values: list[Any]) -> Struct:
        """A struct holding ``values``: one per field, in field order, which the caller
        built from ``schema`` and already checked against it (converters' fast path).
        Nothing is checked here; the struct keeps the list itself, not a copy."""
        struct = object.__new__(cls)
        struct.schema = schema
        struct._values = values
        return struct

    def field_values(self) -> list[Any]:
        """The raw field values (no defaults applied) in field order: the struct's own
        list, not a copy (read it, do not change it)."""
        return self._values

    def _field(self, name: str) -> Field:
        f = self.schema.field(name)
        if f is None:
            raise DataError(f"{name} is not a valid field name")
        return f

    def get(self, name: str | Field) -> Any:
        f = name if isinstance(name, Field) else self._field(name)
        v = self._values[f.index]
        if v is None and f.schema.default_value is not None:
            return f.schema.default_value
        return v

    def get_without_default(self, name: str) -> Any:
        return self._values[self._field(name).index]

    # Typed getters (``getInt32(name)`` ...): the raw value (no default applied), after
    # checking the field's schema type, as Kafka's Struct does.
    def _get_checked(self, name: str, type: Type) -> Any:
        f = self._field(name)
        if f.schema.type is not type:
            raise DataError(f"Field '{name}' is not of type {type.name}")
        return self._values[f.index]

    def get_int8(self, name: str) -> int | None:
        return self._get_checked(name, Type.INT8)  # type: ignore[no-any-return]

    def get_int16(self, name: str) -> int | None:
        return self._get_checked(name, Type.INT16)  # type: ignore[no-any-return]

    def get_int32(self, name: str) -> int | None:
        return self._get_checked(name, Type.INT32)  # type: ignore[no-any-return]

    def get_int64(self, name: str) -> int | None:
        return self._get_checked(name, Type.INT64)  # type: ignore[no-any-return]

    def get_float32(self, name: str) -> float | None:
        return self._get_checked(name, Type.FLOAT32)  # type: ignore[no-any-return]

    def get_float64(self, name: str) -> float | None:
        return self._get_checked(name, Type.FLOAT64)  # type: ignore[no-any-return]

    def get_boolean(self, name: str) -> bool | None:
        return self._get_checked(name, Type.BOOLEAN)  # type: ignore[no-any-return]

    def get_string(self, name: str) -> str | None:
        return self._get_checked(name, Type.STRING)  # type: ignore[no-any-return]

    def get_bytes(self, name: str) -> bytes | None:
        value = self._get_checked(name, Type.BYTES)
        return bytes(value) if isinstance(value, (bytearray, memoryview)) else value

    def get_array(self, name: str) -> list[Any] | None:
        return self._get_checked(name, Type.ARRAY)  # type: ignore[no-any-return]

    def get_map(self, name: str) -> dict[Any, Any] | None:
        return self._get_checked(name, Type.MAP)  # type: ignore[no-any-return]

    def get_struct(self, name: str) -> Struct | None:
        return self._get_checked(name, Type.STRUCT)  # type: ignore[no-any-return]

    def put(self, name: str | Field, value: Any) -> Struct:
        f = name if isinstance(name, Field) else self._field(name)
        Schema.validate_value(f.schema, value, f)
        self._values[f.index] = value
        return self

    def validate(self) -> None:
        """Check every required field without a default is set and every value fits
        (``Struct.validate()``)."""
        for f in self.schema.fields():
            value = self._values[f.index]
            if value is None and (f.schema.optional or f.schema.default_value is not None):
                continue
            Schema.validate_value(f.schema, value, f)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Struct) and self.schema == other.schema and self._values == other._values

    def __hash__(self) -> int:
        return hash(tuple(_freeze(v) for v in self._values))

    def __repr__(self) -> str:
        # Kafka's Struct.toString(): "Struct{a=1,b=x}", null fields omitted
        parts = [
            f"{f.name}={_java_str(self._values[f.index], f.schema)}"
            for f in self.schema.fields()
            if self._values[f.index] is not None
        ]
        return "Struct{" + ",".join(parts) + "}"

    __str__ = __repr__


def _java_str(value: Any, schema: Schema | None = None) -> str:
    """Render a Connect value the way Java's ``toString`` would (``String.valueOf``).

    ``None`` → ``null``; booleans → ``true``/``false``; floats as ``Double.toString``
    (``1.0E10``), or as ``Float.toString`` where ``schema`` (or, inside a struct, array or
    map, the nested schema) is FLOAT32 — the value is a ``java.lang.Float`` there;
    ``decimal.Decimal`` as ``BigDecimal.toString``; dicts as ``{k=v, k2=v2}``; lists and
    tuples as ``[a, b]``; structs as ``Struct{a=1,b=x}``; dates, times and datetimes as
    ``java.util.Date.toString()`` in UTC (``Thu Jan 01 00:00:00 UTC 1970``). Anything else
    uses Python's ``str``.
    """
    if value is None:
        return "null"
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if schema is not None and schema.type is Type.FLOAT32:
            return java_float_string(value)
        return java_double_string(value)
    if isinstance(value, dict):
        ks = vs = None
        if schema is not None and schema.type is Type.MAP:
            ks, vs = schema.key_schema(), schema.value_schema()
        return "{" + ", ".join(f"{_java_str(k, ks)}={_java_str(v, vs)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        vs = schema.value_schema() if schema is not None and schema.type is Type.ARRAY else None
        return "[" + ", ".join(_java_str(v, vs) for v in value) + "]"
    if isinstance(value, _decimal.Decimal):
        return _java_big_decimal_str(value)
    if isinstance(value, (_dt.date, _dt.time)):
        return java_date_string(value)
    return str(value)


java_string = _java_str


def _java_big_decimal_str(value: _decimal.Decimal) -> str:
    # Python's Decimal.__str__ uses the same plain/scientific rule as BigDecimal.toString;
    # Java has no negative zero.
    if value.is_zero() and value.is_signed():
        value = value.copy_abs()
    return str(value)


# -- logical types --------------------------------------------------------------------

_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_MILLIS_PER_DAY = 24 * 60 * 60 * 1000


def _to_utc(value: _dt.datetime) -> _dt.datetime:
    """A naive UTC datetime for ``value`` (naive values are taken to be UTC already)."""
    if value.tzinfo is not None and value.utcoffset() is not None:
        return value.astimezone(_dt.UTC).replace(tzinfo=None)
    return value


def _check_logical(schema: Schema, name: str, what: str) -> None:
    if schema.name is None or schema.name != name:
        raise DataError(f"Requested conversion of {what} object but the schema does not match.")


class Decimal:
    """Logical type ``org.apache.kafka.connect.data.Decimal``: BYTES holding the
    big-endian two's-complement unscaled value; the scale is the ``scale`` schema
    parameter. Python values are :class:`decimal.Decimal`."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Decimal"
    SCALE_FIELD = "scale"

    @staticmethod
    def builder(scale: int) -> SchemaBuilder:
        return (
            SchemaBuilder.bytes().name(Decimal.LOGICAL_NAME).parameter(Decimal.SCALE_FIELD, str(int(scale))).version(1)
        )

    @staticmethod
    def schema(scale: int) -> Schema:
        return Decimal.builder(scale).build()

    @staticmethod
    def scale(schema: Schema) -> int:
        scale = (schema.parameters or {}).get(Decimal.SCALE_FIELD)
        if scale is None:
            raise DataError("Invalid Decimal schema: scale parameter not found.")
        try:
            return int(scale)
        except ValueError as e:
            raise DataError("Invalid scale parameter found in Decimal schema: ") from e

    @staticmethod
    def unscaled(value: _decimal.Decimal) -> tuple[int, int]:
        """``(unscaled value, scale)`` of a finite decimal, as BigDecimal holds it."""
        if not value.is_finite():
            raise DataError(f"Decimal value {value} is not finite")
        sign, digits, exponent = value.as_tuple()
        unscaled = int("".join(map(str, digits)) or "0")
        return (-unscaled if sign else unscaled), -int(exponent)

    @staticmethod
    def from_logical(schema: Schema, value: _decimal.Decimal) -> bytes:
        schema_scale = Decimal.scale(schema)
        unscaled, scale = Decimal.unscaled(value)
        if scale != schema_scale:
            raise DataError(
                "Decimal value has mismatching scale for given Decimal schema. "
                f"Schema has scale {schema_scale}, value has scale {scale}."
            )
        return _big_integer_bytes(unscaled)

    @staticmethod
    def to_logical(schema: Schema, value: bytes) -> _decimal.Decimal:
        return _decimal_from_unscaled(int.from_bytes(bytes(value), "big", signed=True), Decimal.scale(schema))


def _big_integer_bytes(n: int) -> bytes:
    """``BigInteger.toByteArray()``: minimal big-endian two's complement."""
    bit_length = n.bit_length() if n >= 0 else (-n - 1).bit_length()
    return n.to_bytes(bit_length // 8 + 1, "big", signed=True)


def _decimal_from_unscaled(unscaled: int, scale: int) -> _decimal.Decimal:
    digits = tuple(int(c) for c in str(abs(unscaled)))
    return _decimal.Decimal((1 if unscaled < 0 else 0, digits, -scale))


class Date:
    """Logical type ``org.apache.kafka.connect.data.Date``: INT32 days since the epoch.
    Python values are :class:`datetime.date` (a ``datetime`` at midnight UTC is accepted)."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Date"
    SCHEMA: Schema

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int32().name(Date.LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: _dt.date) -> int:
        _check_logical(schema, Date.LOGICAL_NAME, "Date")
        if isinstance(value, _dt.datetime):
            utc = _to_utc(value)
            if utc.time() != _dt.time(0):
                raise DataError("Kafka Connect Date type should not have any time fields set to non-zero values.")
            value = utc.date()
        return (value - _EPOCH_DATE).days

    @staticmethod
    def to_logical(schema: Schema, value: int) -> _dt.date:
        _check_logical(schema, Date.LOGICAL_NAME, "Date")
        return _EPOCH_DATE + _dt.timedelta(days=value)


class Time:
    """Logical type ``org.apache.kafka.connect.data.Time``: INT32 milliseconds since
    midnight. Python values are :class:`datetime.time` (naive, UTC)."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Time"
    SCHEMA: Schema

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int32().name(Time.LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: _dt.time | _dt.datetime) -> int:
        _check_logical(schema, Time.LOGICAL_NAME, "Time")
        if isinstance(value, _dt.datetime):
            utc = _to_utc(value)
            if utc.date() != _EPOCH_DATE:
                raise DataError("Kafka Connect Time type should not have any date fields set to non-zero values.")
            value = utc.time()
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000

    @staticmethod
    def to_logical(schema: Schema, value: int) -> _dt.time:
        _check_logical(schema, Time.LOGICAL_NAME, "Date")
        if value < 0 or value > _MILLIS_PER_DAY:
            raise DataError("Time values must use number of milliseconds greater than 0 and less than 86400000")
        if value == _MILLIS_PER_DAY:
            return _dt.time.max
        seconds, millis = divmod(value, 1000)
        minutes, second = divmod(seconds, 60)
        hour, minute = divmod(minutes, 60)
        return _dt.time(hour, minute, second, millis * 1000)


class Timestamp:
    """Logical type ``org.apache.kafka.connect.data.Timestamp``: INT64 milliseconds since
    the epoch. Python values are :class:`datetime.datetime`; naive values are taken as
    UTC and :meth:`to_logical` returns timezone-aware UTC datetimes."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Timestamp"
    SCHEMA: Schema

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int64().name(Timestamp.LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: _dt.date) -> int:
        _check_logical(schema, Timestamp.LOGICAL_NAME, "Timestamp")
        if not isinstance(value, _dt.datetime):
            value = _dt.datetime(value.year, value.month, value.day)
        delta = _to_utc(value) - _EPOCH.replace(tzinfo=None)
        return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000

    @staticmethod
    def to_logical(schema: Schema, value: int) -> _dt.datetime:
        _check_logical(schema, Timestamp.LOGICAL_NAME, "Timestamp")
        return _EPOCH + _dt.timedelta(milliseconds=value)


Date.SCHEMA = Date.builder().build()
Time.SCHEMA = Time.builder().build()
Timestamp.SCHEMA = Timestamp.builder().build()

# The logical types Connect stores as a count of days or milliseconds, by name.
DATE_TIME_TYPES: dict[str, type[Date] | type[Time] | type[Timestamp]] = {
    Date.LOGICAL_NAME: Date,
    Time.LOGICAL_NAME: Time,
    Timestamp.LOGICAL_NAME: Timestamp,
}


def date_time_from_logical(schema: Schema, value: Any) -> Any:
    """``value`` as Connect stores it when ``schema`` is Date, Time or Timestamp, else as it is."""
    logical = DATE_TIME_TYPES.get(schema.name) if schema.name is not None else None
    return value if logical is None else logical.from_logical(schema, value)


_LOGICAL_TYPE_CLASSES[Decimal.LOGICAL_NAME] = _decimal.Decimal
_LOGICAL_TYPE_CLASSES[Date.LOGICAL_NAME] = _dt.date
_LOGICAL_TYPE_CLASSES[Time.LOGICAL_NAME] = _dt.time
_LOGICAL_TYPE_CLASSES[Timestamp.LOGICAL_NAME] = _dt.datetime


def schema_type_of(value: Any) -> Type | None:
    """The Connect schema type of a schemaless value (Kafka's ``ConnectSchema.schemaType``),
    or ``None`` for values Connect's data API has no schemaless type for (decimals, dates
    and times, arbitrary objects). Python ``int`` maps to INT64 (what JSON gives), ``float``
    to FLOAT64, ``bytes``/``bytearray``/``memoryview`` to BYTES, ``list``/``tuple`` to
    ARRAY, ``dict`` to MAP."""
    if isinstance(value, bool):
        return Type.BOOLEAN
    if isinstance(value, int):
        return Type.INT64
    if isinstance(value, float):
        return Type.FLOAT64
    if isinstance(value, str):
        return Type.STRING
    if isinstance(value, (bytes, bytearray, memoryview)):
        return Type.BYTES
    if isinstance(value, (list, tuple)):
        return Type.ARRAY
    if isinstance(value, dict):
        return Type.MAP
    if isinstance(value, Struct):
        return Type.STRUCT
    return None
