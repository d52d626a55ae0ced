"""Connect values ⇄ JSON, as Kafka's ``JsonConverter`` (connect-json) maps them, byte for byte.

:class:`JsonData` writes a Connect value with its schema (or none) as JSON text
(:meth:`~JsonData.to_json`) and reads a parsed JSON node back into a Connect value
(:meth:`~JsonData.to_connect`, or a conversion compiled once per schema with
:meth:`~JsonData.compile`). The JSON converter wraps this in its envelope; the storage
sinks write their JSON files with it.

Values are written as Kafka's Jackson-based converter writes them (see
:mod:`sluice.formats.json_nodes`): compact, doubles and floats as Java prints them,
bytes as base64, Decimal as base64 bytes or (``decimal_numeric``) a number, Date/Time/
Timestamp as integers. Reading follows Kafka's parser, which reads every number as a
``BigDecimal``. Python values for the logical types: :class:`decimal.Decimal`,
:class:`datetime.date`, :class:`datetime.time` and :class:`datetime.datetime`
(timezone-aware, UTC).

The per-type writers and readers are module functions in dispatch tables keyed by the
schema's type (a dict lookup and a call per value); they take the :class:`JsonData`
whose settings apply.
"""

from __future__ import annotations

import binascii
import datetime as _dt
import decimal
import json
from collections.abc import Callable
from typing import Any

from sluice._java.names import class_string
from sluice._java.numbers import narrow
from sluice.api.data import Date, Decimal, Schema, Struct, Time, Timestamp, Type, java_string, schema_type_of
from sluice.api.errors import DataError
from sluice.formats.json_nodes import (
    LONE_SURROGATE,
    MISSING,
    base64_decode,
    base64_text,
    double_text,
    float_text,
    is_int32,
    is_number,
    java_double,
    java_float,
    java_int,
    java_long,
    node_type,
    quote_string,
)

__all__ = ["DESERIALIZE_ERROR", "JsonData"]

DESERIALIZE_ERROR = "Converting byte[] to Kafka Connect data failed due to serialization error: "
"""Kafka's JsonConverter's message for JSON it cannot read, and (Jackson refusing an object
key with an unpaired surrogate) for a field name it cannot write."""


# -- logical types ----------------------------------------------------------------------


def _decimal_to_json(data: JsonData, schema: Schema, value: Any) -> str:
    if not isinstance(value, decimal.Decimal):
        raise DataError(f"Invalid type for Decimal, expected BigDecimal but was {class_string(value)}")
    if data.decimal_numeric:
        if not value.is_finite():
            raise DataError(f"Decimal value {value} is not finite")
        return java_string(value)
    return base64_text(Decimal.from_logical(schema, value))


def _decimal_to_connect(schema: Schema, node: Any) -> Any:
    if is_number(node):
        if isinstance(node, decimal.Decimal):
            result = node
        elif isinstance(node, int):
            result = decimal.Decimal(node)
        else:
            result = decimal.Decimal(repr(node))
        return result.copy_abs() if result.is_zero() else result  # BigDecimal has no -0
    if isinstance(node, str):
        try:
            return Decimal.to_logical(schema, base64_decode(node))
        except Exception as e:
            raise DataError("Invalid bytes for Decimal field") from e
    raise DataError(
        f"Invalid type for Decimal, underlying representation should be numeric or bytes but was {node_type(node)}"
    )


def _date_to_json(data: JsonData, schema: Schema, value: Any) -> str:
    if not isinstance(value, _dt.date):
        raise DataError(f"Invalid type for Date, expected Date but was {class_string(value)}")
    return str(Date.from_logical(schema, value))


def _date_to_connect(schema: Schema, node: Any) -> Any:
    if not is_int32(node):
        raise DataError(f"Invalid type for Date, underlying representation should be integer but was {node_type(node)}")
    return Date.to_logical(schema, node)


def _time_to_json(data: JsonData, schema: Schema, value: Any) -> str:
    if not isinstance(value, (_dt.time, _dt.datetime)):
        raise DataError(f"Invalid type for Time, expected Date but was {class_string(value)}")
    return str(Time.from_logical(schema, value))


def _time_to_connect(schema: Schema, node: Any) -> Any:
    if not is_int32(node):
        raise DataError(f"Invalid type for Time, underlying representation should be integer but was {node_type(node)}")
    return Time.to_logical(schema, node)


