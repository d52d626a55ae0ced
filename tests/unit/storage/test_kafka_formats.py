"""Config- and status-topic records, byte for byte, and how the Kafka stores apply them.

The golden byte strings marked "written by Kafka Connect 4.3.1" were read from the topics
of a real ``ConnectDistributed`` worker (see tests/integration/test_kafka_stores.py, which
checks the same against a live worker). Store logic is driven through ``process_record``,
so nothing here needs a broker.
"""

from __future__ import annotations

import logging

import pytest

from sluice.storage.base import ConnectorStatus, TaskStatus
from sluice.storage.kafka_config import ConfigUpdateListener, KafkaConfigBackingStore
from sluice.storage.kafka_formats import (
    ConfigKey,
    RecordFormatError,
    RestartRequest,
    SessionKey,
    StatusKey,
    StatusValue,
    TopicStatus,
    commit_tasks_key,
    connector_key,
    connector_status_key,
    decode_connector_config,
    decode_logger_level,
    decode_restart_request,
    decode_session_key,
    decode_status,
    decode_target_state,
    decode_task_commit,
    decode_task_config,
    decode_task_count_record,
    decode_topic_status,
    encode_connector_config,
    encode_logger_level,
    encode_restart_request,
    encode_session_key,
    encode_status,
    encode_target_state,
    encode_task_commit,
    encode_task_config,
    encode_task_count_record,
    encode_topic_status,
    logger_cluster_key,
    parse_config_key,
    parse_status_key,
    restart_key,
    target_state_key,
    task_count_record_key,
    task_key,
    task_status_key,
    topic_status_key,
)
from sluice.storage.kafka_log import ConsumedRecord
from sluice.storage.kafka_status import KafkaStatusBackingStore, StatusChange

# ------------------------------------------------------------------ written by Kafka Connect 4.3.1

JAVA_CONNECTOR = (
    b'{"properties":{"connector.class":"FileStreamSource","file":"/tmp/klab/in-c465ee",'
    b'"topic":"data-c465ee","tasks.max":"1","name":"src-c465ee"}}'
)
JAVA_TASK = (
    b'{"properties":{"connector.class":"FileStreamSource","file":"/tmp/klab/in-c465ee",'
    b'"task.class":"org.apache.kafka.connect.file.FileStreamSourceTask","tasks.max":"1",'
    b'"name":"src-c465ee","topic":"data-c465ee"}}'
)
JAVA_COMMIT = b'{"tasks":1}'
JAVA_TARGET_PAUSED = b'{"state":"PAUSED","state.v2":"PAUSED"}'
JAVA_SESSION_KEY = (
    b'{"key":"Ot/sxEU7NaW376+kyTn46lmYOptrHc87dFT+8es1Gfc=","algorithm":"HmacSHA256",'
    b'"creation-timestamp":1795295352393}'
)
JAVA_STATUS_RUNNING = b'{"state":"RUNNING","trace":null,"worker_id":"127.0.0.1:34553","generation":3,"version":"4.3.1"}'
JAVA_STATUS_UNASSIGNED = (
    b'{"state":"UNASSIGNED","trace":null,"worker_id":"127.0.0.1:34553","generation":3,"version":null}'
)
JAVA_TOPIC_STATUS = (
    b'{"topic":{"name":"data-c465ee","connector":"src-c465ee","task":0,"discoverTimestamp":1795295353569}}'
)


# ------------------------------------------------------------------ config keys


def test_config_keys() -> None:
    assert connector_key("a-b") == "connector-a-b"
    assert target_state_key("a-b") == "target-state-a-b"
    assert task_key("a-b", 3) == "task-a-b-3"
    assert commit_tasks_key("a-b") == "commit-a-b"
    assert restart_key("a-b") == "restart-connector-a-b"
    assert task_count_record_key("a-b") == "tasks-fencing-a-b"
    assert logger_cluster_key("org.apache") == "logger-cluster-org.apache"


