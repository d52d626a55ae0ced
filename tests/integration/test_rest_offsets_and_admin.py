"""Acceptance on a real standalone worker: connector offsets through the REST API (source
and sink, altered and reset while STOPPED), active topics, admin listeners, CORS and
configured response headers."""

from __future__ import annotations

import httpx2
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests import http_client
from tests.helpers import wait_until
from tests.integration.workers import StandaloneWorker, free_port

pytestmark = pytest.mark.integration

STRING = "org.apache.kafka.connect.storage.StringConverter"
ORIGIN = "http://console.example"


@pytest.fixture(scope="module")
def admin_port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory, admin_port: int):
    w = StandaloneWorker(
        tmp_path_factory.mktemp("rest-offsets"),
        kafka_bootstrap,
        "worker",
        extra={
            "key.converter": STRING,
            "value.converter": STRING,
            "admin.listeners": f"http://127.0.0.1:{admin_port}",
            "access.control.allow.origin": ORIGIN,
            "access.control.allow.methods": "GET,POST,PUT,DELETE",
            "response.http.headers.config": 'set X-Frame-Options: DENY, "add Cache-Control: no-store, max-age=0"',
        },
    )
    w.start()
    yield w
    assert w.stop() == 0, w.log()


class TopicReader:
    """Reads every value of a one-partition topic from the start, as it grows."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": f"reader-{topic}", "enable.auto.commit": False}
        )
        self.consumer.assign([TopicPartition(topic, 0, 0)])
        self.values: list[str] = []

    def wait_for(self, count: int, timeout: float = 90) -> list[str]:
        def enough() -> bool:
            msg = self.consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                self.values.append(msg.value().decode())
            return len(self.values) >= count

        wait_until(enough, timeout=timeout, message=lambda: f"{count} records, have {self.values}")
        return list(self.values)

    def close(self) -> None:
        self.consumer.close()


def _put(worker: StandaloneWorker, path: str, **kw) -> httpx2.Response:
    return http_client.put(worker.url + path, timeout=30, **kw)


def _stop_and_wait(worker: StandaloneWorker, name: str) -> None:
    assert _put(worker, f"/connectors/{name}/stop").status_code == 204

    def stopped() -> bool:
        status = worker.get(f"/connectors/{name}/status").json()
        return status["connector"]["state"] == "STOPPED" and status["tasks"] == []

    wait_until(stopped, timeout=60, message=f"{name} STOPPED")


def _resume(worker: StandaloneWorker, name: str) -> None:
    assert _put(worker, f"/connectors/{name}/resume").status_code == 202


def test_source_offsets_alter_to_an_earlier_position_and_reset(worker, kafka_bootstrap, unique_name, tmp_path):
    source_file = tmp_path / "in.txt"
    lines = [f"line-{i}" for i in range(10)]  # 7 bytes each with the newline
    source_file.write_text("".join(f"{line}\n" for line in lines))
    topic = f"{unique_name}-t"
    config = {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic}
    r = _put(worker, f"/connectors/{unique_name}/config", json=config)
    assert r.status_code == 201, r.text
    reader = TopicReader(kafka_bootstrap, topic)
    try:
        assert reader.wait_for(10) == lines

        running = http_client.patch(
            f"{worker.url}/connectors/{unique_name}/offsets",
            timeout=30,
            json={"offsets": [{"partition": {"filename": str(source_file)}, "offset": {"position": 0}}]},
        )
        assert running.status_code == 400
        assert running.json()["message"] == (
            "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the "
            f"specified connector by issuing a 'PUT' request to the '/connectors/{unique_name}/stop' endpoint"
        )

        _stop_and_wait(worker, unique_name)
        r = worker.get(f"/connectors/{unique_name}/offsets")
        assert r.status_code == 200
        assert r.json() == {"offsets": [{"partition": {"filename": str(source_file)}, "offset": {"position": 70}}]}

        r = http_client.patch(
            f"{worker.url}/connectors/{unique_name}/offsets",
            timeout=30,
            json={"offsets": [{"partition": {"filename": str(source_file)}, "offset": {"position": 35}}]},
        )
        assert r.status_code == 200, r.text
        assert r.json() == {"message": "The offsets for this connector have been altered successfully"}
        assert worker.get(f"/connectors/{unique_name}/offsets").json()["offsets"][0]["offset"] == {"position": 35}

        _resume(worker, unique_name)
        assert reader.wait_for(15)[10:] == lines[5:]  # the lines after position 35, again

        _stop_and_wait(worker, unique_name)
        r = http_client.delete(f"{worker.url}/connectors/{unique_name}/offsets", timeout=30)
        assert r.status_code == 200, r.text
        assert r.json() == {"message": "The offsets for this connector have been reset successfully"}
        assert worker.get(f"/connectors/{unique_name}/offsets").json() == {"offsets": []}

        _resume(worker, unique_name)
        assert reader.wait_for(25)[15:] == lines  # read from the start
    finally:
        reader.close()

    # The topic the source wrote to is tracked; a reset forgets it.
    assert worker.get(f"/connectors/{unique_name}/topics").json() == {unique_name: {"topics": [topic]}}
    assert _put(worker, f"/connectors/{unique_name}/topics/reset").status_code == 202
    assert worker.get(f"/connectors/{unique_name}/topics").json() == {unique_name: {"topics": []}}


def test_sink_offsets_are_the_consumer_group_and_can_be_altered_and_reset(
    worker, kafka_bootstrap, unique_name, tmp_path
):
    topic = f"{unique_name}-t"
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for i in range(5):
        producer.produce(topic, f"v{i}".encode())
    assert producer.flush(30) == 0
    del producer
    out = tmp_path / "out.txt"
    config = {"connector.class": "FileStreamSink", "file": str(out), "topics": topic}
    assert _put(worker, f"/connectors/{unique_name}/config", json=config).status_code == 201

    def sink_lines(count: int) -> list[str]:
        return wait_until(
            lambda: (lines := out.read_text().splitlines() if out.exists() else []) and len(lines) >= count and lines,
            timeout=90,
            message=f"{count} lines in the sink file",
        )

    assert sink_lines(5) == [f"v{i}" for i in range(5)]
    partition = {"kafka_topic": topic, "kafka_partition": 0}
    committed = {"offsets": [{"partition": partition, "offset": {"kafka_offset": 5}}]}
    wait_until(
        lambda: worker.get(f"/connectors/{unique_name}/offsets").json() == committed,
        timeout=60,
        message=lambda: f"sink offsets committed: {worker.get(f'/connectors/{unique_name}/offsets').text}",
    )
    assert worker.get(f"/connectors/{unique_name}/topics").json() == {unique_name: {"topics": [topic]}}

    _stop_and_wait(worker, unique_name)
    bad = http_client.patch(
        f"{worker.url}/connectors/{unique_name}/offsets",
        timeout=30,
        json={"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": "x"}, "offset": None}]},
    )
    assert (
        bad.status_code == 400 and "Partition values for sink connectors need to be integers" in bad.json()["message"]
    )

    r = http_client.patch(
        f"{worker.url}/connectors/{unique_name}/offsets",
        timeout=30,
        json={"offsets": [{"partition": partition, "offset": {"kafka_offset": 2}}]},
    )
    assert r.status_code == 200, r.text
    assert r.json() == {"message": "The offsets for this connector have been altered successfully"}
    assert worker.get(f"/connectors/{unique_name}/offsets").json()["offsets"][0]["offset"] == {"kafka_offset": 2}
    _resume(worker, unique_name)
    assert sink_lines(8)[5:] == ["v2", "v3", "v4"]

    _stop_and_wait(worker, unique_name)
    r = http_client.delete(f"{worker.url}/connectors/{unique_name}/offsets", timeout=30)
    assert r.status_code == 200, r.text
    assert r.json()["message"] == "The offsets for this connector have been reset successfully"
    assert worker.get(f"/connectors/{unique_name}/offsets").json() == {"offsets": []}
    _resume(worker, unique_name)
    assert sink_lines(13)[8:] == [f"v{i}" for i in range(5)]


def test_offsets_of_an_unknown_connector(worker):
    r = worker.get("/connectors/nope/offsets")
    assert r.status_code == 404 and r.json() == {"error_code": 404, "message": "Connector nope not found"}
    r = http_client.delete(f"{worker.url}/connectors/nope/offsets", timeout=30)
    assert r.status_code == 404


def test_admin_endpoints_only_on_the_admin_listener(worker, admin_port):
    assert worker.get("/admin/loggers").status_code == 404
    admin = f"http://127.0.0.1:{admin_port}"
    r = http_client.get(f"{admin}/admin/loggers", timeout=10)
    assert r.status_code == 200 and "root" in r.json()
    r = http_client.put(f"{admin}/admin/loggers/sluice.runtime", json={"level": "DEBUG"}, timeout=10)
    assert r.status_code == 200 and "sluice.runtime" in r.json() and "sluice.runtime.worker" in r.json()
    assert http_client.get(f"{admin}/admin/loggers/sluice.runtime.worker", timeout=10).json()["level"] == "DEBUG"
    r = http_client.put(f"{admin}/admin/loggers/sluice.runtime", json={"level": "INFO"}, timeout=10)
    assert r.status_code == 200
    assert http_client.get(f"{admin}/connectors", timeout=10).status_code == 404


def test_cors_and_configured_response_headers(worker):
    r = http_client.get(f"{worker.url}/connectors", headers={"Origin": ORIGIN}, timeout=10)
    assert r.status_code == 200
    assert r.headers["access-control-allow-origin"] == ORIGIN
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["cache-control"] == "no-store, max-age=0"
    preflight = http_client.options(
        f"{worker.url}/connectors/x/config",
        timeout=10,
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": "PUT",
            "Access-Control-Request-Headers": "Content-Type",
        },
    )
    assert preflight.status_code == 200
    assert "PUT" in preflight.headers["access-control-allow-methods"]
    other = http_client.get(f"{worker.url}/connectors", headers={"Origin": "http://elsewhere.example"}, timeout=10)
    assert "access-control-allow-origin" not in other.headers


def test_a_sinks_topic_is_active_as_soon_as_it_has_a_record_before_put_returns(
    worker, kafka_bootstrap, unique_name, tmp_path
):
    topic, records, hold = f"{unique_name}-t", tmp_path / "records.jsonl", tmp_path / "hold"
    config = {
        "connector.class": "sluice_test_plugins.RecordingSinkConnector",
        "topics": topic,
        "record.file": str(records),
        "hold.file": str(hold),
    }
    assert _put(worker, f"/connectors/{unique_name}/config", json=config).status_code == 201
    wait_until(lambda: worker.task_state(unique_name) == "RUNNING", timeout=90, message="sink task RUNNING")
    assert worker.get(f"/connectors/{unique_name}/topics").json() == {unique_name: {"topics": []}}

    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    producer.produce(topic, b"first")
    assert producer.flush(30) == 0
    # put() holds the record until the hold file exists: the topic is active meanwhile.
    wait_until(
        lambda: worker.get(f"/connectors/{unique_name}/topics").json() == {unique_name: {"topics": [topic]}},
        timeout=60,
        message=lambda: worker.get(f"/connectors/{unique_name}/topics").text,
    )
    assert not records.exists() or records.read_text() == ""
    hold.touch()
    wait_until(lambda: records.exists() and '"first"' in records.read_text(), timeout=60, message="record written")
    assert http_client.delete(f"{worker.url}/connectors/{unique_name}", timeout=60).status_code == 204
