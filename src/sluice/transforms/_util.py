"""Helpers shared by the built-in transforms (Kafka's ``transforms.util`` and
``transforms.field`` packages, in Python).

Everything here is part of the transforms package's internal but *stable* surface:
other transform modules import it, so names and behaviour only grow.

* Record requirements (``Requirements`` in Kafka): :func:`require_schema`,
  :func:`require_map`, :func:`require_map_or_null`, :func:`require_struct`,
  :func:`require_struct_or_null`, :func:`require_sink_record` — each raises
  :class:`~sluice.api.errors.DataError` with Kafka's wording.
* Schema helpers (``SchemaUtil``): :func:`copy_schema_basics`.
* :class:`LRUCache` — the per-transform cache of output schemas keyed by input schema.
* Key/value plumbing: :class:`KeyOrValueTransformation` with the :class:`KeySide` /
  :class:`ValueSide` mixins that pick the part of the record a ``$Key``/``$Value``
  variant works on, and :func:`new_record` that copies a record the way Kafka's
  ``newRecord`` does (headers duplicated).
* Field paths (``field.syntax.version``, KIP-821): :class:`FieldSyntaxVersion`,
  :class:`SingleFieldPath`, :func:`define_field_syntax_version`.
* ``replace.null.with.default`` (KIP-1040): :data:`REPLACE_NULL_WITH_DEFAULT_CONFIG`,
  :func:`define_replace_null_with_default`, :func:`field_value`.
* Values: :func:`infer_schema_type` (``ConnectSchema.schemaType``),
  :func:`class_name`, :func:`java_split`, :func:`parse_config`, :func:`to_utc_datetime`.
* Java number semantics (casts, narrowing, ``parseInt``/``parseDouble``, Connect's
  string-to-number reading): :func:`wrap_int`, :func:`float_to_int`, :func:`number_to_int`,
  :func:`to_float32`, :func:`parse_java_integer`, :func:`parse_java_double`,
  :func:`parse_java_float`, :func:`parse_connect_number`, :func:`decimal_from_java_string`.
* Dates: :class:`SimpleDateFormat`, a UTC-only implementation of the
  ``java.text.SimpleDateFormat`` patterns connector configs use.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import enum
import re
import struct as _struct
from abc import abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Generic, TypeVar

from sluice.api.config import CaseInsensitiveValidString, ConfigDef, ConfigType, Importance
from sluice.api.data import Schema, SchemaBuilder, Struct, Type
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import ConnectRecord, SinkRecord
from sluice.api.transforms import Transformation

__all__ = [
    "EPOCH",
    "JAVA_PATTERN_LETTERS",
    "FIELD_SYNTAX_VERSION_CONFIG",
    "REPLACE_NULL_WITH_DEFAULT_CONFIG",
    "FieldSyntaxVersion",
    "KeyOrValueTransformation",
    "KeySide",
    "LRUCache",
    "SimpleDateFormat",
    "date_field_formatter",
    "SingleFieldPath",
    "ValueSide",
    "class_name",
    "copy_schema_basics",
    "decimal_from_java_string",
    "define_field_syntax_version",
    "define_replace_null_with_default",
    "field_value",
    "float_to_int",
    "infer_schema_type",
    "int_bits",
    "java_split",
    "new_record",
    "number_to_int",
    "parse_config",
    "parse_connect_number",
    "parse_java_double",
    "parse_java_float",
    "parse_java_integer",
    "require_map",
    "require_map_or_null",
    "require_schema",
    "require_sink_record",
    "require_struct",
    "require_struct_or_null",
    "to_float32",
    "to_utc_datetime",
    "wrap_int",
]

R = TypeVar("R", bound=ConnectRecord)

EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
"""The Unix epoch as an aware UTC datetime."""


# -- values ---------------------------------------------------------------------------------


def class_name(value: Any) -> str:
    """The name of ``value``'s class for error messages (``"null"`` for ``None``): the bare
    name for builtins (``dict``, ``int``), ``module.Qualname`` otherwise — the Python
    counterpart of Kafka's ``nullSafeClassName``."""
    if value is None:
        return "null"
    cls = type(value)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def infer_schema_type(value: Any) -> Type | None:
    """The Connect schema type of a schemaless value (``ConnectSchema.schemaType``), or
    ``None`` for values Connect's data API has no schemaless type for (decimals, dates and
    times, arbitrary objects). Python ``int`` maps to INT64 (what JSON gives), ``float`` to
    FLOAT64, ``bytes``/``bytearray``/``memoryview`` to BYTES, ``list``/``tuple`` to ARRAY,
    ``dict`` to MAP."""
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


