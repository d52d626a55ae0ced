"""Reading, altering and resetting a connector's offsets through the REST API.

Source connectors: the partitions and offsets in the worker's offset store.
Sink connectors: the committed offsets of the connector's consumer group
(``connect-<name>`` or ``consumer.override.group.id``), read and changed with the
admin client. Both only while the connector is STOPPED (the herder checks that).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

from sluice.api.errors import ConnectError
from sluice.kafka.offset_format import encode_offset_key, encode_offset_value
from sluice.runtime.herder.base import BadRequestError, ConnectRestError
from sluice.storage.base import OffsetBackingStore
from sluice.storage.offset_codec import connector_offsets

log = logging.getLogger(__name__)

__all__ = [
    "KAFKA_OFFSET_KEY",
    "KAFKA_PARTITION_KEY",
    "KAFKA_TOPIC_KEY",
    "SinkGroupOffsets",
    "offsets_message",
    "parse_sink_offsets",
    "parse_source_offsets",
    "source_offsets",
    "write_source_offsets",
]

KAFKA_TOPIC_KEY = "kafka_topic"
KAFKA_PARTITION_KEY = "kafka_partition"
KAFKA_OFFSET_KEY = "kafka_offset"

SinkOffsets = dict[tuple[str, int], "int | None"]


def offsets_message(connector_managed: bool, verb: str) -> str:
    """The success message of PATCH (``verb="altered"``) and DELETE (``"reset"``)."""
    if connector_managed:
        return f"The offsets for this connector have been {verb} successfully"
    return (
        f"The Connect framework-managed offsets for this connector have been {verb} successfully. However, if this "
        f"connector manages offsets externally, they will need to be manually {verb} in the system that the "
        "connector uses."
    )


# -- parsing request bodies ---------------------------------------------------------------


def _java_text(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _as_int(value: Any, what: str, bits: int) -> int:
    """Kafka accepts numbers and numeric strings (``Integer.parseInt(String.valueOf(v))``)."""
    text = _java_text(value)
    try:
        if isinstance(value, bool) or text.strip() != text or text.startswith("+") and len(text) == 1:
            raise ValueError
        number = int(text, 10)
        if not -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
            raise ValueError
    except ValueError:
        noun = "partition" if what == "partition" else "offset"
        raise BadRequestError(
            f"Failed to parse the following Kafka {noun} value in the provided offsets: '{text}'. "
            f"{noun.capitalize()} values for sink connectors need to be integers."
        ) from None
    return number


def parse_sink_offsets(entries: list[dict[str, Any]]) -> SinkOffsets:
    """``{(topic, partition): offset or None}`` from a PATCH body's ``offsets``."""
    parsed: SinkOffsets = {}
    for entry in entries:
        partition = entry.get("partition")
        if partition is None:
            raise BadRequestError("The partition for a sink connector offset cannot be null or missing")
        if not isinstance(partition, dict) or KAFKA_TOPIC_KEY not in partition or KAFKA_PARTITION_KEY not in partition:
            raise BadRequestError(
                f"The partition for a sink connector offset must contain the keys '{KAFKA_TOPIC_KEY}' and "
                f"'{KAFKA_PARTITION_KEY}'"
            )
        topic = partition[KAFKA_TOPIC_KEY]
        if not isinstance(topic, str):
            raise BadRequestError("Kafka topic names must be valid strings and may not be null")
        if partition[KAFKA_PARTITION_KEY] is None:
            raise BadRequestError("Kafka partitions must be valid numbers and may not be null")
        number = _as_int(partition[KAFKA_PARTITION_KEY], "partition", 32)
        offset = entry.get("offset")
        if offset is None:
            parsed[(topic, number)] = None
            continue
        if not isinstance(offset, dict) or KAFKA_OFFSET_KEY not in offset:
            raise BadRequestError(
                f"The offset for a sink connector should either be null or contain the key '{KAFKA_OFFSET_KEY}'"
            )
        value = _as_int(offset[KAFKA_OFFSET_KEY], "offset", 64)
        if value < 0:
            raise BadRequestError("Kafka offsets must be non-negative")
        parsed[(topic, number)] = value
    return parsed


