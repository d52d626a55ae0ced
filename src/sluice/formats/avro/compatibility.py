"""Avro schema compatibility: which defaults fit a schema, whether a reader schema can
read a writer's data (the registry's BACKWARD check), and re-laying a decoded datum of
the writer's schema out for the reader's (Avro schema resolution)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sluice.api.errors import DataError
from sluice.formats.avro.codec import union_branch, union_datum
from sluice.formats.avro.schema import NAMED, AvroType

__all__ = ["backward_compatibility_errors", "project", "valid_default"]


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
