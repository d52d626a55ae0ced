"""Composition root of a distributed worker: Kafka-backed stores, Spark, worker, group
membership, herder and REST.

Start-up order: Spark starts in the background, the three stores read their topics to
the end, then the REST server binds (its advertised address is the worker id and the URL
other workers forward to) and the herder joins the group and runs what it is assigned.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from sluice.cli.connect import KafkaClusterId, build_rest_server, spark_and_plugins
from sluice.kafka.security import ClientSecurity, check_authentication
from sluice.runtime.config import WorkerConfig
from sluice.runtime.config.worker import EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG
from sluice.runtime.config_transformer import ConfigProviders
from sluice.runtime.connector_offsets import ConnectorOffsetStores
from sluice.runtime.distributed.member import ConfigSnapshot, WorkerGroupMember
from sluice.runtime.herder.distributed import DistributedHerder
from sluice.runtime.worker import Worker
from sluice.storage.kafka_config import KafkaConfigBackingStore
from sluice.storage.kafka_offsets import KafkaOffsetBackingStore
from sluice.storage.kafka_status import KafkaStatusBackingStore

log = logging.getLogger(__name__)

__all__ = ["DistributedConnect"]


def _topic_settings(config: WorkerConfig, kind: str) -> dict[str, str]:
    """``<kind>.storage.<topic setting>`` keys: extra settings for creating the topic."""
    prefix = f"{kind}.storage."
    own = {"topic", "partitions", "replication.factor"}
    return {
        k[len(prefix) :]: v
        for k, v in config.raw.items()
        if k.startswith(prefix) and k[len(prefix) :] not in own and k[len(prefix) :] != "cleanup.policy"
    }


def _announce_exactly_once(config: WorkerConfig) -> None:
    """Say how this worker delivers source records."""
    support = config.exactly_once_source_support
    if support == "enabled":
        log.info("%s=enabled: source tasks deliver exactly once, in transactions", EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG)
    if support == "preparing":
        log.info(
            "%s=preparing: source records are delivered at least once, as with disabled; the leader "
            "writes the config topic in transactions",
            EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG,
        )


class DistributedConnect:
    """A distributed worker process's parts, started and stopped as one."""

    def _offset_store(self, topic: str, client: dict[str, str], client_id: str) -> KafkaOffsetBackingStore:
        """An offsets topic on the cluster of ``client``, with the worker's offsets topic
        settings (created with them when missing)."""
        return KafkaOffsetBackingStore(
            topic,
            client,
            partitions=self.config.get("offset.storage.partitions"),
            replication_factor=self.config.get("offset.storage.replication.factor"),
            topic_config=_topic_settings(self.config, "offset"),
            client_id=client_id,
            read_committed=self.config.exactly_once_source,
        )

    def _connector_offset_store(self, topic: str, client: dict[str, str]) -> KafkaOffsetBackingStore:
        """A connector's own offsets topic on its producer's cluster (``client``), read to
        its end."""
        store = self._offset_store(topic, client, f"{self.config.get('group.id')}-offsets-{topic}")
        store.start()
        return store

    def __init__(self, worker_props: dict[str, str], spark_factory: Callable[[], Any] | None = None) -> None:
        self.config = WorkerConfig.distributed(worker_props)
        _announce_exactly_once(self.config)
        # The worker's own clients (internal topics, group membership) use its top-level
        # security settings, as Kafka's do; an untranslatable one stops the start here.
        self.security = ClientSecurity.from_java(self.config.raw, "the worker's Kafka clients")
        self.spark, self.plugins = spark_and_plugins(self.config, spark_factory)  # Spark next
        client = self._client = {"bootstrap.servers": self.config.bootstrap_servers, **self.security.librdkafka()}
        group = self.config.get("group.id")
        self.config_store = KafkaConfigBackingStore(
            self.config.get("config.storage.topic"),
            client,
            replication_factor=self.config.get("config.storage.replication.factor"),
            topic_config=_topic_settings(self.config, "config"),
            client_id=f"{group}-configs",
            leader_transactional_id=f"connect-cluster-{group}" if self.config.transactional_leader else None,
            read_committed=self.config.exactly_once_source,
        )
        self.offset_store = self._offset_store(self.config.get("offset.storage.topic"), client, f"{group}-offsets")
        self.status_store = KafkaStatusBackingStore(
            self.config.get("status.storage.topic"),
            client,
            partitions=self.config.get("status.storage.partitions"),
            replication_factor=self.config.get("status.storage.replication.factor"),
            topic_config=_topic_settings(self.config, "status"),
            client_id=f"{group}-statuses",
        )
        self.config_providers = ConfigProviders.from_worker_config(worker_props)
        self.worker = Worker(
            "",
            self.config,
            self.plugins,
            self.offset_store,
            self.status_store,
            self.spark,
            config_providers=self.config_providers,
            connector_offsets=ConnectorOffsetStores(self.config, self.offset_store, self._connector_offset_store),
        )
        from sluice.rest.forwarding import internal_request_sender  # as build_rest_server imports the REST layer
        from sluice.rest.tls import WorkerTls

        # One TLS setup for the REST server and the herder's requests to other workers: both
        # reach other workers with the same client context, built once.
        tls = WorkerTls(self.config.raw)
        self.herder = DistributedHerder(
            self.worker,
            self.config_store,
            self.status_store,
            KafkaClusterId(self.config.bootstrap_servers, self.security.librdkafka()),
            member_factory=self._member,
            internal_requests=internal_request_sender(tls.client_context),
        )
        self.rest = build_rest_server(self.herder, self.config, tls)
        self._stopped = threading.Event()
        self.interrupted = threading.Event()  # set when the worker is to stop (a signal, or it cannot run)
        self.fatal_error: BaseException | None = None
        self.herder.fatal = self._fatal
        self.herder.start_reporters()  # metric.reporters: one that cannot be made stops the worker here

    def _member(self, herder: DistributedHerder, snapshot: Callable[[], ConfigSnapshot]) -> WorkerGroupMember:
        return WorkerGroupMember(
            bootstrap_servers=self.config.bootstrap_servers,
            group_id=self.config.get("group.id"),
            worker_url=self.rest.advertised_url,
            listener=herder,
            config_snapshot=snapshot,
            session_timeout_ms=self.config.get("session.timeout.ms"),
            heartbeat_interval_ms=self.config.get("heartbeat.interval.ms"),
            rebalance_timeout_ms=self.config.get("rebalance.timeout.ms"),
            scheduled_rebalance_max_delay_ms=self.config.get("scheduled.rebalance.max.delay.ms"),
            protocol=self.config.get("connect.protocol"),
            client_config=self.security.kafka_python(),
        )

    def _fatal(self, error: BaseException) -> None:
        self.fatal_error = error
        self.interrupted.set()

    def start(self) -> None:
        """Start the stores and the REST API, and the engine in the background; the
        herder joins the group once the engine can run a task (``GET /health``: 503
        until the first assignment)."""
        # Every store reads its topic to the end before the REST API answers from it.
        self.worker.start_engine()
        if self.security.protocol != "PLAINTEXT":
            # a refused login names itself here rather than as a store's timeout
            check_authentication(self._client)
        self.config_store.start()
        self.offset_store.start()
        self.status_store.start()
        self.rest.start()
        self.worker.worker_id = self.rest.worker_id
        log.info("REST API listening on %s (worker id %s)", self.rest.url, self.worker.worker_id)
        self.herder.start()
        self.herder.ready()

    def stop(self) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        log.info("Stopping the distributed worker")
        try:
            self.herder.close_reporters()
            self.herder.stop()
        finally:
            try:
                self.rest.stop()
            finally:
                self.worker.close()
                self.spark.stop()
                for store in (self.status_store, self.offset_store, self.config_store):
                    try:
                        store.stop()
                    except Exception:
                        log.warning("Could not stop %s cleanly", type(store).__name__, exc_info=True)
                self.config_providers.close()

    @property
    def url(self) -> str:
        return str(self.rest.url)
