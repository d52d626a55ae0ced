"""A compacted Kafka topic read from the beginning and tailed, plus a producer to append to it.

:class:`KafkaBasedLog` is what Kafka Connect's ``KafkaBasedLog`` is to its three
Kafka-backed stores, built on confluent-kafka (librdkafka):

* **Reading.** A consumer is *assigned* every partition of the topic (no consumer group
  membership, nothing committed) from the beginning. A background thread polls it and
  hands each record to ``on_record`` in log order per partition.
* **Read to the end.** :meth:`KafkaBasedLog.read_to_end` lists the end offsets of every
  partition when it is called and blocks until the reader thread has handed over every
  record before them. A store that calls it after :meth:`start` has seen everything
  written before that moment; :meth:`start` itself returns only after a first full read
  (of what was committed, for a ``read_committed`` reader: see :meth:`KafkaBasedLog.start`).
* **Writing.** :meth:`KafkaBasedLog.send` appends asynchronously (``callback`` is called
  with the outcome); :meth:`KafkaBasedLog.write` appends several records and waits
  until the broker acknowledged all of them, returning where each landed, and
  :meth:`KafkaBasedLog.wait_for_positions` then waits until they were read back.
* **Writing in transactions.** After :meth:`KafkaBasedLog.claim_transactions` with a
  transactional id, :meth:`KafkaBasedLog.write_transaction` appends records in one
  transaction of a producer with that id. Claiming fences every earlier producer with the
  id; a claimed producer that another claim fenced fails its next write and is dropped
  (claim again to write).
* **The topic.** :func:`ensure_topic` creates a missing topic, compacted, with the
  partitions, replication factor and topic settings given, and refuses an existing topic
  whose ``cleanup.policy`` is not exactly ``compact``, as Kafka Connect's workers do.

Client settings match Kafka Connect's for its internal topics: the producer waits for
all in-sync replicas (``acks=all``), keeps one request in flight, is not idempotent, and
partitions keys with ``murmur2_random`` — the Java producer's partitioner — so a key
lands on the same partition whether a Java or a Sluice worker wrote it (records with the
same key must stay in one partition for compaction and ordering). The consumer reads
uncommitted data (``isolation.level=read_uncommitted``, Java's default; librdkafka's is
``read_committed``) unless the caller's consumer settings say otherwise.

Threads: ``on_record`` and ``send`` callbacks run on the reader thread (callbacks may
also run on a thread blocked in :meth:`write`/:meth:`flush`). Waiting for the log from
the reader thread would deadlock, so :meth:`read_to_end` and
:meth:`wait_for_positions` raise :class:`~sluice.api.errors.IllegalWorkerStateError`
there.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import (
    Consumer,
    IsolationLevel,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import (
    AdminClient,
    ConfigResource,
    NewTopic,
    OffsetSpec,
    ResourceType,
)

from sluice.api.errors import ConfigError, ConnectError, IllegalWorkerStateError
from sluice.kafka.errors import LOCAL_FENCED, LOCAL_PARTITION_EOF, kafka_error, retriable
from sluice.kafka.transactions import transactional_settings

__all__ = [
    "ConsumedRecord",
    "KafkaBasedLog",
    "RecordPosition",
    "TopicSettings",
    "ensure_topic",
    "topic_cleanup_policy",
]

log = logging.getLogger(__name__)
_client_log = logging.getLogger("sluice.storage.librdkafka")

#: How long :meth:`KafkaBasedLog.start` waits for a (new) topic's partitions to appear.
TOPIC_METADATA_TIMEOUT = 30.0
_POLL_TIMEOUT = 0.2
_BATCH = 500

Key = bytes | str | None
Value = bytes | str | None


#: Errors that mean another producer with the same transactional id took over.
_FENCING_ERRORS = frozenset({LOCAL_FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH})


@dataclass(frozen=True)
class ConsumedRecord:
    """One record read from the log (key and value as raw bytes; ``None`` for null)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int | None = None


@dataclass(frozen=True)
class RecordPosition:
    """Where an appended record landed."""

    partition: int
    offset: int