def _timestamp_to_json(data: JsonData, schema: Schema, value: Any) -> str:
    if not isinstance(value, _dt.date):
        raise DataError(f"Invalid type for Timestamp, expected Date but was {class_string(value)}")
    return str(Timestamp.from_logical(schema, value))


def _timestamp_to_connect(schema: Schema, node: Any) -> Any:
    if type(node) is not int:
        raise DataError(
            f"Invalid type for Timestamp, underlying representation should be integral but was {node_type(node)}"
        )
    return Timestamp.to_logical(schema, narrow(node, 64))


_LOGICAL_TO_JSON: dict[str, Callable[[JsonData, Schema, Any], str]] = {
    Decimal.LOGICAL_NAME: _decimal_to_json,
    Date.LOGICAL_NAME: _date_to_json,
    Time.LOGICAL_NAME: _time_to_json,
    Timestamp.LOGICAL_NAME: _timestamp_to_json,
}
_LOGICAL_TO_CONNECT: dict[str, Callable[[Schema, Any], Any]] = {
    Decimal.LOGICAL_NAME: _decimal_to_connect,
    Date.LOGICAL_NAME: _date_to_connect,
    Time.LOGICAL_NAME: _time_to_connect,
    Timestamp.LOGICAL_NAME: _timestamp_to_connect,
}

_INT_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}


