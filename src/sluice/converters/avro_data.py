"""Connect data ⇄ Avro, as Confluent's ``io.confluent.connect.avro.AvroData`` maps them.

Three parts:

* An Avro schema model (:class:`AvroType`, :class:`AvroField`) parsed from schema JSON
  (:func:`parse_avro`) and written back exactly as Apache Avro's Java ``Schema.toString()``
  writes it (:func:`avro_json`: same key order, name/namespace rules and number and string
  formatting), so that a schema generated here is the same text Confluent's converter
  registers.
* :class:`AvroData`: Connect schema ⇄ Avro schema and Connect value ⇄ "raw" Avro datum
  (plain Python values laid out for the schema), with Confluent's conventions:
  ``connect.name``/``connect.version``/``connect.doc``/``connect.parameters``/
  ``connect.default``/``connect.type`` properties, optional = union with null (``null``
  first unless there is a default), ``io.confluent.connect.avro.ConnectDefault`` names for
  unnamed structs, non-string-key maps as arrays of ``MapEntry`` records, Decimal as bytes
  with ``logicalType: decimal``, Date/Time/Timestamp logical types, schemaless values
  through the ``io.confluent.connect.avro.Anything`` record, Avro enums/fixed/unions read
  as strings/bytes/``io.confluent.connect.avro.Union`` structs (``connect_union_*`` with
  ``generalized.sum.type.support``).
* :class:`AvroCodec`: Avro binary encoding and decoding of raw datums with ``fastavro``.
  Unions with more than one non-null branch are encoded through single-field wrapper
  records (binary-identical) so the branch written and read is always known exactly.

This module imports only :mod:`sluice.api` and third-party libraries.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import io
import itertools
import json
import urllib.parse
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, TypeGuard

from sluice._java.names import class_string
from sluice._java.numbers import narrow
from sluice._java.text import jackson_quoter
from sluice.api.data import (
    Date,
    Decimal,
    Field,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
    java_double_string,
    java_float_string,
)
from sluice.api.errors import DataError

__all__ = [
    "ANYTHING_SCHEMA",
    "AvroCodec",
    "AvroData",
    "AvroField",
    "AvroType",
    "avro_json",
    "backward_compatibility_errors",
    "parse_avro",
    "project",
]

NAMESPACE = "io.confluent.connect.avro"
DEFAULT_SCHEMA_NAME = "ConnectDefault"
DEFAULT_SCHEMA_FULL_NAME = NAMESPACE + "." + DEFAULT_SCHEMA_NAME
MAP_ENTRY_TYPE_NAME = "MapEntry"
KEY_FIELD = "key"
VALUE_FIELD = "value"

CONNECT_NAME_PROP = "connect.name"
CONNECT_DOC_PROP = "connect.doc"
CONNECT_VERSION_PROP = "connect.version"
CONNECT_DEFAULT_VALUE_PROP = "connect.default"
CONNECT_PARAMETERS_PROP = "connect.parameters"
CONNECT_INTERNAL_TYPE_NAME = "connect.internal.type"
CONNECT_TYPE_PROP = "connect.type"
AVRO_RECORD_DOC_PROP = NAMESPACE + ".record.doc"
AVRO_ENUM_DOC_PREFIX_PROP = NAMESPACE + ".enum.doc."
AVRO_FIELD_DOC_PREFIX_PROP = NAMESPACE + ".field.doc."
AVRO_FIELD_DEFAULT_FLAG_PROP = NAMESPACE + ".field.default"
AVRO_ENUM_DEFAULT_PREFIX_PROP = NAMESPACE + ".enum.default."
AVRO_TYPE_UNION = NAMESPACE + ".Union"
AVRO_TYPE_ENUM = NAMESPACE + ".Enum"
AVRO_TYPE_ANYTHING = NAMESPACE + ".Anything"
GENERALIZED_TYPE_UNION = "org.apache.kafka.connect.data.Union"
GENERALIZED_TYPE_ENUM = "org.apache.kafka.connect.data.Enum"
GENERALIZED_TYPE_UNION_PREFIX = "connect_union_"
GENERALIZED_TYPE_UNION_FIELD_PREFIX = GENERALIZED_TYPE_UNION_PREFIX + "field_"
AVRO_PROP = "avro"
AVRO_LOGICAL_TYPE_PROP = "logicalType"
AVRO_LOGICAL_TIMESTAMP_MILLIS = "timestamp-millis"
AVRO_LOGICAL_TIME_MILLIS = "time-millis"
AVRO_LOGICAL_DATE = "date"
AVRO_LOGICAL_DECIMAL = "decimal"
CONNECT_AVRO_FIXED_SIZE_PROP = "connect.fixed.size"
CONNECT_AVRO_DECIMAL_PRECISION_PROP = "connect.decimal.precision"
CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT = 64

PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
NAMED = frozenset({"record", "enum", "fixed"})
_SCHEMA_RESERVED = frozenset(
    {"doc", "fields", "items", "name", "namespace", "size", "symbols", "values", "type", "aliases", "default"}
)
_FIELD_RESERVED = frozenset({"default", "doc", "name", "order", "type", "aliases"})

_NO_DEFAULT: Any = type("NoDefault", (), {"__repr__": lambda self: "NO_DEFAULT"})()

_INT_RANGES = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}


# ====================================================================== Avro schema model


class AvroType:
    """One Avro schema node. Named types (record/enum/fixed) are shared by reference:
    every use of a name points at the same node."""

    __slots__ = (
        "type",
        "props",
        "name",
        "namespace",
        "doc",
        "aliases",
        "fields",
        "symbols",
        "enum_default",
        "size",
        "items",
        "values",
        "branches",
        "_wrappers",
        "_field_index",
    )

    def __init__(
        self,
        type: str,
        props: Mapping[str, Any] | None = None,
        *,
        name: str | None = None,
        namespace: str | None = None,
        doc: str | None = None,
        aliases: list[str] | None = None,
        fields: list[AvroField] | None = None,
        symbols: list[str] | None = None,
        enum_default: str | None = None,
        size: int | None = None,
        items: AvroType | None = None,
        values: AvroType | None = None,
        branches: list[AvroType] | None = None,
    ) -> None:
        self.type = type
        self.props: dict[str, Any] = dict(props) if props else {}
        self.name = name
        self.namespace = namespace or None
        self.doc = doc
        self.aliases = aliases
        self.fields = fields
        self.symbols = symbols
        self.enum_default = enum_default
        self.size = size
        self.items = items
        self.values = values
        self.branches = branches
        self._wrappers: list[str] | None = None
        self._field_index: dict[str, AvroField] | None = None

    @property
    def fullname(self) -> str:
        assert self.name is not None
        return f"{self.namespace}.{self.name}" if self.namespace else self.name

    # The parts of a node that only some kinds have, for code that knows the kind: an
    # array's element type, a map's value type, a union's branch, a named type's name, a
    # record's field. A node of another kind raises DataError (a malformed schema).
    def element_type(self) -> AvroType:
        if self.items is None:
            raise DataError(f"Avro {self.type} schema has no items")
        return self.items

    def value_type(self) -> AvroType:
        if self.values is None:
            raise DataError(f"Avro {self.type} schema has no values")
        return self.values

    def branch(self, index: int) -> AvroType:
        if self.branches is None:
            raise DataError(f"Avro {self.type} schema is not a union")
        return self.branches[index]

    def required_name(self) -> str:
        if self.name is None:
            raise DataError(f"Avro {self.type} schema has no name")
        return self.name

    def field_type(self, name: str) -> AvroType:
        found = self.field(name)
        if found is None:
            raise DataError(f"Avro {self.type} schema has no field {name}")
        return found.schema

    def field(self, name: str) -> AvroField | None:
        if self._field_index is None:
            self._field_index = {f.name: f for f in self.fields or ()}
        return self._field_index.get(name)

    def str_prop(self, key: str) -> str | None:
        """``Schema.getProp``: the property if it is a string."""
        value = self.props.get(key)
        return value if isinstance(value, str) else None

    @property
    def is_optional_union(self) -> bool:
        """A union of ``null`` and one other type (either order)."""
        b = self.branches
        return b is not None and len(b) == 2 and (b[0].type == "null") != (b[1].type == "null")

    @property
    def needs_wrapping(self) -> bool:
        """A union whose branch cannot be told from the decoded value alone."""
        b = self.branches
        return b is not None and sum(1 for x in b if x.type != "null") > 1

    def wrapper_names(self) -> list[str]:
        """Names of the single-field records standing for this union's branches on the wire."""
        if self._wrappers is None:
            n = next(_WRAPPER_COUNTER)
            self._wrappers = [f"_sluice_u{n}_{i}" for i in range(len(self.branches or ()))]
        return self._wrappers

    def __repr__(self) -> str:
        return f"AvroType({avro_json(self)})"


