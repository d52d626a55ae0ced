"""``Cast``: change the type of fields, or of the whole key or value
(``org.apache.kafka.connect.transforms.Cast$Key`` / ``$Value``).

``spec`` is either ``field:type,field:type`` to cast fields of a struct or map, or a single
``type`` to cast the whole key or value. Target types are ``int8``, ``int16``, ``int32``,
``int64``, ``float32``, ``float64``, ``boolean`` and ``string``; sources may be any of those
or bytes (bytes only become strings, base64-encoded). Numbers narrow as in Java (integers
keep their low bits, floating point values are truncated and saturated), logical types are
cast from their underlying representation (days, milliseconds) except to string, where
dates and times are written in ISO 8601 and decimals in plain notation.
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal as _decimal
from typing import Any

from sluice._java.dates import EPOCH, SimpleDateFormat, to_utc_datetime
from sluice._java.names import class_name
from sluice._java.numbers import parse_java_double, parse_java_float, parse_java_integer, to_float32
from sluice._java.text import java_split
from sluice.api.config import ConfigDef, ConfigType, Importance, LambdaValidator
from sluice.api.data import (
    Schema,
    SchemaBuilder,
    Struct,
    Type,
    date_time_from_logical,
    java_double_string,
    java_float_string,
    java_string,
    schema_type_of,
)
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import ConnectRecord
from sluice.transforms._config import REPLACE_NULL_WITH_DEFAULT_CONFIG, define_replace_null_with_default, parse_config
from sluice.transforms._records import KeyOrValueTransformation, KeySide, ValueSide
from sluice.transforms._schemas import LRUCache, copy_schema_basics, int_bits
from sluice.transforms._values import field_value, number_to_int, require_map, require_struct

__all__ = ["Cast", "CastKey", "CastValue"]

SPEC_CONFIG = "spec"
PURPOSE = "cast types"

_INPUT_TYPES = (
    Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64, Type.BOOLEAN, Type.STRING, Type.BYTES,
)  # fmt: skip
_OUTPUT_TYPES = _INPUT_TYPES[:-1]
_MILLIS_PER_DAY = 86_400_000


def _type_list(types: tuple[Type, ...]) -> str:
    return "[" + ", ".join(t.name for t in types) + "]"


def _parse_type(text: str) -> Type:
    name = text.strip().upper()
    try:
        target = Type[name]
    except KeyError:
        raise ConfigError(f"Invalid type found in casting spec: {text.strip()}") from None
    if target not in _OUTPUT_TYPES:
        raise ConfigError(
            f"Cast transformation does not support casting to {target.name}; supported types are "
            f"{_type_list(_OUTPUT_TYPES)}"
        )
    return target


def parse_spec(mappings: list[str]) -> dict[str | None, Type]:
    """``{field: type}`` from the ``spec`` entries; the key ``None`` holds a whole-value cast.
    Raises :class:`ConfigError` for unknown or unsupported types and malformed entries."""
    casts: dict[str | None, Type] = {}
    whole_value = False
    for mapping in mappings:
        parts = java_split(mapping, ":")
        if len(parts) > 2 or not parts:
            raise ConfigError(SPEC_CONFIG, ",".join(mappings), f"Invalid cast mapping: {mapping}")
        if len(parts) == 1:
            casts[None] = _parse_type(parts[0])
            whole_value = True
        else:
            casts[parts[0].strip()] = _parse_type(parts[1])
    if whole_value and len(mappings) > 1:
        raise ConfigError(
            "Cast transformations that specify a type to cast the entire value to may only specify a single "
            "cast in their spec"
        )
    return casts


def _validate_spec(name: str, value: Any) -> None:
    if not value:
        raise ConfigError("Must specify at least one field to cast.")
    parse_spec(list(value))


CONFIG_DEF = define_replace_null_with_default(
    ConfigDef().define(
        SPEC_CONFIG,
        ConfigType.LIST,
        validator=LambdaValidator.with_(
            _validate_spec, "comma-separated field:type pairs, or one type for the whole value"
        ),
        importance=Importance.HIGH,
        documentation=(
            "What to cast: field:type pairs separated by commas (field1:type,field2:type) cast those "
            "fields of a struct or map; a single type casts the whole key or value. Types: int8, int16, "
            "int32, int64, float32, float64, boolean, string. Bytes can only be cast to string."
        ),
    )
)

_ISO_TIME = SimpleDateFormat("HH:mm:ss.SSS'Z'")
_ISO_DATE = SimpleDateFormat("yyyy-MM-dd")
_ISO_TIMESTAMP = SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")


def _epoch_millis(value: _dt.date | _dt.time) -> int:
    delta = to_utc_datetime(value) - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def format_date(value: _dt.date | _dt.time) -> str:
    """A date, time or timestamp as Connect's ``Values.dateFormatFor`` writes it: before
    the end of the first day after the epoch (and before the epoch) as a time
    (``HH:mm:ss.SSSZ``), on a day boundary as a date (``yyyy-MM-dd``), otherwise as an
    ISO 8601 timestamp; always in UTC."""
    millis = _epoch_millis(value)
    if millis < _MILLIS_PER_DAY:
        fmt = _ISO_TIME
    elif millis % _MILLIS_PER_DAY == 0:
        fmt = _ISO_DATE
    else:
        fmt = _ISO_TIMESTAMP
    return fmt.format(EPOCH + _dt.timedelta(milliseconds=millis))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, _decimal.Decimal)) and not isinstance(value, bool)


def _unexpected(value: Any) -> DataError:
    return DataError(f"Unexpected type in Cast transformation: class {class_name(value)}")


def _to_int(value: Any, target: Type) -> int:
    bits = int_bits(target)
    if isinstance(value, bool):
        return 1 if value else 0
    if _is_number(value):
        return number_to_int(value, bits)
    if isinstance(value, str):
        return parse_java_integer(value, bits)
    raise _unexpected(value)


def _to_float(value: Any, target: Type) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if _is_number(value):
        f = float(value)
        return to_float32(f) if target is Type.FLOAT32 else f
    if isinstance(value, str):
        return parse_java_float(value) if target is Type.FLOAT32 else parse_java_double(value)
    raise _unexpected(value)


def _to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if _is_number(value):
        return number_to_int(value, 64) != 0
    if isinstance(value, str):
        return value.lower() == "true"
    raise _unexpected(value)


def _to_string(value: Any, source_type: Type) -> str:
    if isinstance(value, (_dt.date, _dt.time)):
        return format_date(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, float):
        return java_float_string(value) if source_type is Type.FLOAT32 else java_double_string(value)
    return java_string(value)


def cast_value(schema: Schema | None, value: Any, target: Type) -> Any:
    """Cast one value (described by ``schema``, or schemaless when ``None``) to ``target``."""
    if value is None:
        return None
    source_type = schema.type if schema is not None else schema_type_of(value)
    if source_type is None:
        raise DataError(
            f"Cast transformation was passed a value of type class {class_name(value)} which is not "
            "supported by Connect's data API"
        )
    if source_type not in _INPUT_TYPES:
        raise DataError(
            f"Cast transformation does not support casting from {source_type.name}; supported types are "
            f"{_type_list(_INPUT_TYPES)}"
        )
    original = value
    if schema is not None and schema.name is not None and target is not Type.STRING:
        value = date_time_from_logical(schema, value)
    try:
        if target in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
            return _to_int(value, target)
        if target in (Type.FLOAT32, Type.FLOAT64):
            return _to_float(value, target)
        if target is Type.BOOLEAN:
            return _to_boolean(value)
        if target is Type.STRING:
            return _to_string(value, source_type)
    except ValueError as e:
        raise DataError(f"Value ({java_string(original)}) was out of range for requested data type") from e
    raise DataError(f"{target.name} is not supported in the Cast transformation.")


def _builder_for(target: Type) -> SchemaBuilder:
    return SchemaBuilder(target)


class Cast(KeyOrValueTransformation[ConnectRecord]):
    """Shared logic of :class:`CastKey` and :class:`CastValue`."""

    def __init__(self) -> None:
        # Public, as configure() parsed them: what a columnar form of the chain reads.
        self.casts: dict[str | None, Type] = {}
        self.whole_value_type: Type | None = None
        self._replace_null_with_default = True
        self._schema_cache = LRUCache(16)

    def configure(self, configs: dict[str, Any]) -> None:
        parsed = parse_config(CONFIG_DEF, configs)
        self.casts = parse_spec(parsed[SPEC_CONFIG])
        self.whole_value_type = self.casts.get(None)
        self._replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._schema_cache = LRUCache(16)

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            return self.new_record(record, None, self.cast_schemaless(value))
        updated_schema = self.updated_schema(schema)
        return self.new_record(record, updated_schema, self.cast_with_schema(schema, value, updated_schema))

    # schema ---------------------------------------------------------------------------------

    def updated_schema(self, schema: Schema) -> Schema:
        """The output schema for ``schema`` (cached per input schema)."""
        cached = self._schema_cache.get(schema)
        if cached is not None:
            return cached
        if self.whole_value_type is not None:
            builder = copy_schema_basics(schema, _builder_for(self.whole_value_type))
        else:
            builder = copy_schema_basics(schema, SchemaBuilder.struct())
            for field in schema.fields():
                target = self.casts.get(field.name)
                if target is None:
                    builder.field(field.name, field.schema)
                    continue
                field_builder = _builder_for(target)
                if field.schema.optional:
                    field_builder.optional()
                if field.schema.default_value is not None:
                    field_builder.default_value(cast_value(field.schema, field.schema.default_value, target))
                builder.field(field.name, field_builder.build())
        if schema.optional:
            builder.optional()
        if schema.default_value is not None:
            builder.default_value(cast_value(schema, schema.default_value, builder.type))
        updated = builder.build()
        self._schema_cache.put(schema, updated)
        return updated

    # values ---------------------------------------------------------------------------------

    def cast_schemaless(self, value: Any) -> Any:
        if self.whole_value_type is not None:
            return cast_value(None, value, self.whole_value_type)
        original = require_map(value, PURPOSE)
        updated = dict(original)
        for name, target in self.casts.items():
            if name is not None:  # None: the whole value's cast, handled above
                updated[name] = cast_value(None, original.get(name), target)
        return updated

    def cast_with_schema(self, schema: Schema, value: Any, updated_schema: Schema) -> Any:
        if self.whole_value_type is not None:
            return cast_value(schema, value, self.whole_value_type)
        struct = require_struct(value, PURPOSE)
        updated = Struct(updated_schema)
        for field in struct.schema.fields():
            original = field_value(struct, field, self._replace_null_with_default)
            target = self.casts.get(field.name)
            new = cast_value(field.schema, original, target) if target is not None else original
            updated.put(updated_schema.field(field.name), new)  # type: ignore[arg-type]
        return updated


class CastKey(KeySide, Cast):
    """``org.apache.kafka.connect.transforms.Cast$Key``: cast fields of the key, or the key."""


class CastValue(ValueSide, Cast):
    """``org.apache.kafka.connect.transforms.Cast$Value``: cast fields of the value, or the value."""
