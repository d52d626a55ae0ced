"""The Avro schema model, read from schema JSON and written back as Apache Avro's Java does.

:class:`AvroType` and :class:`AvroField` hold a parsed schema (:func:`parse_avro`);
:func:`avro_json` writes one back exactly as Java's ``Schema.toString()`` does (same key
order, name/namespace rules and number and string formatting), so that a schema generated
here is the same text Confluent's converter registers. :func:`scrub_name` and
:func:`check_name` are Avro's naming rules.
"""

from __future__ import annotations

import decimal as _decimal
import itertools
import json
import urllib.parse
from collections.abc import Mapping
from typing import Any

from sluice._java.text import jackson_quoter
from sluice.api.data import java_double_string, java_float_string
from sluice.api.errors import DataError

__all__ = [
    "NAMED",
    "NO_DEFAULT",
    "PRIMITIVES",
    "F32",
    "AvroField",
    "AvroType",
    "avro_json",
    "check_name",
    "json_text",
    "parse_avro",
    "scrub_name",
]

PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
NAMED = frozenset({"record", "enum", "fixed"})
_SCHEMA_RESERVED = frozenset(
    {"doc", "fields", "items", "name", "namespace", "size", "symbols", "values", "type", "aliases", "default"}
)
_FIELD_RESERVED = frozenset({"default", "doc", "name", "order", "type", "aliases"})

NO_DEFAULT: Any = type("NoDefault", (), {"__repr__": lambda self: "NO_DEFAULT"})()
"""An :class:`AvroField`'s default when it has none (``None`` is the JSON null default)."""


# ====================================================================== the model


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
        default: Any = NO_DEFAULT,
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
        return self.default is not NO_DEFAULT


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
                            default=f.get("default", NO_DEFAULT),
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


def check_name(name: str) -> str:
    """``name`` if it is a valid Avro name; DataError saying why not otherwise."""
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
