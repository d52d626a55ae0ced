"""Kafka Connect's ``org.apache.kafka.connect.data.Values``: the string form of a Connect
value (:func:`convert_to_string`) and the schema and value inferred from a string
(:func:`parse_string`), as ``SimpleHeaderConverter`` and ``InsertHeader`` use them. Checked byte for byte
against Kafka 4.3.1 by ``tests/integration/test_converter_parity.py``.

Writing (``convertToString``) goes by the value's Java class, which Python gets from the
schema: strings as they are (quoted, with ``\\`` and ``"`` escaped, inside arrays, maps
and structs), numbers as Java prints them (``Float.toString`` for FLOAT32 values),
booleans, bytes as base64, ``[a,b]``, ``{k:v}``, structs as ``{"field":value}``, and
dates, times and timestamps by their epoch milliseconds, not their schema (Kafka's
``dateFormatFor``): under one day (including every instant before 1970) as a time
``HH:mm:ss.SSSZ``, on a midnight as a date ``yyyy-MM-dd``, otherwise as a timestamp
``yyyy-MM-ddTHH:mm:ss.SSSZ`` — unquoted even inside arrays and maps.

Reading (``parseString``) cuts the text into tokens at the unescaped delimiters
``: , { } [ ] "`` (a backslash escapes the next character and stays in the token):

* ``null`` alone gives ``None``; ``true``/``false`` (exactly, case-sensitive) alone a
  BOOLEAN; with anything after them they are text.
* ``[...]``/``{...}`` are arrays/maps of embedded values (embedded strings are quoted,
  their escapes kept as written). Elements of one type, or numeric types that widen to
  one, give a typed array or map and the elements are converted to it; mixed types give
  an array or map whose element (key, value) schema is ``None`` (Kafka's
  ``SchemaBuilder.arrayOfNull()``/``mapOfNull()``). A null element among typed ones,
  or anything malformed, makes the whole input the STRING it was.
* A token starting with a digit is tried first as an ISO-8601 time (13 chars), timestamp
  (24) or date (10), parsed leniently as ``SimpleDateFormat`` does (``2024-02-30`` is
  March 1st; only a prefix has to match), then — like one starting with ``+`` or ``-`` —
  as a ``BigDecimal``: integral values as the smallest of INT8/INT16/INT32/INT64, others
  as FLOAT32 when finite there (``0.1`` is the float32 0.1), else FLOAT64, else a Decimal
  of the literal's scale. At the top level only the first token counts (``1,2`` is the
  INT8 ``1``); anything else is the STRING of the whole input.

Python values: Date → :class:`datetime.date`, Time → :class:`datetime.time`, Timestamp →
UTC :class:`datetime.datetime`, Decimal → :class:`decimal.Decimal`, FLOAT32 → the float32
value as a Python float. Kafka formats and parses dates in the JVM's default time zone;
Sluice always uses UTC. Dates before the Gregorian cutover (1582) are proleptic Gregorian
here, Julian in Java.
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal as _decimal
import math
import re
import struct as _struct
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from sluice._java.numbers import narrow, to_float32
from sluice.api.converter import SchemaAndValue
from sluice.api.data import (
    Date,
    Decimal,
    Schema,
    Struct,
    Time,
    Timestamp,
    Type,
    java_double_string,
    java_float_string,
    java_string,
)
from sluice.api.errors import DataError

__all__ = ["convert_to_string", "parse_string"]

_MILLIS_PER_DAY = 86_400_000
_UTC = _dt.UTC
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)
_EPOCH_DATE = _dt.date(1970, 1, 1)
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_TEMPORAL = (Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME)


@dataclass(frozen=True)
class _JavaDate:
    """A ``java.util.Date`` while parsing: epoch milliseconds, typed by the final schema."""

    millis: int


# ------------------------------------------------------------------------------ writing


def _millis(schema: Schema | None, value: Any) -> int:
    if isinstance(value, _JavaDate):
        return value.millis
    if isinstance(value, _dt.datetime):
        return Timestamp.from_logical(Timestamp.SCHEMA, value)
    if isinstance(value, _dt.date):
        return Date.from_logical(Date.SCHEMA, value) * _MILLIS_PER_DAY
    return Time.from_logical(Time.SCHEMA, value)


def _format_date(millis: int) -> str:
    """``Values.dateFormatFor(date).format(date)`` in UTC."""
    moment = _EPOCH + _dt.timedelta(milliseconds=millis)
    if millis < _MILLIS_PER_DAY:
        return f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}.{moment.microsecond // 1000:03d}Z"
    if millis % _MILLIS_PER_DAY == 0:
        return f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}:"
        f"{moment.second:02d}.{moment.microsecond // 1000:03d}Z"
    )


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _append(out: list[str], schema: Schema | None, value: Any, embedded: bool) -> None:
    if value is None:
        out.append("null")
    elif isinstance(value, bool):
        out.append("true" if value else "false")
    elif isinstance(value, str):
        out.append(f'"{_escape(value)}"' if embedded else value)
    elif isinstance(value, float):
        out.append(
            java_float_string(value)
            if schema is not None and schema.type is Type.FLOAT32
            else java_double_string(value)
        )
    elif isinstance(value, (int, _decimal.Decimal)):
        out.append(java_string(value))
    elif isinstance(value, (bytes, bytearray, memoryview)):
        text = base64.b64encode(value).decode("ascii")
        out.append(f'"{text}"' if embedded else text)
    elif isinstance(value, (list, tuple)):
        vs = schema.value_schema() if schema is not None and schema.type is Type.ARRAY else None
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _append(out, vs, item, True)
        out.append("]")
    elif isinstance(value, dict):
        ks = vs = None
        if schema is not None and schema.type is Type.MAP:
            ks, vs = schema.key_schema(), schema.value_schema()
        out.append("{")
        for i, (k, v) in enumerate(value.items()):
            if i:
                out.append(",")
            _append(out, ks, k, True)
            out.append(":")
            _append(out, vs, v, True)
        out.append("}")
    elif isinstance(value, Struct):
        out.append("{")
        for i, f in enumerate(value.schema.fields()):
            if i:
                out.append(",")
            _append(out, None, f.name, True)
            out.append(":")
            _append(out, f.schema, value.get(f), True)
        out.append("}")
    elif isinstance(value, (_dt.date, _dt.time, _JavaDate)):
        out.append(_format_date(_millis(schema, value)))
    else:
        raise DataError(f"Failed to serialize unexpected value type {type(value).__name__}: {value!r}")


def convert_to_string(schema: Schema | None, value: Any) -> str | None:
    """``Values.convertToString(schema, value)``; ``None`` for ``None``."""
    if value is None:
        return None
    out: list[str] = []
    _append(out, schema, value, False)
    return "".join(out)


# ------------------------------------------------------------------------------ reading


def _java_trim(text: str) -> str:
    """``String.trim()``: strips every character up to U+0020, nothing else."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def _is_blank(text: str | None) -> bool:
    return text is None or _java_trim(text) == ""


