"""``Values.parseString`` of Kafka Connect: infer a schema and a value from a string.

InsertHeader turns its ``value.literal`` into a typed header value this way, so
``1`` becomes an INT8, ``true`` a BOOLEAN, ``[1, 2]`` an ARRAY of INT8,
``{"a": 1}`` a MAP, ``2024-01-31`` a Date, ``1.5`` a FLOAT32 and anything else the
STRING it was. The rules, including the odd ones, are Kafka 4.x's:

* The text is cut into tokens at the unescaped delimiters ``: , { } [ ] "``; a
  backslash escapes the character after it (and stays in the token).
* ``null`` alone gives no schema and no value (``None`` here, as Kafka's ``null``);
  ``true``/``false`` alone give a BOOLEAN; followed by anything else they are text.
* ``[...]`` and ``{...}`` are arrays and maps of embedded values (embedded strings are
  quoted); anything that fails to parse as one of them is the STRING of the whole input.
  Elements of one type, or of numeric types that widen to one (INT8 < INT16 < INT32 <
  INT64 < FLOAT32 < FLOAT64), give a typed array or map and the elements are converted
  to it; mixed types leave the element (or key and value) schema out.
* A token that starts with a digit is first tried as an ISO-8601 date
  (``yyyy-MM-dd``), time (``HH:mm:ss.SSS'Z'``) or timestamp
  (``yyyy-MM-dd'T'HH:mm:ss.SSS'Z'``), chosen by length and parsed leniently as
  ``SimpleDateFormat`` does (``2024-02-30`` is March 1st); then, like one starting
  with ``+`` or ``-``, as a number: an integral value is the smallest of
  INT8/INT16/INT32/INT64 that holds it, else a FLOAT32, else a FLOAT64, else a Decimal.
  At the top level only that first token counts (``12:30`` is the INT8 ``12``), as in
  Kafka.

Python values: Date → :class:`datetime.date`, Time → :class:`datetime.time`,
Timestamp → timezone-aware UTC :class:`datetime.datetime` (Kafka reads them in the
JVM's time zone; Sluice always uses UTC), Decimal → :class:`decimal.Decimal`.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import math
import re
import struct as _struct
from typing import Any

from sluice.api.converter import SchemaAndValue
from sluice.api.data import Date, Decimal, Schema, SchemaBuilder, Time, Timestamp, Type
from sluice.api.errors import DataError

__all__ = ["parse_string"]

_QUOTE = '"'
_COMMA = ","
_ENTRY = ":"
_ARRAY_BEGIN = "["
_ARRAY_END = "]"
_MAP_BEGIN = "{"
_MAP_END = "}"
_DELIMITERS = frozenset(':,{}[]"')

_TRUE = SchemaAndValue(Schema.BOOLEAN_SCHEMA, True)
_FALSE = SchemaAndValue(Schema.BOOLEAN_SCHEMA, False)

_INT8 = (-(2**7), 2**7 - 1)
_INT16 = (-(2**15), 2**15 - 1)
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)

# What java.math.BigDecimal(String) accepts (digits may be any Unicode decimal digit).
_BIG_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\Z")

_UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)
_EPOCH_DATE = _dt.date(1970, 1, 1)
_MILLIS_PER_DAY = 86_400_000


def parse_string(value: str | None) -> SchemaAndValue | None:
    """Kafka's ``Values.parseString``: the schema and value a string represents.

    ``None`` gives ``SchemaAndValue(None, None)``, ``""`` the empty STRING, and the
    literal ``null`` (possibly surrounded by whitespace) ``None``, as Kafka returns
    ``null`` for it.
    """
    if value is None:
        return SchemaAndValue(None, None)
    if value == "":
        return SchemaAndValue(Schema.STRING_SCHEMA, value)
    return _ValueParser(_Tokenizer(value)).parse(False)


# -- tokenizer (Values.Parser) ------------------------------------------------------------


def _java_trim(text: str) -> str:
    """``String.trim()``: strips every character up to U+0020 from both ends."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def _is_blank(text: str | None) -> bool:
    return text is None or _java_trim(text) == ""


