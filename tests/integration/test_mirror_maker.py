"""Acceptance (issue 33, item 2): MirrorMaker 2's connectors run on Sluice clusters.

Kafka's ``connect-mirror`` 4.3.1 (with ``connect-mirror-client``) sits on ``plugin.path`` as
users install it. Two brokers: ``primary`` (the session's) and ``backup`` (this module's).
As in Kafka's ``MirrorConnectorsIntegrationBaseTest``, each direction runs on a Connect
cluster next to its target — a Sluice distributed worker on the backup broker runs
primary→backup, one on the primary broker runs backup→primary — each with
``MirrorSourceConnector``, ``MirrorCheckpointConnector`` and ``MirrorHeartbeatConnector``
configured with their own keys. The behaviours checked are that test's: exact replication,
no loops with both directions on, topics created later, topic configs synced or excluded,
heartbeats, checkpoints on every partition with monotonic offsets, consumer failover and
failback to translated offsets, the offset-syncs topic's placement, and checkpoints that
stay monotonic across restarts of all three connectors.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from sluice_devtools.jars import mirror_maker_plugin
from sluice_devtools.kafka import KafkaBroker
from tests import http_client
from tests.helpers import wait_until, watermark_offsets
from tests.integration.workers import QUICK_GROUP_SETTINGS, DistributedWorker

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("mirror-maker")]

MIRROR = "org.apache.kafka.connect.mirror"
CONNECTORS = ("MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector")
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
PARTITIONS = 3
COORDINATOR_NOT_READY = {
    KafkaError.NOT_COORDINATOR,
    KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
    KafkaError.COORDINATOR_NOT_AVAILABLE,
}
PER_PARTITION = 100
OFFSET_LAG_MAX = 10


@pytest.fixture(scope="module")
def backup_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    broker = KafkaBroker(tmp_path_factory.mktemp("kafka-backup"))
    broker.start(timeout=120)
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def mirror_plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``plugin.path`` directory holding MirrorMaker 2 in a directory of its own."""
    path = tmp_path_factory.mktemp("mirror-plugins")
    (path / "connect-mirror").symlink_to(mirror_maker_plugin(), target_is_directory=True)
    return path


def _worker(
    tmp: Path, bootstrap: str, group: str, plugin_path: Path, extra: dict[str, str | None] | None = None
) -> DistributedWorker:
    return DistributedWorker(
        tmp / group,
        bootstrap,
        group,
        group,
        {
            **QUICK_GROUP_SETTINGS,
            "plugin.path": str(plugin_path),
            "offset.flush.interval.ms": "1000",
            **(extra or {}),
        },
    )


def _mirror_config(
    connector: str, source: tuple[str, str], target: tuple[str, str], topics: str, groups: str, **more: str
) -> dict[str, str]:
    """A MirrorMaker 2 connector's configuration, its own keys as ``MirrorMakerConfig`` gives
    them to each connector, with the quick intervals of Kafka's integration test."""
    return {
        "connector.class": f"{MIRROR}.{connector}",
        "source.cluster.alias": source[0],
        "target.cluster.alias": target[0],
        "source.cluster.bootstrap.servers": source[1],
        "target.cluster.bootstrap.servers": target[1],
        "topics": topics,
        "groups": groups,
        "tasks.max": "1",
        "key.converter": BYTES,
        "value.converter": BYTES,
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "checkpoints.topic.replication.factor": "1",
        "heartbeats.topic.replication.factor": "1",
        "emit.heartbeats.interval.seconds": "1",
        "emit.checkpoints.interval.seconds": "1",
        "refresh.topics.interval.seconds": "1",
        "refresh.groups.interval.seconds": "1",
        "sync.topic.configs.interval.seconds": "1",
        "offset.lag.max": str(OFFSET_LAG_MAX),
        "config.properties.exclude": r"delete\.retention\..*",
        # the worker's producer writes the replicated records: to the target cluster
        "producer.override.bootstrap.servers": target[1],
        **more,
    }


