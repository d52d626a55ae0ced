"""Connect → Avro, as Confluent's ``AvroData.fromConnectSchema``/``fromConnectData`` map them.

Connect schemas become Avro schemas with Confluent's conventions: ``connect.name``/
``connect.version``/``connect.doc``/``connect.parameters``/``connect.default``/
``connect.type`` properties, optional = union with null (``null`` first unless there is a
default), ``io.confluent.connect.avro.ConnectDefault`` names for unnamed structs,
non-string-key maps as arrays of ``MapEntry`` records, Decimal as bytes with
``logicalType: decimal``, Date/Time/Timestamp logical types. Connect values become "raw"
Avro datums (plain Python values laid out for the schema, as
:class:`~sluice.formats.avro.codec.AvroCodec` writes them); schemaless values go through
the ``io.confluent.connect.avro.Anything`` record.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from collections.abc import Mapping
from typing import Any

from sluice._java.names import class_string
from sluice.api.data import Date, Decimal, Schema, Struct, Time, Timestamp, Type
from sluice.api.errors import DataError
from sluice.formats.avro.codec import union_datum
from sluice.formats.avro.compatibility import valid_default
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
    AVRO_TYPE_ENUM,
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
    DEFAULT_SCHEMA_NAME,
    GENERALIZED_TYPE_ENUM,
    KEY_FIELD,
    LOGICAL_NAMES,
    MAP_ENTRY_TYPE_NAME,
    NAMESPACE,
    VALUE_FIELD,
    AvroDataBase,
    is_union_schema,
)
from sluice.formats.avro.schema import F32, NAMED, NO_DEFAULT, AvroField, AvroType, check_name

__all__ = ["ConnectToAvro"]

_INT_RANGES = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}


class _FromConnectContext:
    __slots__ = ("schema_map", "seen_named", "name_index")

    def __init__(self) -> None:
        self.schema_map: dict[Schema, AvroType] = {}
        self.seen_named: set[str] = set()
        self.name_index = 0


class ConnectToAvro(AvroDataBase):
    """The Connect → Avro half of :class:`~sluice.formats.avro.data.AvroData`."""

    # ------------------------------------------------------------------ names

    def _scrub_full_name(self, full: str | None) -> str | None:
        if full is None or not self.scrub:
            return full
        ns, name = self._split_name(full)
        return name if ns is None else f"{ns}.{name}"

    def _name_or_default(self, ctx: _FromConnectContext, name: str | None) -> tuple[str | None, str]:
        if name is not None:
            ns, short = self._split_name(name)
        else:
            ctx.name_index += 1
            ns, short = NAMESPACE, DEFAULT_SCHEMA_NAME + (str(ctx.name_index) if ctx.name_index > 1 else "")
        check_name(short)
        return ns, short

    # ------------------------------------------------------------------ Connect -> Avro schema

    def from_connect_schema(self, schema: Schema | None) -> AvroType:
        """The Avro schema Confluent's converter writes for a Connect schema (cached)."""
        if schema is None:
            return ANYTHING_SCHEMA
        cached = self._from_cache.get_(schema)
        if cached is not None:
            return cached
        result = self._from_connect(schema, _FromConnectContext(), False)
        self._from_cache.put(schema, result)
        return result

    def _from_connect(self, schema: Schema, ctx: _FromConnectContext, ignore_optional: bool) -> AvroType:
        union = is_union_schema(schema)
        if not union and not schema.optional:
            cached = ctx.schema_map.get(schema)
            if cached is not None:
                return cached
        connect_type: str | None = None
        params = schema.parameters or {}
        t = schema.type
        if t is Type.INT8:
            connect_type, base = "int8", AvroType("int")
        elif t is Type.INT16:
            connect_type, base = "int16", AvroType("int")
        elif t is Type.INT32:
            base = AvroType("int")
        elif t is Type.INT64:
            base = AvroType("long")
        elif t is Type.FLOAT32:
            base = AvroType("float")
        elif t is Type.FLOAT64:
            base = AvroType("double")
        elif t is Type.BOOLEAN:
            base = AvroType("boolean")
        elif t is Type.STRING:
            enum_param = GENERALIZED_TYPE_ENUM if self.generalized else AVRO_TYPE_ENUM
            if (self.generalized or self.enhanced) and (GENERALIZED_TYPE_ENUM in params or AVRO_TYPE_ENUM in params):
                symbols = [k[len(enum_param) + 1 :] for k in params if k.startswith(enum_param + ".")]
                _, short = self._name_or_default(ctx, schema.name)
                enum_name = params.get(enum_param)
                if enum_name is None:
                    raise DataError(f"Enum schema without the {enum_param} parameter")
                ens, eshort = self._split_name(enum_name)
                for sym in symbols:
                    check_name(sym)
                base = AvroType(
                    "enum",
                    name=check_name(eshort),
                    namespace=ens,
                    doc=params.get(AVRO_ENUM_DOC_PREFIX_PROP + short),
                    symbols=symbols,
                    enum_default=params.get(AVRO_ENUM_DEFAULT_PREFIX_PROP + short),
                )
            else:
                base = AvroType("string")
        elif t is Type.BYTES:
            if _is_fixed_schema(schema):
                ns, short = self._name_or_default(ctx, schema.name)
                base = AvroType("fixed", name=short, namespace=ns, size=int(params[CONNECT_AVRO_FIXED_SIZE_PROP]))
            else:
                base = AvroType("bytes")
            if _eq_ignore_case(schema.name, Decimal.LOGICAL_NAME):
                base.props["scale"] = int(params[Decimal.SCALE_FIELD])
                base.props["precision"] = int(
                    params.get(CONNECT_AVRO_DECIMAL_PRECISION_PROP, CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT)
                )
        elif t is Type.ARRAY:
            base = AvroType("array", items=self._from_connect(schema.value_schema(), ctx, False))
        elif t is Type.MAP:
            key_schema = schema.key_schema()
            if key_schema.type is Type.STRING and (not key_schema.optional or self.allow_optional_map_keys):
                base = AvroType("map", values=self._from_connect(schema.value_schema(), ctx, False))
            else:
                if schema.name is None:
                    entry = AvroType("record", name=MAP_ENTRY_TYPE_NAME, namespace=NAMESPACE)
                else:
                    ns, short = self._name_or_default(ctx, schema.name)
                    entry = AvroType(
                        "record", {CONNECT_INTERNAL_TYPE_NAME: MAP_ENTRY_TYPE_NAME}, name=short, namespace=ns
                    )
                fields: list[AvroField] = []
                self._add_field(fields, KEY_FIELD, key_schema, None, ctx)
                self._add_field(fields, VALUE_FIELD, schema.value_schema(), None, ctx)
                entry.fields = fields
                base = AvroType("array", items=entry)
        elif t is Type.STRUCT:
            if union:
                branches = [AvroType("null")] if schema.optional else []
                for f in schema.fields():
                    branches.append(self._from_connect(_non_optional(f.schema), ctx, True))
                base = AvroType("union", branches=branches)
            elif schema.optional:
                base = AvroType(
                    "union", branches=[AvroType("null"), self._from_connect(_non_optional(schema), ctx, False)]
                )
            else:
                ns, short = self._name_or_default(ctx, schema.name)
                base = AvroType("record", name=short, namespace=ns, doc=params.get(AVRO_RECORD_DOC_PROP))
                fields = []
                for f in schema.fields():
                    self._add_field(
                        fields, self._scrub(f.name), f.schema, params.get(AVRO_FIELD_DOC_PREFIX_PROP + f.name), ctx
                    )
                seen: set[str] = set()
                for f2 in fields:
                    if f2.name in seen:
                        raise DataError(f"Duplicate field {f2.name} in record {base.fullname}")
                    seen.add(f2.name)
                base.fields = fields
        else:
            raise DataError(f"Unknown schema type: {t}")

        final = base
        if base.type != "union":
            props = base.props
            if self.connect_meta_data:
                if schema.doc is not None:
                    props[CONNECT_DOC_PROP] = schema.doc
                if schema.version is not None:
                    props[CONNECT_VERSION_PROP] = int(schema.version)
                if schema.parameters:
                    p = self._parameters_json(schema.parameters)
                    if p:
                        props[CONNECT_PARAMETERS_PROP] = p
                if schema.default_value is not None and AVRO_FIELD_DEFAULT_FLAG_PROP not in params:
                    props[CONNECT_DEFAULT_VALUE_PROP] = self._default_from_connect(schema, schema.default_value)
                if schema.name is not None:
                    props[CONNECT_NAME_PROP] = schema.name
                if connect_type is not None:
                    props[CONNECT_TYPE_PROP] = connect_type
            force_legacy_decimal = False
            name = schema.name
            if name is not None:
                if _eq_ignore_case(name, Decimal.LOGICAL_NAME):
                    precision = int(
                        params.get(CONNECT_AVRO_DECIMAL_PRECISION_PROP, CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT)
                    )
                    scale = int(params.get(Decimal.SCALE_FIELD, 0))
                    if scale < 0 or scale > precision:
                        force_legacy_decimal = True
                    else:
                        props.setdefault(AVRO_LOGICAL_TYPE_PROP, AVRO_LOGICAL_DECIMAL)
                        props.setdefault("precision", precision)
                        props.setdefault("scale", scale)
                elif _eq_ignore_case(name, Time.LOGICAL_NAME):
                    props.setdefault(AVRO_LOGICAL_TYPE_PROP, AVRO_LOGICAL_TIME_MILLIS)
                elif _eq_ignore_case(name, Timestamp.LOGICAL_NAME):
                    props.setdefault(AVRO_LOGICAL_TYPE_PROP, AVRO_LOGICAL_TIMESTAMP_MILLIS)
                elif _eq_ignore_case(name, Date.LOGICAL_NAME):
                    props.setdefault(AVRO_LOGICAL_TYPE_PROP, AVRO_LOGICAL_DATE)
                if _eq_ignore_case(name, Decimal.LOGICAL_NAME) and (
                    CONNECT_AVRO_DECIMAL_PRECISION_PROP in params or force_legacy_decimal
                ):
                    props.setdefault(AVRO_LOGICAL_TYPE_PROP, AVRO_LOGICAL_DECIMAL)
            for key, value in params.items():
                if key.startswith(AVRO_PROP):
                    props.setdefault(key, value)
            if not ignore_optional:
                final = self._maybe_optional(schema, base)
        if not schema.optional:
            ctx.schema_map[schema] = final
        return final

    @staticmethod
    def _maybe_optional(schema: Schema, base: AvroType) -> AvroType:
        if not schema.optional:
            return base
        if schema.default_value is not None:
            return AvroType("union", branches=[base, AvroType("null")])
        return AvroType("union", branches=[AvroType("null"), base])

    def _parameters_json(self, params: Mapping[str, str]) -> dict[str, str]:
        return {k: v for k, v in params.items() if k != AVRO_FIELD_DEFAULT_FLAG_PROP}

    def _add_field(
        self, fields: list[AvroField], name: str, fschema: Schema, doc: str | None, ctx: _FromConnectContext
    ) -> None:
        check_name(name)
        default: Any = NO_DEFAULT
        if fschema.default_value is not None:
            default = self._default_from_connect(fschema, fschema.default_value)
        elif fschema.optional:
            default = None
        scrubbed = self._scrub_full_name(fschema.name)
        already_seen = scrubbed is not None and scrubbed in ctx.seen_named
        if scrubbed is not None:
            ctx.seen_named.add(scrubbed)
        avro = self._from_connect(fschema, ctx, False)
        if default is not NO_DEFAULT and not valid_default(avro, default):
            default = NO_DEFAULT  # Confluent logs "Ignoring invalid default for field"
        field = AvroField(name, avro, doc, default)
        if self.connect_meta_data and already_seen and fschema.parameters and _is_named(avro):
            p = self._parameters_json(fschema.parameters)
            if p:
                field.props[CONNECT_PARAMETERS_PROP] = p
        fields.append(field)

    def _default_from_connect(self, schema: Schema, value: Any) -> Any:
        """A Connect default value as the JSON Confluent writes (``connect.default`` / field default)."""
        if value is None:
            return None
        try:
            v = _to_avro_logical(schema, value)
            t = schema.type
            if t in _INT_RANGES:
                if not isinstance(v, int) or isinstance(v, bool):
                    raise TypeError
                return int(v)
            if t is Type.FLOAT32:
                return F32(_check_float(v))
            if t is Type.FLOAT64:
                return float(_check_float(v))
            if t is Type.BOOLEAN:
                if not isinstance(v, bool):
                    raise TypeError
                return v
            if t is Type.STRING:
                if not isinstance(v, str):
                    raise TypeError
                return v
            if t is Type.BYTES:
                return bytes(v).decode("latin-1")
            if t is Type.ARRAY:
                return [self._default_from_connect(schema.value_schema(), e) for e in v]
            if t is Type.MAP:
                ks = schema.key_schema()
                if ks.type is Type.STRING and (not ks.optional or self.allow_optional_map_keys):
                    return {k: self._default_from_connect(schema.value_schema(), e) for k, e in v.items()}
                return [
                    [self._default_from_connect(ks, k), self._default_from_connect(schema.value_schema(), e)]
                    for k, e in v.items()
                ]
            if t is Type.STRUCT:
                if not isinstance(v, Struct):
                    raise TypeError
                node: dict[str, Any] = {}
                for f in schema.fields():
                    fd = self._default_from_connect(f.schema, v.get(f.name))
                    if is_union_schema(schema):
                        return fd
                    node[self._scrub(f.name)] = fd
                return node
        except (TypeError, AttributeError, ValueError) as exc:
            raise DataError(
                f"Invalid type used for default value of {schema.type.name} field: {class_string(schema.default_value)}"
            ) from exc
        raise DataError(f"Unknown schema type:{schema.type}")

    # ------------------------------------------------------------------ Connect -> Avro data

    def from_connect_data(self, schema: Schema | None, avro: AvroType, value: Any) -> Any:
        """The raw Avro datum for a Connect value (``None`` for a null top-level value)."""
        return self._to_raw(schema, avro, value, False)

    def _to_raw(self, schema: Schema | None, avro: AvroType, value: Any, container_null: bool) -> Any:
        if schema is None:
            return self._schemaless_to_raw(value, container_null)
        if value is None:
            if not schema.optional:
                raise DataError("Found null value for non-optional schema")
            return None
        target = avro
        if avro.type == "union" and not is_union_schema(schema):
            index = _optional_branch(avro)
            return union_datum(avro, index, self._to_raw_typed(schema, avro.branch(index), value))
        return self._to_raw_typed(schema, target, value)

    def _to_raw_typed(self, schema: Schema, avro: AvroType, value: Any) -> Any:
        name = schema.name
        if name is not None and name in LOGICAL_NAMES:
            value = _to_avro_logical(schema, value)
        t = schema.type
        if t in _INT_RANGES:
            if not isinstance(value, int) or isinstance(value, bool):
                raise DataError(f"Invalid type for {t.name}: {class_string(value)}")
            lo, hi = _INT_RANGES[t]
            if not lo <= value <= hi:
                raise DataError(f"Invalid value for {t.name}: {value} is out of range")
            return value
        if t is Type.FLOAT32 or t is Type.FLOAT64:
            if not isinstance(value, (float, int)) or isinstance(value, bool):
                raise DataError(f"Invalid type for {t.name}: {class_string(value)}")
            return float(value)
        if t is Type.BOOLEAN:
            if not isinstance(value, bool):
                raise DataError(f"Invalid type for {t.name}: {class_string(value)}")
            return value
        if t is Type.STRING:
            if not isinstance(value, str):
                raise DataError(f"Invalid type for {t.name}: {class_string(value)}")
            if avro.type == "enum" and value not in (avro.symbols or ()):
                raise DataError(f"Invalid enum symbol {value!r} for {avro.fullname}")
            return value
        if t is Type.BYTES:
            if not isinstance(value, (bytes, bytearray, memoryview)):
                raise DataError(f"Invalid type for {t.name}: {class_string(value)}")
            data = bytes(value)
            if avro.type == "fixed":
                size = avro.size or 0
                if name is not None and _eq_ignore_case(name, Decimal.LOGICAL_NAME) and len(data) < size:
                    data = (b"\xff" if data and data[0] & 0x80 else b"\x00") * (size - len(data)) + data
                if len(data) != size:
                    raise DataError(f"Fixed size {size} does not match the value's {len(data)} bytes")
            return data
        if t is Type.ARRAY:
            if not isinstance(value, (list, tuple)):
                raise DataError(f"Invalid type for {t.name}: {class_string(value)}")
            vs = schema.value_schema()
            items = avro.element_type()
            return [self._to_raw(vs, items, v, True) for v in value]
        if t is Type.MAP:
            if not isinstance(value, Mapping):
                raise DataError(f"Invalid type for {t.name}: {class_string(value)}")
            ks, vs = schema.key_schema(), schema.value_schema()
            if avro.type == "map":
                values = avro.value_type()
                out: dict[str, Any] = {}
                for k, v in value.items():
                    if not isinstance(k, str):
                        raise DataError(f"Invalid type for STRING: {class_string(k)}")
                    out[k] = self._to_raw(vs, values, v, True)
                return out
            entry = avro.element_type()
            key_avro = entry.field_type(KEY_FIELD)
            value_avro = entry.field_type(VALUE_FIELD)
            return [
                {KEY_FIELD: self._to_raw(ks, key_avro, k, True), VALUE_FIELD: self._to_raw(vs, value_avro, v, True)}
                for k, v in value.items()
            ]
        if t is Type.STRUCT:
            if not isinstance(value, Struct) or not _struct_schema_matches(value.schema, schema):
                raise DataError("Mismatching struct schema")
            if is_union_schema(schema):
                offset = 1 if avro.branches and avro.branches[0].type == "null" else 0
                for i, f in enumerate(schema.fields()):
                    member = value.get_without_default(f.name) if self.ignore_default_for_nullables else value.get(f)
                    if member is not None:
                        branch = avro.branch(i + offset)
                        return union_datum(avro, i + offset, self._to_raw_typed(f.schema, branch, member))
                if not schema.optional:
                    raise DataError("Found null value for non-optional schema")
                return None
            record: dict[str, Any] = {}
            for f in schema.fields():
                fname = self._scrub(f.name)
                afield = avro.field(fname)
                if afield is None:
                    raise DataError(f"No Avro field {fname} in {avro.fullname}")
                member = value.get_without_default(f.name) if self.ignore_default_for_nullables else value.get(f)
                record[fname] = self._to_raw(f.schema, afield.schema, member, True)
            return record
        raise DataError(f"Unknown schema type: {t}")

    def _schemaless_to_raw(self, value: Any, container_null: bool) -> Any:
        if value is None:
            return _empty_anything() if container_null else None
        if isinstance(value, bool):
            return _anything_with("boolean", value)
        if isinstance(value, int):
            if not -(2**63) <= value < 2**63:
                raise DataError(f"Schemaless integer {value} does not fit in 64 bits")
            return _anything_with("long", value)
        if isinstance(value, float):
            return _anything_with("double", value)
        if isinstance(value, str):
            return _anything_with("string", value)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return _anything_with("bytes", bytes(value))
        if isinstance(value, (list, tuple)):
            return _anything_with("array", [self._schemaless_to_raw(v, True) for v in value])
        if isinstance(value, Mapping):
            return _anything_with(
                "map",
                [
                    {KEY_FIELD: self._schemaless_to_raw(k, True), VALUE_FIELD: self._schemaless_to_raw(v, True)}
                    for k, v in value.items()
                ],
            )
        raise DataError(f"Unknown Java type for schemaless data: {class_string(value)}")


