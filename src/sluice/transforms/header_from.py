"""HeaderFrom (``org.apache.kafka.connect.transforms.HeaderFrom$Key`` / ``$Value``): copies or
moves fields of the record key or value into headers.

The n-th name of ``fields`` goes to the n-th name of ``headers``. With a schema the
key/value must be a :class:`~sluice.api.data.Struct` and each header gets the field's
schema; without one it must be a dict and the headers have no schema. ``operation=move``
also removes the fields (with a schema, from a copy of the struct schema that keeps its
name, version, doc and parameters but, as in Kafka, is not optional).
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from sluice._java.names import class_name
from sluice.api.config import ConfigDef, ConfigType, Importance, ValidString
from sluice.api.data import Schema, SchemaBuilder, Struct
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import ConnectRecord, Headers
from sluice.api.transforms import Transformation

__all__ = ["HeaderFrom", "HeaderFromKey", "HeaderFromValue"]

FIELDS_FIELD = "fields"
HEADERS_FIELD = "headers"
OPERATION_FIELD = "operation"
REPLACE_NULL_WITH_DEFAULT_FIELD = "replace.null.with.default"
MOVE_OPERATION = "move"
COPY_OPERATION = "copy"

_MOVE_SCHEMA_CACHE_SIZE = 16


class _NonEmptyList:
    """Kafka's ``NonEmptyListValidator``."""

    def __call__(self, name: str, value: Any) -> None:
        if value is None or len(value) == 0:
            raise ConfigError(name, "null" if value is None else "[]", "Empty list")

    def __str__(self) -> str:
        return "non-empty list"


CONFIG_DEF = (
    ConfigDef()
    .define(
        FIELDS_FIELD,
        ConfigType.LIST,
        validator=_NonEmptyList(),
        importance=Importance.HIGH,
        documentation="Names of the key or value fields whose values go into headers.",
    )
    .define(
        HEADERS_FIELD,
        ConfigType.LIST,
        validator=_NonEmptyList(),
        importance=Importance.HIGH,
        documentation="Names of the headers to add, one for each name in 'fields', in the same order.",
    )
    .define(
        OPERATION_FIELD,
        ConfigType.STRING,
        validator=ValidString.in_(MOVE_OPERATION, COPY_OPERATION),
        importance=Importance.HIGH,
        documentation="'move' to remove the fields from the key or value once they are in headers, 'copy' to "
        "leave them in place.",
    )
    .define(
        REPLACE_NULL_WITH_DEFAULT_FIELD,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.MEDIUM,
        documentation="With a schema, whether a null field that has a default value gives that default (true) "
        "or null (false).",
    )
)