def _start_mirror(worker: DistributedWorker, prefix: str, config: dict[str, dict[str, str]]) -> None:
    for connector, settings in config.items():
        name = f"{prefix}-{connector}"

        def created(n: str = name, c: dict[str, str] = settings) -> httpx2.Response | None:
            r = http_client.put(f"{worker.url}/connectors/{n}/config", json=c, timeout=60)
            return None if r.status_code == 409 else r  # the worker still joining its group

        answer = wait_until(created, timeout=60, message=f"{name} created")
        assert answer.status_code == 201, answer.text
    for connector in config:
        name = f"{prefix}-{connector}"
        wait_until(
            lambda n=name: _states(worker, n) == ("RUNNING", "RUNNING"),
            timeout=120,
            message=lambda n=name: f"{n} running: {worker.get(f'/connectors/{n}/status').text}",
        )


def _states(worker: DistributedWorker, name: str) -> tuple[str | None, ...]:
    answer = worker.get(f"/connectors/{name}/status")
    if answer.status_code != 200:
        return (None,)
    status = answer.json()
    return (status["connector"]["state"], *sorted({t["state"] for t in status["tasks"]}))


def _topics(bootstrap: str) -> set[str]:
    return set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics)


def _topic_config(bootstrap: str, topic: str) -> dict[str, str]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    future = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)])
    (config,) = (f.result(timeout=10) for f in future.values())
    return {name: entry.value for name, entry in config.items()}


def _create_topic(bootstrap: str, topic: str, config: dict[str, str] | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, PARTITIONS, 1, config=config or {})]).values():
        future.result(timeout=30)


def _produce(bootstrap: str, topic: str, label: str, partitions: int = PARTITIONS) -> dict[int, list[bytes]]:
    """``PER_PARTITION`` keyed records into each of the first ``partitions`` partitions."""
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    values: dict[int, list[bytes]] = {}
    for p in range(partitions):
        values[p] = [f"{label}-{p}-{i}".encode() for i in range(PER_PARTITION)]
        for i, value in enumerate(values[p]):
            producer.produce(topic, value=value, key=f"k{i}".encode(), partition=p)
    assert producer.flush(30) == 0
    return values


def _messages(consumer: Consumer, topic: str, partitions: list[int], count: int) -> list[Any]:
    """The first ``count`` messages of ``topic``'s ``partitions``, read from offset 0."""
    consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
    out: list[Any] = []
    while len(out) < count:
        message = consumer.poll(5)
        assert message is not None, f"read {len(out)} of {count} from {topic}"
        if message.error() is None:
            out.append(message)
        elif message.error().code() != KafkaError._PARTITION_EOF:
            raise AssertionError(message.error())
    return out


def _partitions(consumer: Consumer, bootstrap: str, topic: str, timeout: float) -> list[int]:
    """The partitions of ``topic``, once it exists."""

    def known() -> Any:
        # librdkafka answers for a topic it cannot find too, with an error and no partitions
        metadata = consumer.list_topics(topic, timeout=5).topics.get(topic)
        return metadata if metadata is not None and metadata.error is None and metadata.partitions else None

    return sorted(wait_until(known, timeout=timeout, message=f"{topic} exists on {bootstrap}").partitions)


def _read(bootstrap: str, topic: str, expected: int, timeout: float = 90.0) -> dict[int, list[bytes]]:
    """Every record of ``topic`` once ``expected`` are there, by partition (and no more)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "check", "enable.auto.commit": False})
    try:
        partitions = _partitions(consumer, bootstrap, topic, timeout)

        def ends() -> list[int] | None:
            highs = [watermark_offsets(consumer, topic, p)[1] for p in partitions]
            return highs if sum(highs) >= expected else None

        highs = wait_until(ends, timeout=timeout, message=lambda: f"{expected} records in {topic}")
        records: dict[int, list[bytes]] = {p: [] for p in partitions}
        for message in _messages(consumer, topic, partitions, sum(highs)):
            records[message.partition()].append(message.value())
        return records
    finally:
        consumer.close()


def _commit(bootstrap: str, topic: str, group: str, offset: int) -> None:
    """The group's committed offset of every partition of ``topic``: where a consumer that
    read that far left it."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    offsets = [TopicPartition(topic, p, offset) for p in range(PARTITIONS)]

    def committed() -> bool:
        try:
            consumer.commit(offsets=offsets, asynchronous=False)
        except KafkaException as exc:
            if exc.args[0].code() not in COORDINATOR_NOT_READY:
                raise
            return False  # a broker just started: its group coordinator is still loading
        return True

    try:
        wait_until(committed, timeout=60, message=f"{group}'s offsets committed on {bootstrap}")
    finally:
        consumer.close()


