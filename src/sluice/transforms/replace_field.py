"""``ReplaceField``: drop, keep or rename fields of the key or value
(``org.apache.kafka.connect.transforms.ReplaceField$Key`` / ``$Value``).

``exclude`` wins over ``include``; an empty ``include`` keeps every field. ``renames`` is a
list of ``old:new`` pairs. A null key or value passes through unchanged.

``blacklist`` and ``whitelist``, the names ``exclude`` and ``include`` had before Kafka 2.7,
are still accepted as aliases (Kafka 4 dropped them and ignores them): the new name wins
when both are given.
"""

from __future__ import annotations

import logging
from typing import Any

from sluice._java.names import class_name
from sluice._java.text import java_split
from sluice.api.config import ConfigDef, ConfigType, Importance, LambdaValidator, ValidList
from sluice.api.data import Schema, SchemaBuilder, Struct
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import ConnectRecord
from sluice.transforms._config import REPLACE_NULL_WITH_DEFAULT_CONFIG, define_replace_null_with_default, parse_config
from sluice.transforms._records import KeyOrValueTransformation, KeySide, ValueSide
from sluice.transforms._schemas import LRUCache, copy_schema_basics
from sluice.transforms._values import field_value, require_map, require_struct

__all__ = ["ReplaceField", "ReplaceFieldKey", "ReplaceFieldValue"]

log = logging.getLogger(__name__)

EXCLUDE_CONFIG = "exclude"
INCLUDE_CONFIG = "include"
RENAMES_CONFIG = "renames"
DEPRECATED_ALIASES = {EXCLUDE_CONFIG: "blacklist", INCLUDE_CONFIG: "whitelist"}
PURPOSE = "field replacement"


def parse_renames(mappings: list[str]) -> dict[str, str]:
    """``{old: new}`` from ``old:new`` entries; :class:`ConfigError` for a malformed one."""
    renames: dict[str, str] = {}
    for mapping in mappings:
        parts = java_split(mapping, ":")
        if len(parts) != 2:
            raise ConfigError(RENAMES_CONFIG, ", ".join(mappings), f"Invalid rename mapping: {mapping}")
        renames[parts[0]] = parts[1]
    return renames


def _java_string_hash(text: str) -> int:
    """``String.hashCode()`` (over UTF-16 code units), as an unsigned 32-bit number."""
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def java_hash_map_order(keys: list[str]) -> list[str]:
    """``keys`` (distinct, in the order they were put) in the order a ``java.util.HashMap``
    holding them iterates them: by bucket of the spread hash, then in insertion order (the
    table grows past 3/4 full; buckets turned into trees, at 8 keys and more, are not
    modelled)."""
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2

    def bucket(item: tuple[int, str]) -> tuple[int, int]:
        h = _java_string_hash(item[1])
        return ((h ^ (h >> 16)) & (capacity - 1), item[0])

    return [key for _, key in sorted(enumerate(keys), key=bucket)]


def _check_renames(name: str, value: Any) -> None:
    parse_renames(list(value))  # raises ConfigError on a malformed pair


def reverse_renames(renames: dict[str, str]) -> dict[str, str]:
    """``{new: old}``. When two fields are renamed to the same name, the old name kept is the
    one Kafka keeps: it inverts its HashMap of renames, so the last in that map's iteration
    order wins (not the last in the config)."""
    return {renames[old]: old for old in java_hash_map_order(list(renames))}


CONFIG_DEF = define_replace_null_with_default(
    ConfigDef()
    .define(
        EXCLUDE_CONFIG,
        ConfigType.LIST,
        [],
        ValidList.any_non_duplicate_values(True, False),
        Importance.MEDIUM,
        "Fields to drop. A field listed here is dropped even if it is also in include.",
    )
    .define(
        INCLUDE_CONFIG,
        ConfigType.LIST,
        [],
        ValidList.any_non_duplicate_values(True, False),
        Importance.MEDIUM,
        "Fields to keep; when set, every other field is dropped.",
    )
    .define(
        RENAMES_CONFIG,
        ConfigType.LIST,
        [],
        LambdaValidator.with_(_check_renames, "comma-separated old:new pairs"),
        Importance.MEDIUM,
        "Fields to rename, as old:new pairs separated by commas.",
    )
)


def translate_deprecated(configs: dict[str, Any]) -> dict[str, Any]:
    """Map ``blacklist``/``whitelist`` onto ``exclude``/``include`` (the new name wins)."""
    translated = dict(configs)
    for target, deprecated in DEPRECATED_ALIASES.items():
        if deprecated not in translated:
            continue
        old = translated.pop(deprecated)
        if target in translated:
            log.warning("Configuration '%s' is deprecated and was ignored in favour of '%s'", deprecated, target)
        else:
            log.warning("Configuration '%s' is deprecated; use '%s' instead", deprecated, target)
            translated[target] = old
    return translated


class ReplaceField(KeyOrValueTransformation[ConnectRecord]):
    """Shared logic of :class:`ReplaceFieldKey` and :class:`ReplaceFieldValue`."""

    def __init__(self) -> None:
        self._exclude: frozenset[str] = frozenset()
        self._include: frozenset[str] = frozenset()
        self._renames: dict[str, str] = {}
        # Public, as configure() parsed them: what a columnar form of the chain reads.
        self.source_names: dict[str, str] = {}
        self._replace_null_with_default = True
        self._schema_cache = LRUCache(16)

    def configure(self, configs: dict[str, Any]) -> None:
        parsed = parse_config(CONFIG_DEF, translate_deprecated(dict(configs or {})))
        self._exclude = frozenset(parsed[EXCLUDE_CONFIG])
        self._include = frozenset(parsed[INCLUDE_CONFIG])
        self._renames = parse_renames(parsed[RENAMES_CONFIG])
        self.source_names = reverse_renames(self._renames)
        self._replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._schema_cache = LRUCache(16)

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def _kept(self, name: str) -> bool:
        return name not in self._exclude and (not self._include or name in self._include)

    def _renamed(self, name: str) -> str:
        return self._renames.get(name, name)

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            original = require_map(value, PURPOSE)
            for k in original:
                if not isinstance(k, str):  # Kafka fails on such a key too (a ClassCastException)
                    raise DataError(f"Only string keys are supported for [{PURPOSE}], found: {class_name(k)}")
            updated = {self._renamed(k): v for k, v in original.items() if self._kept(k)}
            return self.new_record(record, None, updated)
        struct = require_struct(value, PURPOSE)
        updated_schema = self.updated_schema(struct.schema)
        replaced = Struct(updated_schema)
        for field in updated_schema.fields():
            source = self.source_names.get(field.name, field.name)
            replaced.put(field.name, field_value(struct, source, self._replace_null_with_default))
        return self.new_record(record, updated_schema, replaced)

    def updated_schema(self, schema: Schema) -> Schema:
        """``schema`` with fields dropped and renamed (cached per input schema)."""
        cached = self._schema_cache.get(schema)
        if cached is not None:
            return cached
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields():
            if self._kept(field.name):
                builder.field(self._renamed(field.name), field.schema)
        updated = builder.build()
        self._schema_cache.put(schema, updated)
        return updated

    def close(self) -> None:
        self._schema_cache = LRUCache(16)


class ReplaceFieldKey(KeySide, ReplaceField):
    """``org.apache.kafka.connect.transforms.ReplaceField$Key``: filter and rename fields of the key."""


class ReplaceFieldValue(ValueSide, ReplaceField):
    """``org.apache.kafka.connect.transforms.ReplaceField$Value``: filter and rename fields of the value."""