class _Tokenizer:
    __slots__ = ("original", "_index", "_next", "_previous")

    def __init__(self, original: str) -> None:
        self.original = original
        self._index = 0
        self._next: str | None = None
        self._previous: str | None = None

    def position(self) -> int:
        return self._index

    def mark(self) -> int:
        return self._index - (len(self._next) if self._next is not None else 0)

    def rewind_to(self, position: int) -> None:
        self._index = position
        self._next = None
        self._previous = None

    def has_next(self) -> bool:
        return self._next is not None or self._index < len(self.original)

    def next(self) -> str:
        if self._next is not None:
            self._previous = self._next
            self._next = None
        else:
            self._previous = self._consume()
        return self._previous

    def next_n(self, n: int) -> str | None:
        """The text of the next ``n`` tokens, or ``None`` (nothing consumed) when fewer remain."""
        start = self.mark()
        for _ in range(n):
            if not self.has_next():
                self.rewind_to(start)
                return None
            self.next()
        return self.original[start : self._index]

    def previous(self) -> str | None:
        return self._previous

    def _consume(self) -> str:
        text = self.original
        start = i = self._index
        end = len(text)
        escaped = False
        while i < end:
            c = text[i]
            if c == "\\":
                escaped = not escaped
            elif c in _DELIMITERS:
                if not escaped:
                    if start < i:
                        self._index = i
                        return text[start:i]
                    self._index = i + 1
                    return text[start : i + 1]
                escaped = False
            else:
                escaped = False
            i += 1
        self._index = i
        return text[start:i]

    def can_consume(self, expected: str) -> bool:
        """Consume the next non-blank token if, trimmed, it is ``expected``."""
        if self._next is None:
            if not self.has_next():
                return False
            self._next = self._consume()
        while _is_blank(self._next) and self._index < len(self.original):
            self._next = self._consume()
        if _java_trim(self._next) == expected:  # type: ignore[arg-type]
            self._next = None
            return True
        return False


# -- parser (Values.ValueParser) ----------------------------------------------------------


