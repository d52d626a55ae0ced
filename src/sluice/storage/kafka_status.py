"""Connector, task and topic statuses in a Kafka topic (``status.storage.topic``, spec 5.2).

Records, as Kafka Connect writes them (see :mod:`sluice.storage.kafka_formats`):

* ``status-connector-<name>`` and ``status-task-<name>-<n>``:
  ``{"state":"RUNNING","trace":null,"worker_id":"host:port","generation":3,"version":"1.0"}``
  (``version``, the connector's or task's plugin version, is what Kafka Connect 4.1+
  writes; older readers ignore it, and it is ``null`` when unknown; it travels as the
  statuses' ``version``);
* ``status-topic-<topic>:connector-<name>``:
  ``{"topic":{"name":..,"connector":..,"task":0,"discoverTimestamp":<ms>}}``;
* a tombstone removes the entry (a DESTROYED status, a deleted connector or task, a
  topic reset).

Like ``KafkaStatusBackingStore``, the store's view is what it read back from the topic:
a write becomes visible when the reader thread reads it, on this worker and every other.
By default each ``put_*`` waits until its record was acknowledged *and* read back
(``synchronous=False`` returns as soon as the record is handed to the producer, Kafka's
behaviour). Records are produced without producer retries; the store retries a
retriable failure itself, unless the write became obsolete meanwhile (the entry was
deleted, a newer generation was written, or a safe write lost its precondition).

Generations, the rules Kafka applies:

* :meth:`KafkaStatusBackingStore.put_connector_safe` / :meth:`~KafkaStatusBackingStore.put_task_safe`
  (Kafka's ``putSafe``, used for FAILED and UNASSIGNED) write only when the store holds
  no status for the entry yet, or the held status came from the same worker, or it has
  an equal or older generation. Plain ``put_*`` always write.
* When reading, an UNASSIGNED task status is ignored if the held status is RUNNING with
  an equal or newer generation (a worker that did not see the newer RUNNING yet).

Deviation: reading a connector's tombstone removes only the connector's status here (the
:class:`~sluice.storage.base.StatusBackingStore` contract); Kafka's cache also drops the
connector's task statuses then. Kafka's herder (and :meth:`delete_connector`) writes a
tombstone for every task as well, so the topic's content is the same.

``listener`` (see :class:`StatusChange`) is called on the reader thread for every change
read after :meth:`~KafkaStatusBackingStore.start` returned — written by this worker or
another one; compare ``worker_id`` to tell them apart.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from confluent_kafka import KafkaError

from sluice.api.errors import ConnectError, IllegalWorkerStateError
from sluice.storage.base import DESTROYED, ConnectorStatus, StatusBackingStore, TaskStatus
from sluice.storage.kafka_formats import (
    RecordFormatError,
    TopicStatus,
    connector_status_key,
    decode_status,
    decode_topic_status,
    encode_status,
    encode_topic_status,
    parse_status_key,
    task_status_key,
    topic_status_key,
)
from sluice.storage.kafka_log import ConsumedRecord, KafkaBasedLog, RecordPosition, TopicSettings

__all__ = [
    "DEFAULT_STATUS_PARTITIONS",
    "KafkaStatusBackingStore",
    "StatusChange",
    "StatusListener",
    "TopicStatus",
]

log = logging.getLogger(__name__)

#: ``status.storage.partitions`` and ``status.storage.replication.factor`` defaults.
DEFAULT_STATUS_PARTITIONS = 5
DEFAULT_REPLICATION_FACTOR = 3

S = TypeVar("S", ConnectorStatus, TaskStatus)


@dataclass(frozen=True)
class StatusChange:
    """A status change read from the topic.

    ``kind`` is ``"connector"``, ``"task"`` (``task`` set) or ``"topic"`` (``topic`` set);
    ``status`` is the new value, ``None`` when the entry was removed.
    """

    kind: str
    connector: str
    status: ConnectorStatus | TaskStatus | TopicStatus | None
    task: int | None = None
    topic: str | None = None


StatusListener = Callable[[StatusChange], None]


class _Entry(Generic[S]):
    """The held status of one connector or task, with Kafka's write bookkeeping."""

    __slots__ = ("deleted", "sequence", "value")

    def __init__(self) -> None:
        self.value: S | None = None
        self.sequence = 0
        self.deleted = False

    def can_write_safely(self, status: S, sequence: int | None = None) -> bool:
        held = self.value
        ok = held is None or held.worker_id == status.worker_id or held.generation <= status.generation
        return ok and (sequence is None or sequence == self.sequence)