@pytest.mark.parametrize(
    ("key", "parsed"),
    [
        ("connector-my-conn", ConfigKey("connector", "my-conn")),
        ("target-state-my-conn", ConfigKey("target-state", "my-conn")),
        ("task-my-conn-2-10", ConfigKey("task", "my-conn-2", 10)),
        ("task-x-0", ConfigKey("task", "x", 0)),
        ("task--1", ConfigKey("task", "", 1)),
        ("task-foo--1", ConfigKey("task", "foo-", 1)),  # Java's split: "foo-" and 1
        ("task-foo-1-", ConfigKey("task", "foo", 1)),  # trailing dashes dropped, as split does
        ("commit-my-conn", ConfigKey("commit", "my-conn")),
        ("restart-connector-my-conn", ConfigKey("restart", "my-conn")),
        ("tasks-fencing-my-conn", ConfigKey("task-count", "my-conn")),
        ("session-key", ConfigKey("session-key", "")),
        ("logger-cluster-org.apache.kafka", ConfigKey("logger", "org.apache.kafka")),
    ],
)
def test_parse_config_key(key: str, parsed: ConfigKey) -> None:
    assert parse_config_key(key) == parsed


@pytest.mark.parametrize("key", ["task-foo", "task-foo-x", "task-foo-99999999999", "unknown-key", "session-key-2"])
def test_parse_config_key_rejects(key: str) -> None:
    with pytest.raises(RecordFormatError):
        parse_config_key(key)


# ------------------------------------------------------------------ config values


def test_connector_and_task_configs_are_byte_exact() -> None:
    config = {
        "connector.class": "FileStreamSource",
        "file": "/tmp/klab/in-c465ee",
        "topic": "data-c465ee",
        "tasks.max": "1",
        "name": "src-c465ee",
    }
    assert encode_connector_config(config) == JAVA_CONNECTOR
    assert decode_connector_config(JAVA_CONNECTOR) == config
    assert list(decode_connector_config(JAVA_CONNECTOR) or {}) == list(config)  # order kept
    task = decode_task_config(JAVA_TASK)
    assert encode_task_config(task) == JAVA_TASK


def test_config_strings_are_escaped_like_jackson() -> None:
    config = {"k": 'tab\there "q" back\\slash \x01 ü / \U0001f600', "n": None}
    assert encode_connector_config(config) == (
        b'{"properties":{"k":"tab\\there \\"q\\" back\\\\slash \\u0001 \xc3\xbc / \\uD83D\\uDE00","n":null}}'
    )
    assert decode_connector_config(encode_connector_config(config)) == config


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ("STARTED", b'{"state":"STARTED","state.v2":"STARTED"}'),
        ("PAUSED", JAVA_TARGET_PAUSED),
        ("STOPPED", b'{"state":"PAUSED","state.v2":"STOPPED"}'),  # older readers see PAUSED
    ],
)
def test_target_state_bytes(state: str, expected: bytes) -> None:
    assert encode_target_state(state) == expected
    assert decode_target_state(expected) == state


def test_target_state_rejects_unknown_state_on_write() -> None:
    with pytest.raises(ValueError, match="Invalid target state"):
        encode_target_state("RUNNING")


@pytest.mark.parametrize(
    ("value", "state"),
    [
        (b'{"state":"PAUSED"}', "PAUSED"),  # TARGET_STATE_V0, written before state.v2 existed
        (b'{"state":"STARTED","state.v2":null}', "STARTED"),
        (b'{"state":"PAUSED","state.v2":7}', "PAUSED"),  # bad state.v2: fall back to state
        (b'{"state.v2":"STOPPED"}', "STOPPED"),
        (None, None),  # tombstone
        (b"null", None),
    ],
)
def test_target_state_variants(value: bytes | None, state: str | None) -> None:
    assert decode_target_state(value) == state


@pytest.mark.parametrize("value", [b'{"state":"RUNNING"}', b'{"state":1}', b"[]", b"{bad json", b'{"other":"x"}'])
def test_target_state_invalid(value: bytes) -> None:
    with pytest.raises(RecordFormatError):
        decode_target_state(value)


