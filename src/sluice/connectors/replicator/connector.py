"""``io.confluent.connect.replicator.ReplicatorSourceConnector`` for Sluice: the connector.

It runs in the worker. At start it reaches both clusters, lists the source topics to
replicate and makes the destination topics follow them (:mod:`.clusters`); then a thread
of its own looks again every ``topic.poll.interval.ms`` (new topics, grown partition
counts) and asks for new task configs when the set of partitions changed, and copies
changed topic configs every ``topic.config.sync.interval.ms``. The partitions are dealt
out to at most ``tasks.max`` tasks, round robin in (topic, partition) order.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from sluice import __version__
from sluice.api.config import Config, ConfigDef, ConfigValue
from sluice.api.connector import Task
from sluice.api.errors import ConfigError, ConnectError
from sluice.api.source import ExactlyOnceSupport, SourceConnector
from sluice.connectors.replicator.clusters import Destination, Source, TopicShape
from sluice.connectors.replicator.config import CONFIG_DEF, ReplicatorConfig, refusals
from sluice.connectors.replicator.task import (
    ASSIGNMENT,
    DESTINATION_CLUSTER_ID,
    SOURCE_CLUSTER_ID,
    ReplicatorSourceTask,
    format_assignment,
)

__all__ = ["ReplicatorSourceConnector"]

log = logging.getLogger(__name__)


class ReplicatorSourceConnector(SourceConnector):
    """Copies topics from a source Kafka cluster to the cluster the worker's producer
    writes to: keys, values, headers, timestamps and partitions byte for byte."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}
        self._config: ReplicatorConfig | None = None
        self._source: Source | None = None
        self._destination: Destination | None = None
        self._shapes: dict[str, TopicShape] = {}  # the topics the task configs cover
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._monitor: threading.Thread | None = None

    def version(self) -> str:
        return __version__

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def task_class(self) -> type[Task]:
        return ReplicatorSourceTask

    def validate(self, connector_configs: dict[str, str]) -> Config:
        config = super().validate(connector_configs)
        values = {v.name: v for v in config.config_values}
        for key, reason in refusals(connector_configs).items():
            value = values.get(key)
            if value is not None:
                value.add_error_message(reason)
            else:  # a framework key (the converters): reported under its own name
                config.config_values.append(ConfigValue(key, connector_configs.get(key), error_messages=[reason]))
        return config

    def start(self, props: dict[str, str]) -> None:
        problems = refusals(props)
        if problems:
            key, reason = next(iter(problems.items()))
            raise ConfigError(key, props.get(key), reason)
        self._props = dict(props)
        self._config = config = ReplicatorConfig.parse(props)
        self._source = Source(config)
        self._destination = Destination(config)
        shapes, _ = self._follow_source()
        self._shapes = shapes
        log.info(
            "Replicating %d topics from cluster %s to cluster %s",
            len(shapes),
            self._source.cluster_id,
            self._destination.cluster_id,
        )
        self._stopping.clear()
        self._monitor = threading.Thread(target=self._watch, name=f"replicator-{props.get('name')}", daemon=True)
        self._monitor.start()

    def _follow_source(self) -> tuple[dict[str, TopicShape], list[str]]:
        """The source topics to replicate whose destination topics exist (created or grown
        as needed), and those whose destination topic could not be created. Raises
        :class:`ConnectError` when one is missing and ``topic.auto.create`` is false."""
        assert self._config is not None and self._source is not None and self._destination is not None
        shapes = self._source.matching_topics()
        changed = {t: s for t, s in shapes.items() if self._shapes.get(t) != s}
        if not changed:
            return shapes, []
        configs = self._source.configs(sorted(changed)) if self._config.config_sync else {}
        missing = self._destination.follow(changed, configs)
        if missing and not self._config.auto_create:
            names = ", ".join(self._config.destination_topic(t) for t in missing)
            raise ConnectError(f"Destination topics do not exist and topic.auto.create is false: {names}")
        return {t: s for t, s in shapes.items() if t not in missing}, missing

    def _watch(self) -> None:
        config = self._config
        assert config is not None
        now = time.monotonic()
        topics_due = now + config.topic_poll_interval_s if config.topic_poll_interval_s else None
        configs_due = now + config.config_sync_interval_s if config.config_sync else None
        retry_due: float | None = None  # destination topics that could not be created
        while True:
            dues = [d for d in (topics_due, configs_due, retry_due) if d is not None]
            if self._stopping.wait(max(0.0, min(dues) - time.monotonic()) if dues else None):
                return
            now = time.monotonic()
            try:
                if (topics_due is not None and now >= topics_due) or (retry_due is not None and now >= retry_due):
                    retry_due = self._look_for_changes(config)
                    if topics_due is not None and now >= topics_due:
                        topics_due = now + config.topic_poll_interval_s
                if configs_due is not None and now >= configs_due:
                    configs_due = now + config.config_sync_interval_s
                    self._sync_configs()
            except ConnectError as exc:
                self.context.raise_error(exc)
                return
            except Exception as exc:  # noqa: BLE001 - a cluster that does not answer now may later
                log.warning("Replicator %s: could not check the source topics: %s", self._props.get("name"), exc)

    def _look_for_changes(self, config: ReplicatorConfig) -> float | None:
        """Follow the source's topics; ask for new task configs when the partitions to copy
        changed. Returns when to retry destination topics that could not be created."""
        shapes, missing = self._follow_source()
        with self._lock:
            changed = shapes != self._shapes
            self._shapes = shapes
        if changed:
            log.info("Replicator %s: the source topics changed; reconfiguring its tasks", self._props.get("name"))
            self.context.request_task_reconfiguration()
        return time.monotonic() + config.create_backoff_s if missing else None

    def _sync_configs(self) -> None:
        assert self._source is not None and self._destination is not None
        with self._lock:
            topics = sorted(self._shapes)
        self._destination.sync_configs(self._source.configs(topics))

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        assert self._source is not None and self._destination is not None
        with self._lock:
            partitions = [(t, p) for t in sorted(self._shapes) for p in range(self._shapes[t].partitions)]
        count = min(max_tasks, len(partitions))
        configs = []
        for task in range(count):
            configs.append(
                {
                    **self._props,
                    ASSIGNMENT: format_assignment(partitions[task::count]),
                    SOURCE_CLUSTER_ID: self._source.cluster_id,
                    DESTINATION_CLUSTER_ID: self._destination.cluster_id,
                }
            )
        return configs

    def stop(self) -> None:
        self._stopping.set()
        if self._monitor is not None:
            self._monitor.join(timeout=60)
            self._monitor = None
        self._source = self._destination = None

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport | None:
        return ExactlyOnceSupport.UNSUPPORTED

    def alter_offsets(self, connector_config: dict[str, str], offsets: Any) -> bool:
        """Accept offsets of the form ``{"topic": T, "partition": P}`` →
        ``{"offset": N}`` (the source offset of the last record copied), or null."""
        pairs = offsets.items() if hasattr(offsets, "items") else offsets
        for partition, offset in pairs:
            partition = dict(partition) if partition is not None and not isinstance(partition, dict) else partition
            if not isinstance(partition, dict) or not isinstance(partition.get("topic"), str):
                raise ConnectError("Partition objects must hold the source topic under 'topic'")
            if not _is_int(partition.get("partition")):
                raise ConnectError("Partition objects must hold the source partition under 'partition'")
            if offset is not None and (not _is_int(offset.get("offset")) or offset["offset"] < -1):
                raise ConnectError("Offset objects must be null or hold a Kafka offset (>= -1) under 'offset'")
        return True


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
