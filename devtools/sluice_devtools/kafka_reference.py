"""Apache Kafka Connect itself as a reference: its converters, transformations and
predicates, run in one long-lived JVM and called from Python.

:class:`KafkaReference` compiles ``ConnectReference.java`` (shipped beside this module)
once with ``javac`` against :func:`sluice_devtools.jars.kafka_connect_classpath`, into
``<cache>/reference/<hash>/`` (the hash covers the source and the jar names, so an edit
or a Kafka upgrade recompiles), starts ``java ConnectReference`` and talks to it in JSON
lines: one request per line on its stdin, one response per line on its stdout, in order.
The JVM runs with ``-Duser.timezone=UTC`` (Kafka's ``Values`` formats and parses dates in
the JVM's default zone). It is stopped by closing its stdin, then by its pid. Requests
cost well under a millisecond.

Usage::

    with KafkaReference() as ref:
        data = ref.from_connect("org.apache.kafka.connect.json.JsonConverter", {}, schema, value)
        sv = ref.to_connect("org.apache.kafka.connect.json.JsonConverter", {}, data)
        out = ref.transform("org.apache.kafka.connect.transforms.InsertField$Value",
                            {"static.field": "f", "static.value": "v"}, sink_record)
        hit = ref.predicate("org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
                            {"pattern": "t.*"}, sink_record)

Records are Sluice's :class:`~sluice.api.records.SourceRecord` / ``SinkRecord`` both ways.
A failure inside the JVM (a ``DataException`` from a converter, a ``ConfigException`` from
a transformation's ``configure`` ...) raises :class:`JavaError` with the exception's
class, message, causes and stack trace; the JVM keeps serving. :class:`ReferenceError_`
means the harness itself failed (the JVM died, timed out or broke the protocol).

Protocol
========

Requests are JSON objects with an ``"id"`` (echoed back) and an ``"op"``. Every response
is ``{"id": <id>, "ok": true, <result fields>}`` or ``{"id": <id>, "ok": false, "error":
{"class": "<java class>", "message": <text or null>, "causes": [{"class": ..., "message":
...}, ...], "stacktrace": "<text>"}}``. On start the JVM writes one line
``{"ready": true, "version": "<kafka version>", "java": "<java version>"}``.

=====================  ===========================================  ==============================
op                     request fields                               result fields
=====================  ===========================================  ==============================
``ping``               —                                            ``version``, ``java``
``echo``               ``data``                                     ``data`` (decoded in the JVM
                                                                    and encoded again)
``fromConnect``        ``converter``, ``configs``, ``isKey``,       ``bytes``: base64 or null
                       ``topic``, ``data``
``toConnect``          ``converter``, ``configs``, ``isKey``,       ``data``
                       ``topic``, ``bytes``
``fromConnectHeader``  ``converter``, ``configs``, ``topic``,       ``bytes``
                       ``headerKey``, ``data``
``toConnectHeader``    ``converter``, ``configs``, ``topic``,       ``data``
                       ``headerKey``, ``bytes``
``transform``          ``transformation``, ``configs``, ``kind``,   ``record``: a RECORD, or null
                       ``record``                                   when it dropped the record
``predicate``          ``predicate``, ``configs``, ``kind``,        ``result``: true/false
                       ``record``
=====================  ===========================================  ==============================

* ``converter``/``transformation``/``predicate``: a Java class name
  (``org.apache.kafka.connect.transforms.InsertField$Value``). ``configs``: a JSON object;
  each value goes to Kafka as a string (lists joined with ``,``; null stays null), as from
  a properties file. Key/value converters get ``configure(configs, isKey)``; header
  converters ``configure(configs + {"converter.type": "header"})``, as Kafka's worker
  does. Instances are cached per (role, class, configs) in the JVM. ``topic`` defaults to
  ``"topic"``, ``headerKey`` to ``"header"``, ``isKey`` to false.
* ``kind``: ``"source"`` or ``"sink"``. A RECORD is::

      {"topic": "t", "kafkaPartition": 0 | null, "key": DATA, "value": DATA,
       "timestamp": 1700000000000 | null, "headers": [{"key": "h", "value": DATA}, ...],
       // source records:
       "sourcePartition": {...} | null, "sourceOffset": {...} | null,
       // sink records:
       "kafkaOffset": 42, "timestampType": "CreateTime" | "LogAppendTime" | "NoTimestampType",
       "originalTopic": "t", "originalKafkaPartition": 0, "originalKafkaOffset": 42}

  Responses carry records in that shape plus ``"kind"``; in requests the ``original*``
  fields default to the record's own topic, partition and offset.
* DATA, a Connect schema and value, is Kafka's own JsonConverter envelope with
  ``schemas.enable=true``, ``decimal.format=BASE64`` and ``replace.null.with.default=false``:
  ``{"schema": <schema JSON or null>, "payload": <value JSON>}``, lossless for every
  Connect type once these rules are added:

  - FLOAT32/FLOAT64 values ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (strings, as Jackson
    writes them) are those values, and ``-0.0`` stays negative (Kafka's JsonConverter would
    read them as 0.0);
  - maps keep the JSON's order (the JVM rebuilds them as ``LinkedHashMap``);
  - ``"hints": {<JSON pointer into payload, "" for the root>: "bytes" | "float64" |
    "map"}``, only with ``"schema": null``: a base64 string that is really ``byte[]``, a
    ``"NaN"``-like string that is really a double, an array of ``[key, value]`` pairs that
    is really a map with non-string keys;
  - ``"payload": null`` with a schema is a null value whatever the schema, even a required
    one (the converter under test decides what to make of it); ``null`` for the whole
    DATA means ``{"schema": null, "payload": null}``;
  - ``"schemaless": true`` marks a schema with an array or map whose element, key or value
    schema is null (Kafka's ``Values`` builds those for mixed elements:
    ``SchemaBuilder.arrayOfNull()``/``mapOfNull()``), which JsonConverter cannot write: the
    payload (and hints) are then the schemaless encoding, the schema JSON is beside it
    with the null parts as ``null``;
  - a decimal whose scale differs from its schema's (JsonConverter reading a NUMERIC
    decimal produces those) is written as a JSON number.

  Python encodes and decodes DATA with Sluice's own JsonConverter
  (:func:`encode_data`/:func:`decode_data`); ``echo`` checks that both ends agree.
"""

