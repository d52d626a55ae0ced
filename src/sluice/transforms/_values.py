"""Reading record values in the built-in transforms: Kafka's ``Requirements`` (each
raises :class:`~sluice.api.errors.DataError` with Kafka's wording), struct fields with or
without their defaults, and numbers as Connect's ``Values`` and Java's ``Number`` give them."""

from __future__ import annotations

import decimal as _decimal
import re
from collections.abc import Mapping
from typing import Any

from sluice._java.names import class_name
from sluice._java.numbers import decimal_from_java_string, float_to_int, narrow
from sluice.api.data import Schema, Struct
from sluice.api.errors import DataError
from sluice.api.records import ConnectRecord, SinkRecord

__all__ = [
    "field_value",
    "number_to_int",
    "parse_connect_number",
    "require_map",
    "require_map_or_null",
    "require_schema",
    "require_sink_record",
    "require_struct",
    "require_struct_or_null",
]


# -- requirements -----------------------------------------------------------------------------


def require_schema(schema: Schema | None, purpose: str) -> Schema:
    if schema is None:
        raise DataError(f"Schema required for [{purpose}]")
    return schema


def require_map(value: Any, purpose: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise DataError(f"Only Map objects supported in absence of schema for [{purpose}], found: {class_name(value)}")
    return value  # type: ignore[return-value]


def require_map_or_null(value: Any, purpose: str) -> dict[str, Any] | None:
    return None if value is None else require_map(value, purpose)


def require_struct(value: Any, purpose: str) -> Struct:
    if not isinstance(value, Struct):
        raise DataError(f"Only Struct objects supported for [{purpose}], found: {class_name(value)}")
    return value


def require_struct_or_null(value: Any, purpose: str) -> Struct | None:
    return None if value is None else require_struct(value, purpose)


def require_sink_record(record: ConnectRecord, purpose: str) -> SinkRecord:
    if not isinstance(record, SinkRecord):
        raise DataError(f"Only SinkRecord supported for [{purpose}], found: {class_name(record)}")
    return record


# -- fields ---------------------------------------------------------------------------------


def field_value(struct: Struct, field: Any, replace_null_with_default: bool) -> Any:
    """A struct field's value, falling back to the field's default for a null only when
    ``replace_null_with_default`` (``Struct.get`` vs ``Struct.getWithoutDefault``)."""
    if replace_null_with_default:
        return struct.get(field)
    return struct.get_without_default(field if isinstance(field, str) else field.name)


# -- numbers --------------------------------------------------------------------------------

_INTEGER = re.compile(r"[+-]?\d+")


def parse_connect_number(text: str) -> int | _decimal.Decimal:
    """A number written in a string, as Connect's ``Values.convertTo…(null, text)`` reads
    it: an integer, or a decimal for anything with a fraction or an exponent. Raises
    :class:`~sluice.api.errors.DataError` (``Unable to convert …``) for anything else."""
    if _INTEGER.fullmatch(text):
        return int(text)
    try:
        return decimal_from_java_string(text)
    except ValueError:
        raise DataError(f"Unable to convert {text} (class java.lang.String) to a number") from None


def number_to_int(value: int | float | _decimal.Decimal, bits: int) -> int:
    """``Number.byteValue()``/``shortValue()``/``intValue()``/``longValue()`` of a Java
    number represented by ``value``: integers and decimals keep their low bits (decimals are
    truncated first), doubles are cast as :func:`~sluice._java.numbers.float_to_int`."""
    if isinstance(value, float):
        return float_to_int(value, bits)
    if isinstance(value, _decimal.Decimal) and not value.is_finite():
        raise DataError(f"Decimal value {value} is not finite")
    return narrow(int(value), bits)
