"""The storage sinks' file formats: files written record by record, read back with
pyarrow / fastavro / plain text, as a user of the files would read them."""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import io
import json
import zlib
from decimal import Decimal as D
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sluice.api.data import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import SinkRecord
from sluice.connectors.storage.formats import (
    AvroFormat,
    ByteArrayFormat,
    JsonFormat,
    ParquetFormat,
    StringFormat,
    format_for,
)

ADDRESS = (
    SchemaBuilder.struct()
    .name("com.example.Address")
    .field("city", Schema.STRING_SCHEMA)
    .field("zip", Schema.OPTIONAL_INT32_SCHEMA)
    .optional()
    .build()
)
PRICE = Decimal.builder(2).parameter("connect.decimal.precision", "10").build()
AMOUNT = Decimal.builder(3).optional().build()
SCHEMA = (
    SchemaBuilder.struct()
    .name("com.example.Order")
    .version(3)
    .field("i8", Schema.INT8_SCHEMA)
    .field("i16", Schema.INT16_SCHEMA)
    .field("i32", Schema.INT32_SCHEMA)
    .field("i64", Schema.INT64_SCHEMA)
    .field("f32", Schema.FLOAT32_SCHEMA)
    .field("f64", Schema.FLOAT64_SCHEMA)
    .field("flag", Schema.BOOLEAN_SCHEMA)
    .field("name", Schema.STRING_SCHEMA)
    .field("raw", Schema.BYTES_SCHEMA)
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .field("count", Schema.OPTIONAL_INT64_SCHEMA)
    .field("price", PRICE)
    .field("amount", AMOUNT)
    .field("day", Date.SCHEMA)
    .field("at", Time.SCHEMA)
    .field("ts", Timestamp.SCHEMA)
    .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
    .field("scores", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_INT32_SCHEMA).build())
    .field("by_id", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build())
    .field("address", ADDRESS)
    .build()
)

TS = dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=dt.UTC)


def full_value() -> Struct:
    return (
        Struct(SCHEMA)
        .put("i8", -8)
        .put("i16", 1600)
        .put("i32", -(2**31))
        .put("i64", 2**62)
        .put("f32", 1.5)
        .put("f64", -2.25)
        .put("flag", True)
        .put("name", "zoë")
        .put("raw", b"\x00\xff")
        .put("note", "hi")
        .put("count", 7)
        .put("price", D("12345678.90"))
        .put("amount", D("-0.125"))
        .put("day", dt.date(2024, 5, 6))
        .put("at", dt.time(7, 8, 9, 123000))
        .put("ts", TS)
        .put("tags", ["a", "b"])
        .put("scores", {"x": 1, "y": None})
        .put("by_id", {1: "one", 2: "two"})
        .put("address", Struct(ADDRESS).put("city", "Paris").put("zip", 75001))
    )


def sparse_value() -> Struct:
    """The optional fields null, the containers empty."""
    return (
        Struct(SCHEMA)
        .put("i8", 0)
        .put("i16", 0)
        .put("i32", 0)
        .put("i64", 0)
        .put("f32", 0.0)
        .put("f64", 0.0)
        .put("flag", False)
        .put("name", "")
        .put("raw", b"")
        .put("price", D("0.00"))
        .put("day", dt.date(1970, 1, 1))
        .put("at", dt.time(0))
        .put("ts", dt.datetime(1970, 1, 1, tzinfo=dt.UTC))
        .put("tags", [])
        .put("scores", {})
        .put("by_id", {})
    )


def record(value: Any, schema: Schema | None = SCHEMA, offset: int = 0) -> SinkRecord:
    return SinkRecord("orders", 2, None, None, schema, value, offset)


def write_all(fmt: Any, path: Path, schema: Schema | None, values: list[Any]) -> Path:
    writer = fmt.open(path, schema)
    for i, v in enumerate(values):
        writer.write(record(v, schema, i))
    writer.close()
    return path


# ====================================================================== Parquet


