"""The project's own tooling for local services: jar fetching, the Kafka broker, `sluice dev`."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient

from sluice.jvm import JvmArtifactError
from sluice.jvm import jars as jvm_jars
from sluice.jvm.java import java_executable
from sluice_devtools import DevToolsError, jars
from sluice_devtools.kafka import KafkaBroker, create_topic, quiet_client_logger
from sluice_devtools.processes import free_port
from tests.helpers import wait_until


def _client_config(bootstrap: str, **extra: object) -> dict[str, object]:
    return {"bootstrap.servers": bootstrap, "logger": quiet_client_logger(), **extra}


def _process_gone(pid: int) -> bool:
    """No such process, or only a zombie left for its parent to reap."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def _topics(bootstrap: str) -> set[str]:
    return set(AdminClient(_client_config(bootstrap)).list_topics(timeout=10).topics)


@pytest.mark.integration
def test_produce_and_consume_through_the_session_broker(kafka_bootstrap: str, unique_name: str) -> None:
    create_topic(kafka_bootstrap, unique_name, partitions=2)

    delivered: list[object] = []
    producer = Producer(_client_config(kafka_bootstrap))
    producer.produce(unique_name, key=b"k", value=b"hello", on_delivery=lambda err, msg: delivered.append(err))
    assert producer.flush(30) == 0
    assert delivered == [None]

    consumer = Consumer(_client_config(kafka_bootstrap, **{"group.id": unique_name, "auto.offset.reset": "earliest"}))
    try:
        consumer.subscribe([unique_name])

        def one_message() -> object:
            msg = consumer.poll(0.5)
            return msg if msg is not None and msg.error() is None else None

        msg = wait_until(one_message, timeout=60, message=f"no message consumed from {unique_name}")
        assert (msg.key(), msg.value(), msg.topic()) == (b"k", b"hello", unique_name)  # type: ignore[attr-defined]
    finally:
        consumer.close()


@pytest.mark.integration
def test_stop_ends_the_process_and_a_restart_keeps_data_and_port(tmp_path: Path) -> None:
    work_dir = tmp_path / "kafka"
    broker = KafkaBroker(work_dir)
    try:
        bootstrap = broker.start()
        pid = broker.pid
        assert pid is not None
        broker.create_topic("kept", partitions=3)

        # A second object, as another process would build it, sees and stops the broker.
        other = KafkaBroker.from_state(work_dir)
        status = other.status()
        assert (status.running, status.pid, status.address("bootstrap")) == (True, pid, bootstrap)
        assert other.stop() is True
        assert _process_gone(pid)
        assert not broker.status().running
        assert other.stop() is False  # idempotent

        assert broker.start() == bootstrap  # same port when still free
        assert broker.pid not in (None, pid)
        assert "kept" in _topics(bootstrap)
    finally:
        restarted_pid = broker.pid
        broker.stop()
    assert restarted_pid is not None and _process_gone(restarted_pid)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sluice_devtools.cli", *args],
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.mark.integration
def test_cli_start_status_stop_round_trip(tmp_path: Path) -> None:
    work_dir = str(tmp_path / "kafka")
    try:
        started = _cli("kafka", "start", "--dir", work_dir)
        assert started.returncode == 0, started.stderr
        bootstrap = started.stdout.strip()
        assert re.fullmatch(r"127\.0\.0\.1:\d+", bootstrap), started.stdout
        pid = KafkaBroker.from_state(work_dir).pid
        assert pid is not None

        again = _cli("kafka", "start", "--dir", work_dir)  # already running: same broker
        assert (again.returncode, again.stdout.strip()) == (0, bootstrap)
        assert KafkaBroker.from_state(work_dir).pid == pid

        status = _cli("kafka", "status", "--dir", work_dir)
        assert status.returncode == 0, status.stderr
        assert f"pid={pid}" in status.stdout and bootstrap in status.stdout

        assert _topics(bootstrap) is not None  # answers clients after the CLI has exited

        stopped = _cli("kafka", "stop", "--dir", work_dir)
        assert (stopped.returncode, stopped.stdout.strip()) == (0, "stopped"), stopped.stderr
        assert _process_gone(pid)

        status = _cli("kafka", "status", "--dir", work_dir)
        assert status.returncode == 1 and status.stdout.startswith("stopped")
        assert _cli("kafka", "stop", "--dir", work_dir).returncode == 0
    finally:
        KafkaBroker(work_dir).stop()


@pytest.mark.integration
def test_jar_sets_are_cached_and_need_no_java_once_fetched(monkeypatch: pytest.MonkeyPatch) -> None:
    broker_jars = jars.kafka_broker_classpath()
    spark_jars = jvm_jars.spark_kafka_jars()

    def no_java() -> Path:
        raise AssertionError("a cached jar set must not need Java or the network")

    monkeypatch.setattr(jvm_jars, "java_executable", no_java)  # what runs Ivy
    assert jars.kafka_broker_classpath() == broker_jars
    assert jvm_jars.spark_kafka_jars() == spark_jars

    assert all(p.is_file() for p in broker_jars + spark_jars)
    assert f"kafka_2.13-{jars.KAFKA_VERSION}.jar" in {p.name for p in broker_jars}
    names = {p.name for p in spark_jars}
    assert f"spark-sql-kafka-0-10_2.13-{jvm_jars.SPARK_VERSION}.jar" in names
    assert any(n.startswith("kafka-clients-") for n in names)
    bundled = {p.name for p in jvm_jars.pyspark_jars_dir().glob("*.jar")}
    assert not names & bundled, "jars PySpark already bundles must not be added again"