def test_commit_and_task_count_records() -> None:
    assert encode_task_commit(1) == JAVA_COMMIT
    assert encode_task_commit(0) == b'{"tasks":0}'
    assert decode_task_commit(JAVA_COMMIT) == 1
    assert encode_task_count_record(3) == b'{"task-count":3}'
    assert decode_task_count_record(b'{"task-count":3}') == 3


@pytest.mark.parametrize(
    ("value", "tasks"),
    [
        (b'{"tasks":2}', 2),  # an Integer (schema'd converters) or a Long (schemaless): same JSON
        (b'{"tasks":4294967298}', 2),  # a long beyond int range narrows like Java's intValue()
    ],
)
def test_commit_integer_forms(value: bytes, tasks: int) -> None:
    assert decode_task_commit(value) == tasks


@pytest.mark.parametrize("value", [b'{"tasks":true}', b'{"tasks":2.0}', b'{"tasks":"2"}', b"{}", None, b"3"])
def test_commit_rejects_non_integers(value: bytes | None) -> None:
    with pytest.raises(RecordFormatError):
        decode_task_commit(value)


def test_restart_request_bytes_and_defaults(caplog: pytest.LogCaptureFixture) -> None:
    assert (
        encode_restart_request(include_tasks=True, only_failed=False) == b'{"include-tasks":true,"only-failed":false}'
    )
    assert decode_restart_request("c", b'{"include-tasks":true,"only-failed":true}') == RestartRequest("c", True, True)
    with caplog.at_level(logging.WARNING):
        request = decode_restart_request("c", b'{"include-tasks":"yes","only-failed":1}')
    assert request == RestartRequest("c", only_failed=False, include_tasks=False)
    assert "should be a boolean" in caplog.text
    with pytest.raises(RecordFormatError):
        decode_restart_request("c", None)


def test_session_key_and_logger_level() -> None:
    key = decode_session_key(JAVA_SESSION_KEY)
    assert key.algorithm == "HmacSHA256"
    assert key.creation_timestamp == 1795295352393
    assert len(key.key) == 32
    assert encode_session_key(key) == JAVA_SESSION_KEY
    with pytest.raises(RecordFormatError, match="base64"):
        decode_session_key(b'{"key":"!!","algorithm":"HmacSHA256","creation-timestamp":1}')
    with pytest.raises(RecordFormatError, match="creation-timestamp"):
        decode_session_key(b'{"key":"AA==","algorithm":"HmacSHA256","creation-timestamp":"1"}')
    assert encode_session_key(SessionKey(b"\x00", "HmacSHA256", 5)) == (
        b'{"key":"AA==","algorithm":"HmacSHA256","creation-timestamp":5}'
    )
    assert encode_logger_level("DEBUG") == b'{"level":"DEBUG"}'
    assert decode_logger_level(b'{"level":"DEBUG"}') == "DEBUG"
    with pytest.raises(RecordFormatError):
        decode_logger_level(None)


def test_connector_config_tombstones_and_bad_values() -> None:
    assert decode_connector_config(None) is None
    assert decode_connector_config(b"null") is None
    with pytest.raises(RecordFormatError):
        decode_connector_config(b'{"properties":"x"}')
    with pytest.raises(RecordFormatError):
        decode_connector_config(b'"x"')
    with pytest.raises(RecordFormatError, match="unexpectedly null"):
        decode_task_config(None)


# ------------------------------------------------------------------ status topic


def test_status_keys() -> None:
    assert connector_status_key("a-b") == "status-connector-a-b"
    assert task_status_key("a-b", 2) == "status-task-a-b-2"
    assert topic_status_key("orders", "a-b") == "status-topic-orders:connector-a-b"
    assert parse_status_key("status-connector-a-b") == StatusKey("connector", "a-b")
    assert parse_status_key("status-task-a-b-12") == StatusKey("task", "a-b", task=12)
    assert parse_status_key("status-topic-orders:connector-a-b") == StatusKey("topic", "a-b", topic="orders")
    for bad in ("status-connector-", "status-task-ab", "status-topic-orders", "status-topic-:connector-a", "other"):
        with pytest.raises(RecordFormatError):
            parse_status_key(bad)


