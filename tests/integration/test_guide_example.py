"""docs/writing-a-connector.md, run as it says: the example package's CounterSource and
LineFileSink on a real standalone worker (``sluice standalone``, which ``connect-standalone``
is, with the example's worker and connector files) and a real broker. First the worker finds
the package through ``plugin.path``; then, restarted with the package installed instead
(entry points) and a higher ``limit``, it goes on counting where it stopped. Every count
reaches the sink's file exactly once.

What differs from the guide, and why: the broker, the REST port and the offsets file are
the test's own (``StandaloneWorker``), the topic is unique to the test and the sink's file
is in its temporary directory; Spark runs with less memory; the graceful
shutdown timeout is 30 s, since a cold batch on two busy cores can outlast the default 5 s
and a task abandoned in mid-batch writes some lines again (at least once, as the guide
says). The package is installed by ``install_like_pip``: no network, no wheel build.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import javaproperties
import pytest

from tests.example_packages import install_like_pip
from tests.helpers import wait_until
from tests.integration.workers import StandaloneWorker, connector_states, write_properties

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "counter_connector"
CONFIG = EXAMPLE / "config"
STREAMS = ["apples", "pears", "plums"]


def _properties(path: Path) -> dict[str, str]:
    with path.open("rb") as f:
        return dict(javaproperties.load(f))


def _counts(path: Path) -> dict[str, list[int]]:
    """The values of each stream, in the order of the file's lines ``<stream> <value>``."""
    counts: dict[str, list[int]] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            stream, value = line.split(" ")
            counts.setdefault(stream, []).append(int(value))
    return counts


def _run(
    worker: StandaloneWorker,
    connector_files: list[Path],
    counts: Path,
    limit: int,
    check: Callable[[StandaloneWorker], None] = lambda worker: None,
) -> None:
    """Start the worker, wait until every stream reached ``limit`` in the file (``check``
    the worker meanwhile), stop it."""
    worker.start(*connector_files, timeout=180)
    try:
        wait_until(
            lambda: (
                connector_states(worker, "counter-source") == ("RUNNING", ["RUNNING", "RUNNING"])
                and connector_states(worker, "line-file-sink") == ("RUNNING", ["RUNNING"])
            ),
            timeout=120,
            message=lambda: f"both connectors and their tasks RUNNING:\n{worker.log()[-3000:]}",
        )
        check(worker)
        wait_until(
            lambda: sum(len(v) for v in _counts(counts).values()) >= limit * len(STREAMS),
            timeout=180,
            message=lambda: f"{limit} counts of each stream in {counts}: {_counts(counts)}\n{worker.log()[-3000:]}",
        )
    finally:
        code = worker.stop()
    assert code == 0, worker.log()


def test_the_guide_s_connectors_count_into_a_file_and_go_on_after_a_restart(
    kafka_bootstrap: str, unique_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    topic = f"{unique_name}-counts"
    counts = tmp_path / "counts.txt"
    worker_props = _properties(CONFIG / "worker.properties")
    own = ("bootstrap.servers", "listeners", "offset.storage.file.filename")
    settings = {k: v for k, v in worker_props.items() if k not in own}
    settings["task.shutdown.graceful.timeout.ms"] = "30000"
    source = {**_properties(CONFIG / "counter-source.properties"), "topic": topic}
    sink = {**_properties(CONFIG / "line-file-sink.properties"), "topics": topic, "file": str(counts)}
    assert (source["limit"], source["streams"], sink["connector.class"]) == ("50", ",".join(STREAMS), "LineFileSink")
    source_file = tmp_path / "counter-source.properties"
    sink_file = write_properties(tmp_path / "line-file-sink.properties", sink)

    def as_the_guide_says(worker: StandaloneWorker) -> None:
        plugins = {p["class"]: (p["type"], p["version"]) for p in worker.get("/connector-plugins").json()}
        assert plugins["sluice_example_counter.source.CounterSourceConnector"] == ("source", "0.1.0")
        assert plugins["sluice_example_counter.sink.LineFileSinkConnector"] == ("sink", "0.1.0")
        tasks = worker.get("/connectors/counter-source/tasks").json()
        assert [t["config"]["streams"] for t in tasks] == ["apples,plums", "pears"]

    # 1. The package found through plugin.path (the commented-out line of worker.properties).
    write_properties(source_file, source)
    worker = StandaloneWorker(
        tmp_path / "worker", kafka_bootstrap, "worker", extra={**settings, "plugin.path": str(EXAMPLE / "src")}
    )
    _run(worker, [source_file, sink_file], counts, 50, as_the_guide_says)
    assert _counts(counts) == {stream: list(range(50)) for stream in STREAMS}

    # 2. Restarted with the package installed (no plugin.path) and a higher limit: the
    # counters go on from their stored offsets, the sink from its committed ones.
    site = install_like_pip(EXAMPLE, tmp_path / "site")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])))
    write_properties(source_file, {**source, "limit": "60"})
    worker = StandaloneWorker(tmp_path / "worker", kafka_bootstrap, "worker", extra={**settings, "plugin.path": None})
    _run(worker, [source_file, sink_file], counts, 60, as_the_guide_says)
    assert _counts(counts) == {stream: list(range(60)) for stream in STREAMS}
    assert "sluice_example_counter" not in worker.worker_file.read_text(encoding="latin-1")