@dataclass(frozen=True)
class TopicSettings:
    """How to create a missing internal topic and how to name it in errors.

    ``partitions`` and ``replication_factor`` may be ``-1`` for the broker's defaults.
    ``config`` holds extra topic-level settings (``min.insync.replicas``, ...);
    ``cleanup.policy`` is always ``compact``, whatever ``config`` says.
    ``worker_config_key`` (``config.storage.topic``) and ``purpose`` ("connector
    configurations") only make error messages point at the right worker setting.
    """

    name: str
    partitions: int = 1
    replication_factor: int = 3
    config: Mapping[str, str] = field(default_factory=dict)
    worker_config_key: str = ""
    purpose: str = "this log"

    def described(self) -> str:
        where = f" (set by '{self.worker_config_key}')" if self.worker_config_key else ""
        return f"topic '{self.name}'{where}"


# ----------------------------------------------------------------------------- topic admin


_CANNOT_CREATE = {
    KafkaError.CLUSTER_AUTHORIZATION_FAILED,
    KafkaError.TOPIC_AUTHORIZATION_FAILED,
    KafkaError.UNSUPPORTED_VERSION,
}


def ensure_topic(admin: AdminClient, settings: TopicSettings, *, timeout: float = 60.0) -> bool:
    """Create ``settings.name`` compacted if missing, or check the existing topic's cleanup policy.

    Returns ``True`` when this call created the topic. An existing topic whose
    ``cleanup.policy`` is anything but ``compact`` alone (``delete``,
    ``compact,delete``) raises :class:`~sluice.api.errors.ConfigError`: deleting old
    records would lose configs, offsets or statuses. When the policy cannot be read
    (no permission), or the topic cannot be created for lack of permission, this logs
    and carries on, as Kafka Connect does; a missing topic then fails later, when its
    partitions are looked up. Other creation errors raise
    :class:`~sluice.api.errors.ConnectError`; retriable ones are retried until ``timeout``.
    """
    config = {str(k): str(v) for k, v in settings.config.items()}
    if config.get("cleanup.policy", "compact") != "compact":
        log.warning(
            "Ignoring cleanup.policy=%s for %s: Connect's internal topics are always compacted",
            config["cleanup.policy"],
            settings.described(),
        )
    config["cleanup.policy"] = "compact"
    new_topic = NewTopic(
        settings.name,
        num_partitions=settings.partitions,
        replication_factor=settings.replication_factor,
        config=config,
    )
    deadline = time.monotonic() + timeout
    backoff = 0.1
    while True:
        remaining = max(deadline - time.monotonic(), 0.1)
        futures = admin.create_topics(
            [new_topic], operation_timeout=min(remaining, 30.0), request_timeout=min(remaining, 30.0)
        )
        try:
            futures[settings.name].result(timeout=remaining + 5)
        except KafkaException as e:
            err = kafka_error(e)
            if err is not None and err.code() == KafkaError.TOPIC_ALREADY_EXISTS:
                break
            if err is not None and err.code() in _CANNOT_CREATE:
                log.info("Cannot create %s (%s); assuming it exists", settings.described(), err.str())
                break
            if retriable(err) and time.monotonic() < deadline:
                log.info("Creating %s failed (%s); retrying", settings.described(), err.str())
                time.sleep(min(backoff, max(deadline - time.monotonic(), 0)))
                backoff = min(backoff * 2, 2.0)
                continue
            reason = err.str() if err is not None else str(e)
            raise ConnectError(f"Could not create {settings.described()} for {settings.purpose}: {reason}") from e
        except concurrent.futures.TimeoutError as e:
            raise ConnectError(f"Timed out after {timeout:.0f} s creating {settings.described()}") from e
        else:
            log.info(
                "Created %s for %s (partitions=%s, replication factor=%s)",
                settings.described(),
                settings.purpose,
                settings.partitions,
                settings.replication_factor,
            )
            return True
    _check_cleanup_policy(admin, settings, timeout=max(deadline - time.monotonic(), 5.0))
    return False


