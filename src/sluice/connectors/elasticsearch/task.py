"""Confluent's ``ElasticsearchSinkConnector`` and its task.

A task turns each ``put``'s records into bulk actions and sends them on ``max.in.flight.requests``
lanes, each lane one request at a time; a document always goes by the same lane (chosen by its
id), so two writes of one document are never under way at once and arrive in record order.
The requests of one ``put`` stay under way while the worker reads and converts the next
records; the next ``put`` sends its own, then waits for them, reports the refused records
(the dead letter queue) and lets their offsets be committed. So no offset is committed before
the cluster acknowledged its record, and a crash replays at most the unacknowledged ones —
which, written again with the Kafka offset as external version, never overwrite a newer
document with an older one.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass

from sluice import __version__
from sluice.api import (
    ConfigDef,
    ConfigError,
    ConnectError,
    DataError,
    Schema,
    SinkConnector,
    SinkRecord,
    SinkTask,
    Task,
    TopicPartition,
)
from sluice.api.config import Config, ConfigValue
from sluice.api.records import SinkBatch
from sluice.connectors.elasticsearch.client import BulkOutcome, ClusterClient, ItemFailure
from sluice.connectors.elasticsearch.config import CONFIG_DEF, CONNECTION_URL, Settings, cross_check, unsupported
from sluice.connectors.elasticsearch.documents import Action, DocumentMaker, mapping_for

__all__ = ["ElasticsearchSinkConnector", "ElasticsearchSinkTask"]

log = logging.getLogger(__name__)


class ElasticsearchSinkConnector(SinkConnector):
    """Writes records to Elasticsearch or OpenSearch indices (or data streams); every task
    gets the same config."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return __version__

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def task_class(self) -> type[Task]:
        return ElasticsearchSinkTask

    def start(self, props: dict[str, str]) -> None:
        Settings.parse(props)  # a bad config fails the connector, not only its tasks
        self._props = dict(props)

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass

    def validate(self, connector_configs: dict[str, str]) -> Config:
        result = super().validate(connector_configs)
        for key in unsupported(connector_configs):  # not defined, so not among the values yet
            if all(cv.name != key for cv in result.config_values):
                result.config_values.append(ConfigValue(key, connector_configs[key]))
        by_name = {cv.name: cv for cv in result.config_values}
        for keys, message in cross_check({name: cv.value for name, cv in by_name.items()}):
            for key in keys:
                if key in by_name:
                    by_name[key].add_error_message(message)
        if any(cv.error_messages for cv in result.config_values):
            return result
        url = by_name.get(CONNECTION_URL)
        try:
            settings = Settings.parse(connector_configs)
            client = ClusterClient(settings.with_no_retries())
            try:
                client.info()
            finally:
                client.close()
        except (ConnectError, ConfigError) as e:  # reported on the URL, as Confluent's Validator does
            if url is not None:
                url.add_error_message(f"Could not connect to Elasticsearch. {e}")
        return result


@dataclass
class _Put:
    """The requests of one ``put`` under way, and the offsets they let commit."""

    futures: list[Future[BulkOutcome]]
    records: int
    offsets: dict[TopicPartition, int]


