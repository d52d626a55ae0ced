"""JsonConverter's batch decoder (msgspec, for schemaless values) must read every batch
exactly as the record-by-record conversion does: the same values, or — when any value is
not plain JSON to msgspec — the same per-record reading, errors included."""

from __future__ import annotations

import random
import struct
from typing import Any

import pytest

from sluice.api.errors import DataError
from sluice.converters.json import JsonConverter
from tests.helpers import typed_form

# Texts where Kafka's reading (Jackson's rules, as the per-record path implements them)
# and a plain JSON parser might part: whitespace, escapes, surrogates, numbers at the edges.
EDGES = [
    b"1",
    b"-0",
    b"-0.0",
    b"0.1",
    b"1.0",
    b"1E2",
    b"-1.5e-3",
    b"1e400",
    b"-1e400",
    b"1e-400",
    b"4.9e-324",
    b"2.2250738585072014e-308",
    b"1.7976931348623157e308",
    b"1.7976931348623157e309",
    b"9223372036854775807",
    b"9223372036854775808",
    b"18446744073709551616",
    b"-9223372036854775809",
    b"123456789012345678901234567890",
    b"1" + b"0" * 5000,
    b"9007199254740993",
    b"0.30000000000000004",
    b"123456789.123456789123456789",
    b'"plain"',
    b'""',
    b'"\\u00e9\\/\\n"',
    b'"\\ud800"',
    b'"\\ud83d\\ude00"',
    b'"\xed\xa0\x80"',
    b'"\xff"',
    b'"a\tb"',
    b'"\x01"',
    b'"\\u0000"',
    '"h\u00e9 \U0001f600"'.encode(),
    b'{"a":1,"a":2}',
    b'{"a":{"b":[1,2,{"c":null}]},"d":true,"e":false}',
    b"[]",
    b"{}",
    b"[" * 200 + b"]" * 200,
    b'  "x"  ',
    b"\t1\r\n",
    b'\xef\xbb\xbf"bom"',
    b"",
    b"   ",
    b"1 2",
    b"1x",
    b"{}x",
    b'{"a":1}  {"b":2}',
    b"NaN",
    b"Infinity",
    b"01",
    b"1.",
    b".5",
    b"tru",
    b"null",
    b"true",
]


def _converter() -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "false"}, False)
    return converter


def _one_by_one(converter: JsonConverter, values: list[bytes | None]) -> list[Any]:
    out = []
    for value in values:
        try:
            out.append(("ok", typed_form(converter.to_connect_data("t", value).value)))
        except DataError as e:
            out.append(("error", str(e)))
    return out


def _batched(converter: JsonConverter, values: list[bytes | None]) -> list[Any]:
    both = converter.to_connect_batch("t", values)
    assert both is not None
    schemas, converted = both
    assert schemas == [None] * len(values)
    return [("ok", typed_form(v)) for v in converted]


@pytest.mark.parametrize("text", EDGES, ids=lambda t: repr(t[:24]))
def test_each_edge_reads_the_same_alone_and_within_a_batch_of_plain_values(text: bytes) -> None:
    converter = _converter()
    [alone] = _one_by_one(converter, [text])
    values = [b'"before"', text, b"[1.5]"]
    if alone[0] == "error":  # the batch fails as the record does: the pipeline then goes one by one
        with pytest.raises(DataError) as raised:
            converter.to_connect_batch("t", values)
        assert str(raised.value) == alone[1]
    else:
        assert _batched(converter, values) == _one_by_one(converter, values)


def test_null_values_read_as_null_within_a_batch() -> None:
    converter = _converter()
    values = [b'{"a":1}', None, b"2", None]
    assert _batched(converter, values) == _one_by_one(converter, values)


def test_random_numbers_read_the_same() -> None:
    rng = random.Random(20261130)
    values: list[bytes | None] = []
    for _ in range(20_000):
        kind = rng.random()
        if kind < 0.4:
            number = struct.unpack("d", rng.randbytes(8))[0]
            values.append(repr(number).encode() if number == number and abs(number) != float("inf") else b"0")
        elif kind < 0.7:
            values.append(b"%.*e" % (rng.randint(0, 25), rng.uniform(-1, 1) * 10.0 ** rng.randint(-300, 300)))
        else:
            values.append(str(rng.randint(-(2**70), 2**70)).encode())
    converter = _converter()
    assert _batched(converter, values) == _one_by_one(converter, values)


