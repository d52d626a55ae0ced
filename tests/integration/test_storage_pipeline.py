"""The S3 and HDFS sinks end to end: a real Kafka broker, a `sluice standalone` worker with
Spark, s3proxy and HDFS. The predefined `s3-sink`/`hdfs-sink` load with
`sluice connector load`; records of a 3-partition topic land exactly once, also when the
worker is SIGKILLed twice mid-stream; a missing bucket is a FAILED task with its reason."""

from __future__ import annotations

import datetime as dt
import io
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests import http_client
from tests.helpers import wait_until
from tests.integration.test_storage_sinks import (
    FORMATS,
    NAME,
    PARTITIONERS,
    HdfsReader,
    S3Reader,
    assert_same_values,
    committed_records,
    event,
    record_time,
    seq_of,
)
from tests.integration.workers import StandaloneWorker, connector_cli

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("storage")]

PARTITIONS = 3
SCHEMA = {
    "type": "struct",
    "name": "com.example.Reading",
    "optional": False,
    "fields": [
        {"field": "seq", "type": "int64", "optional": False},
        {"field": "sensor", "type": "string", "optional": False},
        {"field": "value", "type": "double", "optional": True},
    ],
}


def envelope(seq: int) -> bytes:
    payload = {"seq": seq, "sensor": f"s-{seq % 17}", "value": None if seq % 10 == 0 else seq / 4}
    return json.dumps({"schema": SCHEMA, "payload": payload}).encode()


def create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)


def produce(bootstrap: str, topic: str, seqs: range) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1_000_000})
    for seq in seqs:
        while True:
            try:
                producer.produce(topic, value=envelope(seq), partition=seq % PARTITIONS)
                break
            except BufferError:
                producer.poll(0.1)
    assert producer.flush(120) == 0


def parquet_rows(files: dict[str, bytes], topic: str) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    rows = []
    for path, data in files.items():
        parts = path.split("/")
        assert parts[1] == topic and NAME.match(parts[-1]), path
        rows.extend(pq.read_table(io.BytesIO(data)).to_pylist())
    return rows


def avro_rows(files: dict[str, bytes], topic: str) -> list[dict[str, Any]]:
    import fastavro

    rows = []
    for path, data in files.items():
        parts = path.split("/")
        assert parts[1] == topic and NAME.match(parts[-1]), path
        rows.extend(fastavro.reader(io.BytesIO(data)))
    return rows


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneWorker]:
    w = StandaloneWorker(tmp_path_factory.mktemp("storage"), kafka_bootstrap, "storage")
    w.start()
    yield w
    assert w.stop() == 0, w.log()


# The Connect schema of tests.integration.test_storage_sinks.EVENT, as JsonConverter writes it.
EVENT_JSON_SCHEMA = {
    "type": "struct",
    "name": "com.example.Event",
    "version": 1,
    "optional": False,
    "fields": [
        {"field": "seq", "type": "int64", "optional": False},
        {"field": "partition", "type": "int32", "optional": False},
        {"field": "region", "type": "string", "optional": False},
        {"field": "amount", "type": "double", "optional": True},
        {"field": "at", "type": "int64", "optional": False, "name": "org.apache.kafka.connect.data.Timestamp",
         "version": 1},
        {"field": "tags", "type": "array", "optional": False, "items": {"type": "string", "optional": False}},
    ],
}  # fmt: skip
MATRIX_PER_PARTITION = 12
MATRIX_FLUSH_SIZE = 4


def event_envelope(partition: int, offset: int) -> bytes:
    value = event("t", partition, offset).value
    payload = {
        "seq": offset,
        "partition": partition,
        "region": value.get("region"),
        "amount": value.get("amount"),
        "at": record_time(offset),
        "tags": value.get("tags"),
    }
    return json.dumps({"schema": EVENT_JSON_SCHEMA, "payload": payload}).encode()