def _string(data: bytes, at: int) -> tuple[str, int]:
    (length,) = struct.unpack_from(">h", data, at)
    return data[at + 2 : at + 2 + length].decode(), at + 2 + length


def _checkpoints(bootstrap: str, alias: str) -> list[tuple[str, str, int, int, int]]:
    """Every record of ``<alias>.checkpoints.internal`` in order: (group, topic, partition,
    upstream offset, downstream offset), read as MirrorMaker's ``Checkpoint`` writes them."""
    topic = f"{alias}.checkpoints.internal"
    out = []
    for records in _keyed_records(bootstrap, topic):
        key, value = records
        group, at = _string(key, 0)
        name, at = _string(key, at)
        (partition,) = struct.unpack_from(">i", key, at)
        version, upstream, downstream = struct.unpack_from(">hqq", value, 0)
        assert version == 0
        out.append((group, name, partition, upstream, downstream))
    return out


def _keyed_records(bootstrap: str, topic: str) -> list[tuple[bytes, bytes]]:
    """Every record of ``topic`` now (none when it does not exist), as (key, value)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "check", "enable.auto.commit": False})
    try:
        metadata = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if metadata is None or metadata.error is not None:
            return []
        parts = sorted(metadata.partitions)
        highs = [watermark_offsets(consumer, topic, p)[1] for p in parts]
        return [(m.key(), m.value()) for m in _messages(consumer, topic, parts, sum(highs))]
    finally:
        consumer.close()


def _latest_checkpoints(bootstrap: str, alias: str, group: str, topic: str) -> dict[int, int]:
    latest: dict[int, int] = {}
    for g, name, partition, _, downstream in _checkpoints(bootstrap, alias):
        if (g, name) == (group, topic):
            latest[partition] = downstream
    return latest


def _assert_monotonic(bootstrap: str, alias: str) -> None:
    """Per group and partition, each checkpoint's offsets at least the previous one's."""
    last: dict[tuple[str, str, int], tuple[int, int]] = {}
    for group, topic, partition, upstream, downstream in _checkpoints(bootstrap, alias):
        key = (group, topic, partition)
        if key in last:
            assert (upstream, downstream) >= last[key], (key, last[key], (upstream, downstream))
            assert downstream >= last[key][1], (key, last[key], (upstream, downstream))
        last[key] = (upstream, downstream)


def _translated_offsets_close(
    bootstrap: str, alias: str, group: str, topic: str, upstream: int
) -> dict[int, int] | None:
    """The group's checkpointed offsets of ``topic`` once every partition has one within
    ``offset.lag.max`` of where the group left upstream (``upstream``, in each partition)."""
    latest = _latest_checkpoints(bootstrap, alias, group, topic)
    if sorted(latest) != list(range(PARTITIONS)):
        return None
    if not all(upstream - OFFSET_LAG_MAX <= offset <= upstream for offset in latest.values()):
        return None
    return latest


def _resume_at(bootstrap: str, topic: str, group: str, offsets: dict[int, int], ends: int) -> dict[int, list[bytes]]:
    """What a consumer of ``group`` that seeks to ``offsets`` reads up to ``ends`` records
    in each partition (where it then commits)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, p, offset) for p, offset in offsets.items()])
        remaining = sum(ends - offset for offset in offsets.values())
        read: dict[int, list[bytes]] = {p: [] for p in offsets}
        while sum(len(v) for v in read.values()) < remaining:
            message = consumer.poll(5)
            assert message is not None, f"read {read} after seeking to {offsets}"
            if message.error() is None:
                read[message.partition()].append(message.value())
        consumer.commit(offsets=[TopicPartition(topic, p, ends) for p in offsets], asynchronous=False)
        return read
    finally:
        consumer.close()


