"""Run real ``sluice standalone`` worker processes for integration tests."""

from __future__ import annotations

import contextlib
import os
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx2

from sluice_devtools.processes import free_port
from tests import http_client

REPO = Path(__file__).resolve().parents[2]
TEST_PLUGINS = REPO / "tests" / "plugins"


def write_properties(path: Path, props: dict[str, str]) -> Path:
    import javaproperties

    with path.open("w", encoding="latin-1") as out:
        javaproperties.dump(props, out, timestamp=None)
    return path


BASIC_AUTH_EXTENSION = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"


def basic_auth_jaas(directory: Path, users: dict[str, str]) -> Path:
    """A JAAS file for Kafka's basic authentication extension whose ``KafkaConnect`` section
    names a credentials file of ``users`` (name → password), both written in ``directory``."""
    credentials = directory / "credentials.properties"
    credentials.write_text("".join(f"{name}={password}\n" for name, password in users.items()))
    jaas = directory / "connect_jaas.conf"
    jaas.write_text(
        "KafkaConnect {\n"
        "  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n"
        f'  file="{credentials}";\n'
        "};\n"
    )
    return jaas


# The variables the connector CLI takes its worker and credentials from: a test says its own.
_CLI_CONNECTION_ENV = (
    "SLUICE_URL",
    "SLUICE_USER",
    "SLUICE_CA_CERT",
    "SLUICE_CLIENT_CERT",
    "SLUICE_CLIENT_KEY",
    "SLUICE_CLIENT_KEY_PASSWORD",
)


def connector_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m sluice.cli.main connector ARGS``, its output captured, with this process's
    environment but for the CLI's connection variables, and ``env`` added."""
    clean = {k: v for k, v in os.environ.items() if k not in _CLI_CONNECTION_ENV}
    return subprocess.run(
        [sys.executable, "-m", "sluice.cli.main", "connector", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={**clean, **(env or {})},
    )


class StandaloneWorker:
    """A ``sluice standalone`` process with its own REST port and offsets file."""

    mode = "standalone"

    def __init__(
        self,
        work_dir: Path,
        bootstrap: str,
        name: str,
        extra: dict[str, str | None] | None = None,
        *,
        auth: tuple[str, str] | None = None,
        env: dict[str, str] | None = None,
        scheme: str = "http",
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        self.auth = auth  # credentials for the worker's own checks (basic authentication)
        self.env = dict(env or {})
        self.verify = verify  # how the helpers' requests check an https worker
        self.work_dir = work_dir
        self.name = name
        self.port = free_port()
        work_dir.mkdir(parents=True, exist_ok=True)
        props = {
            "bootstrap.servers": bootstrap,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            **self._mode_props(work_dir, name),
            "listeners": f"{scheme}://127.0.0.1:{self.port}",
            "plugin.path": str(TEST_PLUGINS),
            "spark.driver.memory": "512m",
            # The suite starts hundreds of short-lived workers on two cores: their JVMs'
            # optimising JIT (C2) costs a third of a worker's start-up CPU and pays off only
            # in long runs. Sluice's behaviour does not depend on it; the benchmarks keep it.
            "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1",
            # The Java plugins the tests run (Kafka's, Debezium's, MirrorMaker's) all carry
            # ServiceLoader manifests: Kafka's reflective scan (hybrid_warn, the default)
            # finds nothing more and costs a Java-enabled start 6.5 CPU-s and 4 s. Plugins
            # compiled without manifests need the default (extra {"plugin.discovery": None}).
            "plugin.discovery": "service_load",
        }
        for key, value in (extra or {}).items():  # None removes a key: Sluice's default applies
            if value is None:
                props.pop(key, None)
            else:
                props[key] = value
        self.worker_file = write_properties(work_dir / f"{name}.worker.properties", props)
        self.url = f"{scheme}://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = work_dir / f"{name}.log"

    def _mode_props(self, work_dir: Path, name: str) -> dict[str, str]:
        return {"offset.storage.file.filename": str(work_dir / f"{name}.offsets")}

    def start(self, *connector_files: Path, timeout: float = 120.0) -> StandaloneWorker:
        """Spawn the worker and wait until ``GET /health`` says it is ready."""
        return self.spawn(*connector_files).wait_ready(timeout)

    def wait_ready(self, timeout: float) -> StandaloneWorker:
        """Wait until ``GET /health`` says the spawned worker is ready."""
        return self.wait_for("/health", 200, timeout)

    def spawn(self, *connector_files: Path) -> StandaloneWorker:
        """Start the worker's process, without waiting for it."""
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sluice.cli.main", self.mode, str(self.worker_file), *map(str, connector_files)],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=self.work_dir,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **self.env},
        )
        return self

    def wait_for(self, path: str, status: int, timeout: float) -> StandaloneWorker:
        """Wait until ``GET path`` answers ``status`` (``/health`` 200: ready; ``/`` 200:
        the REST API answers)."""
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"worker {self.name} exited with {self.process.returncode}:\n{self.log()}")
            try:
                answer = http_client.get(f"{self.url}{path}", timeout=2, auth=self.auth, verify=self.verify)
                if answer.status_code == status:
                    return self
            except httpx2.HTTPError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"worker {self.name}: GET {path} did not answer {status} in {timeout} s:\n{self.log()}")

    def stop(self, timeout: float = 90.0) -> int:
        """SIGTERM and wait: a clean shutdown exits with 0."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise AssertionError(f"worker {self.name} did not stop on SIGTERM:\n{self.log()}") from None
        return self.process.returncode

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-20000:] if self.log_path.exists() else ""

    def get(self, path: str) -> httpx2.Response:
        return http_client.get(self.url + path, timeout=10, auth=self.auth, verify=self.verify)

    def task_state(self, connector: str, task: int = 0) -> str | None:
        r = self.get(f"/connectors/{connector}/tasks/{task}/status")
        return r.json()["state"] if r.status_code == 200 else None


class DistributedWorker(StandaloneWorker):
    """A ``sluice distributed`` process of the cluster ``group`` (topics named after it)."""

    mode = "distributed"

    def __init__(
        self,
        work_dir: Path,
        bootstrap: str,
        name: str,
        group: str,
        extra: dict[str, str | None] | None = None,
        **options: Any,
    ) -> None:
        self.group = group
        super().__init__(work_dir, bootstrap, name, extra, **options)

    def _mode_props(self, work_dir: Path, name: str) -> dict[str, str]:
        return {
            "group.id": self.group,
            "config.storage.topic": f"{self.group}-configs",
            "offset.storage.topic": f"{self.group}-offsets",
            "status.storage.topic": f"{self.group}-status",
            "config.storage.replication.factor": "1",
            "offset.storage.replication.factor": "1",
            "status.storage.replication.factor": "1",
            "offset.storage.partitions": "3",
            "status.storage.partitions": "2",
        }


W = TypeVar("W", bound=StandaloneWorker)


def start_together(workers: list[W], timeout: float = 180.0) -> list[W]:
    """Spawn every worker, then wait until each is ready: workers that start side by side,
    as a cluster's do when it starts, and as a test can afford."""
    deadline = time.monotonic() + timeout
    for worker in workers:
        worker.spawn()
    for worker in workers:
        worker.wait_ready(max(deadline - time.monotonic(), 1.0))
    return workers


