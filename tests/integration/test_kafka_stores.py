"""The Kafka-topic stores against a real broker, and against Apache Kafka Connect itself.

* Each store written by one instance is read back the same by a second instance (after
  its start-up read to the end) and heard by a listener.
* Internal topics are created compacted with the partitions asked for; a config topic
  with several partitions and any topic that is not compact-only are refused.
* Interoperability with a real ``ConnectDistributed`` 4.3.1 worker on the same topics:
  Sluice's stores read what it wrote (config, PAUSED target state, task configs, the
  RUNNING/PAUSED statuses, offsets), every record it wrote re-encodes to the same bytes,
  keys land on the same partitions; and the Java worker runs, pauses, resumes, stops,
  restarts and deletes a connector written by Sluice's config store.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, ResourceType

from sluice.api.errors import ConfigError, ConnectError, IllegalWorkerStateError
from sluice.kafka.offset_format import encode_offset_key, encode_offset_value
from sluice.rest import entities
from sluice.rest.responses import JsonResponse
from sluice.runtime.herder.base import ConnectorStateInfo, StateInfo, TaskStateInfo
from sluice.storage.base import ConnectorStatus, TaskStatus
from sluice.storage.kafka_config import (
    ConfigUpdateListener,
    KafkaConfigBackingStore,
    PrivilegedWriteError,
    RestartRequest,
)
from sluice.storage.kafka_formats import (
    decode_connector_config,
    decode_restart_request,
    decode_session_key,
    decode_status,
    decode_target_state,
    decode_task_commit,
    decode_topic_status,
    encode_connector_config,
    encode_restart_request,
    encode_session_key,
    encode_status,
    encode_target_state,
    encode_task_commit,
    encode_topic_status,
    parse_config_key,
)
from sluice.storage.kafka_log import ConsumedRecord, KafkaBasedLog, TopicSettings
from sluice.storage.kafka_offsets import KafkaOffsetBackingStore
from sluice.storage.kafka_status import KafkaStatusBackingStore, StatusChange
from sluice.storage.offset_codec import connector_offsets
from tests.helpers import wait_until
from tests.integration.kafka_connect_reference import ConnectDistributedWorker

pytestmark = pytest.mark.integration


def _client(bootstrap: str) -> dict[str, str]:
    return {"bootstrap.servers": bootstrap}


def _admin(bootstrap: str) -> AdminClient:
    return AdminClient(_client(bootstrap))


def _describe(bootstrap: str, topic: str) -> tuple[int, str]:
    admin = _admin(bootstrap)
    partitions = len(admin.list_topics(topic, timeout=10).topics[topic].partitions)
    resource = ConfigResource(ResourceType.TOPIC, topic)
    policy = admin.describe_configs([resource])[resource].result(timeout=10)["cleanup.policy"].value
    return partitions, policy


def _create_topic(bootstrap: str, topic: str, partitions: int, config: dict[str, str]) -> None:
    admin = _admin(bootstrap)  # keep the client alive until the result arrives
    admin.create_topics([NewTopic(topic, partitions, 1, config=config)])[topic].result(timeout=30)


def _read_all(bootstrap: str, topic: str) -> list[ConsumedRecord]:
    """Every record of ``topic`` as it is now, through a read-only log."""
    records: list[ConsumedRecord] = []
    log = KafkaBasedLog(topic, _client(bootstrap), records.append, read_only=True)
    log.start(timeout=30)
    log.stop()
    return records


class RecordingListener(ConfigUpdateListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_connector_config_update(self, connector: str) -> None:
        self.events.append(("config", connector))

    def on_connector_config_remove(self, connector: str) -> None:
        self.events.append(("remove", connector))

    def on_connector_target_state_change(self, connector: str) -> None:
        self.events.append(("target", connector))

    def on_task_config_update(self, tasks: list[tuple[str, int]]) -> None:
        self.events.append(("tasks", tuple(tasks)))

    def on_restart_request(self, request: RestartRequest) -> None:
        self.events.append(("restart", request))

    def on_logger_level_update(self, namespace: str, level: str) -> None:
        self.events.append(("logger", (namespace, level)))


@pytest.fixture
def stores() -> Iterator[list[Any]]:
    """Stores a test starts; stopped at the end whatever happens."""
    started: list[Any] = []
    yield started
    for store in reversed(started):
        store.stop()


def _started(stores: list[Any], store: Any) -> Any:
    store.start()
    stores.append(store)
    return store


# ----------------------------------------------------------------------------- the log


def test_kafka_based_log_reads_to_the_end_of_what_others_wrote(kafka_bootstrap: str, unique_name: str) -> None:
    client = _client(kafka_bootstrap)
    settings = TopicSettings(f"log-{unique_name}", partitions=3, replication_factor=1)
    seen: list[ConsumedRecord] = []
    reader = KafkaBasedLog(settings, client, seen.append, read_only=True)
    writer = KafkaBasedLog(settings, client, lambda record: None)
    writer.start(timeout=30)
    reader.start(timeout=30)  # an empty topic: start's read to the end returns at once
    try:
        assert reader.partition_count == 3 and seen == []
        with pytest.raises(IllegalWorkerStateError, match="read-only"):
            reader.send(b"k", b"v")
        outcomes: list[tuple[object, object]] = []
        for i in range(30):
            writer.send(
                f"key-{i % 7}", f"value-{i}".encode(), lambda error, position: outcomes.append((error, position))
            )
        writer.send(b"key-0", None)  # a tombstone is a record with a null value
        writer.flush()
        assert len(outcomes) == 30 and all(error is None for error, _ in outcomes)
        reader.read_to_end(timeout=10)
        assert len(seen) == 31
        assert [r.value for r in seen if r.key == b"key-0"][-1] is None
        by_partition: dict[int, list[int]] = {}
        for record in seen:
            by_partition.setdefault(record.partition, []).append(record.offset)
        assert all(offsets == sorted(offsets) for offsets in by_partition.values())  # log order per partition
        assert sum(reader.end_offsets().values()) == 31
    finally:
        reader.stop()
        writer.stop()


def test_replication_factor_the_cluster_cannot_meet_is_a_clear_error(kafka_bootstrap: str, unique_name: str) -> None:
    store = KafkaOffsetBackingStore(f"offsets-{unique_name}", _client(kafka_bootstrap))  # Kafka's default: 3
    with pytest.raises(ConnectError, match=r"Could not create topic .*offset\.storage\.topic.*replication factor of 3"):
        store.start()


# ----------------------------------------------------------------------------- config store


def test_config_store_round_trip(kafka_bootstrap: str, unique_name: str, stores: list[Any]) -> None:
    topic = f"configs-{unique_name}"
    client = _client(kafka_bootstrap)
    writer = _started(stores, KafkaConfigBackingStore(topic, client, replication_factor=1))
    heard = RecordingListener()
    follower = _started(stores, KafkaConfigBackingStore(topic, client, replication_factor=1, listener=heard))

    name = "my-conn-1"  # a dash and a digit: task keys must still parse
    config = {"name": name, "connector.class": "FileStreamSource", "file": "/tmp/ü n", "tasks.max": "2"}
    writer.put_connector_config(name, config, target_state="PAUSED")
    snap = writer.snapshot()  # visible when the put returns
    assert snap.connector_config(name) == config
    assert snap.target_state(name) == "PAUSED"
    writer.put_task_configs(name, [{"task": "0"}, {"task": "1"}])
    writer.put_target_state(name, "STOPPED")
    writer.put_connector_config("other", {"name": "other"})
    writer.put_task_configs("other", [])
    writer.put_restart_request(name, only_failed=True, include_tasks=True)
    writer.put_logger_level("org.example", "DEBUG")

    expected = writer.snapshot()
    assert expected.tasks(name) == [{"task": "0"}, {"task": "1"}]
    assert expected.target_state(name) == "STOPPED"
    assert expected.task_configs["other"] == []
    # the task configs were written for this connector config: the same ones again change nothing
    assert expected.applied_config(name) == config
    assert not expected.task_configs_changed(name, [{"task": "0"}, {"task": "1"}])
    assert expected.task_configs_changed(name, [{"task": "0"}])

    follower.refresh()
    assert follower.snapshot() == expected
    wait_until(
        lambda: ("logger", ("org.example", "DEBUG")) in heard.events,
        timeout=10,
        message=lambda: f"listener events {heard.events}",
    )
    assert heard.events == [
        ("config", name),
        ("tasks", ((name, 0), (name, 1))),
        ("target", name),
        ("config", "other"),
        ("tasks", ()),
        ("restart", RestartRequest(name, only_failed=True, include_tasks=True)),
        ("logger", ("org.example", "DEBUG")),
    ]

    # a third instance reads the whole history at start, and its listener hears nothing of it
    late_heard = RecordingListener()
    late = _started(stores, KafkaConfigBackingStore(topic, client, replication_factor=1, listener=late_heard))
    assert late.snapshot() == expected
    assert late_heard.events == []

    writer.remove_connector_config(name)
    late.refresh()
    snap = late.snapshot()
    assert snap.connectors() == ["other"]
    assert name not in snap.target_states and snap.tasks(name) == []
    wait_until(lambda: ("remove", name) in late_heard.events, timeout=10)

    # a changed connector config asks for its task configs to be written again, though they
    # are the same: its tasks may use its converters or transforms (Kafka's KAFKA-9228)
    writer.put_connector_config("other", {"name": "other", "value.converter": "JsonConverter"})
    late.refresh()
    for seen in (writer.snapshot(), late.snapshot()):
        assert seen.applied_config("other") == {"name": "other"}
        assert seen.task_configs_changed("other", [])
    writer.put_task_configs("other", [])
    late.refresh()
    assert not late.snapshot().task_configs_changed("other", [])

    assert _describe(kafka_bootstrap, topic) == (1, "compact")


def test_config_store_refuses_writes_from_its_listener(
    kafka_bootstrap: str, unique_name: str, stores: list[Any]
) -> None:
    topic = f"configs-{unique_name}"
    errors: list[BaseException] = []
    store = KafkaConfigBackingStore(topic, _client(kafka_bootstrap), replication_factor=1)

    class Writer(ConfigUpdateListener):
        def on_connector_config_update(self, connector: str) -> None:
            try:
                store.put_target_state(connector, "PAUSED")
            except BaseException as e:  # noqa: BLE001 - recorded for the assertion
                errors.append(e)

    store.set_update_listener(Writer())
    _started(stores, store)
    store.put_connector_config("c", {"name": "c"})
    wait_until(lambda: errors, timeout=10)
    assert isinstance(errors[0], IllegalWorkerStateError)
    assert "reader thread" in str(errors[0])
    assert store.snapshot().target_state("c") == "STARTED"  # refused before anything was written


def test_the_leaders_transactional_writes_fence_earlier_leaders(
    kafka_bootstrap: str, unique_name: str, stores: list[Any]
) -> None:
    """Two workers' config stores with Kafka's leader transactional id: the one that
    claims it last writes; the other's next leader write fails with an error that says it
    may be retried, and the retry claims the id back. Readers with ``read_committed``
    never see an aborted transaction; plain writes (target states) need no claim."""
    topic = f"configs-{unique_name}"
    leader_id = f"connect-cluster-{unique_name}"

    def store() -> KafkaConfigBackingStore:
        return _started(
            stores,
            KafkaConfigBackingStore(
                topic,
                _client(kafka_bootstrap),
                replication_factor=1,
                leader_transactional_id=leader_id,
                read_committed=True,
            ),
        )

    first, second = store(), store()
    first.claim_write_privileges()
    assert first.holds_write_privileges and not second.holds_write_privileges
    first.put_connector_config("a", {"name": "a"})
    first.put_task_configs("a", [{"k": "0"}, {"k": "1"}])
    second.refresh()
    assert second.snapshot().task_configs["a"] == [{"k": "0"}, {"k": "1"}]

    second.claim_write_privileges()  # a new leader: the first is now a zombie
    with pytest.raises(PrivilegedWriteError, match="can be safely retried"):
        first.put_connector_config("b", {"name": "b"})
    second.refresh()
    assert not second.snapshot().contains("b")
    first.put_target_state("a", "PAUSED")  # not a leader's write: no transaction
    second.put_task_count_record("a", 2)

    first.put_connector_config("b", {"name": "b"})  # the retry claims the id back
    with pytest.raises(PrivilegedWriteError):
        second.put_task_configs("a", [{"k": "0"}])
    first.refresh()
    snapshot = first.snapshot()
    assert snapshot.contains("b") and snapshot.target_state("a") == "PAUSED"
    assert snapshot.task_count_records["a"] == 2
    assert snapshot.task_configs["a"] == [{"k": "0"}, {"k": "1"}]  # the fenced write left nothing

    # A transaction aborted by another producer with the id is never applied.
    zombie = Producer({"bootstrap.servers": kafka_bootstrap, "transactional.id": leader_id})
    zombie.init_transactions(30)
    zombie.begin_transaction()
    zombie.produce(topic, key=b"connector-ghost", value=encode_connector_config({"name": "ghost"}))
    zombie.flush(30)
    zombie.abort_transaction(30)
    second.release_write_privileges()
    second.put_connector_config("c", {"name": "c"})  # plain again once released
    for reader in (first, second):
        reader.refresh()
        assert reader.snapshot().contains("c") and not reader.snapshot().contains("ghost")


def test_multi_partition_config_topic_is_refused(kafka_bootstrap: str, unique_name: str) -> None:
    topic = f"configs-{unique_name}"
    _create_topic(kafka_bootstrap, topic, 3, {"cleanup.policy": "compact"})
    store = KafkaConfigBackingStore(topic, _client(kafka_bootstrap), replication_factor=1)
    with pytest.raises(ConfigError) as raised:
        store.start()
    message = str(raised.value)
    assert f"'{topic}'" in message and "config.storage.topic" in message
    assert "3 partitions" in message and "exactly one" in message


@pytest.mark.parametrize(
    ("make", "setting", "purpose"),
    [
        (
            lambda t, c: KafkaConfigBackingStore(t, c, replication_factor=1),
            "config.storage.topic",
            "connector configurations",
        ),
        (
            lambda t, c: KafkaOffsetBackingStore(t, c, replication_factor=1, partitions=2),
            "offset.storage.topic",
            "source connector offsets",
        ),
        (
            lambda t, c: KafkaStatusBackingStore(t, c, replication_factor=1, partitions=2),
            "status.storage.topic",
            "connector and task statuses",
        ),
    ],
    ids=["config", "offset", "status"],
)
@pytest.mark.parametrize("policy", ["delete", "compact,delete"])
def test_topic_that_is_not_compact_only_is_refused(
    kafka_bootstrap: str,
    unique_name: str,
    make: Callable[[str, dict[str, str]], Any],
    setting: str,
    purpose: str,
    policy: str,
) -> None:
    topic = f"internal-{unique_name}"
    _create_topic(kafka_bootstrap, topic, 1, {"cleanup.policy": policy})
    store = make(topic, _client(kafka_bootstrap))
    with pytest.raises(ConfigError) as raised:
        store.start()
    message = str(raised.value)
    found = ",".join(sorted(policy.split(",")))
    assert f"'{topic}'" in message and f"'{setting}'" in message and purpose in message
    assert f"cleanup.policy={found}" in message and "cleanup.policy=compact" in message


def test_topics_are_created_compacted_with_the_partitions_asked_for(
    kafka_bootstrap: str, unique_name: str, stores: list[Any]
) -> None:
    client = _client(kafka_bootstrap)
    _started(
        stores,
        KafkaOffsetBackingStore(
            f"offsets-{unique_name}",
            client,
            partitions=4,
            replication_factor=1,
            topic_config={"cleanup.policy": "delete", "segment.ms": "600000"},
        ),
    )
    _started(stores, KafkaStatusBackingStore(f"status-{unique_name}", client, partitions=2, replication_factor=1))
    assert _describe(kafka_bootstrap, f"offsets-{unique_name}") == (4, "compact")  # cleanup.policy forced
    assert _describe(kafka_bootstrap, f"status-{unique_name}") == (2, "compact")


# ----------------------------------------------------------------------------- offset store


def test_offsets_round_trip(kafka_bootstrap: str, unique_name: str, stores: list[Any]) -> None:
    topic = f"offsets-{unique_name}"
    client = _client(kafka_bootstrap)
    writer = _started(stores, KafkaOffsetBackingStore(topic, client, partitions=3, replication_factor=1))
    reader = _started(stores, KafkaOffsetBackingStore(topic, client, partitions=3, replication_factor=1))
    keys = [encode_offset_key("src", {"file": f"/data/{i}.txt"}) for i in range(6)]
    writer.set({key: encode_offset_value({"position": i, "note": "ü"}) for i, key in enumerate(keys)})
    assert reader.get([keys[2], b'["src",{"file":"none"}]']) == {
        keys[2]: b'{"position":2,"note":"\xc3\xbc"}',
        b'["src",{"file":"none"}]': None,
    }
    writer.set({keys[0]: None, keys[1]: encode_offset_value({"position": 10})})
    assert reader.get([keys[0], keys[1]]) == {keys[0]: None, keys[1]: b'{"position":10}'}
    assert len(reader.all()) == 5
    assert sorted(p["file"] for p, _ in connector_offsets(reader, "src")) == [f"/data/{i}.txt" for i in range(1, 6)]

    fresh = _started(stores, KafkaOffsetBackingStore(topic, client, partitions=3, replication_factor=1))
    assert fresh.all() == reader.all()


def test_a_read_committed_offset_store_starts_past_an_open_transaction(
    kafka_bootstrap: str, unique_name: str, stores: list[Any]
) -> None:
    """A transaction left open on the offsets topic (a producer that died mid-commit) does
    not stop an exactly-once worker's store from starting: it has read what was committed.
    Reads after it wait for the transaction to end, and see its offsets once committed."""
    topic = f"offsets-{unique_name}"
    client = _client(kafka_bootstrap)
    committed_key, open_key = encode_offset_key("src", {"id": 0}), encode_offset_key("src", {"id": 1})
    writer = _started(stores, KafkaOffsetBackingStore(topic, client, partitions=3, replication_factor=1))
    writer.set({committed_key: encode_offset_value({"seqno": 1})})
    producer = Producer({**client, "transactional.id": f"txn-{unique_name}", "transaction.timeout.ms": "600000"})
    producer.init_transactions(30)
    producer.begin_transaction()
    for partition in range(3):
        producer.produce(topic, key=open_key, value=encode_offset_value({"seqno": 7}), partition=partition)
    assert producer.flush(30) == 0

    began = time.monotonic()
    reader = KafkaOffsetBackingStore(topic, client, partitions=3, replication_factor=1, read_committed=True, timeout=3)
    _started(stores, reader)
    assert time.monotonic() - began < 20  # the transaction would hold a read to the end for 10 minutes
    with pytest.raises(ConnectError, match="Timed out trying to read topic"):
        reader.all()  # to the end, open transaction included
    producer.commit_transaction(30)
    assert reader.all() == {committed_key: b'{"seqno":1}', open_key: b'{"seqno":7}'}


# ----------------------------------------------------------------------------- status store


def test_status_round_trip_generations_and_listener(kafka_bootstrap: str, unique_name: str, stores: list[Any]) -> None:
    topic = f"status-{unique_name}"
    client = _client(kafka_bootstrap)
    a = _started(stores, KafkaStatusBackingStore(topic, client, partitions=3, replication_factor=1))
    heard: list[StatusChange] = []
    b = _started(
        stores, KafkaStatusBackingStore(topic, client, partitions=3, replication_factor=1, listener=heard.append)
    )

    a.put_connector(ConnectorStatus("c-1", "RUNNING", "w1:8083", generation=1), version="1.0")
    a.put_task(TaskStatus("c-1", 0, "RUNNING", "w1:8083", generation=1, version="1.0-task"))
    a.put_task(TaskStatus("c-1", 1, "FAILED", "w1:8083", trace="Traceback\n  boom", generation=1))
    a.put_topic("c-1", "orders", task=1, discover_timestamp=1234)
    b.refresh()
    assert b.get_connector("c-1") == ConnectorStatus("c-1", "RUNNING", "w1:8083", None, 1, version="1.0")
    assert b.connector_version("c-1") == "1.0"
    assert (b.task_version("c-1", 0), b.task_version("c-1", 1)) == ("1.0-task", None)
    assert [(t.task, t.state, t.trace) for t in b.get_all_tasks("c-1")] == [
        (0, "RUNNING", None),
        (1, "FAILED", "Traceback\n  boom"),
    ]
    assert b.get_topics("c-1") == {"orders"}
    assert b.get_topic_status("c-1", "orders").discover_timestamp == 1234
    assert {change.kind for change in heard} == {"connector", "task", "topic"}

    # putSafe: another worker's older generation does not overwrite, a newer one does
    b.put_task_safe(TaskStatus("c-1", 0, "UNASSIGNED", "w2:8083", generation=0))
    assert a.get_task("c-1", 0).state == "RUNNING"
    b.put_task_safe(TaskStatus("c-1", 0, "FAILED", "w2:8083", trace="t", generation=2))
    a.refresh()
    assert a.get_task("c-1", 0) == TaskStatus("c-1", 0, "FAILED", "w2:8083", "t", 2)
    # the same worker may always overwrite its own status
    b.put_task_safe(TaskStatus("c-1", 0, "RUNNING", "w2:8083", generation=1))
    assert b.get_task("c-1", 0).state == "RUNNING"

    # an UNASSIGNED from a worker that had not seen the RUNNING of the same generation is stale
    a.put_task(TaskStatus("c-1", 1, "RUNNING", "w1:8083", generation=3))
    b.put_task(TaskStatus("c-1", 1, "UNASSIGNED", "w2:8083", generation=3))
    a.refresh()
    assert a.get_task("c-1", 1).state == "RUNNING" and b.get_task("c-1", 1).state == "RUNNING"

    # DESTROYED and deletes are tombstones; a fresh store sees what is left
    a.put_task(TaskStatus("c-1", 1, "DESTROYED", "w1:8083", generation=3))
    a.put_connector(ConnectorStatus("c-2", "PAUSED", "w1:8083", generation=3))
    a.put_task(TaskStatus("c-2", 0, "PAUSED", "w1:8083", generation=3))
    a.delete_topics("c-1")
    b.refresh()
    assert [t.task for t in b.get_all_tasks("c-1")] == [0]
    assert b.get_topics("c-1") == set()
    b.delete_connector("c-2")
    fresh = _started(stores, KafkaStatusBackingStore(topic, client, partitions=3, replication_factor=1))
    assert fresh.connectors() == {"c-1"}
    assert fresh.get_all_tasks("c-2") == []
    assert [t.task for t in fresh.get_all_tasks("c-1")] == [0]
    assert fresh.get_topics("c-1") == set()
    assert any(change.kind == "task" and change.status is None for change in heard)


# ----------------------------------------------------------------------------- Apache Kafka Connect


@pytest.fixture(scope="module")
def java_worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConnectDistributedWorker]:
    worker = ConnectDistributedWorker.of_its_own(
        tmp_path_factory.mktemp("connect-distributed"), kafka_bootstrap, "interop"
    )
    try:
        worker.start(timeout=120)
        yield worker
    finally:
        worker.stop()


def _topics(worker: ConnectDistributedWorker) -> tuple[str, str, str]:
    return worker.config_topic, worker.offset_topic, worker.status_topic


def _rest_status(worker: ConnectDistributedWorker, name: str) -> dict[str, Any] | None:
    response = worker.request("GET", f"/connectors/{name}/status")
    return response.json() if response.status_code == 200 else None


def _states(worker: ConnectDistributedWorker, name: str) -> tuple[str | None, list[str]]:
    status = _rest_status(worker, name)
    if status is None:
        return None, []
    return status["connector"]["state"], [task["state"] for task in status["tasks"]]


def _reencode_config(key: str, value: bytes | None) -> bytes | None:
    kind = parse_config_key(key).kind
    if kind in ("connector", "task"):
        return None if value is None else encode_connector_config(decode_connector_config(value) or {})
    if kind == "target-state":
        state = decode_target_state(value)
        return None if state is None else encode_target_state(state)
    if kind == "commit":
        return encode_task_commit(decode_task_commit(value))
    if kind == "session-key":
        return encode_session_key(decode_session_key(value))
    if kind == "restart":  # written by the other test, through Sluice's store
        request = decode_restart_request(key, value)
        return encode_restart_request(include_tasks=request.include_tasks, only_failed=request.only_failed)
    raise AssertionError(f"unexpected record {key}")


def test_sluice_reads_what_kafka_connect_wrote(
    java_worker: ConnectDistributedWorker, kafka_bootstrap: str, unique_name: str, tmp_path: Path, stores: list[Any]
) -> None:
    config_topic, offset_topic, status_topic = _topics(java_worker)
    client = _client(kafka_bootstrap)
    name = f"java-src-{unique_name}"
    source = tmp_path / "input.txt"
    source.write_text("one\ntwo\nthree\n", encoding="ascii")
    config = {
        "connector.class": "FileStreamSource",
        "file": str(source),
        "topic": f"data-{unique_name}",
        "tasks.max": "1",
    }
    response = java_worker.request("POST", "/connectors", json={"name": name, "config": config})
    assert response.status_code == 201, response.text
    wait_until(
        lambda: _states(java_worker, name) == ("RUNNING", ["RUNNING"]),
        timeout=60,
        message=lambda: f"Kafka Connect running {name}: {_states(java_worker, name)}",
    )
    offsets = _started(stores, KafkaOffsetBackingStore(offset_topic, client, partitions=5, replication_factor=1))
    wait_until(lambda: connector_offsets(offsets, name), timeout=60, message="Kafka Connect committed an offset")
    assert java_worker.request("PUT", f"/connectors/{name}/pause").status_code == 202
    wait_until(
        lambda: _states(java_worker, name) == ("PAUSED", ["PAUSED"]),
        timeout=60,
        message=lambda: f"Kafka Connect paused {name}: {_states(java_worker, name)}",
    )

    # configs: the connector, its PAUSED target state and its committed task configs
    configs = _started(stores, KafkaConfigBackingStore(config_topic, client, replication_factor=1))
    snap = configs.snapshot()
    assert snap.connector_config(name) == {**config, "name": name}
    assert snap.target_state(name) == "PAUSED"
    assert len(snap.tasks(name)) == 1
    assert snap.tasks(name)[0]["task.class"] == "org.apache.kafka.connect.file.FileStreamSourceTask"
    assert name not in snap.inconsistent_connectors()
    assert snap.session_key is not None  # the leader's key for internal requests (read, unused)

    # statuses: PAUSED now, RUNNING before (in the topic's history), by the Java worker
    statuses = _started(stores, KafkaStatusBackingStore(status_topic, client, partitions=3, replication_factor=1))
    connector = statuses.get_connector(name)
    assert connector is not None and (connector.state, connector.worker_id) == ("PAUSED", java_worker.worker_id)
    assert [(t.task, t.state) for t in statuses.get_all_tasks(name)] == [(0, "PAUSED")]
    assert statuses.connector_version(name) == "4.3.1"
    assert statuses.get_topics(name) == {f"data-{unique_name}"}

    # versions: Kafka Connect records the plugin's version with the connector's and the
    # task's statuses and answers it on REST; from the records it wrote, Sluice's store and
    # REST entities give the same answer, byte for byte
    java_answer = java_worker.request("GET", f"/connectors/{name}/status")
    assert java_answer.json()["connector"]["version"] == java_answer.json()["tasks"][0]["version"] == "4.3.1"
    task = statuses.get_task(name, 0)
    assert (connector.version, task.version) == ("4.3.1", "4.3.1")
    ours = ConnectorStateInfo(
        name,
        StateInfo(connector.state, connector.worker_id, connector.trace, connector.version),
        [TaskStateInfo(0, task.state, task.worker_id, task.trace, task.version)],
        "source",
    )
    assert JsonResponse(entities.connector_state_json(ours)).body == java_answer.content
    raw_status = _read_all(kafka_bootstrap, status_topic)
    history = [decode_status(r.value).state for r in raw_status if r.key == f"status-connector-{name}".encode()]
    assert history[:2] == ["RUNNING", "PAUSED"], history
    task_history = [decode_status(r.value).state for r in raw_status if r.key == f"status-task-{name}-0".encode()]
    assert task_history[:2] == ["RUNNING", "PAUSED"], task_history

    # offsets: the position after the last line, under Kafka's key bytes
    assert connector_offsets(offsets, name) == [({"filename": str(source)}, {"position": len("one\ntwo\nthree\n")})]
    key = encode_offset_key(name, {"filename": str(source)})
    assert offsets.get([key]) == {key: b'{"position":14}'}

    # every record the Java worker wrote re-encodes to exactly its bytes
    for record in _read_all(kafka_bootstrap, config_topic):
        assert _reencode_config(record.key.decode(), record.value) == record.value, record
    for record in raw_status:
        if record.value is None:
            continue
        if record.key.startswith(b"status-topic-"):
            assert encode_topic_status(decode_topic_status(record.value)) == record.value
        else:
            decoded = decode_status(record.value)
            again = encode_status(decoded.state, decoded.worker_id, decoded.generation, decoded.trace, decoded.version)
            assert again == record.value, record

    # keys land on the partition the Java producer chose (murmur2), for status and offsets
    for topic, records, partitions in (
        (status_topic, raw_status, 3),
        (offset_topic, _read_all(kafka_bootstrap, offset_topic), 5),
    ):
        scratch = KafkaBasedLog(
            TopicSettings(f"scratch-{partitions}-{unique_name}", partitions=partitions, replication_factor=1),
            client,
            lambda record: None,
        )
        scratch.start(timeout=30)
        try:
            java_partitions = {r.key: r.partition for r in records}
            ours = scratch.write([(key, b"x") for key in java_partitions])
            assert [p.partition for p in ours] == list(java_partitions.values()), topic
        finally:
            scratch.stop()


def test_kafka_connect_runs_what_sluice_wrote(
    java_worker: ConnectDistributedWorker, kafka_bootstrap: str, unique_name: str, tmp_path: Path, stores: list[Any]
) -> None:
    config_topic, _, status_topic = _topics(java_worker)
    client = _client(kafka_bootstrap)
    configs = _started(stores, KafkaConfigBackingStore(config_topic, client, replication_factor=1))
    name = f"sluice-src-{unique_name}"
    source = tmp_path / "input.txt"
    source.write_text("a\n", encoding="ascii")
    config = {
        "name": name,
        "connector.class": "FileStreamSource",
        "file": str(source),
        "topic": f"data-{unique_name}",
        "tasks.max": "1",
    }

    configs.put_connector_config(name, config, target_state="PAUSED")
    listed = wait_until(
        lambda: name in java_worker.request("GET", "/connectors").json(),
        timeout=60,
        message="Kafka Connect lists the connector Sluice wrote",
    )
    assert listed
    assert java_worker.request("GET", f"/connectors/{name}/config").json() == config
    # created paused: Kafka Connect generates no tasks until the connector is resumed
    wait_until(
        lambda: _states(java_worker, name) == ("PAUSED", []),
        timeout=60,
        message=lambda: f"PAUSED by Sluice's target state: {_states(java_worker, name)}",
    )

    configs.put_target_state(name, "STARTED")
    wait_until(
        lambda: _states(java_worker, name) == ("RUNNING", ["RUNNING"]),
        timeout=60,
        message=lambda: f"resumed: {_states(java_worker, name)}",
    )
    # the Java leader generated and committed the task configs; Sluice's store sees them
    tasks = wait_until(
        lambda: (configs.refresh(), configs.snapshot().tasks(name))[1],
        timeout=30,
        message="task configs committed by the Java leader",
    )
    assert tasks[0]["task.class"] == "org.apache.kafka.connect.file.FileStreamSourceTask"

    heard: list[StatusChange] = []
    _started(
        stores, KafkaStatusBackingStore(status_topic, client, partitions=3, replication_factor=1, listener=heard.append)
    )
    configs.put_restart_request(name, include_tasks=True)

    def restarted() -> bool:
        return any(
            c.kind == "task" and c.connector == name and c.status is not None and c.status.state == "RESTARTING"
            for c in heard
        )

    wait_until(restarted, timeout=60, message=lambda: f"Kafka Connect restarts the task on Sluice's request: {heard}")
    wait_until(lambda: _states(java_worker, name) == ("RUNNING", ["RUNNING"]), timeout=60)

    # a stop as Kafka's leader does it: an empty task set first, then the target state
    # (state.v2=STOPPED, state=PAUSED for old readers)
    configs.put_task_configs(name, [])
    configs.put_target_state(name, "STOPPED")
    wait_until(
        lambda: _states(java_worker, name) == ("STOPPED", []),
        timeout=60,
        message=lambda: f"stopped: {_states(java_worker, name)}",
    )

    configs.remove_connector_config(name)
    wait_until(
        lambda: name not in java_worker.request("GET", "/connectors").json(),
        timeout=60,
        message="Kafka Connect dropped the connector Sluice deleted",
    )
    assert java_worker.request("GET", f"/connectors/{name}").status_code == 404
    with httpx2.Client() as http:  # the worker is still healthy
        assert http.get(java_worker.url + "/health").status_code == 200