def topic_cleanup_policy(admin: AdminClient, topic: str, *, timeout: float = 30.0) -> set[str] | None:
    """The topic's ``cleanup.policy`` values (lower case), or ``None`` if they cannot be read."""
    resource = ConfigResource(ResourceType.TOPIC, topic)
    try:
        entries = admin.describe_configs([resource], request_timeout=timeout)[resource].result(timeout=timeout + 5)
    except KafkaException as e:
        log.debug("Could not describe the configuration of topic '%s': %s", topic, e)
        return None
    except concurrent.futures.TimeoutError:
        log.debug("Timed out describing the configuration of topic '%s'", topic)
        return None
    # describe_configs keys its result by the resource; some versions key by name.
    entry = entries.get("cleanup.policy") if isinstance(entries, dict) else None
    if entry is None or entry.value is None:
        return None
    return {part.strip().lower() for part in str(entry.value).split(",") if part.strip()}


def _check_cleanup_policy(admin: AdminClient, settings: TopicSettings, *, timeout: float) -> None:
    policies = topic_cleanup_policy(admin, settings.name, timeout=timeout)
    if not policies:
        log.info(
            "Could not check that %s has cleanup.policy=compact (no permission to describe topic "
            "configs, or the topic does not exist yet); continuing",
            settings.described(),
        )
        return
    if policies != {"compact"}:
        found = ",".join(sorted(policies))
        setting = f"'{settings.worker_config_key}'" if settings.worker_config_key else "the worker setting"
        raise ConfigError(
            f"Kafka Connect keeps {settings.purpose} in {settings.described()}, which must be a "
            f"compacted topic with cleanup.policy=compact and nothing else, but it has "
            f"cleanup.policy={found}. With that policy the broker would eventually delete "
            f"{settings.purpose} and the cluster could not restart correctly. Point {setting} "
            f"at a topic with cleanup.policy=compact, or change the topic's policy."
        )


# ----------------------------------------------------------------------------- the log


class _PositionWaiter:
    __slots__ = ("targets",)

    def __init__(self, targets: dict[int, int]) -> None:
        self.targets = targets