def test_parquet_schema_and_values(tmp_path: Path) -> None:
    path = write_all(ParquetFormat(), tmp_path / "f.parquet", SCHEMA, [full_value(), sparse_value()])
    table = pq.read_table(path)

    fields = {f.name: f for f in table.schema}
    expected_types = {
        "i8": pa.int32(),
        "i16": pa.int32(),
        "i32": pa.int32(),
        "i64": pa.int64(),
        "f32": pa.float32(),
        "f64": pa.float64(),
        "flag": pa.bool_(),
        "name": pa.string(),
        "raw": pa.binary(),
        "note": pa.string(),
        "count": pa.int64(),
        "price": pa.decimal128(10, 2),
        "amount": pa.decimal128(38, 3),
        "day": pa.date32(),
        "at": pa.time32("ms"),
        "ts": pa.timestamp("ms", tz="UTC"),
    }
    for name, t in expected_types.items():
        assert fields[name].type == t, name
    assert pa.types.is_list(fields["tags"].type)
    assert fields["tags"].type.value_type == pa.string()
    assert fields["scores"].type == pa.map_(pa.string(), pa.int32())
    by_id = fields["by_id"].type
    assert pa.types.is_list(by_id)
    assert by_id.value_type == pa.struct(
        [pa.field("key", pa.int32(), nullable=False), pa.field("value", pa.string(), nullable=False)]
    )
    assert fields["address"].type == pa.struct(
        [pa.field("city", pa.string(), nullable=False), pa.field("zip", pa.int32())]
    )
    nullable = {f.name for f in table.schema if f.nullable}
    assert nullable == {"note", "count", "amount", "address"}

    rows = table.to_pylist()
    assert rows[0] == {
        "i8": -8,
        "i16": 1600,
        "i32": -(2**31),
        "i64": 2**62,
        "f32": 1.5,
        "f64": -2.25,
        "flag": True,
        "name": "zoë",
        "raw": b"\x00\xff",
        "note": "hi",
        "count": 7,
        "price": D("12345678.90"),
        "amount": D("-0.125"),
        "day": dt.date(2024, 5, 6),
        "at": dt.time(7, 8, 9, 123000),
        "ts": TS,
        "tags": ["a", "b"],
        "scores": [("x", 1), ("y", None)],
        "by_id": [{"key": 1, "value": "one"}, {"key": 2, "value": "two"}],
        "address": {"city": "Paris", "zip": 75001},
    }
    assert rows[1]["note"] is None and rows[1]["count"] is None and rows[1]["amount"] is None
    assert rows[1]["address"] is None
    assert rows[1]["price"] == D("0.00") and rows[1]["tags"] == [] and rows[1]["scores"] == []
    assert rows[1]["ts"] == dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def test_parquet_default_of_a_null_field_is_written(tmp_path: Path) -> None:
    schema = (
        SchemaBuilder.struct()
        .field("id", Schema.INT64_SCHEMA)
        .field("status", SchemaBuilder.string().default_value("new").build())
        .build()
    )
    value = Struct.from_converted(schema, [1, None])  # unset, as a converter may leave it
    path = tmp_path / "d.parquet"
    write_all(ParquetFormat(), path, schema, [value])
    assert pq.read_table(path).to_pylist() == [{"id": 1, "status": "new"}]


