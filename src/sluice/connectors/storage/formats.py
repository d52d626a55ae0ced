"""The file formats of the storage sinks (``s3-sink``, ``hdfs-sink``), as Confluent's writes them.

Each :class:`Format` opens a :class:`RecordFileWriter` on a new local file; the sink's core
decides which records go to which file, rotates and uploads/commits them.

* **Avro** (``.avro``): an Avro object container file whose schema is the one Confluent's
  ``AvroData`` derives from the records' Connect schema (``connect.name``,
  ``connect.version``, ``connect.parameters``, logical types), values as AvroData writes
  them; schemaless values go through the ``io.confluent.connect.avro.Anything`` schema, as
  Confluent's do. ``avro.codec``: ``null`` (default), ``deflate``, ``snappy``, ``bzip2``;
  blocks of about 64000 bytes, as Java's ``DataFileWriter``.
* **Parquet**: a Struct value per row, columns typed as in Confluent's files (see
  :mod:`sluice.connectors.storage.arrow_data`, which also names the deviation on decimal
  precision). ``parquet.codec``: ``none``, ``snappy`` (default), ``gzip``, ``lz4``,
  ``lz4_raw``, ``zstd``, ``brotli``. S3's extension carries the codec as parquet-mr names
  it (``.snappy.parquet``, ``.gz.parquet``, ``.parquet`` uncompressed); HDFS's is always
  ``.parquet`` (Confluent's HDFS sink always writes snappy; here ``parquet.codec`` is
  honoured there too).
* **JSON** (``.json``): one value per line. A Struct is written as JsonConverter writes it
  with ``schemas.enable=false`` (``json.decimal.format`` BASE64/NUMERIC, S3); any other value as
  Jackson's ``ObjectMapper`` writes the Java object (a decimal as a number, a date or time
  as epoch milliseconds, bytes as base64, a null value as ``null``).
* **ByteArray** (S3, ``format.bytearray.extension``, default ``.bin``): the bytes of each
  value followed by ``format.bytearray.separator`` (default a line separator, ``\\n``).
* **String** (HDFS, ``.txt``): each value, which must be a string, on its own line.

On S3, ``s3.compression.type=gzip`` gzips JSON and ByteArray files (``.gz`` added to the
extension) at ``s3.compression.level`` (-1, the zlib default, to 9).
"""

from __future__ import annotations

import base64
import bz2
import contextlib
import datetime as _dt
import decimal as _decimal
import gzip
import io
import os
import pathlib
import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

from sluice._java.names import class_string
from sluice._java.text import jackson_string
from sluice.api.data import (
    Date,
    Schema,
    Struct,
    Time,
    Timestamp,
    Type,
    java_double_string,
    java_float_string,
    java_string,
)
from sluice.api.errors import ConfigError, ConnectError, DataError
from sluice.api.records import SinkRecord
from sluice.connectors.storage.arrow_data import arrow_schema, row_converter
from sluice.formats.avro import AvroData, avro_json, wire_schema
from sluice.formats.json_data import JsonData
from sluice.formats.json_nodes import json_bytes

__all__ = [
    "AvroFormat",
    "ByteArrayFormat",
    "Format",
    "FormatError",
    "JsonFormat",
    "ParquetFormat",
    "RecordFileWriter",
    "StringFormat",
    "format_for",
]

FORMAT_CLASS_CONFIG = "format.class"
AVRO_CODEC_CONFIG = "avro.codec"
PARQUET_CODEC_CONFIG = "parquet.codec"
COMPRESSION_TYPE_CONFIG = "s3.compression.type"
COMPRESSION_LEVEL_CONFIG = "s3.compression.level"
JSON_DECIMAL_FORMAT_CONFIG = "json.decimal.format"
BYTEARRAY_EXTENSION_CONFIG = "format.bytearray.extension"
BYTEARRAY_SEPARATOR_CONFIG = "format.bytearray.separator"
CONNECT_META_DATA_CONFIG = "connect.meta.data"
ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG = "enhanced.avro.schema.support"