def test_every_format_and_partitioner_through_kafka(worker, s3_server, hdfs_cluster, kafka_bootstrap, unique_name):
    """One connector per store, format and partitioner, all reading one 3-partition topic:
    every record lands once, in the directory its partitioner names, in a file named after
    its first record, with the values produced."""
    topic = f"{unique_name}-matrix"
    create_topic(kafka_bootstrap, topic)
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for offset in range(MATRIX_PER_PARTITION):
        for partition in range(PARTITIONS):
            value = event_envelope(partition, offset)
            producer.produce(topic, value=value, partition=partition, timestamp=record_time(offset))
    assert producer.flush(60) == 0
    bucket = f"matrix-{uuid.uuid4().hex[:10]}"
    s3_server.create_bucket(bucket)
    root = f"/matrix-{uuid.uuid4().hex[:8]}"
    stores = {
        "s3": ({"connector.class": "io.confluent.connect.s3.S3SinkConnector", **s3_settings(s3_server, bucket)},
               S3Reader(s3_server, bucket)),
        "hdfs": ({"connector.class": "io.confluent.connect.hdfs.HdfsSinkConnector",
                  "hdfs.url": hdfs_cluster.webhdfs_url + root}, HdfsReader(hdfs_cluster, root)),
    }  # fmt: skip
    raw_converters = {"bytearray": "org.apache.kafka.connect.converters.ByteArrayConverter",
                      "string": "org.apache.kafka.connect.storage.StringConverter"}  # fmt: skip
    cases = []
    for kind, (settings, reader) in stores.items():
        for fmt, format_class in FORMATS[kind].items():
            for partitioner, partitioner_settings in PARTITIONERS.items():
                if fmt in raw_converters and partitioner == "field":
                    continue  # FieldPartitioner needs structured values
                name = f"{unique_name[:40]}-{kind}-{fmt}-{partitioner}"
                topics_dir = f"m/{fmt}-{partitioner}"
                config = {
                    **settings,
                    **partitioner_settings,
                    "topics": topic,
                    "topics.dir": topics_dir,
                    "format.class": format_class,
                    "flush.size": str(MATRIX_FLUSH_SIZE),
                    "tasks.max": "1",
                }
                if kind == "hdfs":  # each sink of a topic needs its own write-ahead logs, as with Confluent's
                    config["logs.dir"] = f"logs/{fmt}-{partitioner}"
                if fmt in raw_converters:
                    config["value.converter"] = raw_converters[fmt]
                r = http_client.post(f"{worker.url}/connectors", json={"name": name, "config": config}, timeout=30)
                assert r.status_code == 201, r.text
                cases.append((name, kind, fmt, partitioner, topics_dir, reader))
    total = PARTITIONS * MATRIX_PER_PARTITION
    try:
        for name, kind, fmt, partitioner, topics_dir, reader in cases:
            prefix = topics_dir + ("/" if kind == "s3" else "")

            def complete(reader=reader, fmt=fmt, topics_dir=topics_dir, prefix=prefix):
                found = committed_records(reader.files(prefix), fmt, topic, topics_dir)
                return found if len(found) >= total else None

            found = wait_until(
                complete,
                timeout=180,
                message=lambda name=name, reader=reader, prefix=prefix: (
                    f"{worker.get(f'/connectors/{name}/status').text}; files: {sorted(reader.names(prefix))}"
                ),
            )
            check_matrix_case(kind, fmt, partitioner, found)
    finally:
        for name, *_ in cases:
            http_client.delete(f"{worker.url}/connectors/{name}", timeout=60)


def check_matrix_case(kind: str, fmt: str, partitioner: str, found: list[tuple[str, dict[str, str], Any]]) -> None:
    seen = sorted(seq_of(record) for _, _, record in found)
    assert seen == sorted((p, o) for p in range(PARTITIONS) for o in range(MATRIX_PER_PARTITION)), (kind, fmt)
    by_file: dict[tuple[str, int, str], list[int]] = {}
    for directory, name, record in found:
        partition, offset = seq_of(record)
        assert int(name["partition"]) == partition
        by_file.setdefault((directory, partition, name["start"]), []).append(offset)
        source = event("t", partition, offset)
        expected_dir = {
            "default": f"partition={partition}",
            "field": f"region={source.value.get('region')}",
            "time": dt.datetime.fromtimestamp(record_time(offset) / 1000, dt.UTC).strftime(
                "year=%Y/month=%m/day=%d/hour=%H"
            ),
        }[partitioner]
        assert directory == expected_dir, (kind, fmt, partitioner)
        extensions = {"avro": ".avro", "parquet": ".snappy.parquet" if kind == "s3" else ".parquet",
                      "json": ".json", "bytearray": ".bin", "string": ".txt"}  # fmt: skip
        assert name["ext"] == extensions[fmt]
        assert (name["end"] is not None) == (kind == "hdfs")
        if fmt in ("avro", "parquet", "json"):
            assert_same_values(fmt, record, source.value)
        else:
            assert record.encode() == event_envelope(partition, offset)
    for (_, _, start), offsets in by_file.items():
        assert min(offsets) == int(start)  # named after its first record
        assert len(offsets) <= MATRIX_FLUSH_SIZE