_DELIMITERS = frozenset(':,{}[]"')


class _Parser:
    """``Values.Parser``: a tokenizer with one token of look-ahead and rewinding."""

    __slots__ = ("original", "pos", "next_token", "previous_token")

    def __init__(self, original: str) -> None:
        self.original = original
        self.pos = 0
        self.next_token: str | None = None
        self.previous_token: str | None = None

    def mark(self) -> int:
        return self.pos - (len(self.next_token) if self.next_token is not None else 0)

    def rewind_to(self, position: int) -> None:
        self.pos = position
        self.next_token = None
        self.previous_token = None

    def _more(self) -> bool:
        return self.pos < len(self.original)

    def has_next(self) -> bool:
        return self.next_token is not None or self._more()

    def _consume(self) -> str:
        text = self.original
        escaped = False
        start = self.pos
        while self.pos < len(text):
            c = text[self.pos]
            if c == "\\":
                escaped = not escaped
            elif c in _DELIMITERS:
                if not escaped:
                    if start < self.pos:
                        return text[start : self.pos]
                    self.pos += 1
                    return text[start : start + 1]
                escaped = False
            else:
                escaped = False
            self.pos += 1
        return text[start : self.pos]

    def next(self) -> str:
        if self.next_token is not None:
            self.previous_token = self.next_token
            self.next_token = None
        else:
            self.previous_token = self._consume()
        return self.previous_token

    def next_n(self, n: int) -> str | None:
        start = self.mark()
        for _ in range(n):
            if not self.has_next():
                self.rewind_to(start)
                return None
            self.next()
        return self.original[start : self.pos]

    def can_consume(self, expected: str) -> bool:
        if self._is_next(expected):
            self.next_token = None
            return True
        return False

    def _is_next(self, expected: str) -> bool:
        if self.next_token is None:
            if not self.has_next():
                return False
            self.next_token = self._consume()
        while _is_blank(self.next_token) and self._more():
            self.next_token = self._consume()
        return _java_trim(self.next_token) == expected