# A cluster's group settings for tests: short enough for a test, long enough not to flap on
# two busy cores.
QUICK_GROUP_SETTINGS: dict[str, str | None] = {
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    "session.timeout.ms": "8000",
    "heartbeat.interval.ms": "2000",
    "scheduled.rebalance.max.delay.ms": "4000",
}


@contextlib.contextmanager
def distributed_cluster(
    base: Path, bootstrap: str, group: str, size: int = 3, extra: dict[str, str | None] | None = None
) -> Iterator[list[DistributedWorker]]:
    """``size`` started workers of ``group`` (with :data:`QUICK_GROUP_SETTINGS`); each must
    stop cleanly (exit code 0) at the end."""
    settings = {**QUICK_GROUP_SETTINGS, **(extra or {})}
    workers = [DistributedWorker(base / f"w{i}", bootstrap, f"w{i}", group, extra=settings) for i in range(size)]
    try:
        start_together(workers)
        yield workers
    finally:
        codes = [worker.stop() for worker in workers]
        assert codes == [0] * size, "\n".join(w.log()[-3000:] for w in workers)


def connector_status(worker: StandaloneWorker, name: str) -> dict[str, Any]:
    """``GET /connectors/{name}/status`` as one worker answers it (``{}`` unless 200)."""
    r = worker.get(f"/connectors/{name}/status")
    return r.json() if r.status_code == 200 else {}


def connector_states(worker: StandaloneWorker, name: str) -> tuple[str | None, list[str]]:
    """The connector's state and its tasks' states as one worker sees them."""
    status = connector_status(worker, name)
    if not status:
        return None, []
    return status["connector"]["state"], [t["state"] for t in status["tasks"]]