def s3_settings(server: Any, bucket: str) -> dict[str, str]:
    return {
        "s3.bucket.name": bucket,
        "store.url": server.endpoint_url,
        "aws.access.key.id": server.access_key,
        "aws.secret.access.key": server.secret_key,
    }


def sets(settings: dict[str, str]) -> list[str]:
    return [arg for key, value in settings.items() for arg in ("--set", f"{key}={value}")]


def expected(seqs: range) -> list[dict[str, Any]]:
    return [{"seq": s, "sensor": f"s-{s % 17}", "value": None if s % 10 == 0 else s / 4} for s in seqs]


def test_predefined_s3_sink_loads_and_writes_parquet(worker, s3_server, kafka_bootstrap, unique_name):
    bucket = f"pipeline-{uuid.uuid4().hex[:10]}"
    s3_server.create_bucket(bucket)
    topic = f"{unique_name}-s3"
    create_topic(kafka_bootstrap, topic)
    settings = {**s3_settings(s3_server, bucket), "topics": topic, "flush.size": "100", "tasks.max": "3"}
    result = connector_cli("--url", worker.url, "load", "s3-sink", *sets(settings), "--wait", "--timeout", "90")
    assert result.returncode == 0, result.stdout + result.stderr
    produce(kafka_bootstrap, topic, range(900))
    reader = S3Reader(s3_server, bucket)
    rows = wait_until(
        lambda: (r := parquet_rows(reader.files(f"topics/{topic}/"), topic)) and len(r) >= 900 and r,
        timeout=120,
        message=lambda: f"900 records in parquet objects; {worker.get('/connectors/s3-sink/status').text}",
    )
    assert sorted(rows, key=lambda r: r["seq"]) == expected(range(900))
    assert connector_cli("--url", worker.url, "unload", "s3-sink").returncode == 0


def test_predefined_hdfs_sink_loads_and_writes_avro(worker, hdfs_cluster, kafka_bootstrap, unique_name):
    topic = f"{unique_name}-hdfs"
    root = f"/pipeline-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_bootstrap, topic)
    settings = {"hdfs.url": hdfs_cluster.webhdfs_url + root, "topics": topic, "flush.size": "50", "tasks.max": "2"}
    result = connector_cli("--url", worker.url, "load", "hdfs-sink", *sets(settings), "--wait", "--timeout", "90")
    assert result.returncode == 0, result.stdout + result.stderr
    produce(kafka_bootstrap, topic, range(300))
    reader = HdfsReader(hdfs_cluster, root)
    rows = wait_until(
        lambda: (r := avro_rows(reader.files(f"topics/{topic}"), topic)) and len(r) >= 300 and r,
        timeout=120,
        message=lambda: f"300 records in avro files; {worker.get('/connectors/hdfs-sink/status').text}",
    )
    assert sorted(rows, key=lambda r: r["seq"]) == expected(range(300))
    assert connector_cli("--url", worker.url, "unload", "hdfs-sink").returncode == 0


def test_a_missing_bucket_is_a_failed_task_with_the_reason(worker, s3_server, unique_name):
    name = f"{unique_name}-nobucket"
    config = {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "topics": f"{unique_name}-none",
        "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
        "flush.size": "10",
        **s3_settings(s3_server, f"absent-{uuid.uuid4().hex[:8]}"),
    }
    r = http_client.post(f"{worker.url}/connectors", json={"name": name, "config": config}, timeout=30)
    assert r.status_code == 201, r.text

    def failed_task() -> dict[str, Any] | None:
        tasks = worker.get(f"/connectors/{name}/status").json().get("tasks", [])
        return tasks[0] if tasks and tasks[0]["state"] == "FAILED" else None

    task = wait_until(failed_task, timeout=90, message=lambda: worker.get(f"/connectors/{name}/status").text)
    assert "Non-existent S3 bucket" in task["trace"]
    http_client.delete(f"{worker.url}/connectors/{name}", timeout=60)