def test_mirror_maker_replicates_both_ways_with_checkpoints_and_failover(
    kafka_bootstrap: str,
    backup_broker: KafkaBroker,
    mirror_plugin_path: Path,
    unique_name: str,
    tmp_path: Path,
) -> None:
    primary, backup = ("primary", kafka_bootstrap), ("backup", backup_broker.bootstrap)
    name = unique_name[-24:]
    topic1 = f"{name}-test-topic-1"
    group = f"{name}-group"
    # the test's topics, and their remote copies (what stops loops is MirrorMaker's own check)
    pattern = f".*{name}-test-topic-.*"
    _create_topic(primary[1], topic1, {"cleanup.policy": "compact", "delete.retention.ms": "1000"})
    _create_topic(backup[1], topic1)
    sent_primary = _produce(primary[1], topic1, "from-primary")
    sent_backup = _produce(backup[1], topic1, "from-backup")
    # the group read each cluster's topic before MirrorMaker runs
    _commit(primary[1], topic1, group, PER_PARTITION)
    _commit(backup[1], topic1, group, PER_PARTITION)

    to_backup = _worker(tmp_path, backup[1], f"{name}-on-backup", mirror_plugin_path)
    to_primary = _worker(tmp_path, primary[1], f"{name}-on-primary", mirror_plugin_path)
    to_backup.spawn()
    to_primary.spawn()
    try:
        to_backup.wait_ready(180)
        to_primary.wait_ready(180)
        _start_mirror(to_backup, "p2b", {c: _mirror_config(c, primary, backup, pattern, group) for c in CONNECTORS})
        _start_mirror(to_primary, "b2p", {c: _mirror_config(c, backup, primary, pattern, group) for c in CONNECTORS})

        # N records in test-topic-1 on each side: exactly N in the other's remote topic
        assert _read(backup[1], f"primary.{topic1}", PARTITIONS * PER_PARTITION) == sent_primary
        assert _read(primary[1], f"backup.{topic1}", PARTITIONS * PER_PARTITION) == sent_backup

        # topic configs: synced, but not the excluded ones
        def synced() -> dict[str, str] | None:
            config = _topic_config(backup[1], f"primary.{topic1}")
            return config if config.get("cleanup.policy") == "compact" else None

        config = wait_until(synced, timeout=60, message="cleanup.policy synced to the remote topic")
        assert config["delete.retention.ms"] != "1000", "an excluded config was synced"

        # heartbeats: emitted on each cluster and replicated
        for bootstrap, topic in ((backup[1], "heartbeats"), (backup[1], "primary.heartbeats")):
            wait_until(lambda b=bootstrap, t=topic: _keyed_records(b, t), timeout=60, message=f"{topic} records")
        wait_until(lambda: _keyed_records(primary[1], "backup.heartbeats"), timeout=60, message="backup.heartbeats")

        # the offset-syncs topic where offset-syncs.topic.location says: the source, by default
        assert "mm2-offset-syncs.backup.internal" in _topics(primary[1])
        assert "mm2-offset-syncs.backup.internal" not in _topics(backup[1])

        # checkpoints of every partition, close to where the group left: failover to backup
        # (where the group goes on with what was written on primary since) ...
        failover = wait_until(
            lambda: _translated_offsets_close(backup[1], "primary", group, f"primary.{topic1}", PER_PARTITION),
            timeout=90,
            message=lambda: f"checkpoints: {_latest_checkpoints(backup[1], 'primary', group, f'primary.{topic1}')}",
        )
        newer = _produce(primary[1], topic1, "newer")
        written = {p: sent_primary[p] + newer[p] for p in sent_primary}
        assert _read(backup[1], f"primary.{topic1}", 2 * PARTITIONS * PER_PARTITION) == written
        resumed = _resume_at(backup[1], f"primary.{topic1}", group, failover, 2 * PER_PARTITION)
        assert resumed == {p: written[p][failover[p] :] for p in failover}
        # ... and failback to primary
        failback = wait_until(
            lambda: _translated_offsets_close(primary[1], "backup", group, f"backup.{topic1}", PER_PARTITION),
            timeout=90,
            message=lambda: f"checkpoints: {_latest_checkpoints(primary[1], 'backup', group, f'backup.{topic1}')}",
        )
        assert _resume_at(primary[1], f"backup.{topic1}", group, failback, PER_PARTITION) == {
            p: sent_backup[p][failback[p] :] for p in failback
        }
        _assert_monotonic(backup[1], "primary")

        # restarting all three connectors keeps the checkpoints monotonic
        for connector in CONNECTORS:
            answer = http_client.post(
                f"{to_backup.url}/connectors/p2b-{connector}/restart?includeTasks=true", timeout=60
            )
            assert answer.status_code in (202, 204), answer.text
        for connector in CONNECTORS:
            wait_until(
                lambda c=connector: _states(to_backup, f"p2b-{c}") == ("RUNNING", "RUNNING"),
                timeout=120,
                message=f"p2b-{connector} running again",
            )
        more = _produce(primary[1], topic1, "after-restart")
        _commit(primary[1], topic1, group, 3 * PER_PARTITION)
        assert _read(backup[1], f"primary.{topic1}", 3 * PARTITIONS * PER_PARTITION) == {
            p: written[p] + more[p] for p in written
        }
        wait_until(
            lambda: _translated_offsets_close(backup[1], "primary", group, f"primary.{topic1}", 3 * PER_PARTITION),
            timeout=90,
            message="checkpoints after the restart",
        )
        _assert_monotonic(backup[1], "primary")

        # a topic created later on each cluster is copied to the other (both directions on)
        topic2 = f"{name}-test-topic-2"
        later: dict[str, dict[int, list[bytes]]] = {}
        for cluster in (primary, backup):
            _create_topic(cluster[1], topic2)
            later[cluster[0]] = _produce(cluster[1], topic2, f"later-{cluster[0]}", partitions=1)
        assert _read(backup[1], f"primary.{topic2}", PER_PARTITION, timeout=120)[0] == later["primary"][0]
        assert _read(primary[1], f"backup.{topic2}", PER_PARTITION, timeout=120)[0] == later["backup"][0]

        # nothing looped back, either way
        loops = {
            t for t in _topics(primary[1]) | _topics(backup[1]) if t.startswith(("primary.backup.", "backup.primary."))
        }
        assert not loops, loops
    finally:
        codes = [to_backup.stop(), to_primary.stop()]
        assert codes == [0, 0], to_backup.log()[-3000:] + to_primary.log()[-3000:]


