"""The bundled Replicator's own logic, without clusters: its configuration (Confluent's keys
and defaults, what is refused), which topics it picks, how partitions are dealt to tasks,
provenance and loops, and the offsets it accepts."""

from __future__ import annotations

from typing import Any

import pytest

from sluice.api.errors import ConnectError
from sluice.connectors.replicator.config import CONFIG_DEF, ReplicatorConfig, refusals
from sluice.connectors.replicator.connector import ReplicatorSourceConnector
from sluice.connectors.replicator.task import (
    PROVENANCE_HEADER,
    ReplicatorSourceTask,
    format_assignment,
    parse_assignment,
)
from sluice.runtime.plugins import Plugins

BYTES = "io.confluent.connect.replicator.util.ByteArrayConverter"
BASE = {
    "name": "rep",
    "connector.class": "io.confluent.connect.replicator.ReplicatorSourceConnector",
    "key.converter": BYTES,
    "value.converter": BYTES,
    "header.converter": BYTES,
    "src.kafka.bootstrap.servers": "src:9092",
    "dest.kafka.bootstrap.servers": "dest:9092",
}


def test_confluents_defaults() -> None:
    config = ReplicatorConfig.parse(BASE)
    assert config.rename_format == "${topic}"
    assert (config.auto_create, config.preserve_partitions, config.config_sync) == (True, True, True)
    assert (config.topic_poll_interval_s, config.config_sync_interval_s) == (120.0, 120.0)
    assert (config.offset_start, config.timestamp_type, config.provenance) == ("connect", "CreateTime", False)
    assert config.offset_topic_commit is True
    assert {k.name: k.default_value for k in CONFIG_DEF.config_keys().values()}["src.key.converter"] == BYTES


def test_client_settings_come_from_the_prefixed_keys() -> None:
    config = ReplicatorConfig.parse(
        {
            **BASE,
            "src.kafka.security.protocol": "SASL_SSL",
            "src.consumer.max.poll.records": "300",
            "src.consumer.security.protocol": "SSL",
            "dest.kafka.client.id": "d",
        }
    )
    assert config.source_client == {"bootstrap.servers": "src:9092", "security.protocol": "SASL_SSL"}
    assert config.source_consumer == {
        "bootstrap.servers": "src:9092",
        "security.protocol": "SSL",  # src.consumer.* wins over src.kafka.*
        "max.poll.records": "300",
    }
    assert config.destination_client == {"bootstrap.servers": "dest:9092", "client.id": "d"}


def test_topics_blacklist_first_then_whitelist_or_regex_never_kafkas_own() -> None:
    config = ReplicatorConfig.parse(
        {
            **BASE,
            "topic.whitelist": "topic1",
            "topic.regex": "topic[234]",
            "topic.blacklist": "topic4",
        }
    )
    picked = [t for t in ("topic1", "topic2", "topic3", "topic4", "topic22", "__consumer_offsets") if config.topics(t)]
    assert picked == ["topic1", "topic2", "topic3"]
    assert not ReplicatorConfig.parse({**BASE, "topic.regex": ".*"}).topics("__transaction_state")
    assert not ReplicatorConfig.parse(BASE).topics("anything")  # nothing listed: nothing replicated


def test_rename_format() -> None:
    config = ReplicatorConfig.parse({**BASE, "topic.rename.format": "dc1.${topic}.replica"})
    assert config.destination_topic("orders") == "dc1.orders.replica"