class KafkaBasedLog:
    """A Kafka topic read from the beginning into ``on_record``, with a producer to append.

    ``client_config`` holds librdkafka settings common to the consumer, producer and
    admin client (``bootstrap.servers``, security settings); ``producer_config``,
    ``consumer_config`` and ``admin_config`` add to it per client. ``topic`` is a name
    (the topic must exist) or :class:`TopicSettings` (created when missing, its cleanup
    policy checked when present). ``read_only`` logs have no producer.
    """

    def __init__(
        self,
        topic: str | TopicSettings,
        client_config: Mapping[str, Any],
        on_record: Callable[[ConsumedRecord], None],
        *,
        producer_config: Mapping[str, Any] | None = None,
        consumer_config: Mapping[str, Any] | None = None,
        admin_config: Mapping[str, Any] | None = None,
        client_id: str | None = None,
        read_only: bool = False,
    ) -> None:
        self._settings = topic if isinstance(topic, TopicSettings) else None
        self.topic = topic.name if isinstance(topic, TopicSettings) else topic
        self._on_record = on_record
        self._read_only = read_only
        base = {"logger": _client_log, **dict(client_config)}
        if client_id:
            base.setdefault("client.id", client_id)
        self._admin_config = {**base, **dict(admin_config or {})}
        self._producer_config = {
            **base,
            "acks": "all",
            "max.in.flight.requests.per.connection": 1,
            "enable.idempotence": False,
            "partitioner": "murmur2_random",
            "linger.ms": 0,
            **dict(producer_config or {}),
        }
        self._consumer_config = {
            **base,
            # librdkafka's Consumer insists on a group id; assign() never joins the group
            # and nothing is committed.
            "group.id": f"sluice-log-reader-{self.topic}",
            "isolation.level": "read_uncommitted",
            **dict(consumer_config or {}),
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "auto.offset.reset": "earliest",
            "enable.partition.eof": True,
        }
        self._admin: AdminClient | None = None
        self._producer: Producer | None = None
        self._transactional: Producer | None = None
        self._transactional_id: str | None = None
        self._consumer: Consumer | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._cond = threading.Condition()
        self._positions: dict[int, int] = {}  # next offset to read, per partition
        self._partitions: list[int] = []
        self._reader_error: BaseException | None = None
        self._created_topic = False

    # ------------------------------------------------------------------ lifecycle

    @property
    def partition_count(self) -> int:
        """How many partitions the topic has (known after :meth:`start`)."""
        return len(self._partitions)

    @property
    def created_topic(self) -> bool:
        """Whether :meth:`start` created the topic."""
        return self._created_topic

    @property
    def admin(self) -> AdminClient:
        if self._admin is None:
            self._admin = AdminClient(self._admin_config)
        return self._admin

    def start(self, timeout: float = 60.0) -> None:
        """Create or check the topic, read it to the end, then keep tailing it in the background.

        A ``read_committed`` reader reads to the last stable offset here: what was committed
        when it started, not the records of transactions still open. A transaction a
        producer left open when it died stays open until it is fenced or times out
        (``transaction.timeout.ms``, a minute by default), and waiting for it would stop a
        worker from starting — the worker whose task would fence it, when it is the only
        one. :meth:`read_to_end` still waits for every transaction, so a store that reads
        before it answers sees them once they end."""
        if self._thread is not None:
            raise IllegalWorkerStateError(f"The log of topic '{self.topic}' is already started")
        deadline = time.monotonic() + timeout
        log.info("Starting the log of topic '%s'", self.topic)
        try:
            self._admin = AdminClient(self._admin_config)
            if self._settings is not None:
                self._created_topic = ensure_topic(self.admin, self._settings, timeout=timeout)
            self._consumer = Consumer(self._consumer_config)
            self._partitions = self._wait_for_partitions(
                min(TOPIC_METADATA_TIMEOUT, max(deadline - time.monotonic(), 1.0))
            )
            with self._cond:
                self._positions = {p: 0 for p in self._partitions}
            self._consumer.assign(
                [TopicPartition(self.topic, p, -2) for p in self._partitions]  # -2: OFFSET_BEGINNING
            )
            if not self._read_only:
                self._producer = Producer(self._producer_config)
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name=f"kafka-log-{self.topic}", daemon=True)
            self._thread.start()
            remaining = max(deadline - time.monotonic(), 1.0)
            if self._consumer_config.get("isolation.level") == "read_committed":
                ends = self.end_offsets(timeout=remaining, committed=True)
                self._wait(ends, deadline, f"read topic '{self.topic}' to its last stable offset")
            else:
                self.read_to_end(timeout=remaining)
        except BaseException:
            self.stop()
            raise
        log.info("Read topic '%s' to the end (%d partitions)", self.topic, len(self._partitions))

    def stop(self, timeout: float = 30.0) -> None:
        """Flush pending writes, stop the reader thread and close the clients."""
        if self._producer is not None:
            remaining = self._producer.flush(timeout)
            if remaining:
                log.warning("%d records to topic '%s' were still unsent when the log stopped", remaining, self.topic)
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        if self._consumer is not None:
            try:
                self._consumer.close()
            except (KafkaException, RuntimeError) as e:
                log.debug("Closing the consumer of topic '%s': %s", self.topic, e)
            self._consumer = None
        self._producer = None
        self.release_transactions()
        self._admin = None
        with self._cond:
            self._cond.notify_all()

    def _wait_for_partitions(self, timeout: float) -> list[int]:
        assert self._consumer is not None
        deadline = time.monotonic() + timeout
        last_error: object = None
        while True:
            try:
                metadata = self._consumer.list_topics(
                    self.topic, timeout=max(min(deadline - time.monotonic(), 5.0), 0.5)
                )
                topic = metadata.topics.get(self.topic)
                if topic is not None and topic.error is None and topic.partitions:
                    return sorted(topic.partitions)
                last_error = topic.error if topic is not None else "no metadata"
            except KafkaException as e:
                last_error = e
            if time.monotonic() >= deadline:
                raise ConnectError(
                    f"Could not find the partitions of topic '{self.topic}' within {timeout:.0f} s "
                    f"({last_error}). The brokers may be unreachable, or the topic may not exist "
                    f"or still be being created."
                )
            time.sleep(0.1)

    # ------------------------------------------------------------------ reading

    def on_reader_thread(self) -> bool:
        """Whether the caller runs on the reader thread (inside ``on_record`` or a send callback)."""
        return self._thread is not None and threading.current_thread() is self._thread

    def end_offsets(self, timeout: float = 30.0, *, committed: bool = False) -> dict[int, int]:
        """The end offset (next offset to be written) of every partition, asked of the brokers
        now: the high watermark, whatever the reader's isolation level (Kafka's
        ``TopicAdmin.endOffsets``), so it covers transactions still being committed; with
        ``committed``, the last stable offset (the first offset of the earliest transaction
        still open)."""
        self._check_started()
        request = {TopicPartition(self.topic, p): OffsetSpec.latest() for p in self._partitions}
        isolation = IsolationLevel.READ_COMMITTED if committed else IsolationLevel.READ_UNCOMMITTED
        deadline = time.monotonic() + timeout
        while True:
            remaining = max(deadline - time.monotonic(), 0.1)
            try:
                futures = self.admin.list_offsets(request, isolation_level=isolation, request_timeout=remaining)
                return {tp.partition: future.result(timeout=remaining + 5).offset for tp, future in futures.items()}
            except KafkaException as e:
                err = kafka_error(e)
                if not retriable(err) or time.monotonic() >= deadline:
                    raise ConnectError(f"Could not read the end offsets of topic '{self.topic}': {e}") from e
                time.sleep(0.1)
            except concurrent.futures.TimeoutError as e:
                raise ConnectError(f"Timed out reading the end offsets of topic '{self.topic}'") from e

    def read_to_end(self, timeout: float = 30.0) -> None:
        """Block until every record written before this call was handed to ``on_record``.

        A ``read_committed`` reader passes a transaction only once its commit or abort marker
        is written, which can be after ``commit_transaction`` returned (the coordinator
        writes the markers afterwards) and after another worker's transaction ended; so, as
        on Kafka Connect, this waits for the transactions among those records to end.

        Raises :class:`~sluice.api.errors.ConnectError` on timeout or when the reader stopped.
        """
        self._check_not_reader("read_to_end")
        deadline = time.monotonic() + timeout
        if self._producer is not None:
            self._producer.flush(max(deadline - time.monotonic(), 0))
        ends = self.end_offsets(timeout=max(deadline - time.monotonic(), 0.1))
        self._wait(ends, deadline, f"read topic '{self.topic}' to the end")

    def wait_for_positions(self, positions: Sequence[RecordPosition], timeout: float = 30.0) -> None:
        """Block until the reader has handed over the records at ``positions`` (and all before them)."""
        self._check_not_reader("wait_for_positions")
        targets: dict[int, int] = {}
        for position in positions:
            targets[position.partition] = max(targets.get(position.partition, 0), position.offset + 1)
        self._wait(targets, time.monotonic() + timeout, f"read back records of topic '{self.topic}'")

    def position(self, partition: int) -> int:
        """The next offset the reader will hand over for ``partition``."""
        with self._cond:
            return self._positions.get(partition, 0)

    def _wait(self, targets: Mapping[int, int], deadline: float, what: str) -> None:
        with self._cond:
            while True:
                if self._reader_error is not None:
                    raise ConnectError(f"Could not {what}: the reader failed: {self._reader_error}")
                if all(self._positions.get(p, 0) >= end for p, end in targets.items()):
                    return
                if self._thread is None or self._stop.is_set():
                    raise ConnectError(f"Could not {what}: the log is stopped")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    behind = {
                        p: (self._positions.get(p, 0), end)
                        for p, end in targets.items()
                        if self._positions.get(p, 0) < end
                    }
                    raise ConnectError(f"Timed out trying to {what}; behind on (partition: (position, end)) {behind}")
                self._cond.wait(min(remaining, 1.0))

    def _run(self) -> None:
        consumer = self._consumer
        assert consumer is not None
        try:
            while not self._stop.is_set():
                # consume(n, timeout) waits for n messages or the timeout: wait for the
                # first record with poll(), then take whatever else is already there.
                first = consumer.poll(_POLL_TIMEOUT)
                messages = [] if first is None else [first, *consumer.consume(_BATCH, 0)]
                advanced = False
                for message in messages:
                    advanced |= self._handle(message)
                if self._producer is not None:
                    self._producer.poll(0)  # serve delivery callbacks of send()
                if advanced:
                    with self._cond:
                        self._cond.notify_all()
        except BaseException as e:  # keep waiters from hanging on a dead reader
            log.exception("The reader of topic '%s' failed", self.topic)
            with self._cond:
                self._reader_error = e
                self._cond.notify_all()

    def _handle(self, message: Message) -> bool:
        error = message.error()
        partition, offset = message.partition(), message.offset()
        if error is not None:
            if error.code() == LOCAL_PARTITION_EOF:
                with self._cond:
                    if partition is not None and offset is not None and offset > self._positions.get(partition, 0):
                        self._positions[partition] = offset
                return True
            log.warning("Error reading topic '%s': %s", self.topic, error.str())
            return False
        if partition is None or offset is None:  # librdkafka sets both on every record
            log.warning("Ignoring a record of topic '%s' without a partition or offset", self.topic)
            return True
        record = ConsumedRecord(
            topic=message.topic() or self.topic,
            partition=partition,
            offset=offset,
            key=message.key(),
            value=message.value(),
            timestamp=message.timestamp()[1] if message.timestamp()[0] else None,
        )
        try:
            self._on_record(record)
        except Exception:
            log.exception(
                "Unexpected error handling record at offset %d of partition %d of topic '%s'",
                record.offset,
                partition,
                self.topic,
            )
        with self._cond:
            if record.offset + 1 > self._positions.get(partition, 0):
                self._positions[partition] = record.offset + 1
        return True

    # ------------------------------------------------------------------ writing

    def send(
        self,
        key: Key,
        value: Value,
        callback: Callable[[KafkaError | None, RecordPosition | None], None] | None = None,
    ) -> None:
        """Append one record asynchronously; ``callback(error, position)`` reports the outcome."""
        producer = self._writable()

        def on_delivery(error: KafkaError | None, message: Message) -> None:
            if callback is None:
                if error is not None:
                    log.error("Could not write to topic '%s': %s", self.topic, error.str())
                return
            partition, offset = message.partition(), message.offset()
            position = None
            if error is None and partition is not None and offset is not None:
                position = RecordPosition(partition, offset)
            try:
                callback(error, position)
            except Exception:
                log.exception("Unexpected error in a delivery callback of topic '%s'", self.topic)

        while True:
            try:
                producer.produce(self.topic, key=key, value=value, on_delivery=on_delivery)
                return
            except BufferError:  # local queue full: serve callbacks, then retry
                producer.poll(0.1)

    def flush(self, timeout: float = 30.0) -> None:
        """Wait until every record sent so far was acknowledged (or failed)."""
        if self._producer is not None:
            remaining = self._producer.flush(timeout)
            if remaining:
                raise ConnectError(f"Timed out flushing {remaining} records to topic '{self.topic}'")

    def write(self, records: Sequence[tuple[Key, Value]], timeout: float = 30.0) -> list[RecordPosition]:
        """Append ``records`` in order and wait until the brokers acknowledged all of them.

        Returns where each record landed. Raises :class:`~sluice.api.errors.ConnectError`
        if any could not be written (or on timeout).
        """
        deadline = time.monotonic() + timeout
        futures: list[concurrent.futures.Future[RecordPosition]] = []
        for key, value in records:
            future: concurrent.futures.Future[RecordPosition] = concurrent.futures.Future()

            def done(
                error: KafkaError | None,
                position: RecordPosition | None,
                future: concurrent.futures.Future[RecordPosition] = future,
            ) -> None:
                if error is not None:
                    future.set_exception(ConnectError(f"Could not write to topic '{self.topic}': {error.str()}"))
                else:
                    assert position is not None
                    future.set_result(position)

            self.send(key, value, done)
            futures.append(future)
        producer = self._writable()
        producer.flush(max(deadline - time.monotonic(), 0))
        positions = []
        for future in futures:
            try:
                positions.append(future.result(timeout=max(deadline - time.monotonic(), 0)))
            except concurrent.futures.TimeoutError as e:
                raise ConnectError(f"Timed out writing {len(records)} records to topic '{self.topic}'") from e
        return positions

    def claim_transactions(self, transactional_id: str, timeout: float = 60.0) -> None:
        """Set up a producer with ``transactional_id`` for :meth:`write_transaction` and
        initialise it now, which fences every earlier producer with that id (its open
        transaction is aborted, its next write fails). Claiming the id already held is a
        no-op. Raises :class:`~sluice.api.errors.ConnectError` when the brokers refuse (no
        permission on the transactional id) or do not answer in time."""
        self._writable()
        if self._transactional is not None and self._transactional_id == transactional_id:
            return
        self.release_transactions()
        producer = Producer(transactional_settings(self._producer_config, transactional_id))
        try:
            producer.init_transactions(timeout)
        except KafkaException as e:
            raise ConnectError(
                f"Could not initialise the transactional producer {transactional_id!r} of topic "
                f"'{self.topic}' (it needs the WRITE and DESCRIBE permissions on that transactional id): {e}"
            ) from e
        self._transactional, self._transactional_id = producer, transactional_id

    def release_transactions(self) -> None:
        """Drop the producer :meth:`claim_transactions` set up (if any). Never raises: a
        producer dropped because it was fenced or failed fatally reports that error again
        when flushed, and the caller has already reported it."""
        producer, self._transactional, self._transactional_id = self._transactional, None, None
        if producer is not None:
            try:
                producer.flush(0)
            except KafkaException as e:
                log.debug("The dropped transactional producer of topic '%s' reported: %s", self.topic, e)

    @property
    def transactional_id(self) -> str | None:
        """The transactional id claimed and not fenced since, or ``None``."""
        return self._transactional_id

    def write_transaction(self, records: Sequence[tuple[Key, Value]], timeout: float = 30.0) -> None:
        """Append ``records`` in one transaction of the claimed producer, committed when this
        returns (:meth:`read_to_end` then shows them). Not thread-safe: callers serialise.

        Raises :class:`~sluice.api.errors.ConnectError` on failure: when a newer producer
        with the same transactional id fenced this one, or any fatal error, the producer is
        dropped; otherwise the transaction is aborted. Nothing of it is visible to
        ``read_committed`` readers either way."""
        producer, transactional_id = self._transactional, self._transactional_id
        if producer is None:
            raise IllegalWorkerStateError(f"No transactional producer was claimed for topic '{self.topic}'")
        deadline = time.monotonic() + timeout
        try:
            producer.begin_transaction()
            for key, value in records:
                # No delivery callbacks: confluent-kafka runs those of a transaction a fatal
                # error ended with a Python exception already set (a SystemError); the
                # commit reports every failure, after flushing the records.
                producer.produce(self.topic, key=key, value=value)
            producer.commit_transaction(max(deadline - time.monotonic(), 0.1))
        except KafkaException as e:
            error = kafka_error(e)
            if error is not None and error.code() in _FENCING_ERRORS:
                self.release_transactions()
                raise ConnectError(
                    f"The transactional producer {transactional_id!r} of topic '{self.topic}' was fenced "
                    f"by a newer producer with the same transactional id: {e}"
                ) from e
            if error is not None and error.fatal():
                self.release_transactions()
                raise ConnectError(f"Could not write to topic '{self.topic}' in a transaction: {e}") from e
            self._abort(producer, deadline)
            raise ConnectError(f"Could not write to topic '{self.topic}' in a transaction (aborted): {e}") from e

    def _abort(self, producer: Producer, deadline: float) -> None:
        try:
            producer.abort_transaction(max(deadline - time.monotonic(), 1.0))
        except KafkaException as e:  # the producer cannot go on: the next write claims again
            log.warning("Could not abort a transaction on topic '%s': %s", self.topic, e)
            if producer is self._transactional:
                self.release_transactions()

    # ------------------------------------------------------------------ internals

    def _writable(self) -> Producer:
        if self._read_only:
            raise IllegalWorkerStateError(f"The log of topic '{self.topic}' is read-only")
        if self._producer is None:
            raise IllegalWorkerStateError(f"The log of topic '{self.topic}' is not started")
        return self._producer

    def _check_started(self) -> None:
        if self._consumer is None:
            raise IllegalWorkerStateError(f"The log of topic '{self.topic}' is not started")

    def _check_not_reader(self, what: str) -> None:
        if self.on_reader_thread():
            raise IllegalWorkerStateError(
                f"{what}() was called on the reader thread of topic '{self.topic}' (from a record "
                f"or delivery callback), where it would wait for itself; call it from another thread"
            )
