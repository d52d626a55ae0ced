"""The worker's start-up: the stage it is in, in Kafka's words, and what /health says."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from sluice.runtime.config import WorkerConfig
from sluice.runtime.herder.standalone import StandaloneHerder
from sluice.runtime.plugins import Plugins
from sluice.runtime.startup import EngineFailed, Stage, Startup
from sluice.runtime.worker import SparkProvider, Worker
from sluice.storage.memory import MemoryConfigBackingStore, MemoryOffsetBackingStore, MemoryStatusBackingStore


def test_a_stage_is_summarised_as_kafka_does() -> None:
    stage = Stage("starting its Spark session", 1795860000.25)
    assert stage.summary() == (
        "The worker is currently starting its Spark session, which began at 2026-11-28T10:00:00.250Z"
    )


def test_waiting_ends_when_the_engine_is_ready_or_raises_when_it_failed() -> None:
    startup = Startup()
    assert not startup.wait(0.01)
    threading.Timer(0.05, startup.finish).start()
    assert startup.wait(10) and startup.ready
    failed = Startup()
    failed.fail(RuntimeError("no JVM"))
    with pytest.raises(EngineFailed, match="no JVM"):
        failed.wait(1)
    assert not failed.ready


@pytest.fixture
def herder(tmp_path: Path) -> StandaloneHerder:
    config = WorkerConfig.standalone(
        {
            "bootstrap.servers": "127.0.0.1:1",
            "offset.storage.file.filename": str(tmp_path / "offsets"),
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        }
    )
    worker = Worker(
        "w:8083",
        config,
        Plugins(),
        MemoryOffsetBackingStore(),
        MemoryStatusBackingStore(),
        SparkProvider(lambda: None),
    )
    return StandaloneHerder(worker, MemoryConfigBackingStore(), worker.status_store, lambda: "cluster")


def test_health_says_what_a_starting_worker_waits_for_then_healthy(herder: StandaloneHerder) -> None:
    herder.worker.startup.begin("waiting for its first task host to start on Spark")
    status, message = herder.health()
    assert status == "starting"
    assert re.fullmatch(
        r"Worker is still starting up\. The worker is currently waiting for its first task host to start on "
        r"Spark, which began at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z",
        message,
    )
    assert not herder.await_started(0)
    herder.worker.startup.finish()
    herder.start()
    herder.ready()
    assert herder.health() == ("healthy", "Worker has completed startup and is ready to handle requests.")
    assert herder.await_started(0)


def test_a_session_prepared_early_is_built_once_and_handed_to_every_caller() -> None:
    built: list[object] = []
    release = threading.Event()

    def factory() -> object:
        release.wait(10)
        built.append(object())
        return built[-1]

    spark = SparkProvider(factory)
    spark.prepare()  # building in the background
    got: list[object] = []
    caller = threading.Thread(target=lambda: got.append(spark()))
    caller.start()
    release.set()
    caller.join(10)
    assert got == built and len(built) == 1
    assert spark() is built[0]


def test_a_session_that_failed_in_the_background_fails_its_callers() -> None:
    def factory() -> object:
        raise OSError("no java")

    spark = SparkProvider(factory)
    spark.prepare()
    for _ in range(2):
        with pytest.raises(RuntimeError, match="Spark failed to start: no java"):
            spark()
