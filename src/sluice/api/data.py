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

import enum
from collections.abc import Mapping
from typing import Any

from sluice.api.errors import DataError

__all__ = ["Field", "Schema", "SchemaBuilder", "Struct", "Type"]


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
        if self.type is not Type.MAP:
            raise DataError("Cannot look up key schema on non-map type")
        assert self._key_schema is not None
        return self._key_schema

    def value_schema(self) -> Schema:
        if self.type not in (Type.MAP, Type.ARRAY):
            raise DataError("Cannot look up value schema on non-array and non-map type")
        assert self._value_schema is not None
        return self._value_schema

    def schema(self) -> Schema:
        return self

    def _identity(self) -> tuple:
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
        """Raise :class:`DataError` if ``value`` does not fit ``schema``."""
        where = f' for field: "{field.name}"' if field else ""
        if value is None:
            if schema is not None and not schema.optional and schema.default_value is None:
                raise DataError(f"Invalid value: null used for required field{where}, schema type: {schema.type.name}")
            return
        if schema is None:
            return
        t = schema.type
        ok: bool
        if t in _INT_RANGES:
            if schema.name in _LOGICAL_TYPE_CLASSES:
                ok = isinstance(value, _LOGICAL_TYPE_CLASSES[schema.name])
            else:
                lo, hi = _INT_RANGES[t]
                ok = isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi
        elif t in (Type.FLOAT32, Type.FLOAT64):
            ok = isinstance(value, float)
        elif t is Type.BOOLEAN:
            ok = isinstance(value, bool)
        elif t is Type.STRING:
            ok = isinstance(value, str)
        elif t is Type.BYTES:
            if schema.name in _LOGICAL_TYPE_CLASSES:
                ok = isinstance(value, _LOGICAL_TYPE_CLASSES[schema.name])
            else:
                ok = isinstance(value, (bytes, bytearray, memoryview))
        elif t is Type.ARRAY:
            ok = isinstance(value, list)
            if ok:
                for item in value:
                    Schema.validate_value(schema.value_schema(), item)
        elif t is Type.MAP:
            ok = isinstance(value, dict)
            if ok:
                for k, v in value.items():
                    Schema.validate_value(schema.key_schema(), k)
                    Schema.validate_value(schema.value_schema(), v)
        else:
            ok = isinstance(value, Struct) and value.schema == schema
            if isinstance(value, Struct) and not ok:
                raise DataError(f"Struct schemas do not match{where}.")
        if not ok:
            raise DataError(
                f"Invalid Java object for schema with type {t.name}: {type(value).__name__}{where}"
            )


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

    def put(self, name: str | Field, value: Any) -> Struct:
        f = name if isinstance(name, Field) else self._field(name)
        Schema.validate_value(f.schema, value, f)
        self._values[f.index] = value
        return self

    def validate(self) -> None:
        for f in self.schema.fields():
            Schema.validate_value(f.schema, self._values[f.index], f)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Struct) and self.schema == other.schema and self._values == other._values

    def __hash__(self) -> int:
        return hash(tuple(_freeze(v) for v in self._values))

    def __repr__(self) -> str:
        # Kafka's Struct.toString(): "Struct{a=1,b=x}", null fields omitted
        parts = [
            f"{f.name}={_java_str(self._values[f.index])}"
            for f in self.schema.fields()
            if self._values[f.index] is not None
        ]
        return "Struct{" + ",".join(parts) + "}"

    __str__ = __repr__


def _java_str(value: Any) -> str:
    """Render a Connect value the way Java's ``toString`` would."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_java_str(k)}={_java_str(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_java_str(v) for v in value) + "]"
    return str(value)


java_string = _java_str
