"""Avro → Connect, as Confluent's ``AvroData.toConnectSchema``/``toConnectData`` map them.

Avro (writer) schemas become Connect schemas, reading back Confluent's ``connect.*``
properties; Avro enums, fixed and unions (other than optional ones) read as strings,
bytes and ``io.confluent.connect.avro.Union`` structs (``connect_union_*`` with
``generalized.sum.type.support``). Raw datums decoded by
:class:`~sluice.formats.avro.codec.AvroCodec` become Connect values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from sluice._java.names import class_string
from sluice._java.numbers import narrow
from sluice.api.data import Date, Decimal, Field, Schema, SchemaBuilder, Struct, Time, Timestamp, Type
from sluice.api.errors import DataError
from sluice.formats.avro.codec import union_branch
from sluice.formats.avro.conventions import (
    ANYTHING_SCHEMA,
    AVRO_ENUM_DEFAULT_PREFIX_PROP,
    AVRO_ENUM_DOC_PREFIX_PROP,
    AVRO_FIELD_DEFAULT_FLAG_PROP,
    AVRO_FIELD_DOC_PREFIX_PROP,
    AVRO_LOGICAL_DATE,
    AVRO_LOGICAL_DECIMAL,
    AVRO_LOGICAL_TIME_MILLIS,
    AVRO_LOGICAL_TIMESTAMP_MILLIS,
    AVRO_LOGICAL_TYPE_PROP,
    AVRO_PROP,
    AVRO_RECORD_DOC_PROP,
    AVRO_TYPE_ANYTHING,
    AVRO_TYPE_ENUM,
    AVRO_TYPE_UNION,
    CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT,
    CONNECT_AVRO_DECIMAL_PRECISION_PROP,
    CONNECT_AVRO_FIXED_SIZE_PROP,
    CONNECT_DEFAULT_VALUE_PROP,
    CONNECT_DOC_PROP,
    CONNECT_INTERNAL_TYPE_NAME,
    CONNECT_NAME_PROP,
    CONNECT_PARAMETERS_PROP,
    CONNECT_TYPE_PROP,
    CONNECT_VERSION_PROP,
    DEFAULT_SCHEMA_FULL_NAME,
    GENERALIZED_TYPE_ENUM,
    GENERALIZED_TYPE_UNION,
    GENERALIZED_TYPE_UNION_FIELD_PREFIX,
    GENERALIZED_TYPE_UNION_PREFIX,
    KEY_FIELD,
    LOGICAL_NAMES,
    MAP_ENTRY_TYPE_NAME,
    NAMESPACE,
    VALUE_FIELD,
    AvroDataBase,
    is_union_schema,
)
from sluice.formats.avro.schema import NAMED, NO_DEFAULT, AvroType, json_text

__all__ = ["AvroToConnect"]


class _ToConnectContext:
    __slots__ = ("in_progress",)

    def __init__(self) -> None:
        self.in_progress: set[int] = set()


class _FieldDefault:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class AvroToConnect(AvroDataBase):
    """The Avro → Connect half of :class:`~sluice.formats.avro.data.AvroData`."""

    # ------------------------------------------------------------------ Avro -> Connect schema

    def to_connect_schema(self, avro: AvroType, version: int | None = None) -> Schema | None:
        """The Connect schema for an Avro (writer) schema; ``None`` for ``Anything``.

        ``version`` (the registry's version of the schema in its subject) becomes the
        schema's version unless the Avro schema carries ``connect.version``.
        """
        if _is_anything(avro):
            return None
        key = (id(avro), version)
        cached = self._to_cache.get_(key)
        if cached is not None and cached[0] is avro:
            return cached[1]
        result = self._to_connect(avro, False, None, None, version, _ToConnectContext())
        self._to_cache.put(key, (avro, result))
        return result

    def _to_connect(
        self,
        avro: AvroType,
        force_optional: bool,
        field_default: Any,
        doc_default: str | None,
        version: int | None,
        ctx: _ToConnectContext,
    ) -> Schema:
        connect_type = avro.str_prop(CONNECT_TYPE_PROP)
        logical = avro.str_prop(AVRO_LOGICAL_TYPE_PROP)
        logical_name: str | None = None  # set when the builder already has a name and version 1
        t = avro.type
        if t == "boolean":
            builder = SchemaBuilder.bool()
        elif t in ("bytes", "fixed"):
            if logical is not None and logical.lower() == AVRO_LOGICAL_DECIMAL:
                scale_node = avro.props.get("scale")
                scale = int(scale_node) if _is_number(scale_node) else 0
                builder = Decimal.builder(scale)
                logical_name = Decimal.LOGICAL_NAME
                precision_node = avro.props.get("precision")
                if precision_node is not None:
                    if not _is_number(precision_node):
                        raise DataError(
                            "precision property must be a JSON Integer. https://avro.apache.org/docs/1.9.1/spec.html#Decimal"
                        )
                    precision = int(precision_node)
                    if precision != CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT:
                        builder.parameter(CONNECT_AVRO_DECIMAL_PRECISION_PROP, str(precision))
            else:
                builder = SchemaBuilder.bytes()
            if t == "fixed":
                builder.parameter(CONNECT_AVRO_FIXED_SIZE_PROP, str(avro.size))
        elif t == "double":
            builder = SchemaBuilder.float64()
        elif t == "float":
            builder = SchemaBuilder.float32()
        elif t == "int":
            if connect_type is None and logical is None:
                builder = SchemaBuilder.int32()
            elif logical is not None:
                if logical.lower() == AVRO_LOGICAL_DATE:
                    builder, logical_name = Date.builder(), Date.LOGICAL_NAME
                elif logical.lower() == AVRO_LOGICAL_TIME_MILLIS:
                    builder, logical_name = Time.builder(), Time.LOGICAL_NAME
                else:
                    builder = SchemaBuilder.int32()
            elif connect_type == "int8":
                builder = SchemaBuilder.int8()
            elif connect_type == "int16":
                builder = SchemaBuilder.int16()
            else:
                raise DataError("Connect type annotation for Avro int field is null")
        elif t == "long":
            if logical is not None and logical.lower() == AVRO_LOGICAL_TIMESTAMP_MILLIS:
                builder, logical_name = Timestamp.builder(), Timestamp.LOGICAL_NAME
            else:
                builder = SchemaBuilder.int64()
        elif t == "string":
            builder = SchemaBuilder.string()
        elif t == "array":
            elem = avro.items
            assert elem is not None
            if _is_map_entry(elem):
                kf, vf = elem.field(KEY_FIELD), elem.field(VALUE_FIELD)
                if len(elem.fields or ()) != 2 or kf is None or vf is None:
                    raise DataError(
                        "Found map encoded as array of key-value pairs, "
                        "but array elements do not match the expected format."
                    )
                builder = SchemaBuilder.map(self._to_connect_top(kf.schema, ctx), self._to_connect_top(vf.schema, ctx))
            else:
                builder = SchemaBuilder.array(self._to_connect(elem, False, None, None, None, ctx))
        elif t == "map":
            builder = SchemaBuilder.map(
                Schema.STRING_SCHEMA,
                self._to_connect(avro.value_type(), False, None, None, None, ctx),
            )
        elif t == "record":
            if id(avro) in ctx.in_progress:
                raise DataError(f"Recursive Avro schemas are not supported: {avro.fullname} refers to itself")
            ctx.in_progress.add(id(avro))
            builder = SchemaBuilder.struct()
            if self.connect_meta_data and avro.doc is not None:
                builder.parameter(AVRO_RECORD_DOC_PROP, avro.doc)
            for f in avro.fields or ():
                if self.connect_meta_data and f.doc is not None:
                    builder.parameter(AVRO_FIELD_DOC_PREFIX_PROP + f.name, f.doc)
                fdefault = f.default if f.has_default else None
                field_schema = self._to_connect(
                    f.schema, False, _FieldDefault(fdefault) if f.has_default else None, f.doc, None, ctx
                )
                if self.connect_meta_data:
                    fparams = f.props.get(CONNECT_PARAMETERS_PROP)
                    if isinstance(fparams, Mapping):
                        field_schema = _apply_field_params(field_schema, fparams)
                builder.field(f.name, field_schema)
            ctx.in_progress.discard(id(avro))
        elif t == "enum":
            builder = SchemaBuilder.string()
            if self.connect_meta_data:
                if avro.doc is not None:
                    builder.parameter(AVRO_ENUM_DOC_PREFIX_PROP + avro.required_name(), avro.doc)
                if avro.enum_default is not None:
                    builder.parameter(AVRO_ENUM_DEFAULT_PREFIX_PROP + avro.required_name(), avro.enum_default)
            param = GENERALIZED_TYPE_ENUM if self.generalized else AVRO_TYPE_ENUM
            builder.parameter(param, avro.fullname)
            for i, symbol in enumerate(avro.symbols or ()):
                builder.parameter(f"{param}.{symbol}", str(i) if self.generalized else symbol)
        elif t == "union":
            branches = avro.branches or []
            if len(branches) == 1 and self.flatten_singleton_unions:
                return self._to_connect(branches[0], False, None, doc_default, None, ctx)
            if avro.is_optional_union:
                member = branches[1] if branches[0].type == "null" else branches[0]
                return self._to_connect(member, True, None, doc_default, None, ctx)
            if self.generalized:
                union_name = GENERALIZED_TYPE_UNION_PREFIX + str(self._union_index)
                self._union_index += 1
            else:
                union_name = AVRO_TYPE_UNION
            builder = SchemaBuilder.struct().name(union_name)
            if self.generalized:
                builder.parameter(GENERALIZED_TYPE_UNION, union_name)
            names: set[str] = set()
            for i, member in enumerate(branches):
                if member.type == "null":
                    builder.optional()
                    continue
                fname = self._union_member_name(member, i)
                if fname in names:
                    raise DataError("Multiple union schemas map to the Connect union field name")
                names.add(fname)
                builder.field(fname, self._to_connect(member, True, None, None, None, ctx))
            logical_name = union_name
        elif t == "null":
            raise DataError("Standalone null schemas are not supported by this converter")
        else:
            raise DataError(f"Couldn't translate unsupported schema type {t}.")

        doc = avro.str_prop(CONNECT_DOC_PROP)
        if self.connect_meta_data and doc is not None:
            builder.doc(doc)

        version_int = -1
        version_node = avro.props.get(CONNECT_VERSION_PROP)
        if version_node is not None:
            if not _is_number(version_node):
                raise DataError(f"Invalid Connect version found: {json_text(version_node)}")
            version_int = int(version_node)
        elif version is not None:
            version_int = int(version)
        if version_int >= 0:
            if logical_name in LOGICAL_NAMES:
                if version_int != 1:
                    raise DataError(
                        "Mismatched versions: version already added to SchemaBuilder (1) differs from "
                        f"version in source schema ({version_int})"
                    )
            else:
                builder.version(version_int)

        parameters = avro.props.get(CONNECT_PARAMETERS_PROP)
        if self.connect_meta_data and parameters is not None:
            if not isinstance(parameters, Mapping):
                raise DataError(f"Expected JSON object for schema parameters but found: {json_text(parameters)}")
            for k, v in parameters.items():
                if not isinstance(v, str):
                    raise DataError(f"Expected schema parameter values to be strings but found: {json_text(v)}")
                builder.parameter(k, v)
        for k, v in avro.props.items():
            if k.startswith(AVRO_PROP):
                builder.parameter(k, v if isinstance(v, str) else json_text(v))

        connect_default = avro.props.get(CONNECT_DEFAULT_VALUE_PROP, NO_DEFAULT)
        default_json: Any = NO_DEFAULT
        if field_default is None:
            default_json = connect_default
        else:
            default_json = field_default.value
            if self.connect_meta_data and connect_default is NO_DEFAULT:
                builder.parameter(AVRO_FIELD_DEFAULT_FLAG_PROP, "true")

        name_node = avro.props.get(CONNECT_NAME_PROP)
        name: str | None = None
        if name_node is not None:
            if not isinstance(name_node, str):
                raise DataError(f"Invalid schema name: {json_text(name_node)}")
            name = name_node
        elif t in ("record", "enum") or t == "fixed" and logical_name != Decimal.LOGICAL_NAME:
            name = avro.fullname
        if name is not None and not name.startswith(DEFAULT_SCHEMA_FULL_NAME):
            if logical_name is not None:
                if name != logical_name:
                    raise DataError(
                        f"Mismatched names: name already added to SchemaBuilder ({logical_name}) differs from "
                        f"name in source schema ({name})"
                    )
            else:
                builder.name(name)
        if force_optional:
            builder.optional()

        if default_json is not NO_DEFAULT and default_json is not None:
            try:
                default = self._default_from_avro(builder.build(), avro, default_json)
                if default is not None:
                    builder.default_value(default)
            except DataError:
                pass  # Confluent logs "Ignoring invalid default for schema"
        return builder.build()

    def _to_connect_top(self, avro: AvroType, ctx: _ToConnectContext) -> Schema:
        return self._to_connect(avro, False, None, None, None, ctx)

    def _union_member_name(self, member: AvroType, index: int) -> str:
        if self.generalized:
            return GENERALIZED_TYPE_UNION_FIELD_PREFIX + str(index)
        if member.type in NAMED:
            if self.enhanced:
                return member.fullname
            return self._split_name(member.required_name())[1]
        return member.type

    def _default_from_avro(self, schema: Schema, avro: AvroType, value: Any) -> Any:
        result = self._default_from_avro_raw(schema, avro, value)
        if result is None or schema.name not in LOGICAL_NAMES:
            return result
        return _to_connect_logical(schema, result)

    def _default_from_avro_raw(self, schema: Schema, avro: AvroType, value: Any) -> Any:
        if value is None:
            return None
        t = avro.type
        try:
            if t == "int":
                if schema.type is Type.INT8:
                    return narrow(_json_int(value), 8)
                if schema.type is Type.INT16:
                    return narrow(_json_int(value), 16)
                if schema.type is Type.INT32:
                    return narrow(_json_int(value), 32)
                return None
            if t == "long":
                return narrow(_json_int(value), 64)
            if t in ("float", "double"):
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    return 0.0
                return float(value)
            if t == "boolean":
                return value is True or (isinstance(value, str) and value.strip().lower() == "true")
            if t == "null":
                return None
            if t in ("string", "enum"):
                return value if isinstance(value, str) else json_text(value)
            if t in ("bytes", "fixed"):
                if isinstance(value, str):
                    return value.encode("latin-1")
                return None
            if t == "array":
                if not isinstance(value, list):
                    raise DataError("Invalid JSON for array default value")
                return [self._default_from_avro(schema.value_schema(), avro.element_type(), e) for e in value]
            if t == "map":
                if not isinstance(value, Mapping):
                    raise DataError("Invalid JSON for map default value")
                return {
                    k: self._default_from_avro(schema.value_schema(), avro.value_type(), e) for k, e in value.items()
                }
            if t == "record":
                if not isinstance(value, Mapping):
                    raise DataError("Invalid JSON for record default value")
                result = Struct(schema)
                for af in avro.fields or ():
                    field = schema.field(af.name)
                    if field is None:
                        raise DataError(f"{af.name} is not a valid field name")
                    if af.name in value:
                        converted = self._default_from_avro(field.schema, af.schema, value[af.name])
                    else:
                        converted = field.schema.default_value
                    result.put(field, converted)
                return result
            if t == "union":
                first = (avro.branches or [AvroType("null")])[0]
                if first.type == "null":
                    return None
                member_field = schema.field(self._union_member_name(first, 0))
                if member_field is None:
                    raise DataError("Union default does not match the first branch")
                return self._default_from_avro(member_field.schema, first, value)
        except (TypeError, ValueError, UnicodeEncodeError) as exc:
            raise DataError(f"Invalid default value: {exc}") from exc
        return None

    # ------------------------------------------------------------------ Avro -> Connect data

    def to_connect_data(self, schema: Schema | None, avro: AvroType, raw: Any) -> Any:
        """The Connect value for a raw decoded datum of ``avro`` (as :class:`AvroCodec` returns)."""
        return self._to_value(schema, avro, raw)

    def _to_value(self, schema: Schema | None, avro: AvroType, raw: Any) -> Any:
        if schema is None:
            return self._schemaless_value(raw)
        if avro.type == "union":
            index, raw = union_branch(avro, raw)
            if raw is None:
                if not schema.optional:
                    raise DataError("Found null value for non-optional schema")
                return None
            branch = avro.branch(index)
            if is_union_schema(schema):
                member = schema.fields()[index - _nulls_before(avro, index)]
                union_value = Struct(schema)
                union_value.put(member, self._to_value(member.schema, branch, raw))
                return union_value
            return self._to_value(schema, branch, raw)
        if raw is None:
            if not schema.optional:
                raise DataError("Found null value for non-optional schema")
            return None
        t = schema.type
        if t is Type.INT8:
            value: Any = narrow(raw, 8)
        elif t is Type.INT16:
            value = narrow(raw, 16)
        elif t is Type.ARRAY:
            vs, items = schema.value_schema(), avro.element_type()
            value = [self._to_value(vs, items, e) for e in raw]
        elif t is Type.MAP:
            ks, vs = schema.key_schema(), schema.value_schema()
            if avro.type == "map":
                values = avro.value_type()
                value = {k: self._to_value(vs, values, v) for k, v in raw.items()}
            else:
                entry = avro.element_type()
                ka = entry.field_type(KEY_FIELD)
                va = entry.field_type(VALUE_FIELD)
                value = {}
                for e in raw:
                    if isinstance(e, tuple):
                        e = e[1]
                    key = self._to_value(ks, ka, e[KEY_FIELD])
                    try:
                        value[key] = self._to_value(vs, va, e[VALUE_FIELD])
                    except TypeError as exc:
                        raise DataError(f"Map key {key!r} cannot be a Python dict key") from exc
        elif t is Type.STRUCT:
            if isinstance(raw, tuple):
                raw = raw[1]
            value = Struct(schema)
            for f in schema.fields():
                af = avro.field(self._scrub(f.name))
                if af is None:
                    raise DataError(f"No Avro field {f.name} in {avro.fullname}")
                _set_field(value, f, self._to_value(f.schema, af.schema, raw.get(af.name)))
        elif t is Type.BYTES:
            value = bytes(raw)
        else:
            value = raw
        if schema.name in LOGICAL_NAMES:
            return _to_connect_logical(schema, value)
        return value

    def _schemaless_value(self, raw: Any) -> Any:
        if raw is None:
            return None
        if isinstance(raw, tuple):
            raw = raw[1]
        if not isinstance(raw, Mapping):
            raise DataError("Invalid Avro data for schemaless Connect data")
        for key in ("boolean", "bytes", "double", "float", "int", "long", "string"):
            v = raw.get(key)
            if v is not None:
                return bytes(v) if key == "bytes" else v
        arr = raw.get("array")
        if arr is not None:
            return [self._schemaless_value(e) for e in arr]
        entries = raw.get("map")
        if entries is not None:
            result: dict[Any, Any] = {}
            for e in entries:
                if isinstance(e, tuple):
                    e = e[1]
                key = self._schemaless_value(e[KEY_FIELD])
                try:
                    result[key] = self._schemaless_value(e[VALUE_FIELD])
                except TypeError as exc:
                    raise DataError(f"Map key {key!r} cannot be a Python dict key") from exc
            return result
        return None


def _is_map_entry(avro: AvroType) -> bool:
    if avro.type != "record":
        return False
    if avro.namespace == NAMESPACE and avro.name == MAP_ENTRY_TYPE_NAME:
        return True
    return avro.props.get(CONNECT_INTERNAL_TYPE_NAME) == MAP_ENTRY_TYPE_NAME


def _is_anything(avro: AvroType) -> bool:
    return avro is ANYTHING_SCHEMA or (avro.type == "record" and avro.fullname == AVRO_TYPE_ANYTHING)


def _nulls_before(union: AvroType, index: int) -> int:
    return sum(1 for b in (union.branches or [])[:index] if b.type == "null")


def _apply_field_params(original: Schema, field_params: Mapping[str, Any]) -> Schema:
    existing = original.parameters or {}
    if all(str(v) == existing.get(str(k)) for k, v in field_params.items()):
        return original
    params = dict(existing)
    params.update({str(k): str(v) for k, v in field_params.items()})
    return Schema(
        original.type,
        optional=original.optional,
        default_value=original.default_value,
        name=original.name,
        version=original.version,
        doc=original.doc,
        parameters=params,
        fields=original.fields() if original.type is Type.STRUCT else None,
        key_schema=original.key_schema() if original.type is Type.MAP else None,
        value_schema=original.value_schema() if original.type in (Type.MAP, Type.ARRAY) else None,
    )


def _to_connect_logical(schema: Schema, value: Any) -> Any:
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        if not isinstance(value, (bytes, bytearray)):
            raise DataError(
                f"Invalid type for Decimal, underlying representation should be bytes but was {class_string(value)}"
            )
        return Decimal.to_logical(schema, bytes(value))
    if name == Date.LOGICAL_NAME:
        if not isinstance(value, int) or isinstance(value, bool):
            raise DataError(
                f"Invalid type for Date, underlying representation should be int32 but was {class_string(value)}"
            )
        return Date.to_logical(schema, value)
    if name == Time.LOGICAL_NAME:
        if not isinstance(value, int) or isinstance(value, bool):
            raise DataError(
                f"Invalid type for Time, underlying representation should be int32 but was {class_string(value)}"
            )
        return Time.to_logical(schema, value)
    if name == Timestamp.LOGICAL_NAME:
        if not isinstance(value, int) or isinstance(value, bool):
            raise DataError(
                f"Invalid type for Timestamp, underlying representation should be int64 but was {class_string(value)}"
            )
        return Timestamp.to_logical(schema, value)
    return value


def _set_field(struct: Struct, field: Field, value: Any) -> None:
    """``struct.put(field, value)`` for a value converted for the field's own schema.

    Decoded values fit their schema by construction, so the per-value validation of
    ``Struct.put`` (a third of the decoding time) is skipped when Struct's storage is the
    expected one.
    """
    if value is not None or field.schema.optional or field.schema.default_value is not None:
        values = getattr(struct, "_values", None)
        if isinstance(values, list) and len(values) > field.index:
            values[field.index] = value
            return
    struct.put(field, value)


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _json_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return int(value)