def test_what_sluice_does_not_do_is_refused_naming_the_key() -> None:
    assert refusals(BASE) == {}
    assert refusals({**BASE, "offset.timestamps.commit": "false", "offset.translator.tasks.max": "-1"}) == {}
    refused = refusals(
        {
            **BASE,
            "offset.timestamps.commit": "true",
            "provenance.header.filter.overrides": "a,b,1-2",
            "schema.registry.url": "http://registry",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        }
    )
    assert set(refused) == {
        "offset.timestamps.commit",
        "provenance.header.filter.overrides",
        "schema.registry.url",
        "value.converter",
    }
    # the worker's converters would apply when the connector names none: byte copies need these
    missing = dict(BASE)
    del missing["header.converter"]
    assert set(refusals(missing)) == {"header.converter"}
    kafkas = {**BASE, "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}
    assert refusals(kafkas) == {}


def test_validation_reports_refusals_under_their_keys() -> None:
    config = ReplicatorSourceConnector().validate({**BASE, "value.converter": "StringConverter", "offset.start": "x"})
    errors = {v.name: v.error_messages for v in config.config_values if v.error_messages}
    assert set(errors) == {"value.converter", "offset.start"}


def test_confluents_byte_array_converter_name_resolves_to_kafkas() -> None:
    plugins = Plugins()
    desc = plugins.resolve(BYTES, ("converter", "header_converter"))
    assert desc.class_name == "org.apache.kafka.connect.converters.ByteArrayConverter"
    assert plugins.resolve("ByteArrayConverter", ("converter",)).class_name == desc.class_name
    listed = {d.class_name for d in plugins.all()}
    assert "io.confluent.connect.replicator.ReplicatorSourceConnector" in listed
    assert BYTES not in listed  # a synonym, not another plugin


def test_assignments_round_trip() -> None:
    partitions = [("a.b-c_d", 0), ("a.b-c_d", 1), ("x", 7)]
    assert parse_assignment(format_assignment(partitions)) == partitions
    assert parse_assignment("") == []


class _Connector(ReplicatorSourceConnector):
    """The connector with its clusters' answers given, to deal partitions."""

    def __init__(self, shapes: dict[str, int]) -> None:
        super().__init__()
        from sluice.connectors.replicator.clusters import TopicShape

        self._props = dict(BASE)
        self._shapes = {t: TopicShape(n, 1) for t, n in shapes.items()}
        self._source = type("S", (), {"cluster_id": "SRC"})()  # type: ignore[assignment]
        self._destination = type("D", (), {"cluster_id": "DST"})()  # type: ignore[assignment]


def test_partitions_are_dealt_round_robin_to_at_most_tasks_max_tasks() -> None:
    connector = _Connector({"b": 2, "a": 3})
    configs = connector.task_configs(2)
    assert [c["replicator.task.partitions"] for c in configs] == ["a:0,a:2,b:1", "a:1,b:0"]
    assert {c["replicator.destination.cluster.id"] for c in configs} == {"DST"}
    assert len(connector.task_configs(10)) == 5
    assert _Connector({}).task_configs(4) == []


def test_offsets_accepted_as_the_task_writes_them() -> None:
    connector = ReplicatorSourceConnector()
    good: dict[Any, Any] = {
        (("partition", 0), ("topic", "t")): {"offset": 41},
        (("partition", 1), ("topic", "t")): None,
    }
    assert connector.alter_offsets(BASE, good) is True
    with pytest.raises(ConnectError, match="offset"):
        connector.alter_offsets(BASE, {(("partition", 0), ("topic", "t")): {"offset": "x"}})
    with pytest.raises(ConnectError, match="topic"):
        connector.alter_offsets(BASE, {(("partition", 0),): {"offset": 1}})


def _task(destination_cluster: str = "DST") -> ReplicatorSourceTask:
    task = ReplicatorSourceTask()
    task._source_cluster = "SRC"
    task._destination_cluster = destination_cluster
    return task


def test_provenance_is_added_once_and_stops_loops() -> None:
    task = _task()
    headers = task._with_provenance([("h", b"1")], "orders", "orders")
    assert headers is not None and headers[0] == ("h", b"1")
    key, value = headers[1]
    cluster, topic, stamp = value.decode().split(",")  # type: ignore[union-attr]
    assert (key, cluster, topic) == (PROVENANCE_HEADER, "SRC", "orders") and int(stamp) > 0
    # a record that already went somewhere keeps its first provenance
    assert task._with_provenance(headers, "orders", "orders.copy") == headers
    # one that came from the destination topic of this very copy is not copied back
    back = [(PROVENANCE_HEADER, b"DST,orders,1")]
    assert task._with_provenance(back, "orders", "orders") is None
    assert task._with_provenance(back, "orders", "orders.renamed") == back
