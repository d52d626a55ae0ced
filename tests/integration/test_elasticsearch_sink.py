"""The Elasticsearch sink end to end: a real Kafka broker, a `sluice standalone` worker with
Spark, and a real OpenSearch node (and Elasticsearch where it runs), both started by the
project's tooling. Records of every converter become documents with the expected ids,
fields and mappings; upserts merge; tombstones delete; malformed documents follow
behavior.on.malformed.documents and reach the dead letter queue; a worker SIGKILLed
mid-load and a node that goes away lose nothing."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from sluice.api import Schema, SinkRecord, Struct, TopicPartition
from sluice.connectors.elasticsearch import ElasticsearchSinkTask
from sluice.converters.json import JsonConverter
from tests import http_client
from tests.helpers import RecordingReporter, RecordingSinkContext, put_in_chunks, read_topic, wait_until
from tests.integration.workers import StandaloneWorker, connector_cli

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("search")]

CONNECTOR = "io.confluent.connect.elasticsearch.ElasticsearchSinkConnector"
# how each server names a value its mapping cannot take (OpenSearch, Elasticsearch 8)
PARSING_ERROR = re.compile(r"(mapper|document)_parsing_exception")
ORDER_SCHEMA = {
    "type": "struct",
    "name": "com.example.Order",
    "optional": False,
    "fields": [
        {"field": "id", "type": "int64", "optional": False},
        {"field": "customer", "type": "string", "optional": False},
        {"field": "amount", "type": "double", "optional": True},
        {"field": "paid", "type": "boolean", "optional": False},
        {"field": "at", "type": "int64", "optional": False, "name": "org.apache.kafka.connect.data.Timestamp",
         "version": 1},
        {"field": "lines", "type": "int32", "optional": False, "default": 1},
    ],
}  # fmt: skip


def order(i: int, **changes: Any) -> dict[str, Any]:
    return {
        "id": i,
        "customer": f"c-{i % 7}",
        "amount": None if i % 5 == 0 else i * 1.5,
        "paid": i % 2 == 0,
        "at": 1_700_000_000_000 + i,
        "lines": 1 + i % 3,
        **changes,
    }


def envelope(payload: dict[str, Any] | None, schema: dict[str, Any] | None = ORDER_SCHEMA) -> bytes | None:
    if payload is None:
        return None
    return json.dumps({"schema": schema, "payload": payload}).encode()


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)


def produce(bootstrap: str, topic: str, items: list[tuple[str | None, bytes | None]], partitions: int = 1) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1_000_000})
    for n, (key, value) in enumerate(items):
        while True:
            try:
                producer.produce(topic, key=key, value=value, partition=n % partitions)
                break
            except BufferError:
                producer.poll(0.1)
    assert producer.flush(120) == 0


class Search:
    """Reads what the sink wrote, over the node's REST API."""

    def __init__(self, url: str) -> None:
        self.url = url

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        r = http_client.request(method, self.url + path, json=body, timeout=30)
        return r.status_code, (r.json() if r.content else None)

    def count(self, index: str, query: dict[str, Any] | None = None) -> int:
        self.call("POST", f"/{index}/_refresh")
        status, body = self.call("POST", f"/{index}/_count", {"query": query} if query else None)
        return int(body["count"]) if status == 200 else -1

    def docs(self, index: str) -> dict[str, dict[str, Any]]:
        self.call("POST", f"/{index}/_refresh")
        status, body = self.call("POST", f"/{index}/_search?version=true", {"size": 10_000})
        assert status == 200, body
        return {hit["_id"]: {**hit["_source"], "_version": hit["_version"]} for hit in body["hits"]["hits"]}

    def mapping(self, index: str) -> dict[str, Any]:
        status, body = self.call("GET", f"/{index}/_mapping")
        assert status == 200, body
        return body[index]["mappings"]["properties"]

    def wait_count(self, index: str, n: int, worker: StandaloneWorker, name: str, timeout: float = 120) -> None:
        wait_until(
            lambda: self.count(index) >= n,
            timeout=timeout,
            message=lambda: f"{self.count(index)} of {n} documents; {worker.get(f'/connectors/{name}/status').text}",
        )