def java_split(text: str, sep: str) -> list[str]:
    """``String.split`` with a literal one-character separator: trailing empty strings are
    dropped, but a string without the separator splits into itself (``"" -> [""]``)."""
    if sep not in text:
        return [text]
    parts = text.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def to_utc_datetime(value: _dt.date | _dt.time) -> _dt.datetime:
    """An aware UTC datetime for a Connect date/time value, as ``java.util.Date`` would hold
    it: a naive ``datetime`` is taken as UTC, a ``date`` is midnight UTC that day and a
    ``time`` is that time on 1970-01-01 UTC."""
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            return value.replace(tzinfo=_dt.timezone.utc)
        return value.astimezone(_dt.timezone.utc)
    if isinstance(value, _dt.date):
        return _dt.datetime(value.year, value.month, value.day, tzinfo=_dt.timezone.utc)
    if isinstance(value, _dt.time):
        offset = value.utcoffset() if value.tzinfo is not None else None
        naive = _dt.datetime.combine(_dt.date(1970, 1, 1), value.replace(tzinfo=None))
        if offset:
            naive -= offset
        return naive.replace(tzinfo=_dt.timezone.utc)
    raise TypeError(f"not a date or time: {class_name(value)}")


# -- requirements ---------------------------------------------------------------------------


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


# -- schemas --------------------------------------------------------------------------------


def copy_schema_basics(source: Schema, builder: SchemaBuilder | None = None) -> SchemaBuilder:
    """Copy ``source``'s name, version, doc and parameters onto ``builder`` (not its
    optionality, default or fields), as ``SchemaUtil.copySchemaBasics``. Without a builder,
    one of ``source``'s type is made (arrays and maps keep their element schemas)."""
    if builder is None:
        if source.type is Type.ARRAY:
            builder = SchemaBuilder.array(source.value_schema())
        elif source.type is Type.MAP:
            builder = SchemaBuilder.map(source.key_schema(), source.value_schema())
        else:
            builder = SchemaBuilder(source.type)
    builder.name(source.name)  # type: ignore[arg-type]
    builder.version(source.version)  # type: ignore[arg-type]
    builder.doc(source.doc)  # type: ignore[arg-type]
    if source.parameters is not None:
        builder.parameters(source.parameters)
    return builder


class LRUCache:
    """A small least-recently-used map (Kafka's ``LRUCache``), used to keep one output
    schema per input schema so that records with the same schema share the same output
    schema object. Keys are compared with ``==`` (after an identity check)."""

    def __init__(self, max_size: int = 16) -> None:
        self.max_size = max_size
        self._entries: OrderedDict[Any, Any] = OrderedDict()

    def get(self, key: Any) -> Any:
        try:
            value = self._entries[key]
        except KeyError:
            return None
        self._entries.move_to_end(key)
        return value

    def put(self, key: Any, value: Any) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_size:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


# -- configuration --------------------------------------------------------------------------


REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
_REPLACE_NULL_WITH_DEFAULT_DOC = (
    "When a field is null and its schema has a default value, use that default (true) or keep the null (false)."
)


def define_replace_null_with_default(config_def: ConfigDef) -> ConfigDef:
    """Add ``replace.null.with.default`` (BOOLEAN, default true, MEDIUM) to ``config_def``."""
    return config_def.define(
        REPLACE_NULL_WITH_DEFAULT_CONFIG,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.MEDIUM,
        documentation=_REPLACE_NULL_WITH_DEFAULT_DOC,
    )


def field_value(struct: Struct, field: Any, replace_null_with_default: bool) -> Any:
    """A struct field's value, falling back to the field's default for a null only when
    ``replace_null_with_default`` (``Struct.get`` vs ``Struct.getWithoutDefault``)."""
    if replace_null_with_default:
        return struct.get(field)
    return struct.get_without_default(field if isinstance(field, str) else field.name)


def parse_config(config_def: ConfigDef, props: Mapping[str, Any] | None) -> dict[str, Any]:
    """Parse and validate a transform's configs against its definition (``SimpleConfig``);
    keys the definition does not know are ignored. Raises
    :class:`~sluice.api.errors.ConfigError`."""
    return config_def.parse(dict(props or {}))


# -- field paths (KIP-821) --------------------------------------------------------------------


FIELD_SYNTAX_VERSION_CONFIG = "field.syntax.version"
_FIELD_SYNTAX_VERSION_DOC = (
    "How field names in this transform's configs are read. V1: a name is a top-level field, "
    "taken literally even if it has dots. V2: dots separate the steps of a path into nested "
    "structs or maps (a.b.c); wrap a step that itself contains dots in backticks "
    "(`a.b`.c), and escape a backtick that ends such a step with a backslash."
)