def test_a_failed_fetch_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty_repo = tmp_path / "empty-repo"
    empty_repo.mkdir()
    settings = tmp_path / "ivysettings.xml"
    settings.write_text(
        '<ivysettings><settings defaultResolver="empty"/><resolvers>'
        f'<filesystem name="empty"><ivy pattern="{empty_repo}/[module]/ivy.xml"/>'
        f'<artifact pattern="{empty_repo}/[module]/[artifact].[ext]"/></filesystem>'
        "</resolvers></ivysettings>"
    )
    monkeypatch.setenv("SLUICE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(jvm_jars.IVY_SETTINGS_ENV, str(settings))

    with pytest.raises(JvmArtifactError, match="org.apache.kafka:kafka_2.13") as failure:
        jars.kafka_broker_classpath()
    assert "not found" in str(failure.value)
    jvm = tmp_path / "cache" / "jvm"
    leftovers = {p.name for p in jvm.iterdir() if not (p.name.startswith(".fetch-") and p.name.endswith(".lock"))}
    assert leftovers == set()  # not even Ivy's cache: each fetch has its own, in its temporary directory


def test_jar_sets_are_fetched_side_by_side_and_every_fetch_ends_before_a_failure_is_raised() -> None:
    """A cold ``sluice dev fetch`` waits on the network for each artifact of a set in turn;
    the sets are fetched together. Two fetches that each wait for the other can only finish
    together; a failing fetch is raised only once the others have ended."""
    both_started = threading.Barrier(2, timeout=10)

    def fetch(name: str) -> Callable[[], str]:
        def run() -> str:
            both_started.wait()  # a BrokenBarrierError after 10 s when fetched one after the other
            return f"{name}'s jars"

        return run

    assert jars._side_by_side({"a": fetch("a"), "b": fetch("b")}) == {"a": "a's jars", "b": "b's jars"}

    ended: list[str] = []
    started = threading.Barrier(2, timeout=10)

    def failing() -> None:
        started.wait()
        raise JvmArtifactError("Could not download a")

    def slow() -> None:
        started.wait()
        time.sleep(0.5)  # a fetch slower than the failing one
        ended.append("slow")

    with pytest.raises(JvmArtifactError, match="Could not download a"):
        jars._side_by_side({"a": failing, "b": slow})
    assert ended == ["slow"]


def test_missing_java_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    with pytest.raises(JvmArtifactError, match="JAVA_HOME"):
        java_executable()

    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(JvmArtifactError, match="no `java` is on PATH"):
        java_executable()


def test_free_ports_lie_outside_the_kernel_s_ephemeral_range_and_never_repeat() -> None:
    """A port from the ephemeral range can be taken by any outgoing connection between being
    chosen and being bound (two CI runs failed so); free_port keeps out of it."""
    low, high = (int(n) for n in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    ports = [free_port() for _ in range(200)]
    assert len(set(ports)) == len(ports)
    assert not [port for port in ports if low <= port <= high]
    for port in ports[:20]:
        with socket.create_server(("127.0.0.1", port)):
            pass


def test_a_busy_explicit_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(DevToolsError, match=f"Port {port} .* is in use"):
            KafkaBroker(tmp_path / "kafka", port=port).start()


def test_the_quickstart_fetches_only_the_broker_and_sparks_kafka_jars(tmp_path: Path) -> None:
    """``./dev quickstart`` runs ``sluice dev fetch --quickstart``: with only the broker's and
    Spark's Kafka jars in an otherwise empty cache and every download refused, it succeeds;
    the whole fetch (what ``./dev test`` runs) fails, naming what it could not get."""
    cache = tmp_path / "cache"
    (cache / "jvm").mkdir(parents=True)
    for jar_set in (jars.kafka_broker_classpath(), jvm_jars.spark_kafka_jars()):
        (cache / "jvm" / jar_set[0].parent.name).symlink_to(jar_set[0].parent)
    nothing = tmp_path / "no-repository"
    nothing.mkdir()
    refuse_all = tmp_path / "ivysettings.xml"
    refuse_all.write_text(
        '<ivysettings><settings defaultResolver="nowhere"/><resolvers>'
        f'<filesystem name="nowhere"><ivy pattern="{nothing}/[module]/ivy.xml"/>'
        f'<artifact pattern="{nothing}/[module]/[artifact].[ext]"/></filesystem>'
        "</resolvers></ivysettings>"
    )
    env = {**os.environ, "SLUICE_CACHE": str(cache), jvm_jars.IVY_SETTINGS_ENV: str(refuse_all)}
    command = [sys.executable, "-m", "sluice_devtools.cli", "fetch"]

    quickstart = subprocess.run([*command, "--quickstart"], env=env, capture_output=True, text=True, timeout=120)
    assert quickstart.returncode == 0, quickstart.stderr
    assert "kafka-broker" in quickstart.stdout and "spark-kafka" in quickstart.stdout

    everything = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert everything.returncode == 1
    assert re.search(r"error: Could not download .*(connect-runtime|s3proxy|hadoop|opensearch)", everything.stderr), (
        everything.stderr
    )
    kept = {jars.kafka_broker_classpath()[0].parent.name, jvm_jars.spark_kafka_jars()[0].parent.name}
    assert [p.name for p in (cache / "jvm").iterdir() if p.name not in kept and not p.name.startswith(".")] == []
