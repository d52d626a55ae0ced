"""Connector configs, target states and task configs in a Kafka topic (``config.storage.topic``).

The records are Kafka Connect's (spec 5.1; bytes in :mod:`sluice.storage.kafka_formats`),
so a Sluice worker and a Kafka Connect worker can read each other's config topic:

==============================  ====================================================
key                             value
==============================  ====================================================
``connector-<name>``            ``{"properties":{...}}``; tombstone = deleted
``target-state-<name>``         ``{"state":"PAUSED","state.v2":"STOPPED"}``; tombstone = removed
``task-<name>-<n>``             ``{"properties":{...}}``, held back until the commit
``commit-<name>``               ``{"tasks":<n>}``: applies the held-back task configs
``restart-connector-<name>``    ``{"include-tasks":bool,"only-failed":bool}``
``logger-cluster-<namespace>``  ``{"level":"DEBUG"}``
``session-key``                 read and kept (``KafkaClusterConfigState.session_key``)
``tasks-fencing-<name>``        ``{"task-count":<n>}``, written after fencing
==============================  ====================================================

The topic has exactly one partition, so every worker reads the records in the same
order; :meth:`KafkaConfigBackingStore.start` refuses a topic with more (and, like every
internal topic, one whose cleanup policy is not ``compact``).

**Task configs and commits.** ``task-`` records are buffered per connector until its
``commit-`` record, which applies them only when configs for tasks ``0..n-1`` were
buffered since the previous commit. Otherwise (compaction removed some, or a leader
died mid-write) the connector is *inconsistent*: its tasks stay unknown
(:meth:`KafkaClusterConfigState.inconsistent_connectors`) until a complete set is
committed. :meth:`~KafkaConfigBackingStore.put_task_configs` writes in Kafka's order —
read to the end, every ``task-`` record, read to the end, ``commit-``, read to the end.

**Writes** wait until the brokers acknowledged the records and this store read them
back, so :meth:`~KafkaConfigBackingStore.snapshot` shows them when a ``put_*`` returns.
``put_connector_config`` with a target state writes ``target-state-`` then
``connector-``; ``remove_connector_config`` writes tombstones for ``connector-`` then
``target-state-``. Kafka Connect expects one writer (the leader) for everything but
target states; this store does not enforce it. Writes must not be made from a listener
callback (they would wait for the thread that runs it).

**The leader's transactional writes** (Kafka's KIP-618, when a worker's exactly-once
source support is ``preparing`` or ``enabled``): given ``leader_transactional_id``
(``connect-cluster-<group.id>``), a worker that became the group's leader calls
:meth:`~KafkaConfigBackingStore.claim_write_privileges`, which initialises a producer with
that id and so fences every earlier leader's. Connector configs, their removal, task
configs (records and commit in one transaction) and task-count records are then written
in transactions of that producer; target states, restart requests and logger levels stay
plain writes, as in Kafka. When another producer fenced it (a newer leader, or a zombie
claiming the id), the write fails with :class:`PrivilegedWriteError`; the next one claims
the id again. ``read_committed`` makes the reader skip aborted transactions.

**Listeners** (:class:`ConfigUpdateListener`) hear about records read after
:meth:`~KafkaConfigBackingStore.start` returned — the store's own writes and other
workers' — on the reader thread, as Kafka's ``UpdateListener`` does. As in Kafka, a
target-state change is reported only for an existing connector and not for its removal,
and logger levels read during start-up are not reported (they revert on restart).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sluice.api.errors import ConfigError, ConnectError, IllegalWorkerStateError
from sluice.storage.base import ClusterConfigState, ConfigBackingStore, check_target_state, copy_configs
from sluice.storage.kafka_formats import (
    SESSION_KEY_KEY,
    ConfigKey,
    RecordFormatError,
    RestartRequest,
    SessionKey,
    commit_tasks_key,
    connector_key,
    decode_connector_config,
    decode_logger_level,
    decode_restart_request,
    decode_session_key,
    decode_target_state,
    decode_task_commit,
    decode_task_config,
    decode_task_count_record,
    encode_connector_config,
    encode_logger_level,
    encode_restart_request,
    encode_session_key,
    encode_target_state,
    encode_task_commit,
    encode_task_config,
    encode_task_count_record,
    logger_cluster_key,
    parse_config_key,
    restart_key,
    target_state_key,
    task_count_record_key,
    task_key,
)
from sluice.storage.kafka_log import ConsumedRecord, KafkaBasedLog, TopicSettings

__all__ = [
    "ConfigUpdateListener",
    "KafkaClusterConfigState",
    "KafkaConfigBackingStore",
    "PrivilegedWriteError",
    "RestartRequest",
    "SessionKey",
]

log = logging.getLogger(__name__)

DEFAULT_REPLICATION_FACTOR = 3


class ConfigUpdateListener:
    """Reactions to config records read from the topic (Kafka's ``ConfigBackingStore.UpdateListener``).

    Subclass and override what you need; every method does nothing by default. Called on
    the store's reader thread, after :meth:`KafkaConfigBackingStore.start` returned, for
    records written by any worker (this one included). Keep them short and never write
    to the config store from them: hand the work to another thread (the herder's).
    """

    def on_connector_config_update(self, connector: str) -> None:
        """A ``connector-`` record created or changed the connector's config."""

    def on_connector_config_remove(self, connector: str) -> None:
        """A ``connector-`` tombstone deleted the connector."""

    def on_connector_target_state_change(self, connector: str) -> None:
        """The target state of an existing connector changed."""

    def on_task_config_update(self, tasks: list[tuple[str, int]]) -> None:
        """A ``commit-`` record was read; ``tasks`` are the ``(connector, task)`` configs it applied.

        Empty when the commit applied nothing (no buffered configs, or an inconsistent set).
        """

    def on_task_commit(self, connector: str, task_count: int) -> None:
        """A consistent ``commit-`` record was read: the connector now has ``task_count``
        tasks (0 when it was stopped)."""

    def on_task_count_record(self, connector: str, task_count: int) -> None:
        """A ``tasks-fencing-`` record was read: the producers of the connector's earlier
        tasks are fenced, its ``task_count`` tasks may start (exactly-once sources)."""

    def on_restart_request(self, request: RestartRequest) -> None:
        """A ``restart-connector-`` record was read."""

    def on_logger_level_update(self, namespace: str, level: str) -> None:
        """A ``logger-cluster-`` record set a cluster-wide log level."""

    def on_session_key_update(self, key: SessionKey) -> None:
        """A new ``session-key`` record was read."""


@dataclass
class KafkaClusterConfigState(ClusterConfigState):
    """:class:`~sluice.storage.base.ClusterConfigState` plus what the config topic adds.

    ``task_configs`` holds the task configs of consistent connectors only (see
    :meth:`inconsistent_connectors`); ``task_counts`` the task count of each connector's
    latest commit, consistent or not.
    """

    offset: int = -1
    task_counts: dict[str, int] = field(default_factory=dict)
    inconsistent: set[str] = field(default_factory=set)
    task_count_records: dict[str, int] = field(default_factory=dict)
    task_config_generations: dict[str, int] = field(default_factory=dict)
    pending_fencing: set[str] = field(default_factory=set)
    session_key: SessionKey | None = None

    def inconsistent_connectors(self) -> set[str]:
        """Connectors whose last commit did not find a complete set of task configs."""
        return set(self.inconsistent)

    def committed_task_count(self, name: str) -> int:
        """The task count of the connector's latest commit (0 when none)."""
        return self.task_counts.get(name, 0)


class PrivilegedWriteError(ConnectError):
    """A write the leader makes in a transaction failed (another producer claimed the
    leader's transactional id, or the brokers refused); the request may be retried."""


class KafkaConfigBackingStore(ConfigBackingStore):
    """Cluster configuration in a single-partition compacted topic. Thread-safe.

    ``client_config`` holds librdkafka settings (at least ``bootstrap.servers``).
    ``topic_config`` adds topic-level settings used when the topic is created.
    ``leader_transactional_id`` and ``read_committed``: see "The leader's transactional
    writes" above.
    """

    def __init__(
        self,
        topic: str,
        client_config: Mapping[str, Any],
        *,
        replication_factor: int = DEFAULT_REPLICATION_FACTOR,
        topic_config: Mapping[str, str] | None = None,
        client_id: str = "sluice-configs",
        listener: ConfigUpdateListener | None = None,
        timeout: float = 30.0,
        leader_transactional_id: str | None = None,
        read_committed: bool = False,
    ) -> None:
        if not topic or not topic.strip():
            raise ValueError("Must specify topic for connector configuration.")
        self.topic = topic
        self.timeout = timeout
        self._listener = listener
        self._lock = threading.RLock()
        self._started = False
        self._offset = -1
        self._connector_configs: dict[str, dict[str, Any]] = {}
        self._applied_configs: dict[str, dict[str, Any]] = {}  # see ClusterConfigState
        self._target_states: dict[str, str] = {}
        self._task_counts: dict[str, int] = {}
        self._task_configs: dict[tuple[str, int], dict[str, Any]] = {}
        self._deferred: dict[str, dict[int, dict[str, Any]]] = {}
        self._inconsistent: set[str] = set()
        self._task_config_generations: dict[str, int] = {}
        self._task_count_records: dict[str, int] = {}
        self._pending_fencing: set[str] = set()
        self._session_key: SessionKey | None = None
        self._leader_transactional_id = leader_transactional_id
        self._privileged = False  # this worker leads and writes in the leader's transactions
        self._privileged_lock = threading.Lock()  # one transaction at a time
        self._log = KafkaBasedLog(
            TopicSettings(
                topic,
                partitions=1,  # always one: the order of the records matters
                replication_factor=replication_factor,
                config=dict(topic_config or {}),
                worker_config_key="config.storage.topic",
                purpose="connector configurations",
            ),
            client_config,
            self.process_record,
            client_id=client_id,
            consumer_config={"isolation.level": "read_committed"} if read_committed else None,
        )

    @property
    def kafka_log(self) -> KafkaBasedLog:
        return self._log

    def set_update_listener(self, listener: ConfigUpdateListener | None) -> None:
        """Set (or clear) the listener for records read after start."""
        self._listener = listener

    # ------------------------------------------------------------------ the leader's writes

    def claim_write_privileges(self) -> None:
        """This worker became the leader: from now on connector configs, task configs and
        task-count records are written in transactions of the leader's producer, which is
        initialised now — fencing every earlier leader's (Kafka's ``claimWritePrivileges``).
        A no-op without ``leader_transactional_id``. Raises
        :class:`~sluice.api.errors.ConnectError` when the brokers refuse; the privileges
        are claimed all the same, and the next write tries again."""
        if self._leader_transactional_id is None:
            return
        with self._privileged_lock:
            self._check_started()
            self._privileged = True
            self._log.claim_transactions(self._leader_transactional_id, timeout=max(self.timeout, 60.0))

    def release_write_privileges(self) -> None:
        """This worker no longer leads: its writes are plain again."""
        with self._privileged_lock:
            self._privileged = False
            self._log.release_transactions()

    @property
    def holds_write_privileges(self) -> bool:
        """Whether this store's leader writes are transactional (claimed and not released)."""
        return self._privileged

    def _write_as_leader(self, records: list[tuple[str, bytes | None]], what: str, *, read_first: bool = False) -> bool:
        """Write ``records`` in one transaction of the leader's producer if this worker
        claimed write privileges (claiming the id again if it was fenced) and return True;
        return False, having written nothing, if it did not. ``read_first`` reads the topic
        to its end before writing (Kafka's order for task configs)."""
        with self._privileged_lock:
            if not self._privileged:
                return False
            transactional_id = self._leader_transactional_id
            assert transactional_id is not None  # claim_write_privileges needs one
            self._check_writable(what)
            deadline = time.monotonic() + self.timeout
            try:
                if read_first:
                    self._log.read_to_end(timeout=_remaining(deadline))
                if self._log.transactional_id is None:
                    self._log.claim_transactions(transactional_id, timeout=max(_remaining(deadline), 1.0))
                self._log.write_transaction(records, timeout=_remaining(deadline))
                self._log.read_to_end(timeout=_remaining(deadline))
            except ConnectError as e:
                raise PrivilegedWriteError(
                    f"Could not write {what} to the config topic as the leader (transactional id "
                    f"{transactional_id!r}): {e}. This may be transient (another producer claimed the "
                    f"leader's transactional id, and this worker claims it back on the next write); the "
                    f"request can be safely retried"
                ) from e
            return True

    def _write_privileged(self, records: list[tuple[str, bytes | None]], what: str) -> None:
        """A write Kafka leaves to the leader: in its transaction when this worker holds
        the write privileges, else plain."""
        if not self._write_as_leader(records, what):
            self._write(records, what)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Create or check the topic and read it whole; listeners are not called for what it read."""
        log.info("Starting KafkaConfigBackingStore with topic '%s'", self.topic)
        self._log.start(timeout=max(self.timeout, 60.0))
        partitions = self._log.partition_count
        if partitions > 1:
            self._log.stop()
            raise ConfigError(
                f"The config topic '{self.topic}' (set by 'config.storage.topic') has {partitions} "
                f"partitions, but Kafka Connect's config topic must have exactly one, so that every "
                f"worker reads connector and task configurations in the same order. Point "
                f"'config.storage.topic' at a topic with a single partition."
            )
        self._started = True
        log.info("Started KafkaConfigBackingStore")

    def stop(self) -> None:
        self._started = False
        self._log.stop()

    def refresh(self, timeout: float | None = None) -> None:
        """Read the topic to its current end (records other workers wrote up to now)."""
        self._check_started()
        self._log.read_to_end(timeout=self.timeout if timeout is None else timeout)

    # ------------------------------------------------------------------ reading the state

    def snapshot(self) -> KafkaClusterConfigState:
        with self._lock:
            task_configs: dict[str, list[dict[str, Any]]] = {}
            for name, count in self._task_counts.items():
                if name in self._inconsistent:
                    continue
                tasks = [self._task_configs.get((name, i)) for i in range(count)]
                if all(task is not None for task in tasks):
                    task_configs[name] = [dict(task) for task in tasks if task is not None]
            return KafkaClusterConfigState(
                connector_configs=copy_configs(self._connector_configs),
                applied_configs=copy_configs(self._applied_configs),
                target_states=dict(self._target_states),
                task_configs=task_configs,
                offset=self._offset,
                task_counts=dict(self._task_counts),
                inconsistent=set(self._inconsistent),
                task_count_records=dict(self._task_count_records),
                task_config_generations=dict(self._task_config_generations),
                pending_fencing=set(self._pending_fencing),
                session_key=self._session_key,
            )

    def contains(self, name: str) -> bool:
        with self._lock:
            return name in self._connector_configs

    # ------------------------------------------------------------------ writing

    def put_connector_config(
        self, name: str, config: Mapping[str, str | None], target_state: str | None = None
    ) -> None:
        """Write the config (after ``target-state-`` when ``target_state`` is given)."""
        records: list[tuple[str, bytes | None]] = []
        if target_state is not None:
            records.append((target_state_key(name), encode_target_state(check_target_state(target_state))))
        records.append((connector_key(name), encode_connector_config(config)))
        self._write_privileged(records, f"the configuration of connector {name}")

    def remove_connector_config(self, name: str) -> None:
        """Tombstone ``connector-`` then ``target-state-``; the task configs go with the connector."""
        self._write_privileged(
            [(connector_key(name), None), (target_state_key(name), None)],
            f"the removal of connector {name}",
        )

    def put_target_state(self, name: str, state: str) -> None:
        """Write ``target-state-<name>`` (STOPPED also as the legacy ``"state":"PAUSED"``)."""
        record = (target_state_key(name), encode_target_state(check_target_state(state)))
        self._write([record], f"the target state of connector {name}")

    def put_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        """Write task configs then the commit, reading to the end between steps (Kafka's
        order); as the leader with write privileges, all in one transaction."""
        what = f"the task configurations of connector {name}"
        records: list[tuple[str, bytes | None]] = [
            (task_key(name, i), encode_task_config(config)) for i, config in enumerate(configs)
        ]
        commit = (commit_tasks_key(name), encode_task_commit(len(configs)))
        if self._write_as_leader([*records, commit], what, read_first=True):
            return
        self._check_writable(what)
        deadline = time.monotonic() + self.timeout
        self._read_to_end(deadline, what)
        if records:
            self._log.write(records, timeout=_remaining(deadline))
            self._read_to_end(deadline, what)
        self._log.write([commit], timeout=_remaining(deadline))
        self._read_to_end(deadline, what)

    def put_task_count_record(self, name: str, task_count: int) -> None:
        """Write ``tasks-fencing-<name>`` (``{"task-count": n}``): the connector's earlier
        producers are fenced and its ``task_count`` tasks may start (Kafka's KIP-618)."""
        self._write_privileged(
            [(task_count_record_key(name), encode_task_count_record(task_count))],
            f"the task count record of connector {name}",
        )

    def put_session_key(self, key: SessionKey) -> None:
        """Write ``session-key``: the key every worker signs internal requests with from now
        on (KIP-507); the leader's write, in its transaction when it holds the privileges."""
        self._write_privileged([(SESSION_KEY_KEY, encode_session_key(key))], "a new session key")

    def put_restart_request(self, connector: str, *, only_failed: bool = False, include_tasks: bool = False) -> None:
        """Write ``restart-connector-<name>``; every worker's listener hears it."""
        value = encode_restart_request(include_tasks=include_tasks, only_failed=only_failed)
        self._write([(restart_key(connector), value)], f"a restart request for connector {connector}")

    def put_logger_level(self, namespace: str, level: str) -> None:
        """Write ``logger-cluster-<namespace>``: a log level for the whole cluster."""
        self._write([(logger_cluster_key(namespace), encode_logger_level(level))], f"the level of logger {namespace}")

    # ------------------------------------------------------------------ internals

    def _check_started(self) -> None:
        if not self._started:
            raise IllegalWorkerStateError(f"KafkaConfigBackingStore for topic '{self.topic}' is not started")

    def _check_writable(self, what: str) -> None:
        self._check_started()
        if self._log.on_reader_thread():
            raise IllegalWorkerStateError(
                f"Cannot write {what} from the config store's reader thread (a listener "
                f"callback): the write would wait for that thread to read it back. Hand the "
                f"write to another thread."
            )

    def _write(self, records: list[tuple[str, bytes | None]], what: str) -> None:
        self._check_writable(what)
        deadline = time.monotonic() + self.timeout
        try:
            positions = self._log.write(records, timeout=self.timeout)
            self._log.wait_for_positions(positions, timeout=_remaining(deadline))
        except ConnectError as e:
            raise ConnectError(f"Error writing {what} to Kafka: {e}") from e

    def _read_to_end(self, deadline: float, what: str) -> None:
        try:
            self._log.read_to_end(timeout=_remaining(deadline))
        except ConnectError as e:
            raise ConnectError(f"Error writing {what} to Kafka: {e}") from e

    def process_record(self, record: ConsumedRecord) -> None:
        """Apply one record of the config topic (what the reader thread does for each record).

        Public so that a topic's records can be replayed without Kafka (tests, tools).
        Unusable records are logged and skipped.
        """
        if record.key is None:
            log.error("Discarding a config record without a key at offset %d", record.offset)
            return
        try:
            key = record.key.decode("utf-8")
            parsed = parse_config_key(key)
        except (UnicodeDecodeError, RecordFormatError) as e:
            log.error("Discarding config record at offset %d: %s", record.offset, e)
            return
        with self._lock:
            self._offset = record.offset + 1
        try:
            notify = self._apply(parsed, record.value)
        except RecordFormatError as e:
            log.error("Ignoring config record %r at offset %d: %s", key, record.offset, e)
            return
        listener = self._listener
        if notify is not None and listener is not None and self._started:
            try:
                notify(listener)
            except Exception:
                log.exception("Config update listener failed on record %r", key)

    def _apply(self, key: ConfigKey, value: bytes | None) -> Callable[[ConfigUpdateListener], None] | None:
        """Apply one record; return how to tell the listener (``None``: nothing to tell)."""
        name = key.name
        if key.kind == "target-state":
            return self._apply_target_state(name, decode_target_state(value))
        if key.kind == "connector":
            return self._apply_connector_config(name, decode_connector_config(value))
        if key.kind == "task":
            config = decode_task_config(value)
            assert key.task is not None
            with self._lock:
                self._deferred.setdefault(name, {})[key.task] = config
            return None
        if key.kind == "commit":
            return self._apply_commit(name, value)
        if key.kind == "restart":
            request = decode_restart_request(name, value)
            return lambda listener: listener.on_restart_request(request)
        if key.kind == "task-count":
            count = decode_task_count_record(value)
            with self._lock:
                self._task_count_records[name] = count
                self._pending_fencing.discard(name)
            return lambda listener: listener.on_task_count_record(name, count)
        if key.kind == "session-key":
            session_key = decode_session_key(value)
            with self._lock:
                self._session_key = session_key
            return lambda listener: listener.on_session_key_update(session_key)
        if key.kind == "logger":
            level = decode_logger_level(value)
            if not self._started:
                log.debug("Ignoring the level %s of logger %s written before this worker started", level, name)
            return lambda listener: listener.on_logger_level_update(name, level)
        return None

    def _apply_target_state(self, name: str, state: str | None) -> Callable[[ConfigUpdateListener], None] | None:
        with self._lock:
            if state is None:
                self._target_states.pop(name, None)
                if name in self._connector_configs:
                    # a connector always has a target state
                    self._target_states[name] = "STARTED"
                return None  # the connector's own removal is what listeners hear about
            previous = self._target_states.get(name)
            self._target_states[name] = state
            if previous == state or name not in self._connector_configs:
                return None
        return lambda listener: listener.on_connector_target_state_change(name)

    def _apply_connector_config(
        self, name: str, config: dict[str, Any] | None
    ) -> Callable[[ConfigUpdateListener], None]:
        with self._lock:
            if config is None:
                self._remove_connector(name)
                log.info("Read the removal of connector '%s'", name)
                return lambda listener: listener.on_connector_config_remove(name)
            self._connector_configs[name] = config
            self._target_states.setdefault(name, "STARTED")
        return lambda listener: listener.on_connector_config_update(name)

    def _apply_commit(self, name: str, value: bytes | None) -> Callable[[ConfigUpdateListener], None] | None:
        with self._lock:
            if name not in self._connector_configs:
                # Deleted connector whose config and tombstone compaction already removed.
                self._remove_connector(name)
                log.debug("Ignoring the task commit of connector '%s', which does not exist", name)
                return None
            count = decode_task_commit(value)
            deferred = self._deferred.get(name)
            buffered = set(deferred or ())
            updated: list[tuple[str, int]] = []
            if all(i in buffered for i in range(count)):
                if deferred:
                    for task, config in deferred.items():
                        self._task_configs[(name, task)] = config
                    updated = [(name, task) for task in sorted(deferred)]
                    generation = self._task_config_generations.get(name)
                    self._task_config_generations[name] = 0 if generation is None else generation + 1
                self._inconsistent.discard(name)
                self._applied_configs[name] = dict(self._connector_configs[name])
            else:
                log.debug(
                    "Incomplete set of task configs for connector '%s' (commit of %d tasks, buffered %s); "
                    "marking it inconsistent",
                    name,
                    count,
                    sorted(buffered),
                )
                self._inconsistent.add(name)
            if deferred is not None:
                deferred.clear()  # the next commit needs a complete fresh set
            self._task_counts[name] = count
            self._pending_fencing.add(name)
            consistent = name not in self._inconsistent

        def notify(listener: ConfigUpdateListener) -> None:
            listener.on_task_config_update(updated)
            if consistent:
                listener.on_task_commit(name, count)

        return notify

    def _remove_connector(self, name: str) -> None:
        self._connector_configs.pop(name, None)
        self._applied_configs.pop(name, None)
        self._task_counts.pop(name, None)
        for task_id in [task_id for task_id in self._task_configs if task_id[0] == name]:
            del self._task_configs[task_id]
        self._deferred.pop(name, None)
        self._inconsistent.discard(name)


def _remaining(deadline: float) -> float:
    return max(deadline - time.monotonic(), 0.1)
