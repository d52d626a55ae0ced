"""``org.apache.kafka.connect.json.JsonConverter``, byte for byte.

Output is what Kafka's Jackson-based converter writes: compact JSON (no spaces),
non-ASCII characters of the Basic Multilingual Plane written as UTF-8 but characters
beyond it (emoji ...) as escaped surrogate pairs (``\\uD83D\\uDE00``, as Jackson's UTF-8
generator does), control characters escaped as ``\\n``, ``\\t`` ... or ``\\u00XX``
(upper-case hex), doubles and floats formatted as Java's ``Double.toString``/
``Float.toString`` (``1.0``, ``1.0E10``; the shortest digits, as JDK 19+ prints them),
``NaN``/``Infinity`` written as quoted strings, bytes as padded base64.

Reading follows Kafka's parser, which reads every number as a ``BigDecimal``: ``-0.0``
reads as ``0.0`` (also as a Decimal), a FLOAT32 beyond single precision's range as an
infinity, and a quoted ``"NaN"`` under a FLOAT64 schema as ``0.0``.

With ``schemas.enable=true`` (the default) every value is wrapped in
``{"schema":<schema>,"payload":<value>}``; the schema JSON has its keys in Kafka's
order: ``type``, then ``items`` (arrays), ``keys``/``values`` (maps) or ``fields``
(structs, each field schema followed by its ``"field"`` name), then ``optional``,
``name``, ``version``, ``doc``, ``parameters`` and ``default`` (each only when set).

Python values for the logical types: :class:`decimal.Decimal` (``Decimal``),
:class:`datetime.date` (``Date``), :class:`datetime.time` (``Time``) and
:class:`datetime.datetime` (``Timestamp``, returned timezone-aware in UTC).

Known differences from Kafka (all at the edges):

* FLOAT32 values read back are Python floats holding the decimal value written, not
  rounded to single precision (they serialise back to the same text).
* Java's ``Integer``/``Long`` distinction does not exist: schemaless integers are written
  as they are and read back as (64-bit wrapped) ``int``.
* Error messages name Python classes where Kafka names Java classes.

``tests/integration/test_converter_parity.py`` compares all of this with Kafka's own
JsonConverter byte for byte.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import decimal
import json
import math
import re
from collections.abc import Callable
from typing import Any

from sluice._java.names import class_string
from sluice._java.numbers import narrow
from sluice._java.text import jackson_quoter
from sluice.api.config import ConfigDef, ConfigType, Importance, ValidString, Width
from sluice.api.converter import Converter, SchemaAndValue
from sluice.api.data import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
    java_double_string,
    java_float_string,
    java_string,
    schema_type_of,
)
from sluice.api.errors import ConfigError, DataError
from sluice.converters._common import TYPE_CONFIG, ConvertsHeadersAsValues, converter_config_def

__all__ = ["JsonConverter"]

SCHEMAS_ENABLE_CONFIG = "schemas.enable"
SCHEMAS_CACHE_SIZE_CONFIG = "schemas.cache.size"
SCHEMA_CONTENT_CONFIG = "schema.content"
DECIMAL_FORMAT_CONFIG = "decimal.format"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"

ENVELOPE_ERROR = (
    'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional '
    "fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter "
    "configuration."
)
DESERIALIZE_ERROR = "Converting byte[] to Kafka Connect data failed due to serialization error: "


def _config_def() -> ConfigDef:
    return (
        converter_config_def()
        .define(
            SCHEMAS_ENABLE_CONFIG,
            ConfigType.BOOLEAN,
            True,
            importance=Importance.HIGH,
            documentation="Include schemas within each of the serialized values and keys.",
            group="Schemas",
            order_in_group=0,
            width=Width.MEDIUM,
            display_name="Enable Schemas",
        )
        .define(
            SCHEMAS_CACHE_SIZE_CONFIG,
            ConfigType.INT,
            1000,
            importance=Importance.HIGH,
            documentation="The maximum number of schemas that can be cached in this converter instance.",
            group="Schemas",
            order_in_group=1,
            width=Width.MEDIUM,
            display_name="Schema Cache Size",
        )
        .define(
            SCHEMA_CONTENT_CONFIG,
            ConfigType.STRING,
            None,
            importance=Importance.HIGH,
            documentation="A JSON schema (the envelope's schema form) applied to every message read; when set, "
            "messages are read as bare payloads and any schema inside a message is ignored.",
            group="Schemas",
            order_in_group=2,
            width=Width.MEDIUM,
            display_name="Schema Content",
        )
        .define(
            DECIMAL_FORMAT_CONFIG,
            ConfigType.STRING,
            "BASE64",
            validator=ValidString.in_case_insensitive("BASE64", "NUMERIC"),
            importance=Importance.LOW,
            documentation="Controls which format this converter will serialize decimals in. This value is case "
            "insensitive and can be either 'BASE64' (default) or 'NUMERIC'",
            group="Serialization",
            order_in_group=0,
            width=Width.MEDIUM,
            display_name="Decimal Format",
        )
        .define(
            REPLACE_NULL_WITH_DEFAULT_CONFIG,
            ConfigType.BOOLEAN,
            True,
            importance=Importance.LOW,
            documentation="Whether to replace fields that have a default value and that are null to the default "
            "value. When set to true, the default value is used, otherwise null is used.",
            group="Serialization",
            order_in_group=1,
            width=Width.MEDIUM,
            display_name="Replace null with default",
        )
    )


_CONFIG_DEF = _config_def()


def _text_and_decoder(value: bytes | bytearray | memoryview) -> tuple[str, Any]:
    """The message as text (a leading BOM dropped) and the JSON decoder it needs."""
    try:
        text = value.decode("utf-8") if isinstance(value, bytes) else bytes(value).decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(DESERIALIZE_ERROR) from e
    if text[:1] == "\ufeff":
        text = text[1:]
    return text, (_DECIMAL_DECODER if Decimal.LOGICAL_NAME in text else _DECODER)


# -- JSON text helpers ------------------------------------------------------------------

# JsonConverter writes strings as Jackson's UTF-8 generator does, characters beyond the BMP
# as escaped surrogate pairs (\uD83D\uDE00); a lone surrogate is left as it is, so encoding
# the text as UTF-8 refuses it (a DataError), where Jackson would write it escaped.
_jstr = jackson_quoter("pairs")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# Jackson refuses an object key with an unpaired surrogate, and Kafka's fromConnectData
# reports it with its toConnectData message.
JACKSON_FIELD_NAME_ERROR = DESERIALIZE_ERROR


def _escaped_lone_surrogates(text: str) -> bytes:
    """``text`` as UTF-8, its lone UTF-16 surrogates (which only string literals hold: the
    quoter writes them as they are) as ``\\uD800`` escapes, as Jackson writes them."""
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04X}", text).encode("utf-8")


def _double(value: float) -> str:
    text = java_double_string(value)
    return text if text[-1].isdigit() else f'"{text}"'  # NaN / Infinity are quoted by Jackson


def _float(value: float) -> str:
    text = java_float_string(value)
    return text if text[-1].isdigit() else f'"{text}"'


def _b64(value: bytes | bytearray | memoryview) -> str:
    return '"' + base64.b64encode(value).decode("ascii") + '"'


_MISSING = object()  # Jackson's MissingNode: empty input


def _node_type(node: Any) -> str:
    if node is None:
        return "NULL"
    if node is _MISSING:
        return "MISSING"
    if isinstance(node, bool):
        return "BOOLEAN"
    if isinstance(node, (int, float, decimal.Decimal)):
        return "NUMBER"
    if isinstance(node, str):
        return "STRING"
    if isinstance(node, list):
        return "ARRAY"
    return "OBJECT"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"Non-standard token '{name}'")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_DECIMAL_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=decimal.Decimal)
_WS = " \t\r\n"


def _is_number(node: Any) -> bool:
    return isinstance(node, (int, float, decimal.Decimal)) and not isinstance(node, bool)


def _java_int(node: Any) -> int:
    """``JsonNode.intValue()``: numbers truncated to 32 bits, anything else 0."""
    if isinstance(node, bool) or not _is_number(node):
        return 0
    return narrow(int(node), 32)


def _java_long(node: Any) -> int:
    if isinstance(node, bool) or not _is_number(node):
        return 0
    return narrow(int(node), 64)


def _java_double(node: Any) -> float:
    """``JsonNode.doubleValue()`` of the node Kafka's parser builds: numbers are read as
    BigDecimal, which has no negative zero, so ``-0.0`` reads as ``0.0``."""
    if isinstance(node, bool) or not _is_number(node):
        return 0.0
    return float(node) or 0.0


_FLOAT32_MAX = 3.4028235677973366e38  # values from here on round to infinity in float32


def _java_float(node: Any) -> float:
    """``JsonNode.floatValue()``: the decimal value written (not rounded to single
    precision), except that a value beyond float32's range is an infinity, as in Java."""
    value = _java_double(node)
    if value >= _FLOAT32_MAX or value <= -_FLOAT32_MAX:
        return math.copysign(math.inf, value)
    return value