LINE_SEPARATOR = "\n"  # System.lineSeparator() on the Linux hosts Connect runs on
AVRO_CODECS = ("null", "deflate", "snappy", "bzip2")  # Confluent's AVRO_SUPPORTED_CODECS
# parquet.codec value -> (pyarrow compression, parquet-mr CompressionCodecName extension)
PARQUET_CODECS: dict[str, tuple[str, str]] = {
    "none": ("NONE", ""),
    "uncompressed": ("NONE", ""),
    "snappy": ("SNAPPY", ".snappy"),
    "gzip": ("GZIP", ".gz"),
    "lz4": ("LZ4", ".lz4"),
    "lz4_raw": ("LZ4", ".lz4raw"),
    "zstd": ("ZSTD", ".zstd"),
    "brotli": ("BROTLI", ".br"),
}
COMPRESSION_TYPES = ("none", "gzip")
DEFAULT_ROW_GROUP_ROWS = 64 * 1024
AVRO_SYNC_INTERVAL = 64000  # Avro's DataFileConstants.DEFAULT_SYNC_INTERVAL, in bytes
_TEXT_BUFFER_BYTES = 1 << 20


class FormatError(DataError):
    """A record's value cannot be written in the file's format (nothing of it was written)."""

    def at(self, topic: str, partition: int | None, offset: int) -> FormatError:
        """The same error, its message naming the record's place; caused by what caused this one."""
        located = FormatError(f"{self} (topic {topic}, partition {partition}, offset {offset})")
        located.__cause__ = self.__cause__
        return located


class RecordFileWriter(ABC):
    """Writes the values of records to one new local file."""

    def write(self, record: SinkRecord) -> None:
        """Adds one record's value to the file. Raises DataError (nothing of this record
        written, the writer still usable) when the value cannot be written in this format;
        its message names the record's topic, partition and offset."""
        try:
            self.write_value(record.value)
        except FormatError as e:
            raise e.at(record.topic, record.kafka_partition, record.kafka_offset) from e.__cause__

    @abstractmethod
    def write_value(self, value: Any) -> None:
        """Adds one record's value to the file; :meth:`write` without the record. Raises
        :class:`FormatError` (nothing of this value written, the writer still usable) when
        the value cannot be written in this format; its message does not say which record."""

    @abstractmethod
    def close(self) -> None:
        """Finishes the file (footer, flushes, closes): the local file is then complete."""

    @abstractmethod
    def abort(self) -> None:
        """Drops the file (closes it if open, deletes it)."""


class Format(ABC):
    """A file format: the extension of its files and how to open a writer of one."""

    extension: str

    @abstractmethod
    def open(self, path: pathlib.Path, schema: Schema | None) -> RecordFileWriter:
        """A writer of a new local file at ``path`` for records whose value schema is ``schema``."""


# ====================================================================== text formats


class _LineWriter(RecordFileWriter):
    """Each record's value encoded to bytes, followed by a separator; gzipped or not."""

    def __init__(
        self,
        path: pathlib.Path,
        encode: Callable[[Any], bytes],
        separator: bytes,
        gzip_level: int | None,
    ) -> None:
        self._path = path
        self._encode = encode
        self._separator = separator
        self._buffer = bytearray()
        self._raw: BinaryIO | None = open(path, "wb")  # noqa: SIM115 - closed by close/abort
        self._out: BinaryIO | gzip.GzipFile | None = self._raw
        if gzip_level is not None:
            # no file name and mtime 0 in the header, as Java's GZIPOutputStream
            self._out = gzip.GzipFile(filename="", mode="wb", fileobj=self._raw, compresslevel=gzip_level, mtime=0)

    def write_value(self, value: Any) -> None:
        if self._out is None:
            raise ConnectError(f"The file {self._path} is closed")
        try:
            data = self._encode(value)
        except DataError as e:
            raise FormatError(str(e)) from e
        buffer = self._buffer
        buffer += data
        buffer += self._separator
        if len(buffer) >= _TEXT_BUFFER_BYTES:
            self._out.write(buffer)
            buffer.clear()

    def close(self) -> None:
        if self._out is None:
            return
        out, raw = self._out, self._raw
        self._out = self._raw = None
        try:
            out.write(self._buffer)
            self._buffer.clear()
            out.close()
        finally:
            if raw is not None and raw is not out:
                raw.close()

    def abort(self) -> None:
        out, raw = self._out, self._raw
        self._out = self._raw = None
        self._buffer.clear()
        for stream in (out, raw):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()
        self._path.unlink(missing_ok=True)


def _gzip_level(compression: str, level: int) -> int | None:
    return (6 if level == -1 else level) if compression == "gzip" else None


