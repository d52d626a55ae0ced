"""Clusters the console tests drive: a Sluice worker serving ``/ui/`` itself, and Apache
Kafka Connect 4.3.1 behind ``sluice console --url``."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from tests import http_client
from tests.integration.kafka_connect_reference import ConnectDistributedWorker
from tests.integration.workers import StandaloneWorker

CONSOLE_LINE = re.compile(r"Console for .* at (http://\S+/ui/)")
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
MOCK_SOURCE = "org.apache.kafka.connect.tools.MockSourceConnector"


@dataclass
class Target:
    """A cluster's REST URL, the console's URL in front of it, and a directory its
    connectors may read files from."""

    kind: str
    rest: str
    console: str
    work_dir: Path
    stops: list[Any] = field(default_factory=list)

    def request(self, method: str, path: str, **kwargs: Any) -> httpx2.Response:
        return http_client.request(method, self.rest + path, timeout=60, **kwargs)

    def status(self, name: str) -> dict[str, Any] | None:
        r = self.request("GET", f"/connectors/{quote_segment(name)}/status")
        return r.json() if r.status_code == 200 else None

    def close(self) -> None:
        for stop in reversed(self.stops):
            stop()


def quote_segment(name: str) -> str:
    from urllib.parse import quote

    return quote(name, safe="")


class ConsoleProcess:
    """``sluice console --url URL --port 0``, stopped by its pid."""

    def __init__(self, url: str, log_path: Path) -> None:
        self.log_path = log_path
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sluice.cli.main", "console", "--url", url, "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=log_path.open("ab"),
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()  # the process prints its address once it serves
        found = CONSOLE_LINE.search(line)
        if not found:
            self.stop()
            raise AssertionError(f"sluice console did not start: {line!r}\n{log_path.read_text(errors='replace')}")
        self.url = found.group(1)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def sluice_target(work_dir: Path, bootstrap: str) -> Target:
    worker = StandaloneWorker(work_dir, bootstrap, "console", {"offset.flush.interval.ms": "500"})
    worker.start()
    target = Target("sluice", worker.url, worker.url + "/ui/", work_dir)
    target.stops.append(worker.stop)
    return target


def kafka_connect_target(work_dir: Path, bootstrap: str, prefix: str) -> Target:
    worker = ConnectDistributedWorker(
        work_dir,
        bootstrap,
        group_id=f"{prefix}-group",
        config_topic=f"{prefix}-configs",
        offset_topic=f"{prefix}-offsets",
        status_topic=f"{prefix}-status",
    ).start()
    target = Target("kafka-connect", worker.url, "", work_dir)
    target.stops.append(worker.stop)
    try:
        console = ConsoleProcess(worker.url, work_dir / "console.log")
    except BaseException:
        target.close()
        raise
    target.console = console.url
    target.stops.append(console.stop)
    return target
