"""SchemaProjector: Kafka's rules for moving a value between compatible schemas."""

from __future__ import annotations

import datetime as dt
import decimal
import struct

import pytest

from sluice.api import Schema, SchemaBuilder, SchemaProjector, SchemaProjectorError, Struct, Type
from sluice.api.data import Date, Decimal, Timestamp

PROMOTION = [Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64]


def _schema(t: Type, optional: bool = False) -> Schema:
    return Schema(t, optional=optional)


@pytest.mark.parametrize("source", PROMOTION)
@pytest.mark.parametrize("target", PROMOTION)
def test_numeric_promotion_only_widens(source: Type, target: Type) -> None:
    value = 1.0 if source in (Type.FLOAT32, Type.FLOAT64) else 1
    if PROMOTION.index(source) <= PROMOTION.index(target):
        projected = SchemaProjector.project(_schema(source), value, _schema(target))
        assert projected == 1
        assert isinstance(projected, float if target in (Type.FLOAT32, Type.FLOAT64) else int)
    else:
        with pytest.raises(
            SchemaProjectorError,
            match=(f"^Schema type mismatch. source type: {source.name} and target type: {target.name}$"),
        ):
            SchemaProjector.project(_schema(source), value, _schema(target))


def test_promoted_values_convert_like_java() -> None:
    # (float) of a long rounds to single precision; a FLOAT32 widens exactly to FLOAT64
    assert SchemaProjector.project(Schema.INT64_SCHEMA, 2**53 + 1, Schema.FLOAT32_SCHEMA) == 2.0**53
    assert SchemaProjector.project(Schema.INT64_SCHEMA, 2**53 + 1, Schema.FLOAT64_SCHEMA) == float(2**53)
    widened = SchemaProjector.project(Schema.FLOAT32_SCHEMA, 0.1, Schema.FLOAT64_SCHEMA)
    assert widened == struct.unpack(">f", struct.pack(">f", 0.1))[0]
    # the same type leaves the value alone
    assert SchemaProjector.project(Schema.FLOAT32_SCHEMA, 0.1, Schema.FLOAT32_SCHEMA) == 0.1


@pytest.mark.parametrize(
    ("source", "target"),
    [
        (Schema.BOOLEAN_SCHEMA, Schema.INT8_SCHEMA),
        (Schema.STRING_SCHEMA, Schema.BYTES_SCHEMA),
        (Schema.INT32_SCHEMA, Schema.STRING_SCHEMA),
        (Schema.FLOAT64_SCHEMA, Schema.INT64_SCHEMA),
        (
            SchemaBuilder.array(Schema.INT32_SCHEMA).build(),
            SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(),
        ),
    ],
)
def test_incompatible_types(source: Schema, target: Schema) -> None:
    with pytest.raises(SchemaProjectorError, match="^Schema type mismatch"):
        SchemaProjector.project(source, None, target)


def test_primitives_of_the_same_type_pass_through() -> None:
    for schema, value in [
        (Schema.BOOLEAN_SCHEMA, True),
        (Schema.STRING_SCHEMA, "abc"),
        (Schema.BYTES_SCHEMA, b"\x00\x01"),
        (Schema.INT8_SCHEMA, -5),
    ]:
        assert SchemaProjector.project(schema, value, schema) == value


def test_optionality_and_defaults() -> None:
    optional, required = Schema.OPTIONAL_INT32_SCHEMA, Schema.INT32_SCHEMA
    with_default = SchemaBuilder.int32().default_value(42).build()
    # optional -> optional, required -> anything: nulls stay null
    assert SchemaProjector.project(optional, None, optional) is None
    assert SchemaProjector.project(required, None, optional) is None
    assert SchemaProjector.project(required, 7, with_default) == 7
    # optional -> required with a default: null becomes the default, values are kept
    assert SchemaProjector.project(optional, None, with_default) == 42
    assert SchemaProjector.project(optional, 7, with_default) == 7
    # optional -> required without a default: always an error, even for a value
    for value in (None, 7):
        with pytest.raises(
            SchemaProjectorError,
            match=("^Writer schema is optional, however, target schema does not provide a default value.$"),
        ):
            SchemaProjector.project(optional, value, required)


def test_names_and_parameters_must_match_but_versions_and_docs_need_not() -> None:
    v1 = SchemaBuilder.string().name("com.example.Id").version(1).doc("one").build()
    v2 = SchemaBuilder.string().name("com.example.Id").version(2).doc("two").build()
    assert SchemaProjector.project(v1, "x", v2) == "x"

    other = SchemaBuilder.string().name("com.example.Other").build()
    with pytest.raises(
        SchemaProjectorError,
        match=("^Schema name mismatch. source name: com.example.Id and target name: com.example.Other$"),
    ):
        SchemaProjector.project(v1, "x", other)
    with pytest.raises(SchemaProjectorError, match="^Schema name mismatch. source name: None"):
        SchemaProjector.project(Schema.STRING_SCHEMA, "x", v1)

    with pytest.raises(
        SchemaProjectorError,
        match=(r"^Schema parameters not equal. source parameters: \{scale=2\} and target parameters: \{scale=3\}$"),
    ):
        SchemaProjector.project(Decimal.schema(2), decimal.Decimal("1.00"), Decimal.schema(3))


def test_logical_types_project_to_themselves() -> None:
    price = decimal.Decimal("-12.34")
    assert SchemaProjector.project(Decimal.schema(2), price, Decimal.builder(2).optional().build()) == price
    day = dt.date(2024, 2, 29)
    assert SchemaProjector.project(Date.SCHEMA, day, Date.SCHEMA) == day
    at = dt.datetime(2024, 1, 31, 13, 45, tzinfo=dt.UTC)
    assert SchemaProjector.project(Timestamp.SCHEMA, at, Timestamp.SCHEMA) == at
    with pytest.raises(SchemaProjectorError, match="^Schema name mismatch"):
        SchemaProjector.project(Schema.INT32_SCHEMA, 5, Date.SCHEMA)