class HeaderFrom(Transformation):
    """Base of :class:`HeaderFromKey` and :class:`HeaderFromValue`."""

    OVERVIEW_DOC = (
        "Copies or moves fields of the record key or value into headers: the n-th entry of 'fields' goes to "
        "the header named by the n-th entry of 'headers'. Use HeaderFrom$Key for the key and HeaderFrom$Value "
        "for the value."
    )

    _part = "key or value"  # for error messages

    def __init__(self) -> None:
        # Public, as configure() parsed them: what a columnar form of the chain reads.
        self.pairs: tuple[tuple[str, str], ...] = ()
        self._fields: frozenset[str] = frozenset()
        self.move = False
        self._operation = ""
        self._replace_null_with_default = True
        self._move_schemas: dict[Schema, Schema] = {}

    def configure(self, configs: dict[str, Any]) -> None:
        values = CONFIG_DEF.parse(configs)
        fields, headers = values[FIELDS_FIELD], values[HEADERS_FIELD]
        if len(fields) != len(headers):
            raise ConfigError(
                f"'{FIELDS_FIELD}' config must have the same number of elements as '{HEADERS_FIELD}' config."
            )
        self.pairs = tuple(zip(fields, headers, strict=True))
        self._fields = frozenset(fields)
        self._operation = values[OPERATION_FIELD]
        self.move = self._operation == MOVE_OPERATION
        self._replace_null_with_default = values[REPLACE_NULL_WITH_DEFAULT_FIELD]
        self._move_schemas = {}

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    # -- what the Key / Value variants supply -------------------------------------------

    @abstractmethod
    def _operating_value(self, record: ConnectRecord) -> Any: ...

    @abstractmethod
    def _operating_schema(self, record: ConnectRecord) -> Schema | None: ...

    @abstractmethod
    def _new_record(
        self, record: ConnectRecord, schema: Schema | None, value: Any, headers: Headers
    ) -> ConnectRecord: ...

    # -- the transformation -------------------------------------------------------------

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema = self._operating_schema(record)
        value = self._operating_value(record)
        if schema is None:
            return self._apply_schemaless(record, value)
        return self._apply_with_schema(record, value, schema)

    def _field_value(self, struct: Struct, name: str) -> Any:
        if self._replace_null_with_default:
            return struct.get(name)
        return struct.get_without_default(name)

    def _apply_with_schema(self, record: ConnectRecord, value: Any, schema: Schema) -> ConnectRecord:
        headers = record.headers.duplicate()
        if not isinstance(value, Struct):
            raise DataError(f"Only Struct objects supported for [header {self._operation}], found: {class_name(value)}")
        if self.move:
            new_schema = self._move_schema(schema)
            new_value = Struct(new_schema)
            for field in new_schema.fields():
                new_value.put(field, self._field_value(value, field.name))
        else:
            new_schema, new_value = schema, value
        value_schema = value.schema
        for field_name, header_name in self.pairs:
            field_value = self._field_value(value, field_name) if value_schema.field(field_name) is not None else None
            source_field = schema.field(field_name)
            if source_field is None:  # Kafka fails here too (a NullPointerException)
                raise DataError(f"Field '{field_name}' does not exist in the schema of the record {self._part}")
            field_schema = source_field.schema
            if field_value is None and not field_schema.optional:
                raise DataError(f"A null value requires an optional schema but was {field_schema}")
            headers.add(header_name, field_value, field_schema)
        return self._new_record(record, new_schema, new_value, headers)

    def _move_schema(self, schema: Schema) -> Schema:
        moved = self._move_schemas.get(schema)
        if moved is None:
            builder = SchemaBuilder.struct()
            if schema.name is not None:
                builder.name(schema.name)
            if schema.version is not None:
                builder.version(schema.version)
            if schema.doc is not None:
                builder.doc(schema.doc)
            if schema.parameters:
                builder.parameters(schema.parameters)
            for field in schema.fields():
                if field.name not in self._fields:
                    builder.field(field.name, field.schema)
            moved = builder.build()
            if len(self._move_schemas) >= _MOVE_SCHEMA_CACHE_SIZE:
                self._move_schemas.pop(next(iter(self._move_schemas)))
            self._move_schemas[schema] = moved
        return moved

    def _apply_schemaless(self, record: ConnectRecord, value: Any) -> ConnectRecord:
        headers = record.headers.duplicate()
        if not isinstance(value, dict):
            raise DataError(
                f"Only Map objects supported in absence of schema for [header {self._operation}], "
                f"found: {class_name(value)}"
            )
        updated = dict(value)
        for field_name, header_name in self.pairs:
            if self.move:
                updated.pop(field_name, None)
            headers.add(header_name, value.get(field_name), None)
        return self._new_record(record, None, updated, headers)


class HeaderFromKey(HeaderFrom):
    """HeaderFrom on the record key (``org.apache.kafka.connect.transforms.HeaderFrom$Key``)."""

    _part = "key"

    def _operating_value(self, record: ConnectRecord) -> Any:
        return record.key

    def _operating_schema(self, record: ConnectRecord) -> Schema | None:
        return record.key_schema

    def _new_record(self, record: ConnectRecord, schema: Schema | None, value: Any, headers: Headers) -> ConnectRecord:
        return record.new_record(key_schema=schema, key=value, headers=headers)


class HeaderFromValue(HeaderFrom):
    """HeaderFrom on the record value (``org.apache.kafka.connect.transforms.HeaderFrom$Value``)."""

    _part = "value"

    def _operating_value(self, record: ConnectRecord) -> Any:
        return record.value

    def _operating_schema(self, record: ConnectRecord) -> Schema | None:
        return record.value_schema

    def _new_record(self, record: ConnectRecord, schema: Schema | None, value: Any, headers: Headers) -> ConnectRecord:
        return record.new_record(value_schema=schema, value=value, headers=headers)
