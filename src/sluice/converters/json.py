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

The values are written and read by :class:`sluice.formats.json_data.JsonData` (shared with
the storage sinks' JSON files); this module adds the configuration, the envelope and the
bytes. ``tests/integration/test_converter_parity.py`` compares all of this with Kafka's own
JsonConverter byte for byte.
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Callable
from typing import Any

import msgspec

from sluice._java.numbers import narrow
from sluice.api.config import ConfigDef, ConfigType, Importance, ValidString, Width
from sluice.api.converter import Converter, SchemaAndValue
from sluice.api.data import Decimal, Schema, SchemaBuilder, Type
from sluice.api.errors import ConfigError, DataError
from sluice.converters._common import TYPE_CONFIG, ConvertsHeadersAsValues, converter_config_def
from sluice.formats.json_data import DESERIALIZE_ERROR, JsonData
from sluice.formats.json_nodes import MISSING, is_number, json_bytes, quote_string

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


def _reject_constant(name: str) -> Any:
    raise ValueError(f"Non-standard token '{name}'")


_msgspec_decode: Callable[[Any], Any] = msgspec.json.decode
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_DECIMAL_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=decimal.Decimal)
_WS = " \t\r\n"


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


class JsonConverter(Converter, ConvertsHeadersAsValues):
    """Connect data ⇄ JSON bytes. Configs: ``schemas.enable`` (true),
    ``schemas.cache.size`` (1000), ``decimal.format`` (BASE64 | NUMERIC),
    ``replace.null.with.default`` (true)."""

    def __init__(self) -> None:
        self._schemas_enable = True
        self._from_cache: dict[Schema, str] = {}
        self._to_cache: dict[str, Schema | None] = {}
        self._compiled_cache: dict[Schema, Callable[[Any], Any]] = {}
        # (envelope text up to the payload, schema, payload conversion) of the last record
        self._last_envelope: tuple[str, Schema, Callable[[Any], Any]] | None = None
        self._use(JsonData())

    def _use(self, data: JsonData) -> None:
        """Write and read values with ``data``. Its methods are bound here, once, so that the
        per-record paths call them without looking the mapping up."""
        self._data = data
        self._to_json = data.to_json
        self._to_connect = data.to_connect
        self._compile = data.compile

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
        self._use(
            JsonData(
                decimal_numeric=parsed[DECIMAL_FORMAT_CONFIG].upper() == "NUMERIC",
                replace_null_with_default=parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG],
                cache_size=parsed[SCHEMAS_CACHE_SIZE_CONFIG],
            )
        )
        self._from_cache.clear()
        self._to_cache.clear()
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
        except UnicodeEncodeError:  # a lone surrogate: escaped, as Jackson writes it
            return json_bytes(text)

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
                self._schema_json(f.schema)[:-1] + ',"field":' + quote_string(f.name) + "}" for f in schema.fields()
            )
            parts = ['{"type":"struct","fields":[', fields, "]"]
        else:
            parts = ['{"type":"', t.value, '"']
        parts.append(',"optional":true' if schema.optional else ',"optional":false')
        if schema.name is not None:
            parts += [',"name":', quote_string(schema.name)]
        if schema.version is not None:
            parts += [',"version":', str(int(schema.version))]
        if schema.doc is not None:
            parts += [',"doc":', quote_string(schema.doc)]
        if schema.parameters is not None:
            params = ",".join(quote_string(str(k)) + ":" + quote_string(str(v)) for k, v in schema.parameters.items())
            parts += [',"parameters":{', params, "}"]
        if schema.default_value is not None:
            parts += [',"default":', self._to_json(schema, schema.default_value)]
        parts.append("}")
        result = "".join(parts)
        self._data.cache_put(self._from_cache, schema, result)
        return result

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
        known = self._with_last_schema(text, decoder)
        if known is not None:
            return SchemaAndValue(*known)
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
            self._data.cache_put(self._to_cache, key, schema)
        assert schema is not None
        convert = self._compiled_cache.get(schema)
        if convert is None:
            convert = self._compile(schema)
            self._data.cache_put(self._compiled_cache, schema, convert)
        value = convert(payload)
        if envelope is not None:
            self._last_envelope = ('{"schema":' + key + ',"payload":', schema, convert)
        return SchemaAndValue(schema, value)

    def to_connect_batch(self, topic: str, values: list[bytes | None]) -> tuple[list[Schema | None], list[Any]] | None:
        if self._fixed_schema is not None:
            pairs = [self.to_connect_data(topic, v) for v in values]
            return [p.schema for p in pairs], [p.value for p in pairs]
        if self._schemas_enable:
            return self._envelopes(topic, values)
        to_connect = self._to_connect
        nodes = _fast_nodes(values)
        if nodes is not None:
            return [None] * len(values), [node if type(node) is str else to_connect(None, node) for node in nodes]
        out: list[Any] = []
        append = out.append
        for value in values:
            if value is None:
                append(None)
                continue
            text, decoder = _text_and_decoder(value)
            append(to_connect(None, _parse(text, decoder)))
        return [None] * len(values), out

    def _with_last_schema(self, text: str, decoder: Any) -> tuple[Schema, Any] | None:
        """The envelope's schema and value when its schema text is the last envelope's (the
        usual case): only the payload needs parsing then. A JSON value's text ends where its
        value does, so a match is exactly that schema. ``None``: another envelope."""
        last = self._last_envelope
        if last is None or not text.startswith(last[0]):
            return None
        try:
            payload, end = decoder.raw_decode(text, len(last[0]))
        except ValueError:
            return None
        if text[end : end + 1] == "}" or text[end:].lstrip(_WS)[:1] == "}":
            return last[1], last[2](payload)
        return None

    def _envelopes(self, topic: str, values: list[bytes | None]) -> tuple[list[Schema | None], list[Any]]:
        """:meth:`to_connect_data` for each of ``values`` (envelopes), its usual case (the
        schema of the envelope before) taken without a :class:`SchemaAndValue` per record."""
        schemas: list[Schema | None] = []
        out: list[Any] = []
        for value in values:
            known = self._with_last_schema(*_text_and_decoder(value)) if value is not None else None
            if known is not None:
                schemas.append(known[0])
                out.append(known[1])
            else:
                pair = self.to_connect_data(topic, value)
                schemas.append(pair.schema)
                out.append(pair.value)
        return schemas, out

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


def _fast_nodes(values: list[bytes | None]) -> list[Any] | None:
    """Every value parsed by msgspec's decoder (in C, without a Python call per value), or
    ``None`` when any value is null or not plain JSON to it: the caller then parses them one
    by one as Kafka would. Where msgspec accepts a text, its result is :func:`_parse`'s
    (tests/unit/converters/test_json_batch.py checks the edges): it rejects, rather than
    reads differently, what Jackson's rules treat specially here — a leading byte order
    mark, escaped lone surrogates, numbers beyond a double's range, text after the value."""
    try:
        return list(map(_msgspec_decode, values))
    except (msgspec.DecodeError, TypeError):  # TypeError: a null value
        return None


def _parse(text: str, decoder: json.JSONDecoder) -> Any:
    i, n = 0, len(text)
    while i < n and text[i] in _WS:
        i += 1
    if i == n:
        return MISSING
    try:
        node, end = decoder.raw_decode(text, i)
    except ValueError as e:
        raise DataError(DESERIALIZE_ERROR) from e
    # Jackson stops after the first root value, but a number must be followed by a separator.
    if end < n and is_number(node) and text[end] not in _WS:
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