class ElasticsearchSinkTask(SinkTask):
    """Sends records to the cluster in bulk (see the module's description)."""

    def __init__(self) -> None:
        self.client: ClusterClient | None = None
        self.lanes: list[ThreadPoolExecutor] = []
        self.under_way: _Put | None = None
        self.acknowledged: dict[TopicPartition, int] = {}
        self.stopping = threading.Event()
        self.ready: set[str] = set()  # indices and data streams known to exist

    def version(self) -> str:
        return __version__

    def start(self, props: dict[str, str]) -> None:
        self.settings = Settings.parse(props)
        self.documents = DocumentMaker(self.settings)
        self.client = ClusterClient(self.settings, self.stopping)
        info = self.client.info()
        version = info.get("version") or {}
        log.info(
            "Writing to %s %s (cluster %s)",
            version.get("distribution", "elasticsearch"),
            version.get("number", "?"),
            info.get("cluster_name", "?"),
        )
        self.lanes = [
            ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"es-bulk-{i}")
            for i in range(self.settings.max_in_flight)
        ]

    def put(self, records: list[SinkRecord]) -> None:
        actions: list[Action] = []
        next_offsets: dict[tuple[str, int], int] = {}  # by (topic, partition): no object per record
        make_action, ready = self.documents.action, self.ready
        for record in records:
            next_offsets[(record.original_topic, record.original_kafka_partition)] = record.original_kafka_offset + 1
            try:
                action = make_action(record)
                if action is not None and action.index not in ready:
                    self._prepare(action.index, record.topic, record.value_schema)
            except DataError as e:
                self._invalid(record, e)
                continue
            if action is not None:
                actions.append(action)
        self._dispatch(actions, next_offsets)

    def put_batch(self, batch: SinkBatch) -> None:
        """As :meth:`put`, the documents made from the batch's columns (see
        :meth:`DocumentMaker.actions`)."""
        actions: list[Action] = []
        ready = self.ready
        for i, result in enumerate(self.documents.actions(batch)):
            if result is None:
                continue
            if isinstance(result, DataError):
                self._invalid(batch.records()[i], result)
                continue
            if result.index not in ready:
                try:
                    self._prepare(result.index, batch.topics[i], batch.value_schemas[i])
                except DataError as e:
                    self._invalid(batch.records()[i], e)
                    continue
            actions.append(result)
        next_offsets: dict[tuple[str, int], int] = {}
        for topic, partition, offset in zip(
            batch.original_topics, batch.original_partitions, batch.original_offsets, strict=True
        ):
            next_offsets[(topic, partition)] = offset + 1
        self._dispatch(actions, next_offsets)

    def _dispatch(self, actions: list[Action], next_offsets: dict[tuple[str, int], int]) -> None:
        """Sends one put's actions, then finishes the previous put's (see the module's description)."""
        offsets = {TopicPartition(topic, partition): offset for (topic, partition), offset in next_offsets.items()}
        if self.under_way is not None and self.under_way.records + len(actions) > self.settings.max_buffered_records:
            self._finish_under_way()  # max.buffered.records: the earlier requests first
        sent = _Put(self._send(actions), len(actions), offsets)
        self._finish_under_way()  # the previous put's requests, sent while these records were read
        self.under_way = sent
        if self.settings.flush_synchronously:
            self._finish_under_way()

    def _invalid(self, record: SinkRecord, error: DataError) -> None:
        """A record that cannot become a document: dropped (``drop.invalid.message``) or
        reported (which raises unless ``errors.tolerance=all``)."""
        if self.settings.drop_invalid_message:
            log.error("Dropping %s: %s", _where(record), error)
            return
        reporter = self.context.errant_record_reporter()
        if reporter is None:
            raise error
        reporter.report(record, error)

    def _prepare(self, index: str, topic: str, schema: Schema | None) -> None:
        """Create a record's index or data stream (with the mapping of its value schema) on first use."""
        assert self.client is not None
        mapping = None
        if not self.settings.ignores_schema(topic) and schema is not None:
            mapping = mapping_for(schema)
        if self.settings.data_stream:
            self.client.ensure_data_stream(index, mapping)
        else:
            self.client.ensure_index(index, mapping)
        self.ready.add(index)

    def _send(self, actions: list[Action]) -> list[Future[BulkOutcome]]:
        if not actions:
            return []
        lanes = len(self.lanes)
        by_lane: list[list[Action]] = [[] for _ in range(lanes)]
        if lanes == 1:
            by_lane[0] = actions
        else:
            spread = 0
            for action in actions:
                doc_id = action.doc_id
                if doc_id is None:  # the cluster names it: any lane
                    spread += 1
                    by_lane[spread % lanes].append(action)
                else:
                    by_lane[hash(doc_id) % lanes].append(action)
        futures = []
        for lane, lane_actions in zip(self.lanes, by_lane, strict=True):
            for batch in self._batches(lane_actions):
                futures.append(lane.submit(self._bulk, batch))
        return futures

    def _batches(self, actions: list[Action]) -> list[list[Action]]:
        limit, max_bytes = self.settings.batch_size, self.settings.bulk_size_bytes
        batches: list[list[Action]] = []
        batch: list[Action] = []
        size = 0
        for action in actions:
            item = action.size() if max_bytes >= 0 else 0
            if batch and (len(batch) >= limit or (max_bytes >= 0 and size + item > max_bytes)):
                batches.append(batch)
                batch, size = [], 0
            batch.append(action)
            size += item
        if batch:
            batches.append(batch)
        return batches

    def _bulk(self, batch: list[Action]) -> BulkOutcome:
        assert self.client is not None
        try:
            return self.client.bulk(batch)
        except Exception as e:  # noqa: BLE001 - carried to the task thread, which fails the task
            return BulkOutcome([], e)

    def _finish_under_way(self) -> None:
        """Wait for the requests under way, report what the cluster refused, and let their
        offsets commit. Raises when a request failed for good or a refused record fails the task."""
        sent = self.under_way
        if sent is None:
            return
        self.under_way = None
        _, not_done = wait_futures(sent.futures, timeout=self.settings.flush_timeout_ms / 1000)
        if not_done:
            raise ConnectError(
                f"{len(not_done)} bulk requests were not acknowledged within flush.timeout.ms="
                f"{self.settings.flush_timeout_ms}; failing the task (the records are written again after a restart)."
            )
        failures: list[ItemFailure] = []
        for future in sent.futures:
            outcome = future.result()
            if outcome.error is not None:
                raise ConnectError(f"Writing to Elasticsearch failed: {outcome.error}") from outcome.error
            failures.extend(outcome.failures)
        for failure in failures:
            self._refused(failure)
        for tp, offset in sent.offsets.items():
            self.acknowledged[tp] = offset

    def _refused(self, failure: ItemFailure) -> None:
        record = failure.action.record
        where = _where(record)
        if not failure.malformed:
            raise ConnectError(f"Indexing {where} failed: {failure.describe()}")
        behavior = self.settings.behavior_on_malformed_documents
        if behavior == "WARN":
            log.warning("Ignoring a malformed document, %s: %s", where, failure.describe())
        elif behavior == "IGNORE":
            log.debug("Ignoring a malformed document, %s: %s", where, failure.describe())
        error = ConnectError(f"Indexing record failed: {failure.describe()}")
        reporter = self.context.errant_record_reporter()
        tolerance: ConnectError | None = None
        if reporter is not None:
            try:
                reporter.report(record, error)
            except ConnectError as e:  # errors.tolerance=none: fails the task unless told to skip
                tolerance = e
        if behavior == "FAIL":
            raise ConnectError(
                f"Indexing {where} failed: {failure.describe()} (behavior.on.malformed.documents=fail)"
            ) from tolerance

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        sent = self.under_way
        if sent is not None and all(f.done() for f in sent.futures):
            outcomes = [f.result() for f in sent.futures]
            if not any(outcome.failures or outcome.error for outcome in outcomes):
                self._finish_under_way()  # acknowledged in full: nothing to report (that is put's job)
        return {tp: offset for tp, offset in self.acknowledged.items() if tp in current_offsets}

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        """Not called (``pre_commit`` is overridden)."""

    def close(self, partitions: list[TopicPartition]) -> None:
        for tp in partitions:
            self.acknowledged.pop(tp, None)

    def stop(self) -> None:
        self.stopping.set()  # ends retry backoffs under way
        for lane in self.lanes:
            lane.shutdown(wait=True, cancel_futures=True)
        self.lanes = []
        self.under_way = None
        if self.client is not None:
            self.client.close()


def _where(record: SinkRecord) -> str:
    return f"topic {record.topic} partition {record.kafka_partition} offset {record.kafka_offset}"