def _primitive(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def parse_source_offsets(entries: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """``[(partition, offset or None)]`` from a PATCH body; maps of primitives only."""
    parsed = []
    for entry in entries:
        partition = entry.get("partition")
        offset = entry.get("offset")
        if partition is None:
            raise BadRequestError("Source partitions may not be null")
        for what, value in (("partition", partition), ("offset", offset)):
            if value is None:
                continue
            if not isinstance(value, dict) or not all(isinstance(k, str) and _primitive(v) for k, v in value.items()):
                raise ConnectRestError(
                    500,
                    f"Offsets may only contain primitive types as values, but field {what} contains a map or list: "
                    f"{json.dumps(value)}",
                )
        parsed.append((partition, offset))
    return parsed


# -- source offsets (the worker's offset store) ----------------------------------------------


def source_offsets(store: OffsetBackingStore, connector: str) -> list[dict[str, Any]]:
    return [{"partition": p, "offset": o} for p, o in connector_offsets(store, connector)]


def write_source_offsets(
    store: OffsetBackingStore, connector: str, offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
) -> None:
    """Write offsets (``None`` = tombstone) in one flush, JSON-normalised as Kafka does."""
    updates = {
        encode_offset_key(connector, json.loads(json.dumps(p))): encode_offset_value(
            None if o is None else json.loads(json.dumps(o))
        )
        for p, o in offsets
    }
    store.set(updates)


# -- sink offsets (the connector's consumer group) ----------------------------------------------


class SinkGroupOffsets:
    """A connector's consumer-group offsets, through the admin client."""

    def __init__(self, admin_factory: Callable[[], AdminClient], timeout_s: float = 30.0) -> None:
        self._admin_factory = admin_factory
        self._timeout_s = timeout_s

    def list(self, group: str) -> dict[tuple[str, int], int]:
        admin = self._admin_factory()
        futures = admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group)], request_timeout=self._timeout_s
        )
        result = futures[group].result(timeout=self._timeout_s)
        return {
            (tp.topic, tp.partition): tp.offset
            for tp in result.topic_partitions or []
            if tp.offset >= 0 and tp.error is None
        }

    def alter(self, group: str, changes: SinkOffsets) -> None:
        """Commit the new offsets; ``None`` removes a partition's committed offset.

        The Python admin client cannot delete single partitions' offsets, so removing
        some means: remember the others, delete the (empty) group, commit them back.
        """
        removals = {tp for tp, offset in changes.items() if offset is None}
        keep = {tp: o for tp, o in changes.items() if o is not None}
        if removals:
            current = self.list(group)
            if not any(tp in current for tp in removals):
                removals = set()
            else:
                for tp, offset in current.items():
                    if tp not in removals:
                        keep.setdefault(tp, offset)
                self.delete_group(group)
        if keep:
            admin = self._admin_factory()
            request = ConsumerGroupTopicPartitions(
                group, [TopicPartition(t, p, o) for (t, p), o in sorted(keep.items())]
            )
            futures = admin.alter_consumer_group_offsets([request], request_timeout=self._timeout_s)
            result = futures[group].result(timeout=self._timeout_s)
            for tp in result.topic_partitions or []:
                if tp.error is not None:
                    raise ConnectError(f"Failed to alter offset of {tp.topic}-{tp.partition}: {tp.error}")

    def delete_group(self, group: str) -> None:
        """Delete the group; a group that does not exist counts as deleted."""
        admin = self._admin_factory()
        futures = admin.delete_consumer_groups([group], request_timeout=self._timeout_s)
        try:
            futures[group].result(timeout=self._timeout_s)
        except KafkaException as exc:
            error = exc.args[0] if exc.args else None
            if isinstance(error, KafkaError) and error.code() == KafkaError.GROUP_ID_NOT_FOUND:
                return
            raise