class FieldSyntaxVersion(enum.Enum):
    """How field names in configs are interpreted (``FieldSyntaxVersion``)."""

    V1 = "V1"
    V2 = "V2"

    @staticmethod
    def from_config(value: str) -> FieldSyntaxVersion:
        try:
            return FieldSyntaxVersion[str(value).upper()]
        except KeyError:
            raise ConfigError(FIELD_SYNTAX_VERSION_CONFIG, value, "Unrecognized field syntax version") from None


def define_field_syntax_version(config_def: ConfigDef) -> ConfigDef:
    """Add ``field.syntax.version`` (STRING, default V1, case-insensitive V1/V2, HIGH)."""
    return config_def.define(
        FIELD_SYNTAX_VERSION_CONFIG,
        ConfigType.STRING,
        FieldSyntaxVersion.V1.value,
        CaseInsensitiveValidString.in_(*(v.value for v in FieldSyntaxVersion)),
        Importance.HIGH,
        _FIELD_SYNTAX_VERSION_DOC,
    )


_BACKTICK = "`"
_DOT = "."
_BACKSLASH = "\\"


def _incomplete_backticks(path: str, at: int) -> ConfigError:
    return ConfigError(
        f"Incomplete backtick pair in path: [{path}], consider adding a backslash before backtick "
        f"at position {at} to escape it"
    )


def _parse_path_v2(path: str) -> list[str]:
    """Split a V2 path into steps (see :class:`SingleFieldPath`)."""
    steps: list[str] = []
    n = len(path)
    i = 0
    while 0 <= i < n:
        if path[i] != _BACKTICK:
            dot = path.find(_DOT, i)
            if dot < 0:
                steps.append(path[i:])
                break
            steps.append(path[i:dot])
            i = dot + 1
            continue
        # A step wrapped in backticks: it ends at a backtick followed by a dot (or at a
        # backtick closing the path); a backtick escaped by a backslash before such a dot
        # belongs to the name, as does any backtick not followed by a dot.
        opening = i
        pieces: list[str] = []
        start = i = i + 1
        while True:
            closing = path.find(_BACKTICK, i)
            if closing < 0:
                raise _incomplete_backticks(path, opening)
            escaped = path[closing - 1] == _BACKSLASH
            if closing >= n - 1:
                if escaped:
                    raise _incomplete_backticks(path, opening)
                pieces.append(path[start:closing])
                steps.append("".join(pieces))
                i = closing + 1
                break
            if path[closing + 1] != _DOT:
                i = closing + 1
                continue
            if escaped:
                pieces.append(path[start : closing - 1])
                pieces.append(_BACKTICK)
                start = i = closing + 1
                continue
            pieces.append(path[start:closing])
            steps.append("".join(pieces))
            i = closing + 2
            break
    if path.endswith(_DOT):
        steps.append("")
    return steps


class SingleFieldPath:
    """A path to one field inside a struct or map (``SingleFieldPath``).

    With :attr:`FieldSyntaxVersion.V1` the whole text is one top-level field name. With
    V2 the text is split on dots into steps; a step wrapped in backticks may contain dots
    (```a.b`.c`` is ``["a.b", "c"]``), a backslash before a backtick that would close such a
    step keeps the backtick in the name, and backticks not next to a dot are ordinary
    characters. An unclosed wrapping backtick raises :class:`ConfigError`. Missing steps
    make lookups return ``None``.
    """

    __slots__ = ("version", "steps")

    def __init__(self, path: str, version: FieldSyntaxVersion = FieldSyntaxVersion.V1) -> None:
        self.version = version
        self.steps: tuple[str, ...] = (path,) if version is FieldSyntaxVersion.V1 else tuple(_parse_path_v2(path))

    def field_from(self, schema: Schema | None) -> Any:
        """The :class:`~sluice.api.data.Field` at this path in a struct schema, or ``None``."""
        if schema is None:
            return None
        current = schema
        for step in self.steps[:-1]:
            field = current.field(step)
            if field is None:
                return None
            current = field.schema
        return current.field(self.steps[-1])

    def value_from_struct(self, struct: Struct | None, with_default: bool = True) -> Any:
        """The value at this path in a struct (defaults applied to the last step only when
        ``with_default``; intermediate structs always fall back to their defaults)."""
        if struct is None:
            return None
        current = struct
        for step in self.steps[:-1]:
            if current.schema.field(step) is None:
                return None
            current = require_struct_or_null(current.get(step), "nested field access")  # type: ignore[assignment]
            if current is None:
                return None
        last = self.steps[-1]
        if current.schema.field(last) is None:
            return None
        return current.get(last) if with_default else current.get_without_default(last)

    def value_from_map(self, value: Mapping[str, Any] | None) -> Any:
        """The value at this path in a schemaless map, or ``None``."""
        if value is None:
            return None
        current: Mapping[str, Any] | None = value
        for step in self.steps[:-1]:
            current = require_map_or_null(current.get(step), "nested field access")  # type: ignore[union-attr]
            if current is None:
                return None
        return current.get(self.steps[-1])  # type: ignore[union-attr]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleFieldPath) and self.steps == other.steps

    def __hash__(self) -> int:
        return hash(self.steps)

    def __repr__(self) -> str:
        return f"SingleFieldPath{{version={self.version.value}, path={'.'.join(self.steps)}}}"


