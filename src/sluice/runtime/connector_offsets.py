"""Where a source connector's offsets live on a distributed worker (Kafka's
``ConnectorOffsetBackingStore``, KIP-618).

By default, in the worker's offsets topic. A connector with ``offsets.storage.topic``, or
whose producer writes to another Kafka cluster than the worker's (``producer.override.
bootstrap.servers``), keeps them in a topic of its own on its producer's cluster — the topic
it names, else one named as the worker's — created when missing with the worker's offsets
topic settings. Reads then look there first and fall back to the worker's topic (offsets a
connector stored before it had a topic of its own); writes go to both, the worker's as a
backup, as Kafka writes them. A standalone worker has only its offsets file (Kafka's
``offsets.storage.topic`` has no effect there).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping

from sluice.runtime.config import WorkerConfig
from sluice.runtime.config.keys import OFFSETS_TOPIC_CONFIG
from sluice.storage.base import OffsetBackingStore

log = logging.getLogger(__name__)

__all__ = ["ConnectorOffsetStore", "ConnectorOffsetStores", "StoreFactory", "client_settings"]

#: Makes (and starts) the offset store of a topic on a cluster: ``(topic, librdkafka client
#: settings)``.
StoreFactory = Callable[[str, dict[str, str]], OffsetBackingStore]

# librdkafka settings that say where a cluster is and how to reach it
_CLIENT_PREFIXES = ("bootstrap.servers", "security.", "sasl.", "ssl.", "client.dns.lookup")


def client_settings(producer: Mapping[str, str]) -> dict[str, str]:
    """The settings of ``producer`` (librdkafka's) that any client of its cluster needs."""
    return {key: value for key, value in producer.items() if key.startswith(_CLIENT_PREFIXES)}


class ConnectorOffsetStore(OffsetBackingStore):
    """A connector's own offsets topic (``primary``), backed by the worker's (``secondary``)."""

    def __init__(self, primary: OffsetBackingStore, secondary: OffsetBackingStore, topic: str) -> None:
        self.primary = primary
        self.secondary = secondary
        self.topic = topic

    def start(self) -> None:
        """Nothing: both stores are started (and stopped) by their owners."""

    def stop(self) -> None:
        """Nothing: both stores are started (and stopped) by their owners."""

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        found = self.primary.get(keys)
        missing = [key for key in keys if found.get(key) is None]
        if missing:
            for key, value in self.secondary.get(missing).items():
                if value is not None:
                    found[key] = value
        return found

    def set(self, values: dict[bytes, bytes | None]) -> None:
        self.primary.set(values)
        self.back_up(values)

    def back_up(self, values: dict[bytes, bytes | None]) -> None:
        """Write ``values`` to the worker's offsets topic only (best effort, as Kafka's)."""
        try:
            self.secondary.set(values)
        except Exception as exc:  # noqa: BLE001 - the connector's own topic holds them
            log.warning("Could not back up offsets of topic %s to the worker's offsets topic: %s", self.topic, exc)

    def all(self) -> dict[bytes, bytes]:
        return {**self.secondary.all(), **self.primary.all()}


class ConnectorOffsetStores:
    """The offset store of each source connector of a distributed worker."""

    def __init__(self, worker_config: WorkerConfig, worker_store: OffsetBackingStore, make_store: StoreFactory) -> None:
        self._worker_topic = str(worker_config.get("offset.storage.topic"))
        self._worker_bootstrap = worker_config.bootstrap_servers
        self._worker_store = worker_store
        self._make_store = make_store
        self._lock = threading.Lock()
        self._stores: dict[tuple[str, str], OffsetBackingStore] = {}

    def topic_of(self, connector_config: Mapping[str, str], producer: Mapping[str, str]) -> tuple[str, bool]:
        """The connector's offsets topic and whether it is the worker's own."""
        topic = (connector_config.get(OFFSETS_TOPIC_CONFIG) or "").strip() or self._worker_topic
        bootstrap = str(producer.get("bootstrap.servers", self._worker_bootstrap))
        return topic, topic == self._worker_topic and bootstrap == self._worker_bootstrap

    def for_connector(self, connector_config: Mapping[str, str], producer: Mapping[str, str]) -> OffsetBackingStore:
        """The store of a connector whose producer has the librdkafka settings ``producer``."""
        topic, workers = self.topic_of(connector_config, producer)
        if workers:
            return self._worker_store
        client = client_settings(producer)
        key = (client.get("bootstrap.servers", ""), topic)
        with self._lock:
            store = self._stores.get(key)
            if store is None:
                store = self._stores[key] = self._make_store(topic, client)
        return ConnectorOffsetStore(store, self._worker_store, topic)

    def close(self) -> None:
        with self._lock:
            stores, self._stores = list(self._stores.values()), {}
        for store in stores:
            try:
                store.stop()
            except Exception:
                log.warning("Could not close a connector's offset store", exc_info=True)