from __future__ import annotations

import base64
import contextlib
import decimal
import importlib.metadata
import itertools
import json
import logging
import math
import os
import queue
import signal
import subprocess
import tempfile
import threading
from importlib import resources
from pathlib import Path
from typing import IO, Any

from sluice.api.converter import SchemaAndValue
from sluice.api.data import Schema, Struct, Type
from sluice.api.records import ConnectRecord, Headers, SinkRecord, SourceRecord, TimestampType
from sluice.jvm.java import java_executable
from sluice.jvm.java_build import JavaBuildError, compiled_classes
from sluice_devtools import DevToolsError
from sluice_devtools.jars import kafka_connect_classpath

__all__ = [
    "JavaError",
    "KafkaReference",
    "ReferenceError_",
    "compile_reference",
    "decode_data",
    "decode_record",
    "encode_data",
    "encode_record",
]

log = logging.getLogger(__name__)

MAIN_CLASS = "ConnectReference"
SOURCE_NAME = "ConnectReference.java"
_JVM_OPTIONS = [
    "-Xms64m",
    "-Xmx512m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.awt.headless=true",
    "-Duser.timezone=UTC",
    "-Dfile.encoding=UTF-8",
    "-Dlog4j2.level=ERROR",
]


class ReferenceError_(DevToolsError):  # ``ReferenceError`` is a builtin
    """The harness failed: the JVM did not start, died, timed out or broke the protocol."""