class JsonData:
    """Connect values ⇄ JSON text and nodes, with one set of JsonConverter settings:
    ``decimal.format`` NUMERIC (``decimal_numeric``), ``replace.null.with.default`` and
    ``schemas.cache.size`` (``cache_size``, the bound of each per-schema cache)."""

    def __init__(
        self, *, decimal_numeric: bool = False, replace_null_with_default: bool = True, cache_size: int = 1000
    ) -> None:
        self.decimal_numeric = decimal_numeric
        self.replace_null = replace_null_with_default
        self.cache_size = cache_size
        self._field_cache: dict[Schema, list[tuple[Any, str]]] = {}

    def cache_put(self, cache: dict, key: Any, value: Any) -> None:
        """Remember ``value`` in a per-schema cache, forgetting the oldest entry when full."""
        if self.cache_size <= 0:
            return
        if len(cache) >= self.cache_size:
            del cache[next(iter(cache))]
        cache[key] = value

    # -- Connect -> JSON ------------------------------------------------------------

    def to_json(self, schema: Schema | None, value: Any) -> str:
        """``value`` as JSON text; ``schema`` ``None`` for a schemaless value (its type is
        inferred from the Python value)."""
        if value is None:
            if schema is None:
                return "null"
            if schema.default_value is not None and self.replace_null:
                return self.to_json(schema, schema.default_value)
            if schema.optional:
                return "null"
            raise DataError("Conversion error: null value for field that is required and has no default value")
        if schema is not None:
            if schema.name is not None:
                logical = _LOGICAL_TO_JSON.get(schema.name)
                if logical is not None:
                    return logical(self, schema, value)
            t = schema.type
            if t is Type.STRING:  # the hot path
                if type(value) is str:
                    return quote_string(value)
                raise DataError(f"Invalid type for STRING: {class_string(value)}")
        else:
            t = _infer_type(value)
        return _TO_JSON[t](self, schema, value)

    def struct_fields(self, schema: Schema) -> list[tuple[Any, str]]:
        """A struct schema's fields, each with its ``"name":`` as written (cached)."""
        cached = self._field_cache.get(schema)
        if cached is None:
            if any(LONE_SURROGATE.search(f.name) for f in schema.fields()):
                raise DataError(DESERIALIZE_ERROR)
            cached = [(f, quote_string(f.name) + ":") for f in schema.fields()]
            self.cache_put(self._field_cache, schema, cached)
        return cached

    # -- JSON -> Connect ------------------------------------------------------------

    def to_connect(self, schema: Schema | None, node: Any) -> Any:
        """The Connect value of a parsed JSON node (:data:`~sluice.formats.json_nodes.MISSING`
        for empty input); ``schema`` ``None`` for schemaless data."""
        if schema is not None:
            if node is None or node is MISSING:
                if schema.default_value is not None and self.replace_null:
                    return schema.default_value
                if schema.optional:
                    return None
                raise DataError(f"Invalid null value for required {schema.type.name} field")
            if schema.name is not None:
                logical = _LOGICAL_TO_CONNECT.get(schema.name)
                if logical is not None:
                    return logical(schema, node)
            return _TO_CONNECT[schema.type](self, schema, node)
        # schemaless: infer from the JSON node
        if node is None or node is MISSING:
            return None
        tp = type(node)
        if tp is str or tp is bool:
            return node
        if tp is int:
            return narrow(node, 64)
        if tp is float or tp is decimal.Decimal:
            return float(node) or 0.0  # Kafka reads numbers as BigDecimal: no -0.0
        if tp is list:
            return [self.to_connect(None, e) for e in node]
        return {k: self.to_connect(None, v) for k, v in node.items()}

    # The per-schema fast path: ``compile(schema)(node) == to_connect(schema, node)``,
    # with the type dispatch done once per schema instead of once per value, and struct
    # fields checked only where the conversion alone does not guarantee a fitting value.

    def compile(self, schema: Schema) -> Callable[[Any], Any]:
        """:meth:`to_connect` for one schema, as a function of the node."""
        convert = self._compile_present(schema)
        default = schema.default_value if self.replace_null else None
        optional = schema.optional
        null_error = f"Invalid null value for required {schema.type.name} field"

        def from_node(node: Any) -> Any:
            if node is None or node is MISSING:
                if default is not None:
                    return default
                if optional:
                    return None
                raise DataError(null_error)
            return convert(node)

        return from_node

    def _compile_present(self, schema: Schema) -> Callable[[Any], Any]:
        """The conversion of a node that is neither null nor missing."""
        logical = _LOGICAL_TO_CONNECT.get(schema.name) if schema.name is not None else None
        if logical is not None:
            if schema.name == Timestamp.LOGICAL_NAME:

                def timestamp(node: Any) -> Any:
                    if type(node) is int and _LONG_MIN <= node <= _LONG_MAX:
                        return _UTC_EPOCH + _dt.timedelta(milliseconds=node)  # Timestamp.to_logical
                    return logical(schema, node)

                return timestamp
            return lambda node: logical(schema, node)
        direct = _DIRECT_TO_CONNECT.get(schema.type)
        if direct is not None:
            return direct
        if schema.type is Type.STRUCT:
            return self._compile_struct(schema)
        generic = _TO_CONNECT[schema.type]
        return lambda node: generic(self, schema, node)

    def _compile_struct(self, schema: Schema) -> Callable[[Any], Any]:
        plan = []
        for index, f in enumerate(schema.fields()):
            if f.index != index:  # not in field order: keep the generic path
                return lambda node: _struct_to_connect(self, schema, node)
            fs = f.schema
            # Arrays and maps may hold null elements a required element schema refuses
            # (other conversions give a value of the schema's type, or null, or raise).
            check = fs.type in (Type.ARRAY, Type.MAP)
            plan.append((f.name, self.compile(fs), fs, f, check))
        # One function per struct schema, its fields unrolled: values that already have the
        # field's type pass as they are, the rest go through the field's conversion.
        namespace: dict[str, Any] = {
            "DataError": DataError,
            "node_type": node_type,
            "MISSING": MISSING,
            "validate": Schema.validate_value,
            "from_converted": Struct.from_converted,
            "schema": schema,
        }
        lines = [
            "def build(node):",
            "    if type(node) is not dict and not isinstance(node, dict):",
            "        raise DataError('Structs should be encoded as JSON objects, but found ' + node_type(node))",
            "    get = node.get",
        ]
        for i, (name, convert, fs, f, check) in enumerate(plan):
            namespace.update({f"n{i}": name, f"c{i}": convert, f"s{i}": fs, f"f{i}": f})
            lines.append(f"    x = get(n{i}, MISSING)")
            same_type = None if fs.name is not None else _SAME_TYPE_TESTS.get(fs.type)
            if same_type is not None:
                lines.append(f"    v{i} = x if {same_type} else c{i}(x)")
            else:
                lines.append(f"    v{i} = c{i}(x)")
            lines.append(
                f"    validate(s{i}, v{i}, f{i})" if check else f"    if v{i} is None: validate(s{i}, None, f{i})"
            )
        lines.append(f"    return from_converted(schema, [{', '.join(f'v{i}' for i in range(len(plan)))}])")
        exec("\n".join(lines), namespace)  # built from indexes only; names are values
        return namespace["build"]


def _infer_type(value: Any) -> Type:
    inferred = schema_type_of(value)
    if inferred is None:
        raise DataError(f"Java class {class_string(value)} does not have corresponding schema type.")
    return inferred