def _is_int32(node: Any) -> bool:
    return type(node) is int and -(2**31) <= node < 2**31


def _base64_decode(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


# -- logical types ----------------------------------------------------------------------


def _decimal_to_json(conv: JsonConverter, schema: Schema, value: Any) -> str:
    if not isinstance(value, decimal.Decimal):
        raise DataError(f"Invalid type for Decimal, expected BigDecimal but was {class_string(value)}")
    if conv._decimal_numeric:
        if not value.is_finite():
            raise DataError(f"Decimal value {value} is not finite")
        return java_string(value)
    return _b64(Decimal.from_logical(schema, value))


def _decimal_to_connect(schema: Schema, node: Any) -> Any:
    if _is_number(node):
        if isinstance(node, decimal.Decimal):
            result = node
        elif isinstance(node, int):
            result = decimal.Decimal(node)
        else:
            result = decimal.Decimal(repr(node))
        return result.copy_abs() if result.is_zero() else result  # BigDecimal has no -0
    if isinstance(node, str):
        try:
            return Decimal.to_logical(schema, _base64_decode(node))
        except Exception as e:
            raise DataError("Invalid bytes for Decimal field") from e
    raise DataError(
        f"Invalid type for Decimal, underlying representation should be numeric or bytes but was {_node_type(node)}"
    )


def _date_to_json(conv: JsonConverter, schema: Schema, value: Any) -> str:
    if not isinstance(value, _dt.date):
        raise DataError(f"Invalid type for Date, expected Date but was {class_string(value)}")
    return str(Date.from_logical(schema, value))


def _date_to_connect(schema: Schema, node: Any) -> Any:
    if not _is_int32(node):
        raise DataError(
            f"Invalid type for Date, underlying representation should be integer but was {_node_type(node)}"
        )
    return Date.to_logical(schema, node)


def _time_to_json(conv: JsonConverter, schema: Schema, value: Any) -> str:
    if not isinstance(value, (_dt.time, _dt.datetime)):
        raise DataError(f"Invalid type for Time, expected Date but was {class_string(value)}")
    return str(Time.from_logical(schema, value))


def _time_to_connect(schema: Schema, node: Any) -> Any:
    if not _is_int32(node):
        raise DataError(
            f"Invalid type for Time, underlying representation should be integer but was {_node_type(node)}"
        )
    return Time.to_logical(schema, node)


def _timestamp_to_json(conv: JsonConverter, schema: Schema, value: Any) -> str:
    if not isinstance(value, _dt.date):
        raise DataError(f"Invalid type for Timestamp, expected Date but was {class_string(value)}")
    return str(Timestamp.from_logical(schema, value))


def _timestamp_to_connect(schema: Schema, node: Any) -> Any:
    if type(node) is not int:
        raise DataError(
            f"Invalid type for Timestamp, underlying representation should be integral but was {_node_type(node)}"
        )
    return Timestamp.to_logical(schema, narrow(node, 64))


_LOGICAL_TO_JSON: dict[str, Callable[[JsonConverter, Schema, Any], str]] = {
    Decimal.LOGICAL_NAME: _decimal_to_json,
    Date.LOGICAL_NAME: _date_to_json,
    Time.LOGICAL_NAME: _time_to_json,
    Timestamp.LOGICAL_NAME: _timestamp_to_json,
}
_LOGICAL_TO_CONNECT: dict[str, Callable[[Schema, Any], Any]] = {
    Decimal.LOGICAL_NAME: _decimal_to_connect,
    Date.LOGICAL_NAME: _date_to_connect,
    Time.LOGICAL_NAME: _time_to_connect,
    Timestamp.LOGICAL_NAME: _timestamp_to_connect,
}

_PRIMITIVE_BUILDERS: dict[str, Callable[[], SchemaBuilder]] = {
    "boolean": SchemaBuilder.bool,
    "int8": SchemaBuilder.int8,
    "int16": SchemaBuilder.int16,
    "int32": SchemaBuilder.int32,
    "int64": SchemaBuilder.int64,
    "float": SchemaBuilder.float32,
    "double": SchemaBuilder.float64,
    "bytes": SchemaBuilder.bytes,
    "string": SchemaBuilder.string,
}

_INT_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}


