"""``org.apache.kafka.connect.data.SchemaProjector``: move a value from the schema it was
written with to a compatible (newer or older) schema, as sinks do when records of several
schema versions land in one table or file.

Compatibility, checked at every level:

* the types are equal, or the source's numeric type promotes to the target's, in the
  order INT8 → INT16 → INT32 → INT64 → FLOAT32 → FLOAT64 (a type promotes to itself and
  to every one after it);
* the schema names are equal (both may be absent);
* the parameters are equal (so a Decimal only projects to a Decimal of the same scale).

Version, doc and optionality may differ. A null value projects to null if the target is
optional, to the target's default if it has one, and is an error otherwise; a source
that is optional projecting to a required target without a default is an error even for
a non-null value. A struct projects field by field by name: source fields missing from
the target are dropped; target fields missing from the source are left null if optional,
else set to their default, else it is an error. Numbers are converted to the target type
(``int`` → ``float``; a FLOAT32 target rounds to single precision).
"""

from __future__ import annotations

from typing import Any

from sluice._java.numbers import to_float32
from sluice.api.data import Schema, Struct, Type
from sluice.api.errors import SchemaProjectorError

__all__ = ["SchemaProjector"]

_PROMOTION_ORDER = (Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64)
_RANK = {t: i for i, t in enumerate(_PROMOTION_ORDER)}


def _is_promotable(source: Type, target: Type) -> bool:
    return source in _RANK and target in _RANK and _RANK[source] <= _RANK[target]


def _java_map(params: dict[str, str] | None) -> str:
    if params is None:
        return "null"
    return "{" + ", ".join(f"{k}={v}" for k, v in params.items()) + "}"


class SchemaProjector:
    """Projects values between compatible schemas (all static, as in Kafka)."""

    @staticmethod
    def project(source: Schema, record: Any, target: Schema) -> Any:
        """``record`` (written with ``source``) as a value of ``target``.

        Raises :class:`~sluice.api.errors.SchemaProjectorError` when the schemas are not
        compatible or a required value is missing.
        """
        SchemaProjector._check_maybe_compatible(source, target)
        if source.optional and not target.optional:
            if target.default_value is None:
                raise SchemaProjectorError(
                    "Writer schema is optional, however, target schema does not provide a default value."
                )
            if record is None:
                return target.default_value
            return SchemaProjector._project_required(source, record, target)
        if record is None:
            return None
        return SchemaProjector._project_required(source, record, target)

    @staticmethod
    def _check_maybe_compatible(source: Schema, target: Schema) -> None:
        if source.type is not target.type and not _is_promotable(source.type, target.type):
            raise SchemaProjectorError(
                f"Schema type mismatch. source type: {source.type.name} and target type: {target.type.name}"
            )
        if source.name != target.name:
            raise SchemaProjectorError(
                f"Schema name mismatch. source name: {source.name} and target name: {target.name}"
            )
        if (source.parameters or None) != (target.parameters or None):
            raise SchemaProjectorError(
                f"Schema parameters not equal. source parameters: {_java_map(source.parameters)} "
                f"and target parameters: {_java_map(target.parameters)}"
            )

    @staticmethod
    def _project_required(source: Schema, record: Any, target: Schema) -> Any:
        t = target.type
        if t is Type.STRUCT:
            return SchemaProjector._project_struct(source, record, target)
        if t is Type.ARRAY:
            return [SchemaProjector.project(source.value_schema(), e, target.value_schema()) for e in record]
        if t is Type.MAP:
            ks, vs = source.key_schema(), source.value_schema()
            tks, tvs = target.key_schema(), target.value_schema()
            return {SchemaProjector.project(ks, k, tks): SchemaProjector.project(vs, v, tvs) for k, v in record.items()}
        return SchemaProjector._project_primitive(source, record, target)

    @staticmethod
    def _project_struct(source: Schema, record: Struct, target: Schema) -> Struct:
        result = Struct(target)
        for target_field in target.fields():
            name = target_field.name
            source_field = source.field(name)
            if source_field is not None:
                try:
                    value = SchemaProjector.project(source_field.schema, record.get(name), target_field.schema)
                except SchemaProjectorError as e:
                    raise SchemaProjectorError(f"Error projecting {source_field.name}") from e
                result.put(name, value)
            elif target_field.schema.optional:
                continue
            elif target_field.schema.default_value is not None:
                result.put(name, target_field.schema.default_value)
            else:
                raise SchemaProjectorError(f"Required field `{name}` is missing from source schema: {source!r}")
        return result

    @staticmethod
    def _project_primitive(source: Schema, record: Any, target: Schema) -> Any:
        numeric = isinstance(record, (int, float)) and not isinstance(record, bool)
        if not numeric or source.type is target.type or not _is_promotable(source.type, target.type):
            return record
        t = target.type
        if t in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
            return int(record)
        value = float(record)
        if source.type is Type.FLOAT32:
            value = to_float32(value)  # a java.lang.Float, widened exactly
        return to_float32(value) if t is Type.FLOAT32 else value