_WRAPPER_COUNTER = itertools.count()


class AvroField:
    __slots__ = ("name", "schema", "doc", "default", "order", "aliases", "props")

    def __init__(
        self,
        name: str,
        schema: AvroType,
        doc: str | None = None,
        default: Any = _NO_DEFAULT,
        order: str = "ascending",
        aliases: list[str] | None = None,
        props: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.schema = schema
        self.doc = doc
        self.default = default
        self.order = order
        self.aliases = aliases
        self.props: dict[str, Any] = dict(props) if props else {}

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT


class F32(float):
    """A JSON number that Java holds as a ``float`` (written as ``Float.toString``)."""

    __slots__ = ()


# -------------------------------------------------------------------- parsing


def parse_avro(schema: str | Any) -> AvroType:
    """Parse Avro schema JSON (text or already-decoded JSON) into the model."""
    if isinstance(schema, (str, bytes, bytearray)):
        try:
            schema = json.loads(schema)
        except ValueError as exc:
            raise DataError(f"Invalid Avro schema JSON: {exc}") from exc
    return _Parser().parse(schema, None)


class _Parser:
    def __init__(self) -> None:
        self.names: dict[str, AvroType] = {}

    def parse(self, node: Any, space: str | None) -> AvroType:
        if isinstance(node, str):
            if node in PRIMITIVES:
                return AvroType(node)
            return self._lookup(node, space)
        if isinstance(node, list):
            return AvroType("union", branches=[self.parse(b, space) for b in node])
        if not isinstance(node, dict):
            raise DataError(f"Invalid Avro schema: {json.dumps(node)}")
        t = node.get("type")
        if isinstance(t, (dict, list)):
            return self.parse(t, space)
        if not isinstance(t, str):
            raise DataError(f"No type: {json.dumps(node)}")
        props = {k: v for k, v in node.items() if k not in _SCHEMA_RESERVED}
        if t in PRIMITIVES:
            return AvroType(t, props)
        if t in ("record", "error", "enum", "fixed"):
            name, ns = self._name(node, space)
            result = AvroType(
                "record" if t == "error" else t,
                props,
                name=name,
                namespace=ns,
                doc=node.get("doc") if isinstance(node.get("doc"), str) else None,
                aliases=list(node["aliases"]) if isinstance(node.get("aliases"), list) else None,
            )
            full = result.fullname
            if full in self.names:
                raise DataError(f"Can't redefine: {full}")
            self.names[full] = result
            if t == "enum":
                symbols = node.get("symbols")
                if not isinstance(symbols, list) or not all(isinstance(s, str) for s in symbols):
                    raise DataError(f"Enum symbols must be a sequence of strings: {json.dumps(node)}")
                result.symbols = list(symbols)
                default = node.get("default")
                result.enum_default = default if isinstance(default, str) else None
            elif t == "fixed":
                size = node.get("size")
                if type(size) is not int:
                    raise DataError(f"Invalid or no size: {json.dumps(node)}")
                result.size = size
            else:
                fields_node = node.get("fields")
                if not isinstance(fields_node, list):
                    raise DataError(f"Record has no fields: {json.dumps(node)}")
                fields: list[AvroField] = []
                for f in fields_node:
                    if not isinstance(f, dict) or not isinstance(f.get("name"), str) or "type" not in f:
                        raise DataError(f"Invalid record field: {json.dumps(f)}")
                    fields.append(
                        AvroField(
                            f["name"],
                            self.parse(f["type"], ns),
                            doc=f.get("doc") if isinstance(f.get("doc"), str) else None,
                            default=f.get("default", _NO_DEFAULT),
                            order=f.get("order", "ascending") if isinstance(f.get("order"), str) else "ascending",
                            aliases=list(f["aliases"]) if isinstance(f.get("aliases"), list) else None,
                            props={k: v for k, v in f.items() if k not in _FIELD_RESERVED},
                        )
                    )
                result.fields = fields
            return result
        if t == "array":
            if "items" not in node:
                raise DataError(f"Array has no items type: {json.dumps(node)}")
            return AvroType("array", props, items=self.parse(node["items"], space))
        if t == "map":
            if "values" not in node:
                raise DataError(f"Map has no values type: {json.dumps(node)}")
            return AvroType("map", props, values=self.parse(node["values"], space))
        return self._lookup(t, space)

    def _lookup(self, name: str, space: str | None) -> AvroType:
        if "." not in name and space:
            found = self.names.get(f"{space}.{name}")
            if found is not None:
                return found
        found = self.names.get(name)
        if found is None:
            raise DataError(f'Undefined name: "{name}"')
        return found

    @staticmethod
    def _name(node: Mapping[str, Any], space: str | None) -> tuple[str, str | None]:
        name = node.get("name")
        if not isinstance(name, str):
            raise DataError(f"No name in schema: {json.dumps(node)}")
        if "." in name:
            ns, _, short = name.rpartition(".")
            return short, ns or None
        declared = node.get("namespace")
        if isinstance(declared, str):
            return name, declared or None
        return name, space


# -------------------------------------------------------------------- writing (Java's toString)


def avro_json(schema: AvroType) -> str:
    """The schema as Apache Avro's Java ``Schema.toString()`` writes it (compact)."""
    out: list[str] = []
    _write(schema, None, {}, out)
    return "".join(out)


def _write(s: AvroType, space: str | None, names: dict[str, AvroType], out: list[str]) -> None:
    t = s.type
    if t in NAMED:
        full = s.fullname
        known = names.get(full)
        if known is not None:
            if known is not s and avro_json_standalone(known) != avro_json_standalone(s):
                raise DataError(f"Can't redefine: {full}")
            qualified = s.required_name() if (s.namespace is None or s.namespace == space) else full
            out.append(_jstr(qualified))
            return
        names[full] = s
        out.append('{"type":' + _jstr(t) + ',"name":' + _jstr(s.required_name()))
        if s.namespace is not None:
            if s.namespace != space:
                out.append(',"namespace":' + _jstr(s.namespace))
        elif space is not None:
            out.append(',"namespace":""')
        if s.doc is not None:
            out.append(',"doc":' + _jstr(s.doc))
        if t == "record":
            out.append(',"fields":[')
            for i, f in enumerate(s.fields or ()):
                if i:
                    out.append(",")
                out.append('{"name":' + _jstr(f.name) + ',"type":')
                _write(f.schema, s.namespace, names, out)
                if f.doc is not None:
                    out.append(',"doc":' + _jstr(f.doc))
                if f.has_default:
                    out.append(',"default":' + json_text(f.default))
                if f.order != "ascending":
                    out.append(',"order":' + _jstr(f.order))
                if f.aliases:
                    out.append(',"aliases":[' + ",".join(_jstr(a) for a in f.aliases) + "]")
                _write_props(f.props, out)
                out.append("}")
            out.append("]")
        elif t == "enum":
            out.append(',"symbols":[' + ",".join(_jstr(x) for x in s.symbols or ()) + "]")
            if s.enum_default is not None:
                out.append(',"default":' + _jstr(s.enum_default))
        else:
            out.append(f',"size":{s.size}')
        _write_props(s.props, out)
        if s.aliases:
            out.append(',"aliases":[' + ",".join(_jstr(a) for a in s.aliases) + "]")
        out.append("}")
        return
    if t == "union":
        out.append("[")
        for i, b in enumerate(s.branches or ()):
            if i:
                out.append(",")
            _write(b, space, names, out)
        out.append("]")
        return
    if t == "array":
        out.append('{"type":"array","items":')
        _write(s.element_type(), space, names, out)
        _write_props(s.props, out)
        out.append("}")
        return
    if t == "map":
        out.append('{"type":"map","values":')
        _write(s.value_type(), space, names, out)
        _write_props(s.props, out)
        out.append("}")
        return
    if not s.props:
        out.append(_jstr(t))
        return
    out.append('{"type":' + _jstr(t))
    _write_props(s.props, out)
    out.append("}")


def avro_json_standalone(s: AvroType) -> str:
    out: list[str] = []
    _write(s, None, {}, out)
    return "".join(out)


def _write_props(props: Mapping[str, Any], out: list[str]) -> None:
    for key, value in props.items():
        out.append("," + _jstr(key) + ":" + json_text(value))


# Avro's Schema.toString writes through Jackson's character (Writer-based) generator: only
# control characters are escaped, everything else is written as it is.
_jstr = jackson_quoter("raw")


def json_text(value: Any) -> str:
    """A JSON value as Jackson writes it (numbers as Java prints them)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _jstr(value)
    if isinstance(value, F32):
        text = java_float_string(value)
        return text if text[-1].isdigit() else _jstr(text)
    if isinstance(value, float):
        text = java_double_string(value)
        return text if text[-1].isdigit() else _jstr(text)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, _decimal.Decimal):
        return str(value)
    if isinstance(value, Mapping):
        return "{" + ",".join(_jstr(str(k)) + ":" + json_text(v) for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(json_text(v) for v in value) + "]"
    raise DataError(f"Cannot write {type(value).__name__} as JSON")


# -------------------------------------------------------------------- names


def _valid_name(name: str) -> bool:
    if not name:
        return False
    first = name[0]
    if not (first.isalpha() or first == "_"):
        return False
    return all(c.isalnum() or c == "_" for c in name[1:])


def _check_name(name: str) -> str:
    if not name:
        raise DataError("Empty name")
    if not (name[0].isalpha() or name[0] == "_"):
        raise DataError(f"Illegal initial character: {name}")
    for c in name[1:]:
        if not (c.isalnum() or c == "_"):
            raise DataError(f"Illegal character in: {name}")
    return name


def scrub_name(name: str) -> str:
    """Confluent's ``scrub.invalid.names``: a valid Avro name for any string."""
    if not name or _valid_name(name) and name.isascii():
        return name
    encoded = urllib.parse.quote_plus(name, safe="*-._")
    if encoded[:1].isdigit():
        encoded = "x" + encoded
    return "".join(c if (c.isascii() and (c.isalnum() or c == "_")) else "_" for c in encoded)


# ====================================================================== schema ANYTHING


def _anything() -> AvroType:
    anything = AvroType("record", name="Anything", namespace=NAMESPACE)

    def optional(t: AvroType) -> AvroType:
        return AvroType("union", branches=[AvroType("null"), t])

    entry = AvroType("record", name=MAP_ENTRY_TYPE_NAME, namespace=NAMESPACE)
    entry.fields = [AvroField(KEY_FIELD, anything), AvroField(VALUE_FIELD, anything)]
    anything.fields = [
        AvroField(n, optional(AvroType(t)), default=None)
        for n, t in (
            ("boolean", "boolean"),
            ("bytes", "bytes"),
            ("double", "double"),
            ("float", "float"),
            ("int", "int"),
            ("long", "long"),
            ("string", "string"),
        )
    ]
    anything.fields.append(AvroField("array", optional(AvroType("array", items=anything)), default=None))
    anything.fields.append(AvroField("map", optional(AvroType("array", items=entry)), default=None))
    return anything


ANYTHING_SCHEMA = _anything()
"""``io.confluent.connect.avro.Anything``: how Confluent writes values that have no schema."""


# ====================================================================== the codec


class AvroCodec:
    """Avro binary encoding/decoding of raw datums for one writer schema (fastavro).

    A top-level ``bytes`` schema is written and read as the bare bytes, as Confluent's
    serializer does (no length prefix).
    """

    def __init__(self, schema: AvroType) -> None:
        import fastavro

        self.schema = schema
        self._raw_bytes = schema.type == "bytes"
        self._parsed = fastavro.parse_schema(wire_schema(schema))

    def encode(self, datum: Any) -> bytes:
        if self._raw_bytes:
            return bytes(datum)
        from fastavro import schemaless_writer

        buf = io.BytesIO()
        try:
            schemaless_writer(buf, self._parsed, datum)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
            raise DataError(f"Error serializing Avro message: {exc}") from exc
        return buf.getvalue()

    def decode(self, data: bytes | memoryview) -> Any:
        if self._raw_bytes:
            return bytes(data)
        from fastavro import schemaless_reader

        try:
            return schemaless_reader(
                io.BytesIO(data), self._parsed, None, return_record_name=True, return_record_name_override=True
            )
        except (ValueError, TypeError, KeyError, EOFError, IndexError, UnicodeDecodeError) as exc:
            raise DataError(f"Error deserializing Avro message: {exc}") from exc


def wire_schema(schema: AvroType) -> Any:
    """The schema as fastavro needs it: structure only (no properties, logical types or
    defaults, so values stay in their raw form), unions of several non-null branches as
    unions of single-field wrapper records."""
    return _wire(schema, set())


def _wire(s: AvroType, defined: set[int]) -> Any:
    t = s.type
    if t in NAMED:
        if id(s) in defined:
            return s.fullname
        defined.add(id(s))
        if t == "record":
            return {
                "type": "record",
                "name": s.fullname,
                "fields": [{"name": f.name, "type": _wire(f.schema, defined)} for f in s.fields or ()],
            }
        if t == "enum":
            return {"type": "enum", "name": s.fullname, "symbols": list(s.symbols or ())}
        return {"type": "fixed", "name": s.fullname, "size": s.size}
    if t == "array":
        return {"type": "array", "items": _wire(s.element_type(), defined)}
    if t == "map":
        return {"type": "map", "values": _wire(s.value_type(), defined)}
    if t == "union":
        branches = s.branches or []
        if not s.needs_wrapping:
            return [_wire(b, defined) for b in branches]
        names = s.wrapper_names()
        return [
            "null"
            if b.type == "null"
            else {
                "type": "record",
                "name": names[i],
                "namespace": "",
                "fields": [{"name": "v", "type": _wire(b, defined)}],
            }
            for i, b in enumerate(branches)
        ]
    return t


def union_datum(union: AvroType, index: int, datum: Any) -> Any:
    """The raw datum for branch ``index`` of ``union`` (what :class:`AvroCodec` writes)."""
    branch = union.branch(index)
    if branch.type == "null":
        return None
    if union.needs_wrapping:
        return (union.wrapper_names()[index], {"v": datum})
    if branch.type in NAMED:
        return (branch.fullname, datum)
    if branch.type in PRIMITIVES:
        return (branch.type, datum)
    return datum


def union_branch(union: AvroType, raw: Any) -> tuple[int, Any]:
    """Which branch of ``union`` a decoded raw datum took, and the branch's datum."""
    branches = union.branches or []
    if raw is None:
        for i, b in enumerate(branches):
            if b.type == "null":
                return i, None
        raise DataError("Null value for a union without null")
    if union.needs_wrapping:
        name, inner = raw
        return union.wrapper_names().index(name), inner["v"]
    if isinstance(raw, tuple):  # a record under return_record_name
        raw = raw[1]
    for i, b in enumerate(branches):
        if b.type != "null":
            return i, raw
    raise DataError("Empty union")


# ====================================================================== AvroData


class _FromConnectContext:
    __slots__ = ("schema_map", "seen_named", "name_index")

    def __init__(self) -> None:
        self.schema_map: dict[Schema, AvroType] = {}
        self.seen_named: set[str] = set()
        self.name_index = 0


class _ToConnectContext:
    __slots__ = ("in_progress",)

    def __init__(self) -> None:
        self.in_progress: set[int] = set()


class _LRU(OrderedDict[Any, Any]):
    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = max(1, size)

    def get_(self, key: Any) -> Any:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def put(self, key: Any, value: Any) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)