# -- records --------------------------------------------------------------------------------


def new_record(record: R, **changes: Any) -> R:
    """A copy of ``record`` with ``changes`` applied (key, value, schemas, …), carrying a
    duplicate of its headers, as Kafka's ``ConnectRecord.newRecord`` does."""
    if "headers" not in changes:
        changes["headers"] = record.headers.duplicate()
    return record.new_record(**changes)  # type: ignore[return-value]


class KeyOrValueTransformation(Transformation[R], Generic[R]):
    """Base of transforms that come as a ``$Key``/``$Value`` pair (abstract, as in Kafka, so
    plugin scanning does not list it). Mix in :class:`KeySide` or :class:`ValueSide` first to
    choose the part of the record worked on.

    ``columnar`` is the hook for a Spark SQL (columnar) form of the transform; ``None``
    means the transform only has its per-record Python form. Transforms keep the schema
    computation (cached per input schema) apart from the value computation so that such a
    form can reuse the former."""

    columnar: ClassVar[Any] = None

    @abstractmethod
    def operating_schema(self, record: R) -> Schema | None:
        """The schema of the part worked on (key or value)."""

    @abstractmethod
    def operating_value(self, record: R) -> Any:
        """The part worked on (key or value)."""

    @abstractmethod
    def new_record(self, record: R, schema: Schema | None, value: Any) -> R:
        """A copy of ``record`` with that part (and its schema) replaced."""


class KeySide:
    """Mixin: the transform works on the record key (the ``$Key`` variant)."""

    def operating_schema(self, record: ConnectRecord) -> Schema | None:
        return record.key_schema

    def operating_value(self, record: ConnectRecord) -> Any:
        return record.key

    def new_record(self, record: R, schema: Schema | None, value: Any) -> R:
        return new_record(record, key_schema=schema, key=value)


class ValueSide:
    """Mixin: the transform works on the record value (the ``$Value`` variant)."""

    def operating_schema(self, record: ConnectRecord) -> Schema | None:
        return record.value_schema

    def operating_value(self, record: ConnectRecord) -> Any:
        return record.value

    def new_record(self, record: R, schema: Schema | None, value: Any) -> R:
        return new_record(record, value_schema=schema, value=value)


# -- java.text.SimpleDateFormat, UTC only ----------------------------------------------------------

_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _sunday_based(day: _dt.date) -> int:
    """Day of the week counted from Sunday = 0 (weeks start on Sunday in ``en_US``)."""
    return (day.weekday() + 1) % 7


def _week_of_year(day: _dt.date) -> tuple[int, int]:
    """``(week year, week of year)`` of ``GregorianCalendar`` in ``en_US``: weeks start on
    Sunday and week 1 is the one containing January 1st."""
    week_start = day - _dt.timedelta(days=_sunday_based(day))
    if (_dt.date(day.year, 12, 31) - week_start).days < 6:  # the week holds next January 1st
        return day.year + 1, 1
    jan1 = _dt.date(day.year, 1, 1)
    first_week_start = jan1 - _dt.timedelta(days=_sunday_based(jan1))
    return day.year, (week_start - first_week_start).days // 7 + 1


def _pad(value: int, count: int) -> str:
    return str(value).zfill(count) if value >= 0 else "-" + str(-value).zfill(count)


