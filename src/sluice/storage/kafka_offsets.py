"""Source offsets in a Kafka topic (``offset.storage.topic``), in Kafka Connect's format (spec 5.3).

Each record's key is the JSON ``[<connector>,<source partition>]`` and its value the JSON
source offset, both the exact bytes :mod:`sluice.kafka.offset_format` produces (and a
Java worker writes); a tombstone deletes a partition's offset. Keys are partitioned with
the Java producer's murmur2 hash, so a Java and a Sluice worker write the same key to
the same partition and compaction keeps only the newest.

The store mirrors ``KafkaOffsetBackingStore``: :meth:`KafkaOffsetBackingStore.start`
creates the topic if needed (compacted, ``partitions`` and ``replication_factor``) and
reads it whole; :meth:`~KafkaOffsetBackingStore.set` returns once the brokers
acknowledged every record; :meth:`~KafkaOffsetBackingStore.get` and
:meth:`~KafkaOffsetBackingStore.all` first read the topic to its current end, so they
see every write acknowledged before they were called, from any worker.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from sluice.api.errors import IllegalWorkerStateError
from sluice.storage.base import OffsetBackingStore
from sluice.storage.kafka_log import ConsumedRecord, KafkaBasedLog, TopicSettings
from sluice.storage.memory import _check_key, _check_value

__all__ = ["DEFAULT_OFFSET_PARTITIONS", "KafkaOffsetBackingStore"]

log = logging.getLogger(__name__)

#: ``offset.storage.partitions`` and ``offset.storage.replication.factor`` defaults.
DEFAULT_OFFSET_PARTITIONS = 25
DEFAULT_REPLICATION_FACTOR = 3


class KafkaOffsetBackingStore(OffsetBackingStore):
    """Raw offset bytes in a compacted topic. Thread-safe.

    ``client_config`` holds librdkafka settings (at least ``bootstrap.servers``).
    ``topic_config`` adds topic-level settings used when the topic is created. With
    ``read_committed``, offsets written in transactions are read once committed (and
    never when aborted).
    """

    def __init__(
        self,
        topic: str,
        client_config: Mapping[str, Any],
        *,
        partitions: int = DEFAULT_OFFSET_PARTITIONS,
        replication_factor: int = DEFAULT_REPLICATION_FACTOR,
        topic_config: Mapping[str, str] | None = None,
        client_id: str = "sluice-offsets",
        timeout: float = 30.0,
        read_committed: bool = False,
    ) -> None:
        if not topic or not topic.strip():
            raise ValueError("Must specify topic for source connector offsets.")
        self.topic = topic
        self.timeout = timeout
        self._lock = threading.RLock()
        self._data: dict[bytes, bytes] = {}
        self._log = KafkaBasedLog(
            TopicSettings(
                topic,
                partitions=partitions,
                replication_factor=replication_factor,
                config=dict(topic_config or {}),
                worker_config_key="offset.storage.topic",
                purpose="source connector offsets",
            ),
            client_config,
            self._on_record,
            client_id=client_id,
            # offsets that exactly-once tasks wrote in transactions count once committed
            consumer_config={"isolation.level": "read_committed"} if read_committed else None,
        )
        self._started = False

    @property
    def kafka_log(self) -> KafkaBasedLog:
        return self._log

    def start(self) -> None:
        log.info("Starting KafkaOffsetBackingStore with topic '%s'", self.topic)
        self._log.start(timeout=max(self.timeout, 60.0))
        self._started = True
        log.info("Finished reading offsets topic '%s'", self.topic)

    def stop(self) -> None:
        self._started = False
        self._log.stop()

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        checked = [_check_key(key) for key in keys]
        self._read_to_end()
        with self._lock:
            return {key: self._data.get(key) for key in checked}

    def set(self, values: dict[bytes, bytes | None]) -> None:
        records = [(_check_key(key), _check_value(value)) for key, value in values.items()]
        self._check_started()
        if records:
            self._log.write(records, timeout=self.timeout)

    def all(self) -> dict[bytes, bytes]:
        self._read_to_end()
        with self._lock:
            return dict(self._data)

    # ------------------------------------------------------------------ internals

    def _check_started(self) -> None:
        if not self._started:
            raise IllegalWorkerStateError(f"KafkaOffsetBackingStore for topic '{self.topic}' is not started")

    def _read_to_end(self) -> None:
        self._check_started()
        self._log.read_to_end(timeout=self.timeout)

    def _on_record(self, record: ConsumedRecord) -> None:
        if record.key is None:
            log.debug("Ignoring an offset record without a key at offset %d", record.offset)
            return
        with self._lock:
            if record.value is None:
                self._data.pop(record.key, None)
            else:
                self._data[record.key] = record.value