class JsonConverter(Converter, ConvertsHeadersAsValues):
    """Connect data ⇄ JSON bytes. Configs: ``schemas.enable`` (true),
    ``schemas.cache.size`` (1000), ``decimal.format`` (BASE64 | NUMERIC),
    ``replace.null.with.default`` (true)."""

    def __init__(self) -> None:
        self._schemas_enable = True
        self._cache_size = 1000
        self._decimal_numeric = False
        self._replace_null = True
        self._from_cache: dict[Schema, str] = {}
        self._to_cache: dict[str, Schema | None] = {}
        self._field_cache: dict[Schema, list[tuple[Any, str]]] = {}
        self._compiled_cache: dict[Schema, Callable[[Any], Any]] = {}
        # (envelope text up to the payload, schema, payload conversion) of the last record
        self._last_envelope: tuple[str, Schema, Callable[[Any], Any]] | None = None

    # -- configuration --------------------------------------------------------------

    def config(self) -> ConfigDef:
        return _config_def()

    def configure(self, configs: dict[str, Any], is_key: bool | None = None) -> None:
        """``configure(configs, is_key)`` as a key/value converter; ``configure(configs)``
        as a header converter (``converter.type`` then defaults to ``header``)."""
        conf = dict(configs)
        if is_key is not None:
            conf[TYPE_CONFIG] = "key" if is_key else "value"
        else:
            conf.setdefault(TYPE_CONFIG, "header")
        parsed = _CONFIG_DEF.parse(conf)
        self._schemas_enable = parsed[SCHEMAS_ENABLE_CONFIG]
        self._cache_size = parsed[SCHEMAS_CACHE_SIZE_CONFIG]
        self._decimal_numeric = parsed[DECIMAL_FORMAT_CONFIG].upper() == "NUMERIC"
        self._replace_null = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._from_cache.clear()
        self._to_cache.clear()
        self._field_cache.clear()
        self._compiled_cache.clear()
        self._last_envelope = None
        self._fixed_schema: Schema | None = None
        content = parsed[SCHEMA_CONTENT_CONFIG]
        if content:
            try:
                self._fixed_schema = self.as_connect_schema(json.loads(content))
            except (ValueError, DataError) as e:
                raise ConfigError(SCHEMA_CONTENT_CONFIG, content, f"not a valid JSON schema: {e}") from None

    def close(self) -> None:
        pass

    # -- Connect -> bytes -----------------------------------------------------------

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any, headers: Any = None) -> bytes | None:
        if schema is None and value is None:
            return None
        if self._schemas_enable:
            text = '{"schema":' + self._schema_json(schema) + ',"payload":' + self._to_json(schema, value) + "}"
        else:
            text = self._to_json(schema, value)
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            return _escaped_lone_surrogates(text)

    def from_connect_batch(
        self, topic: str, schemas: list[Schema | None], values: list[Any]
    ) -> list[bytes | None] | None:
        if self._schemas_enable:
            return [self.from_connect_data(topic, s, v) for s, v in zip(schemas, values, strict=True)]
        to_json = self._to_json
        try:
            return [
                None if s is None and v is None else to_json(s, v).encode("utf-8")
                for s, v in zip(schemas, values, strict=True)
            ]
        except UnicodeEncodeError:  # a lone surrogate somewhere: the batch again, the slow way
            return [self.from_connect_data(topic, s, v) for s, v in zip(schemas, values, strict=True)]

    def as_json_schema(self, schema: Schema | None) -> dict[str, Any] | None:
        """The schema's JSON form as a dict (``asJsonSchema``)."""
        return json.loads(self._schema_json(schema))

    def _cache_put(self, cache: dict, key: Any, value: Any) -> None:
        if self._cache_size <= 0:
            return
        if len(cache) >= self._cache_size:
            del cache[next(iter(cache))]
        cache[key] = value

    def _schema_json(self, schema: Schema | None) -> str:
        if schema is None:
            return "null"
        cached = self._from_cache.get(schema)
        if cached is not None:
            return cached
        t = schema.type
        if t is Type.ARRAY:
            parts = ['{"type":"array","items":', self._schema_json(schema.value_schema())]
        elif t is Type.MAP:
            parts = [
                '{"type":"map","keys":',
                self._schema_json(schema.key_schema()),
                ',"values":',
                self._schema_json(schema.value_schema()),
            ]
        elif t is Type.STRUCT:
            fields = ",".join(
                self._schema_json(f.schema)[:-1] + ',"field":' + _jstr(f.name) + "}" for f in schema.fields()
            )
            parts = ['{"type":"struct","fields":[', fields, "]"]
        else:
            parts = ['{"type":"', t.value, '"']
        parts.append(',"optional":true' if schema.optional else ',"optional":false')
        if schema.name is not None:
            parts += [',"name":', _jstr(schema.name)]
        if schema.version is not None:
            parts += [',"version":', str(int(schema.version))]
        if schema.doc is not None:
            parts += [',"doc":', _jstr(schema.doc)]
        if schema.parameters is not None:
            params = ",".join(_jstr(str(k)) + ":" + _jstr(str(v)) for k, v in schema.parameters.items())
            parts += [',"parameters":{', params, "}"]
        if schema.default_value is not None:
            parts += [',"default":', self._to_json(schema, schema.default_value)]
        parts.append("}")
        result = "".join(parts)
        self._cache_put(self._from_cache, schema, result)
        return result

    def _to_json(self, schema: Schema | None, value: Any) -> str:
        if value is None:
            if schema is None:
                return "null"
            if schema.default_value is not None and self._replace_null:
                return self._to_json(schema, schema.default_value)
            if schema.optional:
                return "null"
            raise DataError("Conversion error: null value for field that is required and has no default value")
        if schema is not None:
            if schema.name is not None:
                logical = _LOGICAL_TO_JSON.get(schema.name)
                if logical is not None:
                    return logical(self, schema, value)
            t = schema.type
            if t is Type.STRING:  # the hot path
                if type(value) is str:
                    return _jstr(value)
                raise DataError(f"Invalid type for STRING: {class_string(value)}")
        else:
            t = _infer_type(value)
        return _TO_JSON[t](self, schema, value)

    def _struct_fields(self, schema: Schema) -> list[tuple[Any, str]]:
        cached = self._field_cache.get(schema)
        if cached is None:
            if any(_LONE_SURROGATE.search(f.name) for f in schema.fields()):
                raise DataError(JACKSON_FIELD_NAME_ERROR)
            cached = [(f, _jstr(f.name) + ":") for f in schema.fields()]
            self._cache_put(self._field_cache, schema, cached)
        return cached

    # -- bytes -> Connect -----------------------------------------------------------

    def to_connect_data(self, topic: str, value: bytes | None, headers: Any = None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(None, None)
        text, decoder = _text_and_decoder(value)
        if self._fixed_schema is not None:
            node = _parse(text, decoder)
            if isinstance(node, dict) and len(node) == 2 and "schema" in node and "payload" in node:
                node = node["payload"]  # a schema inside the message is ignored
            return SchemaAndValue(self._fixed_schema, self._to_connect(self._fixed_schema, node))
        if not self._schemas_enable:
            return SchemaAndValue(None, self._to_connect(None, _parse(text, decoder)))
        last = self._last_envelope
        if last is not None and text.startswith(last[0]):
            # The same schema text as the last record's (the usual case): only the payload
            # needs parsing. A JSON value's text ends where its value does, so a match is
            # exactly that schema.
            try:
                payload, end = decoder.raw_decode(text, len(last[0]))
            except ValueError:
                pass
            else:
                if text[end : end + 1] == "}" or text[end:].lstrip(_WS)[:1] == "}":
                    return SchemaAndValue(last[1], last[2](payload))
        envelope = _fast_envelope(text, decoder) if text.startswith('{"schema":') else None
        if envelope is not None:
            key, schema_node, payload = envelope
        else:
            node = _parse(text, decoder)
            if not (isinstance(node, dict) and len(node) == 2 and "schema" in node and "payload" in node):
                raise DataError(ENVELOPE_ERROR)
            schema_node, payload = node["schema"], node["payload"]
            key = repr(schema_node)
        if schema_node is None:
            return SchemaAndValue(None, self._to_connect(None, payload))
        if key in self._to_cache:
            schema = self._to_cache[key]
        else:
            schema = self.as_connect_schema(schema_node)
            self._cache_put(self._to_cache, key, schema)
        assert schema is not None
        convert = self._compiled_cache.get(schema)
        if convert is None:
            convert = self._compile(schema)
            self._cache_put(self._compiled_cache, schema, convert)
        value = convert(payload)
        if envelope is not None:
            self._last_envelope = ('{"schema":' + key + ',"payload":', schema, convert)
        return SchemaAndValue(schema, value)

    # The per-schema fast path: ``_compile(schema)(node) == _to_connect(schema, node)``,
    # with the type dispatch done once per schema instead of once per value, and struct
    # fields checked only where the conversion alone does not guarantee a fitting value.

    def _compile(self, schema: Schema) -> Callable[[Any], Any]:
        convert = self._compile_present(schema)
        default = schema.default_value if self._replace_null else None
        optional = schema.optional
        null_error = f"Invalid null value for required {schema.type.name} field"

        def from_node(node: Any) -> Any:
            if node is None or node is _MISSING:
                if default is not None:
                    return default
                if optional:
                    return None
                raise DataError(null_error)
            return convert(node)

        return from_node

    def _compile_present(self, schema: Schema) -> Callable[[Any], Any]:
        """The conversion of a node that is neither null nor missing."""
        logical = _LOGICAL_TO_CONNECT.get(schema.name) if schema.name is not None else None
        if logical is not None:
            if schema.name == Timestamp.LOGICAL_NAME:

                def timestamp(node: Any) -> Any:
                    if type(node) is int and _LONG_MIN <= node <= _LONG_MAX:
                        return _UTC_EPOCH + _dt.timedelta(milliseconds=node)  # Timestamp.to_logical
                    return logical(schema, node)

                return timestamp
            return lambda node: logical(schema, node)
        direct = _DIRECT_TO_CONNECT.get(schema.type)
        if direct is not None:
            return direct
        if schema.type is Type.STRUCT:
            return self._compile_struct(schema)
        generic = _TO_CONNECT[schema.type]
        return lambda node: generic(self, schema, node)

    def _compile_struct(self, schema: Schema) -> Callable[[Any], Any]:
        plan = []
        for index, f in enumerate(schema.fields()):
            if f.index != index:  # not in field order: keep the generic path
                return lambda node: _struct_to_connect(self, schema, node)
            fs = f.schema
            # Arrays and maps may hold null elements a required element schema refuses
            # (other conversions give a value of the schema's type, or null, or raise).
            check = fs.type in (Type.ARRAY, Type.MAP)
            plan.append((f.name, self._compile(fs), fs, f, check))
        # One function per struct schema, its fields unrolled: values that already have the
        # field's type pass as they are, the rest go through the field's conversion.
        namespace: dict[str, Any] = {
            "DataError": DataError,
            "node_type": _node_type,
            "MISSING": _MISSING,
            "validate": Schema.validate_value,
            "from_converted": Struct.from_converted,
            "schema": schema,
        }
        lines = [
            "def build(node):",
            "    if type(node) is not dict and not isinstance(node, dict):",
            "        raise DataError('Structs should be encoded as JSON objects, but found ' + node_type(node))",
            "    get = node.get",
        ]
        for i, (name, convert, fs, f, check) in enumerate(plan):
            namespace.update({f"n{i}": name, f"c{i}": convert, f"s{i}": fs, f"f{i}": f})
            lines.append(f"    x = get(n{i}, MISSING)")
            same_type = None if fs.name is not None else _SAME_TYPE_TESTS.get(fs.type)
            if same_type is not None:
                lines.append(f"    v{i} = x if {same_type} else c{i}(x)")
            else:
                lines.append(f"    v{i} = c{i}(x)")
            lines.append(
                f"    validate(s{i}, v{i}, f{i})" if check else f"    if v{i} is None: validate(s{i}, None, f{i})"
            )
        lines.append(f"    return from_converted(schema, [{', '.join(f'v{i}' for i in range(len(plan)))}])")
        exec("\n".join(lines), namespace)  # noqa: S102 - built from indexes only; names are values
        return namespace["build"]

    def to_connect_batch(self, topic: str, values: list[bytes | None]) -> tuple[list[Schema | None], list[Any]] | None:
        if self._schemas_enable or self._fixed_schema is not None:
            pairs = [self.to_connect_data(topic, v) for v in values]
            return [p.schema for p in pairs], [p.value for p in pairs]
        to_connect = self._to_connect
        out: list[Any] = []
        append = out.append
        for value in values:
            if value is None:
                append(None)
                continue
            text, decoder = _text_and_decoder(value)
            append(to_connect(None, _parse(text, decoder)))
        return [None] * len(values), out

    def as_connect_schema(self, node: Any) -> Schema | None:
        """A Connect schema from its JSON form (``asConnectSchema``); ``None`` for null."""
        if node is None:
            return None
        type_node = node.get("type") if isinstance(node, dict) else None
        if not isinstance(type_node, str):
            raise DataError("Schema must contain 'type' field")
        primitive = _PRIMITIVE_BUILDERS.get(type_node)
        if primitive is not None:
            builder = primitive()
        elif type_node == "array":
            items = node.get("items")
            if items is None:
                raise DataError("Array schema did not specify the element type")
            builder = SchemaBuilder.array(self.as_connect_schema(items))  # type: ignore[arg-type]
        elif type_node == "map":
            if "keys" not in node:
                raise DataError("Map schema did not specify the key type")
            if "values" not in node:
                raise DataError("Map schema did not specify the value type")
            builder = SchemaBuilder.map(
                self.as_connect_schema(node["keys"]),  # type: ignore[arg-type]
                self.as_connect_schema(node["values"]),  # type: ignore[arg-type]
            )
        elif type_node == "struct":
            builder = SchemaBuilder.struct()
            fields = node.get("fields")
            if not isinstance(fields, list):
                raise DataError('Struct schema\'s "fields" argument is not an array.')
            for field in fields:
                name = field.get("field") if isinstance(field, dict) else None
                if not isinstance(name, str):
                    raise DataError("Struct schema's field name not specified properly")
                builder.field(name, self.as_connect_schema(field))  # type: ignore[arg-type]
        else:
            raise DataError(f"Unknown schema type: {type_node}")

        if node.get("optional") is True:
            builder.optional()
        else:
            builder.required()
        name = node.get("name")
        if isinstance(name, str):
            builder.name(name)
        version = node.get("version")
        if type(version) is int:
            builder.version(narrow(version, 32))
        doc = node.get("doc")
        if isinstance(doc, str):
            builder.doc(doc)
        params = node.get("parameters")
        if isinstance(params, dict):
            for k, v in params.items():
                if not isinstance(v, str):
                    raise DataError("Schema parameters must have string values.")
                builder.parameter(k, v)
        if "default" in node:
            builder.default_value(self._to_connect(builder.build(), node["default"]))
        return builder.build()

    def _to_connect(self, schema: Schema | None, node: Any) -> Any:
        if schema is not None:
            if node is None or node is _MISSING:
                if schema.default_value is not None and self._replace_null:
                    return schema.default_value
                if schema.optional:
                    return None
                raise DataError(f"Invalid null value for required {schema.type.name} field")
            if schema.name is not None:
                logical = _LOGICAL_TO_CONNECT.get(schema.name)
                if logical is not None:
                    return logical(schema, node)
            return _TO_CONNECT[schema.type](self, schema, node)
        # schemaless: infer from the JSON node
        if node is None or node is _MISSING:
            return None
        tp = type(node)
        if tp is str or tp is bool:
            return node
        if tp is int:
            return narrow(node, 64)
        if tp is float or tp is decimal.Decimal:
            return float(node) or 0.0  # Kafka reads numbers as BigDecimal: no -0.0
        if tp is list:
            return [self._to_connect(None, e) for e in node]
        return {k: self._to_connect(None, v) for k, v in node.items()}


def _infer_type(value: Any) -> Type:
    inferred = schema_type_of(value)
    if inferred is None:
        raise DataError(f"Java class {class_string(value)} does not have corresponding schema type.")
    return inferred


def _parse(text: str, decoder: json.JSONDecoder) -> Any:
    i, n = 0, len(text)
    while i < n and text[i] in _WS:
        i += 1
    if i == n:
        return _MISSING
    try:
        node, end = decoder.raw_decode(text, i)
    except ValueError as e:
        raise DataError(DESERIALIZE_ERROR) from e
    # Jackson stops after the first root value, but a number must be followed by a separator.
    if end < n and _is_number(node) and text[end] not in _WS:
        raise DataError(DESERIALIZE_ERROR)
    return node


def _fast_envelope(text: str, decoder: json.JSONDecoder) -> tuple[str, Any, Any] | None:
    """Parse ``{"schema":S,"payload":P}`` as Jackson writes it, keeping S's text as the
    schema cache key; ``None`` when the text has any other shape."""
    try:
        schema_node, end = decoder.raw_decode(text, 10)
        if not text.startswith(',"payload":', end):
            return None
        payload, end2 = decoder.raw_decode(text, end + 11)
    except ValueError:
        return None
    if text[end2 : end2 + 1] != "}" and text[end2:].lstrip(_WS)[:1] != "}":
        return None
    return text[10:end], schema_node, payload


# -- per-type converters ----------------------------------------------------------------


def _bad_type(schema: Schema | None, value: Any) -> DataError:
    what = schema.type.name if schema is not None else "unknown schema"
    return DataError(f"Invalid type for {what}: {class_string(value)}")


def _int_to_json(conv: JsonConverter, schema: Schema | None, value: Any) -> str:
    if type(value) is not int and (not isinstance(value, int) or isinstance(value, bool)):
        raise _bad_type(schema, value)
    if schema is not None:
        bits = _INT_BITS[schema.type]
        if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
            raise _bad_type(schema, value)
    return str(int(value))


def _float32_to_json(conv: JsonConverter, schema: Schema | None, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (float, int)):
        raise _bad_type(schema, value)
    return _float(float(value))


def _float64_to_json(conv: JsonConverter, schema: Schema | None, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (float, int)):
        raise _bad_type(schema, value)
    return _double(float(value))


def _bool_to_json(conv: JsonConverter, schema: Schema | None, value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    raise _bad_type(schema, value)


def _string_to_json(conv: JsonConverter, schema: Schema | None, value: Any) -> str:
    if not isinstance(value, str):
        raise _bad_type(schema, value)
    return _jstr(value)


def _bytes_to_json(conv: JsonConverter, schema: Schema | None, value: Any) -> str:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise DataError(f"Invalid type for bytes type: {class_string(value)}")
    return _b64(value)


def _array_to_json(conv: JsonConverter, schema: Schema | None, value: Any) -> str:
    if not isinstance(value, (list, tuple)):
        raise _bad_type(schema, value)
    vs = schema.value_schema() if schema is not None else None
    return "[" + ",".join([conv._to_json(vs, e) for e in value]) + "]"


def _map_key_text(conv: JsonConverter, ks: Schema | None, key: Any) -> str:
    if isinstance(key, str):
        return key
    node = conv._to_json(ks, key)  # JsonNode.asText() of the converted key
    if node.startswith('"'):
        return json.loads(node)
    if node[:1] in "[{":
        return ""
    return node


def _map_to_json(conv: JsonConverter, schema: Schema | None, value: Any) -> str:
    if not isinstance(value, dict):
        raise _bad_type(schema, value)
    ks: Schema | None
    vs: Schema | None
    if schema is not None:
        ks, vs = schema.key_schema(), schema.value_schema()
        object_mode = ks is not None and ks.type is Type.STRING
    else:
        ks = vs = None
        object_mode = all(isinstance(k, str) for k in value)
    if object_mode:
        entries: dict[str, str] = {}
        for k, v in value.items():
            key = _map_key_text(conv, ks, k)
            if not key.isascii() and _LONE_SURROGATE.search(key):
                raise DataError(JACKSON_FIELD_NAME_ERROR)
            entries[key] = conv._to_json(vs, v)
        return "{" + ",".join(_jstr(k) + ":" + v for k, v in entries.items()) + "}"
    return "[" + ",".join("[" + conv._to_json(ks, k) + "," + conv._to_json(vs, v) + "]" for k, v in value.items()) + "]"


def _struct_to_json(conv: JsonConverter, schema: Schema | None, value: Any) -> str:
    if not isinstance(value, Struct) or schema is None or (value.schema is not schema and value.schema != schema):
        raise DataError("Mismatching schema.")
    to_json = conv._to_json
    if conv._replace_null:
        parts = [prefix + to_json(f.schema, value.get(f)) for f, prefix in conv._struct_fields(schema)]
    else:
        parts = [
            prefix + to_json(f.schema, value.get_without_default(f.name)) for f, prefix in conv._struct_fields(schema)
        ]
    return "{" + ",".join(parts) + "}"


_TO_JSON: dict[Type, Callable[[JsonConverter, Schema | None, Any], str]] = {
    Type.INT8: _int_to_json,
    Type.INT16: _int_to_json,
    Type.INT32: _int_to_json,
    Type.INT64: _int_to_json,
    Type.FLOAT32: _float32_to_json,
    Type.FLOAT64: _float64_to_json,
    Type.BOOLEAN: _bool_to_json,
    Type.STRING: _string_to_json,
    Type.BYTES: _bytes_to_json,
    Type.ARRAY: _array_to_json,
    Type.MAP: _map_to_json,
    Type.STRUCT: _struct_to_json,
}


def _bytes_to_connect(conv: JsonConverter, schema: Schema, node: Any) -> Any:
    if not isinstance(node, str):
        return None  # JsonNode.binaryValue() of a non-text node
    try:
        return _base64_decode(node)
    except (binascii.Error, ValueError) as e:
        raise DataError("Invalid bytes field") from e


def _array_to_connect(conv: JsonConverter, schema: Schema, node: Any) -> Any:
    vs = schema.value_schema()
    if isinstance(node, list):
        return [conv._to_connect(vs, e) for e in node]
    if isinstance(node, dict):  # Jackson iterates an object's values
        return [conv._to_connect(vs, e) for e in node.values()]
    return []


def _map_to_connect(conv: JsonConverter, schema: Schema, node: Any) -> Any:
    ks, vs = schema.key_schema(), schema.value_schema()
    if ks is None or ks.type is Type.STRING:
        if not isinstance(node, dict):
            raise DataError(f"Maps with string fields should be encoded as JSON objects, but found {_node_type(node)}")
        return {k: conv._to_connect(vs, v) for k, v in node.items()}
    if not isinstance(node, list):
        raise DataError(
            f"Maps with non-string fields should be encoded as JSON array of tuples, but found {_node_type(node)}"
        )
    result: dict[Any, Any] = {}
    for entry in node:
        if not isinstance(entry, list):
            raise DataError(f"Found invalid map entry instead of array tuple: {_node_type(entry)}")
        if len(entry) != 2:
            raise DataError(f"Found invalid map entry, expected length 2 but found :{len(entry)}")
        key = conv._to_connect(ks, entry[0])
        try:
            result[key] = conv._to_connect(vs, entry[1])
        except TypeError as e:
            raise DataError(f"Unhashable map key: {key!r}") from e
    return result


def _struct_to_connect(conv: JsonConverter, schema: Schema, node: Any) -> Any:
    if not isinstance(node, dict):
        raise DataError(f"Structs should be encoded as JSON objects, but found {_node_type(node)}")
    result = Struct(schema)
    to_connect = conv._to_connect
    for f, _prefix in conv._struct_fields(schema):
        result.put(f, to_connect(f.schema, node.get(f.name, _MISSING)))
    return result


_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_UTC_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)


def _int32_node(node: Any) -> int:
    return node if type(node) is int and -(2**31) <= node < 2**31 else _java_int(node)


def _int64_node(node: Any) -> int:
    return node if type(node) is int and _LONG_MIN <= node <= _LONG_MAX else _java_long(node)


def _float64_node(node: Any) -> float:
    return (node or 0.0) if type(node) is float else _java_double(node)


# Tests (on a node ``x``) under which a JSON node already is the Connect value of an
# unnamed schema of that type, so the compiled struct reader takes it as it is.
_SAME_TYPE_TESTS: dict[Type, str] = {
    Type.BOOLEAN: "(x is True or x is False)",
    Type.INT32: f"(type(x) is int and {-(2**31)} <= x <= {2**31 - 1})",
    Type.INT64: f"(type(x) is int and {_LONG_MIN} <= x <= {_LONG_MAX})",
    Type.FLOAT64: "(type(x) is float and x != 0.0)",  # zero: -0.0 reads as 0.0
    Type.STRING: "type(x) is str",
}

# The conversions of primitive nodes (neither null nor missing), which need neither the
# converter nor the schema; each tries the common node type first.
_DIRECT_TO_CONNECT: dict[Type, Callable[[Any], Any]] = {
    Type.BOOLEAN: lambda node: node is True,
    Type.INT8: lambda node: narrow(_java_int(node), 8),
    Type.INT16: lambda node: narrow(_java_int(node), 16),
    Type.INT32: _int32_node,
    Type.INT64: _int64_node,
    Type.FLOAT32: _java_float,
    Type.FLOAT64: _float64_node,
    Type.STRING: lambda node: node if type(node) is str or isinstance(node, str) else None,
}


def _ignoring_converter(convert: Callable[[Any], Any]) -> Callable[[JsonConverter, Schema, Any], Any]:
    return lambda conv, schema, node: convert(node)


_TO_CONNECT: dict[Type, Callable[[JsonConverter, Schema, Any], Any]] = {
    **{t: _ignoring_converter(convert) for t, convert in _DIRECT_TO_CONNECT.items()},
    Type.BYTES: _bytes_to_connect,
    Type.ARRAY: _array_to_connect,
    Type.MAP: _map_to_connect,
    Type.STRUCT: _struct_to_connect,
}
