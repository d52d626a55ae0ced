"""Acceptance: a running pipeline's ``GET /metrics``, read with Prometheus' own parser as a
dashboard would — source poll and sink read rates and totals matching the records moved,
offset commit timings and shares, records in flight back to 0 once all is committed,
error totals matching a dead letter queue run, task status gauges and running / pause
ratios following pause and resume."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests import http_client
from tests.helpers import read_topic, wait_until
from tests.integration.workers import StandaloneWorker

pytestmark = pytest.mark.integration

STRING = "org.apache.kafka.connect.storage.StringConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneWorker]:
    w = StandaloneWorker(
        tmp_path_factory.mktemp("metrics"), kafka_bootstrap, "metrics", {"offset.flush.interval.ms": "500"}
    )
    w.start()
    yield w
    assert w.stop() == 0, w.log()


def scrape(worker: StandaloneWorker) -> Samples:
    response = http_client.get(worker.url + "/metrics", timeout=10)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, frozenset(labels.items())))


def number(samples: Samples, name: str, **labels: str) -> float:
    """A sample that must be there and be a number (not NaN: something was measured)."""
    found = value(samples, name, **labels)
    assert found is not None, f"{name} {labels} not served"
    assert not math.isnan(found), f"{name} {labels} is NaN"
    return found


def _create(worker: StandaloneWorker, name: str, config: dict[str, str]) -> None:
    r = http_client.put(f"{worker.url}/connectors/{name}/config", json=config, timeout=60)
    assert r.status_code in (200, 201), r.text


def test_a_pipelines_rates_totals_and_status_gauges(worker: StandaloneWorker, tmp_path: Path, unique_name: str) -> None:
    lines = 500
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    source_file.write_text("".join(f"line {i}\n" for i in range(lines)))
    topic, source, sink = f"{unique_name}-t", f"{unique_name}-src", f"{unique_name}-sink"
    common = {"key.converter": STRING, "value.converter": STRING, "tasks.max": "1"}
    _create(worker, source, {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic, **common})
    _create(worker, sink, {"connector.class": "FileStreamSink", "file": str(sink_file), "topics": topic, **common})
    wait_until(
        lambda: sink_file.exists() and len(sink_file.read_text().splitlines()) == lines,
        timeout=180,
        message=lambda: worker.get(f"/connectors/{sink}/status").text,
    )
    src = {"connector": source, "task": "0"}
    snk = {"connector": sink, "task": "0"}

    def moved() -> Samples | None:
        samples = scrape(worker)
        done = (
            value(samples, "kafka_connect_source_task_source_record_poll_total", **src) == lines
            and value(samples, "kafka_connect_source_task_source_record_write_total", **src) == lines
            and value(samples, "kafka_connect_sink_task_sink_record_read_total", **snk) == lines
            and value(samples, "kafka_connect_sink_task_sink_record_send_total", **snk) == lines
        )
        return samples if done else None

    samples = wait_until(moved, timeout=30, message=lambda: http_client.get(worker.url + "/metrics").text[-3000:])
    # rates over the window the records moved in
    assert (value(samples, "kafka_connect_source_task_source_record_poll_rate", **src) or 0) > 0
    assert (value(samples, "kafka_connect_sink_task_sink_record_read_rate", **snk) or 0) > 0
    assert (value(samples, "kafka_connect_sink_task_put_batch_avg_time_ms", **snk) or -1) >= 0
    assert value(samples, "kafka_connect_sink_task_partition_count", **snk) == 1
    assert (value(samples, "kafka_connect_connector_task_batch_size_max", **src) or 0) >= 1
    assert value(samples, "kafka_connect_connector_status", connector=source, status="running") == 1
    assert value(samples, "kafka_connect_worker_connector_running_task_count", connector=source) == 1
    assert (value(samples, "kafka_connect_worker_connector_count") or 0) >= 2
    assert value(samples, "kafka_connect_task_error_total_record_errors", **snk) == 0
    for kind in ("connector", "task"):
        for outcome in ("success", "failure"):
            share = number(samples, f"kafka_connect_worker_{kind}_startup_{outcome}_percentage")
            assert 0 <= share <= 1

    # a second burst, so that the windowed values (over the last minute) cover fresh work
    # of both tasks, then everything acknowledged and committed
    more = 50
    with source_file.open("a") as out:
        out.write("".join(f"more {i}\n" for i in range(more)))

    def settled() -> Samples | None:
        samples = scrape(worker)
        commit_time = value(samples, "kafka_connect_connector_task_offset_commit_avg_time_ms", **src)
        done = (
            value(samples, "kafka_connect_source_task_source_record_write_total", **src) == lines + more
            and value(samples, "kafka_connect_sink_task_sink_record_read_total", **snk) == lines + more
            and value(samples, "kafka_connect_source_task_source_record_active_count", **src) == 0
            and value(samples, "kafka_connect_sink_task_sink_record_active_count", **snk) == 0
            and commit_time is not None
            and not math.isnan(commit_time)  # the source committed the burst's offsets
        )
        return samples if done else None

    samples = wait_until(settled, timeout=60, message=lambda: http_client.get(worker.url + "/metrics").text[-3000:])
    for task in (src, snk):
        # only commits that succeeded, timed; a task that has only run so far
        assert number(samples, "kafka_connect_connector_task_offset_commit_success_percentage", **task) == 1.0
        assert number(samples, "kafka_connect_connector_task_offset_commit_failure_percentage", **task) == 0.0
        average = number(samples, "kafka_connect_connector_task_offset_commit_avg_time_ms", **task)
        assert 0 <= average <= number(samples, "kafka_connect_connector_task_offset_commit_max_time_ms", **task)
        assert number(samples, "kafka_connect_connector_task_running_ratio", **task) > 0
        assert number(samples, "kafka_connect_connector_task_pause_ratio", **task) == 0
    average = number(samples, "kafka_connect_source_task_poll_batch_avg_time_ms", **src)
    assert 0 <= average <= number(samples, "kafka_connect_source_task_poll_batch_max_time_ms", **src)
    assert number(samples, "kafka_connect_source_task_source_record_active_count_max", **src) >= 0
    assert number(samples, "kafka_connect_source_task_source_record_active_count_avg", **src) >= 0
    average = number(samples, "kafka_connect_sink_task_put_batch_avg_time_ms", **snk)
    assert 0 <= average <= number(samples, "kafka_connect_sink_task_put_batch_max_time_ms", **snk)
    # the burst was read before it was committed: in flight for a while
    assert number(samples, "kafka_connect_sink_task_sink_record_active_count_max", **snk) >= 1
    assert number(samples, "kafka_connect_sink_task_sink_record_active_count_avg", **snk) >= 0
    completed = number(samples, "kafka_connect_sink_task_offset_commit_completion_total", **snk)
    assert completed >= 2  # the first 500 records and the burst
    assert number(samples, "kafka_connect_sink_task_offset_commit_seq_no", **snk) >= completed
    assert number(samples, "kafka_connect_sink_task_offset_commit_skip_total", **snk) == 0
    assert number(samples, "kafka_connect_connector_task_batch_size_max", **snk) >= 1

    # the console's throughput of the pipeline: the rates of the sink's task, from /metrics
    console = http_client.get(worker.url + "/ui/connector", params={"name": sink, "part": "rates"}, timeout=30).json()
    assert console["exposed"] is True
    [task] = console["tasks"]
    assert task["task"] == 0 and task["kind"] == "sink" and task["records_in"] > 0 and task["lag"] == 0

    def task_status(status: str) -> bool:
        return value(scrape(worker), "kafka_connect_connector_task_status", **src, status=status) == 1

    def ratios() -> tuple[float, float]:
        samples = scrape(worker)
        return (
            number(samples, "kafka_connect_connector_task_running_ratio", **src),
            number(samples, "kafka_connect_connector_task_pause_ratio", **src),
        )

    assert task_status("running")
    running_before, _ = ratios()
    assert http_client.put(f"{worker.url}/connectors/{source}/pause", timeout=30).status_code == 202
    wait_until(lambda: task_status("paused"), timeout=60, message="the status gauge to say paused")
    assert not task_status("running")
    # paused: the share of time paused rises from 0, the share running falls
    wait_until(lambda: ratios()[1] > 0 and ratios()[0] < running_before, timeout=30, message=lambda: str(ratios()))
    paused_running, paused_share = ratios()
    assert http_client.put(f"{worker.url}/connectors/{source}/resume", timeout=30).status_code == 202
    wait_until(lambda: task_status("running"), timeout=60, message="the status gauge to say running again")
    # running again: the share running rises, the share paused falls
    wait_until(
        lambda: ratios()[0] > paused_running and ratios()[1] < paused_share, timeout=30, message=lambda: str(ratios())
    )
    for name in (source, sink):
        http_client.delete(f"{worker.url}/connectors/{name}", timeout=30)


def test_error_totals_match_a_dead_letter_queue_run(
    worker: StandaloneWorker, kafka_bootstrap: str, tmp_path: Path, unique_name: str
) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    topic, dlq = f"{unique_name}-in", f"{unique_name}-dlq"
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    _create(
        worker,
        unique_name,
        {
            "connector.class": "sluice_test_plugins.RecordingSinkConnector",
            "topics": topic,
            "record.file": str(tmp_path / "records.jsonl"),
            "key.converter": STRING,
            "value.converter": JSON,
            "value.converter.schemas.enable": "false",
            "errors.tolerance": "all",
            "errors.log.enable": "true",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
        },
    )
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for i in range(10):
        producer.produce(topic, value=b"not json" if i % 3 == 0 else b'{"n": %d}' % i)
    assert producer.flush(30) == 0
    assert len(read_topic(kafka_bootstrap, dlq, 4)) == 4  # offsets 0, 3, 6 and 9
    labels = {"connector": unique_name, "task": "0"}

    def counted() -> Samples | None:
        samples = scrape(worker)
        done = value(samples, "kafka_connect_task_error_deadletterqueue_produce_requests", **labels) == 4
        return samples if done else None

    samples = wait_until(counted, timeout=30, message=lambda: http_client.get(worker.url + "/metrics").text[-3000:])
    assert value(samples, "kafka_connect_task_error_total_record_errors", **labels) == 4
    assert value(samples, "kafka_connect_task_error_total_record_failures", **labels) == 4
    assert value(samples, "kafka_connect_task_error_total_records_skipped", **labels) == 4
    assert value(samples, "kafka_connect_task_error_total_errors_logged", **labels) == 4
    assert value(samples, "kafka_connect_task_error_deadletterqueue_produce_failures", **labels) == 0
    assert (value(samples, "kafka_connect_task_error_last_error_timestamp", **labels) or 0) > 1.7e12
    assert value(samples, "kafka_connect_sink_task_sink_record_read_total", **labels) == 10
    assert value(samples, "kafka_connect_sink_task_sink_record_send_total", **labels) == 6
    http_client.delete(f"{worker.url}/connectors/{unique_name}", timeout=30)


def test_a_metrics_reporter_gets_the_workers_metrics(kafka_bootstrap: str, tmp_path: Path, unique_name: str) -> None:
    report = tmp_path / "metrics.jsonl"
    w = StandaloneWorker(
        tmp_path / "worker",
        kafka_bootstrap,
        "reporting",
        {
            # Kafka's JMX reporter has no Python form and is skipped; ours is loaded by path
            "metric.reporters": "org.apache.kafka.common.metrics.JmxReporter,sluice_test_plugins.FileMetricsReporter",
            "file.metrics.reporter.path": str(report),
            "file.metrics.reporter.interval.ms": "200",
        },
    )
    w.start()
    try:
        source_file = tmp_path / "in.txt"
        source_file.write_text("".join(f"line {i}\n" for i in range(20)))
        _create(
            w,
            unique_name,
            {
                "connector.class": "FileStreamSource",
                "file": str(source_file),
                "topic": unique_name,
                "value.converter": STRING,
            },
        )

        def polled() -> bool:
            if not report.exists():
                return False
            import json

            text = report.read_text()
            # the reporter may be writing its next line: only lines with their newline count
            for line in reversed(text[: text.rfind("\n") + 1].splitlines()):
                rows = json.loads(line)
                if isinstance(rows, list):
                    return any(
                        r["group"] == "source-task-metrics"
                        and r["name"] == "source-record-poll-total"
                        and r["tags"] == {"connector": unique_name, "task": "0"}
                        and r["value"] == 20
                        for r in rows
                    )
            return False

        wait_until(polled, timeout=120, message=lambda: report.read_text()[-2000:] if report.exists() else "no report")
    finally:
        assert w.stop() == 0, w.log()
    assert report.read_text().splitlines()[-1] == '"closed"'  # closed when the worker stopped


def test_a_reporter_that_cannot_be_loaded_stops_the_worker_from_starting(kafka_bootstrap: str, tmp_path: Path) -> None:
    w = StandaloneWorker(tmp_path, kafka_bootstrap, "bad-reporter", {"metric.reporters": "no_such_module.Reporter"})
    with pytest.raises(AssertionError, match="exited with 1"):
        w.start()
    assert "metric.reporters: cannot load no_such_module.Reporter" in w.log()
