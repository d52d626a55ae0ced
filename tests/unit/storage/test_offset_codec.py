"""Offset keys and values as Kafka's JsonConverter (schemas off) + Jackson write them."""

from __future__ import annotations

import base64
import json
import math
import random
import struct
from decimal import Decimal

import pytest

from sluice.api.errors import DataError
from sluice.kafka.offset_format import (
    decode_offset_key,
    decode_offset_value,
    encode_json,
    encode_offset_key,
    encode_offset_value,
    java_double_to_string,
)
from sluice.storage import MemoryOffsetBackingStore
from sluice.storage.offset_codec import connector_offsets

from . import compile_java, kafka_classpath, requires_javac, requires_kafka_jars, run_java

# --------------------------------------------------------------------------- keys


def test_golden_key_of_the_file_source() -> None:
    key = encode_offset_key("local-file-source", {"filename": "/mnt/connect.input"})
    assert key == b'["local-file-source",{"filename":"/mnt/connect.input"}]'


def test_key_is_compact_and_keeps_insertion_order() -> None:
    key = encode_offset_key("c", {"b": 1, "a": "x", "c": None, "d": True})
    assert key == b'["c",{"b":1,"a":"x","c":null,"d":true}]'


def test_non_ascii_is_raw_utf8() -> None:
    key = encode_offset_key("connecteur-é", {"fichier": "/données/ü€.txt"})
    assert key == '["connecteur-é",{"fichier":"/données/ü€.txt"}]'.encode()
    assert b"\\u" not in key


def test_characters_outside_the_bmp_are_escaped_surrogate_pairs() -> None:
    # Jackson's UTF8JsonGenerator escapes UTF-16 surrogates instead of writing 4-byte UTF-8.
    assert encode_json("a😀b") == b'"a\\uD83D\\uDE00b"'
    assert encode_json("\ud800") == b'"\\uD800"'  # a lone surrogate, as Java would hold it
    assert decode_offset_value(encode_offset_value({"e": "😀"})) == {"e": "😀"}


def test_string_escapes_match_jackson() -> None:
    text = '"\\\b\t\n\f\r\x00\x1f\x1a/\x7f\u2028'
    encoded = encode_json(text)
    assert encoded == b'"\\"\\\\\\b\\t\\n\\f\\r\\u0000\\u001F\\u001A/\x7f\xe2\x80\xa8"'
    assert json.loads(encoded) == text


def test_numbers_and_booleans() -> None:
    assert encode_json([0, -1, 2**31, 2**63 - 1, True, False, None]) == (
        b"[0,-1,2147483648,9223372036854775807,true,false,null]"
    )
    assert encode_json([1.0, 1e10, 0.001, 1e-4, -0.0, 1.5, 1e7, 9999999.0]) == (
        b"[1.0,1.0E10,0.001,1.0E-4,-0.0,1.5,1.0E7,9999999.0]"
    )
    assert encode_json([math.nan, math.inf, -math.inf]) == b'["NaN","Infinity","-Infinity"]'


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1.0"),
        (100.0, "100.0"),
        (0.1, "0.1"),
        (0.001, "0.001"),
        (0.00099, "9.9E-4"),
        (1e7, "1.0E7"),
        (9999999.999, "9999999.999"),
        (12345678.9, "1.23456789E7"),
        (1.7e9, "1.7E9"),
        (1e-300, "1.0E-300"),
        (1.5e300, "1.5E300"),
        (-2.5, "-2.5"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (5e-324, "4.9E-324"),
        (math.pi, "3.141592653589793"),
    ],
)
def test_java_double_to_string(value: float, text: str) -> None:
    assert java_double_to_string(value) == text


def test_bytes_are_base64_and_non_string_keyed_maps_are_pair_arrays() -> None:
    assert encode_json(b"\x00\xff") == b'"' + base64.b64encode(b"\x00\xff") + b'"'
    assert encode_json({1: "a", 2: "b"}) == b'[[1,"a"],[2,"b"]]'
    assert encode_json({"a": [1, {"b": (2, 3)}]}) == b'{"a":[1,{"b":[2,3]}]}'