_LOGICAL_NAMES = (Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME)


class AvroData:
    """Confluent's ``AvroData`` (``AvroDataConfig`` options as keyword arguments)."""

    def __init__(
        self,
        *,
        cache_size: int = 1000,
        connect_meta_data: bool = True,
        enhanced_avro_schema_support: bool = False,
        generalized_sum_type_support: bool = False,
        ignore_default_for_nullables: bool = False,
        scrub_invalid_names: bool = False,
        allow_optional_map_keys: bool = False,
        flatten_singleton_unions: bool = True,
    ) -> None:
        self.connect_meta_data = connect_meta_data
        self.enhanced = enhanced_avro_schema_support
        self.generalized = generalized_sum_type_support
        self.ignore_default_for_nullables = ignore_default_for_nullables
        self.scrub = scrub_invalid_names
        self.allow_optional_map_keys = allow_optional_map_keys
        self.flatten_singleton_unions = flatten_singleton_unions
        self._from_cache = _LRU(cache_size)
        self._to_cache = _LRU(cache_size)
        self._union_index = 0

    # ------------------------------------------------------------------ names

    def _scrub(self, name: str) -> str:
        return scrub_name(name) if self.scrub else name

    def _split_name(self, full: str) -> tuple[str | None, str]:
        parts = [self._scrub(p) for p in full.split(".")]
        while len(parts) > 1 and parts[-1] == "":
            parts.pop()  # Java's String.split drops trailing empty strings
        if len(parts) <= 1:
            return None, parts[0]
        return ".".join(parts[:-1]), parts[-1]

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
        _check_name(short)
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
        union = _is_union_schema(schema)
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
                    _check_name(sym)
                base = AvroType(
                    "enum",
                    name=_check_name(eshort),
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
        _check_name(name)
        default: Any = _NO_DEFAULT
        if fschema.default_value is not None:
            default = self._default_from_connect(fschema, fschema.default_value)
        elif fschema.optional:
            default = None
        scrubbed = self._scrub_full_name(fschema.name)
        already_seen = scrubbed is not None and scrubbed in ctx.seen_named
        if scrubbed is not None:
            ctx.seen_named.add(scrubbed)
        avro = self._from_connect(fschema, ctx, False)
        if default is not _NO_DEFAULT and not valid_default(avro, default):
            default = _NO_DEFAULT  # Confluent logs "Ignoring invalid default for field"
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
                    if _is_union_schema(schema):
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
        if avro.type == "union" and not _is_union_schema(schema):
            index = _optional_branch(avro)
            return union_datum(avro, index, self._to_raw_typed(schema, avro.branch(index), value))
        return self._to_raw_typed(schema, target, value)

    def _to_raw_typed(self, schema: Schema, avro: AvroType, value: Any) -> Any:
        name = schema.name
        if name is not None and name in _LOGICAL_NAMES:
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
            if _is_union_schema(schema):
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
            if logical_name in _LOGICAL_NAMES:
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

        connect_default = avro.props.get(CONNECT_DEFAULT_VALUE_PROP, _NO_DEFAULT)
        default_json: Any = _NO_DEFAULT
        if field_default is None:
            default_json = connect_default
        else:
            default_json = field_default.value
            if self.connect_meta_data and connect_default is _NO_DEFAULT:
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

        if default_json is not _NO_DEFAULT and default_json is not None:
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
        if result is None or schema.name not in _LOGICAL_NAMES:
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
            if _is_union_schema(schema):
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
        if schema.name in _LOGICAL_NAMES:
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


class _FieldDefault:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


# ====================================================================== helpers


def _eq_ignore_case(a: str | None, b: str) -> bool:
    return a is not None and a.lower() == b.lower()


def _is_union_schema(schema: Schema) -> bool:
    return schema.type is Type.STRUCT and (
        schema.name == AVRO_TYPE_UNION
        or (schema.parameters is not None and GENERALIZED_TYPE_UNION in schema.parameters)
    )


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


def _is_map_entry(avro: AvroType) -> bool:
    if avro.type != "record":
        return False
    if avro.namespace == NAMESPACE and avro.name == MAP_ENTRY_TYPE_NAME:
        return True
    return avro.props.get(CONNECT_INTERNAL_TYPE_NAME) == MAP_ENTRY_TYPE_NAME


def _is_anything(avro: AvroType) -> bool:
    return avro is ANYTHING_SCHEMA or (avro.type == "record" and avro.fullname == AVRO_TYPE_ANYTHING)


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


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _json_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return int(value)


# ====================================================================== defaults


def valid_default(avro: AvroType, value: Any) -> bool:
    """Apache Avro's ``Schema.isValidDefault``: whether a JSON value fits the schema."""
    t = avro.type
    if t in ("string", "bytes", "enum", "fixed"):
        return isinstance(value, str)
    if t == "int":
        return isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**31
    if t == "long":
        return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63
    if t in ("float", "double"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "null":
        return value is None
    if t == "array":
        return isinstance(value, list) and all(valid_default(avro.element_type(), v) for v in value)
    if t == "map":
        return isinstance(value, Mapping) and all(valid_default(avro.value_type(), v) for v in value.values())
    if t == "record":
        if not isinstance(value, Mapping):
            return False
        for f in avro.fields or ():
            if f.name in value:
                if not valid_default(f.schema, value[f.name]):
                    return False
            elif not f.has_default:
                return False
        return True
    if t == "union":
        return any(valid_default(b, value) for b in avro.branches or ())
    return False


# ====================================================================== resolution (writer -> reader)


_PROMOTIONS = {
    "int": ("long", "float", "double"),
    "long": ("float", "double"),
    "float": ("double",),
    "string": ("bytes",),
    "bytes": ("string",),
}


def backward_compatibility_errors(reader: AvroType, writer: AvroType) -> list[str]:
    """Why ``reader`` cannot read data written with ``writer`` (empty when it can):
    Avro's schema resolution rules, as the registry's BACKWARD check applies them."""
    errors: list[str] = []
    _compat(reader, writer, "", errors, set())
    return errors


def _compat(r: AvroType, w: AvroType, path: str, errors: list[str], seen: set[tuple[int, int]]) -> None:
    key = (id(r), id(w))
    if key in seen:
        return
    seen.add(key)
    if w.type == "union":
        for i, b in enumerate(w.branches or ()):
            _compat(r, b, f"{path}/{i}", errors, seen)
        return
    if r.type == "union":
        for b in r.branches or ():
            sub: list[str] = []
            _compat(b, w, path, sub, set(seen))
            if not sub:
                return
        errors.append(f"{path or '/'}: reader union lacks writer type {w.type}")
        return
    if r.type != w.type:
        if r.type in _PROMOTIONS.get(w.type, ()):
            return
        errors.append(f"{path or '/'}: reader type {r.type} not compatible with writer type {w.type}")
        return
    if r.type in NAMED and r.name != w.name and w.fullname not in (r.aliases or ()) and w.name not in (r.aliases or ()):
        errors.append(f"{path or '/'}: name mismatch: expected {r.fullname}, found {w.fullname}")
        return
    if r.type == "fixed" and r.size != w.size:
        errors.append(f"{path or '/'}/size: expected {r.size}, found {w.size}")
    elif r.type == "enum":
        missing = [s for s in w.symbols or () if s not in (r.symbols or ())]
        if missing and r.enum_default is None:
            errors.append(f"{path or '/'}/symbols: reader is missing symbols {missing}")
    elif r.type == "array":
        _compat(r.element_type(), w.element_type(), f"{path}/items", errors, seen)
    elif r.type == "map":
        _compat(r.value_type(), w.value_type(), f"{path}/values", errors, seen)
    elif r.type == "record":
        for rf in r.fields or ():
            wf = w.field(rf.name) or next((w.field(a) for a in rf.aliases or () if w.field(a)), None)
            if wf is None:
                if not rf.has_default:
                    errors.append(f"{path}/fields/{rf.name}: reader field has no default and is missing in writer")
            else:
                _compat(rf.schema, wf.schema, f"{path}/fields/{rf.name}", errors, seen)


def project(raw: Any, writer: AvroType, reader: AvroType) -> Any:
    """A raw datum of ``writer`` re-laid out for ``reader`` (Avro schema resolution on
    decoded data: fields by name with reader defaults, promotions, union branches)."""
    if writer.type == "union":
        index, inner = union_branch(writer, raw)
        return project(inner, writer.branch(index), reader)
    if reader.type == "union":
        branches = reader.branches or []
        for i, b in enumerate(branches):
            if (b.type == writer.type and (b.type not in NAMED or b.name == writer.name)) or (
                b.type in _PROMOTIONS.get(writer.type, ())
            ):
                return union_datum(reader, i, project(raw, writer, b))
        raise DataError(f"No branch of the reader union matches writer type {writer.type}")
    if raw is None:
        return None
    t = reader.type
    if t != writer.type:
        if t in ("long", "float", "double") and isinstance(raw, (int, float)):
            return float(raw) if t != "long" else int(raw)
        if t == "string" and isinstance(raw, (bytes, bytearray)):
            return bytes(raw).decode("utf-8")
        if t == "bytes" and isinstance(raw, str):
            return raw.encode("utf-8")
        raise DataError(f"Cannot resolve writer type {writer.type} with reader type {t}")
    if t == "record":
        if isinstance(raw, tuple):
            raw = raw[1]
        out: dict[str, Any] = {}
        for rf in reader.fields or ():
            wf = writer.field(rf.name)
            if wf is not None:
                out[rf.name] = project(raw.get(wf.name), wf.schema, rf.schema)
            elif rf.has_default:
                out[rf.name] = _raw_from_json(rf.schema, rf.default)
            else:
                raise DataError(f"Reader field {rf.name} has no default and is missing from the writer's data")
        return out
    if t == "array":
        return [project(e, writer.element_type(), reader.element_type()) for e in raw]
    if t == "map":
        return {k: project(v, writer.value_type(), reader.value_type()) for k, v in raw.items()}
    if t == "enum" and raw not in (reader.symbols or ()):
        if reader.enum_default is None:
            raise DataError(f"Enum symbol {raw} is not in the reader's symbols")
        return reader.enum_default
    return raw


def _raw_from_json(avro: AvroType, value: Any) -> Any:
    """A field default (JSON) as a raw datum of ``avro``."""
    t = avro.type
    if t == "union":
        first = (avro.branches or [AvroType("null")])[0]
        for i, b in enumerate(avro.branches or ()):
            if valid_default(b, value):
                return union_datum(avro, i, _raw_from_json(b, value))
        return union_datum(avro, 0, _raw_from_json(first, value))
    if value is None:
        return None
    if t in ("bytes", "fixed"):
        return value.encode("latin-1")
    if t in ("float", "double"):
        return float(value)
    if t == "array":
        return [_raw_from_json(avro.element_type(), v) for v in value]
    if t == "map":
        return {k: _raw_from_json(avro.value_type(), v) for k, v in value.items()}
    if t == "record":
        return {f.name: _raw_from_json(f.schema, value.get(f.name, f.default)) for f in avro.fields or ()}
    return value
