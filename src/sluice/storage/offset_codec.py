"""A connector's source offsets in an offset store, decoded (spec 5.3); the bytes are
:mod:`sluice.kafka.offset_format`'s."""

from __future__ import annotations

import logging
from typing import Any

from sluice.api.errors import DataError
from sluice.kafka.offset_format import decode_offset_key, decode_offset_value, encode_offset_key
from sluice.storage.base import OffsetBackingStore

__all__ = ["connector_offsets", "partition_offsets"]

log = logging.getLogger(__name__)


def connector_offsets(store: OffsetBackingStore, connector: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Every ``(partition, offset)`` of ``connector`` with a non-null offset.

    Keys that are not ``[string, map]`` lists or name another connector are skipped, as
    are values that are not JSON objects (with a warning). When several keys decode to
    the same partition (e.g. a Java worker wrote a multi-key map in another order), the
    one whose bytes equal :func:`encode_offset_key`'s — the one a lookup finds — wins.
    """
    found: dict[Any, tuple[dict[str, Any], dict[str, Any], bool]] = {}
    for key, raw_value in store.all().items():
        decoded = decode_offset_key(key)
        if decoded is None or decoded[0] != connector:
            continue
        partition = decoded[1]
        try:
            offset = decode_offset_value(raw_value)
        except DataError as e:
            log.warning("Ignoring unreadable offset for %s partition %s: %s", connector, partition, e)
            continue
        if offset is None:
            continue
        canonical = encode_offset_key(connector, partition) == key
        identity = _freeze(partition)
        previous = found.get(identity)
        if previous is None or canonical or not previous[2]:
            found[identity] = (partition, offset, canonical)
    return [(partition, offset) for partition, offset, _ in found.values()]


def partition_offsets(
    store: OffsetBackingStore, connector: str, partitions: list[dict[str, Any]]
) -> list[dict[str, Any] | None]:
    """The offset of each of ``connector``'s ``partitions`` (decoded JSON objects), in their
    order: ``None`` where none is stored. Partitions are equal as Java's maps are."""
    stored = {_freeze(partition): offset for partition, offset in connector_offsets(store, connector)}
    return [stored.get(_freeze(partition)) for partition in partitions]


def _freeze(value: Any) -> Any:
    """A hashable stand-in with Java's ``equals`` semantics for decoded JSON."""
    if isinstance(value, dict):
        return ("map", frozenset((key, _freeze(item)) for key, item in value.items()))
    if isinstance(value, list):
        return ("list", tuple(_freeze(item) for item in value))
    return (type(value).__name__, value)
