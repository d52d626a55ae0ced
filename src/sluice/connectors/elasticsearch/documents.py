"""Records as Elasticsearch documents, as Confluent's sink makes them (its ``DataConverter``
and ``Mapping``): the index or data stream a record goes to, the document id and external
version, the JSON source, and the index mapping a value schema gives."""

from __future__ import annotations

import base64
import datetime as _dt
import decimal as _decimal
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

from sluice.api import DataError, Schema, SinkRecord, Struct, Type
from sluice.api.data import Date, Decimal, Time, Timestamp
from sluice.api.records import SinkBatch
from sluice.connectors.elasticsearch.config import Settings

__all__ = ["Action", "DocumentMaker", "index_name", "mapping_for"]


def _unknown(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# json's C encoder built once (json.dumps builds one per call): compact, UTF-8 kept as is,
# NaN and infinities refused (ValueError), no check for cycles (documents have none).
_ENCODE = c_make_encoder(None, _unknown, encode_basestring, None, ":", ",", False, False, False)


def _DUMPS(value: Any) -> str:  # a constant-like function
    return "".join(_ENCODE(value, 0))


_quote: Callable[[str], str] = encode_basestring  # a str as a JSON string
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_MILLISECOND = _dt.timedelta(milliseconds=1)

Encoder = Callable[[Any], Any]
"""A Connect value of one schema → what :mod:`json` writes as Kafka's JsonConverter
(schemas disabled) writes it, after Confluent's pre-pass."""


def _key_id(key: Any, schema: Schema | None) -> str:
    """A record key as its document id: a string or an integer."""
    if key is None:
        raise DataError("Key is used as document id and can not be null.")
    kind = schema.type if schema is not None else None
    if kind in (Type.INT8, Type.INT16, Type.INT32, Type.INT64) or (
        kind is None and isinstance(key, int) and not isinstance(key, bool)
    ):
        return str(int(key))
    if kind is Type.STRING or (kind is None and isinstance(key, str)):
        if not key:
            raise DataError("Key is used as document id and can not be empty.")
        return str(key)
    what = kind.name if kind is not None else type(key).__name__
    raise DataError(f"Unsupported key schema type {what} for a document id: keys must be strings or integers.")


def index_name(topic: str) -> str:
    """The index for a topic, as Confluent's ``convertTopicToIndexName``: lower-cased, at most
    255 characters, one leading ``-`` or ``_`` dropped, ``.`` and ``..`` spelled out."""
    index = topic.lower()[:255]
    if index.startswith(("-", "_")):
        index = index[1:]
    if index in (".", ".."):
        index = index.replace(".", "dot")
    return index


def data_stream_name(settings: Settings, topic: str) -> str:
    """``<type>-<dataset>-<namespace>``, ``${topic}`` in the namespace standing for the topic."""
    namespace = settings.data_stream_namespace.replace("${topic}", topic).lower()[:100]
    return f"{settings.data_stream_type.lower()}-{settings.data_stream_dataset}-{namespace}"


@dataclass(slots=True)
class Action:
    """One bulk item: the action line and the source line (``None`` for a delete).
    ``origin`` is its record, or the batch holding it at ``row``."""

    origin: SinkRecord | SinkBatch
    row: int
    index: str
    doc_id: str | None  # None: the cluster names the document
    header: str
    source: str | None
    replay_safe: bool  # a version conflict means the cluster holds this write or a newer one

    def size(self) -> int:
        return len(self.header) + (len(self.source) if self.source is not None else 0) + 2

    @property
    def record(self) -> SinkRecord:
        """The record the item writes (made from the batch's columns on first use)."""
        origin = self.origin
        return origin if isinstance(origin, SinkRecord) else origin.records()[self.row]


class DocumentMaker:
    """Turns records into bulk :class:`Action`\\ s under one task's settings."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._encoders: dict[tuple[Schema, bool], Encoder] = {}
        self._indices: dict[str, str] = {}
        self._upsert_conflicts = min(settings.max_in_flight, 5)
        self._starts: dict[tuple[str, str], str] = {}

    def resource(self, topic: str) -> str:
        """The index or data stream the topic's records go to."""
        name = self._indices.get(topic)
        if name is None:
            name = data_stream_name(self.settings, topic) if self.settings.data_stream else index_name(topic)
            self._indices[topic] = name
        return name

    def action(self, record: SinkRecord) -> Action | None:
        """The bulk item for ``record``; ``None`` when the record is skipped (a tombstone under
        ``behavior.on.null.values=IGNORE``, or with no key to delete by). Raises
        :class:`DataError` for a record that cannot become a document."""
        settings = self.settings
        index = self.resource(record.topic)
        if record.value is None:
            behavior = settings.behavior_on_null_values
            if behavior == "IGNORE":
                return None
            if behavior == "FAIL":
                raise DataError(
                    f"Sink record with key of {record.key!r} and null value encountered for topic/partition/offset "
                    f"{record.topic}/{record.kafka_partition}/{record.kafka_offset} (to ignore future records like "
                    "this change the configuration property 'behavior.on.null.values' from 'fail' to 'ignore')"
                )
            if record.key is None and not settings.ignores_key(record.topic):
                return None  # nothing says which document to delete
            doc_id = self._id(record)
            version = self._version_of(record)
            return Action(
                record, 0, index, doc_id, self._header("delete", index, doc_id, version), None, version is not None
            )
        source = self._source(record)
        if settings.data_stream:
            meta: dict[str, Any] = {"_index": index}
            stream_id = None if settings.use_autogenerated_ids else self._id(record)
            if stream_id is not None:
                meta["_id"] = stream_id
            return Action(record, 0, index, stream_id, '{"create":' + _DUMPS(meta) + "}", source, True)
        if settings.use_autogenerated_ids:
            return Action(record, 0, index, None, '{"index":' + _DUMPS({"_index": index}) + "}", source, False)
        doc_id = self._id(record)
        if settings.upsert:
            meta = {"_index": index, "_id": doc_id, "retry_on_conflict": self._upsert_conflicts}
            return Action(
                record,
                0,
                index,
                doc_id,
                '{"update":' + _DUMPS(meta) + "}",
                '{"doc":' + source + ',"doc_as_upsert":true}',
                False,
            )
        version = self._version_of(record)
        return Action(
            record, 0, index, doc_id, self._header("index", index, doc_id, version), source, version is not None
        )

    def actions(self, batch: SinkBatch) -> list[Action | DataError | None]:
        """What :meth:`action` gives for each record of ``batch`` — the action, ``None``
        for a skipped record, or the :class:`DataError` it raises — read from the batch's
        columns: without a :class:`SinkRecord` per record for the usual case (an index
        written by key or by topic+partition+offset, a value with a schema), through
        :meth:`action` for the others."""
        settings = self.settings
        results: list[Action | DataError | None] = [None] * len(batch)
        if (
            settings.data_stream
            or settings.upsert
            or settings.use_autogenerated_ids
            or settings.external_version_header
        ):
            self._one_by_one(batch, range(len(batch)), results)
            return results
        topics = batch.topics
        distinct = set(topics)
        for topic in distinct:
            rows = range(len(topics)) if len(distinct) == 1 else [i for i, t in enumerate(topics) if t == topic]
            self._index_actions(batch, topic, rows, results)
        return results

    def _one_by_one(self, batch: SinkBatch, rows: Iterable[int], results: list[Action | DataError | None]) -> None:
        records = batch.records()
        for i in rows:
            try:
                results[i] = self.action(records[i])
            except DataError as e:
                results[i] = e

    def _index_actions(
        self, batch: SinkBatch, topic: str, rows: Iterable[int], results: list[Action | DataError | None]
    ) -> None:
        """The index actions of one topic's records (data streams, upserts, cluster-made ids
        and versions from a header are not among the settings)."""
        index = self.resource(topic)
        start = self._line_start("index", index)
        ignore_key, ignore_schema = self.settings.ignores_key(topic), self.settings.ignores_schema(topic)
        values, value_schemas, offsets = batch.values, batch.value_schemas, batch.offsets
        keys, key_schemas, partitions = batch.keys, batch.key_schemas, batch.partitions
        others = []
        last_schema: Schema | None = None
        encoder: Encoder = _identity
        for i in rows:
            value, schema = values[i], value_schemas[i]
            if value is None or schema is None:
                others.append(i)
                continue
            if schema is not last_schema:
                encoder = self._encoder(schema, ignore_schema)
                last_schema = schema
            offset = offsets[i]
            try:
                document = encoder(value)
                doc_id = f"{topic}+{partitions[i]}+{offset}" if ignore_key else _key_id(keys[i], key_schemas[i])
            except DataError as e:
                results[i] = e
                continue
            header = _action_line(start, doc_id, None if ignore_key else offset)
            results[i] = Action(batch, i, index, doc_id, header, _json_text(document), not ignore_key)
        if others:
            self._one_by_one(batch, others, results)

    def _encoder(self, schema: Schema, ignore_schema: bool) -> Encoder:
        key = (schema, ignore_schema)
        encoder = self._encoders.get(key)
        if encoder is None:
            encoder = self._encoders[key] = _encoder(schema, self.settings.compact_map_entries, not ignore_schema)
        return encoder

    def _header(self, operation: str, index: str, doc_id: str, version: int | None) -> str:
        """An index or delete action line, built as a string (the hot path: no dict to encode)."""
        return _action_line(self._line_start(operation, index), doc_id, version)

    def _line_start(self, operation: str, index: str) -> str:
        """The start of an action line, up to the document id."""
        start = self._starts.get((operation, index))
        if start is None:
            start = self._starts[(operation, index)] = '{"' + operation + '":{"_index":' + _quote(index) + ',"_id":'
        return start

    def _id(self, record: SinkRecord) -> str:
        if self.settings.ignores_key(record.topic):
            return f"{record.topic}+{record.kafka_partition}+{record.kafka_offset}"
        return _key_id(record.key, record.key_schema)

    def _version_of(self, record: SinkRecord) -> int | None:
        """The external version when the key is the id (a replay of an older offset then
        never overwrites what a newer record wrote); ``None`` otherwise."""
        if self.settings.ignores_key(record.topic):
            return None
        version: int = record.kafka_offset
        header_name = self.settings.external_version_header
        if header_name:
            header = record.headers.last_with_name(header_name)
            if header is None or header.value is None:
                raise DataError(f"The record has no header {header_name} (external.version.header) to version it by.")
            try:
                version = int(str(header.value))
            except ValueError:
                raise DataError(f"Header {header_name} is not a number: {header.value!r}") from None
        return version

    def _source(self, record: SinkRecord) -> str:
        ignore_schema = self.settings.ignores_schema(record.topic)
        schema = record.value_schema
        value = record.value
        if schema is not None:
            document = self._encoder(schema, ignore_schema)(value)
        else:
            document = _schemaless(value)
        if self.settings.data_stream:
            if not isinstance(document, dict):
                raise DataError("A record written to a data stream must have a struct or map value.")
            document["@timestamp"] = self._timestamp(record, document)
        return _json_text(document)

    def _timestamp(self, record: SinkRecord, document: dict[str, Any]) -> Any:
        for field_name in self.settings.data_stream_timestamp_fields:
            node: Any = document
            for part in field_name.split("."):
                node = node.get(part) if isinstance(node, dict) else None
            if node is not None:
                return node
        return record.timestamp


# -- Connect values as JSON (Kafka's JsonConverter, schemas disabled) -------------------


def _number(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")  # Jackson's strings
    return value


def _action_line(start: str, doc_id: str, version: int | None) -> str:
    """An action line from its start (:meth:`DocumentMaker._line_start`): the id and the
    external version, if any."""
    if version is None:
        return start + _quote(doc_id) + "}}"
    return start + _quote(doc_id) + ',"version":' + str(version) + ',"version_type":"external"}}'


def _json_text(document: Any) -> str:
    try:
        return _DUMPS(document)
    except ValueError:  # NaN or an infinity: Jackson writes them as strings
        return _DUMPS(_finite(document))


def _finite(node: Any) -> Any:
    if isinstance(node, float):
        return _number(node)
    if isinstance(node, dict):
        return {k: _finite(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_finite(v) for v in node]
    return node


def _b64(value: Any) -> str:
    return base64.b64encode(bytes(value)).decode("ascii")


def _encoder(schema: Schema, compact_maps: bool, pre_pass: bool) -> Encoder:
    """An encoder for values of ``schema``. ``pre_pass``: Confluent's pre-processing (decimals
    as doubles, maps with string keys as objects when ``compact_maps``, else as
    ``[{key, value}]``; a null takes its default)."""
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        if pre_pass:
            return lambda v: None if v is None else float(v)
        return lambda v: None if v is None else _b64(Decimal.from_logical(schema, v))
    if name == Date.LOGICAL_NAME:
        return lambda v: None if v is None else (v if isinstance(v, int) else Date.from_logical(schema, v))
    if name == Time.LOGICAL_NAME:
        return lambda v: None if v is None else (v if isinstance(v, int) else Time.from_logical(schema, v))
    if name == Timestamp.LOGICAL_NAME:
        return _timestamp_millis
    kind = schema.type
    if kind is Type.BYTES:
        return lambda v: None if v is None else _b64(v)
    if kind is Type.ARRAY:
        element = _encoder(schema.value_schema(), compact_maps, pre_pass)
        return lambda v: None if v is None else [element(e) for e in v]
    if kind is Type.MAP:
        return _map_encoder(schema, compact_maps, pre_pass)
    if kind is Type.STRUCT:
        return _struct_encoder(schema, compact_maps, pre_pass)
    return _identity


def _timestamp_millis(value: Any) -> Any:
    if value is None or isinstance(value, int):
        return value
    if type(value) is _dt.datetime and value.tzinfo is _dt.UTC:  # what the converters make
        return (value - _EPOCH) // _MILLISECOND
    return Timestamp.from_logical(Timestamp.SCHEMA, value)


def _identity(value: Any) -> Any:
    return value


def _map_encoder(schema: Schema, compact_maps: bool, pre_pass: bool) -> Encoder:
    key_schema, value_schema = schema.key_schema(), schema.value_schema()
    encode_key = _encoder(key_schema, compact_maps, pre_pass)
    encode_value = _encoder(value_schema, compact_maps, pre_pass)
    string_keys = key_schema.type is Type.STRING
    if string_keys and (compact_maps or not pre_pass):
        return lambda v: None if v is None else {k: encode_value(x) for k, x in v.items()}
    if pre_pass:
        return lambda v: None if v is None else [{"key": encode_key(k), "value": encode_value(x)} for k, x in v.items()]
    return lambda v: None if v is None else [[encode_key(k), encode_value(x)] for k, x in v.items()]


def _struct_encoder(schema: Schema, compact_maps: bool, pre_pass: bool) -> Encoder:
    fields = []
    for f in schema.fields():
        encoder = _encoder(f.schema, compact_maps, pre_pass)
        default = f.schema.default_value
        if default is not None:
            default = encoder(default)
        fields.append((f.name, None if encoder is _identity else encoder, default, f.schema.optional))
    names = [name for name, *_ in fields]
    converted = [(i, encoder) for i, (_, encoder, _, _) in enumerate(fields) if encoder is not None]

    def encode_nulls(value: Struct) -> Any:
        """The struct has a null field: defaults, optional nulls and the error for required ones."""
        document = {}
        for (name, encoder, default, optional), raw in zip(fields, value.field_values(), strict=True):
            if raw is None:
                if default is not None:
                    document[name] = default
                    continue
                if not optional:
                    raise DataError(
                        f"Conversion error: null value for field '{name}' that is required and has no default value"
                    )
                document[name] = None
            else:
                document[name] = raw if encoder is None else encoder(raw)
        return document

    def encode(value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, Struct):
            raise DataError(f"Expected a Struct for schema {schema.name or 'STRUCT'}, got {type(value).__name__}")
        values = value.field_values()
        if None in values:
            return encode_nulls(value)
        if converted:
            values = list(values)
            for i, encoder in converted:
                values[i] = encoder(values[i])
        return dict(zip(names, values, strict=True))

    return encode


def _schemaless(value: Any) -> Any:
    """A value without a schema, as JsonConverter infers its JSON."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: _schemaless(x) for k, x in value.items()}
        return [[_schemaless(k), _schemaless(x)] for k, x in value.items()]
    if isinstance(value, (list, tuple)):
        return [_schemaless(e) for e in value]
    if isinstance(value, Struct):
        return _encoder(value.schema, True, False)(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _b64(value)
    if isinstance(value, _decimal.Decimal):
        return float(value)
    if isinstance(value, _dt.datetime):
        return Timestamp.from_logical(Timestamp.SCHEMA, value)
    if isinstance(value, _dt.date):
        return Date.from_logical(Date.SCHEMA, value)
    raise DataError(f"Cannot write a value of type {type(value).__name__} as JSON")


# -- mappings (Confluent's Mapping.buildMapping) ----------------------------------------

_PRIMITIVE_TYPES = {
    Type.BOOLEAN: "boolean",
    Type.INT8: "byte",
    Type.INT16: "short",
    Type.INT32: "integer",
    Type.INT64: "long",
    Type.FLOAT32: "float",
    Type.FLOAT64: "double",
    Type.BYTES: "binary",
}
_DATE_NAMES = (Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME)


def mapping_for(schema: Schema) -> dict[str, Any]:
    """The index mapping of a value schema: ``{"properties": …}`` for a struct."""
    built = _mapping(schema)
    if "properties" not in built:
        raise DataError(f"A mapping needs a struct (or map) value schema, not {schema.type.name}.")
    return built


def _mapping(schema: Schema) -> dict[str, Any]:
    name = schema.name
    if name in _DATE_NAMES:
        return _with_null_value({"type": "date"}, schema, lambda v: v if isinstance(v, int) else _epoch_millis(name, v))
    if name == Decimal.LOGICAL_NAME:
        return _with_null_value({"type": "double"}, schema, float)
    kind = schema.type
    if kind is Type.STRUCT:
        return {"properties": {f.name: _mapping(f.schema) for f in schema.fields()}}
    if kind is Type.ARRAY:
        return _mapping(schema.value_schema())
    if kind is Type.MAP:
        return {"properties": {"key": _mapping(schema.key_schema()), "value": _mapping(schema.value_schema())}}
    if kind is Type.STRING:
        return {"type": "text", "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}}
    mapped = {"type": _PRIMITIVE_TYPES[kind]}
    if kind is Type.BYTES:
        return mapped
    return _with_null_value(mapped, schema, _number)


def _with_null_value(mapped: dict[str, Any], schema: Schema, convert: Callable[[Any], Any]) -> dict[str, Any]:
    if schema.default_value is not None:
        mapped["null_value"] = convert(schema.default_value)
    return mapped


def _epoch_millis(name: str | None, value: Any) -> int:
    if name == Date.LOGICAL_NAME:
        return Date.from_logical(Date.SCHEMA, value) * 86_400_000
    if name == Time.LOGICAL_NAME:
        return Time.from_logical(Time.SCHEMA, value)
    return Timestamp.from_logical(Timestamp.SCHEMA, value)