class _ValueParser:
    __slots__ = ("tokens",)

    def __init__(self, tokens: _Tokenizer) -> None:
        self.tokens = tokens

    def _single_token_literal(self, embedded: bool, literal: str) -> bool:
        tokens = self.tokens
        start = tokens.mark()
        if tokens.can_consume(literal) and (embedded or not tokens.has_next()):
            return True
        tokens.rewind_to(start)
        return False

    def parse(self, embedded: bool) -> SchemaAndValue | None:
        tokens = self.tokens
        if not tokens.has_next():
            return None
        if embedded and tokens.can_consume(_QUOTE):
            return self._parse_quoted_string()
        if self._single_token_literal(embedded, "null"):
            return None
        if self._single_token_literal(embedded, "true"):
            return _TRUE
        if self._single_token_literal(embedded, "false"):
            return _FALSE
        start = tokens.mark()
        try:
            if tokens.can_consume(_ARRAY_BEGIN):
                return self._parse_array()
            if tokens.can_consume(_MAP_BEGIN):
                return self._parse_map()
        except DataError:
            tokens.rewind_to(start)
        token = tokens.next()
        if _is_blank(token):
            return SchemaAndValue(Schema.STRING_SCHEMA, token)
        return self._parse_next_token(embedded, _java_trim(token))

    def _parse_next_token(self, embedded: bool, token: str) -> SchemaAndValue:
        first = token[0]
        first_is_digit = first.isdecimal()
        if first_is_digit:
            temporal = self._parse_multiple_tokens_as_temporal(token)
            if temporal is not None:
                return temporal
        if first_is_digit or first in "+-":
            number = _parse_as_number(token)
            if number is not None:
                return number
        if embedded:
            raise DataError("Failed to parse embedded value")
        return SchemaAndValue(Schema.STRING_SCHEMA, self.tokens.original)

    def _parse_quoted_string(self) -> SchemaAndValue:
        tokens = self.tokens
        parts: list[str] = []
        while tokens.has_next():
            if tokens.can_consume(_QUOTE):
                break
            parts.append(tokens.next())
        content = "".join(parts)
        temporal = _parse_as_temporal(content)
        if temporal is not None:
            return temporal
        return SchemaAndValue(Schema.STRING_SCHEMA, content)

    def _parse_array(self) -> SchemaAndValue:
        tokens = self.tokens
        result: list[Any] = []
        element_schema = _SchemaMerger()
        while tokens.has_next():
            if tokens.can_consume(_ARRAY_END):
                if element_schema.has_common_schema():
                    common = element_schema.schema
                    list_schema = SchemaBuilder.array(common).build()
                    result = [_convert_to(common, v) for v in result]  # type: ignore[arg-type]
                else:  # every element is null, or they have no common type
                    list_schema = Schema(Type.ARRAY)
                return SchemaAndValue(list_schema, result)
            if tokens.can_consume(_COMMA):
                raise DataError("Unable to parse an empty array element: " + tokens.original)
            element = self.parse(True)
            element_schema.merge(element)
            result.append(element.value if element is not None else None)
            position = tokens.mark()
            if tokens.can_consume(_ARRAY_END):
                tokens.rewind_to(position)
            elif not tokens.can_consume(_COMMA):
                raise DataError("Array elements missing ',' delimiter")
        if tokens.previous() == _COMMA:
            raise DataError("Array is missing element after ',': " + tokens.original)
        raise DataError("Array is missing terminating ']': " + tokens.original)

    def _parse_map(self) -> SchemaAndValue:
        tokens = self.tokens
        result: dict[Any, Any] = {}
        key_schema = _SchemaMerger()
        value_schema = _SchemaMerger()
        while tokens.has_next():
            if tokens.can_consume(_MAP_END):
                ks, vs = key_schema.schema, value_schema.schema
                if ks is not None and vs is not None:
                    map_schema = SchemaBuilder.map(ks, vs).build()
                    result = {_hashable(_convert_to(ks, k)): _convert_to(vs, v) for k, v in result.items()}
                elif ks is not None:
                    map_schema = Schema(Type.MAP, key_schema=ks)
                    result = {_hashable(_convert_to(ks, k)): v for k, v in result.items()}
                else:
                    map_schema = Schema(Type.MAP)
                return SchemaAndValue(map_schema, result)
            if tokens.can_consume(_COMMA):
                raise DataError("Unable to parse a map entry with no key or value: " + tokens.original)
            key = self.parse(True)
            if key is None or key.value is None:
                raise DataError("Map entry may not have a null key: " + tokens.original)
            if not tokens.can_consume(_ENTRY):
                raise DataError(f"Map entry is missing ':' at {tokens.position()} in {tokens.original}")
            value = self.parse(True)
            result[_hashable(key.value)] = value.value if value is not None else None
            tokens.can_consume(_COMMA)
            key_schema.merge(key)
            value_schema.merge(value)
        if tokens.previous() == _COMMA:
            raise DataError("Map is missing element after ',': " + tokens.original)
        raise DataError("Map is missing terminating '}': " + tokens.original)

    def _parse_multiple_tokens_as_temporal(self, token: str) -> SchemaAndValue | None:
        # An unescaped ':' is a delimiter, so a time or timestamp arrives as 5 tokens.
        tokens = self.tokens
        position = tokens.mark()
        remainder = tokens.next_n(4)
        if remainder is not None:
            temporal = _parse_as_temporal(token + remainder)
            if temporal is not None:
                return temporal
        tokens.rewind_to(position)
        return _parse_as_temporal(token)


def _hashable(key: Any) -> Any:
    try:
        hash(key)
    except TypeError as e:  # a list or map as a map key: Java allows it, a dict does not
        raise DataError(f"Unsupported map key {key!r}") from e
    return key


# -- numbers ------------------------------------------------------------------------------


def _to_float32(value: float) -> float:
    try:
        return _struct.unpack("<f", _struct.pack("<f", value))[0]
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _parse_as_number(token: str) -> SchemaAndValue | None:
    if _BIG_DECIMAL.match(token) is None:
        return None
    number = _decimal.Decimal(token)
    exact = _parse_as_exact_integer(number)
    if exact is not None:
        return exact
    scale = -int(number.as_tuple().exponent)
    as_double = float(number)
    as_float = _to_float32(as_double)
    if not math.isinf(as_float) and scale != 0:
        return SchemaAndValue(Schema.FLOAT32_SCHEMA, as_float)
    if not math.isinf(as_double) and scale != 0:
        return SchemaAndValue(Schema.FLOAT64_SCHEMA, as_double)
    return SchemaAndValue(Decimal.schema(scale), number)