def test_status_values_are_byte_exact() -> None:
    assert encode_status("RUNNING", "127.0.0.1:34553", 3, version="4.3.1") == JAVA_STATUS_RUNNING
    assert encode_status("UNASSIGNED", "127.0.0.1:34553", 3) == JAVA_STATUS_UNASSIGNED
    assert decode_status(JAVA_STATUS_RUNNING) == StatusValue("RUNNING", None, "127.0.0.1:34553", 3, "4.3.1")
    failed = encode_status("FAILED", "w:1", 7, trace='Traceback:\n\tboom "x"')
    assert failed == (
        b'{"state":"FAILED","trace":"Traceback:\\n\\tboom \\"x\\"","worker_id":"w:1","generation":7,"version":null}'
    )
    assert decode_status(failed).trace == 'Traceback:\n\tboom "x"'
    assert encode_status("DESTROYED", "w:1", 7) is None  # a tombstone


def test_status_written_before_kafka_41_has_no_version() -> None:
    value = b'{"state":"PAUSED","trace":null,"worker_id":"w:1","generation":2}'
    assert decode_status(value) == StatusValue("PAUSED", None, "w:1", 2, None)


@pytest.mark.parametrize(
    "value",
    [
        b'{"state":"BOGUS","trace":null,"worker_id":"w","generation":1}',
        b'{"state":"RUNNING","trace":null,"worker_id":"w"}',
        b'{"state":"RUNNING","trace":1,"worker_id":"w","generation":1}',
        b'{"state":"RUNNING","trace":null,"worker_id":"w","generation":1,"version":3}',
        b"[1]",
    ],
)
def test_status_rejects(value: bytes) -> None:
    with pytest.raises(RecordFormatError):
        decode_status(value)


def test_topic_status_bytes() -> None:
    status = TopicStatus("data-c465ee", "src-c465ee", 0, 1795295353569)
    assert encode_topic_status(status) == JAVA_TOPIC_STATUS
    assert decode_topic_status(JAVA_TOPIC_STATUS) == status
    assert encode_topic_status(None) is None
    with pytest.raises(RecordFormatError):
        decode_topic_status(b'{"topic":{"name":"t","connector":"c","task":"0","discoverTimestamp":1}}')


# ------------------------------------------------------------------ the config store's reading rules


def _record(key: str, value: bytes | None, offset: int = 0) -> ConsumedRecord:
    return ConsumedRecord("configs", 0, offset, key.encode(), value)


def _config_store(*records: tuple[str, bytes | None]) -> KafkaConfigBackingStore:
    store = KafkaConfigBackingStore("configs", {"bootstrap.servers": "127.0.0.1:1"})
    for offset, (key, value) in enumerate(records):
        store.process_record(_record(key, value, offset))
    return store


def test_config_store_applies_a_java_written_topic() -> None:
    store = _config_store(
        ("session-key", JAVA_SESSION_KEY),
        ("connector-src-c465ee", JAVA_CONNECTOR),
        ("task-src-c465ee-0", JAVA_TASK),
        ("commit-src-c465ee", JAVA_COMMIT),
        ("target-state-src-c465ee", JAVA_TARGET_PAUSED),
    )
    snap = store.snapshot()
    assert snap.connectors() == ["src-c465ee"]
    assert snap.target_state("src-c465ee") == "PAUSED"
    assert snap.tasks("src-c465ee") == [decode_task_config(JAVA_TASK)]
    assert snap.offset == 5
    assert snap.session_key is not None and snap.session_key.algorithm == "HmacSHA256"
    assert snap.inconsistent_connectors() == set()


