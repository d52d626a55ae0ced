"""The two systems under test, each as one worker process with its own REST port.

* :class:`ConnectWorker` — Apache Kafka Connect 4.3.1, ``ConnectStandalone`` on the jars of
  :func:`sluice_devtools.jars.kafka_connect_classpath` (kept apart from Spark's Kafka
  jars), with the JVM options of Kafka's ``bin/connect-standalone.sh``.
* :class:`SluiceWorker` — ``sluice standalone`` with the worker settings of the test
  suite's :class:`tests.integration.workers.StandaloneWorker`, with Sluice's default Spark master.
* :class:`ConnectDistributedWorker` and :class:`SluiceDistributedWorker` — the same two as
  distributed workers, members of a group whose config, offset and status topics are named
  after it (as :class:`tests.integration.workers.DistributedWorker` names them, with the
  same partition counts), for ``bench/startup.py``'s clusters.

The standalone workers take connector property files on the command line (started with the
worker, as ``connect-standalone worker.properties conn.properties…`` does); every worker is
driven through the same Kafka Connect REST API afterwards.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2

from bench.harness.procs import on_cpus
from sluice.jvm.java import java_executable
from sluice_devtools.jars import kafka_connect_classpath
from tests import http_client
from tests.integration.workers import DistributedWorker, StandaloneWorker, free_port, write_properties

HERE = Path(__file__).resolve().parent
CONNECT_LOG4J = HERE.parent / "jvm" / "log4j2.properties"
# A distributed Kafka Connect worker: the same, with its herder's, worker's and tasks' INFO
# lines (rebalances, assignments, connector and task start) for bench/startup.py's breakdown.
CONNECT_DISTRIBUTED_LOG4J = HERE.parent / "jvm" / "log4j2-distributed.properties"

# bin/connect-standalone.sh (KAFKA_HEAP_OPTS) and bin/kafka-run-class.sh (KAFKA_JVM_PERFORMANCE_OPTS)
CONNECT_JVM_OPTIONS = [
    "-Xms256M",
    "-Xmx2G",
    "-server",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-XX:MaxInlineLevel=15",
    "-Djava.awt.headless=true",
]

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"


def java_task_settings() -> dict[str, str | None]:
    """Sluice worker settings for runs of Java plugins: their tasks run in Spark's driver JVM,
    so it gets the JIT Kafka Connect's JVM has (the suite's workers stop at C1 to start
    faster) and Spark's default driver heap, 1g, not the suite's 512m (``BENCH_DRIVER_MEMORY``
    sets another; ``BENCH_DRIVER_JAVA_OPTIONS``, JVM options of its own). These workers run
    Java tasks only, so they keep no Python task host up ahead of need
    (``sluice.task.hosts.standby=false``, the setting docs/compatibility.md gives for them;
    ``BENCH_TASK_HOSTS_STANDBY=true`` keeps them). ``BENCH_PRODUCER_BUFFER_MEMORY`` sets the
    Java tasks' ``producer.buffer.memory`` (the task host's default is 1 MiB;
    ``BENCH_CONNECT_PRODUCER_BUFFER_MEMORY`` sets Kafka Connect's, 32 MiB by default, to
    compare like with like; ``BENCH_CONNECT_JAVA_OPTIONS``, more JVM options for Kafka
    Connect's). ``None`` drops a suite setting."""
    return {
        "spark.driver.extraJavaOptions": os.environ.get("BENCH_DRIVER_JAVA_OPTIONS"),
        "spark.driver.memory": os.environ.get("BENCH_DRIVER_MEMORY"),
        "sluice.task.hosts.standby": os.environ.get("BENCH_TASK_HOSTS_STANDBY", "false"),
        "producer.buffer.memory": os.environ.get("BENCH_PRODUCER_BUFFER_MEMORY"),
    }


class WorkerFailed(Exception):
    """The worker process exited or did not answer in time."""