@pytest.fixture(scope="module", params=["opensearch", "elasticsearch"])
def search(request: pytest.FixtureRequest) -> Search:
    server = request.getfixturevalue(f"{request.param}_server")
    return Search(server.url)


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneWorker]:
    w = StandaloneWorker(tmp_path_factory.mktemp("es"), kafka_bootstrap, "es")
    w.start()
    yield w
    assert w.stop() == 0, w.log()


def create(worker: StandaloneWorker, name: str, config: dict[str, str]) -> None:
    r = http_client.post(f"{worker.url}/connectors", json={"name": name, "config": config}, timeout=60)
    assert r.status_code == 201, r.text


def delete(worker: StandaloneWorker, name: str) -> None:
    http_client.delete(f"{worker.url}/connectors/{name}", timeout=60)


def sink_config(search: Search, topic: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": CONNECTOR,
        "topics": topic,
        "connection.url": search.url,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "true",
        **extra,
    }


def failed_trace(worker: StandaloneWorker, name: str) -> str | None:
    tasks = worker.get(f"/connectors/{name}/status").json().get("tasks", [])
    return tasks[0]["trace"] if tasks and tasks[0]["state"] == "FAILED" else None


def test_json_with_schemas_becomes_documents_with_mapping_ids_and_versions(
    worker, search, kafka_bootstrap, unique_name
):
    topic = f"{unique_name}-Orders"
    index = topic.lower()
    create_topic(kafka_bootstrap, topic)
    produce(kafka_bootstrap, topic, [(f"order-{i}", envelope(order(i))) for i in range(50)])
    name = f"{unique_name}-json"
    create(worker, name, sink_config(search, topic))
    search.wait_count(index, 50, worker, name)
    docs = search.docs(index)
    assert set(docs) == {f"order-{i}" for i in range(50)}
    for i in range(50):
        doc = docs[f"order-{i}"]
        assert doc.pop("_version") == i  # the Kafka offset, as external version
        assert doc == order(i)
    mapping = search.mapping(index)
    assert mapping["id"] == {"type": "long"}
    assert mapping["customer"] == {"type": "text", "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}}
    assert mapping["amount"]["type"] == "double" and mapping["paid"]["type"] == "boolean"
    assert mapping["at"]["type"] == "date"
    assert mapping["lines"] == {"type": "integer", "null_value": 1}
    # a replay of older offsets (a new connector reading from the start) changes nothing
    produce(kafka_bootstrap, topic, [("order-3", envelope(order(3, customer="newer")))])
    wait_until(lambda: search.docs(index)["order-3"]["customer"] == "newer", timeout=60)
    delete(worker, name)
    again = f"{unique_name}-replay"
    create(worker, again, sink_config(search, topic))
    wait_until(
        lambda: worker.get(f"/connectors/{again}/offsets").json().get("offsets"),
        timeout=60,
        message=lambda: worker.get(f"/connectors/{again}/status").text,
    )
    wait_until(
        lambda: (
            (o := worker.get(f"/connectors/{again}/offsets").json()["offsets"]) and o[0]["offset"]["kafka_offset"] >= 51
        ),
        timeout=90,
        message=lambda: worker.get(f"/connectors/{again}/offsets").text,
    )
    docs = search.docs(index)
    assert docs["order-3"]["customer"] == "newer" and docs["order-3"]["_version"] == 50
    assert failed_trace(worker, again) is None
    delete(worker, again)


def test_schemaless_json_with_generated_ids(worker, search, kafka_bootstrap, unique_name):
    topic = f"{unique_name}-plain"
    create_topic(kafka_bootstrap, topic, partitions=2)
    values = [json.dumps({"n": i, "tags": {"a": str(i)}, "nested": [{"x": i}]}).encode() for i in range(40)]
    produce(kafka_bootstrap, topic, [(None, v) for v in values], partitions=2)
    name = f"{unique_name}-plain"
    config = sink_config(search, topic, **{"key.ignore": "true", "value.converter.schemas.enable": "false"})
    create(worker, name, config)
    search.wait_count(topic, 40, worker, name)
    docs = search.docs(topic)
    assert {doc["n"] for doc in docs.values()} == set(range(40))
    for doc_id, doc in docs.items():
        t, partition, offset = doc_id.rsplit("+", 2)
        assert t == topic and int(partition) == doc["n"] % 2 and int(offset) == doc["n"] // 2
        assert doc["tags"] == {"a": str(doc["n"])} and doc["nested"] == [{"x": doc["n"]}]
    delete(worker, name)


def test_avro_records_become_documents(worker, search, kafka_bootstrap, schema_registry, unique_name):
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    schema = {
        "type": "record",
        "name": "Reading",
        "fields": [
            {"name": "sensor", "type": "string"},
            {"name": "value", "type": ["null", "double"], "default": None},
            {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        ],
    }
    serializer = AvroSerializer(SchemaRegistryClient({"url": schema_registry}), json.dumps(schema))
    topic = f"{unique_name}-avro"
    create_topic(kafka_bootstrap, topic)
    context = SerializationContext(topic, MessageField.VALUE)
    readings = [{"sensor": f"s{i}", "value": i / 2 if i % 3 else None, "at": 1_700_000_000_000 + i} for i in range(20)]
    produce(kafka_bootstrap, topic, [(f"r{i}", serializer(r, context)) for i, r in enumerate(readings)])
    name = f"{unique_name}-avro"
    config = sink_config(
        search,
        topic,
        **{
            "value.converter": "io.confluent.connect.avro.AvroConverter",
            "value.converter.schema.registry.url": schema_registry,
        },
    )
    create(worker, name, config)
    search.wait_count(topic, 20, worker, name)
    docs = search.docs(topic)
    assert {k: {f: v for f, v in d.items() if f != "_version"} for k, d in docs.items()} == {
        f"r{i}": r for i, r in enumerate(readings)
    }
    mapping = search.mapping(topic)
    assert mapping["at"]["type"] == "date" and mapping["value"]["type"] == "double"
    delete(worker, name)


def test_upserts_merge_and_tombstones_delete(worker, search, kafka_bootstrap, unique_name):
    topic = f"{unique_name}-ups"
    create_topic(kafka_bootstrap, topic)
    plain = {"value.converter.schemas.enable": "false"}
    produce(
        kafka_bootstrap,
        topic,
        [
            ("a", json.dumps({"x": 1}).encode()),
            ("b", json.dumps({"x": 2}).encode()),
            ("a", json.dumps({"y": 3}).encode()),
            ("b", None),  # a tombstone
            ("c", json.dumps({"z": 4}).encode()),
        ],
    )
    name = f"{unique_name}-ups"
    extra = {"write.method": "upsert", "behavior.on.null.values": "delete", **plain}
    create(worker, name, sink_config(search, topic, **extra))
    expected = {"a": {"x": 1, "y": 3}, "c": {"z": 4}}  # a merged, b deleted

    def documents() -> dict[str, dict[str, Any]]:
        return {k: {f: v for f, v in d.items() if f != "_version"} for k, d in search.docs(topic).items()}

    # Each document id has its own bulk lane, so a refresh may show b deleted and c written
    # while a's second update is still under way: wait for the whole outcome.
    wait_until(
        lambda: documents() == expected,
        timeout=120,
        message=lambda: f"{documents()}; {worker.get(f'/connectors/{name}/status').text}",
        ignore=(AssertionError,),  # no index yet
    )
    delete(worker, name)


@pytest.mark.parametrize("behavior", ["ignore", "warn", "fail"])
def test_malformed_documents_follow_the_behavior_and_reach_the_dead_letter_queue(
    worker, search, kafka_bootstrap, unique_name, behavior
):
    topic = f"{unique_name}-bad"
    index = topic.lower()
    status, body = search.call("PUT", f"/{index}", {"mappings": {"properties": {"n": {"type": "long"}}}})
    assert status == 200, body
    create_topic(kafka_bootstrap, topic)
    values = [json.dumps({"n": "not a number" if i == 5 else i}).encode() for i in range(10)]
    produce(kafka_bootstrap, topic, [(f"k{i}", v) for i, v in enumerate(values)])
    dlq = f"{unique_name}-dlq"
    name = f"{unique_name}-bad"
    config = sink_config(
        search,
        topic,
        **{
            "value.converter.schemas.enable": "false",
            "behavior.on.malformed.documents": behavior,
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        },
    )
    create(worker, name, config)
    dead = read_topic(kafka_bootstrap, dlq, 1)
    assert json.loads(dead[0].value()) == {"n": "not a number"} and dead[0].key() == b"k5"
    headers = dict(dead[0].headers())
    assert PARSING_ERROR.search(headers["__connect.errors.exception.message"].decode())
    if behavior == "fail":
        trace = wait_until(lambda: failed_trace(worker, name), timeout=90)
        assert PARSING_ERROR.search(trace) and "behavior.on.malformed.documents=fail" in trace
    else:
        search.wait_count(index, 9, worker, name)
        assert set(search.docs(index)) == {f"k{i}" for i in range(10) if i != 5}
        assert worker.get(f"/connectors/{name}/status").json()["tasks"][0]["state"] == "RUNNING"
        if behavior == "warn":
            assert "Ignoring a malformed document" in worker.log()
    delete(worker, name)


def test_a_malformed_document_without_tolerance_fails_the_task(worker, search, kafka_bootstrap, unique_name):
    topic = f"{unique_name}-strict"
    status, body = search.call("PUT", f"/{topic}", {"mappings": {"properties": {"n": {"type": "long"}}}})
    assert status == 200, body
    create_topic(kafka_bootstrap, topic)
    produce(kafka_bootstrap, topic, [("k", json.dumps({"n": "x"}).encode())])
    name = f"{unique_name}-strict"
    create(worker, name, sink_config(search, topic, **{"value.converter.schemas.enable": "false"}))
    trace = wait_until(lambda: failed_trace(worker, name), timeout=90)
    assert PARSING_ERROR.search(trace), trace
    delete(worker, name)


def test_data_stream(worker, search, kafka_bootstrap, unique_name):
    topic = f"{unique_name}-ds"
    template = {"index_patterns": ["logs-app-*"], "data_stream": {}, "priority": 500}
    status, body = search.call("PUT", "/_index_template/sluice-logs-app", template)
    assert status == 200, body
    create_topic(kafka_bootstrap, topic)
    produce(kafka_bootstrap, topic, [(f"e{i}", json.dumps({"i": i}).encode()) for i in range(10)])
    name = f"{unique_name}-ds"
    extra = {"value.converter.schemas.enable": "false", "data.stream.type": "logs", "data.stream.dataset": "app"}
    create(worker, name, sink_config(search, topic, **extra))
    stream = f"logs-app-{topic.lower()}"
    search.wait_count(stream, 10, worker, name)
    status, body = search.call("GET", f"/{stream}")  # a data stream's backing indices are named .ds-<stream>-…
    assert status == 200 and all(name.startswith(f".ds-{stream}-") for name in body), body
    assert all("@timestamp" in d for d in search.docs(stream).values())
    delete(worker, name)


def test_validation_names_an_unreachable_cluster_on_connection_url(worker, unique_name):
    config = {"connector.class": CONNECTOR, "topics": "t", "connection.url": "http://127.0.0.1:9", "name": unique_name}
    r = http_client.put(
        f"{worker.url}/connector-plugins/ElasticsearchSinkConnector/config/validate", json=config, timeout=60
    )
    assert r.status_code == 200, r.text
    values = {c["value"]["name"]: c["value"] for c in r.json()["configs"]}
    assert any("Could not connect to Elasticsearch" in e for e in values["connection.url"]["errors"])


def test_a_worker_sigkilled_twice_mid_load_leaves_each_document_with_its_last_value(
    opensearch_server, kafka_bootstrap, unique_name, tmp_path
):
    """20,000 documents written twice each (40,000 records); the worker is SIGKILLed twice
    during the load. Replays after each restart rewrite documents with their Kafka offsets as
    external versions, so no document ends with its older value, and none is missing."""
    search = Search(opensearch_server.url)
    total, partitions = 20_000, 3
    topic = f"{unique_name}-crash"
    index = topic.lower()
    create_topic(kafka_bootstrap, topic, partitions)
    items = [(f"key-{i}", json.dumps({"i": i, "v": v}).encode()) for v in (0, 1) for i in range(total)]
    produce_by_key = Producer({"bootstrap.servers": kafka_bootstrap, "linger.ms": 20, "batch.size": 1_000_000})
    for key, value in items:  # by key: both values of a document in one partition, in order
        while True:
            try:
                produce_by_key.produce(topic, key=key, value=value, partition=hash(key) % partitions)
                break
            except BufferError:
                produce_by_key.poll(0.1)
    assert produce_by_key.flush(120) == 0
    name = f"{unique_name}-sink"
    config = sink_config(
        search, topic, **{"value.converter.schemas.enable": "false", "tasks.max": "2", "batch.size": "500"}
    )
    extra = {"sluice.sink.batch.max.records": "1000"}  # small puts: the load lasts long enough to be hit
    latest = {"term": {"v": 1}}
    kill_when = [lambda: search.count(index) >= 6_000, lambda: search.count(index, latest) >= 4_000]
    for run in range(3):
        w = StandaloneWorker(tmp_path / "w", kafka_bootstrap, "w", extra=extra)
        w.start()
        try:
            if run == 0:
                create(w, name, config)
            if run < 2:
                wait_until(kill_when[run], timeout=300, message=lambda w=w: w.get(f"/connectors/{name}/status").text)
                w.kill()  # SIGKILL mid-load
                assert search.count(index, latest) < total, "the load finished before the kill: make it longer"
            else:
                wait_until(
                    lambda: search.count(index, latest) >= total,
                    timeout=400,
                    message=lambda w=w: (
                        f"{search.count(index, latest)} latest; {w.get(f'/connectors/{name}/status').text}"
                    ),
                )
                assert search.count(index) == total
                assert search.count(index, {"term": {"v": 0}}) == 0
                assert w.stop() == 0, w.log()
        finally:
            w.kill()


def test_the_server_going_away_is_retried_then_recovered_or_failed(
    kafka_bootstrap, unique_name, tmp_path_factory, search_work_dir
):
    """A node stopped mid-stream and started again: with enough retries the task waits for it
    and every record arrives; with max.retries too small for the outage the task FAILS with
    the reason, and a restart once the node is back writes the rest (nothing acknowledged lost)."""
    from sluice_devtools.search_servers import OpenSearchServer

    server = OpenSearchServer(search_work_dir)
    server.start(timeout=180)
    w = StandaloneWorker(tmp_path_factory.mktemp("gone-w"), kafka_bootstrap, "gone")
    try:
        w.start()
        search = Search(server.url)
        patient_topic, brittle_topic = f"{unique_name}-patient", f"{unique_name}-brittle"
        for t in (patient_topic, brittle_topic):
            create_topic(kafka_bootstrap, t)
            produce(kafka_bootstrap, t, [(f"k{i}", json.dumps({"i": i}).encode()) for i in range(2000)])
        # A generous read timeout: a fresh node under the suite's load can take seconds to create
        # an index; the outage below refuses connections, which no read timeout affects.
        plain = {"value.converter.schemas.enable": "false", "retry.backoff.ms": "200", "read.timeout.ms": "30000"}
        patient, brittle = f"{unique_name}-patient", f"{unique_name}-brittle"
        create(w, patient, sink_config(search, patient_topic, **plain, **{"max.retries": "12"}))
        create(w, brittle, sink_config(search, brittle_topic, **plain, **{"max.retries": "1"}))
        search.wait_count(patient_topic, 2000, w, patient)
        search.wait_count(brittle_topic, 2000, w, brittle)
        url = server.url
        assert server.stop()
        for t in (patient_topic, brittle_topic):
            produce(kafka_bootstrap, t, [(f"k{i}", json.dumps({"i": i}).encode()) for i in range(2000, 4000)])
        trace = wait_until(lambda: failed_trace(w, brittle), timeout=120)
        assert "max.retries=1" in trace and "Could not reach" in trace
        assert w.task_state(patient) == "RUNNING"
        server.start(timeout=180)
        assert server.url == url
        search.wait_count(patient_topic, 4000, w, patient, timeout=300)
        assert w.task_state(patient) == "RUNNING"
        assert search.count(brittle_topic) == 2000  # what was acknowledged before the outage is there
        r = http_client.post(f"{w.url}/connectors/{brittle}/restart?includeTasks=true&onlyFailed=true", timeout=60)
        assert r.status_code in (200, 202, 204), r.text
        search.wait_count(brittle_topic, 4000, w, brittle)
        assert w.stop() == 0, w.log()
    finally:
        w.kill()
        server.stop()


def test_predefined_elasticsearch_sink_loads_by_name(worker, kafka_bootstrap, opensearch_server, unique_name):
    topic = f"{unique_name}-pre"
    create_topic(kafka_bootstrap, topic)
    produce(kafka_bootstrap, topic, [(f"id{i}", envelope(order(i))) for i in range(30)])
    settings = {"topics": topic, "connection.url": opensearch_server.url}
    args = [arg for key, value in settings.items() for arg in ("--set", f"{key}={value}")]
    result = connector_cli("--url", worker.url, "load", "elasticsearch-sink", *args, "--wait", "--timeout", "90")
    assert result.returncode == 0, result.stdout + result.stderr
    search = Search(opensearch_server.url)
    search.wait_count(topic, 30, worker, "elasticsearch-sink")
    assert search.docs(topic)["id7"]["customer"] == "c-0"
    unload = connector_cli("--url", worker.url, "unload", "elasticsearch-sink")
    assert unload.returncode == 0, unload.stdout + unload.stderr


def connect_order(i: int, schema: Schema) -> Struct:
    value = Struct(schema)
    for name, field_value in order(i).items():
        if name == "at":
            field_value = dt.datetime.fromtimestamp(field_value / 1000, dt.UTC)
        value.put(name, field_value)
    return value


def mixed_sink_records(topic: str) -> list[SinkRecord]:
    """Two partitions' records, keys repeating (later offsets win), and among them a null key,
    a tombstone, a value the index mapping refuses, a value without a schema and an integer key."""
    schema = JsonConverter().as_connect_schema(ORDER_SCHEMA)
    wrong = JsonConverter().as_connect_schema(
        {**ORDER_SCHEMA, "fields": [{"field": "amount", "type": "string", "optional": False}]}
    )
    assert schema is not None and wrong is not None
    records = []
    for offset in range(20):
        for partition in range(2):
            i = offset * 2 + partition
            key_schema: Schema | None = Schema.STRING_SCHEMA
            key: Any = f"order-{i % 25}"
            value_schema: Schema | None = schema
            value: Any = connect_order(i, schema)
            if i == 5:
                key = None
            elif i == 33:
                value = None  # deletes order-8, written at offset 4
            elif i == 9:
                value_schema, value = wrong, Struct(wrong).put("amount", "lots")
            elif i == 11:
                value_schema, value = None, {"id": i, "note": "schemaless"}
            elif i == 13:
                key_schema, key = Schema.INT64_SCHEMA, 13
            records.append(SinkRecord(topic, partition, key_schema, key, value_schema, value, offset, 1_000 + i))
    return records


def test_the_batch_path_writes_the_documents_the_record_path_writes(search, unique_name):
    found = {}
    for path in ("records", "batches"):
        topic = f"{unique_name}-{path}"
        reporter = RecordingReporter()
        task = ElasticsearchSinkTask()
        task.initialize(RecordingSinkContext(reporter))
        task.start(
            {
                "name": unique_name,
                "connection.url": search.url,
                "behavior.on.null.values": "delete",
                "behavior.on.malformed.documents": "warn",
                "flush.synchronously": "true",
                "batch.size": "7",
            }
        )
        put_in_chunks(task, mixed_sink_records(topic), 9, as_batches=path == "batches")
        committed = task.pre_commit({TopicPartition(topic, p): 20 for p in range(2)})
        task.stop()
        assert committed == {TopicPartition(topic, p): 20 for p in range(2)}
        index = topic.lower()
        reported = [(r.kafka_partition, r.kafka_offset, str(e).replace(index, "INDEX")) for r, e in reporter.reported]
        found[path] = (search.docs(index), reported)
    docs, reported = found["records"]
    assert found["batches"] == (docs, reported)
    assert len(docs) == 25 and "order-8" not in docs and "13" in docs  # 25 string keys, one deleted; an int key
    assert [(p, o) for p, o, _ in reported] == [(1, 2), (1, 4)]  # the null key, the refused value
    assert "can not be null" in reported[0][2] and PARSING_ERROR.search(reported[1][2])