def test_offset_syncs_on_the_target_and_a_topic_created_later(
    kafka_bootstrap: str,
    backup_broker: KafkaBroker,
    mirror_plugin_path: Path,
    unique_name: str,
    tmp_path: Path,
) -> None:
    """``offset-syncs.topic.location=target``: the offset syncs of east→west are written to
    west (where the connectors' worker runs), not east, and checkpoints still come; a topic
    created later is replicated."""
    east, west = ("east", kafka_bootstrap), ("west", backup_broker.bootstrap)
    name = unique_name[-24:]
    topic, group = f"{name}-events", f"{name}-group"
    _create_topic(east[1], topic)
    sent = _produce(east[1], topic, "east")
    _commit(east[1], topic, group, PER_PARTITION)
    worker = _worker(tmp_path, west[1], f"{name}-on-west", mirror_plugin_path).start(timeout=180)
    try:
        location: dict[str, Any] = {"offset-syncs.topic.location": "target"}
        _start_mirror(
            worker,
            "e2w",
            {c: _mirror_config(c, east, west, f"{topic}.*", group, **location) for c in CONNECTORS[:2]},
        )
        assert _read(west[1], f"east.{topic}", PARTITIONS * PER_PARTITION) == sent
        wait_until(
            lambda: _translated_offsets_close(west[1], "east", group, f"east.{topic}", PER_PARTITION),
            timeout=90,
            message="checkpoints through offset syncs kept on the target",
        )
        assert "mm2-offset-syncs.east.internal" in _topics(west[1])
        assert "mm2-offset-syncs.east.internal" not in _topics(east[1])

        # a topic created later is replicated
        later = f"{name}-events-later"
        _create_topic(east[1], later)
        sent_later = _produce(east[1], later, "later", partitions=1)
        assert _read(west[1], f"east.{later}", PER_PARTITION, timeout=120)[0] == sent_later[0]
    finally:
        assert worker.stop() == 0, worker.log()[-3000:]


