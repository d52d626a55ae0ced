"""JsonConverter's per-schema fast path (compiled conversions, the last envelope's schema
text reused) must read every message exactly as the generic conversion does: same value,
or the same error."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest

from sluice.api.converter import SchemaAndValue
from sluice.api.data import Date, Decimal, Schema, SchemaBuilder, Struct, Timestamp
from sluice.api.errors import DataError
from sluice.converters.json import JsonConverter
from tests.helpers import typed_form


def _schemas() -> list[Schema]:
    inner = (
        SchemaBuilder.struct()
        .name("inner")
        .field("n", Schema.INT32_SCHEMA)
        .field("s", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    return [
        SchemaBuilder.struct()
        .name("flat")
        .field("b", Schema.BOOLEAN_SCHEMA)
        .field("i8", Schema.INT8_SCHEMA)
        .field("i16", Schema.OPTIONAL_INT16_SCHEMA)
        .field("i32", Schema.INT32_SCHEMA)
        .field("i64", Schema.INT64_SCHEMA)
        .field("f32", Schema.FLOAT32_SCHEMA)
        .field("f64", Schema.OPTIONAL_FLOAT64_SCHEMA)
        .field("s", Schema.STRING_SCHEMA)
        .field("bytes", Schema.OPTIONAL_BYTES_SCHEMA)
        .field("d", SchemaBuilder.int32().default_value(7).build())
        .build(),
        SchemaBuilder.struct()
        .name("logical")
        .field("ts", Timestamp.SCHEMA)
        .field("day", Date.builder().optional().build())
        .field("dec", Decimal.builder(2).optional().build())
        .build(),
        SchemaBuilder.struct()
        .name("nested")
        .optional()
        .field("inner", inner)
        .field("list", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
        .field("map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_INT64_SCHEMA).optional().build())
        .build(),
    ]


FIELD_VALUES: dict[str, list[Any]] = {
    "b": [True, False, None, 1, "true"],
    "i8": [1, 300, -129, None, 1.9, "x"],
    "i16": [70000, None, True],
    "i32": [2**31 + 5, -1, None, 2.5],
    "i64": [2**63 + 1, 0, None, "1"],
    "f32": [1.5, 1e39, -0.0, None, 3],
    "f64": [0.1, None, 1e308, "y", -0.0, 0, True],
    "s": ["text", None, 5, True],
    "bytes": ["AAE=", None, "not base64!", 1],
    "d": [None, 3, "missing"],
    "ts": [0, 1_767_225_600_123, -5, None, 1.5, "2020"],
    "day": [0, 19000, None, 1.5],
    "dec": ["AQI=", 12.5, None, "!!"],
    "inner": [{"n": 1, "s": "a"}, {"n": None}, {"s": "only"}, None, [], {"n": "x", "s": 1}],
    "list": [["a", "b"], ["a", None], ["a", 1], [], None, "no"],
    "map": [{"k": 1, "j": None}, {"k": "v"}, None, []],
}


def _payloads(schema: Schema) -> list[Any]:
    names = [f.name for f in schema.fields()]
    base = {n: FIELD_VALUES[n][0] for n in names}
    out: list[Any] = [base, None, [], "scalar", {}]
    for name in names:
        for value in FIELD_VALUES[name][1:]:
            changed = dict(base)
            if value == "missing":
                changed.pop(name)
            else:
                changed[name] = value
            out.append(changed)
    return out


def _outcome(convert: Any) -> Any:
    """What ``convert()`` gives (a value, or a schema and value), or the error it raises."""
    try:
        result = convert()
    except DataError as exc:
        return ("error", str(exc))
    if isinstance(result, SchemaAndValue):
        return ("value", result.schema, typed_form(result.value))
    return ("value", typed_form(result))


@pytest.mark.parametrize("replace_null", [True, False])
def test_compiled_conversion_equals_the_generic_one(replace_null: bool) -> None:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true", "replace.null.with.default": str(replace_null).lower()}, False)
    compared = 0
    for schema in _schemas():
        compiled = converter._compile(schema)
        for payload in _payloads(schema):
            generic = _outcome(functools.partial(converter._to_connect, schema, payload))
            fast = _outcome(functools.partial(compiled, payload))
            assert fast == generic, (schema.name, payload)
            compared += 1
    assert compared > 60


def test_messages_read_the_same_whether_or_not_the_last_schema_text_is_reused() -> None:
    """The same messages, read by one converter in a row (the reuse path) and each by a
    fresh converter (the full parse): same schemas and values, same errors."""
    writer = JsonConverter()
    writer.configure({"schemas.enable": "true"}, False)
    schema = _schemas()[0]
    good = json.loads(
        writer.from_connect_data(
            "t",
            schema,
            Struct(schema).put("b", True).put("i8", 1).put("i32", 2).put("i64", 3).put("f32", 1.5).put("s", "x"),
        )
    )
    schema_text = json.dumps(good["schema"], separators=(",", ":"))
    other = json.dumps({"type": "string", "optional": False}, separators=(",", ":"))
    payload_text = json.dumps(good["payload"], separators=(",", ":"))
    messages = [
        f'{{"schema":{schema_text},"payload":{payload_text}}}',
        f'{{"schema":{schema_text},"payload":{payload_text}}}',
        f'{{"schema":{schema_text},"payload":{payload_text} }}',
        f'{{"schema":{schema_text},"payload":{payload_text}}} trailing',
        f'{{"schema":{schema_text},"payload":{payload_text},"extra":1}}',
        f'{{"schema":{schema_text},"payload":{payload_text}',
        f'{{"schema":{schema_text},"payload":{{"b":true}}}}',
        f'{{"schema":{schema_text},"payload":null}}',
        f'{{"schema":{schema_text},"payload":[1,2]}}',
        f'{{"schema":{other},"payload":"s"}}',
        f'{{"schema":{schema_text}x,"payload":{payload_text}}}',
        f'{{"schema":{schema_text},"payload":{payload_text}}}',
    ]
    reused = JsonConverter()
    reused.configure({"schemas.enable": "true"}, False)
    for text in messages:
        fresh = JsonConverter()
        fresh.configure({"schemas.enable": "true"}, False)
        expected = _outcome(functools.partial(fresh.to_connect_data, "t", text.encode()))
        got = _outcome(functools.partial(reused.to_connect_data, "t", text.encode()))
        assert got == expected, text
    assert reused._last_envelope is not None  # the reuse path was taken