ORDER = (
    '{"type":"struct","name":"Order","optional":false,"fields":['
    '{"field":"id","type":"int64","optional":false},'
    '{"field":"amount","type":"double","optional":true},'
    '{"field":"at","type":"int64","optional":true,"name":"org.apache.kafka.connect.data.Timestamp","version":1}]}'
)
PRICE = (
    '{"type":"struct","optional":false,"fields":['
    '{"field":"p","type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal",'
    '"parameters":{"scale":"2"}}]}'
)
# Envelopes (schemas.enable=true): the schema of the record before or another, spacing, a
# BOM, text after the envelope, a payload that names Decimal, a payload its schema refuses.
ENVELOPES: list[Any] = [
    b'{"schema":' + ORDER.encode() + b',"payload":{"id":1,"amount":2.5,"at":1700000000000}}',
    b'{"schema":' + ORDER.encode() + b',"payload":{"id":2,"amount":null,"at":null}}',
    b'{"schema":' + ORDER.encode() + b',"payload":{"id":3,"amount":1e2,"at":5} }',
    b'{"schema":' + ORDER.encode() + b',"payload":{"id":4,"amount":0.1,"at":6}\n}',
    b'{"schema":' + ORDER.encode() + b',"payload":{"id":5,"amount":1,"at":7}} x',
    b'{"schema":' + ORDER.encode() + b',"payload":{"id":6,"amount":1.5,"at":8},"extra":1}',
    b'{"schema":' + ORDER.encode() + b',"payload":{"id":"seven","amount":1.5,"at":8}}',
    b'{"schema":'
    + ORDER.encode()
    + b',"payload":{"id":8,"amount":1.25,"at":9,"n":"org.apache.kafka.connect.data.Decimal"}}',
    b'\xef\xbb\xbf{"schema":' + ORDER.encode() + b',"payload":{"id":9,"amount":3.5,"at":10}}',
    b'{"schema":' + PRICE.encode() + b',"payload":{"p":"AQI="}}',
    b'{"schema":' + PRICE.encode() + b',"payload":{"p":"AQM="}}',
    b'{"schema": ' + ORDER.encode() + b', "payload": {"id": 10, "amount": 4.5, "at": 11}}',
    b'{"schema":' + ORDER.encode() + b',"payload":{"id":11,"amount":5.5,"at":12}}',
    None,
    bytearray(b'{"schema":' + ORDER.encode() + b',"payload":{"id":12,"amount":6.5,"at":13}}'),
    b'{"schema":null,"payload":{"free":true}}',
    b'{"schema":' + ORDER.encode() + b',"payload":{"id":13,"amount":7.5,"at":14}}',
    b'{"schema":' + ORDER.encode() + b',"payload":{"id":14,"amount":8.5,"at":15}',
]


def _envelope_reading(values: list[Any], batched: bool) -> list[Any]:
    """Each value read with schemas on, in a converter that read the values before it."""
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, False)
    out: list[Any] = []
    for value in values:
        try:
            if batched:
                both = converter.to_connect_batch("t", [value])
                assert both is not None
                (schema,), (read,) = both
            else:
                pair = converter.to_connect_data("t", value)
                schema, read = pair.schema, pair.value
            out.append(("ok", schema, typed_form(read)))
        except DataError as e:
            out.append(("error", str(e)))
    return out


def test_envelopes_read_the_same_in_a_batch_as_one_by_one() -> None:
    assert _envelope_reading(ENVELOPES, batched=True) == _envelope_reading(ENVELOPES, batched=False)
    readable = [v for v, r in zip(ENVELOPES, _envelope_reading(ENVELOPES, False), strict=True) if r[0] == "ok"]
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, False)
    both = converter.to_connect_batch("t", readable)
    assert both is not None
    assert [("ok", s, typed_form(v)) for s, v in zip(*both, strict=True)] == _envelope_reading(readable, False)
    assert sum(1 for r in _envelope_reading(ENVELOPES, False) if r[0] == "error") == 2