class JsonFormat(Format):
    """One JSON value per line (Confluent's ``JsonFormat``)."""

    def __init__(
        self,
        *,
        compression: str = "none",
        level: int = -1,
        decimal_format: str = "BASE64",
        extension: str = ".json",
    ) -> None:
        if compression not in COMPRESSION_TYPES:
            raise ValueError(f"Unknown compression {compression!r}")
        if decimal_format.upper() not in ("BASE64", "NUMERIC"):
            raise ValueError(f"Unknown decimal format {decimal_format!r}")
        self.compression = compression
        self.level = level
        self.extension = extension + (".gz" if compression == "gzip" else "")
        self._decimal_numeric = decimal_format.upper() == "NUMERIC"

    def open(self, path: pathlib.Path, schema: Schema | None) -> RecordFileWriter:
        json_data = JsonData(decimal_numeric=self._decimal_numeric)

        def encode(value: Any) -> bytes:
            if isinstance(value, Struct):
                return json_bytes(json_data.to_json(value.schema, value))
            return _jackson(value, schema, json_data).encode("utf-8")

        return _LineWriter(path, encode, LINE_SEPARATOR.encode(), _gzip_level(self.compression, self.level))


def _jackson(value: Any, schema: Schema | None, json_data: JsonData) -> str:
    """``value`` as Jackson's ``ObjectMapper.writeValue`` writes the Java object Connect holds
    (Confluent writes non-Struct values so): BigDecimal as its ``toString``, ``java.util.Date``
    (Date, Time and Timestamp values) as epoch milliseconds, ``byte[]`` as base64, NaN and
    infinities quoted. A Struct inside (which Jackson cannot write sensibly) is written
    as JsonConverter writes it."""
    if value is None:
        return "null"
    if isinstance(value, Struct):
        return json_bytes(json_data.to_json(value.schema, value)).decode("utf-8")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        float32 = schema is not None and schema.type is Type.FLOAT32
        text = java_float_string(value) if float32 else java_double_string(value)
        return text if value == value and value not in (float("inf"), float("-inf")) else '"' + text + '"'
    if isinstance(value, str):
        return jackson_string(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return '"' + base64.b64encode(bytes(value)).decode("ascii") + '"'
    if isinstance(value, _decimal.Decimal):
        return java_string(value)
    if isinstance(value, (_dt.date, _dt.time)):
        return str(_epoch_millis(value, schema))
    if isinstance(value, (list, tuple)):
        vs = schema.value_schema() if schema is not None and schema.type is Type.ARRAY else None
        return "[" + ",".join(_jackson(v, vs, json_data) for v in value) + "]"
    if isinstance(value, dict):
        ks = vs = None
        if schema is not None and schema.type is Type.MAP:
            ks, vs = schema.key_schema(), schema.value_schema()
        return (
            "{"
            + ",".join(
                jackson_string(k if isinstance(k, str) else java_string(k, ks)) + ":" + _jackson(v, vs, json_data)
                for k, v in value.items()
            )
            + "}"
        )
    raise DataError(f"Cannot write a value of {class_string(value)} as JSON")


def _epoch_millis(value: _dt.date | _dt.time, schema: Schema | None) -> int:
    name = schema.name if schema is not None else None
    if isinstance(value, _dt.time):
        if name not in (None, Time.LOGICAL_NAME):
            raise DataError(f"Cannot write a time of day as a {name} value")
        return Time.from_logical(Time.SCHEMA, value)
    if name == Time.LOGICAL_NAME and isinstance(value, _dt.datetime):
        return Time.from_logical(Time.SCHEMA, value)
    if name == Date.LOGICAL_NAME or (name is None and not isinstance(value, _dt.datetime)):
        return Date.from_logical(Date.SCHEMA, value) * 86_400_000
    return Timestamp.from_logical(Timestamp.SCHEMA, value)


class ByteArrayFormat(Format):
    """Each value's bytes followed by a separator (Confluent S3's ``ByteArrayFormat``)."""

    def __init__(
        self,
        *,
        separator: bytes = LINE_SEPARATOR.encode(),
        extension: str = ".bin",
        compression: str = "none",
        level: int = -1,
    ) -> None:
        if compression not in COMPRESSION_TYPES:
            raise ValueError(f"Unknown compression {compression!r}")
        self.separator = separator
        self.compression = compression
        self.level = level
        self.extension = extension + (".gz" if compression == "gzip" else "")

    def open(self, path: pathlib.Path, schema: Schema | None) -> RecordFileWriter:
        def encode(value: Any) -> bytes:
            # ByteArrayConverter.fromConnectData
            if schema is not None and schema.type is not Type.BYTES:
                raise DataError(f"Invalid schema type for ByteArrayConverter: {schema.type.name}")
            if isinstance(value, bytes):
                return value
            if isinstance(value, (bytearray, memoryview)):
                return bytes(value)
            if value is None:
                raise DataError("ByteArrayFormat cannot write a null value")
            raise DataError(f"ByteArrayConverter is not compatible with objects of type {class_string(value)}")

        return _LineWriter(path, encode, self.separator, _gzip_level(self.compression, self.level))


class StringFormat(Format):
    """Each value, a string, on its own line (Confluent HDFS's ``StringFormat``, which casts
    the value to ``String``: any other value fails)."""

    extension = ".txt"

    def open(self, path: pathlib.Path, schema: Schema | None) -> RecordFileWriter:
        def encode(value: Any) -> bytes:
            if isinstance(value, str):
                return value.encode("utf-8", "surrogatepass")
            what = "a null value" if value is None else f"a value of {class_string(value)}"
            raise DataError(f"StringFormat writes string values only, not {what}")

        return _LineWriter(path, encode, LINE_SEPARATOR.encode(), None)


# ====================================================================== Avro


def _zigzag(n: int) -> bytes:
    """Avro's variable-length zig-zag encoding of a long."""
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


def _snappy(data: bytes) -> bytes:
    # Avro's snappy blocks: raw snappy, then the CRC32 of the uncompressed data, big-endian
    compressed: bytes = pa.compress(data, codec="snappy", asbytes=True)
    return compressed + (zlib.crc32(data) & 0xFFFFFFFF).to_bytes(4, "big")


_AVRO_BLOCK_CODECS: dict[str, Callable[[bytes], bytes]] = {
    "null": lambda data: data,
    "deflate": _deflate,
    "snappy": _snappy,
    "bzip2": bz2.compress,
}


class _AvroWriter(RecordFileWriter):
    """An Avro object container file, written block by block (the header carries the
    schema exactly as AvroData gives it; values are encoded with fastavro through the
    structure-only schema, which encodes the same bytes)."""

    def __init__(self, path: pathlib.Path, schema: Schema | None, codec: str, avro_data: AvroData) -> None:
        self._path = path
        self._schema = schema
        self._avro_data = avro_data
        self._avro = avro_data.from_connect_schema(schema)
        self._parsed = fastavro.parse_schema(wire_schema(self._avro))
        self._compress = _AVRO_BLOCK_CODECS[codec]
        self._sync = os.urandom(16)
        self._block = io.BytesIO()
        self._count = 0
        header = io.BytesIO()
        header.write(b"Obj\x01")
        meta = {"avro.schema": avro_json(self._avro).encode("utf-8"), "avro.codec": codec.encode("ascii")}
        fastavro.schemaless_writer(header, {"type": "map", "values": "bytes"}, meta)
        header.write(self._sync)
        self._file: BinaryIO | None = open(path, "wb")  # noqa: SIM115 - closed by close/abort
        self._file.write(header.getvalue())

    def write_value(self, value: Any) -> None:
        if self._file is None:
            raise ConnectError(f"The file {self._path} is closed")
        try:
            datum = self._avro_data.from_connect_data(self._schema, self._avro, value)
        except DataError as e:
            raise FormatError(f"Cannot convert the value to Avro: {e}") from e
        block = self._block
        start = block.tell()
        try:
            fastavro.schemaless_writer(block, self._parsed, datum)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as e:
            block.seek(start)
            block.truncate()
            raise FormatError(f"Cannot write the value to Avro: {e}") from e
        self._count += 1
        if block.tell() >= AVRO_SYNC_INTERVAL:
            self._write_block()

    def _write_block(self) -> None:
        if self._count == 0 or self._file is None:
            return
        data = self._compress(self._block.getvalue())
        self._file.write(_zigzag(self._count) + _zigzag(len(data)) + data + self._sync)
        self._block = io.BytesIO()
        self._count = 0

    def close(self) -> None:
        if self._file is None:
            return
        try:
            self._write_block()
        finally:
            file, self._file = self._file, None
            file.close()

    def abort(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            with contextlib.suppress(OSError):
                file.close()
        self._path.unlink(missing_ok=True)


class AvroFormat(Format):
    """Avro object container files (Confluent's ``AvroFormat``)."""

    extension = ".avro"

    def __init__(self, codec: str = "null", *, avro_data: AvroData | None = None) -> None:
        if codec not in _AVRO_BLOCK_CODECS:
            raise ValueError(f"Unknown Avro codec {codec!r}")
        self.codec = codec
        self._avro_data = avro_data if avro_data is not None else AvroData()

    def open(self, path: pathlib.Path, schema: Schema | None) -> RecordFileWriter:
        return _AvroWriter(path, schema, self.codec, self._avro_data)


# ====================================================================== Parquet


class _ParquetWriter(RecordFileWriter):
    """Rows converted (and checked) record by record, written a row group at a time."""

    def __init__(self, path: pathlib.Path, schema: Schema | None, compression: str, row_group_rows: int) -> None:
        self._path = path
        self._schema = schema
        self._same_schema: Schema | None = schema  # a schema object known to equal it
        self._row_group_rows = row_group_rows
        self._rows: list[tuple[Any, ...]] = []
        self._writer: pq.ParquetWriter | None = None
        self._unwritable: str | None = None
        self._closed = False
        try:
            self._arrow_schema = arrow_schema(schema)  # raises unless a STRUCT schema
            self._row = row_converter(schema if schema is not None else Schema(Type.STRUCT))
        except DataError as e:
            self._unwritable = str(e)
            return
        self._writer = pq.ParquetWriter(str(path), self._arrow_schema, compression=compression, use_dictionary=True)

    def write_value(self, value: Any) -> None:
        if self._closed:
            raise ConnectError(f"The file {self._path} is closed")
        if self._unwritable is not None:
            raise FormatError(self._unwritable)
        if not isinstance(value, Struct):
            what = "a null value" if value is None else f"a value of {class_string(value)}"
            raise FormatError(f"Parquet files hold Struct values, not {what}")
        if value.schema is not self._same_schema:
            if value.schema != self._schema:
                raise FormatError("The value's schema is not the schema of the Parquet file")
            self._same_schema = value.schema
        try:
            row = self._row(value)
        except DataError as e:
            raise FormatError(str(e)) from e
        rows = self._rows
        rows.append(row)
        if len(rows) >= self._row_group_rows:
            self._flush()

    def _flush(self) -> None:
        rows, self._rows = self._rows, []
        if not rows or self._writer is None:
            return
        schema = self._arrow_schema
        try:
            columns = zip(*rows, strict=True)
            arrays = [pa.array(column, type=field.type) for column, field in zip(columns, schema, strict=True)]
            table = pa.Table.from_arrays(arrays, schema=schema)
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as e:
            raise ConnectError(f"Cannot build a Parquet row group for {self._path}: {e}") from e
        self._writer.write_table(table, row_group_size=len(rows))

    def close(self) -> None:
        if self._closed:
            return
        try:
            self._flush()
        finally:
            self._closed = True
            writer, self._writer = self._writer, None
            if writer is not None:
                writer.close()

    def abort(self) -> None:
        self._closed = True
        self._rows = []
        writer, self._writer = self._writer, None
        if writer is not None:
            with contextlib.suppress(OSError, pa.ArrowException):
                writer.close()
        self._path.unlink(missing_ok=True)


class ParquetFormat(Format):
    """Parquet files of Struct values (Confluent's ``ParquetFormat``)."""

    def __init__(
        self,
        codec: str = "snappy",
        *,
        extension: str | None = None,
        row_group_rows: int = DEFAULT_ROW_GROUP_ROWS,
    ) -> None:
        """``extension`` defaults to S3's: the codec's extension then ``.parquet``."""
        if codec not in PARQUET_CODECS:
            raise ValueError(f"Unknown Parquet codec {codec!r}")
        if row_group_rows < 1:
            raise ValueError("row_group_rows must be at least 1")
        self.codec = codec
        self.compression, codec_extension = PARQUET_CODECS[codec]
        self.extension = extension if extension is not None else codec_extension + ".parquet"
        self.row_group_rows = row_group_rows

    def open(self, path: pathlib.Path, schema: Schema | None) -> RecordFileWriter:
        return _ParquetWriter(path, schema, self.compression, self.row_group_rows)


# ====================================================================== format.class


_FORMAT_KINDS: dict[str, str] = {
    "io.confluent.connect.s3.format.avro.AvroFormat": "avro",
    "io.confluent.connect.s3.format.json.JsonFormat": "json",
    "io.confluent.connect.s3.format.parquet.ParquetFormat": "parquet",
    "io.confluent.connect.s3.format.bytearray.ByteArrayFormat": "bytearray",
    "io.confluent.connect.hdfs.avro.AvroFormat": "avro",
    "io.confluent.connect.hdfs.parquet.ParquetFormat": "parquet",
    "io.confluent.connect.hdfs.json.JsonFormat": "json",
    "io.confluent.connect.hdfs.string.StringFormat": "string",
    "AvroFormat": "avro",
    "ParquetFormat": "parquet",
    "JsonFormat": "json",
    "ByteArrayFormat": "bytearray",
    "StringFormat": "string",
}


def _option(config: Mapping[str, str], key: str, default: str) -> str:
    value = config.get(key)
    return default if value is None else str(value).strip()


def _choice(config: Mapping[str, str], key: str, default: str, allowed: tuple[str, ...] | list[str]) -> str:
    value = _option(config, key, default)
    lowered = value.lower()
    if lowered not in allowed:
        raise ConfigError(key, value, "Value must be one of: " + ", ".join(allowed))
    return lowered


def _bool(config: Mapping[str, str], key: str, default: bool) -> bool:
    value = _option(config, key, "true" if default else "false").lower()
    if value not in ("true", "false"):
        raise ConfigError(key, value, "Expected value to be either true or false")
    return value == "true"


def _compression(config: Mapping[str, str], store: str) -> tuple[str, int]:
    if store != "s3":
        return "none", -1
    compression = _choice(config, COMPRESSION_TYPE_CONFIG, "none", COMPRESSION_TYPES)
    text = _option(config, COMPRESSION_LEVEL_CONFIG, "-1")
    try:
        level = int(text)
    except ValueError:
        raise ConfigError(COMPRESSION_LEVEL_CONFIG, text, "Not a number of type INT") from None
    if not -1 <= level <= 9:
        raise ConfigError(COMPRESSION_LEVEL_CONFIG, text, "Value must be -1 (the default level) or from 0 to 9")
    return compression, level


def format_for(class_name: str, config: Mapping[str, str], *, store: str) -> Format:
    """The Format for a ``format.class`` value (Confluent's class names or their short
    names) with its options from the connector config; ``store`` is ``"s3"`` or ``"hdfs"``.
    Raises ConfigError naming the key for an unknown class or a bad option value."""
    if store not in ("s3", "hdfs"):
        raise ValueError(f"Unknown store {store!r}")
    name = (class_name or "").strip()
    kind = _FORMAT_KINDS.get(name)
    if kind is None:
        raise ConfigError(
            FORMAT_CLASS_CONFIG,
            class_name,
            "Unknown format class; supported: " + ", ".join(_FORMAT_KINDS),
        )
    if kind == "avro":
        codec = _choice(config, AVRO_CODEC_CONFIG, "null", AVRO_CODECS)
        avro_data = AvroData(
            connect_meta_data=_bool(config, CONNECT_META_DATA_CONFIG, True),
            enhanced_avro_schema_support=_bool(config, ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG, False),
        )
        return AvroFormat(codec, avro_data=avro_data)
    if kind == "parquet":
        codec = _choice(config, PARQUET_CODEC_CONFIG, "snappy", list(PARQUET_CODECS))
        return ParquetFormat(codec, extension=".parquet" if store == "hdfs" else None)
    if kind == "json":
        compression, level = _compression(config, store)
        decimal_format = _choice(config, JSON_DECIMAL_FORMAT_CONFIG, "base64", ("base64", "numeric"))
        return JsonFormat(compression=compression, level=level, decimal_format=decimal_format)
    if kind == "bytearray":
        compression, level = _compression(config, store)
        separator = config.get(BYTEARRAY_SEPARATOR_CONFIG)  # not trimmed: whitespace is the point
        return ByteArrayFormat(
            separator=(LINE_SEPARATOR if separator is None else str(separator)).encode("utf-8"),
            extension=_option(config, BYTEARRAY_EXTENSION_CONFIG, ".bin"),
            compression=compression,
            level=level,
        )
    return StringFormat()