def _parse_as_exact_integer(number: _decimal.Decimal) -> SchemaAndValue | None:
    if number != number.to_integral_value():
        return None
    if not number.is_zero() and number.adjusted() >= 19:
        return None  # beyond a long
    integral = int(number)
    if not _INT64[0] <= integral <= _INT64[1]:
        return None
    if _INT8[0] <= integral <= _INT8[1]:
        return SchemaAndValue(Schema.INT8_SCHEMA, integral)
    if _INT16[0] <= integral <= _INT16[1]:
        return SchemaAndValue(Schema.INT16_SCHEMA, integral)
    if _INT32[0] <= integral <= _INT32[1]:
        return SchemaAndValue(Schema.INT32_SCHEMA, integral)
    return SchemaAndValue(Schema.INT64_SCHEMA, integral)


# -- dates and times ----------------------------------------------------------------------

# Each ISO-8601 pattern Kafka tries, as (field letter | literal character) items.
_DATE_ITEMS = (("y",), "-", ("M",), "-", ("d",))
_TIME_ITEMS = (("H",), ":", ("m",), ":", ("s",), ".", ("S",), "Z")
_TIMESTAMP_ITEMS = (*_DATE_ITEMS, "T", *_TIME_ITEMS)
_DATE_LENGTH = len("yyyy-MM-dd")
_TIME_LENGTH = len("HH:mm:ss.SSSZ")
_TIMESTAMP_LENGTH = len("yyyy-MM-ddTHH:mm:ss.SSSZ")


def _parse_as_temporal(token: str | None) -> SchemaAndValue | None:
    if token is None:
        return None
    token = token.replace("\\:", ":")  # escaped colons
    length = len(token)
    if length == _TIME_LENGTH:
        return _parse_as_temporal_type(token, Time.SCHEMA, _TIME_ITEMS)
    if length == _TIMESTAMP_LENGTH:
        return _parse_as_temporal_type(token, Timestamp.SCHEMA, _TIMESTAMP_ITEMS)
    if length == _DATE_LENGTH:
        return _parse_as_temporal_type(token, Date.SCHEMA, _DATE_ITEMS)
    return None


def _parse_as_temporal_type(token: str, schema: Schema, items: tuple) -> SchemaAndValue | None:
    """Lenient ``SimpleDateFormat.parse(text, position)``: each numeric field takes every
    digit there is (after spaces or tabs, with an optional minus sign), literals must
    match, text after the pattern is ignored, and out-of-range fields roll over."""
    fields: dict[str, int] = {}
    i, end = 0, len(token)
    for item in items:
        if isinstance(item, str):
            if i >= end or token[i] != item:
                return None
            i += 1
            continue
        while i < end and token[i] in " \t":
            i += 1
        j = i + 1 if i < end and token[i] == "-" else i
        k = j
        while k < end and token[k].isdecimal():
            k += 1
        if k == j:
            return None
        fields[item[0]] = int(token[i:k])
        i = k
    month = fields.get("M", 1) - 1
    try:
        moment = _dt.datetime(fields.get("y", 1970) + month // 12, month % 12 + 1, 1, tzinfo=_UTC) + _dt.timedelta(
            days=fields.get("d", 1) - 1,
            hours=fields.get("H", 0),
            minutes=fields.get("m", 0),
            seconds=fields.get("s", 0),
            milliseconds=fields.get("S", 0),
        )
    except (ValueError, OverflowError):  # outside the years Python represents
        return None
    value: Any
    if schema is Date.SCHEMA:
        value = moment.date()
    elif schema is Time.SCHEMA:
        value = moment.time().replace(tzinfo=None)
    else:
        value = moment
    return SchemaAndValue(schema, value)


# -- schema merging and conversion (Values.SchemaMerger, mergeSchemas, convertTo) ---------------

_NUMERIC_RANK = {Type.INT8: 0, Type.INT16: 1, Type.INT32: 2, Type.INT64: 3, Type.FLOAT32: 4, Type.FLOAT64: 5}


