"""Acceptance (issue 5, item 8): a worker's tasks run on a shared Spark cluster.

A Spark standalone master and worker are started from the installed PySpark
(``sluice_devtools.spark_cluster``); Sluice workers — standalone, then distributed — get
``spark.master=spark://127.0.0.1:<port>``. A Python source task reports, in every value,
the id of the Spark executor whose Python worker ran ``poll()``; those values must name
one of the cluster's executors (never ``driver``) and the same Spark stage (one long-lived
Spark task runs the Connect task), and a FileStreamSink task, also on the cluster, must
write them all to its file.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from sluice_devtools.jars import kafka_connect_classpath
from sluice_devtools.spark_cluster import SparkStandaloneCluster
from tests import http_client
from tests.helpers import wait_until
from tests.integration.workers import DistributedWorker, StandaloneWorker

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("storage")]

SEQUENCE = "sluice_test_plugins.SequenceSourceConnector"
COUNT = 30
VALUE = re.compile(r"seq-(\d+)@spark-stage-\d+@executor-(\S+)")


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkStandaloneCluster]:
    # 4 task slots and 1g: room for two Sluice workers' executors (2 cores, 512m each) at
    # once, so one test's application never waits for the other's to leave.
    cluster = SparkStandaloneCluster(tmp_path_factory.mktemp("spark-cluster"), cores=4, memory="1g")
    cluster.start(timeout=120)
    try:
        yield cluster
    finally:
        cluster.stop()
    assert not cluster.status().running


def _on_cluster(cluster: SparkStandaloneCluster, app_name: str) -> dict[str, str | None]:
    return {
        "spark.master": cluster.master_url,
        "spark.app.name": app_name,
        "spark.cores.max": "2",
        "spark.executor.memory": "512m",
    }


def _app(cluster: SparkStandaloneCluster, name: str) -> dict | None:
    return next((a for a in cluster.applications() if a["name"] == name), None)


def _create(url: str, name: str, config: dict[str, str]) -> None:
    def created() -> httpx2.Response | None:
        r = http_client.post(f"{url}/connectors", json={"name": name, "config": config}, timeout=60)
        return None if r.status_code == 409 else r  # a distributed worker still joining its group

    r = wait_until(created, timeout=60, message=f"connector {name} created")
    assert r.status_code == 201, r.text


def _run_pipeline_on_cluster(
    worker: StandaloneWorker, cluster: SparkStandaloneCluster, app_name: str, name: str, tmp_path: Path
) -> None:
    """Source and sink through ``worker``; both tasks' jobs run on the cluster's executors."""
    topic = f"{name}-t"
    sink_file = tmp_path / f"{name}.out"
    _create(
        worker.url,
        f"{name}-source",
        {
            "connector.class": SEQUENCE,
            "topic": topic,
            "count": str(COUNT),
            "report.spark": "true",
            "report.executor": "true",
        },
    )
    _create(
        worker.url,
        f"{name}-sink",
        {
            "connector.class": "FileStreamSink",
            "topics": topic,
            "file": str(sink_file),
        },
    )

    def sink_lines() -> list[str] | None:
        lines = sink_file.read_text().splitlines() if sink_file.exists() else []
        return lines if len(lines) >= COUNT else None

    lines = wait_until(sink_lines, timeout=90, message=lambda: f"{COUNT} lines in the sink file\n{worker.log()}")
    matches = [VALUE.fullmatch(line) for line in lines]
    assert all(matches), lines[:3]
    assert [int(m.group(1)) for m in matches] == list(range(COUNT)), "each record exactly once, in order"

    # poll() ran in a Python worker of one of the cluster's executors, not of the driver.
    app = _app(cluster, app_name)
    assert app is not None and app["state"] == "RUNNING" and app["cores"] == 2, cluster.applications()
    executors = {p.name for p in cluster.executor_dirs() if p.parent.name == app["id"]}
    reported = {m.group(2) for m in matches}
    assert executors and reported <= executors, (reported, executors)
    assert "driver" not in reported
    # one long-lived Spark task ran every poll() of the task instance: a single stage
    assert len({line.split("@")[1] for line in lines}) == 1, lines
    for task in ("source", "sink"):
        r = worker.get(f"/connectors/{name}-{task}/status").json()
        assert r["tasks"][0]["state"] == "RUNNING", r


def test_standalone_worker_runs_its_tasks_on_a_spark_standalone_cluster(
    spark_cluster, kafka_bootstrap, unique_name, tmp_path
):
    app_name = f"sluice-{unique_name}"
    worker = StandaloneWorker(tmp_path / "w", kafka_bootstrap, "on-cluster", extra=_on_cluster(spark_cluster, app_name))
    worker.start()
    try:
        _run_pipeline_on_cluster(worker, spark_cluster, app_name, unique_name, tmp_path)
    finally:
        assert worker.stop() == 0, worker.log()
    # a clean stop ends the application, which gives its cores back to the cluster
    wait_until(lambda: _app(spark_cluster, app_name) is None, timeout=30, message="application gone")


def _offsets(worker: StandaloneWorker, connector: str) -> list[dict]:
    return worker.get(f"/connectors/{connector}/offsets").json().get("offsets", [])


def test_java_tasks_run_in_a_cluster_executors_jvm_and_fail_when_it_dies(
    spark_cluster, kafka_bootstrap, unique_name, tmp_path
):
    """Kafka's Java FileStream connectors: their JVM task host is a Spark task of one of the
    cluster's executors (its pid an executor backend's), and the pipeline runs through it.
    The runtime's jars are shipped with the job; plugin.path is read on the executor's
    machine (this one). When that executor dies, both Java tasks are FAILED naming the lost
    host, as Python tasks are; restarted, they run in a new executor and, their offsets
    committed before the death, deliver the lines written since, none lost or repeated."""
    _, file_plugin_dir = kafka_connect_classpath()
    app_name = f"sluice-{unique_name}-java"
    extra = {
        **_on_cluster(spark_cluster, app_name),
        "plugin.path": str(file_plugin_dir),
        "offset.flush.interval.ms": "500",
    }
    worker = StandaloneWorker(tmp_path / "w", kafka_bootstrap, "java-on-cluster", extra=extra)
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    source_file.write_text("".join(f"line {i}\n" for i in range(300)))
    topic = f"{unique_name}-java"
    source, sink = f"{unique_name}-jsource", f"{unique_name}-jsink"
    worker.start()
    try:
        for name, config in {
            source: {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic},
            sink: {"connector.class": "FileStreamSink", "file": str(sink_file), "topics": topic},
        }.items():
            _create(worker.url, name, {**config, "connector.plugin.version": "4.3.1"})

        def pipeline_caught_up() -> bool:
            return sink_file.exists() and sink_file.read_bytes() == source_file.read_bytes()

        wait_until(
            pipeline_caught_up,
            timeout=120,
            message=lambda: f"the Java sink's file equal to the source's\n{worker.log()}",
        )
        host = re.search(r"A JVM task host is ready: pid (\d+) on", worker.log())
        assert host is not None, worker.log()
        pid = int(host.group(1))
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        assert b"CoarseGrainedExecutorBackend" in command, command
        app = _app(spark_cluster, app_name)
        assert app is not None and f"--app-id {app['id']} ".encode() in command, (app, command)
        parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        assert parent == spark_cluster.worker_pid, (parent, spark_cluster.worker_pid)  # our cluster's executor

        # a quiet moment: the source's position and the sink's consumed offset committed
        wait_until(
            lambda: (
                [o["offset"]["position"] for o in _offsets(worker, source)] == [source_file.stat().st_size]
                and [o["offset"]["kafka_offset"] for o in _offsets(worker, sink)] == [300]
            ),
            timeout=60,
            message=lambda: f"offsets committed: {_offsets(worker, source)} {_offsets(worker, sink)}",
        )
        os.kill(pid, signal.SIGKILL)
        for name in (source, sink):
            wait_until(lambda n=name: worker.task_state(n) == "FAILED", timeout=90, message=f"{name} FAILED")
            trace = worker.get(f"/connectors/{name}/tasks/0/status").json()["trace"]
            assert f"JVM task host hosting task {name}-0 (pid {pid} on" in trace, trace
            assert "ended unexpectedly" in trace, trace

        with source_file.open("a") as f:
            f.write("".join(f"line {i}\n" for i in range(300, 400)))
        for name in (source, sink):
            r = http_client.post(f"{worker.url}/connectors/{name}/tasks/0/restart", timeout=30)
            assert r.status_code == 204, r.text
        wait_until(
            pipeline_caught_up,
            timeout=120,
            message=lambda: f"the new lines delivered once after the restart\n{worker.log()}",
        )
        new_host = re.findall(r"A JVM task host is ready: pid (\d+) on", worker.log())[-1]
        assert int(new_host) != pid
    finally:
        assert worker.stop() == 0, worker.log()


def test_s3_sink_writes_parquet_from_the_clusters_executors(
    spark_cluster, s3_server, kafka_bootstrap, unique_name, tmp_path
):
    """Issue 17: a storage sink's tasks encode and upload from the cluster's executors."""
    import io
    import uuid

    import pyarrow.parquet as pq

    from tests.integration.test_storage_pipeline import create_topic, expected, produce, s3_settings
    from tests.integration.test_storage_sinks import S3Reader

    app_name = f"sluice-{unique_name}"
    worker = StandaloneWorker(
        tmp_path / "w", kafka_bootstrap, "s3-on-cluster", extra=_on_cluster(spark_cluster, app_name)
    )
    worker.start()
    bucket = f"cluster-{uuid.uuid4().hex[:10]}"
    s3_server.create_bucket(bucket)
    topic = f"{unique_name}-s3"
    create_topic(kafka_bootstrap, topic)
    try:
        _create(
            worker.url,
            f"{unique_name}-s3",
            {
                "connector.class": "io.confluent.connect.s3.S3SinkConnector",
                "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
                "topics": topic,
                "tasks.max": "2",
                "flush.size": "20",
                **s3_settings(s3_server, bucket),
            },
        )
        produce(kafka_bootstrap, topic, range(120))  # 40 per partition: whole files only
        reader = S3Reader(s3_server, bucket)

        def rows() -> list | None:
            found = [r for data in reader.files().values() for r in pq.read_table(io.BytesIO(data)).to_pylist()]
            return found if len(found) >= 120 else None

        found = wait_until(rows, timeout=120, message=lambda: worker.get(f"/connectors/{unique_name}-s3/status").text)
        assert sorted(found, key=lambda r: r["seq"]) == expected(range(120))
        app = _app(spark_cluster, app_name)
        assert app is not None and app["cores"] == 2, list(spark_cluster.applications())  # on the cluster
    finally:
        assert worker.stop() == 0, worker.log()
    wait_until(lambda: _app(spark_cluster, app_name) is None, timeout=30, message="application gone")


def test_distributed_worker_runs_its_tasks_on_a_spark_standalone_cluster(
    spark_cluster, kafka_bootstrap, unique_name, tmp_path
):
    app_name = f"sluice-{unique_name}"
    # spark.pyspark.python names the executors' Python: a wrapper that notes each start.
    started = tmp_path / "python-starts"
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\necho "$$" >> "{started}"\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    worker = DistributedWorker(
        tmp_path / "w",
        kafka_bootstrap,
        "on-cluster",
        group=unique_name,
        extra={**_on_cluster(spark_cluster, app_name), "spark.pyspark.python": str(python)},
    )
    worker.start()
    try:
        _run_pipeline_on_cluster(worker, spark_cluster, app_name, unique_name, tmp_path)
    finally:
        assert worker.stop() == 0, worker.log()
    assert started.exists() and started.read_text().split(), "executors did not run spark.pyspark.python"
    wait_until(lambda: _app(spark_cluster, app_name) is None, timeout=30, message="application gone")


def test_dev_cli_starts_reports_and_stops_a_cluster(tmp_path):
    """``sluice dev spark start|status|stop``: the cluster outlives the command that started it."""
    work_dir = str(tmp_path / "spark")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "sluice_devtools.cli", "spark", *args, "--dir", work_dir],
            capture_output=True,
            text=True,
            timeout=180,
        )

    try:
        started = cli("start")
        assert started.returncode == 0, started.stderr
        url = started.stdout.strip()
        assert re.fullmatch(r"spark://127\.0\.0\.1:\d+", url), started.stdout
        cluster = SparkStandaloneCluster(work_dir)
        pids = (cluster.master_pid, cluster.worker_pid)
        assert cluster.master_json()["aliveworkers"] == 1

        again = cli("start")  # already running: the same cluster
        assert (again.returncode, again.stdout.strip()) == (0, url)
        status = cli("status")
        assert status.returncode == 0 and url in status.stdout and f"worker_pid={pids[1]}" in status.stdout

        stopped = cli("stop")
        assert (stopped.returncode, stopped.stdout.strip()) == (0, "stopped"), stopped.stderr
        for pid in pids:
            assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] == "Z"
        status = cli("status")
        assert status.returncode == 1 and status.stdout.startswith("stopped")
    finally:
        SparkStandaloneCluster(work_dir).stop()


@pytest.mark.parametrize(
    ("master", "loopback"),
    [
        ("local[2]", True),
        ("local-cluster[1,1,512]", True),
        ("spark://127.0.0.1:7077", True),
        ("spark://localhost:7077,127.0.0.1:7078", True),
        ("spark://spark-master.example:7077", False),
        ("spark://127.0.0.1:7077,10.0.0.5:7077", False),
        ("yarn", False),
    ],
)
def test_driver_binds_the_loopback_only_when_every_executor_runs_on_this_machine(master, loopback):
    from sluice.spark.session import _runs_on_this_machine

    assert _runs_on_this_machine(master) is loopback