def test_task_configs_wait_for_their_commit() -> None:
    store = _config_store(
        ("connector-c", encode_connector_config({"name": "c"})),
        ("task-c-0", encode_task_config({"t": "0"})),
        ("task-c-1", encode_task_config({"t": "1"})),
    )
    assert store.snapshot().tasks("c") == []
    store.process_record(_record("commit-c", encode_task_commit(2), 3))
    assert store.snapshot().tasks("c") == [{"t": "0"}, {"t": "1"}]
    # fewer tasks: the old task 1 config stays stored but is no longer part of the set
    store.process_record(_record("task-c-0", encode_task_config({"t": "0b"}), 4))
    store.process_record(_record("commit-c", encode_task_commit(1), 5))
    snap = store.snapshot()
    assert snap.tasks("c") == [{"t": "0b"}]
    assert snap.task_config_generations["c"] == 1


def test_incomplete_task_set_is_inconsistent_until_a_complete_commit() -> None:
    store = _config_store(
        ("connector-c", encode_connector_config({"name": "c"})),
        # compaction removed task-c-0 of this generation
        ("task-c-1", encode_task_config({"t": "1"})),
        ("commit-c", encode_task_commit(2)),
    )
    snap = store.snapshot()
    assert snap.inconsistent_connectors() == {"c"}
    assert snap.tasks("c") == []
    assert snap.committed_task_count("c") == 2
    # the buffer was cleared by that commit: task-c-0 alone still is not a full set of 2
    store.process_record(_record("task-c-0", encode_task_config({"t": "0"}), 3))
    store.process_record(_record("commit-c", encode_task_commit(2), 4))
    assert store.snapshot().inconsistent_connectors() == {"c"}
    # a complete set repairs it
    store.process_record(_record("task-c-0", encode_task_config({"t": "0"}), 5))
    store.process_record(_record("task-c-1", encode_task_config({"t": "1"}), 6))
    store.process_record(_record("commit-c", encode_task_commit(2), 7))
    snap = store.snapshot()
    assert snap.inconsistent_connectors() == set()
    assert snap.tasks("c") == [{"t": "0"}, {"t": "1"}]


def test_compacted_log_with_extra_task_configs_is_consistent() -> None:
    # [conn, task-1 (old), task-0 (new), commit 1]: more configs than the commit needs is fine
    store = _config_store(
        ("connector-c", encode_connector_config({"name": "c"})),
        ("task-c-1", encode_task_config({"t": "old1"})),
        ("task-c-0", encode_task_config({"t": "new0"})),
        ("commit-c", encode_task_commit(1)),
    )
    assert store.snapshot().tasks("c") == [{"t": "new0"}]
    assert store.snapshot().inconsistent_connectors() == set()


def test_commit_of_unknown_connector_is_ignored_and_empty_commit_stops_tasks() -> None:
    store = _config_store(
        ("task-gone-0", encode_task_config({"t": "0"})),
        ("commit-gone", encode_task_commit(1)),
        ("connector-c", encode_connector_config({"name": "c"})),
        ("task-c-0", encode_task_config({"t": "0"})),
        ("commit-c", encode_task_commit(1)),
        ("commit-c", encode_task_commit(0)),  # what a stop writes
    )
    snap = store.snapshot()
    assert snap.connectors() == ["c"]
    assert "gone" not in snap.task_counts
    assert snap.tasks("c") == []
    assert snap.task_configs["c"] == []


def test_target_states_and_deletion() -> None:
    store = _config_store(
        ("target-state-c", encode_target_state("STOPPED")),  # written before the connector
        ("connector-c", encode_connector_config({"name": "c"})),
        ("connector-d", encode_connector_config({"name": "d"})),  # no target state: STARTED
    )
    snap = store.snapshot()
    assert snap.target_state("c") == "STOPPED"
    assert snap.target_states["d"] == "STARTED"
    store.process_record(_record("target-state-c", None, 3))  # tombstone while the config exists
    assert store.snapshot().target_state("c") == "STARTED"
    store.process_record(_record("task-c-0", encode_task_config({"t": "0"}), 4))
    store.process_record(_record("commit-c", encode_task_commit(1), 5))
    store.process_record(_record("connector-c", None, 6))
    store.process_record(_record("target-state-c", None, 7))
    snap = store.snapshot()
    assert snap.connectors() == ["d"]
    assert "c" not in snap.target_states
    assert "c" not in snap.task_configs and "c" not in snap.task_counts