def date_field_formatter(letter: str, count: int) -> Callable[[_dt.datetime], str]:
    """The formatter of one ``java.text.SimpleDateFormat`` field (UTC, ``en_US`` names): any
    Java pattern letter, repeated ``count`` times."""
    if letter == "G":
        return lambda t: "AD"
    if letter == "y":
        if count == 2:
            return lambda t: _pad(t.year % 100, 2)
        return lambda t: _pad(t.year, count)
    if letter == "Y":
        if count == 2:
            return lambda t: _pad(_week_of_year(t.date())[0] % 100, 2)
        return lambda t: _pad(_week_of_year(t.date())[0], count)
    if letter in "ML":
        if count >= 4:
            return lambda t: _MONTHS[t.month - 1]
        if count == 3:
            return lambda t: _MONTHS[t.month - 1][:3]
        return lambda t: _pad(t.month, count)
    if letter == "d":
        return lambda t: _pad(t.day, count)
    if letter == "k":
        return lambda t: _pad(t.hour or 24, count)
    if letter == "H":
        return lambda t: _pad(t.hour, count)
    if letter == "K":
        return lambda t: _pad(t.hour % 12, count)
    if letter == "h":
        return lambda t: _pad(t.hour % 12 or 12, count)
    if letter == "m":
        return lambda t: _pad(t.minute, count)
    if letter == "s":
        return lambda t: _pad(t.second, count)
    if letter == "S":
        return lambda t: _pad(t.microsecond // 1000, count)
    if letter == "E":
        if count >= 4:
            return lambda t: _WEEKDAYS[t.weekday()]
        return lambda t: _WEEKDAYS[t.weekday()][:3]
    if letter == "u":
        return lambda t: _pad(t.isoweekday(), count)
    if letter == "D":
        return lambda t: _pad(t.timetuple().tm_yday, count)
    if letter == "F":
        return lambda t: _pad((t.day - 1) // 7 + 1, count)
    if letter == "w":
        return lambda t: _pad(_week_of_year(t.date())[1], count)
    if letter == "W":
        return lambda t: _pad((t.day - 1 + _sunday_based(t.date().replace(day=1))) // 7 + 1, count)
    if letter == "a":
        return lambda t: "AM" if t.hour < 12 else "PM"
    if letter == "z":
        text = "Coordinated Universal Time" if count >= 4 else "UTC"
        return lambda t: text
    if letter == "Z":
        return lambda t: "+0000"
    return lambda t: "Z"  # X: ISO 8601 zone, "Z" for UTC whatever the count


JAVA_PATTERN_LETTERS = "GyYMLwWDdFEuaHkKhmsSzZX"
# Letters this implementation formats and parses; the rest of Java's letters are refused.
_SUPPORTED_LETTERS = "yMLdDEuaHkKhmsSzZX"
_NUMERIC_LETTERS = "yDduHkKhmsS"
_UTC_NAMES = ("Coordinated Universal Time", "Greenwich Mean Time", "UTC", "GMT", "UT")


class _Field:
    __slots__ = ("letter", "count")

    def __init__(self, letter: str, count: int) -> None:
        self.letter, self.count = letter, count

    def is_numeric(self) -> bool:
        return self.letter in _NUMERIC_LETTERS or (self.letter in "ML" and self.count <= 2)


class SimpleDateFormat:
    """Format and parse timestamps with a ``java.text.SimpleDateFormat`` pattern, always
    in UTC and with English names, the way Kafka's transforms use it.

    Supported letters: ``y`` (``yy`` = two-digit year), ``M``/``L`` (``M``/``MM`` numbers,
    ``MMM`` short and ``MMMM`` full English names), ``d``, ``D`` (day of year), ``E`` (day
    name), ``u`` (day number, Monday = 1), ``a`` (AM/PM), ``H``, ``k``, ``K``, ``h``, ``m``,
    ``s``, ``S`` (milliseconds, as a number), ``z`` (``UTC``), ``Z`` (``+0000``) and ``X``,
    ``XX``, ``XXX`` (``Z``); text in single quotes is literal and ``''`` is a quote. Other
    Java letters (``G``, ``Y``, ``w``, ``W``, ``F``) and letters Java does not know raise
    :class:`ValueError` when the pattern is compiled.

    Parsing is lenient as Java's default: numbers may have any number of digits unless the
    next field is also a number (then each takes exactly its letter count), out-of-range
    values roll over (month 13 is January of the next year), whitespace before a field is
    skipped, text after the pattern is ignored, a two-digit ``yy`` year falls within 80
    years before and 20 years after now, and zone offsets (``+hhmm``, ``+hh:mm``,
    ``GMT+h:mm``, ``Z`` for ``X``, ``UTC``/``GMT`` names) are applied. Parse failures raise
    :class:`ValueError`.
    """

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._tokens: list[str | _Field] = self._compile(pattern)
        self._formatters = [t if isinstance(t, str) else date_field_formatter(t.letter, t.count) for t in self._tokens]
        now = _dt.datetime.now(_dt.timezone.utc)
        try:
            self._century_start = now.replace(year=now.year - 80)
        except ValueError:  # 29 February
            self._century_start = now.replace(year=now.year - 80, day=28)

    def to_pattern(self) -> str:
        return self.pattern

    # compile -------------------------------------------------------------------------------

    @staticmethod
    def _compile(pattern: str) -> list[str | _Field]:
        tokens: list[str | _Field] = []
        literal: list[str] = []
        i, n = 0, len(pattern)
        while i < n:
            c = pattern[i]
            if c == "'":
                if i + 1 < n and pattern[i + 1] == "'":
                    literal.append("'")
                    i += 2
                    continue
                end = i + 1
                text: list[str] = []
                while True:
                    if end >= n:
                        raise ValueError("Unterminated quote")
                    if pattern[end] == "'":
                        if end + 1 < n and pattern[end + 1] == "'":
                            text.append("'")
                            end += 2
                            continue
                        break
                    text.append(pattern[end])
                    end += 1
                literal.extend(text)
                i = end + 1
                continue
            if ("a" <= c <= "z") or ("A" <= c <= "Z"):
                if c not in JAVA_PATTERN_LETTERS:
                    raise ValueError(f"Illegal pattern character '{c}'")
                if c not in _SUPPORTED_LETTERS:
                    raise ValueError(f"pattern letter '{c}' is not supported (supported: {_SUPPORTED_LETTERS})")
                count = 1
                while i + count < n and pattern[i + count] == c:
                    count += 1
                if c == "X" and count > 3:
                    raise ValueError(f"invalid ISO 8601 format: length={count}")
                if literal:
                    tokens.append("".join(literal))
                    literal = []
                tokens.append(_Field("M" if c == "L" else c, count))
                i += count
                continue
            literal.append(c)
            i += 1
        if literal:
            tokens.append("".join(literal))
        return tokens

    # format --------------------------------------------------------------------------------

    def format(self, value: _dt.date | _dt.time) -> str:
        """Format a date, time or datetime (naive = UTC) in UTC."""
        t = to_utc_datetime(value)
        return "".join(f if isinstance(f, str) else f(t) for f in self._formatters)

    # parse ---------------------------------------------------------------------------------

    def parse(self, text: str) -> _dt.datetime:
        """Parse ``text`` into an aware UTC datetime; raises :class:`ValueError`."""
        fields: dict[str, int] = {}
        pm: bool | None = None
        offset_minutes = 0
        pos = 0
        tokens = self._tokens
        for index, token in enumerate(tokens):
            if isinstance(token, str):
                if not text.startswith(token, pos):
                    raise self._unparseable(text)
                pos += len(token)
                continue
            field_start = pos  # where an abutting field's width counts from (before blanks)
            while pos < len(text) and text[pos] in " \t":
                pos += 1
            if pos >= len(text):
                raise self._unparseable(text)
            c = token.letter
            if token.is_numeric():
                following = tokens[index + 1] if index + 1 < len(tokens) else None
                if isinstance(following, _Field) and following.is_numeric():
                    # Abutting numbers (yyyyMMdd): Java reads this one from the text cut
                    # off letter-count characters after where the field started, and fails
                    # when the text is shorter than that.
                    limit = field_start + token.count
                    if limit > len(text):
                        raise self._unparseable(text)
                else:
                    limit = len(text)
                start = pos
                # Java's DecimalFormat: an optional minus sign, then decimal digits (any
                # Unicode decimal digit).
                if pos < limit and text[pos] == "-":
                    pos += 1
                while pos < limit and text[pos].isdecimal():
                    pos += 1
                digits = text[start:pos]
                if not digits or digits == "-":
                    raise self._unparseable(text)
                number = int(digits)
                if c == "y":
                    if token.count <= 2 and len(digits) == 2 and digits.isdecimal():
                        fields["yy"] = number
                    else:
                        fields["y"] = number
                elif c == "k":
                    fields["H"] = 0 if number == 24 else number
                elif c == "K":
                    fields["h"] = number
                elif c == "h":
                    fields["h"] = 0 if number == 12 else number
                elif c == "M":
                    fields["M"] = number
                else:
                    fields[c] = number
            elif c == "M":
                found = self._match_name(text, pos, _MONTHS)
                if found is None:
                    raise self._unparseable(text)
                fields["M"] = found[0] + 1
                pos = found[1]
            elif c == "E":
                found = self._match_name(text, pos, _WEEKDAYS)
                if found is None:
                    raise self._unparseable(text)
                pos = found[1]
            elif c == "a":
                found = self._match_name(text, pos, ("AM", "PM"))
                if found is None:
                    raise self._unparseable(text)
                pm = found[0] == 1
                pos = found[1]
            elif c == "X":
                offset_minutes, pos = self._parse_iso_zone(text, pos, token.count)
            else:  # z, Z
                offset_minutes, pos = self._parse_general_zone(text, pos)
        return self._resolve(fields, pm, offset_minutes, text)

    def _unparseable(self, text: str) -> ValueError:
        return ValueError(f'Unparseable date: "{text}"')

    @staticmethod
    def _match_name(text: str, pos: int, names: tuple[str, ...]) -> tuple[int, int] | None:
        """Longest case-insensitive match of a full or three-letter name at ``pos``."""
        best: tuple[int, int] | None = None
        lowered = text.lower()
        for i, name in enumerate(names):
            for candidate in (name, name[:3]):
                if lowered.startswith(candidate.lower(), pos):
                    end = pos + len(candidate)
                    if best is None or end > best[1]:
                        best = (i, end)
        return best

    def _numeric_zone(self, text: str, pos: int, sign: int, count: int, colon: bool) -> tuple[int, int]:
        try:
            if not text[pos].isdigit():
                raise self._unparseable(text)
            hours = int(text[pos])
            pos += 1
            if pos < len(text) and text[pos].isdigit():
                hours = hours * 10 + int(text[pos])
                pos += 1
            elif count > 0 or not colon:
                raise self._unparseable(text)
            if hours > 23:
                raise self._unparseable(text)
            minutes = 0
            if count != 1:
                if colon:
                    if text[pos] != ":":
                        raise self._unparseable(text)
                    pos += 1
                if not (text[pos].isdigit() and text[pos + 1].isdigit()):
                    raise self._unparseable(text)
                minutes = int(text[pos : pos + 2])
                pos += 2
                if minutes > 59:
                    raise self._unparseable(text)
        except IndexError:
            raise self._unparseable(text) from None
        return sign * (hours * 60 + minutes), pos

    def _parse_iso_zone(self, text: str, pos: int, count: int) -> tuple[int, int]:
        c = text[pos]
        if c == "Z":
            return 0, pos + 1
        if c not in "+-":
            raise self._unparseable(text)
        return self._numeric_zone(text, pos + 1, 1 if c == "+" else -1, count, count == 3)

    def _parse_general_zone(self, text: str, pos: int) -> tuple[int, int]:
        c = text[pos]
        if c in "+-":
            return self._numeric_zone(text, pos + 1, 1 if c == "+" else -1, 0, False)
        if text[pos : pos + 3].upper() == "GMT":
            after = pos + 3
            if after < len(text) and text[after] in "+-":
                sign = 1 if text[after] == "+" else -1
                return self._numeric_zone(text, after + 1, sign, 0, True)
        for name in _UTC_NAMES:
            if text.startswith(name, pos):
                return 0, pos + len(name)
        raise self._unparseable(text)

    def _resolve(self, fields: dict[str, int], pm: bool | None, offset_minutes: int, text: str) -> _dt.datetime:
        ambiguous = False
        if "y" in fields:
            year = fields["y"]
        elif "yy" in fields:
            start_year = self._century_start.year
            two_digit = start_year % 100
            ambiguous = fields["yy"] == two_digit
            year = fields["yy"] + (start_year // 100) * 100 + (100 if fields["yy"] < two_digit else 0)
        else:
            year = 1970
        if "h" in fields and "H" not in fields:
            hour = fields["h"] + (12 if pm else 0)
        else:
            hour = fields.get("H", 0)
        try:
            if "D" in fields and "M" not in fields and "d" not in fields:
                day = _dt.datetime(year, 1, 1) + _dt.timedelta(days=fields["D"] - 1)
            else:
                month = fields.get("M", 1) - 1
                year += month // 12
                day = _dt.datetime(year, month % 12 + 1, 1) + _dt.timedelta(days=fields.get("d", 1) - 1)
            result = day + _dt.timedelta(
                hours=hour,
                minutes=fields.get("m", 0) - offset_minutes,
                seconds=fields.get("s", 0),
                milliseconds=fields.get("S", 0),
            )
            aware = result.replace(tzinfo=_dt.timezone.utc)
            if ambiguous and aware < self._century_start:
                aware = aware.replace(year=aware.year + 100)
        except (ValueError, OverflowError) as e:
            raise ValueError(f'Unparseable date: "{text}" ({e})') from None
        return aware

    def __repr__(self) -> str:
        return f"SimpleDateFormat({self.pattern!r})"


# Java reads the digits of integers and BigDecimals with Character.digit, so any Unicode
# decimal digit counts (what \d matches in a str pattern); Double.parseDouble is ASCII only.
_BIG_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def decimal_from_java_string(text: str) -> _decimal.Decimal:
    """``new BigDecimal(text)``: raises :class:`ValueError` for anything Java refuses (digits
    may be any Unicode decimal digit, as in Java)."""
    if not _BIG_DECIMAL.fullmatch(text):
        raise ValueError(text)
    return _decimal.Decimal(text)


# -- Java number semantics ----------------------------------------------------------------------

_INT_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}


def int_bits(schema_type: Type) -> int:
    """8, 16, 32 or 64 for the integer schema types."""
    return _INT_BITS[schema_type]


def wrap_int(n: int, bits: int) -> int:
    """Keep the low ``bits`` bits of ``n`` as a signed number (Java's narrowing of integers)."""
    mask = (1 << bits) - 1
    n &= mask
    return n - (1 << bits) if n >> (bits - 1) else n


def float_to_int(value: float, bits: int) -> int:
    """Java's ``(byte)``/``(short)``/``(int)``/``(long)`` cast of a double: NaN is 0, the
    value is truncated towards zero and saturated to the int (or long) range, then narrowed
    to 8 or 16 bits by keeping the low bits."""
    if value != value:  # NaN
        return 0
    wide = 64 if bits == 64 else 32
    lo, hi = -(1 << (wide - 1)), (1 << (wide - 1)) - 1
    if value >= hi:
        n = hi
    elif value <= lo:
        n = lo
    else:
        n = int(value)
    return wrap_int(n, bits) if bits < wide else n


def to_float32(value: float) -> float:
    """``value`` rounded to the nearest IEEE single (±inf when out of range)."""
    try:
        return _struct.unpack("<f", _struct.pack("<f", value))[0]
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


_JAVA_INTEGER = re.compile(r"[+-]?\d+")
_JAVA_FLOATING = re.compile(
    r"[+-]?(NaN|Infinity|(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)|"
    r"(0[xX]([0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?[0-9]+))[fFdD]?"
)


def parse_java_integer(text: str, bits: int) -> int:
    """``Byte.parseByte``/``Short.parseShort``/``Integer.parseInt``/``Long.parseLong``:
    an optional sign and decimal digits (any Unicode decimal digit, as Java's
    ``Character.digit`` reads them: ``"\u0663"`` is 3), in range; :class:`ValueError` otherwise."""
    if not _JAVA_INTEGER.fullmatch(text):
        raise ValueError(f'For input string: "{text}"')
    n = int(text)
    if not -(1 << (bits - 1)) <= n < (1 << (bits - 1)):
        raise ValueError(f'Value out of range. Value:"{text}"')
    return n


def parse_java_double(text: str) -> float:
    """``Double.parseDouble``: surrounding whitespace ignored; decimal, hexadecimal,
    ``NaN`` and ``Infinity`` forms with an optional ``f``/``d`` suffix; :class:`ValueError`
    otherwise."""
    trimmed = text.strip("".join(chr(c) for c in range(0x21)))
    if not _JAVA_FLOATING.fullmatch(trimmed):
        raise ValueError(f'For input string: "{text}"')
    # A trailing f/F/d/D is always a type suffix: hexadecimal forms end with the decimal
    # digits of their binary exponent.
    body = trimmed[:-1] if trimmed[-1] in "fFdD" else trimmed
    if "x" in body[:3].lower():
        return float.fromhex(body)
    return float(body.replace("Infinity", "inf"))


def parse_java_float(text: str) -> float:
    """``Float.parseFloat`` (see :func:`parse_java_double`), rounded to a single."""
    return to_float32(parse_java_double(text))


_CONNECT_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def parse_connect_number(text: str) -> int | _decimal.Decimal:
    """A number written in a string, as Connect's ``Values.convertTo…(null, text)`` reads
    it: an integer, or a decimal for anything with a fraction or an exponent. Raises
    :class:`~sluice.api.errors.DataError` (``Unable to convert …``) for anything else."""
    if _JAVA_INTEGER.fullmatch(text):
        return int(text)
    if _CONNECT_NUMBER.fullmatch(text):
        return _decimal.Decimal(text)
    raise DataError(f"Unable to convert {text} (class java.lang.String) to a number")


def number_to_int(value: int | float | _decimal.Decimal, bits: int) -> int:
    """``Number.byteValue()``/``shortValue()``/``intValue()``/``longValue()`` of a Java
    number represented by ``value``: integers and decimals keep their low bits (decimals are
    truncated first), doubles are cast as :func:`float_to_int`."""
    if isinstance(value, float):
        return float_to_int(value, bits)
    if isinstance(value, _decimal.Decimal):
        if not value.is_finite():
            raise DataError(f"Decimal value {value} is not finite")
        return wrap_int(int(value), bits)
    return wrap_int(int(value), bits)