def _committed_count(bootstrap: str, topic: str, expected: int, timeout: float = 120.0) -> int:
    """How many records a read_committed consumer finds in ``topic`` once it has found
    ``expected`` and nothing more came for two seconds."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check-committed-{topic}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in _partitions(consumer, bootstrap, topic, timeout)])
        seen = [0]

        def read(wait: float) -> int:
            seen[0] += sum(1 for m in consumer.consume(1000, wait) if m.error() is None)
            return seen[0]

        wait_until(
            lambda: read(0.5) >= expected, timeout=timeout, message=lambda: f"{seen[0]} of {expected} in {topic}"
        )
        quiet_until = time.monotonic() + 2.0
        while time.monotonic() < quiet_until:
            read(0.2)
        return seen[0]
    finally:
        consumer.close()


def test_exactly_once_mirror_source_re_replicates_what_its_altered_offsets_say(
    kafka_bootstrap: str,
    backup_broker: KafkaBroker,
    mirror_plugin_path: Path,
    unique_name: str,
    tmp_path: Path,
) -> None:
    """Kafka's ``MirrorConnectorsIntegrationExactlyOnceTest``: MirrorSourceConnector on a
    Sluice worker with exactly-once source support; stopped, its offsets moved back to 0
    for one topic (it resumes after offset 0) and reset for another (it starts over), then
    resumed: a read_committed consumer on the backup finds exactly the records replicated
    again on top of the first copy, no more."""
    primary, backup = ("primary", kafka_bootstrap), ("backup", backup_broker.bootstrap)
    name = unique_name[-24:]
    first, second = f"{name}-one", f"{name}-two"
    _create_topic(primary[1], first)
    admin = AdminClient({"bootstrap.servers": primary[1]})
    admin.create_topics([NewTopic(second, 1, 1)])[second].result(timeout=30)
    _produce(primary[1], first, "one")
    _produce(primary[1], second, "two", partitions=1)
    exactly_once: dict[str, str | None] = {"exactly.once.source.support": "enabled"}
    worker = _worker(tmp_path, backup[1], f"{name}-eos", mirror_plugin_path, exactly_once).start(timeout=180)
    source = "eos-MirrorSourceConnector"
    try:
        _start_mirror(worker, "eos", {CONNECTORS[0]: _mirror_config(CONNECTORS[0], primary, backup, f"{name}-.*", "")})
        assert _committed_count(backup[1], f"primary.{first}", PARTITIONS * PER_PARTITION) == PARTITIONS * PER_PARTITION
        assert _committed_count(backup[1], f"primary.{second}", PER_PARTITION) == PER_PARTITION

        assert http_client.put(f"{worker.url}/connectors/{source}/stop", timeout=60).status_code == 204
        wait_until(
            lambda: worker.get(f"/connectors/{source}/status").json()["connector"]["state"] == "STOPPED",
            timeout=120,
            message="MirrorSourceConnector STOPPED",
        )

        # The partitions as the task wrote them (GET, then PATCH, as a user does): a Java
        # task's offset store finds a partition by its key's bytes, whose map order is the
        # order MirrorMaker 2 built it in.
        stored = worker.get(f"/connectors/{source}/offsets").json()["offsets"]
        # (MirrorMaker 2 also replicates any heartbeats topic, which another test may have made)
        by_topic = {(o["partition"]["topic"], o["partition"]["partition"]): o["partition"] for o in stored}
        ours = sorted(key for key in by_topic if key[0] in (first, second))
        assert ours == sorted([(first, p) for p in range(PARTITIONS)] + [(second, 0)]), stored
        offsets: list[dict[str, Any]] = [
            {"partition": by_topic[(first, p)], "offset": {"offset": 0}} for p in range(PARTITIONS)
        ]
        offsets.append({"partition": by_topic[(second, 0)], "offset": None})
        answer = http_client.patch(f"{worker.url}/connectors/{source}/offsets", json={"offsets": offsets}, timeout=60)
        assert answer.status_code == 200, answer.text
        assert http_client.put(f"{worker.url}/connectors/{source}/resume", timeout=60).status_code == 202

        again_first = PARTITIONS * PER_PARTITION + PARTITIONS * (PER_PARTITION - 1)
        assert _committed_count(backup[1], f"primary.{first}", again_first) == again_first
        assert _committed_count(backup[1], f"primary.{second}", 2 * PER_PARTITION) == 2 * PER_PARTITION
    finally:
        assert worker.stop() == 0, worker.log()[-3000:]