def _eq_ignore_case(a: str | None, b: str) -> bool:
    return a is not None and a.lower() == b.lower()


def _is_fixed_schema(schema: Schema) -> bool:
    return (
        schema.type is Type.BYTES
        and schema.name is not None
        and schema.parameters is not None
        and CONNECT_AVRO_FIXED_SIZE_PROP in schema.parameters
    )


def _is_named(avro: AvroType) -> bool:
    if avro.type in NAMED:
        return True
    return avro.type == "union" and any(b.type in NAMED for b in avro.branches or ())


def _non_optional(schema: Schema) -> Schema:
    if not schema.optional:
        return schema
    return Schema(
        schema.type,
        optional=False,
        default_value=schema.default_value,
        name=schema.name,
        version=schema.version,
        doc=schema.doc,
        parameters=schema.parameters,
        fields=schema.fields() if schema.type is Type.STRUCT else None,
        key_schema=schema.key_schema() if schema.type is Type.MAP else None,
        value_schema=schema.value_schema() if schema.type in (Type.MAP, Type.ARRAY) else None,
    )


def _struct_schema_matches(actual: Schema, expected: Schema) -> bool:
    if actual is expected or actual == expected:
        return True
    # A struct default built before its schema got the default itself (see JsonConverter).
    return actual.type is Type.STRUCT and actual.name == expected.name and actual.fields() == expected.fields()