class _SchemaMerger:
    """The schema common to every parsed element so far: ``None`` with ``compatible`` means
    no non-null element yet; ``None`` without it means there is none."""

    __slots__ = ("schema", "compatible")

    def __init__(self) -> None:
        self.schema: Schema | None = None
        self.compatible = True

    def merge(self, latest: SchemaAndValue | None) -> None:
        if latest is None or latest.schema is None or not self.compatible:
            return
        if self.schema is None:
            self.schema = latest.schema
        else:
            self.schema = _merge_schemas(self.schema, latest.schema)
            self.compatible = self.schema is not None

    def has_common_schema(self) -> bool:
        return self.schema is not None


def _merge_schemas(previous: Schema, new: Schema) -> Schema | None:
    if previous.type is not new.type:
        a, b = _NUMERIC_RANK.get(previous.type), _NUMERIC_RANK.get(new.type)
        if a is None or b is None:
            return None
        return previous if a > b else new
    if previous.optional == new.optional:
        return previous if previous.optional else new
    return previous if previous == new else None


def _as_long(value: Any) -> int:
    """``Values.asLong`` without a source schema: numbers only (Java's ``longValue``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, _decimal.Decimal)):
        raise DataError(f"Unable to convert {value} ({type(value).__name__}) to a number")
    if isinstance(value, int):
        return _wrap(value, 64)
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return 0 if math.isnan(value) else (_INT64[1] if value > 0 else _INT64[0])
    return _wrap(int(value), 64)


def _wrap(value: int, bits: int) -> int:
    """Java's narrowing conversion of an integer to ``bits`` bits."""
    mask = (1 << bits) - 1
    value &= mask
    return value - (1 << bits) if value >> (bits - 1) else value


def _millis_of(value: _dt.date | _dt.time) -> int:
    if isinstance(value, _dt.datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=_UTC)
        delta = moment - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
    if isinstance(value, _dt.date):
        return (value - _EPOCH_DATE).days * _MILLIS_PER_DAY
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000


def _convert_to(schema: Schema, value: Any) -> Any:
    """``Values.convertTo(schema, null, value)`` for the values the parser produces."""
    if value is None:
        if schema.optional:
            return None
        raise DataError("Unable to convert a null value to a schema that requires a value")
    t = schema.type
    name = schema.name
    temporal = isinstance(value, (_dt.date, _dt.time))
    if name == Date.LOGICAL_NAME:
        # Kafka passes any other java.util.Date through unchanged; here the instant it
        # stands for becomes a value of the Python type of the target schema.
        if isinstance(value, _dt.datetime):
            return (_EPOCH + _dt.timedelta(milliseconds=_millis_of(value))).date()
        if isinstance(value, _dt.date):
            return value
        if temporal:
            return _EPOCH_DATE
        return Date.to_logical(schema, _wrap(_as_long(value), 32))
    if name == Time.LOGICAL_NAME:
        if temporal:
            if isinstance(value, _dt.time):
                return value
            return (_EPOCH + _dt.timedelta(milliseconds=_millis_of(value))).time().replace(tzinfo=None)
        return Time.to_logical(schema, _wrap(_as_long(value), 32))
    if name == Timestamp.LOGICAL_NAME:
        if temporal:
            if isinstance(value, _dt.datetime):
                return value
            return _EPOCH + _dt.timedelta(milliseconds=_millis_of(value))
        return Timestamp.to_logical(schema, _as_long(value))
    if t in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
        bits = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}[t]
        return _wrap(_as_long(value), bits)
    if t in (Type.FLOAT32, Type.FLOAT64):
        if isinstance(value, bool) or not isinstance(value, (int, float, _decimal.Decimal)):
            raise DataError(f"Unable to convert {value} ({type(value).__name__}) to a number")
        return _to_float32(float(value)) if t is Type.FLOAT32 else float(value)
    expected: type | tuple[type, ...] = {
        Type.BOOLEAN: bool,
        Type.STRING: str,
        Type.BYTES: (bytes, bytearray, _decimal.Decimal),
        Type.ARRAY: list,
        Type.MAP: dict,
    }.get(t, object)
    if not isinstance(value, expected):
        raise DataError(f"Unable to convert {value} ({type(value).__name__}) to {schema}")
    return value