V1 = (
    SchemaBuilder.struct()
    .name("com.example.User")
    .version(1)
    .field("id", Schema.INT32_SCHEMA)
    .field("name", Schema.STRING_SCHEMA)
    .field("dropped", Schema.OPTIONAL_STRING_SCHEMA)
    .field("score", Schema.OPTIONAL_FLOAT32_SCHEMA)
    .build()
)
V2 = (
    SchemaBuilder.struct()
    .name("com.example.User")
    .version(2)
    .field("id", Schema.INT64_SCHEMA)
    .field("name", Schema.STRING_SCHEMA)
    .field("email", Schema.OPTIONAL_STRING_SCHEMA)
    .field("active", SchemaBuilder.bool().default_value(True).build())
    .field("score", SchemaBuilder.float64().optional().build())
    .build()
)


def test_struct_projection_by_field_name() -> None:
    old = Struct(V1).put("id", 7).put("name", "ann").put("dropped", "gone").put("score", 1.5)
    new = SchemaProjector.project(V1, old, V2)
    assert isinstance(new, Struct) and new.schema == V2
    assert new.get("id") == 7
    assert new.get("name") == "ann"
    assert new.get_without_default("email") is None  # optional and missing: left null
    assert new.get_without_default("active") is True  # required and missing: its default
    assert new.get("score") == 1.5
    new.validate()


def test_struct_projection_errors_name_the_field() -> None:
    needs_age = SchemaBuilder.struct().name("com.example.User").field("age", Schema.INT32_SCHEMA).build()
    with pytest.raises(
        SchemaProjectorError,
        match=(r"^Required field `age` is missing from source schema: Schema\{com.example.User:STRUCT\}$"),
    ):
        SchemaProjector.project(V1, Struct(V1).put("id", 1).put("name", "x"), needs_age)

    id_as_string = SchemaBuilder.struct().name("com.example.User").field("id", Schema.STRING_SCHEMA).build()
    with pytest.raises(SchemaProjectorError, match="^Error projecting id$") as info:
        SchemaProjector.project(V1, Struct(V1).put("id", 1).put("name", "x"), id_as_string)
    assert isinstance(info.value.__cause__, SchemaProjectorError)
    assert str(info.value.__cause__).startswith("Schema type mismatch. source type: INT32")


def test_nested_structs_project_recursively() -> None:
    inner_v1 = SchemaBuilder.struct().name("Inner").field("n", Schema.OPTIONAL_INT16_SCHEMA).build()
    inner_v2 = (
        SchemaBuilder.struct()
        .name("Inner")
        .field("n", SchemaBuilder.int64().default_value(0).build())
        .field("added", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    outer_v1 = (
        SchemaBuilder.struct().field("inner", inner_v1).field("list", SchemaBuilder.array(inner_v1).build()).build()
    )
    outer_v2 = (
        SchemaBuilder.struct().field("inner", inner_v2).field("list", SchemaBuilder.array(inner_v2).build()).build()
    )
    value = (
        Struct(outer_v1)
        .put("inner", Struct(inner_v1))  # n is null: the target's default
        .put("list", [Struct(inner_v1).put("n", 5)])
    )
    projected = SchemaProjector.project(outer_v1, value, outer_v2)
    assert projected.get("inner").get_without_default("n") == 0
    assert projected.get("list")[0].get("n") == 5
    assert projected.get("list")[0].schema == inner_v2
    projected.validate()


def test_arrays_and_maps_project_their_elements() -> None:
    source = SchemaBuilder.array(Schema.INT8_SCHEMA).build()
    target = SchemaBuilder.array(Schema.INT64_SCHEMA).build()
    assert SchemaProjector.project(source, [1, 2, 3], target) == [1, 2, 3]

    source_map = SchemaBuilder.map(Schema.INT16_SCHEMA, Schema.OPTIONAL_INT32_SCHEMA).build()
    target_map = SchemaBuilder.map(Schema.INT32_SCHEMA, SchemaBuilder.float64().default_value(-1.0).build()).build()
    projected = SchemaProjector.project(source_map, {1: 10, 2: None}, target_map)
    assert projected == {1: 10.0, 2: -1.0}
    assert all(isinstance(v, float) for v in projected.values())

    with pytest.raises(SchemaProjectorError, match="^Schema type mismatch"):
        SchemaProjector.project(source, [1], SchemaBuilder.array(Schema.STRING_SCHEMA).build())


def test_schema_projector_error_is_a_data_error() -> None:
    from sluice.api import DataError

    assert issubclass(SchemaProjectorError, DataError)


def test_struct_typed_getters_check_the_field_type() -> None:
    from sluice.api import DataError

    schema = (
        SchemaBuilder.struct()
        .field("i", Schema.INT32_SCHEMA)
        .field("s", SchemaBuilder.string().optional().default_value("d").build())
        .field("b", Schema.BYTES_SCHEMA)
        .build()
    )
    value = Struct(schema).put("i", 3).put("b", b"x")
    assert value.get_int32("i") == 3
    assert value.get_string("s") is None  # typed getters do not apply defaults
    assert value.get("s") == "d"
    assert value.get_bytes("b") == b"x"
    with pytest.raises(DataError, match="^Field 'i' is not of type INT64$"):
        value.get_int64("i")
    with pytest.raises(DataError, match="^nope is not a valid field name$"):
        value.get_int32("nope")