class BenchWorker:
    """Common part: process start, REST readiness, connector calls, stop."""

    system = ""
    label = ""

    def __init__(self, work_dir: Path, name: str) -> None:
        self.work_dir = work_dir
        self.name = name
        self.url = ""
        self.log_path = work_dir / f"{name}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.log_level = "INFO"  # Sluice's --log-level (Kafka Connect logs at WARN, bench/jvm/log4j2.properties)
        self.debug_loggers: tuple[str, ...] = ()  # Sluice's loggers at DEBUG whatever log_level says
        self.started_at = 0.0  # time.monotonic() just before the process was spawned
        self.cpus: set[int] | None = None  # the CPUs the process and all it starts may run on (None: any)

    # -- to implement
    def command(self, connector_files: list[Path]) -> list[str]:
        raise NotImplementedError

    def env(self) -> dict[str, str]:
        return dict(os.environ)

    # -- lifecycle
    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def launch(self, *connector_files: Path) -> None:
        command = self.command(list(connector_files))
        with self.log_path.open("ab") as log:
            self.started_at = time.monotonic()
            self.process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.work_dir,
                env=self.env(),
                preexec_fn=on_cpus(self.cpus),
            )

    def wait_rest_ready(self, timeout: float = 180.0) -> float:
        """Poll ``GET /`` until it answers 200; the monotonic time it first did."""
        deadline = time.monotonic() + timeout
        with httpx2.Client(timeout=2.0) as client:
            while True:
                self.check_alive()
                try:
                    if client.get(self.url + "/").status_code == 200:
                        return time.monotonic()
                except httpx2.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise WorkerFailed(f"{self.label} did not answer GET / within {timeout:.0f} s\n{self.log_tail()}")
                time.sleep(0.02)

    def check_alive(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            raise WorkerFailed(f"{self.label} exited with code {self.process.returncode}\n{self.log_tail()}")

    def stop(self, timeout: float = 90.0) -> None:
        """SIGTERM, then SIGKILL after ``timeout``; only this worker's own process."""
        proc = self.process
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    # -- REST
    def request(self, method: str, path: str, **kwargs: Any) -> httpx2.Response:
        """A REST call to this worker (raises WorkerFailed if its process is gone)."""
        self.check_alive()
        return http_client.request(method, self.url + path, timeout=120, **kwargs)

    def create_connector(self, config: dict[str, str]) -> None:
        r = self.request("POST", "/connectors", json={"name": config["name"], "config": config})
        if r.status_code != 201:
            raise WorkerFailed(f"{self.label}: creating {config['name']} answered {r.status_code}: {r.text}")

    def delete_connector(self, name: str) -> None:
        r = self.request("DELETE", f"/connectors/{name}")
        if r.status_code not in (200, 204):
            raise WorkerFailed(f"{self.label}: deleting {name} answered {r.status_code}: {r.text}")

    def task_states(self, name: str) -> list[str]:
        r = self.request("GET", f"/connectors/{name}/status")
        if r.status_code != 200:
            return []
        return [t.get("state", "") for t in r.json().get("tasks", [])]

    def failure_trace(self, name: str) -> str | None:
        """The trace of a FAILED connector or task of ``name``, if any."""
        r = self.request("GET", f"/connectors/{name}/status")
        if r.status_code != 200:
            return None
        body = r.json()
        for entry in [body.get("connector", {}), *body.get("tasks", [])]:
            if entry.get("state") == "FAILED":
                return str(entry.get("trace", "FAILED"))[-3000:]
        return None

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


class ConnectWorker(BenchWorker):
    """Apache Kafka Connect's ``ConnectStandalone``."""

    system = "connect"
    label = "Kafka Connect"
    main_class = "org.apache.kafka.connect.cli.ConnectStandalone"
    log4j = CONNECT_LOG4J

    def __init__(self, work_dir: Path, bootstrap: str, name: str, plugin_dirs: list[Path] | None = None) -> None:
        """``plugin_dirs``: more ``plugin.path`` entries besides Kafka's file connectors."""
        super().__init__(work_dir, name)
        work_dir.mkdir(parents=True, exist_ok=True)
        self.classpath, plugin_dir = kafka_connect_classpath()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        buffer = os.environ.get("BENCH_CONNECT_PRODUCER_BUFFER_MEMORY")  # see java_task_settings
        # Kafka's config/connect-standalone.properties (or connect-distributed.properties),
        # on this broker and port
        self.worker_file = write_properties(
            work_dir / f"{name}.worker.properties",
            {
                "bootstrap.servers": bootstrap,
                "key.converter": JSON_CONVERTER,
                "value.converter": JSON_CONVERTER,
                "key.converter.schemas.enable": "true",
                "value.converter.schemas.enable": "true",
                **self._mode_props(work_dir, name),
                "offset.flush.interval.ms": "10000",
                "listeners": self.url,
                "plugin.path": ",".join(str(p) for p in [plugin_dir, *(plugin_dirs or [])]),
                **({"producer.buffer.memory": buffer} if buffer else {}),
            },
        )

    def _mode_props(self, work_dir: Path, name: str) -> dict[str, str]:
        return {"offset.storage.file.filename": str(work_dir / f"{name}.offsets")}

    def command(self, connector_files: list[Path]) -> list[str]:
        return [
            str(java_executable()),
            *CONNECT_JVM_OPTIONS,
            *shlex.split(os.environ.get("BENCH_CONNECT_JAVA_OPTIONS", "")),  # e.g. a GC log
            f"-Dlog4j2.configurationFile=file:{self.log4j}",
            "-cp",
            os.pathsep.join(str(p) for p in self.classpath),
            self.main_class,
            str(self.worker_file),
            *map(str, connector_files),
        ]


class SluiceWorker(BenchWorker):
    """``sluice standalone``, configured like the test suite's workers."""

    system = "sluice"
    label = "Sluice"
    mode = "standalone"

    def __init__(self, work_dir: Path, bootstrap: str, name: str, extra: dict[str, str | None] | None = None) -> None:
        super().__init__(work_dir, name)
        # StandaloneWorker writes the worker properties and picks the REST port. Spark's
        # master is left at Sluice's default (more task slots than cores: tasks mostly wait).
        # ``extra``: more worker properties (e.g. sluice.transforms.columnar.enable).
        self._standalone = self._properties(work_dir, bootstrap, name, {"spark.master": None, **(extra or {})})
        self.url = self._standalone.url
        self.worker_file = self._standalone.worker_file

    def _properties(self, work_dir: Path, bootstrap: str, name: str, extra: dict[str, str | None]) -> StandaloneWorker:
        return StandaloneWorker(work_dir, bootstrap, name, extra=extra)

    def command(self, connector_files: list[Path]) -> list[str]:
        args = ["--log-level", self.log_level, self.mode, str(self.worker_file), *map(str, connector_files)]
        if not self.debug_loggers:
            return [sys.executable, "-m", "sluice.cli.main", *args]
        # the same CLI, with a few loggers at DEBUG (e.g. which path a sink chain takes)
        # without logging every micro-batch
        code = (
            f"import logging, sys; [logging.getLogger(n).setLevel(logging.DEBUG) for n in "
            f"{list(self.debug_loggers)!r}]; "
            "from sluice.cli.main import main; sys.exit(main())"
        )
        return [sys.executable, "-c", code, *args]

    def env(self) -> dict[str, str]:
        return {**os.environ, "PYTHONUNBUFFERED": "1"}


class ConnectDistributedWorker(ConnectWorker):
    """Apache Kafka Connect's ``ConnectDistributed``, a member of ``group``."""

    main_class = "org.apache.kafka.connect.cli.ConnectDistributed"
    log4j = CONNECT_DISTRIBUTED_LOG4J

    def __init__(
        self, work_dir: Path, bootstrap: str, name: str, group: str, extra: dict[str, str] | None = None
    ) -> None:
        self.group = group
        self._extra = dict(extra or {})
        super().__init__(work_dir, bootstrap, name)

    def _mode_props(self, work_dir: Path, name: str) -> dict[str, str]:
        return {
            **distributed_properties(self.group),
            "rest.advertised.host.name": "127.0.0.1",
            "rest.advertised.port": str(self.port),
            **self._extra,
        }


class SluiceDistributedWorker(SluiceWorker):
    """``sluice distributed``, a member of ``group``, configured like the test suite's
    :class:`tests.integration.workers.DistributedWorker` (Sluice's default Spark master)."""

    mode = "distributed"

    def __init__(
        self, work_dir: Path, bootstrap: str, name: str, group: str, extra: dict[str, str | None] | None = None
    ) -> None:
        self.group = group
        super().__init__(work_dir, bootstrap, name, extra)

    def _properties(self, work_dir: Path, bootstrap: str, name: str, extra: dict[str, str | None]) -> StandaloneWorker:
        return DistributedWorker(work_dir, bootstrap, name, self.group, extra=extra)


def distributed_properties(group: str) -> dict[str, str]:
    """The group and its topics, as :class:`tests.integration.workers.DistributedWorker`
    writes them for Sluice's workers (one broker: replication factor 1)."""
    return {
        "group.id": group,
        "config.storage.topic": f"{group}-configs",
        "offset.storage.topic": f"{group}-offsets",
        "status.storage.topic": f"{group}-status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "offset.storage.partitions": "3",
        "status.storage.partitions": "2",
    }


SYSTEMS: dict[str, type[BenchWorker]] = {"connect": ConnectWorker, "sluice": SluiceWorker}
DISTRIBUTED: dict[str, type[ConnectDistributedWorker] | type[SluiceDistributedWorker]] = {
    "connect": ConnectDistributedWorker,
    "sluice": SluiceDistributedWorker,
}
LABELS = {"connect": ConnectWorker.label, "sluice": SluiceWorker.label}
