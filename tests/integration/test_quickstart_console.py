"""Acceptance: a newcomer's console is quiet. The quickstart's output, and a standalone
worker's log at INFO, hold no warning, error or failure line on a normal run, start to
stop: not Spark's (loopback host name, native Hadoop), not the Kafka clients' (a group
coordinator still loading, connections refused once the broker is gone), not the worker's
own. What the worker does is still said at INFO."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import wait_until
from tests.integration.workers import StandaloneWorker, write_properties

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

# Log levels of Python, log4j and librdkafka's facility for broken connections, as words
# (case-sensitive: "failed" in a sentence is not a log level); and Python tracebacks.
NOISE = re.compile(r"\b(?:WARN|WARNING|ERROR|FATAL|CRITICAL|FAIL|FAILED)\b|^Traceback ")


def noisy_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if NOISE.search(line)]


def assert_quiet(text: str, what: str) -> None:
    noisy = noisy_lines(text)
    assert not noisy, f"{len(noisy)} warning/error line(s) in {what}:\n" + "\n".join(noisy) + f"\n\n{what}:\n{text}"


def test_noise_pattern() -> None:
    assert noisy_lines(
        "26/11/25 22:18:02 WARN Utils: Your hostname, vm, resolves to a loopback address\n"
        "[2026-11-25 22:26:25,208] WARNING Could not look up the Kafka cluster id (sluice)\n"
        "%3|1795645094.990|FAIL|rdkafka#producer-3| Connect to ipv4#127.0.0.1:1 failed\n"
        '  "state": "FAILED",\n'
        "[2026-11-25 22:26:25,208] INFO Task failed to start, see above (sluice)\n"
        "[2026-11-25 22:26:25,208] INFO errors.tolerance = none (sluice)\n"
    ) == [
        "26/11/25 22:18:02 WARN Utils: Your hostname, vm, resolves to a loopback address",
        "[2026-11-25 22:26:25,208] WARNING Could not look up the Kafka cluster id (sluice)",
        "%3|1795645094.990|FAIL|rdkafka#producer-3| Connect to ipv4#127.0.0.1:1 failed",
        '  "state": "FAILED",',
    ]


def _sluice_command() -> list[str]:
    """``sluice`` as the README runs it (the console script of this environment)."""
    script = Path(sys.executable).with_name("sluice")
    if script.exists():
        return [str(script)]
    found = shutil.which("sluice")
    return [found] if found else [sys.executable, "-m", "sluice.cli.main"]


def test_quickstart_output_has_no_warnings_or_errors(tmp_path: Path) -> None:
    # As the README says, with the environment's SLUICE_CACHE (the jars already fetched);
    # --dir keeps it away from a quickstart the developer may have running in the cache.
    result = subprocess.run(
        [*_sluice_command(), "quickstart", "--exit", "--dir", str(tmp_path / "quickstart")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=540,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    output = result.stdout
    assert result.returncode == 0, f"quickstart exited with {result.returncode}:\n{output}"
    assert "==> All 5 lines arrived in" in output, output
    assert "Stopping the standalone worker" in output, output
    assert_quiet(output, "the quickstart's output")


def test_standalone_worker_log_has_no_warnings_or_errors(
    kafka_bootstrap: str, unique_name: str, tmp_path: Path
) -> None:
    topic = f"{unique_name}-topic"
    source_file, sink_file = tmp_path / "test.txt", tmp_path / "test.sink.txt"
    source_file.write_bytes(b"")
    source = write_properties(
        tmp_path / "source.properties",
        {
            "name": f"{unique_name}-source",
            "connector.class": "FileStreamSource",
            "tasks.max": "1",
            "file": str(source_file),
            "topic": topic,
        },
    )
    sink = write_properties(
        tmp_path / "sink.properties",
        {
            "name": f"{unique_name}-sink",
            "connector.class": "FileStreamSink",
            "tasks.max": "1",
            "file": str(sink_file),
            "topics": topic,
        },
    )
    worker = StandaloneWorker(tmp_path / "worker", kafka_bootstrap, "quiet")
    try:
        worker.start(source, sink)
        lines = [f"line {i}" for i in range(5)]
        with source_file.open("a", encoding="utf-8") as out:
            out.writelines(line + "\n" for line in lines)
        wait_until(
            lambda: sink_file.exists() and sink_file.read_text(encoding="utf-8").splitlines() == lines,
            timeout=180,
            message=lambda: f"the lines in {sink_file}; worker log:\n{worker.log()}",
        )
        assert worker.stop() == 0, worker.log()
    finally:
        worker.kill()
    log = worker.log_path.read_text(errors="replace")
    # The worker still says what it does.
    assert "Sluice worker started; REST API at" in log, log
    assert "Sluice worker stopped" in log, log
    assert_quiet(log, "the worker's log")