@pytest.mark.parametrize("bad", [Decimal("1.5"), {1, 2}, object()])
def test_unsupported_types_raise_data_error(bad: object) -> None:
    with pytest.raises(DataError):
        encode_offset_key("c", {"x": bad})


def test_decode_key() -> None:
    assert decode_offset_key(b'["local-file-source",{"filename":"/mnt/connect.input"}]') == (
        "local-file-source",
        {"filename": "/mnt/connect.input"},
    )
    partition = {"f": "ü", "n": 5, "x": 1.5, "b": False, "z": None}
    assert decode_offset_key(encode_offset_key("c", partition)) == ("c", partition)


@pytest.mark.parametrize(
    "key",
    [
        None,
        b"",
        b"not json",
        b"\xff\xfe",
        b'{"a":1}',
        b'"c"',
        b'["c"]',
        b'["c",{},1]',
        b'[1,{"a":1}]',
        b'["c",[1]]',
        b'["c",null]',
    ],
)
def test_decode_key_ignores_keys_that_are_not_string_map_pairs(key: bytes | None) -> None:
    assert decode_offset_key(key) is None  # type: ignore[arg-type]


def test_values() -> None:
    assert encode_offset_value({"position": 12}) == b'{"position":12}'
    assert encode_offset_value(None) is None
    assert decode_offset_value(b'{"position":12}') == {"position": 12}
    assert decode_offset_value(None) is None
    assert decode_offset_value(b"null") is None
    offset = {"pos": 1.5, "big": 10_000_000_000, "s": "ü", "t": True, "n": None}
    assert decode_offset_value(encode_offset_value(offset)) == offset
    with pytest.raises(DataError):
        decode_offset_value(b"[1,2]")
    with pytest.raises(DataError):
        decode_offset_value(b"{broken")


def test_integers_stay_ints_and_floats_stay_floats() -> None:
    decoded = decode_offset_value(b'{"a":12,"b":12.0,"c":1.0E10,"d":123456789012345678901}')
    assert decoded == {"a": 12, "b": 12.0, "c": 1e10, "d": 123456789012345678901}
    assert [type(v) for v in decoded.values()] == [int, float, float, int]


# --------------------------------------------------------------------------- connector_offsets


def test_connector_offsets() -> None:
    store = MemoryOffsetBackingStore()
    store.start()
    store.set(
        {
            encode_offset_key("a", {"file": "1"}): b'{"position":1}',
            encode_offset_key("a", {"file": "2"}): b'{"position":2}',
            encode_offset_key("b", {"file": "1"}): b'{"position":9}',
            encode_offset_key("a", {"file": "3"}): b"null",  # a JSON null offset
            encode_offset_key("a", {"file": "4"}): b"[1]",  # not an offset map: skipped
            b'{"not":"a key"}': b'{"position":5}',
            b"garbage": b'{"position":6}',
        }
    )
    store.set({encode_offset_key("a", {"file": "2"}): None})  # tombstone
    assert connector_offsets(store, "a") == [({"file": "1"}, {"position": 1})]
    assert connector_offsets(store, "b") == [({"file": "1"}, {"position": 9})]
    assert connector_offsets(store, "missing") == []


def test_connector_offsets_prefers_the_canonical_key_of_a_partition() -> None:
    store = MemoryOffsetBackingStore()
    store.set(
        {
            b'["a",{"y":2,"x":1}]': b'{"position":1}',  # e.g. written by Java in HashMap order
            encode_offset_key("a", {"x": 1, "y": 2}): b'{"position":2}',
            b'["a",{"y":2, "x":1}]': b'{"position":3}',
        }
    )
    assert connector_offsets(store, "a") == [({"y": 2, "x": 1}, {"position": 2})]


# --------------------------------------------------------------------------- against Java