def _optional_branch(union: AvroType) -> int:
    for i, b in enumerate(union.branches or ()):
        if b.type != "null":
            return i
    raise DataError("An optional schema should have an Avro Union type with a non-null branch")


def _to_avro_logical(schema: Schema, value: Any) -> Any:
    name = schema.name
    if value is None or name is None:
        return value
    if name == Decimal.LOGICAL_NAME:
        if not isinstance(value, _decimal.Decimal):
            raise DataError(f"Invalid type for Decimal, expected BigDecimal but was {class_string(value)}")
        return Decimal.from_logical(schema, value)
    if name == Date.LOGICAL_NAME:
        if not isinstance(value, _dt.date):
            raise DataError(f"Invalid type for Date, expected Date but was {class_string(value)}")
        return Date.from_logical(schema, value)
    if name == Time.LOGICAL_NAME:
        if not isinstance(value, (_dt.time, _dt.datetime)):
            raise DataError(f"Invalid type for Time, expected Date but was {class_string(value)}")
        return Time.from_logical(schema, value)
    if name == Timestamp.LOGICAL_NAME:
        if not isinstance(value, (_dt.datetime, _dt.date)):
            raise DataError(f"Invalid type for Timestamp, expected Date but was {class_string(value)}")
        return Timestamp.from_logical(schema, value)
    return value


def _empty_anything() -> dict[str, Any]:
    return {f.name: None for f in ANYTHING_SCHEMA.fields or ()}


def _anything_with(key: str, value: Any) -> dict[str, Any]:
    record = _empty_anything()
    record[key] = value
    return record


def _check_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError
    return float(value)
