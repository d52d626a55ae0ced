"""``MaskField``: replace the content of fields by an "empty" value of their type, or by a
fixed replacement (``org.apache.kafka.connect.transforms.MaskField$Key`` / ``$Value``).

Without ``replacement``: false, 0, 0.0, the zero decimal, "", the epoch (for dates, times
and timestamps), an empty list or an empty map. With ``replacement``, numbers and strings
take that text converted to their type (other types are refused). Null fields stay null.
The key or value itself must be a struct or map (a null one is refused, as in Kafka).
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from typing import Any

from sluice._java.dates import EPOCH
from sluice._java.names import class_name
from sluice._java.numbers import decimal_from_java_string, to_float32
from sluice.api.config import ConfigDef, ConfigType, Importance, NonEmptyString, ValidList
from sluice.api.data import Schema, Struct, Type
from sluice.api.errors import DataError
from sluice.api.records import ConnectRecord
from sluice.transforms._config import REPLACE_NULL_WITH_DEFAULT_CONFIG, define_replace_null_with_default, parse_config
from sluice.transforms._records import KeyOrValueTransformation, KeySide, ValueSide
from sluice.transforms._schemas import int_bits
from sluice.transforms._values import field_value, number_to_int, parse_connect_number, require_map, require_struct

__all__ = ["MaskField", "MaskFieldKey", "MaskFieldValue"]

FIELDS_CONFIG = "fields"
REPLACEMENT_CONFIG = "replacement"
PURPOSE = "mask fields"

CONFIG_DEF = define_replace_null_with_default(
    ConfigDef()
    .define(
        FIELDS_CONFIG,
        ConfigType.LIST,
        validator=ValidList.any_non_duplicate_values(False, False),
        importance=Importance.HIGH,
        documentation="The fields whose values are masked.",
    )
    .define(
        REPLACEMENT_CONFIG,
        ConfigType.STRING,
        None,
        NonEmptyString(),
        Importance.LOW,
        "Text to put in every masked field instead of the empty value of its type; only for numeric "
        "and string fields, converted to the field's type.",
    )
)


def _empty_value(value: Any) -> Any:
    """The "null value" of ``value``'s type."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return 0
    if isinstance(value, float):
        return 0.0
    if isinstance(value, _decimal.Decimal):
        return _decimal.Decimal(0)
    if isinstance(value, str):
        return ""
    if isinstance(value, _dt.datetime):
        return EPOCH
    if isinstance(value, _dt.date):
        return _dt.date(1970, 1, 1)
    if isinstance(value, _dt.time):
        return _dt.time(0)
    if isinstance(value, list):
        return []
    if isinstance(value, dict):
        return {}
    raise DataError(f"Cannot mask value of type: class {class_name(value)}")


def _replacement_for(value: Any, schema: Schema | None, replacement: str) -> Any:
    """``replacement`` converted to the type of ``value``, as Kafka picks the conversion by
    the value's class (the schema, if known, tells the width of integers and floats)."""
    schema_type = schema.type if schema is not None else None
    if isinstance(value, str):
        return replacement
    if isinstance(value, _decimal.Decimal):
        try:
            return decimal_from_java_string(replacement)
        except ValueError:
            raise DataError(f"Unable to convert {replacement} (class java.lang.String) to number") from None
    if isinstance(value, int) and not isinstance(value, bool):
        bits = int_bits(schema_type) if schema_type in (Type.INT8, Type.INT16, Type.INT32, Type.INT64) else 64
        return number_to_int(parse_connect_number(replacement), bits)
    if isinstance(value, float):
        f = float(parse_connect_number(replacement))
        return to_float32(f) if schema_type is Type.FLOAT32 else f
    raise DataError(f"Cannot mask value of type class {class_name(value)} with custom replacement.")


class MaskField(KeyOrValueTransformation[ConnectRecord]):
    """Shared logic of :class:`MaskFieldKey` and :class:`MaskFieldValue`."""

    def __init__(self) -> None:
        # Public, as configure() parsed them: what a columnar form of the chain reads.
        self.masked_fields: frozenset[str] = frozenset()
        self._field_order: list[str] = []
        self._replacement: str | None = None
        self._replace_null_with_default = True

    def configure(self, configs: dict[str, Any]) -> None:
        parsed = parse_config(CONFIG_DEF, configs)
        self._field_order = list(parsed[FIELDS_CONFIG])
        self.masked_fields = frozenset(self._field_order)
        self._replacement = parsed[REPLACEMENT_CONFIG]
        self._replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            original = require_map(value, PURPOSE)
            updated = dict(original)
            for name in self._field_order:
                updated[name] = self.masked(original.get(name), None)
            return self.new_record(record, schema, updated)
        struct = require_struct(value, PURPOSE)
        masked = Struct(struct.schema)
        for field in struct.schema.fields():
            current = field_value(struct, field, self._replace_null_with_default)
            masked.put(field, self.masked(current, field.schema) if field.name in self.masked_fields else current)
        return self.new_record(record, schema, masked)

    def masked(self, value: Any, schema: Schema | None) -> Any:
        if value is None:
            return None
        if self._replacement is None:
            return _empty_value(value)
        return _replacement_for(value, schema, self._replacement)


class MaskFieldKey(KeySide, MaskField):
    """``org.apache.kafka.connect.transforms.MaskField$Key``: mask fields of the key."""


class MaskFieldValue(ValueSide, MaskField):
    """``org.apache.kafka.connect.transforms.MaskField$Value``: mask fields of the value."""