_TRUE = SchemaAndValue(Schema.BOOLEAN_SCHEMA, True)
_FALSE = SchemaAndValue(Schema.BOOLEAN_SCHEMA, False)
_BIG_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _array_schema(value_schema: Schema | None) -> Schema:
    return Schema(Type.ARRAY, value_schema=value_schema)


def _map_schema(key_schema: Schema | None, value_schema: Schema | None) -> Schema:
    return Schema(Type.MAP, key_schema=key_schema, value_schema=value_schema)


class _SchemaMerger:
    """``Values.SchemaMerger``: the common schema of the parsed elements, if any."""

    def __init__(self) -> None:
        self.common: Schema | None = None
        self.compatible = True

    def merge(self, latest: SchemaAndValue | None) -> None:
        if latest is not None and latest.schema is not None and self.compatible:
            if self.common is None:
                self.common = latest.schema
            else:
                self.common = _merge_schemas(self.common, latest.schema)
                self.compatible = self.common is not None


_NUMERIC_RANK = {Type.INT8: 0, Type.INT16: 1, Type.INT32: 2, Type.INT64: 3, Type.FLOAT32: 4, Type.FLOAT64: 5}


def _merge_schemas(previous: Schema, new: Schema) -> Schema | None:
    """``Values.mergeSchemas``: numeric types widen; equal types keep one of the two."""
    if previous.type is not new.type:
        if previous.type in _NUMERIC_RANK and new.type in _NUMERIC_RANK:
            return previous if _NUMERIC_RANK[previous.type] > _NUMERIC_RANK[new.type] else new
        return None
    if previous.optional == new.optional:
        return previous if previous.optional else new
    return previous if previous == new else None