def test_bad_records_are_skipped(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR):
        store = _config_store(
            ("connector-c", encode_connector_config({"name": "c"})),
            ("bogus-key", b"{}"),
            ("task-c-x", encode_task_config({})),
            ("target-state-c", b'{"state":"RUNNING"}'),
            ("commit-c", b'{"tasks":"1"}'),
            ("connector-c", b"not json"),
        )
    snap = store.snapshot()
    assert snap.connector_config("c") == {"name": "c"}
    assert snap.target_state("c") == "STARTED"
    assert snap.task_counts == {}
    assert caplog.text.count("config record") >= 5


def test_snapshot_is_a_copy() -> None:
    store = _config_store(("connector-c", encode_connector_config({"name": "c"})))
    snap = store.snapshot()
    snap.connector_configs["c"]["name"] = "mutated"
    assert store.snapshot().connector_config("c") == {"name": "c"}


def test_listener_is_not_called_before_start() -> None:
    calls: list[str] = []

    class Listener(ConfigUpdateListener):
        def on_connector_config_update(self, connector: str) -> None:
            calls.append(connector)

    store = KafkaConfigBackingStore("configs", {"bootstrap.servers": "127.0.0.1:1"}, listener=Listener())
    store.process_record(_record("connector-c", encode_connector_config({"name": "c"})))
    assert calls == []  # records read while starting are not reported, as in Kafka


# ------------------------------------------------------------------ the status store's reading rules


def _status_store() -> KafkaStatusBackingStore:
    return KafkaStatusBackingStore("statuses", {"bootstrap.servers": "127.0.0.1:1"})


def _status(key: str, value: bytes | None, offset: int = 0) -> ConsumedRecord:
    return ConsumedRecord("statuses", 0, offset, key.encode(), value)


def test_status_store_reads_java_records() -> None:
    store = _status_store()
    store.process_record(_status("status-connector-src-c465ee", JAVA_STATUS_RUNNING))
    store.process_record(_status("status-task-src-c465ee-0", JAVA_STATUS_RUNNING))
    store.process_record(_status("status-topic-data-c465ee:connector-src-c465ee", JAVA_TOPIC_STATUS))
    # the statuses carry Kafka's plugin version, and compare with it (as AbstractStatus.equals does)
    assert store.get_connector("src-c465ee") == ConnectorStatus(
        "src-c465ee", "RUNNING", "127.0.0.1:34553", None, 3, version="4.3.1"
    )
    assert store.get_all_tasks("src-c465ee") == [
        TaskStatus("src-c465ee", 0, "RUNNING", "127.0.0.1:34553", None, 3, version="4.3.1")
    ]
    assert store.connector_version("src-c465ee") == "4.3.1"
    assert store.task_version("src-c465ee", 0) == "4.3.1"
    assert store.get_topics("src-c465ee") == {"data-c465ee"}
    assert store.connectors() == {"src-c465ee"}
    store.process_record(_status("status-connector-src-c465ee", JAVA_STATUS_UNASSIGNED, offset=1))
    assert store.get_connector("src-c465ee").version is None  # "version":null
    assert store.connector_version("src-c465ee") is None
    assert store.task_version("src-c465ee", 7) is None and store.connector_version("other") is None


class _LoopbackLog:
    """Stands in for the store's KafkaBasedLog: what is sent is acknowledged and read back."""

    def __init__(self, store: KafkaStatusBackingStore) -> None:
        self.store = store
        self.sent: dict[str, bytes | None] = {}

    def send(self, key: str, value: bytes | None, callback) -> None:
        self.sent[key] = value
        callback(None, None)
        self.store.process_record(_status(key, value, offset=len(self.sent)))