class JavaError(Exception):
    """An exception thrown inside the JVM (the harness itself kept running)."""

    def __init__(self, error: dict[str, Any]) -> None:
        self.java_class: str = error.get("class") or "java.lang.Throwable"
        self.message: str | None = error.get("message")
        self.causes: list[dict[str, Any]] = list(error.get("causes") or [])
        self.stacktrace: str = error.get("stacktrace") or ""
        super().__init__(f"{self.java_class}: {self.message}")

    @property
    def simple_class(self) -> str:
        """The exception's simple class name (``DataException``)."""
        return self.java_class.rsplit(".", 1)[-1].rsplit("$", 1)[-1]

    def messages(self) -> list[str]:
        """The message of the exception and of each of its causes, outermost first."""
        return [m for m in [self.message, *(c.get("message") for c in self.causes)] if m]


# ---------------------------------------------------------------------- neutral codec


def _json_converter_class() -> type:
    """Sluice's JsonConverter, loaded as a plugin (its ``sluice.converters`` entry point), as a
    worker loads it."""
    for ep in importlib.metadata.entry_points(group="sluice.converters", name="JsonConverter"):
        return ep.load()
    raise ReferenceError_(
        "Sluice's JsonConverter plugin is not installed (entry point sluice.converters:JsonConverter)"
    )


def _neutral_converter() -> Any:
    JsonConverter: Any = _json_converter_class()

    class _Neutral(JsonConverter):
        # Kafka's Values can build arrays and maps whose element (or value) schema is
        # null; JsonConverter writes those as "items": null. Read them back the same way.
        def as_connect_schema(self, node: Any) -> Schema | None:
            if (
                isinstance(node, dict)
                and node.get("type") in ("array", "map")
                and any(k in node and node[k] is None for k in ("items", "keys", "values"))
            ):
                return _schema_with_null_parts(self, node)
            return super().as_connect_schema(node)

        def to_connect(self, schema: Schema | None, node: Any) -> Any:
            """JsonConverter's conversion of one JSON node (no envelope) to a Connect value."""
            return self._to_connect(schema, node)

    conv = _Neutral()
    conv.configure(
        {"schemas.enable": "true", "replace.null.with.default": "false", "decimal.format": "BASE64"},
        False,
    )
    return conv


def _schema_with_null_parts(conv: Any, node: dict[str, Any]) -> Schema:
    if node["type"] == "array":
        key, value = None, conv.as_connect_schema(node.get("items"))
        t = Type.ARRAY
    else:
        key, value = conv.as_connect_schema(node.get("keys")), conv.as_connect_schema(node.get("values"))
        t = Type.MAP
    params = node.get("parameters")
    return Schema(
        t,
        optional=node.get("optional") is True,
        name=node.get("name") if isinstance(node.get("name"), str) else None,
        version=node.get("version") if type(node.get("version")) is int else None,
        doc=node.get("doc") if isinstance(node.get("doc"), str) else None,
        parameters=params if isinstance(params, dict) else None,
        key_schema=key,
        value_schema=value,
    )


_NEUTRAL_LOCAL = threading.local()


def _neutral() -> Any:
    conv = getattr(_NEUTRAL_LOCAL, "conv", None)
    if conv is None:
        conv = _NEUTRAL_LOCAL.conv = _neutral_converter()
    return conv


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _collect_hints(value: Any, pointer: str, hints: dict[str, str]) -> None:
    if isinstance(value, (bytes, bytearray, memoryview)):
        hints[pointer] = "bytes"
    elif isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            hints[pointer] = "float64"
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _collect_hints(item, f"{pointer}/{i}", hints)
    elif isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            for k, v in value.items():
                _collect_hints(v, f"{pointer}/{_escape(k)}", hints)
        else:
            hints[pointer] = "map"
            for i, (k, v) in enumerate(value.items()):
                _collect_hints(k, f"{pointer}/{i}/0", hints)
                _collect_hints(v, f"{pointer}/{i}/1", hints)