# -- per-type writers and readers -------------------------------------------------------


def _bad_type(schema: Schema | None, value: Any) -> DataError:
    what = schema.type.name if schema is not None else "unknown schema"
    return DataError(f"Invalid type for {what}: {class_string(value)}")


def _int_to_json(data: JsonData, schema: Schema | None, value: Any) -> str:
    if type(value) is not int and (not isinstance(value, int) or isinstance(value, bool)):
        raise _bad_type(schema, value)
    if schema is not None:
        bits = _INT_BITS[schema.type]
        if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
            raise _bad_type(schema, value)
    return str(int(value))


def _float32_to_json(data: JsonData, schema: Schema | None, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (float, int)):
        raise _bad_type(schema, value)
    return float_text(float(value))


def _float64_to_json(data: JsonData, schema: Schema | None, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (float, int)):
        raise _bad_type(schema, value)
    return double_text(float(value))


def _bool_to_json(data: JsonData, schema: Schema | None, value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    raise _bad_type(schema, value)


def _string_to_json(data: JsonData, schema: Schema | None, value: Any) -> str:
    if not isinstance(value, str):
        raise _bad_type(schema, value)
    return quote_string(value)


def _bytes_to_json(data: JsonData, schema: Schema | None, value: Any) -> str:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise DataError(f"Invalid type for bytes type: {class_string(value)}")
    return base64_text(value)


def _array_to_json(data: JsonData, schema: Schema | None, value: Any) -> str:
    if not isinstance(value, (list, tuple)):
        raise _bad_type(schema, value)
    vs = schema.value_schema() if schema is not None else None
    return "[" + ",".join([data.to_json(vs, e) for e in value]) + "]"


def _map_key_text(data: JsonData, ks: Schema | None, key: Any) -> str:
    if isinstance(key, str):
        return key
    node = data.to_json(ks, key)  # JsonNode.asText() of the converted key
    if node.startswith('"'):
        return json.loads(node)
    if node[:1] in "[{":
        return ""
    return node


def _map_to_json(data: JsonData, schema: Schema | None, value: Any) -> str:
    if not isinstance(value, dict):
        raise _bad_type(schema, value)
    ks: Schema | None
    vs: Schema | None
    if schema is not None:
        ks, vs = schema.key_schema(), schema.value_schema()
        object_mode = ks is not None and ks.type is Type.STRING
    else:
        ks = vs = None
        object_mode = all(isinstance(k, str) for k in value)
    if object_mode:
        entries: dict[str, str] = {}
        for k, v in value.items():
            key = _map_key_text(data, ks, k)
            if not key.isascii() and LONE_SURROGATE.search(key):
                raise DataError(DESERIALIZE_ERROR)
            entries[key] = data.to_json(vs, v)
        return "{" + ",".join(quote_string(k) + ":" + v for k, v in entries.items()) + "}"
    return "[" + ",".join("[" + data.to_json(ks, k) + "," + data.to_json(vs, v) + "]" for k, v in value.items()) + "]"


def _struct_to_json(data: JsonData, schema: Schema | None, value: Any) -> str:
    if not isinstance(value, Struct) or schema is None or (value.schema is not schema and value.schema != schema):
        raise DataError("Mismatching schema.")
    to_json = data.to_json
    if data.replace_null:
        parts = [prefix + to_json(f.schema, value.get(f)) for f, prefix in data.struct_fields(schema)]
    else:
        parts = [
            prefix + to_json(f.schema, value.get_without_default(f.name)) for f, prefix in data.struct_fields(schema)
        ]
    return "{" + ",".join(parts) + "}"


_TO_JSON: dict[Type, Callable[[JsonData, Schema | None, Any], str]] = {
    Type.INT8: _int_to_json,
    Type.INT16: _int_to_json,
    Type.INT32: _int_to_json,
    Type.INT64: _int_to_json,
    Type.FLOAT32: _float32_to_json,
    Type.FLOAT64: _float64_to_json,
    Type.BOOLEAN: _bool_to_json,
    Type.STRING: _string_to_json,
    Type.BYTES: _bytes_to_json,
    Type.ARRAY: _array_to_json,
    Type.MAP: _map_to_json,
    Type.STRUCT: _struct_to_json,
}


def _bytes_to_connect(data: JsonData, schema: Schema, node: Any) -> Any:
    if not isinstance(node, str):
        return None  # JsonNode.binaryValue() of a non-text node
    try:
        return base64_decode(node)
    except (binascii.Error, ValueError) as e:
        raise DataError("Invalid bytes field") from e


def _array_to_connect(data: JsonData, schema: Schema, node: Any) -> Any:
    vs = schema.value_schema()
    if isinstance(node, list):
        return [data.to_connect(vs, e) for e in node]
    if isinstance(node, dict):  # Jackson iterates an object's values
        return [data.to_connect(vs, e) for e in node.values()]
    return []


def _map_to_connect(data: JsonData, schema: Schema, node: Any) -> Any:
    ks, vs = schema.key_schema(), schema.value_schema()
    if ks is None or ks.type is Type.STRING:
        if not isinstance(node, dict):
            raise DataError(f"Maps with string fields should be encoded as JSON objects, but found {node_type(node)}")
        return {k: data.to_connect(vs, v) for k, v in node.items()}
    if not isinstance(node, list):
        raise DataError(
            f"Maps with non-string fields should be encoded as JSON array of tuples, but found {node_type(node)}"
        )
    result: dict[Any, Any] = {}
    for entry in node:
        if not isinstance(entry, list):
            raise DataError(f"Found invalid map entry instead of array tuple: {node_type(entry)}")
        if len(entry) != 2:
            raise DataError(f"Found invalid map entry, expected length 2 but found :{len(entry)}")
        key = data.to_connect(ks, entry[0])
        try:
            result[key] = data.to_connect(vs, entry[1])
        except TypeError as e:
            raise DataError(f"Unhashable map key: {key!r}") from e
    return result


def _struct_to_connect(data: JsonData, schema: Schema, node: Any) -> Any:
    if not isinstance(node, dict):
        raise DataError(f"Structs should be encoded as JSON objects, but found {node_type(node)}")
    result = Struct(schema)
    to_connect = data.to_connect
    for f, _prefix in data.struct_fields(schema):
        result.put(f, to_connect(f.schema, node.get(f.name, MISSING)))
    return result


_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_UTC_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)