class _ValueParser:
    def __init__(self, text: str) -> None:
        self.parser = _Parser(text)

    def _single_token_literal(self, embedded: bool, literal: str) -> bool:
        start = self.parser.mark()
        if self.parser.can_consume(literal) and (embedded or not self.parser.has_next()):
            return True
        self.parser.rewind_to(start)
        return False

    def parse(self, embedded: bool) -> SchemaAndValue | None:
        p = self.parser
        if not p.has_next():
            return None
        if embedded and p.can_consume('"'):
            return self._quoted_string()
        if self._single_token_literal(embedded, "null"):
            return None
        if self._single_token_literal(embedded, "true"):
            return _TRUE
        if self._single_token_literal(embedded, "false"):
            return _FALSE
        start = p.mark()
        try:
            if p.can_consume("["):
                return self._array()
            if p.can_consume("{"):
                return self._map()
        except DataError:
            p.rewind_to(start)
        token = p.next()
        if _is_blank(token):
            return SchemaAndValue(Schema.STRING_SCHEMA, token)
        return self._next_token(embedded, _java_trim(token))

    def _next_token(self, embedded: bool, token: str) -> SchemaAndValue:
        first = token[0]
        digit = first.isdecimal()
        if digit:
            temporal = self._multiple_tokens_as_temporal(token)
            if temporal is not None:
                return temporal
        if digit or first in "+-":
            number = _parse_number(token)
            if number is not None:
                return number
        if embedded:
            raise DataError("Failed to parse embedded value")
        return SchemaAndValue(Schema.STRING_SCHEMA, self.parser.original)

    def _quoted_string(self) -> SchemaAndValue:
        parts: list[str] = []
        p = self.parser
        while p.has_next():
            if p.can_consume('"'):
                break
            parts.append(p.next())
        content = "".join(parts)
        parsed = _parse_temporal(content)
        if parsed is not None:
            return parsed
        return SchemaAndValue(Schema.STRING_SCHEMA, content)

    def _array(self) -> SchemaAndValue:
        p = self.parser
        result: list[Any] = []
        merger = _SchemaMerger()
        while p.has_next():
            if p.can_consume("]"):
                if merger.common is not None:
                    schema = _array_schema(merger.common)
                    result = [_convert_to(merger.common, None, v) for v in result]
                else:
                    schema = _array_schema(None)  # every element null, or no common type
                return SchemaAndValue(schema, result)
            if p.can_consume(","):
                raise DataError("Unable to parse an empty array element: " + p.original)
            element = self.parse(True)
            merger.merge(element)
            result.append(element.value if element is not None else None)
            current = p.mark()
            if p.can_consume("]"):
                p.rewind_to(current)
            elif not p.can_consume(","):
                raise DataError("Array elements missing ',' delimiter")
        if p.previous_token == ",":
            raise DataError("Array is missing element after ',': " + p.original)
        raise DataError("Array is missing terminating ']': " + p.original)

    def _map(self) -> SchemaAndValue:
        p = self.parser
        result: dict[Any, Any] = {}
        keys = _SchemaMerger()
        values = _SchemaMerger()
        while p.has_next():
            if p.can_consume("}"):
                if keys.common is not None and values.common is not None:
                    schema = _map_schema(keys.common, values.common)
                    result = {
                        _convert_to(keys.common, None, k): _convert_to(values.common, None, v)
                        for k, v in result.items()
                    }
                elif keys.common is not None:
                    schema = _map_schema(keys.common, None)
                    result = {_convert_to(keys.common, None, k): v for k, v in result.items()}
                else:
                    schema = _map_schema(None, None)
                return SchemaAndValue(schema, result)
            if p.can_consume(","):
                raise DataError("Unable to parse a map entry with no key or value: " + p.original)
            key = self.parse(True)
            if key is None or key.value is None:
                raise DataError("Map entry may not have a null key: " + p.original)
            if not p.can_consume(":"):
                raise DataError(f"Map entry is missing ':' at {p.pos} in {p.original}")
            value = self.parse(True)
            try:
                result[key.value] = value.value if value is not None else None
            except TypeError as e:  # a list as a map key: fine in Java, not hashable here
                raise DataError("Unhashable map key") from e
            p.can_consume(",")
            keys.merge(key)
            values.merge(value)
        if p.previous_token == ",":
            raise DataError("Map is missing element after ',': " + p.original)
        raise DataError("Map is missing terminating '}': " + p.original)

    def _multiple_tokens_as_temporal(self, token: str) -> SchemaAndValue | None:
        # Times and timestamps span 5 tokens (an unescaped colon is a delimiter).
        p = self.parser
        position = p.mark()
        remainder = p.next_n(4)
        if remainder is not None:
            temporal = _parse_temporal(token + remainder)
            if temporal is not None:
                return temporal
        p.rewind_to(position)
        return _parse_temporal(token)


# -- numbers --------------------------------------------------------------------------


def _f32_bits(value: float) -> int:
    bits: int = _struct.unpack(">I", _struct.pack(">f", value))[0]
    return bits


def _f32_from_bits(bits: int) -> float:
    result: float = _struct.unpack(">f", _struct.pack(">I", bits))[0]
    return result


def _to_float32(value: _decimal.Decimal) -> float:
    """``BigDecimal.floatValue()``: the decimal correctly rounded to single precision."""
    x = float(value)
    f = to_float32(x)
    if x == f or math.isinf(x) or math.isinf(f) or x == 0.0:  # exact, infinite, beyond float32's range, zero
        return f
    # x fell between two float32s: settle the rounding on the exact decimal, not on x.
    bits = _f32_bits(f)
    step = 1 if (abs(x) > abs(f)) else -1
    other_bits = bits + step
    if (other_bits & 0x7FFFFFFF) >= 0x7F800000:
        return f
    other = _f32_from_bits(other_bits)
    exact = Fraction(value)
    d_f, d_o = abs(exact - Fraction(f)), abs(exact - Fraction(other))
    if d_f < d_o:
        return f
    if d_o < d_f:
        return other
    return f if bits % 2 == 0 else other