def _has_null_parts(schema: Schema) -> bool:
    t = schema.type
    if t is Type.ARRAY:
        vs = schema.value_schema()
        return vs is None or _has_null_parts(vs)
    if t is Type.MAP:
        ks, vs = schema.key_schema(), schema.value_schema()
        return ks is None or vs is None or _has_null_parts(ks) or _has_null_parts(vs)
    if t is Type.STRUCT:
        return any(_has_null_parts(f.schema) for f in schema.fields())
    return False


def encode_data(schema: Schema | None, value: Any) -> dict[str, Any]:
    """A Connect schema and value in the protocol's neutral ``DATA`` form."""
    if schema is not None and value is not None and _has_null_parts(schema):
        data = encode_data(None, value)
        data["schema"] = _neutral().as_json_schema(schema)
        data["schemaless"] = True
        return data
    if value is None and schema is not None:
        # A null value, whatever the schema says (JsonConverter would refuse a required one).
        return {"schema": _neutral().as_json_schema(schema), "payload": None}
    raw = _neutral().from_connect_data("", schema, value)
    if raw is None:
        return {"schema": None, "payload": None}
    decoded: dict[str, Any] = json.loads(raw)
    if schema is None and value is not None:
        hints: dict[str, str] = {}
        _collect_hints(value, "", hints)
        if hints:
            decoded["hints"] = hints
    return decoded


_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _special(node: Any) -> float:
    if isinstance(node, str):
        if node in _SPECIAL:
            return _SPECIAL[node]
        return float(node)
    return float(node)


def _leaf(schema: Schema | None, node: Any, pointer: str, hints: dict[str, str]) -> Any:
    conv = _neutral()
    value = conv.to_connect(schema, node)
    return _normalize(schema, value, node, pointer, hints)


def _normalize(schema: Schema | None, value: Any, node: Any, pointer: str, hints: dict[str, str]) -> Any:
    if node is None:
        return value
    if schema is None:
        hint = hints.get(pointer)
        if hint == "bytes":
            return base64.b64decode(node)
        if hint == "float64":
            return _special(node)
        if isinstance(node, (float, decimal.Decimal)) and isinstance(value, float):
            return float(node)
        if hint == "map" and isinstance(node, list):
            return {
                _leaf(None, pair[0], f"{pointer}/{i}/0", hints): _leaf(None, pair[1], f"{pointer}/{i}/1", hints)
                for i, pair in enumerate(node)
            }
        if isinstance(node, dict) and isinstance(value, dict):
            return {k: _normalize(None, value.get(k), n, f"{pointer}/{_escape(k)}", hints) for k, n in node.items()}
        if isinstance(node, list) and isinstance(value, list):
            return [
                _normalize(None, v, n, f"{pointer}/{i}", hints)
                for i, (v, n) in enumerate(zip(value, node, strict=False))
            ]
        return value
    t = schema.type
    if t in (Type.FLOAT32, Type.FLOAT64):
        if isinstance(node, str) or (isinstance(node, (int, float, decimal.Decimal)) and not isinstance(node, bool)):
            return _special(node)
        return value
    if t is Type.ARRAY and isinstance(value, list) and isinstance(node, list):
        vs = schema.value_schema()
        return [
            _normalize(vs, v, n, f"{pointer}/{i}", hints) for i, (v, n) in enumerate(zip(value, node, strict=False))
        ]
    if t is Type.MAP and isinstance(value, dict):
        ks, vs = schema.key_schema(), schema.value_schema()
        if isinstance(node, dict):
            return {k: _normalize(vs, value.get(k), n, f"{pointer}/{_escape(k)}", hints) for k, n in node.items()}
        if isinstance(node, list):
            return {
                _leaf(ks, pair[0], f"{pointer}/{i}/0", hints): _leaf(vs, pair[1], f"{pointer}/{i}/1", hints)
                for i, pair in enumerate(node)
            }
        return value
    if t is Type.STRUCT and isinstance(value, Struct) and isinstance(node, dict):
        for f in schema.fields():
            current = value.get_without_default(f.name)
            fixed = _normalize(f.schema, current, node.get(f.name), f"{pointer}/{_escape(f.name)}", hints)
            if fixed is not current:
                value.put(f, fixed)
        return value
    return value


