"""Clusters of distributed workers, and what the cluster benchmarks read from them.

* :class:`Cluster` — N distributed workers of one system (Kafka Connect or Sluice, see
  :data:`bench.harness.workers.DISTRIBUTED`) in one group, started together and stopped
  by the pids they were started with; it is *stable* when every worker's log says it
  joined the same group generation, nothing has changed that for a moment, and every REST
  API answers (the broker's coordinator cannot be asked: librdkafka's and Kafka's admin
  clients describe consumer groups only, and Connect's group protocol is ``connect``);
* :func:`log_events` — the timestamped lines of the workers' logs (both systems write
  ``[yyyy-MM-dd HH:mm:ss,SSS] LEVEL message (logger)``);
* :func:`units` — every connector and task with its state and worker, as one worker's REST
  API reports them; :func:`wait_for` — poll a condition until it holds.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Callable
from pathlib import Path

import httpx2

from bench.harness.workers import DISTRIBUTED, BenchWorker
from tests import http_client

__all__ = ["Cluster", "log_events", "units", "wait_for"]

LOG_LINE = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (\w+) (.*)")
# Sluice's group member and Kafka Connect's herder, at INFO, each time the worker completes a
# rebalance: "Joined group <group> at generation 4 (protocol …" / "Joined group at generation 4 with …"
JOINED = re.compile(r"Joined group.* at generation (\d+)")


def units(url: str) -> dict[str, str]:
    """{"<connector>" or "<connector>-<task>": "<state>@<worker id>"} as the worker at ``url`` reports it."""
    body = http_client.get(f"{url}/connectors?expand=status", timeout=10).json()
    found = {}
    for name, entry in body.items():
        status = entry["status"]
        found[name] = f"{status['connector']['state']}@{status['connector']['worker_id']}"
        for task in status["tasks"]:
            found[f"{name}-{task['id']}"] = f"{task['state']}@{task['worker_id']}"
    return found


def wait_for(condition: Callable[[], bool], timeout: float, what: str, interval: float = 0.1) -> float:
    """Poll ``condition`` every ``interval`` s (HTTP errors count as false) until it holds; the
    monotonic time it first did. Exits the benchmark after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if condition():
                return time.monotonic()
        except (httpx2.HTTPError, KeyError, ValueError):
            pass
        time.sleep(interval)  # a benchmark's sampling interval, not a test synchronisation
    raise SystemExit(f"timed out after {timeout} s waiting for {what}")


def log_events(paths: list[Path], since: float = 0.0, until: float = float("inf")) -> list[tuple[float, int, str]]:
    """(wall-clock time, index of the path, message) of every log line of ``paths`` between
    ``since`` and ``until`` (seconds since the epoch), in time order."""
    events = []
    for index, path in enumerate(paths):
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            m = LOG_LINE.match(line)
            if m:
                at = dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
                if since <= at <= until:
                    events.append((at, index, m.group(3)))
    return sorted(events, key=lambda e: e[0])


class Cluster:
    """``size`` distributed workers of ``system`` in the group ``group``, one work directory each."""

    def __init__(
        self,
        system: str,
        work: Path,
        bootstrap: str,
        group: str,
        size: int = 3,
        extra: dict[str, str] | None = None,
        configure: Callable[[BenchWorker], None] | None = None,
    ) -> None:
        """``configure`` is called with each worker before it starts (e.g. its log levels)."""
        self.system, self.bootstrap, self.group = system, bootstrap, group
        self.workers: list[BenchWorker] = []
        for i in range(size):
            worker = DISTRIBUTED[system](work / f"{system}-w{i}", bootstrap, f"w{i}", group, extra=extra)
            if configure is not None:
                configure(worker)
            self.workers.append(worker)
        self.rest_ready_s: list[float] = []  # per worker: process start → GET / answers
        self._joined_at = 0.0  # wall clock

    @property
    def label(self) -> str:
        return self.workers[0].label

    def start(self, timeout: float = 300.0) -> None:
        """Start every worker at once and wait until each REST API answers."""
        for worker in self.workers:
            worker.launch()
        for worker in self.workers:
            self.rest_ready_s.append(worker.wait_rest_ready(timeout) - worker.started_at)

    def check_alive(self) -> None:
        for worker in self.workers:
            worker.check_alive()

    def generation(self) -> tuple[int, float] | None:
        """The group generation every worker's log last said it joined, if they agree, and the
        wall-clock time the last of them said so."""
        self.check_alive()
        found: set[int | None] = set()
        latest = 0.0
        for worker in self.workers:
            last = None
            for line in worker.log_path.read_text(errors="replace").splitlines():
                m = JOINED.search(line)
                stamp = LOG_LINE.match(line)
                if m and stamp:
                    last = int(m.group(1))
                    at = dt.datetime.strptime(stamp.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
            found.add(last)
            if last is not None:
                latest = max(latest, at)
        generation = found.pop() if len(found) == 1 else None
        return None if generation is None else (generation, latest)

    def stable(self, quiet: float = 2.0) -> bool:
        """Every worker joined the same generation and still is there ``quiet`` s later, and
        every REST API lists the connectors (no 409 while a rebalance is under way)."""
        joined = self.generation()
        if joined is None:
            return False
        time.sleep(quiet)
        if self.generation() != joined:
            return False
        self._joined_at = joined[1]
        return all(http_client.get(f"{w.url}/connectors", timeout=10).status_code == 200 for w in self.workers)

    def wait_stable(self, timeout: float = 300.0) -> float:
        """Wait until :meth:`stable`; the monotonic time the last worker joined that generation."""
        wait_for(self.stable, timeout, f"the {self.label} cluster to be stable", interval=0.5)
        return time.monotonic() - (time.time() - self._joined_at)

    def stop(self) -> None:
        """SIGTERM every worker at once (a group shrinking one by one rebalances each time),
        then wait for each; SIGKILL after a timeout. Only the processes this cluster started."""
        for worker in self.workers:
            if worker.process is not None and worker.process.poll() is None:
                worker.process.terminate()
        for worker in self.workers:
            worker.stop()

    def log_paths(self) -> list[Path]:
        return [w.log_path for w in self.workers]