DOUBLE_PROGRAM = """
import java.io.*;
public class PrintDoubles {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        StringBuilder out = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            out.append(Double.toString(Double.longBitsToDouble(Long.parseUnsignedLong(line, 16))));
            out.append('\\n');
        }
        System.out.print(out);
    }
}
"""


@requires_javac
def test_doubles_match_java_double_to_string(tmp_path) -> None:
    # Java 17's Double.toString prints a superfluous digit for some values of magnitude
    # 1e16..1e26 and for some subnormals (fixed in Java 19); stay clear of those ranges.
    rng = random.Random(42)
    values = [1.0, 0.1, 0.001, 0.00099, 1e7, 9999999.999, 1.7e9, 2.0**53, 1e15, -2.5, math.pi]
    values += [rng.uniform(-1, 1) * 10.0 ** rng.randint(-200, 15) for _ in range(2000)]
    values += [rng.randint(-(10**9), 10**9) / 10 ** rng.randint(0, 6) for _ in range(2000)]
    stdin = "".join(f"{struct.unpack('>Q', struct.pack('>d', v))[0]:016x}\n" for v in values)
    classpath = compile_java(tmp_path, "PrintDoubles", DOUBLE_PROGRAM)
    java = run_java(classpath, "PrintDoubles", stdin=stdin).splitlines()
    mismatches = [(v, j) for v, j in zip(values, java, strict=True) if java_double_to_string(v) != j]
    assert len(java) == len(values)
    assert mismatches == []


CONVERTER_PROGRAM = """
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import org.apache.kafka.connect.json.JsonConverter;

public class ConvertOffsets {
    public static void main(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        JsonConverter keys = new JsonConverter();
        keys.configure(Map.of("schemas.enable", "false"), true);
        JsonConverter values = new JsonConverter();
        values.configure(Map.of("schemas.enable", "false"), false);
        Base64.Encoder b64 = Base64.getEncoder();
        for (String line : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            List<?> spec = mapper.readValue(line, List.class);  // [connector, partition, offset]
            byte[] key = keys.fromConnectData("", null, Arrays.asList(spec.get(0), spec.get(1)));
            byte[] value = values.fromConnectData("", null, spec.get(2));
            System.out.println(b64.encodeToString(key) + " " + b64.encodeToString(value));
        }
    }
}
"""

CONVERTER_CASES = [
    ("local-file-source", {"filename": "/mnt/connect.input"}, {"position": 12}),
    ("c-ü", {"file": 'ü😀"\\/\x01\x1f\t\n\x7f\u2028', "n": 5}, {"pos": 1.5, "big": 10_000_000_000}),
    ("c", {"b": 1, "a": 2, "c": -7}, {"t": True, "f": False, "z": None, "e": 1e10, "m": -0.0}),
    ("c", {"x": 0.001, "y": 1.0e-4, "w": 1.0e7, "v": 123456.789}, {"list": [1, "a", None]}),
    ("c", {"nested": {"k": [1, 2]}}, {"pi": math.pi, "small": -3.25e-5}),
]


@requires_kafka_jars()
def test_keys_and_values_match_kafka_json_converter(tmp_path) -> None:
    spec = tmp_path / "spec.jsonl"
    spec.write_text(
        "".join(json.dumps(list(case), ensure_ascii=False) + "\n" for case in CONVERTER_CASES),
        encoding="utf-8",
    )
    classpath = compile_java(tmp_path, "ConvertOffsets", CONVERTER_PROGRAM, kafka_classpath())
    lines = run_java(classpath, "ConvertOffsets", str(spec)).splitlines()
    assert len(lines) == len(CONVERTER_CASES)
    for (connector, partition, offset), line in zip(CONVERTER_CASES, lines, strict=True):
        java_key, java_value = (base64.b64decode(part) for part in line.split(" "))
        assert encode_offset_key(connector, partition) == java_key
        assert encode_offset_value(offset) == java_value