class _Delivery:
    """Outcome of one status write, including the store's own retries."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.error: str | None = None
        self.position: RecordPosition | None = None


class KafkaStatusBackingStore(StatusBackingStore):
    """Statuses in a compacted topic shared with Kafka Connect workers. Thread-safe.

    ``client_config`` holds librdkafka settings (at least ``bootstrap.servers``).
    """

    def __init__(
        self,
        topic: str,
        client_config: Mapping[str, Any],
        *,
        partitions: int = DEFAULT_STATUS_PARTITIONS,
        replication_factor: int = DEFAULT_REPLICATION_FACTOR,
        topic_config: Mapping[str, str] | None = None,
        client_id: str = "sluice-statuses",
        listener: StatusListener | None = None,
        synchronous: bool = True,
        timeout: float = 30.0,
    ) -> None:
        if not topic or not topic.strip():
            raise ValueError("Must specify topic for connector status.")
        self.topic = topic
        self.timeout = timeout
        self.synchronous = synchronous
        self._listener = listener
        self._lock = threading.RLock()
        self._connectors: dict[str, _Entry[ConnectorStatus]] = {}
        self._tasks: dict[str, dict[int, _Entry[TaskStatus]]] = {}
        self._topics: dict[str, dict[str, TopicStatus]] = {}
        self._generation = 0  # of the last status this store was asked to write
        self._started = False
        self._stopping = False
        self._log = KafkaBasedLog(
            TopicSettings(
                topic,
                partitions=partitions,
                replication_factor=replication_factor,
                config=dict(topic_config or {}),
                worker_config_key="status.storage.topic",
                purpose="connector and task statuses",
            ),
            client_config,
            self.process_record,
            producer_config={"retries": 0},  # retried by the store (see _send)
            client_id=client_id,
        )

    @property
    def kafka_log(self) -> KafkaBasedLog:
        return self._log

    def set_listener(self, listener: StatusListener | None) -> None:
        """Set (or clear) the callback for status changes read from the topic."""
        self._listener = listener

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        log.info("Starting KafkaStatusBackingStore with topic '%s'", self.topic)
        self._stopping = False
        self._log.start(timeout=max(self.timeout, 60.0))
        self._started = True

    def stop(self) -> None:
        self._stopping = True
        self._started = False
        self._log.stop()

    def refresh(self, timeout: float | None = None) -> None:
        """Read the topic to its current end (statuses other workers wrote up to now)."""
        self._check_started()
        self._log.read_to_end(timeout=self.timeout if timeout is None else timeout)

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every status handed to the producer was acknowledged."""
        self._log.flush(self.timeout if timeout is None else timeout)

    # ------------------------------------------------------------------ connectors and tasks

    def put_connector(self, status: ConnectorStatus, *, version: str | None = None) -> None:
        """Write the connector's status (a tombstone for DESTROYED).

        The record carries ``status.version`` (the connector plugin's version, as Kafka
        Connect 4.1+ records it); ``version``, when given, replaces it.
        """
        entry = self._connector_entry(status.connector)
        self._send(connector_status_key(status.connector), status, entry, safe=False, version=version)

    def put_connector_safe(self, status: ConnectorStatus, *, version: str | None = None) -> None:
        """Write unless another worker wrote a newer generation (Kafka's ``putSafe``)."""
        entry = self._connector_entry(status.connector)
        self._send(connector_status_key(status.connector), status, entry, safe=True, version=version)

    def put_task(self, status: TaskStatus, *, version: str | None = None) -> None:
        """Write the task's status (a tombstone for DESTROYED)."""
        entry = self._task_entry(status.connector, status.task)
        self._send(task_status_key(status.connector, status.task), status, entry, safe=False, version=version)

    def put_task_safe(self, status: TaskStatus, *, version: str | None = None) -> None:
        """Write unless another worker wrote a newer generation (Kafka's ``putSafe``)."""
        entry = self._task_entry(status.connector, status.task)
        self._send(task_status_key(status.connector, status.task), status, entry, safe=True, version=version)

    def connector_version(self, name: str) -> str | None:
        """The plugin version recorded with the connector's status (``None`` if none)."""
        status = self.get_connector(name)
        return None if status is None else status.version

    def task_version(self, name: str, task: int) -> str | None:
        """The version recorded with the task's status (``None`` if none)."""
        status = self.get_task(name, task)
        return None if status is None else status.version

    def get_connector(self, name: str) -> ConnectorStatus | None:
        with self._lock:
            entry = self._connectors.get(name)
            return None if entry is None else entry.value

    def get_task(self, name: str, task: int) -> TaskStatus | None:
        with self._lock:
            entry = self._tasks.get(name, {}).get(task)
            return None if entry is None else entry.value

    def get_all_tasks(self, name: str) -> list[TaskStatus]:
        with self._lock:
            tasks = self._tasks.get(name, {})
            return [entry.value for _, entry in sorted(tasks.items()) if entry.value is not None]

    def delete_connector(self, name: str) -> None:
        """Tombstone the connector's status and the status of each of its tasks."""
        with self._lock:
            generation = self._generation
            tasks = self.get_all_tasks(name)
            connector = self.get_connector(name)
        for task in tasks:
            self.put_task(
                TaskStatus(name, task.task, DESTROYED, task.worker_id, generation=max(generation, task.generation))
            )
        worker_id = connector.worker_id if connector is not None else ""
        held_generation = connector.generation if connector is not None else 0
        self.put_connector(ConnectorStatus(name, DESTROYED, worker_id, generation=max(generation, held_generation)))

    def delete_task(self, name: str, task: int) -> None:
        """Tombstone the task's status."""
        held = self.get_task(name, task)
        with self._lock:
            generation = self._generation
        worker_id = held.worker_id if held is not None else ""
        self.put_task(
            TaskStatus(name, task, DESTROYED, worker_id, generation=max(generation, held.generation if held else 0))
        )

    def connectors(self) -> set[str]:
        with self._lock:
            return {name for name, entry in self._connectors.items() if entry.value is not None}

    # ------------------------------------------------------------------ topics

    def put_topic(self, connector: str, topic: str, *, task: int = 0, discover_timestamp: int | None = None) -> None:
        """Record that ``connector`` uses ``topic`` (once: a topic already recorded is not rewritten)."""
        with self._lock:
            if topic in self._topics.get(connector, {}):
                return
        timestamp = int(time.time() * 1000) if discover_timestamp is None else discover_timestamp
        status = TopicStatus(topic, connector, task, timestamp)
        self._send_topic(topic_status_key(topic, connector), encode_topic_status(status))

    def get_topics(self, connector: str) -> set[str]:
        with self._lock:
            return set(self._topics.get(connector, {}))

    def get_topic_status(self, connector: str, topic: str) -> TopicStatus | None:
        with self._lock:
            return self._topics.get(connector, {}).get(topic)

    def get_all_topic_statuses(self, connector: str) -> list[TopicStatus]:
        with self._lock:
            return list(self._topics.get(connector, {}).values())

    def delete_topics(self, connector: str) -> None:
        """Tombstone every topic recorded for ``connector`` (a topic-tracking reset)."""
        for topic in sorted(self.get_topics(connector)):
            self._send_topic(topic_status_key(topic, connector), None)

    # ------------------------------------------------------------------ writing

    def _connector_entry(self, name: str) -> _Entry[ConnectorStatus]:
        with self._lock:
            entry = self._connectors.get(name)
            if entry is None:
                entry = self._connectors[name] = _Entry()
            return entry

    def _task_entry(self, name: str, task: int) -> _Entry[TaskStatus]:
        with self._lock:
            tasks = self._tasks.setdefault(name, {})
            entry = tasks.get(task)
            if entry is None:
                entry = tasks[task] = _Entry()
            return entry

    def _send(self, key: str, status: S, entry: _Entry[S], *, safe: bool, version: str | None) -> None:
        self._check_started()
        if version is not None:
            status = replace(status, version=version)
        value = encode_status(status.state, status.worker_id, status.generation, status.trace, status.version)
        with self._lock:
            self._generation = status.generation
            if safe and not entry.can_write_safely(status):
                log.debug("Not writing %s for %s: a newer generation holds it", status.state, key)
                return
            entry.sequence += 1
            sequence = entry.sequence
        delivery = _Delivery()

        def on_delivery(error: KafkaError | None, position: RecordPosition | None) -> None:
            if error is None:
                delivery.position = position
                delivery.done.set()
                return
            if error.retriable() and not self._stopping:
                with self._lock:
                    obsolete = (
                        entry.deleted
                        or status.generation != self._generation
                        or (safe and not entry.can_write_safely(status, sequence))
                    )
                if not obsolete:
                    log.debug("Retrying the status write for %s after %s", key, error.str())
                    self._log.send(key, value, on_delivery)
                    return
                delivery.error = f"abandoned after {error.str()}: a newer status superseded it"
            else:
                log.error("Failed to write the status update for %s: %s", key, error.str())
                delivery.error = error.str()
            delivery.done.set()

        self._log.send(key, value, on_delivery)
        if self.synchronous:
            self._await(key, delivery)

    def _send_topic(self, key: str, value: bytes | None) -> None:
        self._check_started()
        delivery = _Delivery()

        def on_delivery(error: KafkaError | None, position: RecordPosition | None) -> None:
            if error is None:
                delivery.position = position
            elif error.retriable() and not self._stopping:
                self._log.send(key, value, on_delivery)
                return
            else:
                log.error("Failed to write the topic status update for %s: %s", key, error.str())
                delivery.error = error.str()
            delivery.done.set()

        self._log.send(key, value, on_delivery)
        if self.synchronous:
            self._await(key, delivery)

    def _await(self, key: str, delivery: _Delivery) -> None:
        if self._log.on_reader_thread():
            # Called from a listener: the reader thread serves the delivery callbacks and
            # reads the record back, so it cannot wait for either; the write stays async.
            return
        deadline = time.monotonic() + self.timeout
        self._log.flush(max(deadline - time.monotonic(), 0))
        if not delivery.done.wait(max(deadline - time.monotonic(), 0)):
            raise ConnectError(f"Timed out writing the status record {key!r} to topic '{self.topic}'")
        if delivery.error is not None:
            raise ConnectError(f"Could not write the status record {key!r} to topic '{self.topic}': {delivery.error}")
        if delivery.position is not None:
            self._log.wait_for_positions([delivery.position], timeout=max(deadline - time.monotonic(), 0.1))

    def _check_started(self) -> None:
        if not self._started:
            raise IllegalWorkerStateError(f"KafkaStatusBackingStore for topic '{self.topic}' is not started")

    # ------------------------------------------------------------------ reading

    def process_record(self, record: ConsumedRecord) -> None:
        """Apply one record of the status topic (what the reader thread does for each record).

        Public so that a topic's records can be replayed without Kafka (tests, tools).
        Unusable records are logged and skipped.
        """
        if record.key is None:
            log.warning("Discarding a status record without a key at offset %d", record.offset)
            return
        try:
            key = record.key.decode("utf-8")
            parsed = parse_status_key(key)
        except (UnicodeDecodeError, RecordFormatError) as e:
            log.warning("Discarding status record at offset %d: %s", record.offset, e)
            return
        try:
            if parsed.kind == "topic":
                change = self._read_topic(parsed.connector, parsed.topic or "", record.value)
            elif parsed.kind == "task":
                change = self._read_task(parsed.connector, parsed.task or 0, record.value)
            else:
                change = self._read_connector(parsed.connector, record.value)
        except RecordFormatError as e:
            log.warning("Discarding status record %r: %s", key, e)
            return
        listener = self._listener
        if change is not None and listener is not None and self._started:
            try:
                listener(change)
            except Exception:
                log.exception("Status listener failed on %s", change)

    def _read_connector(self, name: str, value: bytes | None) -> StatusChange | None:
        if value is None:
            with self._lock:
                entry = self._connectors.pop(name, None)
                if entry is None:
                    return None
                entry.deleted = True
            return StatusChange("connector", name, None)
        decoded = decode_status(value)
        status = ConnectorStatus(
            name,
            decoded.state,
            decoded.worker_id,
            decoded.trace,
            decoded.generation,
            decoded.version,
        )
        with self._lock:
            entry = self._connectors.get(name)
            if entry is None:
                entry = self._connectors[name] = _Entry()
            entry.value = status
        return StatusChange("connector", name, status)

    def _read_task(self, name: str, task: int, value: bytes | None) -> StatusChange | None:
        if value is None:
            with self._lock:
                tasks = self._tasks.get(name)
                entry = tasks.pop(task, None) if tasks is not None else None
                if tasks is not None and not tasks:
                    del self._tasks[name]
                if entry is None:
                    return None
                entry.deleted = True
            return StatusChange("task", name, None, task=task)
        decoded = decode_status(value)
        status = TaskStatus(
            name,
            task,
            decoded.state,
            decoded.worker_id,
            decoded.trace,
            decoded.generation,
            decoded.version,
        )
        with self._lock:
            tasks = self._tasks.setdefault(name, {})
            entry = tasks.get(task)
            if entry is None:
                entry = tasks[task] = _Entry()
            held = entry.value
            if (
                status.state == "UNASSIGNED"
                and held is not None
                and held.state == "RUNNING"
                and held.generation >= status.generation
            ):
                log.debug("Ignoring stale UNASSIGNED status of %s-%d in favour of %s", name, task, held)
                return None
            entry.value = status
        return StatusChange("task", name, status, task=task)

    def _read_topic(self, connector: str, topic: str, value: bytes | None) -> StatusChange | None:
        if value is None:
            with self._lock:
                topics = self._topics.get(connector)
                if topics is None or topics.pop(topic, None) is None:
                    return None
                if not topics:
                    del self._topics[connector]
            return StatusChange("topic", connector, None, topic=topic)
        status = decode_topic_status(value)
        with self._lock:
            self._topics.setdefault(connector, {})[topic] = status
        return StatusChange("topic", connector, status, topic=topic)