def _writing_status_store() -> tuple[KafkaStatusBackingStore, _LoopbackLog]:
    store = KafkaStatusBackingStore("statuses", {"bootstrap.servers": "127.0.0.1:1"}, synchronous=False)
    loopback = _LoopbackLog(store)
    store._log = loopback  # type: ignore[assignment]
    store._started = True
    return store, loopback


def test_status_store_writes_the_version_of_each_status() -> None:
    store, log = _writing_status_store()
    store.put_connector(ConnectorStatus("src-c465ee", "RUNNING", "127.0.0.1:34553", generation=3, version="4.3.1"))
    store.put_task(TaskStatus("src-c465ee", 0, "RUNNING", "127.0.0.1:34553", generation=3, version="4.3.1"))
    # the records are byte for byte what Kafka Connect 4.3.1 wrote for the same statuses
    assert log.sent["status-connector-src-c465ee"] == JAVA_STATUS_RUNNING
    assert log.sent["status-task-src-c465ee-0"] == JAVA_STATUS_RUNNING
    assert store.get_task("src-c465ee", 0).version == "4.3.1"

    store.put_connector_safe(ConnectorStatus("src-c465ee", "UNASSIGNED", "127.0.0.1:34553", generation=3))
    assert log.sent["status-connector-src-c465ee"] == JAVA_STATUS_UNASSIGNED
    assert store.connector_version("src-c465ee") is None

    # the keyword of the earlier interface still sets it, and wins over the status's own
    store.put_connector(ConnectorStatus("src-c465ee", "PAUSED", "w:1", generation=4, version="1"), version="2.0")
    assert store.get_connector("src-c465ee") == ConnectorStatus("src-c465ee", "PAUSED", "w:1", None, 4, "2.0")


def test_stale_unassigned_task_status_is_ignored() -> None:
    store = _status_store()
    running = encode_status("RUNNING", "w2:1", 5)
    store.process_record(_status("status-task-c-0", running))
    store.process_record(_status("status-task-c-0", encode_status("UNASSIGNED", "w1:1", 5)))
    assert store.get_task("c", 0).state == "RUNNING"  # same generation: stale
    store.process_record(_status("status-task-c-0", encode_status("UNASSIGNED", "w1:1", 4)))
    assert store.get_task("c", 0).state == "RUNNING"  # older generation: stale
    store.process_record(_status("status-task-c-0", encode_status("UNASSIGNED", "w1:1", 6)))
    assert store.get_task("c", 0).state == "UNASSIGNED"  # newer generation wins
    # the rule is for tasks only: a connector takes any UNASSIGNED
    store.process_record(_status("status-connector-c", running))
    store.process_record(_status("status-connector-c", encode_status("UNASSIGNED", "w1:1", 1)))
    assert store.get_connector("c").state == "UNASSIGNED"


def test_status_tombstones_remove_one_entry() -> None:
    store = _status_store()
    store.process_record(_status("status-connector-c", encode_status("RUNNING", "w", 1)))
    store.process_record(_status("status-task-c-0", encode_status("RUNNING", "w", 1)))
    store.process_record(_status("status-task-c-1", encode_status("RUNNING", "w", 1)))
    store.process_record(_status("status-topic-t:connector-c", encode_topic_status(TopicStatus("t", "c", 0, 1))))
    store.process_record(_status("status-task-c-1", None))
    assert [t.task for t in store.get_all_tasks("c")] == [0]
    store.process_record(_status("status-connector-c", None))
    assert store.get_connector("c") is None
    assert store.connectors() == set()
    assert [t.task for t in store.get_all_tasks("c")] == [0]  # the StatusBackingStore contract
    store.process_record(_status("status-topic-t:connector-c", None))
    assert store.get_topics("c") == set()


def test_status_listener_hears_changes_after_start() -> None:
    changes: list[StatusChange] = []
    store = KafkaStatusBackingStore("statuses", {"bootstrap.servers": "127.0.0.1:1"}, listener=changes.append)
    store.process_record(_status("status-connector-c", encode_status("RUNNING", "w", 1)))
    assert changes == []  # not started: the initial read is not reported