def _parse_number(token: str) -> SchemaAndValue | None:
    """``ValueParser.parseAsNumber``; ``None`` where ``new BigDecimal(token)`` fails."""
    if not _BIG_DECIMAL.fullmatch(token):
        return None
    value = _decimal.Decimal(token)
    exponent = int(value.as_tuple().exponent)
    if not -(2**31) <= -exponent < 2**31:
        return None  # BigDecimal's scale is an int
    scale = -exponent
    if value.adjusted() < 19 and value == value.to_integral_value():
        integral = int(value)
        if _LONG_MIN <= integral <= _LONG_MAX:
            if -128 <= integral <= 127:
                return SchemaAndValue(Schema.INT8_SCHEMA, integral)
            if -32768 <= integral <= 32767:
                return SchemaAndValue(Schema.INT16_SCHEMA, integral)
            if -(2**31) <= integral < 2**31:
                return SchemaAndValue(Schema.INT32_SCHEMA, integral)
            return SchemaAndValue(Schema.INT64_SCHEMA, integral)
    f = _to_float32(value)
    if not math.isinf(f) and scale != 0:
        return SchemaAndValue(Schema.FLOAT32_SCHEMA, f)
    d = float(value)
    if not math.isinf(d) and scale != 0:
        return SchemaAndValue(Schema.FLOAT64_SCHEMA, d)
    return SchemaAndValue(Decimal.schema(scale), value)


# -- dates ----------------------------------------------------------------------------

# SimpleDateFormat patterns as field lists: "n" a number, anything else a literal.
_DATE_FIELDS = ("n", "-", "n", "-", "n")
_TIME_FIELDS = ("n", ":", "n", ":", "n", ".", "n", "Z")
_TIMESTAMP_FIELDS = (*_DATE_FIELDS, "T", *_TIME_FIELDS)


def _lenient_fields(text: str, fields: tuple[str, ...]) -> list[int] | None:
    """The numbers of a lenient ``SimpleDateFormat.parse(text, pos)`` (a prefix may match)."""
    numbers: list[int] = []
    i, n = 0, len(text)
    for field in fields:
        if field == "n":
            while i < n and text[i] in " \t":
                i += 1
            start = i
            if i < n and text[i] == "-":
                i += 1
            digits = i
            while i < n and "0" <= text[i] <= "9":
                i += 1
            if i == digits:
                return None
            numbers.append(int(text[start:i]))
        else:
            if i >= n or text[i] != field:
                return None
            i += 1
    return numbers


def _utf16_length(text: str) -> int:
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def _date_millis(year: int, month: int, day: int) -> int | None:
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    try:
        first = _dt.date(year, month, 1)
    except ValueError:
        return None
    return ((first - _EPOCH_DATE).days + day - 1) * _MILLIS_PER_DAY


def _parse_temporal(token: str | None) -> SchemaAndValue | None:
    """``ValueParser.parseAsTemporal``: a time, timestamp or date chosen by length."""
    if token is None:
        return None
    token = token.replace("\\:", ":")
    length = _utf16_length(token)
    if length == 13:
        f = _lenient_fields(token, _TIME_FIELDS)
        if f is None:
            return None
        return SchemaAndValue(Time.SCHEMA, _JavaDate(((f[0] * 60 + f[1]) * 60 + f[2]) * 1000 + f[3]))
    if length == 24:
        f = _lenient_fields(token, _TIMESTAMP_FIELDS)
        if f is None:
            return None
        day = _date_millis(f[0], f[1], f[2])
        if day is None:
            return None
        return SchemaAndValue(Timestamp.SCHEMA, _JavaDate(day + ((f[3] * 60 + f[4]) * 60 + f[5]) * 1000 + f[6]))
    if length == 10:
        f = _lenient_fields(token, _DATE_FIELDS)
        if f is None:
            return None
        day = _date_millis(f[0], f[1], f[2])
        return None if day is None else SchemaAndValue(Date.SCHEMA, _JavaDate(day))
    return None


# -- conversions (Values.convertTo for what the parser produces) ---------------------