def decode_data(data: dict[str, Any] | None) -> SchemaAndValue:
    """The Connect schema and value of a neutral ``DATA`` object."""
    if data is None:
        return SchemaAndValue(None, None)
    if data.get("schemaless"):
        bare = {k: v for k, v in data.items() if k not in ("schema", "schemaless")}
        return SchemaAndValue(_neutral().as_connect_schema(data.get("schema")), decode_data(bare).value)
    envelope = {"schema": data.get("schema"), "payload": data.get("payload")}
    if envelope["payload"] is None and envelope["schema"] is not None:
        return SchemaAndValue(_neutral().as_connect_schema(envelope["schema"]), None)
    raw = json.dumps(envelope, separators=(",", ":")).encode("utf-8")
    decoded = _neutral().to_connect_data("", raw)
    value = _normalize(decoded.schema, decoded.value, envelope["payload"], "", data.get("hints") or {})
    return SchemaAndValue(decoded.schema, value)


def _configs(configs: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in (configs or {}).items():
        if v is None or isinstance(v, str):
            out[k] = v
        elif isinstance(v, bool):
            out[k] = "true" if v else "false"
        elif isinstance(v, (list, tuple)):
            out[k] = [str(x) for x in v]
        else:
            out[k] = str(v)
    return out


def _b64(data: bytes | bytearray | memoryview | None) -> str | None:
    return None if data is None else base64.b64encode(bytes(data)).decode("ascii")


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def encode_record(record: ConnectRecord) -> tuple[str, dict[str, Any]]:
    """``(kind, RECORD)`` for a Sluice source or sink record."""
    out: dict[str, Any] = {
        "topic": record.topic,
        "kafkaPartition": record.kafka_partition,
        "key": encode_data(record.key_schema, record.key),
        "value": encode_data(record.value_schema, record.value),
        "timestamp": record.timestamp,
        "headers": [{"key": h.key, "value": encode_data(h.schema, h.value)} for h in record.headers],
    }
    if isinstance(record, SourceRecord):
        out["sourcePartition"] = record.source_partition
        out["sourceOffset"] = record.source_offset
        return "source", out
    if isinstance(record, SinkRecord):
        out["kafkaOffset"] = record.kafka_offset
        out["timestampType"] = record.timestamp_type or TimestampType.NO_TIMESTAMP_TYPE
        for attr, key in (
            ("original_topic", "originalTopic"),
            ("original_kafka_partition", "originalKafkaPartition"),
            ("original_kafka_offset", "originalKafkaOffset"),
        ):
            if getattr(record, attr, None) is not None:
                out[key] = getattr(record, attr)
        return "sink", out
    raise TypeError(f"Not a SourceRecord or SinkRecord: {type(record).__name__}")


def decode_record(node: dict[str, Any]) -> SourceRecord | SinkRecord:
    """A Sluice record from a response's ``RECORD``."""
    key = decode_data(node.get("key"))
    value = decode_data(node.get("value"))
    headers = Headers()
    for h in node.get("headers") or []:
        sv = decode_data(h.get("value"))
        headers.add(h["key"], sv.value, sv.schema)
    if node.get("kind") == "source":
        return SourceRecord(
            node.get("sourcePartition"),
            node.get("sourceOffset"),
            node["topic"],
            node.get("kafkaPartition"),
            key.schema,
            key.value,
            value.schema,
            value.value,
            node.get("timestamp"),
            headers,
        )
    return SinkRecord(
        node["topic"],
        node.get("kafkaPartition"),  # type: ignore[arg-type]
        key.schema,
        key.value,
        value.schema,
        value.value,
        node.get("kafkaOffset", 0),
        node.get("timestamp"),
        node.get("timestampType") or TimestampType.NO_TIMESTAMP_TYPE,
        headers,
        node.get("originalTopic"),
        node.get("originalKafkaPartition"),
        node.get("originalKafkaOffset"),
    )


# ------------------------------------------------------------------------- the harness


def _source_text() -> str:
    return resources.files("sluice_devtools").joinpath(SOURCE_NAME).read_text(encoding="utf-8")


def compile_reference(classpath: list[Path] | None = None) -> Path:
    """The directory holding the compiled harness, compiling it first if needed."""
    if classpath is None:
        classpath = kafka_connect_classpath()[0]
    try:
        return compiled_classes(SOURCE_NAME, classpath, "reference", f"{MAIN_CLASS}.class", package="sluice_devtools")
    except JavaBuildError as exc:
        raise ReferenceError_(str(exc)) from exc


class KafkaReference:
    """One JVM running Kafka Connect's converters, transformations and predicates.

    Thread-safe (requests are serialised). Start with ``with`` or :meth:`start`; stop
    with :meth:`stop`. ``timeout`` bounds each request, in seconds.
    """

    def __init__(self, *, timeout: float = 60.0, java: str | Path | None = None) -> None:
        self.timeout = timeout
        self._java = Path(java) if java is not None else None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: IO[bytes] | None = None
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.kafka_version: str | None = None
        self.java_version: str | None = None

    # -- lifecycle ----------------------------------------------------------------------

    def __enter__(self) -> KafkaReference:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self) -> KafkaReference:
        if self._proc is not None and self._proc.poll() is None:
            return self
        classpath, _plugins = kafka_connect_classpath()
        classes = compile_reference(classpath)
        java = str(self._java or java_executable())
        self._stderr = tempfile.TemporaryFile(prefix="sluice-reference-", suffix=".log")  # noqa: SIM115 - closed by stop()
        self._lines = queue.Queue()
        self._proc = subprocess.Popen(
            [java, *_JVM_OPTIONS, "-cp", os.pathsep.join([str(classes), *map(str, classpath)]), MAIN_CLASS],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        threading.Thread(
            target=self._pump, args=(self._proc, self._lines), daemon=True, name=f"kafka-reference-{self._proc.pid}"
        ).start()
        ready = self._read(timeout=max(self.timeout, 120.0))
        if not ready.get("ready"):
            self.stop()
            raise ReferenceError_(f"Unexpected first line from the Kafka reference harness: {ready!r}")
        self.kafka_version = ready.get("version")
        self.java_version = ready.get("java")
        return self

    @staticmethod
    def _pump(proc: subprocess.Popen[bytes], lines: queue.Queue[bytes | None]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    def stop(self, timeout: float = 10.0) -> None:
        """Close the JVM's stdin (it exits at end of input), then signal its pid."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            if proc.stdin is not None:
                proc.stdin.close()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=timeout)
        if proc.stdout is not None:
            proc.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    close = stop

    def _stderr_tail(self, limit: int = 4000) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - limit))
            return self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""

    def _read(self, timeout: float) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            tail = self._stderr_tail()
            self.stop(timeout=2.0)
            raise ReferenceError_(f"The Kafka reference harness did not answer within {timeout}s.\n{tail}") from None
        if line is None:
            tail = self._stderr_tail()
            code = self._proc.poll() if self._proc is not None else None
            self.stop(timeout=2.0)
            raise ReferenceError_(f"The Kafka reference harness exited (code {code}).\n{tail}")
        try:
            answer = json.loads(line)
        except ValueError as e:
            raise ReferenceError_(f"The Kafka reference harness wrote a line that is not JSON: {line[:500]!r}") from e
        if not isinstance(answer, dict):
            raise ReferenceError_(f"The Kafka reference harness wrote a non-object: {line[:500]!r}")
        return answer

    # -- raw protocol -------------------------------------------------------------------

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send one request; the response's fields on success, :class:`JavaError` otherwise."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self.start()
            assert self._proc is not None and self._proc.stdin is not None
            request_id = next(self._ids)
            line = json.dumps({"id": request_id, "op": op, **fields}, separators=(",", ":"), allow_nan=False)
            try:
                self._proc.stdin.write(line.encode("utf-8") + b"\n")
                self._proc.stdin.flush()
            except OSError as e:
                tail = self._stderr_tail()
                self.stop(timeout=2.0)
                raise ReferenceError_(f"The Kafka reference harness is gone: {e}\n{tail}") from e
            answer = self._read(self.timeout)
        if answer.get("id") != request_id:
            raise ReferenceError_(f"Out-of-order answer from the Kafka reference harness: {answer!r}")
        if not answer.get("ok"):
            raise JavaError(answer.get("error") or {})
        return answer

    def ping(self) -> dict[str, Any]:
        return self.request("ping")

    def echo(self, schema: Schema | None, value: Any) -> SchemaAndValue:
        """The value sent to the JVM and back through the neutral codec (tests the codec)."""
        return decode_data(self.request("echo", data=encode_data(schema, value)).get("data"))

    # -- converters ---------------------------------------------------------------------

    def from_connect(
        self,
        converter: str,
        configs: dict[str, Any] | None,
        schema: Schema | None,
        value: Any,
        *,
        is_key: bool = False,
        topic: str = "topic",
    ) -> bytes | None:
        """``Converter.fromConnectData`` of Kafka's ``converter`` (class name)."""
        answer = self.request(
            "fromConnect",
            converter=converter,
            configs=_configs(configs),
            isKey=is_key,
            topic=topic,
            data=encode_data(schema, value),
        )
        return _unb64(answer.get("bytes"))

    def to_connect(
        self,
        converter: str,
        configs: dict[str, Any] | None,
        data: bytes | None,
        *,
        is_key: bool = False,
        topic: str = "topic",
    ) -> SchemaAndValue:
        """``Converter.toConnectData`` of Kafka's ``converter``."""
        answer = self.request(
            "toConnect", converter=converter, configs=_configs(configs), isKey=is_key, topic=topic, bytes=_b64(data)
        )
        return decode_data(answer.get("data"))

    def from_connect_header(
        self,
        converter: str,
        configs: dict[str, Any] | None,
        schema: Schema | None,
        value: Any,
        *,
        topic: str = "topic",
        header_key: str = "header",
    ) -> bytes | None:
        """``HeaderConverter.fromConnectHeader`` of Kafka's ``converter``."""
        answer = self.request(
            "fromConnectHeader",
            converter=converter,
            configs=_configs(configs),
            topic=topic,
            headerKey=header_key,
            data=encode_data(schema, value),
        )
        return _unb64(answer.get("bytes"))

    def to_connect_header(
        self,
        converter: str,
        configs: dict[str, Any] | None,
        data: bytes | None,
        *,
        topic: str = "topic",
        header_key: str = "header",
    ) -> SchemaAndValue:
        """``HeaderConverter.toConnectHeader`` of Kafka's ``converter``."""
        answer = self.request(
            "toConnectHeader",
            converter=converter,
            configs=_configs(configs),
            topic=topic,
            headerKey=header_key,
            bytes=_b64(data),
        )
        return decode_data(answer.get("data"))

    # -- transformations and predicates -------------------------------------------------

    def transform(
        self, transformation: str, configs: dict[str, Any] | None, record: SourceRecord | SinkRecord
    ) -> SourceRecord | SinkRecord | None:
        """``Transformation.apply`` of Kafka's ``transformation`` (e.g.
        ``org.apache.kafka.connect.transforms.InsertField$Value``); None if it dropped the record."""
        kind, node = encode_record(record)
        answer = self.request(
            "transform", transformation=transformation, configs=_configs(configs), kind=kind, record=node
        )
        result = answer.get("record")
        return None if result is None else decode_record(result)

    def predicate(self, predicate: str, configs: dict[str, Any] | None, record: SourceRecord | SinkRecord) -> bool:
        """``Predicate.test`` of Kafka's ``predicate``."""
        kind, node = encode_record(record)
        answer = self.request("predicate", predicate=predicate, configs=_configs(configs), kind=kind, record=node)
        return bool(answer["result"])