def _int32_node(node: Any) -> int:
    return node if type(node) is int and -(2**31) <= node < 2**31 else java_int(node)


def _int64_node(node: Any) -> int:
    return node if type(node) is int and _LONG_MIN <= node <= _LONG_MAX else java_long(node)


def _float64_node(node: Any) -> float:
    return (node or 0.0) if type(node) is float else java_double(node)


# Tests (on a node ``x``) under which a JSON node already is the Connect value of an
# unnamed schema of that type, so the compiled struct reader takes it as it is.
_SAME_TYPE_TESTS: dict[Type, str] = {
    Type.BOOLEAN: "(x is True or x is False)",
    Type.INT32: f"(type(x) is int and {-(2**31)} <= x <= {2**31 - 1})",
    Type.INT64: f"(type(x) is int and {_LONG_MIN} <= x <= {_LONG_MAX})",
    Type.FLOAT64: "(type(x) is float and x != 0.0)",  # zero: -0.0 reads as 0.0
    Type.STRING: "type(x) is str",
}

# The conversions of primitive nodes (neither null nor missing), which need neither the
# settings nor the schema; each tries the common node type first.
_DIRECT_TO_CONNECT: dict[Type, Callable[[Any], Any]] = {
    Type.BOOLEAN: lambda node: node is True,
    Type.INT8: lambda node: narrow(java_int(node), 8),
    Type.INT16: lambda node: narrow(java_int(node), 16),
    Type.INT32: _int32_node,
    Type.INT64: _int64_node,
    Type.FLOAT32: java_float,
    Type.FLOAT64: _float64_node,
    Type.STRING: lambda node: node if type(node) is str or isinstance(node, str) else None,
}


def _ignoring_settings(convert: Callable[[Any], Any]) -> Callable[[JsonData, Schema, Any], Any]:
    return lambda data, schema, node: convert(node)


_TO_CONNECT: dict[Type, Callable[[JsonData, Schema, Any], Any]] = {
    **{t: _ignoring_settings(convert) for t, convert in _DIRECT_TO_CONNECT.items()},
    Type.BYTES: _bytes_to_connect,
    Type.ARRAY: _array_to_connect,
    Type.MAP: _map_to_connect,
    Type.STRUCT: _struct_to_connect,
}