def test_parquet_bad_records_raise_and_the_file_keeps_the_good_ones(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    writer = ParquetFormat().open(path, SCHEMA)
    writer.write(record(full_value(), offset=10))

    with pytest.raises(DataError, match="offset 11"):
        writer.write(record(42, Schema.INT32_SCHEMA, offset=11))
    with pytest.raises(DataError, match="Struct"):
        writer.write(record({"a": 1}, None, offset=12))
    too_wide = full_value().put("price", D("123456789.12"))  # 11 digits, precision 10
    with pytest.raises(DataError, match="precision 10"):
        writer.write(record(too_wide, offset=13))
    wrong_scale = full_value().put("price", D("1.5"))
    with pytest.raises(DataError, match="scale"):
        writer.write(record(wrong_scale, offset=14))
    missing = Struct.from_converted(SCHEMA, [None] * len(SCHEMA.fields()))
    with pytest.raises(DataError, match="required"):
        writer.write(record(missing, offset=15))
    out_of_range = Struct.from_converted(SCHEMA, list(full_value().field_values()))
    out_of_range.field_values()[0] = 300  # an INT8 field
    with pytest.raises(DataError, match='"i8"'):
        writer.write(record(out_of_range, offset=16))

    writer.write(record(sparse_value(), offset=17))
    writer.close()
    rows = pq.read_table(path).to_pylist()
    assert [r["name"] for r in rows] == ["zoë", ""]


def test_parquet_schemaless_records_are_rejected(tmp_path: Path) -> None:
    writer = ParquetFormat().open(tmp_path / "f.parquet", None)
    with pytest.raises(DataError, match="no schema"):
        writer.write(record({"a": 1}, None, offset=3))
    writer.abort()
    assert not (tmp_path / "f.parquet").exists()


def test_parquet_row_groups_keep_every_row_in_order(tmp_path: Path) -> None:
    schema = SchemaBuilder.struct().field("n", Schema.INT64_SCHEMA).field("s", Schema.OPTIONAL_STRING_SCHEMA).build()
    values = [Struct(schema).put("n", i).put("s", None if i % 3 else str(i)) for i in range(25)]
    path = write_all(ParquetFormat(row_group_rows=10), tmp_path / "f.parquet", schema, values)
    parquet = pq.ParquetFile(path)
    assert parquet.metadata.num_row_groups == 3
    assert [parquet.metadata.row_group(i).num_rows for i in range(3)] == [10, 10, 5]
    assert parquet.read().column("n").to_pylist() == list(range(25))
    assert parquet.read().column("s").to_pylist() == [None if i % 3 else str(i) for i in range(25)]


@pytest.mark.parametrize(("codec", "compression"), [("snappy", "SNAPPY"), ("gzip", "GZIP"), ("none", "UNCOMPRESSED")])
def test_parquet_codecs(tmp_path: Path, codec: str, compression: str) -> None:
    path = write_all(ParquetFormat(codec), tmp_path / "f.parquet", SCHEMA, [full_value()])
    parquet = pq.ParquetFile(path)
    assert parquet.metadata.row_group(0).column(0).compression == compression
    assert parquet.read().to_pylist()[0]["name"] == "zoë"


def test_parquet_empty_file_is_valid(tmp_path: Path) -> None:
    path = write_all(ParquetFormat(), tmp_path / "f.parquet", SCHEMA, [])
    assert pq.read_table(path).num_rows == 0


# ====================================================================== Avro


def test_avro_values_and_writer_schema(tmp_path: Path) -> None:
    path = write_all(AvroFormat(), tmp_path / "f.avro", SCHEMA, [full_value(), sparse_value()])
    with path.open("rb") as f:
        reader = fastavro.reader(f)
        rows = list(reader)
        header = json.loads(reader.metadata["avro.schema"])
        assert reader.metadata["avro.codec"] == "null"
        writer_schema: Any = reader.writer_schema
        assert writer_schema["connect.name"] == "com.example.Order"
        ts_type = next(f["type"] for f in writer_schema["fields"] if f["name"] == "ts")
        assert ts_type["logicalType"] == "timestamp-millis" and ts_type["connect.name"] == Timestamp.LOGICAL_NAME

    assert header["name"] == "Order" and header["namespace"] == "com.example"
    assert header["connect.name"] == "com.example.Order" and header["connect.version"] == 3
    types = {f["name"]: f["type"] for f in header["fields"]}
    assert types["i8"] == {"type": "int", "connect.type": "int8"}
    assert types["price"]["logicalType"] == "decimal" and types["price"]["precision"] == 10
    assert types["price"]["connect.parameters"] == {"scale": "2", "connect.decimal.precision": "10"}
    assert types["day"]["logicalType"] == "date" and types["day"]["connect.name"] == Date.LOGICAL_NAME
    assert types["at"]["logicalType"] == "time-millis"
    assert types["ts"]["logicalType"] == "timestamp-millis"
    assert types["note"] == ["null", "string"]

    assert rows[0] == {
        "i8": -8,
        "i16": 1600,
        "i32": -(2**31),
        "i64": 2**62,
        "f32": 1.5,
        "f64": -2.25,
        "flag": True,
        "name": "zoë",
        "raw": b"\x00\xff",
        "note": "hi",
        "count": 7,
        "price": D("12345678.90"),
        "amount": D("-0.125"),
        "day": dt.date(2024, 5, 6),
        "at": dt.time(7, 8, 9, 123000),
        "ts": TS,
        "tags": ["a", "b"],
        "scores": {"x": 1, "y": None},
        "by_id": [{"key": 1, "value": "one"}, {"key": 2, "value": "two"}],
        "address": {"city": "Paris", "zip": 75001},
    }
    assert rows[1]["note"] is None and rows[1]["amount"] is None and rows[1]["address"] is None
    assert rows[1]["price"] == D("0.00")


def test_avro_schemaless_values_use_the_anything_schema(tmp_path: Path) -> None:
    path = write_all(AvroFormat(), tmp_path / "f.avro", None, ["text", 5])
    with path.open("rb") as f:
        reader = fastavro.reader(f)
        rows = list(reader)
        header = json.loads(reader.metadata["avro.schema"])
        assert (header["namespace"], header["name"]) == ("io.confluent.connect.avro", "Anything")
    assert rows[0]["string"] == "text" and rows[0]["long"] is None
    assert rows[1]["long"] == 5


def test_avro_bad_record_raises_and_the_file_keeps_the_good_ones(tmp_path: Path) -> None:
    path = tmp_path / "f.avro"
    writer = AvroFormat().open(path, SCHEMA)
    writer.write(record(full_value(), offset=1))
    with pytest.raises(DataError, match="offset 2"):
        writer.write(record(42, Schema.INT32_SCHEMA, offset=2))
    missing = Struct.from_converted(SCHEMA, [None] * len(SCHEMA.fields()))
    with pytest.raises(DataError):
        writer.write(record(missing, offset=3))
    writer.write(record(sparse_value(), offset=4))
    writer.close()
    with path.open("rb") as f:
        assert [r["name"] for r in fastavro.reader(f)] == ["zoë", ""]


@pytest.mark.parametrize("codec", ["deflate", "bzip2"])
def test_avro_codecs_read_back(tmp_path: Path, codec: str) -> None:
    values = [full_value()] * 3000  # more than one 64000-byte block
    path = write_all(AvroFormat(codec), tmp_path / "f.avro", SCHEMA, values)
    with path.open("rb") as f:
        reader = fastavro.reader(f)
        rows = list(reader)
        assert reader.metadata["avro.codec"] == codec
    assert len(rows) == 3000 and rows[-1]["price"] == D("12345678.90")


def _read_snappy_container(data: bytes) -> list[Any]:
    """Avro container with snappy blocks, decoded by hand (fastavro needs an extra package
    for snappy): blocks of raw snappy data followed by the CRC32 of the uncompressed bytes."""
    buf = io.BytesIO(data)
    assert buf.read(4) == b"Obj\x01"
    meta = fastavro.schemaless_reader(buf, {"type": "map", "values": "bytes"}, None)
    assert meta["avro.codec"] == b"snappy"
    schema = fastavro.parse_schema(json.loads(meta["avro.schema"]))
    sync = buf.read(16)
    rows = []
    while buf.tell() < len(data):
        count = fastavro.schemaless_reader(buf, "long", None)
        block = buf.read(fastavro.schemaless_reader(buf, "long", None))
        assert buf.read(16) == sync
        compressed, crc = block[:-4], block[-4:]
        length, shift, pos = 0, 0, 0
        while True:  # snappy's preamble: the uncompressed length as a little-endian varint
            b = compressed[pos]
            length |= (b & 0x7F) << shift
            pos, shift = pos + 1, shift + 7
            if not b & 0x80:
                break
        raw = pa.decompress(compressed, decompressed_size=length, codec="snappy", asbytes=True)
        assert int.from_bytes(crc, "big") == zlib.crc32(raw)
        block_buf = io.BytesIO(raw)
        rows += [fastavro.schemaless_reader(block_buf, schema, None) for _ in range(count)]
    return rows


def test_avro_snappy(tmp_path: Path) -> None:
    path = write_all(AvroFormat("snappy"), tmp_path / "f.avro", SCHEMA, [full_value(), sparse_value()])
    rows = _read_snappy_container(path.read_bytes())
    assert [r["name"] for r in rows] == ["zoë", ""]
    assert rows[0]["ts"] == TS


# ====================================================================== JSON


def test_json_lines(tmp_path: Path) -> None:
    path = write_all(JsonFormat(), tmp_path / "f.json", SCHEMA, [full_value(), sparse_value()])
    lines = path.read_text("utf-8").split("\n")
    assert lines[-1] == "" and len(lines) == 3
    first = json.loads(lines[0])
    assert first == {
        "i8": -8,
        "i16": 1600,
        "i32": -(2**31),
        "i64": 2**62,
        "f32": 1.5,
        "f64": -2.25,
        "flag": True,
        "name": "zoë",
        "raw": base64.b64encode(b"\x00\xff").decode(),
        "note": "hi",
        "count": 7,
        "price": base64.b64encode((1234567890).to_bytes(4, "big", signed=True)).decode(),
        "amount": base64.b64encode((-125).to_bytes(1, "big", signed=True)).decode(),
        "day": (dt.date(2024, 5, 6) - dt.date(1970, 1, 1)).days,
        "at": ((7 * 60 + 8) * 60 + 9) * 1000 + 123,
        "ts": int(TS.timestamp() * 1000),
        "tags": ["a", "b"],
        "scores": {"x": 1, "y": None},
        "by_id": [[1, "one"], [2, "two"]],
        "address": {"city": "Paris", "zip": 75001},
    }
    assert json.loads(lines[1])["note"] is None and json.loads(lines[1])["address"] is None
    assert lines[0].startswith('{"i8":-8,"i16":1600,')  # compact, in field order


def test_json_numeric_decimals(tmp_path: Path) -> None:
    fmt = format_for("JsonFormat", {"json.decimal.format": "NUMERIC"}, store="s3")
    path = write_all(fmt, tmp_path / "f.json", SCHEMA, [full_value()])
    assert json.loads(path.read_text())["price"] == 12345678.9
    assert '"price":12345678.90,' in path.read_text()


def test_json_schemaless_and_non_struct_values(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    writer = JsonFormat().open(path, None)
    for i, value in enumerate([{"a": [1, 2.5, None], "b": {"c": True}}, "text", None, 7, b"\x01"]):
        writer.write(record(value, None, i))
    writer.close()
    assert path.read_text().split("\n") == ['{"a":[1,2.5,null],"b":{"c":true}}', '"text"', "null", "7", '"AQ=="', ""]


def test_json_gzip(tmp_path: Path) -> None:
    fmt = format_for("io.confluent.connect.s3.format.json.JsonFormat", {"s3.compression.type": "gzip"}, store="s3")
    assert fmt.extension == ".json.gz"
    path = write_all(fmt, tmp_path / "f.json.gz", SCHEMA, [full_value(), sparse_value()])
    with gzip.open(path, "rt", encoding="utf-8") as f:
        lines = f.read().split("\n")
    assert [json.loads(line)["name"] for line in lines[:2]] == ["zoë", ""]


def test_text_writer_abort_deletes_the_file(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    writer = JsonFormat().open(path, SCHEMA)
    writer.write(record(full_value()))
    writer.abort()
    assert not path.exists()


# ====================================================================== ByteArray and String


def test_bytearray(tmp_path: Path) -> None:
    schema = Schema.OPTIONAL_BYTES_SCHEMA
    path = tmp_path / "f.bin"
    writer = ByteArrayFormat().open(path, schema)
    writer.write(record(b"one", schema, 0))
    with pytest.raises(DataError, match="offset 1"):
        writer.write(record("not bytes", schema, 1))
    writer.write(record(bytearray(b"two\x00"), schema, 2))
    writer.close()
    assert path.read_bytes() == b"one\ntwo\x00\n"


def test_bytearray_separator_extension_and_gzip(tmp_path: Path) -> None:
    config = {
        "format.bytearray.separator": " | ",
        "format.bytearray.extension": ".dat",
        "s3.compression.type": "gzip",
        "s3.compression.level": "9",
    }
    fmt = format_for("ByteArrayFormat", config, store="s3")
    assert fmt.extension == ".dat.gz"
    path = write_all(fmt, tmp_path / "f.dat.gz", None, [b"a", b"b"])
    assert gzip.decompress(path.read_bytes()) == b"a | b | "


def test_bytearray_rejects_a_non_bytes_schema(tmp_path: Path) -> None:
    writer = ByteArrayFormat().open(tmp_path / "f.bin", Schema.STRING_SCHEMA)
    with pytest.raises(DataError, match="Invalid schema type for ByteArrayConverter: STRING"):
        writer.write(record("x", Schema.STRING_SCHEMA))
    writer.close()


def test_string_format(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    writer = StringFormat().open(path, Schema.OPTIONAL_STRING_SCHEMA)
    writer.write(record("first line", Schema.OPTIONAL_STRING_SCHEMA, 0))
    with pytest.raises(DataError, match="string values only"):
        writer.write(record(5, Schema.INT32_SCHEMA, 1))
    writer.write(record("zoë", Schema.OPTIONAL_STRING_SCHEMA, 2))
    writer.close()
    assert path.read_text("utf-8") == "first line\nzoë\n"


# ====================================================================== format_for


def test_format_for_extensions_and_defaults() -> None:
    s3_parquet = format_for("io.confluent.connect.s3.format.parquet.ParquetFormat", {}, store="s3")
    assert isinstance(s3_parquet, ParquetFormat) and s3_parquet.extension == ".snappy.parquet"
    assert format_for("ParquetFormat", {"parquet.codec": "gzip"}, store="s3").extension == ".gz.parquet"
    assert format_for("ParquetFormat", {"parquet.codec": "none"}, store="s3").extension == ".parquet"
    hdfs_parquet = format_for("io.confluent.connect.hdfs.parquet.ParquetFormat", {}, store="hdfs")
    assert isinstance(hdfs_parquet, ParquetFormat)
    assert hdfs_parquet.extension == ".parquet" and hdfs_parquet.codec == "snappy"

    avro = format_for("io.confluent.connect.hdfs.avro.AvroFormat", {"avro.codec": "deflate"}, store="hdfs")
    assert isinstance(avro, AvroFormat) and avro.extension == ".avro" and avro.codec == "deflate"
    assert format_for("io.confluent.connect.s3.format.avro.AvroFormat", {}, store="s3").codec == "null"  # type: ignore[attr-defined]

    assert format_for("io.confluent.connect.hdfs.json.JsonFormat", {}, store="hdfs").extension == ".json"
    # s3.compression.type is an S3 option
    assert format_for("JsonFormat", {"s3.compression.type": "gzip"}, store="hdfs").extension == ".json"
    assert format_for("io.confluent.connect.s3.format.bytearray.ByteArrayFormat", {}, store="s3").extension == ".bin"
    assert format_for("io.confluent.connect.hdfs.string.StringFormat", {}, store="hdfs").extension == ".txt"


@pytest.mark.parametrize(
    ("class_name", "config", "key"),
    [
        ("com.example.CsvFormat", {}, "format.class"),
        ("AvroFormat", {"avro.codec": "lzma"}, "avro.codec"),
        ("ParquetFormat", {"parquet.codec": "lzo"}, "parquet.codec"),
        ("JsonFormat", {"s3.compression.type": "zip"}, "s3.compression.type"),
        ("JsonFormat", {"s3.compression.level": "10"}, "s3.compression.level"),
        ("JsonFormat", {"json.decimal.format": "TEXT"}, "json.decimal.format"),
    ],
)
def test_format_for_rejects_bad_values(class_name: str, config: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError, match=f"for configuration {key}"):
        format_for(class_name, config, store="s3")
