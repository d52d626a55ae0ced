"""The Replicator's task: reads its share of the source partitions with librdkafka and
returns each record as a :class:`SourceRecord` that the byte-array converters write
unchanged — key, value, headers, timestamp and (with ``topic.preserve.partitions``) the
partition.

Offsets: the source partition is ``{"topic": <source topic>, "partition": <n>}`` and the
offset of a record ``{"offset": <its offset in the source partition>}``; a new instance
starts after the stored offset. Without one it starts where ``offset.start`` says.

Provenance (``provenance.header.enable``): a record without a ``__replicator_id`` header
gets one, ``<origin cluster id>,<origin topic>,<ms since the epoch when first copied>``; a
record whose header names the destination cluster and the destination topic came from
there, and is not copied back.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from confluent_kafka import KafkaError

from sluice import __version__
from sluice.api.data import Schema
from sluice.api.errors import ConnectError
from sluice.api.records import Header, Headers, SourceRecord
from sluice.api.source import SourceTask, partition_key
from sluice.connectors.replicator.config import ReplicatorConfig
from sluice.kafka.errors import ends_task
from sluice.kafka.settings import consumer_settings, librdkafka_consumer_config

__all__ = [
    "ASSIGNMENT",
    "DESTINATION_CLUSTER_ID",
    "PROVENANCE_HEADER",
    "SOURCE_CLUSTER_ID",
    "ReplicatorSourceTask",
    "format_assignment",
    "parse_assignment",
]

log = logging.getLogger(__name__)

# Task config keys the connector adds to its own.
ASSIGNMENT = "replicator.task.partitions"
SOURCE_CLUSTER_ID = "replicator.source.cluster.id"
DESTINATION_CLUSTER_ID = "replicator.destination.cluster.id"

PROVENANCE_HEADER = "__replicator_id"

_BYTES = Schema.OPTIONAL_BYTES_SCHEMA
_POLL_TIMEOUT_S = 0.5  # how long an idle poll waits for records
#: Records one poll returns at most, unless src.consumer.max.poll.records says otherwise:
#: more than a Java consumer's 500, as each poll's batch is converted and produced at once.
_DEFAULT_BATCH = 10_000


def format_assignment(partitions: list[tuple[str, int]]) -> str:
    """``topic:partition`` pairs, comma separated (Kafka topic names hold neither)."""
    return ",".join(f"{topic}:{partition}" for topic, partition in partitions)


def parse_assignment(text: str) -> list[tuple[str, int]]:
    out = []
    for item in text.split(","):
        if item:
            topic, _, partition = item.rpartition(":")
            out.append((topic, int(partition)))
    return out


class ReplicatorSourceTask(SourceTask):
    """Copies records of the source partitions in ``replicator.task.partitions``."""

    def __init__(self) -> None:
        self._consumer: Any = None
        self._config: ReplicatorConfig | None = None
        self._partitions: dict[tuple[str, int], dict[str, Any]] = {}  # one dict each, shared by its records
        self._targets: dict[str, str] = {}  # source topic -> destination topic
        self._batch = _DEFAULT_BATCH
        self._source_cluster = ""
        self._destination_cluster = ""
        self._committed: dict[tuple[str, int], int] = {}  # offsets committed to the source cluster

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, TopicPartition

        self._config = config = ReplicatorConfig.parse(props)
        self._source_cluster = props.get(SOURCE_CLUSTER_ID, "")
        self._destination_cluster = props.get(DESTINATION_CLUSTER_ID, "")
        assigned = parse_assignment(props.get(ASSIGNMENT, ""))
        self._partitions = {(t, p): {"topic": t, "partition": p} for t, p in assigned}
        self._targets = {t: config.destination_topic(t) for t, _ in assigned}
        consumer_config = config.source_consumer
        self._batch = int(consumer_config.get("max.poll.records", _DEFAULT_BATCH))
        name = props.get("name", "replicator")
        # its group (src.consumer.group.id, by default the connector's name) only holds the
        # offsets committed to the source cluster: partitions are assigned, not subscribed
        settings = consumer_settings(
            name,
            0,
            {"group.id": name, "client.id": f"replicator-{name}", **librdkafka_consumer_config(consumer_config)},
        )
        self._consumer = Consumer(settings)
        positions = {key: offset + 1 for key, offset in self._stored_offsets().items()}
        if config.offset_start == "consumer":
            unknown = [TopicPartition(t, p) for (t, p) in self._partitions if (t, p) not in positions]
            if unknown:
                for tp in self._consumer.committed(unknown, timeout=30):
                    if tp.offset >= 0:
                        positions[(tp.topic, tp.partition)] = tp.offset
        default = OFFSET_END if str(settings["auto.offset.reset"]).lower() == "latest" else OFFSET_BEGINNING
        self._consumer.assign([TopicPartition(t, p, positions.get((t, p), default)) for (t, p) in self._partitions])
        log.info("Replicator task copying %d partitions: %s", len(self._partitions), props.get(ASSIGNMENT, ""))

    def poll(self) -> list[SourceRecord] | None:
        if not self._partitions:
            time.sleep(_POLL_TIMEOUT_S)
            return None
        messages = self._consumer.consume(self._batch, _POLL_TIMEOUT_S)
        if not messages:
            return None
        config = self._config
        assert config is not None
        preserve = config.preserve_partitions
        provenance = config.provenance
        partitions, targets = self._partitions, self._targets
        records: list[SourceRecord] = []
        append = records.append
        for message in messages:
            error = message.error()
            if error is not None:
                self._on_error(error)
                continue
            topic, partition = message.topic(), message.partition()
            stamp_type, stamp = message.timestamp()
            headers = message.headers()
            target = targets[topic]
            if provenance:
                headers = self._with_provenance(headers, topic, target)
                if headers is None:
                    continue  # it came from the destination topic: no loop
            append(
                SourceRecord(
                    partitions[(topic, partition)],
                    {"offset": message.offset()},
                    target,
                    partition if preserve else None,
                    _BYTES,
                    message.key(),
                    _BYTES,
                    message.value(),
                    stamp if stamp_type and stamp >= 0 else None,
                    Headers([Header(k, v, _BYTES) for k, v in headers]) if headers else None,
                )
            )
        return records

    def _with_provenance(
        self, headers: list[tuple[str, bytes | None]] | None, topic: str, target: str
    ) -> list[tuple[str, bytes | None]] | None:
        """The headers to write, with provenance; ``None`` when the record must not be copied."""
        for key, value in headers or ():
            if key == PROVENANCE_HEADER and value is not None:
                origin_cluster, _, rest = value.decode("utf-8", "replace").partition(",")
                origin_topic = rest.partition(",")[0]
                if origin_cluster == self._destination_cluster and origin_topic == target:
                    return None
                return headers
        stamp = f"{self._source_cluster},{topic},{int(time.time() * 1000)}".encode()
        return [*(headers or ()), (PROVENANCE_HEADER, stamp)]

    def _on_error(self, error: Any) -> None:
        if ends_task(error) or error.code() in _UNAUTHORIZED:
            raise ConnectError(f"The replicator's source consumer failed: {error.str()}")
        log.warning("Replicator source consumer: %s", error.str())

    def commit(self) -> None:
        """With ``offset.topic.commit``: the source offsets Connect stored, committed to the
        source cluster in the consumer group (``src.consumer.group.id``) too."""
        self._commit_to_source(asynchronous=True)

    def _commit_to_source(self, asynchronous: bool) -> None:
        from confluent_kafka import TopicPartition

        if self._config is None or not self._config.offset_topic_commit or self._consumer is None:
            return
        changed = []
        for key, offset in self._stored_offsets().items():
            if self._committed.get(key) != offset:
                changed.append(TopicPartition(key[0], key[1], offset + 1))
                self._committed[key] = offset
        if changed:
            self._consumer.commit(offsets=changed, asynchronous=asynchronous)

    def _stored_offsets(self) -> dict[tuple[str, int], int]:
        """The stored source offset (the last record copied) of each partition that has one."""
        stored = self.context.offset_storage_reader().offsets(list(self._partitions.values()))
        out = {}
        for key, partition in self._partitions.items():
            offset = stored.get(partition_key(partition))
            value = offset.get("offset") if offset else None
            if isinstance(value, int) and not isinstance(value, bool):
                out[key] = value
        return out

    def stop(self) -> None:
        if self._consumer is None:
            return
        try:
            self._commit_to_source(asynchronous=False)
        except Exception:
            log.warning("Could not commit the replicator's offsets to the source cluster", exc_info=True)
        finally:
            consumer, self._consumer = self._consumer, None
            consumer.close()


_UNAUTHORIZED = frozenset({KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.GROUP_AUTHORIZATION_FAILED})