@pytest.mark.parametrize("kind", ["hdfs", "s3"])
def test_two_sigkills_mid_stream_leave_every_record_in_exactly_one_file(
    kind, request, kafka_bootstrap, unique_name, tmp_path
):
    total, flush_size = 120_000, 5_000  # 40,000 records per partition: whole files only
    topic = f"{unique_name}-crash"
    create_topic(kafka_bootstrap, topic)
    produce(kafka_bootstrap, topic, range(total))
    if kind == "hdfs":
        cluster = request.getfixturevalue("hdfs_cluster")
        root = f"/crash-{uuid.uuid4().hex[:8]}"
        reader: Any = HdfsReader(cluster, root)
        settings = {
            "connector.class": "io.confluent.connect.hdfs.HdfsSinkConnector",
            "hdfs.url": cluster.webhdfs_url + root,
            "format.class": "io.confluent.connect.hdfs.parquet.ParquetFormat",
        }
        prefix = f"topics/{topic}"
    else:
        server = request.getfixturevalue("s3_server")
        bucket = f"crash-{uuid.uuid4().hex[:10]}"
        server.create_bucket(bucket)
        reader = S3Reader(server, bucket)
        settings = {
            "connector.class": "io.confluent.connect.s3.S3SinkConnector",
            "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
            **s3_settings(server, bucket),
        }
        prefix = f"topics/{topic}/"
    config = {**settings, "topics": topic, "tasks.max": "3", "flush.size": str(flush_size)}
    name = f"{unique_name}-sink"
    # Small puts, so that the load takes long enough for the kills to land inside it.
    extra = {"sluice.sink.batch.max.records": "500"}

    def committed_files() -> int:
        return len(reader.names(prefix))

    kills_at = []
    for run in range(3):
        w = StandaloneWorker(tmp_path / "w", kafka_bootstrap, "w", extra=extra)
        w.start()
        try:
            if run == 0:
                r = http_client.post(f"{w.url}/connectors", json={"name": name, "config": config}, timeout=30)
                assert r.status_code == 201, r.text
            if run < 2:
                floor = (kills_at[-1] if kills_at else 0) + 3
                kills_at.append(
                    wait_until(
                        lambda f=floor: (n := committed_files()) >= f and n,
                        timeout=240,
                        message=lambda w=w: w.get(f"/connectors/{name}/status").text,
                    )
                )
                w.kill()  # SIGKILL mid-stream
                assert kills_at[-1] < total // flush_size, "the load finished before the kill: make it longer"
            else:
                wait_until(
                    lambda: committed_files() >= total // flush_size,
                    timeout=300,
                    message=lambda w=w: f"{committed_files()} files; {w.get(f'/connectors/{name}/status').text}",
                )
                rows = parquet_rows(reader.files(prefix), topic)
                assert sorted(row["seq"] for row in rows) == list(range(total))  # each exactly once
                assert w.stop() == 0, w.log()
        finally:
            w.kill()
    if kind == "hdfs":
        leftovers = [p for p in reader.paths("topics/+tmp") if "_tmp" in p]
        assert leftovers == []  # recovery deleted what the killed tasks left half done


def test_schemaless_records_for_parquet_go_to_the_dead_letter_queue_or_fail_the_task(
    worker, s3_server, kafka_bootstrap, unique_name
):
    """A value Parquet cannot hold (no schema) is never half-written: with errors.tolerance=all
    it is dead-lettered; with none the task fails saying why."""
    from tests.helpers import read_topic

    bucket = f"schemaless-{uuid.uuid4().hex[:10]}"
    s3_server.create_bucket(bucket)
    topic = f"{unique_name}-plain"
    create_topic(kafka_bootstrap, topic)
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for seq in range(30):
        producer.produce(topic, value=json.dumps({"seq": seq}).encode(), partition=0)
    assert producer.flush(60) == 0
    base = {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
        "topics": topic,
        "flush.size": "10",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        **s3_settings(s3_server, bucket),
    }
    dlq = f"{unique_name}-dlq"
    tolerant = {
        **base,
        "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
    }
    name = f"{unique_name}-tolerant"
    r = http_client.post(f"{worker.url}/connectors", json={"name": name, "config": tolerant}, timeout=30)
    assert r.status_code == 201, r.text
    dead = read_topic(kafka_bootstrap, dlq, 30)
    assert sorted(json.loads(m.value())["seq"] for m in dead) == list(range(30))
    assert S3Reader(s3_server, bucket).names() == []  # nothing half-written
    http_client.delete(f"{worker.url}/connectors/{name}", timeout=60)

    strict = f"{unique_name}-strict"
    r = http_client.post(f"{worker.url}/connectors", json={"name": strict, "config": base}, timeout=30)
    assert r.status_code == 201, r.text

    def failed_task() -> dict[str, Any] | None:
        tasks = worker.get(f"/connectors/{strict}/status").json().get("tasks", [])
        return tasks[0] if tasks and tasks[0]["state"] == "FAILED" else None

    task = wait_until(failed_task, timeout=90, message=lambda: worker.get(f"/connectors/{strict}/status").text)
    assert "Parquet files hold Struct values" in task["trace"]
    assert S3Reader(s3_server, bucket).names() == []
    http_client.delete(f"{worker.url}/connectors/{strict}", timeout=60)