def _as_long(value: Any) -> int:
    if isinstance(value, bool):
        raise DataError(f"Unable to convert {java_string(value)} (class java.lang.Boolean) to a number")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        if math.isinf(value):
            return _LONG_MAX if value > 0 else _LONG_MIN
        return max(_LONG_MIN, min(_LONG_MAX, int(value)))
    if isinstance(value, _decimal.Decimal):
        return narrow(int(value), 64)
    if isinstance(value, str) and _BIG_DECIMAL.fullmatch(value):
        return narrow(int(_decimal.Decimal(value)), 64)
    raise DataError(f"Unable to convert {value!r} to a number")


def _as_double(value: Any) -> float:
    if isinstance(value, bool):
        raise DataError(f"Unable to convert {java_string(value)} (class java.lang.Boolean) to a number")
    if isinstance(value, (int, float, _decimal.Decimal)):
        return float(value)
    return float(_as_long(value))


def _convert_to(to: Schema, from_schema: Schema | None, value: Any) -> Any:
    """``Values.convertTo(toSchema, null, value)`` for parsed values."""
    if value is None:
        if to.optional:
            return None
        raise DataError("Unable to convert a null value to a schema that requires a value")
    t, name = to.type, to.name
    if name in _TEMPORAL:
        if isinstance(value, str):
            value = parse_string(value).value
        if isinstance(value, _JavaDate):
            return value
        numeric = _as_long(value)
        if name == Date.LOGICAL_NAME:
            return _JavaDate(narrow(numeric, 32) * _MILLIS_PER_DAY)
        if name == Time.LOGICAL_NAME:
            return _JavaDate(narrow(numeric, 32))
        return _JavaDate(numeric)
    if t is Type.BYTES:
        if name == Decimal.LOGICAL_NAME:
            if isinstance(value, _decimal.Decimal):
                return value
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return _decimal.Decimal(java_double_string(float(value)))
            if isinstance(value, str):
                return _decimal.Decimal(value)
        if isinstance(value, (bytes, bytearray)):
            return bytes(value)
        raise DataError(f"Unable to convert {value!r} to {to!r}")
    if t is Type.STRING:
        return convert_to_string(from_schema, value)
    if t is Type.BOOLEAN:
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            parsed = parse_string(value)
            if isinstance(parsed.value, bool):
                return parsed.value
        return _as_long(value) != 0
    if t in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
        bits = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}[t]
        return narrow(_as_long(value), bits)
    if t is Type.FLOAT32:
        return to_float32(_as_double(value))
    if t is Type.FLOAT64:
        return _as_double(value)
    if t is Type.ARRAY:
        if isinstance(value, str):
            value = parse_string(value).value
        if isinstance(value, list):
            return value
    elif t is Type.MAP:
        if isinstance(value, str):
            value = parse_string(value).value
        if isinstance(value, dict):
            return value
    elif isinstance(value, Struct):
        return value
    raise DataError(f"Unable to convert {value!r} to {to!r}")


def _to_python(schema: Schema | None, value: Any) -> Any:
    """Parsed values in Sluice's Python types (dates by the schema they ended up with)."""
    if isinstance(value, _JavaDate):
        name = schema.name if schema is not None else None
        if name == Date.LOGICAL_NAME:
            return _EPOCH_DATE + _dt.timedelta(days=value.millis // _MILLIS_PER_DAY)
        if name == Time.LOGICAL_NAME:
            return (_EPOCH + _dt.timedelta(milliseconds=value.millis % _MILLIS_PER_DAY)).time()
        return _EPOCH + _dt.timedelta(milliseconds=value.millis)
    if isinstance(value, list):
        vs = schema.value_schema() if schema is not None and schema.type is Type.ARRAY else None
        return [_to_python(vs, v) for v in value]
    if isinstance(value, dict):
        ks = vs = None
        if schema is not None and schema.type is Type.MAP:
            ks, vs = schema.key_schema(), schema.value_schema()
        return {_to_python(ks, k): _to_python(vs, v) for k, v in value.items()}
    return value


def parse_string(text: str | None) -> SchemaAndValue:
    """``Values.parseString(text)``; a ``null`` result is ``SchemaAndValue(None, None)``."""
    if text is None:
        return SchemaAndValue(None, None)
    if text == "":
        return SchemaAndValue(Schema.STRING_SCHEMA, text)
    result = _ValueParser(text).parse(False)
    if result is None:
        return SchemaAndValue(None, None)
    return SchemaAndValue(result.schema, _to_python(result.schema, result.value))
