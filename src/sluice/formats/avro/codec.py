"""Avro's binary encoding of raw datums (with ``fastavro``), and the union branches they take.

A raw datum is a Connect value laid out for an Avro schema (plain Python values; see
:mod:`sluice.formats.avro.from_connect`). Unions with more than one non-null branch are
encoded through single-field wrapper records (binary-identical) so the branch written and
read is always known exactly: :func:`union_datum` builds the datum of a branch and
:func:`union_branch` tells which branch a decoded datum took.
"""

from __future__ import annotations

import io
from typing import Any

from sluice.api.errors import DataError
from sluice.formats.avro.schema import NAMED, PRIMITIVES, AvroType

__all__ = ["AvroCodec", "union_branch", "union_datum", "wire_schema"]


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
